r"""Markdown tables of a judged run (``gapverify tables --format markdown``): the rows of the
LaTeX tables (:mod:`reports.summary_table`, :mod:`reports.checks_table`,
:mod:`reports.claim_tables`), the same cells printed as GitHub pipe tables
(:meth:`reports.cells.Cell.markdown`: ``|`` escaped, identifiers in backticks, math in
``$...$``, which GitHub typesets, a failed verdict in bold).

The same columns, rows and verdict words as the LaTeX tables, without their page layout
(no floats, no column formats) and without their notes: one file per LaTeX table,
``summary.md``, ``checks.md`` (and ``checks-peers.md``), and ``claim-<id>.md`` per claim.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from gapverify.reports.cells import Cell
from gapverify.reports.check_notes import note_items
from gapverify.reports.checks_table import CHECK_COLUMNS, check_groups
from gapverify.reports.claim_tables import SIZE_COLUMNS, claim_checks
from gapverify.reports.results import claim_verdict_word
from gapverify.reports.summary_table import SUMMARY_COLUMNS, summary_rows
from gapverify.reports.table_cells import run_cell, run_references

__all__ = ["pipe_table", "summary_markdown", "checks_markdown", "claim_markdown",
           "check_notes_markdown"]

#: Columns set flush right (numbers).
_RIGHT = frozenset({"T", "checks", "power", "value", "predicted", "beta", "measured",
                    "interval", "error"})


def pipe_table(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub pipe table: ``columns`` as ``(key, head)`` (numbers flush right), ``rows``
    of Markdown cells already escaped."""
    lines = ["| " + " | ".join(head for _, head in columns) + " |",
             "|" + "|".join("---:" if key in _RIGHT else "---" for key, _ in columns) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _cells(row: Mapping[str, Cell], columns: Sequence[tuple[str, str]]) -> list[str]:
    return [row[key].markdown() for key, _ in columns]


def summary_markdown(run: Mapping[str, Any]) -> str:
    """The per-claim summary: one row per claim (a run with peers' results: a bold row
    opens each block)."""
    columns = [(key, md) for key, _, md in SUMMARY_COLUMNS]
    rows = []
    for row in summary_rows(run):
        if "heading" in row:
            rows.append([f"**{row['heading'].markdown()}**"] + [""] * (len(columns) - 1))
        else:
            rows.append(_cells(row, columns))
    refs = run_references(run)  # a user's claims cite their own, as the LaTeX notes do
    cited = ("\nReferences of the claims (ref.): " + "; ".join(
        f"[{i}] {r}" for i, r in enumerate(refs, 1)) + ".\n") if refs else ""
    return ("# Summary of claims\n\nVerdict per claim of a gapverify run ("
            + run_cell(run).markdown() + ").\n\n" + pipe_table(columns, rows) + cited)


def checks_markdown(run: Mapping[str, Any], claims: Sequence[Mapping[str, Any]] | None = None,
                    title: str = "") -> str:
    """The per-check table: per claim its heading, then one row per check and case."""
    groups = check_groups(run["claims"] if claims is None else claims)
    has_case = any(row["case"].markdown() for g in groups for row in g["rows"])
    columns = [(key, md) for key, _, md in CHECK_COLUMNS if key != "case" or has_case]
    out = [f"# {title + ': every' if title else 'Every'} check\n\n"
           "One row per check and parameter case (" + run_cell(run).markdown() + ").\n"]
    for g in groups:
        out.append("\n" + g["heading"].markdown() + "\n\n"
                   + pipe_table(columns, [_cells(row, columns) for row in g["rows"]]))
    return "".join(out)


def claim_markdown(run: Mapping[str, Any], claim: Mapping[str, Any]) -> str:
    """The per-size convergence table of one claim: per check its heading lines, one row
    per size and fit, and its verdict."""
    columns = [(key, md) for key, _, md in SIZE_COLUMNS]
    out = [f"# Convergence of `{claim['claim']}` [{claim['status']}]\n\n"
           "Verdict of the claim: " + claim_verdict_word(claim) + " ("
           + run_cell(run, claim).markdown() + ").\n"]
    for check in claim_checks(claim):
        heading = "<br>".join(line.markdown() for line in check["heading"])
        footer = "<br>".join(line.markdown() for line in check["footer"])
        out.append("\n" + heading + "\n\n"
                   + pipe_table(columns, [_cells(row, columns) for row in check["rows"]])
                   + "\n" + footer + "\n")
    return "".join(out)


def _note_text(tex: str) -> str:
    # a note (LaTeX prose) read as Markdown: typewriter as code, math kept in $...$
    import re

    from pylatexenc.latex2text import LatexNodes2Text

    tex = re.sub(r"\\texttt\{((?:[^{}]|\{\})*)\}",
                 lambda m: "`" + m.group(1).replace("\\_", "_") + "`", str(tex))
    tex = re.sub(r"\\textbf\{([^{}]*)\}", r"**\1**", tex)
    return " ".join(LatexNodes2Text(math_mode="verbatim").latex_to_text(tex).split())


def check_notes_markdown(run: Mapping[str, Any]) -> str:
    """The notes on the checks (prose, not a table): per claim a list, the notes of
    :func:`reports.check_notes.note_items` read as text."""
    out = ["# Notes on the checks\n"]
    for item in note_items(run):
        if item["block"]:
            out.append(f"\n## {item['block']}\n")
        out.append(f"\n### `{item['claim']}`\n\n"
                   + "".join(f"- {_note_text(note)}\n" for note in item["notes"]))
    return "".join(out)
