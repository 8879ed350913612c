"""Tests of reports/tables.py, reports/figures.py, reports/document.py and reports/cli.py:
the tables, figures and report generated from a small judged run that the tests make
themselves (two claims, T = 128, 181, 256, 4 replicates, in a temporary store).

Contract checked: same results -> byte-identical tables; every table opens with the
packages comment and compiles with those packages alone; plain strings are escaped; a
conjecture reads "supported (conjecture)"; the report compiles with pdflatex (marked
``latex``, skipped without an engine); bad input exits 2 and creates no store.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gapverify.reports import document
from gapverify.cli.reports import COMMANDS, register
from gapverify.reports.figures import draw_all, save
from gapverify.reports.latex import PACKAGES, PACKAGES_COMMENT
from gapverify.reports.results import ResultsError, load_run
from gapverify.reports.summary_table import summary_table
from gapverify.reports.tables import CHECKS_NAME, SUMMARY_NAME, table_files, write_tables
from gapverify.verification.running.store import Store
from gapverify.verification.running.suite import RunOptions, results_json, verify

LATEX = document.latex_status()
PDFLATEX = LATEX.engine if LATEX.usable else None
REPO = Path(__file__).resolve().parents[2]
# a partial TeX installation (pdflatex without threeparttable.sty, say) skips these too,
# and the reason names what is missing
needs_latex = pytest.mark.skipif(not LATEX.usable, reason="LaTeX is not usable here ("
                                 + LATEX.reason + "): the compilation of the tables and the "
                                 "report is not tested")
SPECIAL_ID = "test.a_b%&#"


def main(argv: list[str]) -> int:
    """``gapverify tables|report ...`` through reports.cli's own parser and handlers (the
    real entry point is run once, in a fresh process, by
    test_gapverify_picks_up_the_commands: gapverify.cli.main registers its extension
    commands again on every call, so it cannot be called twice in one process)."""
    parser = argparse.ArgumentParser(prog="gapverify")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return COMMANDS[args.command](args)


def _with_special_claim(run: dict) -> dict:
    """The run plus a claim unknown to the registry, with LaTeX specials everywhere, status
    empirical; and markov.outliers (status conjecture) forced to pass."""
    run = copy.deepcopy(run)
    for claim in run["claims"]:
        if claim["claim"] == "markov.outliers":
            claim["verdict"] = "pass"
            for check in claim["checks"]:
                check["verdict"] = "pass"
    extra = copy.deepcopy(run["claims"][-1])
    extra.update(claim=SPECIAL_ID, status="empirical", verdict="pass")
    for i, check in enumerate(extra["checks"]):
        check.update(label=f"c_{i}$^~ [x=1, y_2=50%]", status="empirical", verdict="pass",
                     rate_note="rate & note_with #specials {braces} \\ backslash",
                     reason="reason_% & # ~ ^ $ | ± κ")
    extra["checks"][-1]["verdict"] = "recorded"  # its reason is printed
    run["claims"].append(extra)
    return run


# ----------------------------------------------------------------------------- tables
def test_tables_are_byte_identical_across_generations(tiny, tmp_path):
    json_path, store_path, _ = tiny
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    write_tables(load_run(results=json_path), a)
    write_tables(load_run(results=json_path), b)
    # the same run read back from the store gives the same bytes
    assert main(["tables", "--store", str(store_path), "--out", str(c)]) == 0
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir()) == sorted(p.name for p in c.iterdir())
    assert SUMMARY_NAME in names and CHECKS_NAME in names and len(names) == 5
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes() == (c / name).read_bytes(), name


def test_every_table_starts_with_the_packages_comment(tiny):
    files = table_files(_with_special_claim(tiny[2]))
    for name, text in files.items():
        assert text.splitlines()[0] == PACKAGES_COMMENT, name
        assert "\\usepackage" not in "\n".join(text.splitlines()[1:]), name
        assert not re.search(r"\d{4}-\d{2}-\d{2}", text), name  # no dates


def test_plain_strings_are_escaped(tiny):
    files = table_files(_with_special_claim(tiny[2]))
    special = next(t for n, t in files.items() if "test-a-b" in n)
    assert r"test.a\_b\%\&\#" in special
    assert r"c\_0\$" in special and r"y\_2=50\%" in special
    # notes are prose with math (reports.latex.prose): an identifier with '_' is code
    assert (r"rate \& \texttt{note\_with} \#specials \{braces\} {\textbackslash} backslash"
            in special)
    assert r"\texttt{reason\_\%} \& \#" in special
    assert r"\texttt{test.a\_b\%\&\#}" in files[SUMMARY_NAME]
    # registry claim ids too
    assert r"markov.singular\_law" in files[SUMMARY_NAME]


def test_conjecture_row_says_supported_not_verified(tiny):
    run = _with_special_claim(tiny[2])
    summary = summary_table(run)
    def row(claim_tex: str) -> str:
        # a row starts with the claim id, under it the paper's result (short form)
        start = r"\begin{tabular}[t]{@{}l@{}}" + claim_tex + r"\\"
        return next(line for line in summary.splitlines() if line.startswith(start))

    outliers = row(r"\texttt{markov.outliers}")
    assert outliers.startswith(r"\begin{tabular}[t]{@{}l@{}}\texttt{markov.outliers}\\paper\end")
    assert "& conj &" in outliers and "& supported" in outliers
    assert "verified" not in outliers
    assert "& reproduced" in row(r"\texttt{test.a\_b\%\&\#}")
    table = table_files(run)["claim-markov-outliers.tex"]
    lambda2 = table[table.index(r"\textbf{sqrtT\_lambda2"):]
    end = min(i for i in (lambda2.find(r"\midrule"), lambda2.find(r"\bottomrule")) if i > 0)
    lambda2 = lambda2[:end]  # this check's rows only
    # the word of judging/outcomes.py: a passing conjecture is "supported", never "verified"
    assert "verdict: \\textbf{supported" in lambda2 and "verified" not in lambda2


def test_numbers_carry_their_interval(tiny):
    """Measured cells are value(se) with at most two error digits; never a fixed format.
    They sit in siunitx S columns, bare (siunitx parses them) rather than in \\num."""
    text = table_files(tiny[2])["claim-markov-singular-law.tex"]
    cells = re.findall(r"(?:^|& )(-?\d+(?:\.\d+)?\(\d+\)(?:e-?\d+)?)(?= &| \\\\)", text, re.M)
    assert len(cells) > 10
    for cell in cells:
        err = re.search(r"\(([\d.]+)\)", cell).group(1).replace(".", "").lstrip("0")
        assert 1 <= len(err) <= 2, cell
    decimals = {len(c.split("(")[0].split(".")[1]) for c in cells if "." in c.split("(")[0]}
    assert len(decimals) > 1  # precision varies with the error


# ----------------------------------------------------------------------------- figures
def test_figures_come_from_the_stored_spectra(tiny, tmp_path):
    _, store_path, run = tiny
    drawn, skipped = draw_all(run, store_path)
    names = [d.name for d in drawn]
    assert "singular-values" in names and "markov-outliers" in names  # one figure per claim
    assert any(s.startswith("stable-rank") for s in skipped)  # no width.stable_rank here
    pdf, png = save(drawn[0], tmp_path)
    assert pdf.read_bytes()[:4] == b"%PDF" and png.read_bytes()[:4] == b"\x89PNG"
    # without the store only the figures of the results file remain, and it says why
    drawn, skipped = draw_all(run, None)
    assert [d.name for d in drawn] == ["overview", "markov-outliers", "markov-singular-law"]
    assert any("--store" in s for s in skipped)


# ----------------------------------------------------------------------------- command line
def test_gapverify_picks_up_the_commands(tiny, tmp_path):
    """The real entry point, in a fresh process: `python -m gapverify tables`."""
    assert set(COMMANDS) == {"tables", "report"}
    out = tmp_path / "t"
    proc = subprocess.run([sys.executable, "-m", "gapverify", "tables", "--from",
                           str(tiny[0]), "--out", str(out)], capture_output=True, text=True,
                          timeout=120, cwd=str(tmp_path),
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    assert str(out / SUMMARY_NAME) in proc.stdout
    assert (out / SUMMARY_NAME).read_bytes() == table_files(tiny[2])[SUMMARY_NAME].encode()


def test_bad_input_exits_2_and_creates_no_store(tmp_path, capsys):
    missing = tmp_path / "nope.sqlite"
    assert main(["tables", "--store", str(missing), "--out", str(tmp_path / "o")]) == 2
    assert not missing.exists()
    assert main(["report", "--from", str(tmp_path / "nope.json")]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["tables", "--from", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "'--store'" in err and "'--from'" in err
    with pytest.raises(ResultsError):
        load_run(results=tmp_path / "nope.json")


def test_report_without_engine_still_writes_the_tex(tiny, tmp_path, monkeypatch, capsys):
    json_path, store_path, _ = tiny
    monkeypatch.setattr(document.shutil, "which", lambda name: None)
    out = tmp_path / "out"
    assert main(["report", "--from", str(json_path), "--store", str(store_path),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "no LaTeX engine" in printed and str(out / "report.tex") in printed
    assert (out / "report.tex").is_file() and not (out / "report.pdf").exists()
    assert str(out / "figures" / "singular-values.png") in printed


def test_failed_compilation_raises_with_the_log_tail(tmp_path):
    tex = tmp_path / "x.tex"
    tex.write_text("x")
    (tmp_path / "x.log").write_text("! Undefined control sequence.\nl.1 \\oops\n")
    false = shutil.which("false")
    if false is None:
        pytest.skip("no 'false' executable to stand in for a failing engine")
    with pytest.raises(document.CompileError) as info:
        document.compile_pdf(tex, engine=false)
    assert "Undefined control sequence" in info.value.log_tail


# ----------------------------------------------------------------------------- LaTeX
@pytest.mark.latex
@needs_latex
def test_tables_compile_with_the_declared_packages_alone(tiny, tmp_path):
    run = _with_special_claim(tiny[2])
    paths = write_tables(run, tmp_path / "tables")
    body = "\n".join(r"\input{tables/" + p.stem + "}\n\\clearpage" for p in paths)
    (tmp_path / "t.tex").write_text(
        "\\documentclass{article}\n\\usepackage{" + ",".join(PACKAGES) + "}\n"
        "\\begin{document}\n" + body + "\n\\end{document}\n")
    proc = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    log = (tmp_path / "t.log").read_text(errors="replace")
    assert "Missing character" not in log


@pytest.mark.latex
@needs_latex
def test_report_compiles_with_pdflatex(tiny, tmp_path, capsys):
    json_path, store_path, _ = tiny
    out = tmp_path / "report"
    assert main(["report", "--from", str(json_path), "--store", str(store_path),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    pdf = out / "report.pdf"
    assert pdf.is_file() and pdf.read_bytes()[:4] == b"%PDF"
    assert f"PDF report: {pdf}" in printed
    tex = (out / "report.tex").read_text()
    assert r"\input{tables/summary}" in tex and r"\input{tables/checks}" in tex
    assert r"\input{tables/claim-markov-outliers}" not in tex  # the appendix is off by default
    assert r"\includegraphics" in tex and "figures/singular-values.pdf" in tex
    log = (out / "report.log").read_text(errors="replace")
    assert "undefined references" not in log and "Float too large" not in log
