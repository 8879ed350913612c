"""Reports: LaTeX (and Markdown) convergence tables and figures generated from stored results.

``gapverify tables`` and ``gapverify report`` (:mod:`reports.cli`) read a judged run (a
results JSON or the last run of a store) and recompute no sample:

* :mod:`reports.latex`: the :class:`~reports.latex.TeX` marker and escaping (pylatexenc);
  :mod:`reports.numbers`: numbers whose digits follow their standard error (uncertainties'
  concise ``0.0490(12)``, read by siunitx's ``\\num``) and siunitx cells;
  :mod:`reports.prose`: the registry's notes with their ASCII math typeset;
* :mod:`reports.tables`: the table files: the per-claim summary
  (:mod:`reports.summary_table`), the per-check table in siunitx ``S`` columns
  (:mod:`reports.checks_table`), the notes on the checks (:mod:`reports.check_notes`) and
  the per-size table of each claim (:mod:`reports.claim_tables`), sharing the cells of
  :mod:`reports.table_cells` (jinja2 templates in ``reports/templates``,
  :mod:`reports.render`);
* :mod:`reports.cells`: the cells every table is built of (text, identifier, math, number,
  interval, verdict word, lines, footnote mark), built once from the run and printed by
  each renderer (:meth:`~reports.cells.Cell.latex`, :meth:`~reports.cells.Cell.markdown`);
  :mod:`reports.model_cell`: a check's finite-size model, decided once for the terminal
  and the tables; :mod:`reports.markdown`: the same tables as GitHub pipe tables
  (``gapverify tables --format markdown``, :func:`reports.tables.markdown_files`);
* :mod:`reports.figures`: matplotlib figures of the stored spectra and of the rates;
* :mod:`reports.document`: ``report.tex``, whether LaTeX is usable here
  (:func:`reports.document.latex_status`) and the compilation with pdflatex.
"""
import importlib

# Re-exported lazily (PEP 562): every ``gapverify`` command imports ``reports.cli``, and
# should not pay for matplotlib and jinja2 unless it draws or renders.
_EXPORTS = {
    "load_run": "gapverify.reports.results", "verdict_word": "gapverify.reports.results",
    "escape": "gapverify.reports.latex", "shorthand": "gapverify.reports.numbers",
    "table_files": "gapverify.reports.tables", "write_tables": "gapverify.reports.tables",
    "markdown_files": "gapverify.reports.tables",
    "write_report": "gapverify.reports.document", "compile_pdf": "gapverify.reports.document",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'reports' has no attribute {name!r}")
