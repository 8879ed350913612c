"""Tests of issue 35, item 3: the LaTeX tables drop into a paper unedited.

Contract checked: the tables of a quick run (summary, per-check table, notes on the checks,
per-size tables), ``\\input`` into a ``\\documentclass[twocolumn]{article}`` and into the
standard ``article``, compile with no overfull box and no float too large (pdflatex's log
read); every table's footnote marks run a, b, c, ... in the order a reader meets them,
and its notes in that order; the power column has one number format; a small exponent
stays with its value; the per-size intervals take the Student-t quantile the judging
uses, and the note says so; a report of a user's own claim describes that claim and cites
its references, never the built-in paper.

The compiling tests are marked ``latex`` and skip without a usable LaTeX.
"""
from __future__ import annotations

import copy
import math
import re
import subprocess
from types import SimpleNamespace

import pytest

from gapverify.reports import document
from gapverify.reports import table_cells
from gapverify.reports.cells import Number, s_cell
from gapverify.reports.claim_tables import claim_checks
from gapverify.reports.latex import PACKAGES
from gapverify.reports.summary_table import summary_table
from gapverify.reports.table_cells import percent_cell
from gapverify.reports.tables import CHECKS_NAME, SUMMARY_NAME, table_files
from gapverify.verification.judging.inference import student_quantile

LATEX = document.latex_status()
needs_latex = pytest.mark.skipif(not LATEX.usable, reason="LaTeX is not usable here ("
                                 + LATEX.reason + "): typesetting is not tested")


# ----------------------------------------------------------------------------- fit
@pytest.mark.latex
@needs_latex
@pytest.mark.parametrize("documentclass", [
    "\\documentclass[twocolumn]{article}", "\\documentclass{article}",
], ids=["twocolumn", "article"])
def test_quick_tables_compile_unedited_without_overfull_boxes(tiny, tmp_path, documentclass):
    """Every table of a quick run ``\\input`` as it is, between paragraphs of text: the log
    holds no "Overfull" box and no "Float too large" (the issue's run of three claims had 49
    of them in a two-column article)."""
    files = table_files(tiny[2])
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    text = "Text of the paper. " * 40
    body = "\n\n".join(f"{text}\n\n\\input{{{name.removesuffix('.tex')}}}" for name in files)
    (tmp_path / "paper.tex").write_text(
        documentclass + "\n\\usepackage{" + ",".join(PACKAGES) + "}\n\\begin{document}\n"
        + body + "\n\n" + text + "\n\\end{document}\n")
    proc = subprocess.run([LATEX.engine, "-interaction=nonstopmode", "-halt-on-error",
                           "paper.tex"], cwd=tmp_path, capture_output=True, text=True,
                          errors="replace", timeout=180, stdin=subprocess.DEVNULL)
    log = (tmp_path / "paper.log").read_text(errors="replace")
    assert proc.returncode == 0, log[-3000:]
    overfull = re.findall(r"^Overfull .*$", log, re.M)
    assert not overfull, overfull
    assert "Float too large" not in log, re.findall(r"Float too large.*", log)


# ----------------------------------------------------------------------------- notes
def _header(text: str) -> str:
    # the head row of the first tabular: the line after the first \toprule
    lines = text.splitlines()
    return lines[lines.index(r"\toprule") + 1]


def _marks_in_order(text: str) -> None:
    """The header's marks are a, b, c, ... in order, and each part's notes list their
    marks in alphabetical order from a."""
    head = re.findall(r"\\tnote\{(\w)\}", _header(text))
    assert head == [chr(ord("a") + i) for i in range(len(head))], head
    for notes in re.findall(r"\\begin\{tablenotes\}(.*?)\\end\{tablenotes\}", text, re.S):
        marks = re.findall(r"\\item\[(\w)\]", notes)
        assert marks == [chr(ord("a") + i) for i in range(len(marks))], marks
        assert set(head) <= set(marks)


def test_footnote_marks_run_in_reading_order(tiny):
    files = table_files(tiny[2])
    for name, text in files.items():
        if r"\begin{tablenotes}" in text:
            _marks_in_order(text)
    # the summary's head cells are set apart (they ran together: "Pred.^bPower^cVerdict^d")
    assert "2.25pt" in files[SUMMARY_NAME] and r"\tabcolsep}{1.5pt}" not in files[SUMMARY_NAME]


def test_power_has_one_format_and_an_exponent_stays_with_its_value():
    cells = [percent_cell(p).markdown() for p in (0.03, 0.029, 0.0001, 0.0057, 1.5)]
    assert cells == ["3.0", "2.9", "<0.1", "0.6", "150.0"]
    assert all(re.fullmatch(r"<?\d+\.\d", c) for c in cells)
    assert s_cell(percent_cell(0.0001)) == "<0.1"  # siunitx's comparator, aligned
    # 6.6(71)e-5 was set "6.6(71)" and, apart, "x 10^-5": written out, one format
    assert Number("6.6(71)e-5").text == "0.000066(71)"
    assert Number("2.2e-16").text == "2.2e-16"  # a round-off residual keeps its exponent


def test_per_size_intervals_take_the_student_t_quantile(tiny):
    """The interval of a size is mean +- t se with t the Student-t quantile at n - 1
    degrees of freedom (the judging's, inference.student_quantile), not the normal q; the
    note says so."""
    run = tiny[2]
    claim = next(c for c in run["claims"] if c["claim"] == "markov.singular_law")
    check = next(c for c in claim["checks"] if (c.get("rows") or [{}])[0].get("se"))
    row, cells = check["rows"][0], claim_checks(claim)[claim["checks"].index(check)]["rows"][0]
    t = student_quantile(float(claim["q"]), row["n"] - 1)
    assert t > float(claim["q"])
    low, high = float(cells["interval"].low), float(cells["interval"].high)
    half = (high - low) / 2
    assert half == pytest.approx(t * row["se"], rel=0.05, abs=2e-4 * abs(row["mean"]))
    table = table_files(run)["claim-markov-singular-law.tex"]
    assert "Student-t quantile" in table and "the normal quantile at" not in table


# ----------------------------------------------------------------------------- own claims
def _own_claim_run(run: dict) -> dict:
    """The tiny run with its claims renamed to a user's claims (not in the registry)."""
    run = copy.deepcopy(run)
    for i, claim in enumerate(run["claims"]):
        claim["claim"] = f"mine.claim_{i}"
        claim["cases"], claim["parameters"] = [{"beta": 2.0}], {"beta": 2.0}
    return run


def test_a_users_claim_cites_its_own_references(tiny, monkeypatch):
    """A report of a user's own claims says nothing of softmax attention or of the built-in
    paper: the summary cites the claims' references, numbered, and the report's title and
    introduction name the claims."""
    # the built-in claims cite the paper
    assert "Naderi" in summary_table(tiny[2]) and "softmax" in document._title(tiny[2])
    assert "Naderi" in document._sources(tiny[2])
    refs = ("Smith, A note on column sums, 2024", "https://example.org/my_claims/notes.pdf")
    fake = SimpleNamespace(paper_result="", references=refs, title="My claim",
                           checks=(), predictions=())
    monkeypatch.setattr(table_cells, "registry_claim",
                        lambda cid: fake if cid.startswith("mine.") else None)
    run = _own_claim_run(tiny[2])
    summary = summary_table(run)
    assert "Naderi" not in summary and "Bordenave" not in summary
    assert "[1] Smith, A note on column sums, 2024" in summary and "[2] https:" in summary
    assert "refs. 1, 2" in summary
    # no parameter with a default: no empty "parameters other than the defaults ;"
    assert "defaults ;" not in summary and "defaults ()" not in summary
    title, sources = document._title(run), document._sources(run)
    assert "softmax" not in title and r"\texttt{mine.claim\_0}" in title
    assert "Naderi" not in sources and "Mind the Gap" not in sources
    assert "[1] Smith" in sources and "mine.claim" in sources


def test_checks_table_spans_the_text_and_wraps_its_text_columns(tiny):
    text = table_files(tiny[2])[CHECKS_NAME]
    assert r"\begin{table*}" in text and r"\begin{tabularx}{\linewidth}" in text
    assert math.isclose(sum(float(x) for x in re.findall(r"\\hsize=([\d.]+)\\hsize", text)
                            [:2]), 2.0)
