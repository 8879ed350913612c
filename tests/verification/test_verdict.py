"""tests for verification/verdict.py and inference.py: the rules accept the truth and
reject wrong limits and wrong rates, on synthetic data with known laws."""
import math

import numpy as np
import pytest

from verification.claims import Check, Claim, Prediction, Profile
from verification.inference import power_law_fit, two_sided_quantile, weighted_linear_fit
from verification.verdict import Variant, judge_claim

SIZES = (64, 128, 256, 512, 1024)
RATE, LIMIT, C, NOISE = 1.0, 2.0, 3.0, 0.5


def synthetic_claim(rate=RATE, asserted=True):
    return Claim(
        id="synthetic", title="x_T = 2 + 3/T + noise/T",
        predictions=(Prediction("x", "derived", lambda p: 2, "x"),),
        checks=(Check("x", "x", "limit", rate=rate, rate_status="derived", asserted=asserted),),
        parameters=(), experiment="none", references=(), profiles={"quick": Profile(SIZES, 16)})


def synthetic_data(seed, reps=16):
    rng = np.random.default_rng([seed, 99])
    # x_T = L + C T^-1 + NOISE T^-1 z: error decays exactly like 1/T
    return {T: [{"x": LIMIT + C / T + NOISE / T * rng.standard_normal()} for _ in range(reps)]
            for T in SIZES}


def test_weighted_fit_recovers_a_line():
    x = np.linspace(0, 1, 6)
    fit = weighted_linear_fit(x, 1 + 2 * x, np.full(6, 0.1))
    assert fit.a == pytest.approx(1) and fit.b == pytest.approx(2) and fit.birge == 1.0


def test_power_law_fit_recovers_the_exponent():
    T = np.array(SIZES, float)
    fit = power_law_fit(T, 5 * T**-0.75, 0.01 * 5 * T**-0.75)
    assert -fit.b == pytest.approx(0.75, abs=1e-10)


def test_birge_ratio_inflates_errors_under_misfit():
    x = np.linspace(0, 1, 8)
    fit = weighted_linear_fit(x, x**2, np.full(8, 1e-3))
    assert fit.birge > 10


def test_truth_passes_and_wrong_statements_fail():
    q = two_sided_quantile(0.01, 2)
    data = synthetic_data(1)
    claim = synthetic_claim()
    assert judge_claim(claim, data, {}, q=q, root_seed=1).verdict == "pass"
    for scale in (1.03, 0.97):
        res = judge_claim(claim, data, {}, q=q, root_seed=1, variant=Variant(scale=scale))
        assert res.verdict == "fail", scale
        assert res.checks[0].failing_size is not None
    res = judge_claim(claim, data, {}, q=q, root_seed=1, variant=Variant(rate_shift=0.5))
    assert res.verdict == "fail" and "slower than the stated rate 1.5" in res.checks[0].reason


def test_false_alarm_rate_is_controlled():
    """200 synthetic runs of a true statement at level 1%: at most a few false alarms
    (binomial(200, 0.01): P(X >= 7) < 0.001)."""
    q = two_sided_quantile(0.01, 2)
    claim = synthetic_claim()
    alarms = sum(judge_claim(claim, synthetic_data(s), {}, q=q, root_seed=s).verdict == "fail"
                 for s in range(200))
    assert alarms <= 6


def test_unasserted_checks_never_pass_or_fail():
    res = judge_claim(synthetic_claim(asserted=False), synthetic_data(2), {},
                      q=3.0, root_seed=2, variant=Variant(scale=2.0))
    assert res.checks[0].verdict == "recorded" and res.verdict == "not assessed"


def test_bonferroni_quantile():
    assert two_sided_quantile(0.05, 1) == pytest.approx(1.959963984540054)
    assert two_sided_quantile(0.01, 10) > two_sided_quantile(0.01, 1)
    with pytest.raises(ValueError, match="'level'"):
        two_sided_quantile(1.5, 1)


def test_sizes_at_round_off_carry_no_rate():
    """x_T - L ~ T^-7 reaches double precision by T ~ 128: those sizes are dropped from
    the fit, and a statistic at round-off from the second size on is exact there."""
    claim = synthetic_claim(rate=6.85)
    rng = np.random.default_rng(4)
    data = {T: [{"x": LIMIT + (LIMIT * 1e-3 * (64 / T) ** 7 if T <= 128 else 0.0)
                 + LIMIT * 2e-16 * rng.standard_normal()} for _ in range(8)] for T in SIZES}
    res = judge_claim(claim, data, {}, q=3.0, root_seed=0)
    assert res.verdict == "pass" and "round-off" in res.checks[0].reason
    # a wrong limit is still rejected: the errors are then far above round-off
    bad = judge_claim(claim, data, {}, q=3.0, root_seed=0, variant=Variant(scale=1.03))
    assert bad.verdict == "fail"
