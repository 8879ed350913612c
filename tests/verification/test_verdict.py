"""tests for verification/judging/ (verdict.py, inference.py): the rules accept the truth and
reject wrong limits and wrong rates, on synthetic data with known laws."""
import dataclasses

import numpy as np
import pytest

from gapverify.verification.claims.model import Check, Claim, Prediction, Profile
from gapverify.verification.judging.inference import (
    power_law_fit, two_sided_quantile, weighted_linear_fit,
)
from gapverify.verification.judging.verdict import Variant, claim_verdict, judge_claim

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
    alarms = sum(judge_claim(claim, synthetic_data(s), {}, q=q, root_seed=s,
                             measure=False).verdict == "fail" for s in range(200))
    assert alarms <= 6


def test_unasserted_checks_never_pass_or_fail():
    res = judge_claim(synthetic_claim(asserted=False), synthetic_data(2), {},
                      q=3.0, root_seed=2, variant=Variant(scale=2.0))
    # a prediction measured by recorded checks alone is not verified: nothing could reject it
    assert res.checks[0].verdict == "recorded" and res.verdict == "not verified"
    assert "not judged" in res.unverified[0]


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


# --- finite-size models with an estimated rate, power and domains -------------------------

def edge_claim(rate_range=(2 / 3, 1.0), **check):
    """x_T = L (1 + 0.5 T^-2/3) + noise: the approach of a spectral edge."""
    return Claim(
        id="edge", title="x_T -> L", parameters=("s2",),
        predictions=(Prediction("x", "derived", lambda p: 2 * p["s2"], "x"),),
        checks=(Check("x", "x", "limit", rate_range=rate_range, rate_status="derived", **check),),
        experiment="none", references=(), profiles={"quick": Profile(SIZES, 16, 0.05)})


def edge_data(seed, reps=16, noise=0.02, limit=1.0):
    rng = np.random.default_rng([seed, 7])
    return {T: [{"x": limit * (1 + 0.5 * T ** (-2 / 3)) + noise * T ** (-1 / 3) * rng.standard_normal()}
                for _ in range(reps)] for T in SIZES}


def test_an_asserted_check_without_a_finite_size_model_is_refused():
    with pytest.raises(ValueError, match="consistency-only checks cannot reject"):
        Check("x", "x", "limit")
    with pytest.raises(ValueError, match="rate_range"):
        Check("x", "x", "limit", rate_range=(1.0, 0.5))
    assert Check("x", "x", "limit", asserted=False).asserted is False  # recorded is fine


def test_rate_range_accepts_the_truth_and_rejects_a_few_percent():
    claim, params = edge_claim(), {"s2": 0.5}
    q = two_sided_quantile(0.01, 1)
    data = edge_data(1)
    res = judge_claim(claim, data, params, q=q, root_seed=1, power_target=0.05)
    check = res.checks[0]
    assert res.verdict == "pass", check.reason
    low, high = _accepted(check)
    assert low <= 1.0 <= high
    # the power of a rate-range check is exact: the farther end of the accepted limits
    assert check.power == pytest.approx(max(1 - low, high - 1))
    assert check.power < 0.05
    for scale in (1 + 2 * check.power, 1 - 2 * check.power):
        bad = judge_claim(claim, data, params, q=q, root_seed=1, variant=Variant(scale=scale),
                          power_target=0.05)
        assert bad.verdict == "fail", scale


def _accepted(check):
    """The limits a rate range or model family accepts: its interval, widened to the
    resolution (at least the estimate +- rho)."""
    low, high = check.limit_interval
    rho = check.resolution or 0.0
    return min(low, check.limit_hat - rho), max(high, check.limit_hat + rho)


def test_power_of_a_rated_check_is_measured_on_the_judging_itself():
    """Bisection finds e such that L(1 +- e') is rejected for e' just above e and not
    below (on the side that passes longer)."""
    q = two_sided_quantile(0.01, 2)
    claim, data = synthetic_claim(), synthetic_data(3)
    res = judge_claim(claim, data, {}, q=q, root_seed=3, power_target=0.05)
    e = res.checks[0].power
    assert 0 < e < 0.05
    above = [judge_claim(claim, data, {}, q=q, root_seed=3, variant=Variant(scale=1 + s * e * 1.02),
                         measure=False).verdict for s in (1, -1)]
    assert above == ["fail", "fail"]
    below = [judge_claim(claim, data, {}, q=q, root_seed=3, variant=Variant(scale=1 + s * e * 0.98),
                         measure=False).verdict for s in (1, -1)]
    assert "pass" in below


def test_noisy_data_lack_power_and_the_claim_is_not_verified():
    claim, params = edge_claim(), {"s2": 0.5}
    data = edge_data(2, reps=4, noise=0.5)
    res = judge_claim(claim, data, params, q=3.0, root_seed=2, power_target=0.05)
    assert res.checks[0].verdict == "lacks power"
    assert res.verdict == "not verified"
    assert "x lacks power at T <= 1024" in res.unverified[0]
    assert res.power_summary == "0 of 1 predictions verified with power"
    # the same data judged without a target: a plain pass (what run shows as power)
    assert judge_claim(claim, data, params, q=3.0, root_seed=2).verdict == "pass"


def test_a_check_outside_its_domain_is_not_judged_and_verifies_nothing():
    claim = edge_claim(domain=lambda p: p["s2"] <= 0.5, domain_note="light tails only")
    res = judge_claim(claim, edge_data(3, limit=2.0), {"s2": 1.0}, q=3.0, root_seed=3,
                      power_target=0.05)
    assert res.checks[0].verdict == "outside domain" and res.checks[0].reason == "light tails only"
    assert res.verdict == "not verified" and "not judged (light tails only)" in res.unverified[0]


def test_power_of_a_zero_limit_is_relative_to_its_scale():
    claim = Claim(
        id="zero", title="x -> 0", parameters=(),
        predictions=(Prediction("x", "derived", lambda p: 0, "x"),),
        checks=(Check("x", "x", "limit", rate=0.9, zero_scale=lambda p: 0.5),),
        experiment="none", references=(), profiles={"quick": Profile(SIZES, 16, 0.05)})
    rng = np.random.default_rng(5)
    data = {T: [{"x": rng.standard_normal() / T} for _ in range(16)] for T in SIZES}
    res = judge_claim(claim, data, {}, q=3.0, root_seed=5, power_target=0.05)
    power = res.checks[0].power
    assert res.verdict == "pass" and 0 < power < 0.05
    # x -> 0.5 * 2 power is rejected, x -> 0.5 * power / 2 is not
    wrong = lambda v: dataclasses.replace(claim, predictions=(Prediction("x", "derived", lambda p: v, "x"),))
    assert judge_claim(wrong(0.5 * 2 * power), data, {}, q=3.0, root_seed=5).verdict == "fail"
    assert judge_claim(wrong(0.5 * power / 4), data, {}, q=3.0, root_seed=5).verdict == "pass"


def test_one_prediction_made_wrong_leaves_the_others_alone():
    claim = Claim(
        id="two", title="x -> 2, y -> 2", parameters=(),
        predictions=(Prediction("x", "derived", lambda p: 2, "x"),
                     Prediction("y", "derived", lambda p: 2, "y")),
        checks=(Check("x", "x", "limit", rate=RATE), Check("y", "y", "limit", rate=RATE)),
        experiment="none", references=(), profiles={"quick": Profile(SIZES, 16)})
    data = {T: [{"x": m["x"], "y": m["x"]} for m in reps] for T, reps in synthetic_data(6).items()}
    res = judge_claim(claim, data, {}, q=3.0, root_seed=6, variant=Variant(scales={"y": 1.05}))
    assert [c.verdict for c in res.checks] == ["pass", "fail"]
    assert res.checks[1].predicted == pytest.approx(2.1)


def test_profile_limit_carries_the_rate_uncertainty():
    """With r free, the interval is at least as wide as any fixed-rate fit's inside the range."""
    from gapverify.verification.judging.inference import extrapolate_limit, profile_limit

    T = np.array(SIZES, float)
    mean = 1 + 0.5 * T ** (-0.8)
    se = np.full(T.size, 1e-3)
    prof = profile_limit(T, mean, se, (2 / 3, 1.0), q=3.0)
    assert prof.accepts(1.0) and prof.rates[0] <= 0.8 <= prof.rates[1]
    fixed = extrapolate_limit(T, mean, se, 0.8)
    assert prof.high - prof.low >= 2 * 3.0 * fixed.se_a * 0.999
    # a rate the data exclude cannot rescue a wrong limit
    assert not prof.accepts(1.05)


def _weak_claim():
    # x -> 2 + s2^2/100: s2 x1.25 moves the prediction by about 0.2% at s2 = 0.5 and by
    # about 9% at s2 = 3
    return Claim(
        id="weak", title="x -> 2 + s2^2/100", parameters=("s2",),
        predictions=(Prediction("x", "derived", lambda p: 2 + p["s2"] ** 2 / 100, "x"),),
        checks=(Check("x", "x", "limit", rate=RATE, rate_status="derived"),),
        experiment="none", references=(), profiles={"quick": Profile(SIZES, 16, 0.05)})


def _judge_weak(claim, s2, seed=8):
    rng = np.random.default_rng(seed)
    truth = 2 + s2 ** 2 / 100
    data = {T: [{"x": truth + C / T + 20 * NOISE / T * rng.standard_normal()} for _ in range(16)]
            for T in SIZES}
    return judge_claim(claim, data, {"s2": s2}, q=3.0, root_seed=seed, power_target=0.05)


def test_a_wrong_parameter_inside_the_power_is_a_blind_spot():
    """At s2 = 0.5 alone, s2 x1.25 moves the prediction by less than the power of noisy
    data: the statement at a wrong s2 could not be told apart, so not verified."""
    res = _judge_weak(_weak_claim(), 0.5)
    check = res.checks[0]
    assert check.power <= 0.05 and check.verdict == "pass", check.reason
    moves = {m["direction"]: m["moved"] for m in check.parameter_moves}
    assert 0 < moves["up"] < check.power and 0 < moves["down"] < check.power
    assert res.verdict == "not verified" and "s2 = 0.625 moves the prediction by" in res.unverified[0]


def test_a_wrong_parameter_seen_at_another_case_is_covered():
    """The same claim with a second case at s2 = 3, where x1.25 and x0.8 move the
    prediction by 9% and 7%: the wrong statement fails there, so the claim is verified;
    the case at s2 = 0.5 alone is not."""
    claim = _weak_claim()
    low, high = _judge_weak(claim, 0.5), _judge_weak(claim, 3.0, seed=9)
    verdict, unverified, summary = claim_verdict(claim, low.checks + high.checks, max(SIZES))
    assert verdict == "pass" and not unverified and summary.startswith("1 of 1")
    assert claim_verdict(claim, low.checks, max(SIZES))[0] == "not verified"
    # leaving wrong parameters to the audit: the first case passes alone
    assert claim_verdict(claim, low.checks, max(SIZES), parameter_coverage=False)[0] == "pass"




def _family_claim(models):
    return Claim(
        id="family", title="x_T = 2 + 3/log^2 T",
        predictions=(Prediction("x", "theorem", lambda p: 2, "x"),),
        checks=(Check("x", "x", "limit", models=models, rate_status="derived"),),
        parameters=(), experiment="none", references=(), profiles={"quick": Profile(SIZES, 16)})


def test_a_model_family_check_accepts_the_truth_and_rejects_a_few_percent():
    from gapverify.verification.judging.inference import FiniteSizeModel

    models = (FiniteSizeModel("log", "L + c/(log T + b)^2",
                              lambda T, L, c, b: L + c / (np.log(T) + b) ** 2, (3.0, 0.0)),
              FiniteSizeModel("log, no shift", "L + c/log^2 T",
                              lambda T, L, c: L + c / np.log(T) ** 2, (3.0,)))
    claim = _family_claim(models)
    assert claim.checks[0].minimum_sizes == 4  # the largest member has 3 parameters
    rng = np.random.default_rng(7)
    data = {T: [{"x": LIMIT + C / np.log(T) ** 2 + 0.002 * rng.standard_normal()} for _ in range(16)]
            for T in SIZES}
    q = two_sided_quantile(0.01, 1)
    res = judge_claim(claim, data, {}, q=q, root_seed=1, power_target=0.05)
    check = res.checks[0]
    assert res.verdict == "pass" and check.power_class == "model family", check.reason
    low, high = _accepted(check)
    assert low <= LIMIT <= high and check.power == pytest.approx(max(2 - low, high - 2) / 2)
    for scale in (1 + 2 * check.power, 1 - 2 * check.power):
        bad = judge_claim(claim, data, {}, q=q, root_seed=1, variant=Variant(scale=scale),
                          power_target=0.05)
        assert bad.verdict == "fail", scale


def test_a_model_family_member_that_cannot_be_fitted_leaves_no_power():
    from gapverify.verification.judging.inference import FiniteSizeModel

    # five parameters on five sizes: no degree of freedom, nothing accepted on it
    wide = FiniteSizeModel("too many", "L + ...", lambda T, L, a, b, c, d: L + a / T + b / T**2
                           + c / T**3 + d / T**4, (0.0, 0.0, 0.0, 0.0))
    claim = _family_claim((wide,))
    data = {T: [{"x": LIMIT + C / T + 0.01 * k} for k in range(4)] for T in SIZES}
    res = judge_claim(claim, data, {}, q=3.0, root_seed=1, power_target=0.05)
    assert res.checks[0].verdict == "not assessed"  # 6 sizes needed
    assert res.verdict == "not verified"


def test_a_known_finite_size_mean_is_subtracted_before_the_sizes_pool():
    from gapverify.verification.judging.inference import FiniteSizeModel

    unbiased = (FiniteSizeModel("unbiased", "L", lambda T, L: np.full(np.shape(T), L), ()),)
    bias = lambda p, T: 5.0 / np.log(T)  # known exactly, far from a power of T
    with pytest.raises(ValueError, match="needs 'models'"):
        Check("x", "x", "limit", rate=1.0, correction=bias)
    rng = np.random.default_rng(3)
    data = {T: [{"x": LIMIT + 5.0 / np.log(T) + 0.01 * rng.standard_normal()} for _ in range(16)]
            for T in SIZES}
    q = two_sided_quantile(0.01, 1)
    for correction, verdict in ((bias, "pass"), (None, "fail")):
        claim = _family_claim(unbiased)
        claim = dataclasses.replace(claim, checks=(dataclasses.replace(claim.checks[0],
                                                                       correction=correction),))
        res = judge_claim(claim, data, {}, q=q, root_seed=1, power_target=0.05)
        assert res.checks[0].verdict == verdict, res.checks[0].reason
    assert res.checks[0].corrected is False


def test_a_known_leading_term_is_subtracted_before_a_rate_range_fit():
    # x_T = 2 - 0.76 T^-2/3 + 1.2/T (a Tracy-Widom-like offset below, an O(1/T) term above):
    # the two signs make the local exponent less than 2/3, which L + c T^-r with r in
    # [2/3, 1] cannot follow; with the known T^-2/3 term subtracted the rest is c/T
    offset = lambda p, T: -0.76 * np.asarray(T, dtype=float) ** (-2 / 3)
    rng = np.random.default_rng(5)
    data = {T: [{"x": LIMIT - 0.76 * T ** (-2 / 3) + 1.2 / T + 2e-4 * rng.standard_normal()}
                for _ in range(16)] for T in SIZES}
    q = two_sided_quantile(0.01, 1)
    verdicts = {}
    for correction in (offset, None):
        claim = Claim(
            id="edge", title="x_T -> 2 from below", predictions=(Prediction("x", "derived",
                                                                            lambda p: 2, "x"),),
            checks=(Check("x", "x", "limit", rate_range=(2 / 3, 1.0), rate_status="derived",
                          correction=correction),),
            parameters=(), experiment="none", references=(),
            profiles={"quick": Profile(SIZES, 16)})
        res = judge_claim(claim, data, {}, q=q, root_seed=1, power_target=0.05)
        verdicts[correction is not None] = res.checks[0]
    assert verdicts[True].verdict == "pass" and verdicts[True].corrected, verdicts[True].reason
    assert verdicts[True].reason.startswith("x_T - E_T = L + c T^-r")
    # without it no member of the family fits (p = 8e-16 here; at a larger noise the
    # interval misses 2 instead, as sqrt(T) s_2(A) at s2 = 1/4 did in one standard seed)
    assert verdicts[False].verdict == "fail", verdicts[False].reason


def test_a_check_relative_to_another_prediction_is_judged_against_their_ratio():
    # y = 8 is measured as r = y / x^2 -> 2 (x = 2 measured on its own): a wrong y alone moves
    # the ratio by as much; a wrong x moves both checks
    claim = Claim(
        id="relative", title="x -> 2, y -> 8, r = y/x^2 -> 2",
        predictions=(Prediction("x", "derived", lambda p: 2, "x"),
                     Prediction("y", "derived", lambda p: 8, "y")),
        checks=(Check("x", "x", "limit", rate=RATE, rate_status="derived"),
                Check("y", "r", "limit", rate=RATE, rate_status="derived", relative_to=("x", 2))),
        parameters=(), experiment="none", references=(), profiles={"quick": Profile(SIZES, 16)})
    data = {T: [{**m, "r": m["x"]} for m in reps] for T, reps in synthetic_data(5).items()}
    q = two_sided_quantile(0.01, 4)
    truth = judge_claim(claim, data, {}, q=q, root_seed=1)
    assert truth.verdict == "pass"
    ratio = truth.checks[1]
    assert ratio.label == "y:r" and ratio.predicted == pytest.approx(2.0)
    failed = lambda scales: {c.label for c in judge_claim(
        claim, data, {}, q=q, root_seed=1, variant=Variant(name="w", scales=scales)).failed}
    assert failed({"y": 1.05}) == {"y:r"}
    assert failed({"x": 1.05}) == {"x", "y:r"}
    for bad in (("y", 2), ("x", 0), ("x", 1.5), ("x",)):
        with pytest.raises(ValueError, match="relative_to"):
            Check("y", "r", "limit", rate=RATE, relative_to=bad)


def test_calls_sharing_a_memo_compute_each_prediction_once():
    """``predictions``: the memo that a run's variants and an audit's probes share; the theory
    is evaluated once per claim and parameter set, and ``only`` judges one prediction."""
    calls = []
    claim = dataclasses.replace(synthetic_claim(), predictions=(
        Prediction("x", "derived", lambda p: calls.append(p) or 2, "x"),))
    data, memo = synthetic_data(1), {}
    q = two_sided_quantile(0.01, 2)
    first = judge_claim(claim, data, {}, q=q, root_seed=1, predictions=memo)
    again = judge_claim(claim, data, {}, q=q, root_seed=1, predictions=memo,
                        variant=Variant(name="wrong", scale=1.03))
    assert len(calls) == 1 and list(memo) == [("synthetic", ())]
    assert (first.verdict, again.verdict) == ("pass", "fail")
    assert judge_claim(claim, data, {}, q=q, root_seed=1, only=("y",)).checks == []
