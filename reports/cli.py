"""The ``gapverify tables`` and ``gapverify report`` commands.

Picked up by :func:`verification.cli._load_extensions` through :func:`register` and
:data:`COMMANDS`. Both read a judged run, never sample:

* ``--from RESULTS.json``: the results file written by ``gapverify run --json``;
* ``--store PATH``: the SQLite store (default ``reports/gapverify.sqlite``); its last
  run when ``--from`` is not given, and in any case the source of the stored spectra the
  figures plot.

Exit codes: 0 written (and compiled where LaTeX is usable; otherwise the ``.tex`` only,
and a line says why there is no PDF), 1 pdflatex failed on a usable installation (the tail
of its log is printed), 2 bad input (a missing or unreadable results file or store).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from verification.cli import DEFAULT_STORE, EXIT_FAIL, EXIT_OK, EXIT_USAGE

__all__ = ["register", "COMMANDS", "DEFAULT_TABLES_OUT", "DEFAULT_REPORT_OUT"]

DEFAULT_TABLES_OUT = "reports/out/tables"
DEFAULT_REPORT_OUT = "reports/out"


def _source_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", metavar="PATH", default=None,
                        help=f"result store: its last run, unless --from is given, and the "
                             f"stored spectra for figures (default {DEFAULT_STORE})")
    parser.add_argument("--from", dest="results", metavar="RESULTS.json", default=None,
                        help="results file of 'gapverify run --json' (instead of the store's "
                             "last run)")


def register(subparsers) -> None:
    """Add the ``tables`` and ``report`` subcommands to the ``gapverify`` parser."""
    t = subparsers.add_parser("tables", help="LaTeX tables (booktabs, siunitx) from stored "
                                             "results, without sampling")
    _source_arguments(t)
    t.add_argument("--out", metavar="DIR", default=DEFAULT_TABLES_OUT,
                   help=f"output folder (default {DEFAULT_TABLES_OUT})")
    r = subparsers.add_parser("report", help="tables, figures and a LaTeX/PDF report from "
                                             "stored results, without sampling")
    _source_arguments(r)
    r.add_argument("--out", metavar="DIR", default=DEFAULT_REPORT_OUT,
                   help=f"output folder (default {DEFAULT_REPORT_OUT})")
    r.add_argument("--appendix", action="store_true",
                   help="add the per-size convergence table of every claim as an appendix "
                        "(long; the tables are written to OUT/tables either way)")


def _load(args):
    # (run, store for measurements) or an exit code after printing the error
    from reports.results import ResultsError, load_run

    store = args.store if args.store is not None else DEFAULT_STORE
    try:
        run = load_run(store=store, results=args.results)
    except ResultsError as exc:
        print(f"gapverify: error: {exc}", file=sys.stderr)
        return None, None
    measurements = store if Path(store).is_file() else None
    return run, measurements


def _cmd_tables(args) -> int:
    from reports.tables import write_tables

    run, _ = _load(args)
    if run is None:
        return EXIT_USAGE
    paths = write_tables(run, args.out)
    print(f"tables ({len(paths)}) in {Path(args.out)}:")
    for p in paths:
        print(f"  {p}")
    return EXIT_OK


def _cmd_report(args) -> int:
    from reports.document import CompileError, compile_pdf, latex_status, write_report

    run, store = _load(args)
    if run is None:
        return EXIT_USAGE
    files = write_report(run, args.out, store, appendix=args.appendix)
    print(f"tables ({len(files.tables)}):")
    for p in files.tables:
        print(f"  {p}")
    print(f"figures ({len(files.figures)}, PDF for LaTeX and PNG to view):")
    for pdf, png in files.figures:
        print(f"  {pdf}\n  {png}")
    for s in files.skipped:
        print(f"  left out: {s}")
    print(f"LaTeX document: {files.tex}")
    status = latex_status()
    try:
        pdf = compile_pdf(files.tex, status=status)
    except CompileError as exc:
        print(f"gapverify: error: {exc}; end of the log:", file=sys.stderr)
        print(exc.log_tail, file=sys.stderr)
        return EXIT_FAIL
    if pdf is None:
        print(f"no PDF: {status.reason}; wrote {files.tex} only; compile it with "
              f"'pdflatex report.tex' (twice) in {files.out_dir} where LaTeX is complete")
    else:
        print(f"PDF report: {pdf}")
        from reports.document import box_warnings

        log = pdf.with_suffix(".log")
        boxes = box_warnings(log.read_text(errors="replace")) if log.is_file() else []
        if boxes:
            worst = max((b.points or 0.0 for b in boxes), default=0.0)
            print(f"  {len(boxes)} over- or underfull box warnings in {log} (widest "
                  f"{worst:.1f} pt too wide)")
    return EXIT_OK


#: Subcommand handlers, merged into the ``gapverify`` command table.
COMMANDS = {"tables": _cmd_tables, "report": _cmd_report}
