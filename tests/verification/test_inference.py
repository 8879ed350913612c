"""tests for verification/judging/inference.py and the judging of checks.py: standard errors
from few replicates are judged with Student-t quantiles, and a finite-size model the
measurements contradict fails its check instead of widening its interval (synthetic
per-size data with known laws, no matrices sampled)."""
import math

import numpy as np
import pytest
from scipy import stats

from gapverify.verification.claims.model import Check, Claim, Prediction, Profile
from gapverify.verification.claims.registry._common import ONE_OVER_T, ONE_OVER_T_SERIES, UNBIASED
from gapverify.verification.judging.inference import (
    family_limit, fit_p_value, student_quantile, per_test_level, two_sided_quantile, welch_dof,
    weighted_linear_fit,
)
from gapverify.verification.judging.verdict import judge_claim

SIZES = (64, 91, 128, 181, 256, 362, 512)
#: the finite-size model of a check, as the registry states them (stated rate, rate range,
#: each model family, the pooled unbiased mean)
MODELS = {
    "stated rate": dict(rate=1.0),
    "rate range": dict(rate_range=(2 / 3, 1.0)),
    "L + c/T": dict(models=ONE_OVER_T),
    "L + c/T + e/T^2": dict(models=ONE_OVER_T_SERIES),
    "unbiased": dict(models=UNBIASED),
}


def one_check_claim(predicted=1.0, **model):
    return Claim(id="synthetic", title="x_T -> L",
                 predictions=(Prediction("x", "theorem", lambda p: predicted, "x"),),
                 checks=(Check("x", "x", "limit", rate_status="derived", **model),),
                 parameters=(), experiment="none", references=(),
                 profiles={"quick": Profile(SIZES, 16, 0.05)})


def replicates(means, rel_sd, reps, seed):
    """``reps`` normal replicates about each size's mean, relative sd ``rel_sd``."""
    rng = np.random.default_rng([seed, 17])
    return {T: [{"x": float(m * (1 + rel_sd * rng.standard_normal()))} for _ in range(reps)]
            for T, m in zip(SIZES, means)}


# --- task: few replicates -----------------------------------------------------------------

def test_the_quantile_grows_as_the_degrees_of_freedom_shrink():
    q = two_sided_quantile(0.01, 8)
    ts = [student_quantile(q, d) for d in (1, 2, 4, 7, 11, 47, 1000)]
    assert all(a > b for a, b in zip(ts, ts[1:]))
    assert ts[0] == pytest.approx(stats.t.isf(0.01 / 16, 1))  # 509 at 2 replicates
    assert student_quantile(q, math.inf) == q
    assert student_quantile(q, 1e7) == pytest.approx(q, rel=1e-5)
    assert student_quantile(q, 0) == math.inf  # one replicate: no error to judge with
    assert per_test_level(q) == pytest.approx(0.01 / 8)


def test_welch_dof_lies_between_one_size_and_all_of_them():
    c, se, n = np.array([0.5, -0.2, 1.0]), np.array([1.0, 2.0, 0.5]), np.array([4, 4, 4])
    nu = welch_dof(c, se, n)
    assert 3 <= nu <= 9
    assert welch_dof(np.array([1.0, 0, 0]), se, n) == pytest.approx(3)  # one size alone
    assert welch_dof(np.ones(3), np.ones(3), n) == pytest.approx(9)  # equal shares: the sum
    assert welch_dof(c, se, None) == math.inf


def test_a_fit_reports_its_degrees_of_freedom_and_goodness_of_fit():
    x = np.linspace(0, 1, 6)
    fit = weighted_linear_fit(x, 1 + 2 * x, np.full(6, 0.1), n=np.full(6, 3))
    assert 2 <= fit.dof_a <= 12 and fit.p_fit == pytest.approx(1.0)
    bent = weighted_linear_fit(x, 10 * x**2, np.full(6, 1e-3), n=np.full(6, 40))
    assert bent.p_fit < 1e-6
    # estimated variances: the misfit is referred to F, whose tail is heavier than chi^2's
    assert fit_p_value(30.0, 4, 3) > fit_p_value(30.0, 4, math.inf)


def test_two_replicates_lack_power_instead_of_failing():
    """The reported failure: two replicates, a per-size standard error 14 times too small
    by chance at the largest size, and a normal quantile read a true rate as too slow."""
    claim = one_check_claim(**MODELS["stated rate"])
    rng = np.random.default_rng(3)
    # x_T = 1 + 0.3/T, replicate sd 0.01/sqrt(T): a true statement
    fails = sum(judge_claim(claim, {T: [{"x": 1 + 0.3 / T + 0.01 / math.sqrt(T) * rng.standard_normal()}
                                        for _ in range(2)] for T in SIZES},
                            {}, q=two_sided_quantile(0.01, 3), root_seed=s, measure=False).verdict == "fail"
                for s in range(40))
    assert fails <= 2


@pytest.mark.slow
def test_false_failures_at_two_replicates_stay_within_the_level():
    """A true statement (x_T = 2 + 3/T, normal replicates) judged by a stated rate and by a
    model family at 2 replicates, 300 draws each, level 1% (tests counted as they will
    be: rate, limit and fit; limit and fit): binomial(300, 0.01) exceeds 8 with
    probability 0.004, so more than 8 failures is a miscalibrated judge."""
    for model, tests in (("stated rate", 3), ("L + c/T + e/T^2", 2), ("unbiased", 2)):
        claim = one_check_claim(predicted=2.0, **MODELS[model])
        q = two_sided_quantile(0.01, tests)
        fails = 0
        for s in range(300):
            rng = np.random.default_rng([s, 2])
            mean = (lambda T: 2.0) if model == "unbiased" else (lambda T: 2 + 3 / T)
            data = {T: [{"x": mean(T) + 0.5 / math.sqrt(T) * rng.standard_normal()} for _ in range(2)]
                    for T in SIZES}
            fails += judge_claim(claim, data, {}, q=q, root_seed=s, measure=False).verdict == "fail"
        assert fails <= 8, (model, fails)


# --- task: gross errors fail --------------------------------------------------------------

@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("factor", [10.0, 1000.0])
@pytest.mark.parametrize("shape", ["flat", "growing"])
def test_a_statistic_orders_of_magnitude_off_fails(model, factor, shape):
    """x_T at 10x and 1000x the prediction 1, flat in T or growing like T^2 (a
    numerics error such as ||M||_F^2/s_1 for ||M||_F^2/s_1^2): failed, whatever the model."""
    T = np.array(SIZES, dtype=float)
    means = factor * (np.ones_like(T) if shape == "flat" else (T / T[-1]) ** 2)
    res = judge_claim(one_check_claim(**MODELS[model]), replicates(means, 0.05, 16, 1), {},
                      q=two_sided_quantile(0.01, 3), root_seed=1, power_target=0.05)
    assert res.checks[0].verdict == "fail", res.checks[0].reason
    assert res.verdict == "fail"


def test_the_misfit_no_longer_widens_the_interval_until_the_prediction_fits():
    """kq.attention's xavier_rank_one with a one-line numerics error measured about 1.8e6 at
    T = 512 against 1; the L + c/T fit, Birge-inflated by its misfit, gave [-2.4e5, 8.0e5],
    which contains 1, and the check read "lacks power". It fails on the goodness of fit."""
    T = np.array(SIZES, dtype=float)
    means = 1.8e6 * (T / 512) ** 2
    res = judge_claim(one_check_claim(models=ONE_OVER_T), replicates(means, 0.05, 48, 2), {},
                      q=two_sided_quantile(0.01, 18), root_seed=2, power_target=0.05)
    check = res.checks[0]
    assert check.verdict == "fail"
    assert "contradict the stated finite-size form (goodness of fit p = " in check.reason


def test_a_member_the_data_contradict_accepts_nothing():
    """A family whose one member fits: the union is that member's interval alone."""
    T = np.array(SIZES, dtype=float)
    rng = np.random.default_rng(5)
    n = np.full(T.size, 24)
    se = 1e-3 * np.ones_like(T)
    means = 2 + 30 / T + se * rng.standard_normal(T.size)  # 1/T, far from constant
    fam = family_limit(T, means, se, UNBIASED + ONE_OVER_T, two_sided_quantile(0.01, 2), n)
    assert fam.p_fit > 0.01 / 2
    assert fam.accepts(2.0)
    half = dict((name, h) for name, _, h in fam.fits)["1/T"]
    assert fam.high - fam.low == pytest.approx(2 * half, rel=1e-6)


@pytest.mark.parametrize("factor", [1e-3, 1e3])
def test_a_law_orders_of_magnitude_off_fails(factor):
    """A distance check whose law is scaled by 0.001 or 1000 fails; the true law passes. At
    0.001 the distances approach 1 like 1 - c T^-0.8 and the goodness of fit of the
    distance's finite-size form is what rejects them (on real samples, fix.spectrum's law
    at s2 = log 2, that misfit had inflated the rate's and the limit's errors until both
    passed, and its power read "none")."""
    def law_claim(f):
        def cdf(p, scale):
            return lambda x: np.clip(x / (f * scale), 0.0, 1.0)  # uniform on [0, f * scale]
        return Claim(id="synthetic-law", title="uniform law",
                     predictions=(Prediction("law", "theorem", lambda p: 1.0, "u", kind="law"),),
                     checks=(Check("law", "u", "distance", rate=0.5, rate_status="derived",
                                   cdf=cdf),),
                     parameters=(), experiment="none", references=(),
                     profiles={"quick": Profile(SIZES, 16, 0.05)})

    def draw(rng, T):
        # uniform, with about 2 T^0.2 values in [0, 5e-4] (as the smallest singular values
        # of a square matrix, O(1/T)): at a scale of 0.001 the distance is 1 - O(T^-0.8)
        u = rng.uniform(0.0, 1.0, T)
        u[:int(round(2 * T ** 0.2))] = rng.uniform(0.0, 5e-4, int(round(2 * T ** 0.2)))
        return np.sort(u)

    rng = np.random.default_rng([7, 19])
    data = {T: [{"u": draw(rng, T)} for _ in range(16)] for T in SIZES}
    q = two_sided_quantile(0.01, 3)
    assert judge_claim(law_claim(1.0), data, {}, q=q, root_seed=7).checks[0].verdict == "pass"
    res = judge_claim(law_claim(factor), data, {}, q=q, root_seed=7)
    assert res.checks[0].verdict == "fail", res.checks[0].reason
    if factor < 1:  # the distances approach 1: only the goodness of fit sees it
        assert "contradict the stated finite-size form" in res.checks[0].reason


def test_smoothed_errors_follow_each_sizes_replicate_count():
    """A self-sized design gives sizes different replicate counts: the smooth error model
    is a power law in the per-replicate sd, divided back by sqrt(n). With sd = 1 at every
    size and n = 800, 600, 30, 300, each size keeps its own standard error (within the
    log-sd bias correction, under 2% at n = 30); smoothing the standard errors themselves
    gave the 30-draw size about a third of its own."""
    from gapverify.verification.judging.inference import _smoothed_errors

    T = np.array([64.0, 128.0, 256.0, 512.0])
    n = np.array([800, 600, 30, 300])
    se = 1 / np.sqrt(n)
    assert np.allclose(_smoothed_errors(T, se, n), se, rtol=0.02)
