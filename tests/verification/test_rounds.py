"""Sampling in rounds, end to end on a synthetic claim: the pilot, the extension to the
power target, the budget's stop with what would reach the target, and the same draws and
verdicts whatever the workers and however often the run was interrupted.

The claim's experiment costs microseconds: ``x_T = 1 + T^-1/2 + noise`` with a spread
that makes the 12-replicate pilot miss the 5% target, so a second round is needed.
"""
from __future__ import annotations

import json
import textwrap

import pytest

from gapverify.cli import main
from gapverify.verification.running.rounds import STOPPED

CLAIM = '''
import numpy as np
import sympy as sp
from gapverify import Check, Claim, Prediction, profiles


def noisy(rng, T, params):
    return {{"x": float(1.0 + T ** -0.5 + {spread} * rng.standard_normal())}}


CLAIMS = [Claim(
    id="mine.sized", title="a noisy limit",
    predictions=(Prediction("one", "derived", lambda p: sp.Integer(1), "x"),),
    checks=(Check("one", "x", "limit", rate=0.5, rate_status="derived", rate_note="CLT"),),
    parameters=("s2",), experiment=noisy, references=("test",),
    profiles=profiles(quick=(64, 256)))]
'''


@pytest.fixture
def claim_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")

    def write(spread: float = 0.04):
        path = tmp_path / f"sized_{str(spread).replace('.', '_')}.py"
        path.write_text(textwrap.dedent(CLAIM.format(spread=spread)))
        return path
    return write


def _run(capsys, path, store, *extra) -> dict:
    out = store.with_suffix(".json")
    code = main(["run", "mine.sized", "--claims-from", str(path), "--profile", "quick",
                 "--store", str(store), "--json", str(out), "--quiet", *extra])
    err = capsys.readouterr().err
    assert out.exists(), err
    result = json.loads(out.read_text())["claims"][0]
    result["exit"] = code
    return result


def test_the_pilot_is_extended_to_the_target(capsys, tmp_path, claim_file):
    r = _run(capsys, claim_file(), tmp_path / "a.sqlite", "--workers", "1")
    sizing = r["sizing"][0]
    assert sizing["stopped"] == "target" and sizing["why"] == STOPPED["target"], sizing
    assert sizing["rounds"] >= 2
    assert min(sizing["drawn"].values()) >= 12 and max(sizing["drawn"].values()) > 12
    assert r["verdict"] == "verified" and r["exit"] == 0
    check = r["checks"][0]
    assert check["power"] <= check["power_target"] == 0.05
    assert set(sizing["pilot_sd"]["one"]) == {"64", "91", "128", "181", "256"}


def test_the_same_draws_whatever_the_workers_and_the_interruptions(capsys, tmp_path, claim_file):
    path = claim_file()
    one = _run(capsys, path, tmp_path / "one.sqlite", "--workers", "1")
    two = _run(capsys, path, tmp_path / "two.sqlite", "--workers", "2")
    # interrupted after the pilot: the store holds 12 per size, the rerun completes it
    resumed = tmp_path / "resumed.sqlite"
    _run(capsys, path, resumed, "--replicates", "12", "--workers", "1")
    again = _run(capsys, path, resumed, "--workers", "1")
    for other in (two, again):
        assert other["sizing"] == one["sizing"]
        assert other["verdict"] == one["verdict"]
        assert [c["limit_hat"] for c in other["checks"]] == [c["limit_hat"] for c in one["checks"]]


def test_a_budget_too_small_stops_and_says_what_would_reach_the_target(capsys, tmp_path,
                                                                       claim_file, monkeypatch):
    from gapverify.verification.claims import model

    monkeypatch.setitem(model.BUDGETS, "quick", 1e-4)  # reference seconds: the pilot only
    r = _run(capsys, claim_file(), tmp_path / "b.sqlite", "--workers", "1")
    sizing = r["sizing"][0]
    assert sizing["stopped"] == "budget" and sizing["rounds"] == 1
    assert set(sizing["drawn"].values()) == {12}
    assert sizing["needed"] and sizing["needed_seconds"] > 0
    assert r["verdict"] == "not verified: lacks power" and r["exit"] == 3
    assert any("more draws would reach the power target" in u for u in r["unverified"])


def test_a_plan_over_the_budget_is_drawn_in_part_until_the_budget_is_spent(
        capsys, tmp_path, claim_file, monkeypatch):
    """A plan that costs more than the budget left is not dropped: part of it is drawn
    (every size's increment scaled alike), and the run plans again, until the budget is
    spent; the draws never cost more than the budget."""
    from gapverify.verification.claims import model
    from gapverify.verification.running.rounds import _cost, within_budget

    drawn, need, costs = {64: 12, 128: 12}, {64: 112, 128: 52}, {64: 1.0, 128: 2.0}
    step = within_budget(drawn, need, costs, budget=12 * 3.0 + 90.0)  # 180 asked, 90 left
    assert step == {64: 62, 128: 32} and _cost(step, costs) <= 126.0
    assert within_budget(drawn, need, costs, budget=36.0) == drawn  # nothing left

    # reference seconds: the pilot costs 0.43, the target about 2.9 (default budget)
    budget = 1.0
    monkeypatch.setitem(model.BUDGETS, "quick", budget)
    r = _run(capsys, claim_file(), tmp_path / "p.sqlite", "--workers", "1")
    sizing = r["sizing"][0]
    drawn = {int(T): n for T, n in sizing["drawn"].items()}
    spent = sum(n * (1e-9 * T ** 3 + 2e-3) for T, n in drawn.items())  # rounds.job_costs
    assert sizing["rounds"] >= 2 and sum(drawn.values()) > 12 * len(drawn)
    assert spent <= budget
    assert sizing["stopped"] == "budget" and sizing["needed"] and r["exit"] == 3


def test_fixed_replicates_draw_once(capsys, tmp_path, claim_file):
    r = _run(capsys, claim_file(), tmp_path / "c.sqlite", "--replicates", "16", "--workers", "1")
    assert r["sizing"][0]["stopped"] == "fixed"
    assert set(r["sizing"][0]["drawn"].values()) == {16}


def test_calibrate_takes_a_size_grid(capsys, tmp_path, claim_file):
    """``calibrate --sizes``: every seed is run at the grid given (a small or shifted grid,
    issue 38), which the table's title and the JSON name; below the claim's smallest
    profile size (64) its limit check keeps 2 sizes of the 3 its rate needs, so every seed
    reads "outside domain", counted as such and never as a failure."""
    out = tmp_path / "cal.json"
    code = main(["calibrate", "mine.sized", "--claims-from", str(claim_file()), "--seeds", "2",
                 "--sizes", "32,45,64,91", "--store", str(tmp_path / "c.sqlite"),
                 "--json", str(out), "--quiet", "--workers", "1"])
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert code == 0 and doc["sizes"] == [32, 45, 64, 91] and doc["claims"][0]["seeds"] == 2
    assert "at T = 32, 45, 64, 91" in printed.replace("\n", " ")
    assert doc["claims"][0]["failed"] == 0
    assert doc["claims"][0]["not_verified_reasons"] == {"outside domain": 2}


TWO_CASES = CLAIM.format(spread='params["s2"]').replace(
    "profiles=profiles(quick=(64, 256)))]",
    'profiles=profiles(quick=(64, 256)), cases={"quick": ({"s2": 0.001}, {"s2": 0.04})})]')


def test_a_case_that_stops_early_is_judged_while_the_others_sample(capsys, tmp_path,
                                                                    monkeypatch):
    """With a pool, the case that reaches its target at the pilot is judged for good at the
    end of the second round's sweep (``suite._Finals``), not after the last round: the same
    judgement as one worker's, one case after another."""
    from gapverify.verification.running import suite

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    path = tmp_path / "two_cases.py"
    path.write_text(textwrap.dedent(TWO_CASES))
    early = []
    submit = suite._Finals.submit

    def spy(self):
        early.extend(job.case for job in self.ready)
        submit(self)
    monkeypatch.setattr(suite._Finals, "submit", spy)
    one = _run(capsys, path, tmp_path / "one.sqlite", "--workers", "1")
    assert early == []  # one worker: no pool, judged after the rounds
    two = _run(capsys, path, tmp_path / "two.sqlite", "--workers", "2")
    assert early == [0]
    assert one["sizing"][0]["rounds"] == 1 and one["sizing"][1]["rounds"] >= 2
    assert two["sizing"] == one["sizing"] and two["verdict"] == one["verdict"] == "verified"
    strip = ("seconds",)
    assert ([{k: v for k, v in c.items() if k not in strip} for c in two["checks"]]
            == [{k: v for k, v in c.items() if k not in strip} for c in one["checks"]])
