r"""The report: tables, figures and ``report.tex`` in one folder, compiled with pdflatex.

Layout of the output folder::

    tables/summary.tex, tables/claim-*.tex   (reports.tables)
    figures/<name>.pdf, figures/<name>.png   (reports.figures)
    report.tex, report.pdf                   (this module)

``report.tex`` ``\input``\ s the tables and includes the PDF figures; it is compiled twice
(for references) with ``-interaction=nonstopmode -halt-on-error`` in the output folder,
where ``shutil.which("pdflatex")`` finds an engine. Without one, the ``.tex`` is still
written and the caller says so.
"""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from reports.figures import draw_all, save
from reports.latex import TeX, escape, significant
from reports.render import render
from reports.tables import SUMMARY_NAME, write_tables

__all__ = ["ReportFiles", "write_report", "compile_pdf", "CompileError", "ENGINE",
           "LATEX_RUNS"]

ENGINE = "pdflatex"
LATEX_RUNS = 2
#: Display width of a figure in the PDF: its printed fonts stay >= 0.8 of their size
_TEXT_WIDTH_IN = 17.0 / 2.54  # a4 with 2 cm margins


class CompileError(RuntimeError):
    """pdflatex failed; ``log_tail`` holds the end of its log."""

    def __init__(self, message: str, log_tail: str) -> None:
        super().__init__(message)
        self.log_tail = log_tail


@dataclass
class ReportFiles:
    """Everything :func:`write_report` wrote, for the caller to print."""

    out_dir: Path
    tables: list[Path] = field(default_factory=list)
    figures: list[tuple[Path, Path]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    tex: Path | None = None
    pdf: Path | None = None


def _width(fig) -> TeX:
    # a figure w inches wide is shown at min(1, 0.85 w / text width) of the line
    w = float(fig.get_size_inches()[0])
    return TeX(f"{min(1.0, 0.85 * w / _TEXT_WIDTH_IN):.2f}\\linewidth")


def write_report(run: Mapping[str, Any], out_dir: str | Path, store=None) -> ReportFiles:
    """Write the tables, the figures (spectra read from ``store`` when it holds them) and
    ``report.tex`` into ``out_dir``. Compiles nothing (:func:`compile_pdf`)."""
    out = Path(out_dir)
    files = ReportFiles(out_dir=out)
    files.tables = write_tables(run, out / "tables")
    drawn, files.skipped = draw_all(run, store)
    figs = []
    for d in drawn:
        pdf, png = save(d, out / "figures")
        files.figures.append((pdf, png))
        figs.append({"name": TeX(d.name), "caption": d.caption, "width": _width(d.figure),
                     "path": TeX(f"figures/{d.name}.pdf")})
    profile_pdf = out / "depth_profile.pdf"
    if profile_pdf.is_file():  # written by `gapverify paper-figure` into the same folder
        figs.append({"name": TeX("depth_profile"), "width": TeX("0.8\\linewidth"),
                     "path": TeX("depth_profile.pdf"),
                     "caption": TeX(r"The paper's depth experiment (rebuttal Figure VII): "
                                    r"$\mathrm{sr}(\Sigma_\ell)$ against depth, Markov surrogate, "
                                    r"standard (solid) and fixed $A^\perp$ (dashed), mean and "
                                    r"one standard deviation over seeds, next to the "
                                    r"free-probability limit $T(1+\ell(1+\gamma))/x_\ell^{*2}$ "
                                    r"(dotted). Table: \texttt{depth\_profile.csv}.")})
    seeds = sorted({int(c["root_seed"]) for c in run["claims"] if "root_seed" in c})
    level = run.get("level")
    text = render(
        "report.tex",
        command=run.get("command", ""),
        seeds=TeX(", ".join(r"\texttt{" + escape(s) + "}" for s in seeds) or "?"),
        seeds_plural=TeX("s" if len(seeds) > 1 else ""),
        profile=run.get("profile", "?"),
        code_version=run.get("code_version", "?"),
        level=TeX(r"\num{" + significant(level, 3) + "}") if isinstance(level, (int, float)) else "?",
        summary=TeX("tables/" + Path(SUMMARY_NAME).stem),
        rules=run.get("rules", []),
        figures=figs,
        skipped=files.skipped,
        tables=[TeX("tables/" + p.stem) for p in files.tables if p.name != SUMMARY_NAME],
    )
    files.tex = out / "report.tex"
    files.tex.write_bytes(text.encode("utf-8"))
    return files


def _tail(tex: Path, stdout: str, lines: int = 40) -> str:
    log = tex.with_suffix(".log")
    text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else stdout
    return "\n".join(text.splitlines()[-lines:])


def compile_pdf(tex: str | Path, engine: str | None = None, timeout: float = 300.0) -> Path | None:
    """Compile ``tex`` with pdflatex in its own folder, :data:`LATEX_RUNS` times, and return
    the PDF; ``None`` when no engine is on the path. Raises :class:`CompileError` with the
    tail of the log when a run fails."""
    tex = Path(tex)
    exe = engine or shutil.which(ENGINE)
    if exe is None:
        return None
    for _ in range(LATEX_RUNS):
        try:
            proc = subprocess.run(
                [exe, "-interaction=nonstopmode", "-halt-on-error", tex.name],
                cwd=tex.parent, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, timeout=timeout, text=True, errors="replace")
        except subprocess.TimeoutExpired as exc:
            raise CompileError(f"{ENGINE} timed out after {timeout:g} s",
                               _tail(tex, str(exc.stdout or ""))) from None
        if proc.returncode != 0:
            raise CompileError(f"{ENGINE} failed (exit code {proc.returncode}) on {tex}",
                               _tail(tex, proc.stdout))
    return tex.with_suffix(".pdf")
