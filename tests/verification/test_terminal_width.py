"""tests for the terminal output at 80 columns (gapverify/cli/display.py): the verdict table
of ``gapverify run`` shows every verdict word whole (no cell cut to ``softm…`` or
``veri…``), stacked where its nine columns do not fit; ``COLUMNS`` sets the width of output
that is not a terminal; the progress display clears its time left once a sweep is done and
names the judging, and a phase line says each step of a long command."""
from __future__ import annotations

import io
import math
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
from rich.console import Console

from gapverify.cli import display
from gapverify.verification.judging.checks import CheckResult, ClaimResult, SizeRow
from gapverify.verification.judging.outcomes import Outcome

#: A check of each outcome, with the statuses that give every check verdict word.
OUTCOMES = [(Outcome.PASS, "derived"), (Outcome.PASS, "conjecture"), (Outcome.PASS, "empirical"),
            (Outcome.RECORDED, "empirical"), (Outcome.OUTSIDE_DOMAIN, "derived"),
            (Outcome.NOT_ASSESSED, "theorem"), (Outcome.LACKS_POWER, "derived"),
            (Outcome.FAIL, "theorem")]
CHECK_WORDS = ["verified", "supported", "reproduced", "recorded", "outside domain",
               "not assessed", "lacks power", "failed"]


def _check(i: int, outcome: Outcome, status: str) -> CheckResult:
    rows = [SizeRow(T=T, n=24, mean=0.5329 + 1e-3 / T, se=6.3e-5, error=1e-3 / T, error_se=1e-5)
            for T in (64, 256, 1024)]
    return CheckResult(claim="softmax.kappa_long_identifier", label=f"kappa_{i} @ s2=0.693147, "
                       "gamma=0.5", statistic="kappa", kind="limit", status=status,
                       predicted=0.532940123, rate=0.75, verdict=outcome,
                       reason="rejected" if outcome == Outcome.FAIL else "", rows=rows,
                       beta=0.969, beta_se=0.029, power=0.00058, power_target=0.05)


def _results() -> list[ClaimResult]:
    checks = [_check(i, o, s) for i, (o, s) in enumerate(OUTCOMES)]
    return [ClaimResult(claim="softmax.kappa_long_identifier", status="derived",
                        verdict=Outcome.FAIL, checks=checks, parameters={"s2": 0.25},
                        sizes=[64, 256, 1024], replicates=24, root_seed=1, q=3.1, tests=8,
                        power_summary="1 of 2 predictions verified with power"),
            ClaimResult(claim="markov.outliers", status="theorem",
                        verdict=Outcome.NOT_VERIFIED, checks=[_check(9, Outcome.LACKS_POWER,
                                                                     "theorem")],
                        parameters={}, sizes=[64, 256, 1024], replicates=24, root_seed=1,
                        q=2.5, tests=1, unverified=["kappa: lacks power (power 9% > 5%)"],
                        power_summary="0 of 1 predictions verified with power")]


def _render(monkeypatch, width: int) -> str:
    out = io.StringIO()
    monkeypatch.setattr(display, "console", Console(file=out, width=width, color_system=None))
    display.verdict_table(_results(), SimpleNamespace(seed=1, profile="quick"))
    return out.getvalue()


@pytest.mark.parametrize("width", [80, 60])
def test_every_verdict_word_is_whole_at_80_columns(monkeypatch, width):
    text = _render(monkeypatch, width)
    lines = text.splitlines()
    assert max(map(len, lines)) <= width
    assert "…" not in text  # no cell cut short
    for word in CHECK_WORDS:  # each check's word whole, on one line
        assert any(word in line for line in lines), word
    # each check's row: its label and its verdict word on the same line
    for i, word in enumerate(CHECK_WORDS):
        assert any(f"kappa_{i} @" in line and line.rstrip().endswith(word) for line in lines), \
            (i, word)
    # the claims' words in capitals, whole; the claim ids whole
    assert "FAILED" in text and "NOT VERIFIED: LACKS POWER" in text
    assert "softmax.kappa_long_identifier" in text and "markov.outliers" in text
    # every number of a check is shown, wrapped if need be, never cut
    assert "0.53294" in text and "0.058%" in text


def test_the_wide_table_is_kept_where_it_fits(monkeypatch):
    text = _render(monkeypatch, 200)
    header = next(line for line in text.splitlines() if "measured ± se" in line)
    assert "claim" in header and "verdict" in header and "power" in header
    assert "…" not in text


def test_columns_sets_the_width_of_a_pipe():
    """``COLUMNS=80 gapverify ... | less``: the table is laid out for 80 columns."""
    code = ("import sys\nfrom gapverify.cli import display\n"
            "print(display.console.width)")
    env = {**os.environ, "COLUMNS": "80"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "80"
    env.pop("COLUMNS")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.stdout.strip() == str(display.LOG_WIDTH)


def test_progress_clears_its_time_left_and_names_the_judging(monkeypatch):
    from gapverify.verification.running.runner import Task

    monkeypatch.setattr(display.Progress, "__enter__", lambda self: self)
    tasks = [Task("softmax.kappa", (), 64, r, 1, "v") for r in range(3)]
    bar = display.Progress()
    bar.start("1 claim(s)", len(tasks), len(tasks), tasks=tasks)
    for task in tasks:
        bar._shown = -math.inf  # refresh the time left at once
        bar.advance(task, 1.0)
    sweep, judging = bar._bar.tasks
    assert sweep.fields["left"] == ""  # not "about 0:00:00 left" while judging
    assert judging.description == "judging the claims" and judging.total is None
    bar.judging(4, 22, "softmax.kappa")
    assert bar._bar.tasks[1].description == "judging 5 of 22 claims"
    assert (bar._bar.tasks[1].completed, bar._bar.tasks[1].total) == (4, 22)
    bar.judging(22, 22)
    assert bar._bar.tasks[1].description == "judged 22 claim(s)"


def test_a_phase_says_its_start_and_its_end_off_a_terminal():
    out = io.StringIO()
    with display.phase("drawing figures", stream=out):
        pass
    first, last = out.getvalue().splitlines()
    assert first == "gapverify: drawing figures ..."
    assert last.startswith("gapverify: drawing figures: done in ")


def test_the_claims_table_folds_a_long_formula(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(display, "console", Console(file=out, width=80, color_system=None))
    formula = r"$\|A_1-\mathbf{1}\mathbf{1}^\top/T\|_2\to\sqrt{e^{s^2}-1}\,(1+\sqrt\gamma)$"
    display.claims_table([{"id": "markov.outliers", "status": "theorem", "statement": formula}])
    text = out.getvalue()
    assert "…" not in text and "markov.outliers" in text
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if "━" in line)
    rows = "".join("".join(lines[rule + 1:]).split())  # the row below the rule, folded
    assert formula in rows  # every character shown, in order
