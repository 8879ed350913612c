"""tests for verification/tools/audit.py: every prediction, made wrong on its own (limit +-e,
a wrong parameter, a faster rate), is rejected by the samples of the true one; the audit
fails for predictions whose checks cannot detect a wrong value."""
import dataclasses
import json

import numpy as np
import pytest

from gapverify import cli
from gapverify.verification.claims import registry
from gapverify.verification.tools.audit import (
    AuditOptions, audit, audit_claim, plan, probes, wrong_values,
)
from gapverify.verification.claims.model import Check, Claim, Prediction, Profile
from gapverify.verification.judging.inference import two_sided_quantile
from gapverify.verification.running.store import Store
from gapverify.verification.running.suite import RunOptions, verify
from gapverify.verification.judging.verdict import power_class

SIZES, REPS = (64, 128, 256, 512), 8
SMALL = ["--sizes", ",".join(map(str, SIZES)), "--replicates", str(REPS), "--workers", "1",
         "--quiet"]


def main(argv):
    """``gapverify`` in-process."""
    return cli.main(argv)


@pytest.fixture(scope="module")
def report(quick_store):
    """The quick audit of three claims on the shared quick samples (no resampling)."""
    opts = AuditOptions(claims=["softmax.kappa", "markov.outliers", "gradient.value_frobenius"],
                        workers=1)
    return audit(opts, Store(quick_store[0]))


def _prediction(report, claim, name, case=None):
    for a in report.claims:
        if a.claim == claim and (case is None or all(a.parameters[k] == v for k, v in case.items())):
            for p in a.predictions:
                if p.prediction == name:
                    return p
    raise KeyError((claim, name))


# --- the real claims, quick profile -----------------------------------------------------------

@pytest.mark.slow
def test_true_statements_are_verified_and_wrong_ones_rejected(report):
    assert report.perturbation == 0.05
    for a in report.claims:
        assert a.truth == "pass", (a.name, a.truth_note)
    kappa = _prediction(report, "softmax.kappa", "kappa", {"s2": 0.25})
    outcomes = {o.variant: o.outcome for o in kappa.outcomes}
    assert outcomes["kappa x1.05"] == outcomes["kappa x0.95"] == "rejected"
    assert outcomes["kappa @ s2 x1.25"] == outcomes["kappa @ s2 x0.8"] == "rejected"
    assert outcomes["kappa rate +0.5"] == "rejected"
    assert outcomes["kappa @ mu x1.25"] == "not applicable"  # kappa is free of mu


@pytest.mark.slow
def test_parameter_dependence_of_the_gradients_is_rejected(report):
    """sigma_V, gamma, depth and s2 each move the fixed gradient's constant: every x1.25
    and x0.8 variant is rejected; the identities do not depend on any parameter."""
    grad = _prediction(report, "gradient.value_frobenius", "grad_fix_over_T", {"depth": 2})
    by = {o.variant: o for o in grad.outcomes}
    for par in ("sigma_V", "gamma", "s2"):
        for f in ("x1.25", "x0.8"):
            name = f"grad_fix_over_T @ {par} {f}"
            if name in by:
                assert by[name].outcome == "rejected", by[name]
    assert by["grad_fix_over_T @ depth x1.5"].outcome == "rejected"  # depth 2 -> 3
    identity = _prediction(report, "gradient.value_frobenius", "identity_first", {"depth": 2})
    assert all(o.outcome == "rejected" for o in identity.outcomes if o.role == "limit")
    assert all(o.outcome == "not applicable" for o in identity.outcomes if o.role == "parameter")
    # the identities are unbiased at every T (E_W exact given A): no stated rate to shift
    exact = _prediction(report, "gradient.value_frobenius", "identity_first", {"depth": 1})
    assert [o.outcome for o in exact.outcomes if o.role == "rate"] == []


@pytest.mark.slow
def test_edge_outside_its_domain_is_audited_where_it_is_judged(report):
    s2_quarter = _prediction(report, "markov.outliers", "sqrtT_s2", {"s2": 0.25})
    assert s2_quarter.judged and all(o.ok for o in s2_quarter.outcomes)
    assert report.unjudged == []


@pytest.mark.slow
def test_audit_shares_samples_and_quantile_with_run(quick_store):
    store = Store(quick_store[0])
    before = store.count()
    rep = audit(AuditOptions(claims=["softmax.kappa"], workers=1), store)
    assert store.count() == before  # nothing resampled
    (result,) = verify(RunOptions(claims=["softmax.kappa"], profile="quick", workers=1), store)
    assert all(a.q == pytest.approx(result.q) for a in rep.claims)


def test_cli_exit_and_json(tmp_path, capsys):
    out_json = tmp_path / "audit.json"
    code = main(["audit", "softmax.kappa", *SMALL, "--store", str(tmp_path / "s.sqlite"),
                 "--json", str(out_json)])
    out = capsys.readouterr().out
    doc = json.loads(out_json.read_text())
    assert code == (0 if doc["ok"] else 1), out
    assert "per claim" in out and "Bonferroni" in out and "x1.25 and x0.8" in out
    assert doc["perturbation"] == 0.05 and doc["rate_shift"] == 0.5
    assert doc["parameter_factors"] == [1.25, 0.8]
    variants = {o["variant"] for c in doc["claims"] for p in c["predictions"] for o in p["outcomes"]}
    assert {"kappa x1.05", "kappa x0.95", "kappa @ s2 x1.25", "kappa @ s2 x0.8",
            "kappa rate +0.5"} <= variants


def _inject(monkeypatch, **check_changes):
    claim = registry.get_claim("softmax.kappa")
    broken = dataclasses.replace(
        claim, checks=tuple(dataclasses.replace(c, **check_changes) for c in claim.checks))
    monkeypatch.setitem(registry.CLAIMS, "softmax.kappa", broken)


def test_recorded_only_prediction_fails_the_audit(monkeypatch, tmp_path, capsys):
    _inject(monkeypatch, asserted=False)
    code = main(["audit", "softmax.kappa", *SMALL, "--store", str(tmp_path / "s.sqlite")])
    out = " ".join(capsys.readouterr().out.split())  # the terminal's width wraps anywhere
    assert code == 1, out
    assert "softmax.kappa" in out and "FAILED" in out and "judged at no case" in out
    assert "recorded only" in out


@pytest.mark.parametrize("argv", [
    ["audit", "no.such.claim"],
    ["audit", "softmax.kappa", "--profile", "huge"],
    ["audit", "softmax.kappa", "--replicates", "1"],
    ["audit", "softmax.kappa", "--sizes", "8,16"],
    ["audit", "softmax.kappa", "--level", "2"],
])
def test_bad_input_exits_2(argv, tmp_path):
    assert main([*argv, "--store", str(tmp_path / "s.sqlite")]) == 2


# --- the policy on synthetic data (no sampling) ----------------------------------------------

def _toy_claim(y_model=None) -> Claim:
    """x -> 2 (rated, independent of gamma); y -> 1 + gamma (rate range by default)."""
    y_model = y_model or {"rate_range": (0.5, 1.0)}
    return Claim(
        id="toy.claim", title="toy", parameters=("s2", "gamma"), experiment="none",
        predictions=(Prediction("x", "derived", lambda p: 2 * p["s2"] / p["s2"], "x"),
                     Prediction("y", "derived", lambda p: 1 + p["gamma"], "y")),
        checks=(Check("x", "x", "limit", rate=1.0), Check("y", "y", "limit", **y_model)),
        references=(), profiles={"quick": Profile((64,), 2, 0.05)})


def _toy_data(seed=0, y_noise=0.002):
    rng = np.random.default_rng(seed)
    sizes = (64, 128, 256, 512, 1024)
    return {T: [{"x": 2 + 1 / T + 0.05 * rng.standard_normal() / T,
                 "y": 2 + 0.3 / np.sqrt(T) + y_noise * rng.standard_normal()}
                for _ in range(8)] for T in sizes}


def test_every_variant_of_every_prediction_is_judged():
    claim, data = _toy_claim(), _toy_data()
    params = claim.resolve({})
    result = audit_claim(claim, data, params, q=3.0, root_seed=0, eps=0.05)
    assert result.truth == "pass" and result.ok
    out = {o.variant: o for p in result.predictions for o in p.outcomes}
    assert out["x x1.05"].outcome == out["x x0.95"].outcome == "rejected"
    assert out["y x1.05"].outcome == out["y x0.95"].outcome == "rejected"
    assert out["x rate +0.5"].outcome == "rejected"
    assert "y rate +0.5" not in out  # a rate-range check states no rate
    assert out["x @ gamma x0.8"].outcome == "not applicable"  # x is free of gamma
    assert out["y @ gamma x0.8"].outcome == "rejected"
    assert out["y @ s2 x1.25"].outcome == out["y @ s2 x0.8"].outcome == "not applicable"
    assert "y @ gamma x1.25" not in out  # gamma = 1.25 is outside (0, 1]
    assert all(p.powers for p in result.predictions)


def test_a_prediction_that_cannot_tell_a_wrong_parameter_fails():
    claim = _toy_claim({"rate": 0.5})
    data = _toy_data(1, y_noise=2.0)  # y so noisy that 1 + gamma and 1 + 0.8 gamma look alike
    result = audit_claim(claim, data, claim.resolve({}), q=3.0, root_seed=0, eps=0.05)
    out = {o.variant: o for p in result.predictions for o in p.outcomes}
    assert out["y @ gamma x0.8"].outcome == "NOT REJECTED"
    assert not result.ok and result.verdict == "FAILED"


def test_empirical_predictions_are_reported_but_never_fail_the_audit():
    claim = _toy_claim({"rate": 0.5})
    claim = dataclasses.replace(claim, predictions=(
        claim.predictions[0], dataclasses.replace(claim.predictions[1], status="empirical")))
    result = audit_claim(claim, _toy_data(1, y_noise=2.0), claim.resolve({}), q=3.0,
                         root_seed=0, eps=0.05)
    y = next(p for p in result.predictions if p.prediction == "y")
    assert any(o.outcome == "NOT REJECTED" for o in y.outcomes) and y.ok


def test_a_false_statement_fails_the_audit():
    claim, data = _toy_claim(), _toy_data()
    shifted = {T: [{"x": m["x"] * 1.1, "y": m["y"]} for m in reps] for T, reps in data.items()}
    result = audit_claim(claim, shifted, claim.resolve({}), q=3.0, root_seed=0, eps=0.05)
    assert result.truth == "fail" and not result.ok


def test_probes_make_one_prediction_wrong_at_a_time():
    claim = _toy_claim()
    names = [p.variant.name for p in probes(claim, claim.resolve({}), 0.03)]
    assert names == ["x x1.03", "x x0.97", "x @ s2 x1.25", "x @ s2 x0.8", "x @ gamma x0.8",
                     "x rate +0.5", "y x1.03", "y x0.97", "y @ s2 x1.25", "y @ s2 x0.8",
                     "y @ gamma x0.8"]
    for p in probes(claim, claim.resolve({}), 0.03):
        touched = set(p.variant.scales) | set(p.variant.prediction_parameters) | set(p.variant.rate_shifts)
        assert touched == {p.prediction}


def test_wrong_values_stay_in_the_domain():
    assert wrong_values("s2", 0.8) == [pytest.approx(1.0), pytest.approx(0.64)]
    assert wrong_values("gamma", 1.0) == [pytest.approx(0.8)]  # 1.25 is outside (0, 1]
    assert wrong_values("depth", 1) == [2]  # 0 is outside
    assert wrong_values("depth", 2) == [3, 1]
    assert wrong_values("mu", 0.0) == [pytest.approx(0.25), pytest.approx(-0.2)]


def test_power_classes():
    assert power_class(Check("a", "a", "exact", tolerance=0.0)) == "exact"
    assert power_class(Check("a", "a", "matching", tolerance=0.0)) == "exact"
    assert power_class(Check("a", "a", "limit", rate=1.0)) == "rated"
    assert power_class(Check("a", "a", "limit", rate_range=(0.5, 1.0))) == "rate range"
    assert power_class(Check("a", "a", "limit", rate=1.0, asserted=False)) == "recorded"
    edge = Check("a", "a", "limit", rate=1.0, domain=lambda p: p["s2"] <= 0.5)
    assert power_class(edge, {"s2": 1.0}) == "outside domain"


def test_plan_has_one_quantile_per_claim():
    """A claim's family is its own tests across its cases: q does not depend on the
    other claims in the run."""
    alone = plan(AuditOptions(claims=["markov.outliers"]))
    together = plan(AuditOptions(claims=["markov.outliers", "width.stable_rank", "kq.attention"]))
    assert alone.q["markov.outliers"] == together.q["markov.outliers"]
    assert alone.q["markov.outliers"] == pytest.approx(
        two_sided_quantile(0.01, alone.tests["markov.outliers"]))


def test_an_empirical_claim_with_recorded_checks_only_does_not_fail_the_audit():
    """heavy_tail.edge: measured and shown, nothing asserted, nothing a verdict needs."""
    claim = Claim(id="toy.empirical", title="toy", parameters=("s2",), experiment="none",
                  predictions=(Prediction("x", "empirical", lambda p: 2, "x"),),
                  checks=(Check("x", "x", "limit", asserted=False, record_note="shown only"),),
                  references=(), profiles={"quick": Profile((64,), 2, 0.05)})
    result = audit_claim(claim, _toy_data(), claim.resolve({}), q=3.0, root_seed=0, eps=0.05)
    assert result.truth == "recorded" and result.ok
