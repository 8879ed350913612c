"""Tests of the Markdown tables (reports/markdown.py, ``gapverify tables --format
markdown``) and of the cells they share with the LaTeX ones (reports/cells.py,
reports/model_cell.py).

Contract checked: from one judged run, the Markdown tables have the same files, rows and
verdict words as the LaTeX tables; every Markdown table row has as many cells as its head
(a ``|`` inside a cell is escaped); the command writes them from the store's last run; the
terminal and the report decide a check's finite-size model by one function.
"""
from __future__ import annotations

import argparse
import re

import pytest

from gapverify.cli.reports import COMMANDS, register
from gapverify.reports.cells import Joined, Math, Number, Text, Verdict, md_escape, s_cell
from gapverify.reports.model_cell import ModelKind, finite_size_model
from gapverify.reports.results import claim_verdict_word, verdict_word
from gapverify.reports.tables import CHECKS_NAME, SUMMARY_NAME, markdown_files, table_files


@pytest.fixture(scope="module")
def both(tiny):
    """The run and its tables in both formats: (run, LaTeX files, Markdown files)."""
    run = tiny[2]
    return run, table_files(run), markdown_files(run)


def _latex_words(cell: str) -> str:
    # a LaTeX cell read as words: two-line cells on one line, bold and braces dropped
    cell = re.sub(r"\\begin\{tabular\}\[t\]\{@\{\}l@\{\}\}|\\end\{tabular\}", "", cell)
    cell = cell.replace("\\\\ ", " ").replace(r"\textbf{", "")
    return re.sub(r"[{}]", "", cell).strip()


_SEPARATOR = re.compile(r"\|(-+:?\|)+")
_CELL_BAR = re.compile(r"(?<!\\)\|")


def _md_rows(text: str, heads: bool = True) -> list[list[str]]:
    """The rows of every pipe table of a Markdown file as cells (``heads=False``: without
    the head rows)."""
    lines = text.splitlines()
    return [[c.strip() for c in _CELL_BAR.split(line)[1:-1]] for i, line in enumerate(lines)
            if line.startswith("|") and not _SEPARATOR.fullmatch(line)
            and (heads or not (i + 1 < len(lines) and _SEPARATOR.fullmatch(lines[i + 1])))]


def _md_bodies(text: str) -> list[list[str]]:
    return _md_rows(text, heads=False)


def test_the_same_files_in_both_formats(both):
    _, latex, md = both
    assert [n.removesuffix(".tex") for n in latex] == [n.removesuffix(".md") for n in md]


def test_summary_rows_and_verdict_words_match(both):
    run, latex, md = both
    tex_rows = [line for line in latex[SUMMARY_NAME].splitlines()
                if line.endswith(r"\tabularnewline") and not line.startswith(r"\multicolumn")]
    md_rows = _md_bodies(md["summary.md"])
    assert len(tex_rows) == len(md_rows) == len(run["claims"])
    for claim, tex, row in zip(run["claims"], tex_rows, md_rows):
        word = claim_verdict_word(claim)
        tex_word = _latex_words(tex.removesuffix(r"\tabularnewline").rsplit(" & ", 1)[1])
        assert tex_word == row[-1].strip("*") == word
        assert row[0].startswith("`" + claim["claim"] + "`")
        # the status, the largest size and the predictions verified: the same words
        assert [_latex_words(c) for c in tex.split(" & ")[1:4]] == row[1:4]


def test_checks_rows_and_verdict_words_match(both):
    run, latex, md = both
    tex_rows = [line for line in latex[CHECKS_NAME].splitlines()
                if line.startswith(r"\raggedright") and line.endswith(r"\tabularnewline")]
    md_rows = _md_bodies(md["checks.md"])
    checks = [c for claim in run["claims"] for c in claim["checks"]]
    assert len(tex_rows) == len(md_rows) == len(checks)
    for check, tex, row in zip(checks, tex_rows, md_rows):
        word = verdict_word(str(check["verdict"]), str(check.get("status", "")))
        tex_word = _latex_words(tex.removesuffix(r"\tabularnewline").rsplit(" & ", 1)[1])
        assert tex_word == row[-1].strip("*") == word


def test_claim_tables_have_the_same_rows_and_verdicts(both):
    run, latex, md = both
    for name, claim in zip([n for n in latex if n.startswith("claim-")], run["claims"]):
        tex, text = latex[name], md[name.removesuffix(".tex") + ".md"]
        tex_words = re.findall(r"verdict: \\textbf\{([^}]*)\}", tex)
        md_words = re.findall(r"verdict: \*\*([^*]*)\*\*", text)
        assert tex_words == md_words == [
            verdict_word(str(c["verdict"]), str(c.get("status", ""))) for c in claim["checks"]]
        tex_rows = [line for line in tex.splitlines() if line.endswith(r" \\")
                    and not line.startswith((r"\multicolumn", "{$T$"))]
        assert len(tex_rows) == len(_md_bodies(text))


def test_every_markdown_row_has_as_many_cells_as_its_head(both):
    _, _, md = both
    for name, text in md.items():
        widths = {len(row) for row in _md_rows(text)}
        if "checks" in name or "summary" in name or "claim-" in name:
            assert len(widths) == 1, (name, widths)


def test_tables_command_writes_markdown_from_the_store(tiny, tmp_path, capsys):
    _, store_path, run = tiny
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    out = tmp_path / "md"
    args = parser.parse_args(["tables", "--format", "markdown", "--store", str(store_path),
                              "--out", str(out)])
    assert COMMANDS["tables"](args) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(markdown_files(run))
    assert "|" in (out / "summary.md").read_text()


def test_cells_escape_pipes_and_keep_one_rule_per_format():
    assert md_escape("a|b") == r"a\|b"
    assert Text("a|b").markdown() == r"a\|b"
    assert Verdict("lacks power", failed=False, split=" ").markdown() == "lacks power"
    assert Verdict("failed", failed=True).markdown() == "**failed**"
    assert Verdict("failed", failed=True).latex() == r"\textbf{failed}"
    assert Joined((Math("<"), Text("0.01"))).latex() == "$<$0.01"
    assert s_cell(Number("123.4(5.6)")) == "123.4(56)"
    assert s_cell(Number("---")) == "{---}"
    assert s_cell(Number("1e-9"), unalign_exponent=True) == r"{\num{1e-9}}"
    # a small exponent is written out, in every format (issue 35: "6.6(71)" and its
    # "x 10^-5" set apart by siunitx)
    assert s_cell(Number("1e-5"), unalign_exponent=True) == "0.00001"
    assert Number("6.6(71)e-5").markdown() == "0.000066(71)"
    assert s_cell(Text("identity")) == "{identity}"


def test_one_model_cell_for_the_terminal_and_the_report():
    class Judged:  # a judged check as the terminal holds it
        kind, power_class, models, corrected, rate_range, rate = (
            "limit", "rated", (), False, (0.5, 1.0), None)

    assert finite_size_model(Judged()).kind is ModelKind.RANGE
    assert finite_size_model({"kind": "exact"}).kind is ModelKind.EXACT
    assert finite_size_model({"kind": "limit", "verdict": "recorded"}).kind is ModelKind.RECORDED
    assert finite_size_model({"kind": "limit", "verdict": "recorded"},
                             recorded=False).kind is ModelKind.NONE
    family = finite_size_model({"kind": "limit", "models": ["L + c/T"], "corrected": True})
    assert (family.kind, family.family) == (ModelKind.FAMILY, "theory's mean")
