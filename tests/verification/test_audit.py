"""tests for verification/audit.py: the power audit rejects wrong statements, passes the
true one, and fails for claims whose checks cannot detect anything."""
import dataclasses
import json

import numpy as np
import pytest

from verification import cli, registry
from verification.audit import (
    AuditOptions,
    audit,
    audit_claim,
    exposed_checks,
    plan,
    power_class,
    probes,
    wrong_value,
)
from verification.claims import Check, Claim, Prediction, Profile
from verification.inference import two_sided_quantile
from verification.store import Store
from verification.suite import RunOptions, verify
from verification.verdict import Variant, count_tests

CLAIMS = ("softmax.kappa", "markov.outliers")
SIZES, REPS = (64, 128, 256, 512), 8
SMALL = ["--sizes", ",".join(map(str, SIZES)), "--replicates", str(REPS), "--workers", "1",
         "--quiet"]


def main(argv):
    """``gapverify`` in-process (``cli._load_extensions`` re-appends its hooks per call)."""
    cli._EXTRA_COMMANDS.clear()
    return cli.main(argv)


@pytest.fixture(autouse=True)
def _own_extension_list(monkeypatch):
    monkeypatch.setattr(cli, "_EXTRA_COMMANDS", [])


@pytest.fixture(scope="module")
def report():
    """The quick audit of two claims at their quick profiles (the power the suite claims)."""
    opts = AuditOptions(claims=list(CLAIMS), workers=2)
    return audit(opts, Store(":memory:"))


def _outcomes(report, claim):
    (a,) = [a for a in report.claims if a.claim == claim]
    return {o.variant: o for o in a.outcomes}


# --- the real claims, small sizes -----------------------------------------------------------

@pytest.mark.parametrize("claim", CLAIMS)
def test_true_statement_passes(report, claim):
    assert _outcomes(report, claim)["as stated"].outcome == "passes"


@pytest.mark.parametrize("claim", CLAIMS)
@pytest.mark.parametrize("variant", ["limit x1.03", "limit x0.97"])
def test_three_percent_off_is_rejected(report, claim, variant):
    o = _outcomes(report, claim)[variant]
    assert o.outcome == "rejected", o
    assert o.rejected_by


def test_faster_rate_is_rejected_for_rated_claims(report):
    for claim in CLAIMS:
        o = _outcomes(report, claim)["rate +0.5"]
        assert o.outcome == "rejected", o
    assert any(r.startswith("s1 ") for r in _outcomes(report, "markov.outliers")["rate +0.5"].rejected_by)


def test_parameter_variants(report):
    kappa = _outcomes(report, "softmax.kappa")
    assert kappa["s2 x1.25"].outcome == "rejected"
    assert kappa["mu x1.25"].outcome == "not applicable"  # kappa is free of mu
    outliers = _outcomes(report, "markov.outliers")
    # s2 moves only the consistency-only edges (lambda1 = 1 and s1 -> 1 do not depend on s2)
    assert set(outliers["s2 x1.25"].exposed) == {"sqrtT_s2", "sqrtT_lambda2"}
    assert outliers["s2 x1.25"].outcome in ("rejected", "no power")
    assert outliers["s2 x1.25"].ok


def test_audit_passes_and_states_the_family_wise_level(report):
    assert report.ok
    claims = [registry.get_claim(c) for c in CLAIMS]
    tests = count_tests(claims, {c.id: len(c.profiles["quick"].sizes) for c in claims})
    assert report.tests == tests
    assert report.q == pytest.approx(two_sided_quantile(0.01, tests))


def test_samples_and_quantile_are_shared_with_run(tmp_path):
    store = Store(tmp_path / "shared.sqlite")
    opts = AuditOptions(claims=["softmax.kappa"], sizes=SIZES, replicates=REPS, workers=1)
    rep = audit(opts, store)
    stored = store.count()
    assert stored == len(SIZES) * REPS
    (result,) = verify(RunOptions(claims=["softmax.kappa"], profile="quick", sizes=SIZES,
                                  replicates=REPS, workers=1), store)
    assert store.count() == stored  # the run sampled nothing new
    assert result.q == pytest.approx(rep.q)
    assert result.verdict == "pass"


def test_cli_exit_0_and_json(tmp_path, capsys):
    out_json = tmp_path / "audit.json"
    code = main(["audit", "softmax.kappa", *SMALL, "--store", str(tmp_path / "s.sqlite"),
                 "--json", str(out_json)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "Family-wise false-alarm level 0.01" in out and "Bonferroni" in out
    assert "limit x1.03" in out and "rejected" in out
    doc = json.loads(out_json.read_text())
    assert doc["ok"] and doc["perturbation"] == 0.03 and doc["rate_shift"] == 0.5
    outcomes = {o["variant"]: o["outcome"] for o in doc["claims"][0]["outcomes"]}
    assert outcomes["as stated"] == "passes" and outcomes["limit x0.97"] == "rejected"


def _inject(monkeypatch, **check_changes):
    claim = registry.get_claim("softmax.kappa")
    broken = dataclasses.replace(
        claim, checks=tuple(dataclasses.replace(c, **check_changes) for c in claim.checks))
    monkeypatch.setitem(registry.CLAIMS, "softmax.kappa", broken)


@pytest.mark.parametrize("changes", [{"asserted": False}, {"rate": None}],
                         ids=["recorded-only", "consistency-only"])
def test_claim_that_cannot_detect_anything_fails_the_audit(monkeypatch, tmp_path, capsys, changes):
    _inject(monkeypatch, **changes)
    code = main(["audit", "softmax.kappa", *SMALL, "--store", str(tmp_path / "s.sqlite")])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "NOT REJECTED" in out and "softmax.kappa: FAILED" in out


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

def _toy_claim(y_rate=None) -> Claim:
    """x -> 2 (rated, independent of gamma); y -> 1 + gamma (consistency only by default)."""
    return Claim(
        id="toy.claim", title="toy", parameters=("s2", "gamma"), experiment="none",
        predictions=(Prediction("x", "derived", lambda p: 2 * p["s2"] / p["s2"], "x"),
                     Prediction("y", "derived", lambda p: 1 + p["gamma"], "y")),
        checks=(Check("x", "x", "limit", rate=1.0), Check("y", "y", "limit", rate=y_rate)),
        references=(), profiles={"quick": Profile((64,), 2)})


def _toy_data(seed=0):
    rng = np.random.default_rng(seed)
    sizes = (64, 128, 256, 512, 1024)
    return {T: [{"x": 2 + 1 / T + 0.05 * rng.standard_normal() / T,
                 "y": 2 + 0.3 / np.sqrt(T) + 0.002 * rng.standard_normal()}
                for _ in range(8)] for T in sizes}


def test_parameter_seen_only_by_consistency_checks_is_no_power_not_failure():
    claim, data = _toy_claim(), _toy_data()
    params = claim.resolve({})
    result = audit_claim(claim, data, params, q=3.0, root_seed=0)
    out = {o.variant: o for o in result.outcomes}
    assert out["as stated"].outcome == "passes"
    assert out["limit x1.03"].outcome == "rejected"
    assert out["rate +0.5"].outcome == "rejected"
    assert out["s2 x1.25"].outcome == "not applicable"  # x and y are free of s2
    assert out["gamma x0.8"].outcome == "no power" and out["gamma x0.8"].exposed == ["y"]
    assert result.ok and result.verdict == "powered, with gaps"
    # a consistency check has power on one side only: y approaches 1 + gamma from above,
    # so a limit 3% too high is seen (the error grows with T), one 3% too low is not
    assert "y (consistency)" in out["limit x1.03"].rejected_by
    assert "y (consistency)" not in out["limit x0.97"].rejected_by
    strict = audit_claim(claim, data, params, q=3.0, root_seed=0, strict=True)
    assert not strict.ok


def test_rated_check_that_misses_a_parameter_variant_fails():
    claim = _toy_claim(y_rate=0.5)
    rng = np.random.default_rng(1)
    # y so noisy that 1 + gamma cannot be told from 1 + 0.8 gamma
    data = {T: [{"x": 2 + 1 / T + 0.05 * rng.standard_normal() / T,
                 "y": 2 + 5 * rng.standard_normal() / np.sqrt(T)} for _ in range(4)]
            for T in (64, 128, 256, 512)}
    result = audit_claim(claim, data, claim.resolve({}), q=3.0, root_seed=0)
    out = {o.variant: o for o in result.outcomes}
    assert out["gamma x0.8"].outcome == "NOT REJECTED"
    assert not result.ok and result.verdict == "FAILED"


def test_false_statement_fails_the_audit():
    claim, data = _toy_claim(), _toy_data()
    shifted = {T: [{"x": m["x"] * 1.1, "y": m["y"]} for m in reps] for T, reps in data.items()}
    result = audit_claim(claim, shifted, claim.resolve({}), q=3.0, root_seed=0)
    assert result.outcomes[0].outcome == "REJECTED" and not result.ok


def test_variants_and_exposure():
    claim = _toy_claim()
    params = claim.resolve({})
    names = [p.variant.name for p in probes(claim, params)]
    assert names == ["as stated", "limit x1.03", "limit x0.97", "s2 x1.25", "gamma x0.8",
                     "rate +0.5"]
    assert [c.label for c in exposed_checks(claim, params, Variant(rate_shift=0.5))] == ["x"]
    assert [c.label for c in exposed_checks(claim, params, Variant(scale=1.03))] == ["x", "y"]
    no_rate = dataclasses.replace(claim, checks=(Check("x", "x", "limit"),))
    assert "rate +0.5" not in [p.variant.name for p in probes(no_rate, params)]


def test_wrong_values_stay_in_the_domain():
    assert wrong_value("s2", 0.8) == pytest.approx(1.0)
    assert wrong_value("gamma", 1.0) == pytest.approx(0.8)  # 1.25 is outside (0, 1]
    assert wrong_value("gamma", 0.5) == pytest.approx(0.625)
    assert wrong_value("depth", 1) == 2 and wrong_value("depth", 2) == 3
    assert wrong_value("mu", 0.0) == pytest.approx(0.25)


def test_power_classes():
    assert power_class(Check("a", "a", "exact")) == "exact"
    assert power_class(Check("a", "a", "matching")) == "exact"
    assert power_class(Check("a", "a", "limit", rate=1.0)) == "rated"
    assert power_class(Check("a", "a", "limit")) == "consistency"
    assert power_class(Check("a", "a", "limit", rate=1.0, asserted=False)) == "recorded"


def test_plan_matches_the_run_for_claims_with_cases():
    """Claims that sweep several parameter cases are audited per case, and counted per
    case in the Bonferroni divisor, as ``verify`` does."""
    with_cases = [c for c in registry.CLAIMS.values() if getattr(c, "cases", None)]
    if not with_cases:
        pytest.skip("no registered claim sweeps cases")
    claim = with_cases[0]
    claims, profiles, cases, tests, q = plan(AuditOptions(claims=[claim.id]))
    n = len(claim.cases_for("quick"))
    assert len(cases[claim.id]) == n
    assert tests == n * count_tests([claim], {claim.id: len(profiles[claim.id].sizes)})
