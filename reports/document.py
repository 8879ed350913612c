r"""The report: tables, figures and ``report.tex`` in one folder, compiled with pdflatex.

Layout of the output folder::

    tables/summary.tex, tables/claim-*.tex   (reports.tables)
    figures/<name>.pdf, figures/<name>.png   (reports.figures)
    report.tex, report.pdf                   (this module)

``report.tex`` ``\input``\ s the tables and includes the PDF figures. Page 1 holds the
run's parameters (profile, level, seed, commit) and the per-claim summary, set in place
beside the introduction and the verdict rules; then the convergence overview
(:mod:`reports.overview_figure`, every asserted prediction against :math:`T`, set in place
on its own page); then the per-check table, its parts set in place one a page (a run
with peers' results: a section for the paper's claims and one for the peers',
:func:`reports.table_cells.claim_blocks`), and the figures of the whole run.
``appendix=True`` adds the notes on the checks and, per claim, its figure and its per-size
convergence table (long: one float per check group); the per-claim figures are written
to ``figures/`` either way. It is compiled twice (for references) with ``-interaction=nonstopmode
-halt-on-error`` in the output folder when LaTeX is usable (:func:`latex_status`: an engine
on the path and every package of :data:`REQUIRED_PACKAGES`). Otherwise the ``.tex`` is
still written and the caller says why there is no PDF.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from gapverify.reports.figures import draw_all, save
from gapverify.reports.latex import PACKAGES, TeX, escape
from gapverify.reports.numbers import significant
from gapverify.reports.prose import prose
from gapverify.reports.render import render
from gapverify.reports.table_cells import _run_text, commit_text
from gapverify.reports.table_cells import (
    cites_paper, claim_blocks, paper_result, run_references,
)
from gapverify.reports.tables import (
    CHECKS_NAME, NOTES_NAME, PEERS_CHECKS_NAME, SUMMARY_NAME, table_names, write_tables,
)

__all__ = ["ReportFiles", "write_report", "compile_pdf", "CompileError", "ENGINE",
           "LATEX_RUNS", "REQUIRED_PACKAGES", "LatexStatus", "latex_status", "BoxWarning",
           "box_warnings", "missing_packages"]

#: Every package the report loads (the tables need :data:`reports.latex.PACKAGES`).
REQUIRED_PACKAGES = ("geometry", "graphicx") + PACKAGES

ENGINE = "pdflatex"
LATEX_RUNS = 2
#: Display width of a figure in the PDF: its printed fonts stay >= 0.8 of their size
_TEXT_WIDTH_IN = 17.0 / 2.54  # a4 with 2 cm margins
#: Largest height of a figure: two figures and their captions share a float page
#: (floatpagefraction 0.75: at full width the per-claim figures took a page each)
FIGURE_HEIGHT = "0.36\\textheight"
#: Largest height of the convergence overview: the page less its section title and caption
OVERVIEW_HEIGHT = "0.74\\textheight"


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


@dataclass(frozen=True)
class LatexStatus:
    """Whether the report can be compiled here: ``usable``, the engine found, the packages
    missing and, when not usable, a sentence saying why (it names the missing packages)."""

    usable: bool
    engine: str | None
    missing: tuple[str, ...] = ()
    reason: str = ""


def _kpsewhich_missing(packages) -> list[str] | None:
    # the packages kpsewhich cannot find; None when there is no kpsewhich
    kpse = shutil.which("kpsewhich")
    if kpse is None:
        return None
    try:
        proc = subprocess.run([kpse, *(f"{p}.sty" for p in packages)], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = {Path(line.strip()).stem for line in proc.stdout.splitlines() if line.strip()}
    return [p for p in packages if p not in found]


def _probe_missing(engine: str, packages) -> list[str]:
    # compile a document that loads each package; the ones LaTeX reports as not found
    missing = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in packages:
            probe = Path(tmp) / "probe.tex"
            probe.write_text("\\documentclass{article}\\usepackage{" + p + "}\n"
                             "\\begin{document}x\\end{document}\n")
            try:
                proc = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error",
                                       "-draftmode", probe.name], cwd=tmp, capture_output=True,
                                      text=True, errors="replace", timeout=120,
                                      stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired):
                missing.append(p)
                continue
            if proc.returncode != 0:
                missing.append(p)
    return missing


def missing_packages(engine: str, packages=REQUIRED_PACKAGES) -> list[str]:
    """The LaTeX packages of ``packages`` this TeX installation lacks: ``kpsewhich`` for
    each ``.sty`` where it exists, else a probe document per package compiled with
    ``engine``."""
    missing = _kpsewhich_missing(packages)
    return _probe_missing(engine, packages) if missing is None else missing


def latex_status(engine: str | None = None) -> LatexStatus:
    """Whether ``engine`` (default: ``pdflatex`` on the path) can compile the report: it
    exists and every package of :data:`REQUIRED_PACKAGES` is installed. A partial TeX
    installation (``pdflatex`` without, say, ``threeparttable.sty``) is not usable, and
    the reason names what is missing."""
    exe = engine or shutil.which(ENGINE)
    if exe is None:
        return LatexStatus(False, None, (), f"no LaTeX engine ({ENGINE}) on the PATH")
    missing = tuple(missing_packages(exe))
    if missing:
        names = ", ".join(f"{p}.sty" for p in missing)
        return LatexStatus(False, exe, missing,
                           f"{ENGINE} is installed but lacks {names} (Debian: texlive-latex-extra "
                           f"and texlive-science hold them)")
    return LatexStatus(True, exe)


_BOX = re.compile(r"^(Overfull|Underfull) \\([hv])box \((?:([\d.]+)pt too (?:wide|high)|badness (\d+))\)"
                  r"(.*)$", re.M)


@dataclass(frozen=True)
class BoxWarning:
    """One over- or underfull box of a pdflatex log: ``kind`` ``Overfull`` or
    ``Underfull``, ``box`` ``h`` or ``v``, ``points`` (how much too wide or high, for an
    overfull box) or ``badness`` (an underfull one), and where."""

    kind: str
    box: str
    points: float | None
    badness: int | None
    where: str


def box_warnings(log: str) -> list[BoxWarning]:
    """Every ``Overfull``/``Underfull`` box warning of a pdflatex log."""
    return [BoxWarning(m.group(1), m.group(2), float(m.group(3)) if m.group(3) else None,
                       int(m.group(4)) if m.group(4) else None, m.group(5).strip())
            for m in _BOX.finditer(log)]


def _width(fig) -> TeX:
    # a figure w inches wide is shown at min(1, 0.85 w / text width) of the line
    w = float(fig.get_size_inches()[0])
    return TeX(f"{min(1.0, 0.85 * w / _TEXT_WIDTH_IN):.2f}\\linewidth")


#: Titles of the per-check sections of a run with peers' results.
_SECTIONS = {"paper": "Checks of the paper's claims (and this suite's extensions)",
             "peers": "Checks of the peers' results"}
_DEPTH_CAPTION = (
    r"The paper's depth experiment, reproduced by \texttt{gapverify paper-figure}: the stable "
    r"rank $\mathrm{sr}(\Sigma_\ell)$ against depth $\ell$ for the Markov surrogate of softmax "
    r"attention, standard (solid) and fixed $A^\perp$ (dashed), mean and one standard "
    r"deviation over seeds, next to the free-probability limit "
    r"$T(1+\ell(1+\gamma))/x_\ell^{*2}$ (dotted). Its sizes and seeds are those of "
    r"\texttt{paper-figure}, written with the numbers to \texttt{depth\_profile.csv}, not "
    r"those of the run.")


#: The report's title when a claim of the run checks a result of the paper.
PAPER_TITLE = ("Verification report: the random-matrix theory of softmax attention at "
               "initialisation")
_PAPER_SOURCES = (
    r"Claims of the paper come from \emph{Mind the Gap} (Naderi, Nait Saada, Tanner, ICML "
    r"2025, arXiv:2410.07799) and the random Markov matrix theorems of Bordenave, Caputo "
    r"and Chafa\"i (PTRF 2012, arXiv:0808.1502); each names the paper's result it checks, "
    r"or says it goes beyond the paper.")
_PEERS_SOURCES = (
    r" The peers' results (\texttt{peers.*}) are those of other papers, checked beside the "
    r"paper's claims, never as its own.")


def _title(run: Mapping[str, Any]) -> TeX:
    """The report's title: the paper's subject when a claim checks a result of the paper,
    else the user's claims themselves (a report of one's own claim is not about softmax
    attention)."""
    if cites_paper(run):
        return TeX(PAPER_TITLE)
    ids = [str(c["claim"]) for c in run["claims"]]
    named = (", ".join(r"\texttt{" + escape(i) + "}" for i in ids) if len(ids) <= 3
             else f"{len(ids)} claims")
    return TeX("Verification report: " + named)


def _sources(run: Mapping[str, Any]) -> TeX:
    """Where the run's claims come from: the paper (cited only when a claim checks one of
    its results), the peers' results, and the user's own claims with their own references,
    numbered as the summary cites them."""
    text = _PAPER_SOURCES if cites_paper(run) else ""
    if text and any(b.key == "peers" for b in claim_blocks(run)):
        text += _PEERS_SOURCES
    own = [str(c["claim"]) for c in run["claims"] if not paper_result(str(c["claim"]))]
    if own:
        refs = run_references(run)
        listed = "; ".join(f"[{i}] " + escape(r) for i, r in enumerate(refs, 1))
        text += ((" " if text else "") + "The claim" + ("s " if len(own) > 1 else " ")
                 + ", ".join(r"\texttt{" + escape(i) + "}" for i in own)
                 + (" come" if len(own) > 1 else " comes") + " from the user's claim files or "
                 "plug-ins, not from the paper; "
                 + ("their references: " + listed + "." if refs else
                    "no references were recorded with them."))
    return TeX(text)


def write_report(run: Mapping[str, Any], out_dir: str | Path, store=None,
                 appendix: bool = False) -> ReportFiles:
    """Write the tables, the figures (spectra read from ``store`` when it holds them) and
    ``report.tex`` into ``out_dir``; ``appendix`` adds the notes on the checks and the
    figure and per-size table of every claim. Compiles nothing (:func:`compile_pdf`)."""
    out = Path(out_dir)
    files = ReportFiles(out_dir=out)
    files.tables = write_tables(run, out / "tables")
    drawn, files.skipped = draw_all(run, store)
    seeds = sorted({int(c["root_seed"]) for c in run["claims"] if "root_seed" in c})
    level = run.get("level")
    level_tex = (TeX(r"\num{" + significant(level, 3) + "}") if isinstance(level, (int, float))
                 else TeX("?"))
    run_note = TeX(" Run: " + _run_text(run) + ".")
    figs, per_claim, overviews = [], {}, []
    for d in drawn:
        pdf, png = save(d, out / "figures")
        files.figures.append((pdf, png))
        entry = {"name": TeX(d.name), "caption": TeX(d.caption + run_note),
                 "width": _width(d.figure), "height": TeX(FIGURE_HEIGHT),
                 "path": TeX(f"figures/{d.name}.pdf")}
        if d.overview:  # drawn at the text width: shown at its size, within a page
            overviews.append({**entry, "height": TeX(OVERVIEW_HEIGHT), "width": TeX(
                f"{min(1.0, float(d.figure.get_size_inches()[0]) / _TEXT_WIDTH_IN):.2f}\\linewidth")})
        elif d.claim is None:
            figs.append(entry)
        else:  # a claim's figure: in the appendix, beside the claim's per-size table
            per_claim.setdefault(d.claim, []).append(entry)
    profile_pdf = out / "depth_profile.pdf"
    if profile_pdf.is_file():  # written by `gapverify paper-figure` into the same folder
        figs.append({"name": TeX("depth_profile"), "width": TeX("0.8\\linewidth"),
                     "height": TeX(FIGURE_HEIGHT),
                     "path": TeX("depth_profile.pdf"),
                     "caption": TeX(_DEPTH_CAPTION)})
    blocks = claim_blocks(run)
    check_files = [CHECKS_NAME, PEERS_CHECKS_NAME]
    # each claim's per-size table, by the claim's own entry (a run may name a claim twice)
    claim_table = {id(c): name for c, name in zip(run["claims"], table_names(run))}
    text = render(
        "report.tex",
        packages=TeX(",".join(PACKAGES)), packages_list=TeX(", ".join(PACKAGES)),
        title=_title(run), sources=_sources(run),
        command=run.get("command", ""),
        seeds=TeX(", ".join(r"\texttt{" + escape(s) + "}" for s in seeds) or "?"),
        seeds_plural=TeX("s" if len(seeds) > 1 else ""),
        profile=run.get("profile", "?"),
        code_version=run.get("code_version", "?"),
        commit=commit_text(run) or TeX("no git commit recorded"),
        level=level_tex,
        summary=TeX("tables/" + Path(SUMMARY_NAME).stem),
        peers=any(b.key == "peers" for b in blocks),
        blocks=[{"section": _SECTIONS[b.key] if b.title else "Checks",
                 "checks": TeX("tables/" + Path(name).stem)}
                for b, name in zip(blocks, check_files)],
        notes=TeX("tables/" + Path(NOTES_NAME).stem), notes_file=NOTES_NAME,
        appendix=appendix,
        rules=[prose(r) for r in run.get("rules", [])],
        figures=figs,
        overviews=overviews,
        skipped=files.skipped,
        appendix_blocks=[{"title": b.title, "claims": [
            {"table": TeX("tables/" + Path(claim_table[id(c)]).stem),
             "figures": per_claim.pop(str(c["claim"]), [])} for c in b.claims]}
            for b in blocks],
    )
    files.tex = out / "report.tex"
    files.tex.write_bytes(text.encode("utf-8"))
    return files


def _tail(tex: Path, stdout: str, lines: int = 40) -> str:
    log = tex.with_suffix(".log")
    text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else stdout
    return "\n".join(text.splitlines()[-lines:])


def compile_pdf(tex: str | Path, engine: str | None = None, timeout: float = 300.0,
                status: LatexStatus | None = None) -> Path | None:
    """Compile ``tex`` with pdflatex in its own folder, :data:`LATEX_RUNS` times, and return
    the PDF; ``None`` when LaTeX is not usable here (no engine, or packages missing:
    :func:`latex_status`, or ``status`` when the caller has it). Raises
    :class:`CompileError` with the tail of the log when a run fails."""
    tex = Path(tex)
    if engine is None:
        status = status or latex_status()
        if not status.usable:
            return None
        exe = status.engine
    else:
        exe = engine
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
