"""Tests of the report's typesetting (issue 10): registry notes and titles as math, siunitx
S columns without digit grouping, captions that stand alone, the per-claim summary within
one column of a two-column paper, no over- or underfull boxes, and LaTeX detection (no
TeX, partial TeX, full TeX).

Pure-Python tests run everywhere; those marked ``latex`` need a usable LaTeX (pdflatex and
every package of :data:`reports.document.REQUIRED_PACKAGES`) and are skipped otherwise,
with the missing package in the reason.
"""
from __future__ import annotations

import copy
import re
import subprocess
from pathlib import Path

import pytest

from gapverify.reports import document
from gapverify.reports.check_notes import _check_notes, check_notes
from gapverify.reports.checks_table import checks_table
from gapverify.reports.latex import PACKAGES, _ALLOWED_MACROS, math_or_text
from gapverify.reports.numbers import s_number, table_format
from gapverify.reports.prose import prose
from gapverify.reports.summary_table import summary_table
from gapverify.reports.table_cells import split_case
from gapverify.reports.tables import (
    CHECKS_NAME, NOTES_NAME, SUMMARY_NAME, table_files, write_tables,
)
from gapverify.verification.claims.registry import CLAIMS, default_claim_ids

from gapverify.cli.reports import COMMANDS, register


def main(argv: list[str]) -> int:
    """``gapverify tables|report ...`` through reports.cli's parser and handlers."""
    import argparse

    parser = argparse.ArgumentParser(prog="gapverify")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return COMMANDS[args.command](args)

LATEX = document.latex_status()
needs_latex = pytest.mark.skipif(not LATEX.usable, reason="LaTeX is not usable here ("
                                 + LATEX.reason + "): typesetting is not tested")
#: Largest over- or underfull box tolerated, in points (issue 10: "no box wider than 5 pt").
BOX_TOLERANCE_PT = 5.0


def _registry_notes() -> list[str]:
    notes = []
    for claim in CLAIMS.values():
        for check in claim.checks:
            for field in ("rate_note", "tolerance_note", "record_note", "domain_note"):
                text = getattr(check, field, "")
                if text and text not in notes:
                    notes.append(text)
    return notes


# ----------------------------------------------------------------------------- math
@pytest.mark.parametrize("text, expected", [
    ("sd ~ 1/T asymptotically", r"$\operatorname{sd} \sim 1/T$ asymptotically"),
    ("T^2 i.i.d. samples", "$T^{2}$ i.i.d. samples"),
    ("||A||_F^2 = 1 + ||Aperp||_F^2 and", r"$\|A\|_{F}^{2} = 1 + \|A^{\perp}\|_{F}^{2}$ and"),
    ("a distance O(T^-2/3) from", "a distance $O(T^{-2/3})$ from"),
    ("kappa^(2l) T^(1-l) for l >= 2", r"$\kappa ^{2\ell} T^{1-\ell}$ for $\ell \ge 2$"),
    ("by sqrt(log T / 4T) (Rider", r"by $\sqrt{\log T / 4T}$ (Rider"),
    ("sd ~ (T d)^(-1/2) ~ 1/T;", r"$\operatorname{sd} \sim (T d)^{-1/2} \sim 1/T$;"),
    ("as width sr_X1; asserted", r"as width \texttt{sr\_X1}; asserted"),
    ("(depth.stable_rank) survives", r"(\texttt{depth.stable\_rank}) survives"),
    ("U, V Gaussian T x d_qk:", r"$U$, $V$ Gaussian $T \times d_{qk}$:"),
    ("measured 0.92±0.14 (quick)", r"measured $0.92 \pm 0.14$ (quick)"),
    ("power 5.8% is worse at T <= 512", r"power 5.8\% is worse at $T \le 512$"),
    ("E||Aperp_L ... Aperp_1||_F^2 (frob_Aperp_scaled)",
     r"$E\|A^{\perp}_{L}$ ... $A^{\perp}_{1}\|_{F}^{2}$ (\texttt{frob\_Aperp\_scaled})"),
])
def test_registry_notes_come_out_as_math(text, expected):
    assert prose(text) == expected


def test_no_registry_note_keeps_an_escaped_caret():
    """The issue's 'T{\\textasciicircum}2': every note of the registry has its math as math."""
    for note in _registry_notes():
        out = prose(note)
        assert "textasciicircum" not in out, (note, out)
        assert not re.search(r"(?<!\\)[\^_]", re.sub(r"\$[^$]*\$", "", out)), out
        # only macros that compile with the tables' packages
        macros = set(re.findall(r"\\([A-Za-z]+)", out))
        assert macros <= _ALLOWED_MACROS | {"ell", "texttt", "textbackslash", "textasciitilde",
                                            "ensuremath", "backslash", "times"}, macros


def test_registry_titles_keep_their_latex():
    r"""Titles with '\|' and '\to' are kept as LaTeX; the one with \mathbb (amssymb, not
    loaded by the tables) gets an upright E instead of being turned to mangled text."""
    for claim in CLAIMS.values():
        out = math_or_text(claim.title)
        assert "$" in out, (claim.id, out)
        for macro in (r"\|", r"\to", r"\kappa"):
            if macro in claim.title:
                assert macro in out, (claim.id, out)
    cesaro = math_or_text(CLAIMS["causal.cesaro"].title)
    assert r"\mathrm{E}A = C_T" in cesaro and r"\|C_T\|_F^2" in cesaro and r"\to" in cesaro


# ----------------------------------------------------------------------------- numbers
def test_s_column_numbers_and_formats():
    cells = [s_number(0.04903, 0.00121), s_number(123.4, 5.6), s_number(-2.5, 0.013),
             s_number(float("nan"), 1.0), "{none}"]
    assert cells[:4] == ["0.0490(12)", "123.4(56)", "-2.500(13)", "{---}"]
    assert table_format(cells) == "-3.4(2)"
    assert table_format(["1.000(30)e-5", "2"]) == "1.3(2)e-1"


def test_tables_use_s_columns_without_digit_grouping(tiny):
    files = table_files(tiny[2])
    for name, text in files.items():
        if name == NOTES_NAME:
            continue
        assert re.search(r"\\sisetup\{group-digits=false[,}]", text), name
    checks = files[CHECKS_NAME]
    spec = next(line for line in checks.splitlines() if line.startswith(r"\begin{tabularx}"))
    assert len(re.findall(r"S\[table-format=<?[-\d.()e]+\]", spec)) == 4
    # value(uncertainty) in the value column, never "0.002 06(30)"
    assert re.search(r"& \d+\.\d+\(\d{1,2}\) & ", checks)
    summary = files[SUMMARY_NAME]
    assert "S[table-format=" in summary


# ----------------------------------------------------------------------------- notes and captions
def test_case_labels_are_split_and_rate_notes_are_not_given_to_one_case(tiny):
    """The bug behind 'a depth-4 table carried the depth-2 note': the suite labels cases
    'sr_X @ depth=2', which split_case did not read, so the per-check rate note was
    printed under every case's full label."""
    assert split_case("sr_X @ s2=0.5, gamma=0.5, depth=1") == ("sr_X", "s2=0.5, gamma=0.5, depth=1")
    assert split_case("sr_X [depth=2]") == ("sr_X", "depth=2")
    claim = {"checks": [
        {"label": f"sr_X @ depth={d}", "rate_note": "note about (l, gamma) = (2, 1)",
         "verdict": "pass", "kind": "limit", "status": "derived"} for d in (1, 2, 4)]}
    notes = _check_notes(claim)
    assert len(notes) == 1 and notes[0].startswith(r"\textbf{sr\_X} (every case)")
    assert "depth=1" not in notes[0]
    # the per-size table's heading puts the case on its own line, as math
    table = table_files(tiny[2])["claim-markov-singular-law.tex"]
    assert r"\textbf{edge}" in table and r"case $s^2=" in table


def test_captions_stand_alone(tiny):
    run = tiny[2]
    for name, text in table_files(run).items():
        for caption in re.findall(r"\\caption\{(.*)\}$", text, re.M):
            assert "profile quick" in caption and "root seed" in caption, (name, caption)
            assert "false-alarm level" in caption, (name, caption)
            assert not re.search(r"[Ff]igure|Fig\.|rebuttal", caption), (name, caption)


def test_report_has_no_appendix_unless_asked(tiny, tmp_path, monkeypatch):
    json_path, store_path, run = tiny
    monkeypatch.setattr(document, "latex_status",
                        lambda engine=None: document.LatexStatus(False, None, (), "test"))
    out = tmp_path / "r"
    files = document.write_report(run, out, store_path)
    tex = files.tex.read_text()
    assert r"\appendix" not in tex and "claim-markov" not in tex
    files = document.write_report(run, out, store_path, appendix=True)
    tex = files.tex.read_text()
    assert r"\appendix" in tex and r"\input{tables/claim-markov-outliers}" in tex
    assert "rebuttal" not in tex


# ----------------------------------------------------------------------------- LaTeX detection
def test_partial_tex_is_not_usable_and_says_what_is_missing(monkeypatch):
    monkeypatch.setattr(document.shutil, "which",
                        lambda name: "/usr/bin/" + name if name in ("pdflatex", "kpsewhich") else None)
    monkeypatch.setattr(document, "missing_packages", lambda engine, packages=None: ["threeparttable"])
    status = document.latex_status()
    assert not status.usable and status.missing == ("threeparttable",)
    assert "threeparttable.sty" in status.reason


def test_kpsewhich_lists_what_it_cannot_find(monkeypatch):
    class Proc:
        stdout = "/texmf/booktabs.sty\n/texmf/siunitx.sty\n"
    monkeypatch.setattr(document.shutil, "which", lambda name: "/usr/bin/kpsewhich")
    monkeypatch.setattr(document.subprocess, "run", lambda *a, **k: Proc())
    assert document._kpsewhich_missing(("booktabs", "siunitx", "threeparttable")) == ["threeparttable"]
    monkeypatch.setattr(document.shutil, "which", lambda name: None)
    assert document._kpsewhich_missing(("booktabs",)) is None  # then a probe is compiled


def test_report_with_partial_tex_writes_the_tex_and_exits_0(tiny, tmp_path, monkeypatch, capsys):
    json_path, store_path, _ = tiny
    monkeypatch.setattr(document, "missing_packages", lambda engine, packages=None: ["threeparttable"])
    monkeypatch.setattr(document.shutil, "which",
                        lambda name: "/usr/bin/" + name if name in ("pdflatex", "kpsewhich") else None)
    out = tmp_path / "partial"
    assert main(["report", "--from", str(json_path), "--store", str(store_path),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "no PDF" in printed and "threeparttable.sty" in printed
    assert (out / "report.tex").is_file() and not (out / "report.pdf").exists()


def test_box_warnings_are_parsed():
    log = ("Overfull \\hbox (60.03464pt too wide) in paragraph at lines 6--40\n"
           "Underfull \\hbox (badness 8056) in paragraph at lines 26--26\n"
           "Overfull \\vbox (2.5pt too high) has occurred while \\output is active\n")
    boxes = document.box_warnings(log)
    assert [(b.kind, b.box, b.points, b.badness) for b in boxes] == [
        ("Overfull", "h", 60.03464, None), ("Underfull", "h", None, 8056),
        ("Overfull", "v", 2.5, None)]


# ----------------------------------------------------------------------------- typesetting
def _compile(folder: Path, name: str) -> str:
    proc = subprocess.run([LATEX.engine, "-interaction=nonstopmode", "-halt-on-error", name],
                          cwd=folder, capture_output=True, text=True, errors="replace",
                          timeout=180, stdin=subprocess.DEVNULL)
    log = (folder / name).with_suffix(".log").read_text(errors="replace")
    assert proc.returncode == 0, log[-3000:]
    return log


def _pages(log: str) -> int:
    m = re.search(r"Output written on \S+ \((\d+) pages?", log)
    assert m, log[-2000:]
    return int(m.group(1))


def _widest_run(tiny_run: dict) -> dict:
    """A run shaped like the standard profile's for the summary: every default claim (what
    `make verify` judges) in one row each, with the widest cells a standard run can give (T = 16384,
    powers of two digits, the longest verdict words)."""
    template = tiny_run["claims"][0]
    claims = []
    words = ["not verified", "pass", "fail", "not assessed", "flaky"]
    for i, cid in enumerate(default_claim_ids()):
        reg = CLAIMS[cid]
        claim = copy.deepcopy(template)
        claim.update(claim=cid, status=reg.status, verdict=words[i % len(words)],
                     sizes=[64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384],
                     power_summary="12 of 12 predictions verified with power")
        for check in claim["checks"]:
            check.update(verdict="lacks power", power="inf" if i % 4 == 0 else 0.178 + i / 100,
                         power_class="rated",
                         power_target=0.03)
        claims.append(claim)
    return {**tiny_run, "profile": "standard", "claims": claims}


@pytest.mark.latex
@needs_latex
def test_summary_fits_one_column_of_a_two_column_paper(tiny, tmp_path):
    """The per-claim summary (every claim of the registry, standard-sized cells) typeset in
    a \\documentclass[twocolumn]{article} probe: no overfull box at all (\\hfuzz=0pt), one
    page, and its measured width at most \\columnwidth."""
    run = _widest_run(tiny[2])
    (tmp_path / "summary.tex").write_text(summary_table(run))
    (tmp_path / "probe.tex").write_text(
        "\\documentclass[twocolumn]{article}\n\\usepackage{" + ",".join(PACKAGES) + "}\n"
        "\\hfuzz=0pt\n\\begin{document}\n"
        # the tabular's natural width, measured outside the float
        "\\makeatletter\\let\\origtabular\\tabular\\let\\endorigtabular\\endtabular\n"
        "\\newsavebox\\probebox\n"
        "\\renewenvironment{tabular}{\\begin{lrbox}{\\probebox}\\origtabular}"
        "{\\endorigtabular\\end{lrbox}\\typeout{PROBE-WIDTH=\\the\\wd\\probebox}"
        "\\typeout{PROBE-COLUMN=\\the\\columnwidth}\\usebox{\\probebox}}\n\\makeatother\n"
        "\\input{summary}\n\\end{document}\n")
    log = _compile(tmp_path, "probe.tex")
    # the outer tabular closes last (a claim's cell holds a tabular of its own)
    width = float(re.findall(r"PROBE-WIDTH=([\d.]+)pt", log)[-1])
    column = float(re.search(r"PROBE-COLUMN=([\d.]+)pt", log).group(1))
    assert width <= column, f"summary is {width:.1f}pt wide, the column {column:.1f}pt"
    assert not document.box_warnings(log), document.box_warnings(log)
    assert "Float too large" not in log
    assert _pages(log) == 1


@pytest.mark.latex
@needs_latex
def test_registry_notes_titles_and_quantities_compile(tmp_path):
    """Every note, title and quantity of the registry, as the tables print them (a
    quantity with two subscripts, '\\|A\\|_F^2_{tok}', stopped the report's compilation)."""
    texts = [prose(n) for n in _registry_notes()]
    for claim in CLAIMS.values():
        texts.append(math_or_text(claim.title))
        texts += [math_or_text(p.quantity, math=True) for p in claim.predictions]
    body = "\n\n".join(texts)
    (tmp_path / "notes.tex").write_text(
        "\\documentclass{article}\n\\usepackage{" + ",".join(PACKAGES) + "}\n"
        "\\begin{document}\n\\raggedright\n" + body + "\n\\end{document}\n")
    log = _compile(tmp_path, "notes.tex")
    assert "Missing" not in log and "Undefined control sequence" not in log


@pytest.mark.latex
@needs_latex
@pytest.mark.parametrize("appendix", [False, True], ids=["report", "report-appendix"])
def test_report_has_no_box_wider_than_5pt(tiny, tmp_path, capsys, appendix):
    """Compile the report of a small judged run and read pdflatex's log: no overfull box
    more than 5 pt too wide or high, and no underfull box at all (pdflatex reports an
    underfull one by its badness, not its size, so none is tolerated)."""
    json_path, store_path, _ = tiny
    out = tmp_path / "report"
    argv = ["report", "--from", str(json_path), "--store", str(store_path), "--out", str(out)]
    assert main(argv + (["--appendix"] if appendix else [])) == 0
    assert "PDF report" in capsys.readouterr().out
    log = (out / "report.log").read_text(errors="replace")
    boxes = document.box_warnings(log)
    too_big = [b for b in boxes if b.kind == "Underfull"
               or (b.points is not None and b.points > BOX_TOLERANCE_PT)]
    assert not too_big, too_big
    assert "Float too large" not in log and "undefined references" not in log


@pytest.mark.latex
@needs_latex
def test_probe_finds_a_missing_package_without_kpsewhich():
    missing = document._probe_missing(LATEX.engine, ("booktabs", "gapverify-no-such-package"))
    assert missing == ["gapverify-no-such-package"]


def _every_check_run(tiny_run: dict) -> dict:
    """Every check of the registry in three parameter cases of four parameters each (about
    the standard profile's row count and its widest cells), shaped as a judged run."""
    template = tiny_run["claims"][0]
    check_template = next(c for c in template["checks"] if c.get("rows"))
    claims = []
    for cid, reg in CLAIMS.items():
        claim = copy.deepcopy(template)
        cases = [{"depth": d, "gamma": g, "s2": s2, "sigma_V": v}
                 for d, g, s2, v in ((1, 0.5, 0.25, 1.5), (2, 1.0, 0.5, 0.7), (3, 0.5, 0.35, 1.0))]
        checks = []
        for case in cases:
            for reg_check in reg.checks:
                check = copy.deepcopy(check_template)
                check.update(label=f"{reg_check.label} @ s2={case['s2']}, gamma={case['gamma']}, "
                                   f"sigma_V={case['sigma_V']}, depth={case['depth']}",
                             case=case, verdict="pass", status="derived")
                if case["depth"] == 3 and len(checks) % 2:
                    # the widest rows of a real standard run: a check outside its domain
                    # (no value, no rate, its rate-range model and verdict "outside")
                    check.update(verdict="outside domain", power_class="outside domain",
                                 rows=[], rate_range=[2 / 3, 1.0], rate=None)
                elif case["depth"] == 2 and len(checks) % 3 == 0:
                    # a model family with the theory's mean subtracted: the widest model
                    # cell, on two lines ("theory's" / "mean")
                    check.update(models=["L + c/T"], corrected=True)
                checks.append(check)
        claim.update(claim=cid, status=reg.status, checks=checks, cases=cases)
        claims.append(claim)
    return {**tiny_run, "profile": "standard", "claims": claims}


@pytest.mark.latex
@needs_latex
@pytest.mark.parametrize("preamble", [
    "\\documentclass[twocolumn]{article}",  # a paper's page: shorter than the report's
    "\\documentclass{article}",  # the narrowest text the tables are made for (issue 35)
    # the report's own page (11 pt type: wider columns; the standard run's checks outside
    # their domain were 33 pt too wide there, and passed in the two-column probe)
    "\\documentclass[11pt]{article}\n\\usepackage[a4paper,margin=2cm]{geometry}",
], ids=["two-column paper", "standard article", "report page"])
def test_checks_table_fits_the_pages_of_a_two_column_paper(tiny, tmp_path, preamble):
    """The per-check table of a standard-sized run, as table* floats in a two-column
    article and on the report's page: no box over 5 pt, no float too large."""
    run = _every_check_run(tiny[2])
    assert sum(len(c["checks"]) for c in run["claims"]) > 150
    (tmp_path / "checks.tex").write_text(checks_table(run))
    (tmp_path / "probe.tex").write_text(
        preamble + "\n\\usepackage{" + ",".join(PACKAGES) + "}\n"
        "\\begin{document}\n\\input{checks}\n\\end{document}\n")
    log = _compile(tmp_path, "probe.tex")
    boxes = [b for b in document.box_warnings(log)
             if b.kind == "Underfull" or (b.points or 0) > BOX_TOLERANCE_PT]
    assert not boxes, boxes
    assert "Float too large" not in log
