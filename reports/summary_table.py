r"""The per-claim summary table: one row per claim (status, largest size, predictions
verified with power, worst power, verdict), ``\scriptsize`` and narrow enough for
``\columnwidth`` of a two-column paper."""
from __future__ import annotations

import re
from typing import Any, Mapping

from dataclasses import dataclass

from gapverify.reports.cells import Cell, Code, Number, Raw, Text, Verdict, md_escape, s_cell
from gapverify.reports.latex import DASH, PACKAGES_COMMENT, TeX, escape
from gapverify.reports.numbers import significant
from gapverify.reports.render import render
from gapverify.reports.results import claim_verdict_word
from gapverify.reports.table_cells import (
    _STATUS_SHORT, _asserted, _finite, _run_text, _s_column, _targets, _tt, _varying,
    cites_paper, claim_blocks, common_parameters, paper_result, paper_short, parameters_math,
    percent_cell, reference_marks, run_references,
)
from gapverify.verification.judging.outcomes import Outcome

__all__ = ["summary_table", "summary_rows", "SUMMARY_COLUMNS", "ClaimCell"]


def _claim_verdict(claim: Mapping[str, Any]) -> Verdict:
    """The claim's word (outcomes.py, with its reason), bold when it failed; "not verified:
    REASON" on two lines in LaTeX, to keep the table one column of a two-column paper wide."""
    return Verdict(claim_verdict_word(claim), failed=claim["verdict"] == Outcome.FAIL,
                   split=": ")


def _worst_power(claim: Mapping[str, Any]):
    powers = [c.get("power") for c in claim["checks"]
              if _asserted(c) and c.get("power_class") != "exact"]
    if any(p == "inf" for p in powers):
        return "inf"
    finite = [p for p in powers if _finite(p)]
    return max(finite) if finite else None


@dataclass(frozen=True)
class ClaimCell(Cell):
    """The first cell of a claim's row: its id on the first line; under it the result it
    checks (the paper's, short form, or the numbers of the claim's own references) and its
    parameters other than the defaults (a claim's cases are in the per-check table). In
    LaTeX those pieces are packed into lines no wider than the longest claim id of the
    table (``width`` typewriter glyphs), so that the column stays as narrow as that id (a
    column of its own made the summary 21 pt wider than a two-column paper's
    \\columnwidth); every claim has its reference in the same place, under its id (packed
    beside it, the one reference that did not fit wrapped alone)."""

    claim_id: str
    paper: str
    parameters: tuple
    width: int

    def _pieces(self) -> list[tuple[Cell, int]]:
        pieces = [(Text(self.paper), len(self.paper))]
        for k, v in self.parameters:
            pieces.append((Raw(parameters_math({k: v})), len(k) + 2 + len(significant(float(v), 3))))
        return pieces

    def _lines(self) -> list[list[str]]:
        # the pieces under the id, packed into lines of at most `width` glyphs
        lines, line, used = [], [], 0
        for cell, glyphs in self._pieces():
            # a roman glyph of \scriptsize is about 0.85 of a typewriter one
            need = int(0.85 * glyphs + 1.5)
            if line and used + need > self.width - 1:
                lines.append(line)
                line, used = [], 0
            line.append(str(cell.latex()))
            used += need
        return lines + [line]

    def latex(self) -> TeX:
        texts = [str(Code(self.claim_id).latex())] + ["; ".join(parts) for parts in self._lines()]
        return TeX(r"\begin{tabular}[t]{@{}l@{}}" + r"\\".join(texts) + r"\end{tabular}")

    def markdown(self) -> str:
        return (Code(self.claim_id).markdown() + "<br>"
                + "; ".join(_markdown_piece(c) for c, _ in self._pieces()))


def _markdown_piece(cell: Cell) -> str:
    # a parameter's math ("$s^{2}=0.25$") as it is: GitHub typesets $...$
    return md_escape(cell.tex) if isinstance(cell, Raw) else cell.markdown()


def _claim_row(claim: Mapping[str, Any], width: int, refs: list[str]) -> dict[str, Cell]:
    # the cells of one claim's row
    summary = claim.get("power_summary") or ""
    m = re.match(r"(\d+) of (\d+)", summary)
    if m:
        checks = f"{m.group(1)}/{m.group(2)}"
    else:
        asserted = [c for c in claim["checks"] if _asserted(c)]
        checks = f"{sum(c['verdict'] == Outcome.PASS for c in asserted)}/{len(asserted)}"
    sizes = claim.get("sizes") or []
    varying = _varying(claim)
    shown = {k: v for k, v in common_parameters(claim).items() if k not in varying
             and not _is_default(k, v)}
    result = paper_result(str(claim["claim"]))
    paper = paper_short(result) if result else reference_marks(str(claim["claim"]), refs)
    return {"claim": ClaimCell(str(claim["claim"]), paper, tuple(sorted(shown.items())), width),
            "status": Text(_STATUS_SHORT.get(str(claim["status"]), str(claim["status"]))),
            "T": Number(str(max(sizes)) if sizes else DASH),
            "checks": Text(checks), "power": percent_cell(_worst_power(claim)),
            "verdict": _claim_verdict(claim)}


def summary_rows(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The summary's rows, one per claim in the run's order (:func:`_claim_row`: cells
    ``claim``, ``status``, ``T``, ``checks``, ``power``, ``verdict``); a run with peers'
    results has two blocks, each opened by a row ``{"heading": Text, "rule": bool}``
    (:func:`reports.table_cells.claim_blocks`)."""
    rows: list[dict[str, Any]] = []
    width = max([len(str(c["claim"])) for c in run["claims"]] + [24])
    refs = run_references(run)
    for k, block in enumerate(claim_blocks(run)):
        if block.title:  # a run with peers' results: the paper's claims, then the peers'
            rows.append({"heading": Text(block.title), "rule": k > 0})
        rows += [_claim_row(claim, width, refs) for claim in block.claims]
    return rows


#: The summary's columns: key, LaTeX head (with its note mark) and Markdown head. The
#: marks run a, b, c, ... in the order a reader meets them, and the notes in that order.
SUMMARY_COLUMNS = (
    ("claim", r"Claim\tnote{a}", "Claim"),
    ("status", r"St.\tnote{b}", "St."),
    ("T", r"{$T_{\max}$}", r"$T_{\max}$"),
    ("checks", r"Pred.\tnote{c}", "Pred."),
    ("power", r"{Power\tnote{d}}", "Power (%)"),
    ("verdict", r"Verdict\tnote{e}", "Verdict"),
)
_S_KEYS = ("T", "power")


def _latex_row(row: Mapping[str, Any]) -> dict[str, TeX]:
    # a row's cells as LaTeX, those of the S columns as siunitx reads them
    if "heading" in row:
        return {"heading": row["heading"].latex(), "rule": row["rule"]}
    return {k: s_cell(c) if k in _S_KEYS else c.latex() for k, c in row.items()}


def _is_default(name: str, value) -> bool:
    # a parameter at its default (listed once, in the notes, not in every row)
    from gapverify.theory.parameters import PARAMETERS

    return name in PARAMETERS and _finite(value) and abs(float(value) - PARAMETERS[name].default) <= 1e-12 * max(1.0, abs(PARAMETERS[name].default))


def _defaults_text(run: Mapping[str, Any]) -> TeX:
    # the defaults of the parameters the run's claims take ("" when they take none)
    from gapverify.theory.parameters import PARAMETERS

    names = sorted({k for c in run["claims"] for case in (c.get("cases") or [c.get("parameters") or {}])
                    for k in case if k in PARAMETERS})
    return parameters_math({n: PARAMETERS[n].default for n in names}, names) if names else TeX("")


def _sources_text(run: Mapping[str, Any]) -> TeX:
    """What the line under a claim's id names: the paper's result (only when a claim of
    the run checks one) and the claim's own references, numbered (a user's claim cites its
    own, never the paper)."""
    parts = []
    if cites_paper(run):
        parts.append(
            "Thm, Prop.: the result of the paper the claim checks (Naderi, Nait Saada, "
            "Tanner, ICML 2025, or the theorems of Bordenave, Caputo, Chafa\\\"i, 2012, it "
            "builds on), without a number where it is not confirmed; beyond: beyond the "
            "paper; in full in the notes on the checks")
    refs = run_references(run)
    if refs:
        parts.append("ref.: the claim's own references, " + "; ".join(
            f"[{i}] " + str(_reference(r)) for i, r in enumerate(refs, 1)))
    return TeX(". ".join(parts) + "." if parts else "")


def _reference(text: str) -> TeX:
    # a reference (often a path or a URL): escaped, and it may break after / . _ -
    tex = str(escape(text))
    return TeX(re.sub(r"(/|\\_|(?<=[A-Za-z])\.(?=[A-Za-z])|-)", r"\1\\allowbreak{}", tex))


def _notes(run: Mapping[str, Any]) -> list[dict]:
    # the notes, in the order of their marks (the columns'), then the unmarked ones
    defaults = _defaults_text(run)
    notes = [
        {"mark": "a", "text": TeX(
            "The claim's id; under it the result it checks and its parameters other than "
            "the defaults" + (" (" + defaults + ")" if defaults else "") + "; a claim's "
            "cases, each judged on its own samples, are in the per-check table. "
            + _sources_text(run))},
        {"mark": "b", "text": TeX(
            "The weakest status of the claim's predictions: thm theorem, der derived, "
            "emp empirical, conj conjecture.")},
        {"mark": "c", "text": TeX(
            "Predictions verified with power, of those a verdict needs.")},
        {"mark": "d", "text": TeX(
            r"Worst power of the asserted checks, in \%: the smallest relative error of a "
            r"prediction the same samples reject on both sides; target "
            + _targets(run) + ".")},
        {"mark": "e", "text": TeX(
            r"verified: a theorem or derived claim passed with power; supported: a conjecture "
            r"passed; reproduced: an empirical law; lacks power: nothing failed, but a wrong "
            r"prediction would pass too; flaky: a failure that did not recur on replay.")},
        {"mark": "", "text": TeX(
            "Code version " + _tt(run.get("code_version", "?")) + ".")},
    ]
    if _finite(run.get("perturb")) and run["perturb"]:
        notes.append({"mark": "", "text": TeX(
            r"\textbf{Every claim was judged against a statement perturbed by} \num{"
            + significant(run["perturb"], 3) + "}: a failure is the expected outcome.")})
    return notes


def summary_table(run: Mapping[str, Any]) -> str:
    r"""The one-page summary (LaTeX source), one row per claim in the run's order: claim,
    status, largest size, predictions verified with power, the worst power of its asserted
    checks, verdict. Narrow enough for ``\columnwidth`` of a two-column paper
    (``\scriptsize``, siunitx ``S`` columns without digit grouping). A run with peers'
    results has two blocks, each under its title (:func:`reports.table_cells.claim_blocks`):
    the paper's claims (and this suite's extensions), then the peers' results."""
    rows = [_latex_row(row) for row in summary_rows(run)]
    caption = TeX(
        "Verdict per claim of a gapverify run: largest context length $T$ sampled, "
        "predictions verified with power and the worst power (" + _run_text(run) + ").")
    return render("summary_table.tex", packages_comment=TeX(PACKAGES_COMMENT),
                  caption=caption, label=TeX("tab:gapverify:summary"), rows=rows,
                  notes=_notes(run),
                  header=TeX(" & ".join(head for _, head, _ in SUMMARY_COLUMNS)),
                  T_col=_s_column([r["T"] for r in rows if "T" in r]),
                  power_col=_s_column([r["power"] for r in rows if "power" in r]))
