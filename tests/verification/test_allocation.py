"""Self-sizing: the least-cost allocation, the planned power and the stopping rule.

The allocation is checked against a numerical optimum on a synthetic model whose answer is
known; the stopping rule against the property that keeps coverage: it reads precision, so
moving every measurement (and the estimate with it) away from the prediction changes
nothing it decides. A synthetic sequential design shows what that property buys: stopping
when the estimate looks good breaks the 95% interval's coverage, stopping on precision
keeps it.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import optimize, stats

from gapverify.verification.judging.checks import CheckResult, SizeRow
from gapverify.verification.judging.outcomes import Outcome
from gapverify.verification.running.allocation import (
    MEASURED_STEP, SPREAD_CAP, check_demand, estimator_weights, least_cost_replicates, margin_quantile,
)

SIZES = np.array([64.0, 128.0, 256.0, 512.0])


def test_the_weights_are_the_weighted_least_squares_intercept():
    rng = np.random.default_rng(1)
    y = 2.0 + 3.0 * SIZES ** -0.5 + rng.normal(0, 0.01, SIZES.size)
    n, sd = np.array([10, 20, 30, 40.0]), np.array([1.0, 0.7, 0.5, 0.3])
    w = estimator_weights(SIZES ** -0.5, n, sd)
    fit = np.polynomial.polynomial.polyfit(SIZES ** -0.5, y, 1, w=np.sqrt(n) / sd)
    assert w @ y == pytest.approx(fit[0], rel=1e-12)
    assert w.sum() == pytest.approx(1.0, abs=1e-12)


def test_the_allocation_is_the_least_cost_design_at_the_variance():
    """n_T = |w| s c^-1/2 sum |w| s c^1/2 / V against a numerical minimisation of the
    cost at the same variance: the same design, to the optimiser's accuracy."""
    w, sd = np.array([-0.7, 0.1, 0.6, 1.0]), np.array([2.0, 1.5, 1.0, 0.8])
    cost = 1e-3 + 1e-9 * SIZES ** 3
    target = 1e-3
    n = least_cost_replicates(w, sd, cost, target)
    assert np.sum(w ** 2 * sd ** 2 / n) == pytest.approx(target, rel=1e-12)
    res = optimize.minimize(
        lambda logn: float(np.exp(logn) @ cost), np.log(n) + 0.3, method="SLSQP",
        constraints=[{"type": "eq", "fun": lambda logn: np.sum(w ** 2 * sd ** 2 / np.exp(logn)) / target - 1}],
        options={"ftol": 1e-14, "maxiter": 500})
    assert res.success
    assert np.exp(res.x) == pytest.approx(n, rel=1e-3)
    # any other design at that variance costs more
    other = n * np.array([1.2, 0.9, 1.0, 1.0])
    other *= np.sum(w ** 2 * sd ** 2 / other) / target
    assert other @ cost > n @ cost


def _result(shift: float = 0.0, se_scale: float = 1.0, n: int = 12,
            predicted: float = 1.0) -> CheckResult:
    """A rated limit check judged at 4 sizes: spread 1/sqrt(T) per replicate; its centred
    power is an absolute threshold (0.06 se_scale) relative to the prediction."""
    rows = [SizeRow(int(T), n, 1.0 + shift + T ** -0.5, se_scale * T ** -0.25 / np.sqrt(n),
                    abs(shift + T ** -0.5), se_scale * T ** -0.25 / np.sqrt(n)) for T in SIZES]
    return CheckResult(claim="c", label="x", statistic="x", kind="limit", status="theorem",
                       predicted=predicted, rate=0.5, verdict=Outcome.PASS, reason="", rows=rows,
                       beta=0.5, beta_se=0.05, limit_hat=1.0 + shift, limit_se=0.02 * se_scale,
                       power_target=0.05, centred_power=3.0 * 0.02 * se_scale / predicted)


COSTS = {int(T): 1e-3 + 1e-9 * T ** 3 for T in SIZES}


def test_the_stopping_rule_reads_precision_not_where_the_estimate_sits():
    """The plan reads the samples only: the same samples judged against a statement 5%
    off, passing or failing, ask for the same draws (a changed statement is judged on the
    draws of the one it replaced). Moving every measurement by 0.5% moves the draws only
    through the estimate's magnitude, the scale of the relative target (by about 0.5%),
    never through its distance to the prediction."""
    base = check_demand(_result(), COSTS, tests=4, q=3.0, rate=0.5, rated=False)
    assert base is not None and base.replicates is not None
    for stated in (1.05, 0.95):
        other = dataclasses.replace(_result(predicted=stated), verdict=Outcome.FAIL)
        again = check_demand(other, COSTS, tests=4, q=3.0, rate=0.5, rated=False)
        assert again.replicates == base.replicates and again.planned == base.planned
    for shift in (0.005, -0.005):
        moved = check_demand(_result(shift), COSTS, tests=4, q=3.0, rate=0.5, rated=False)
        for T, n in base.replicates.items():
            assert abs(moved.replicates[T] - n) <= 0.012 * n + 1


def test_a_statement_moved_off_a_true_zero_is_planned_as_the_zero_was():
    """A true limit of 0 (estimate 0.001 against a zero scale of 1) stated as 0, and
    stated 4% of the zero scale off it (the wrong outlier test_wrong_theory gives
    variants.linear at mu = 0), ask for the same draws: the plan's scale is the zero
    scale wherever the estimate is within the power target of 0 on it, whatever the
    statement. Planned relative to the estimate's own magnitude, the moved statement
    asked 37 000 times the draws."""
    def at_zero(predicted: float) -> CheckResult:
        judged_scale = abs(predicted) or 1.0  # the power search's reference
        return dataclasses.replace(_result(shift=-0.999, predicted=1.0), predicted=predicted,
                                   zero_scale=1.0, centred_power=3.0 * 0.02 / judged_scale)
    base = check_demand(at_zero(0.0), COSTS, tests=4, q=3.0, rate=0.5, rated=False)
    assert base is not None and base.replicates is not None
    for stated in (0.04, -0.04):
        moved = dataclasses.replace(at_zero(stated), verdict=Outcome.FAIL)
        again = check_demand(moved, COSTS, tests=4, q=3.0, rate=0.5, rated=False)
        assert again.replicates == base.replicates
        assert again.planned == pytest.approx(base.planned, rel=1e-12)
    # an estimate beyond the target's reach of 0 is its own scale: no zero scale then
    far = dataclasses.replace(at_zero(0.0), limit_hat=0.5)
    assert check_demand(far, COSTS, tests=4, q=3.0, rate=0.5, rated=False).planned \
        == pytest.approx(2.0 * base.planned, rel=1e-12)


def test_more_spread_asks_for_more_draws_and_a_precise_check_for_none():
    base = check_demand(_result(), COSTS, tests=4, q=3.0, rate=0.5, rated=False)
    wider = check_demand(_result(se_scale=2.0), COSTS, tests=4, q=3.0, rate=0.5, rated=False)
    assert all(wider.replicates[T] > base.replicates[T] for T in base.replicates)
    # the planned power is (t + z) se / |L|: at se 0.002 it is far inside 5%
    precise = check_demand(_result(se_scale=0.1), COSTS, tests=4, q=3.0, rate=0.5, rated=False)
    assert precise.replicates is None and precise.planned < 0.05
    # the smallest size is never drawn more than SPREAD_CAP times the largest
    assert base.replicates[64] <= SPREAD_CAP * base.replicates[512] + 1


def test_the_faster_rate_is_planned_on_the_cheaper_of_its_two_rejections():
    """The judging rejects the rate 0.5 faster when its rate test does or when its limit
    test does (extrapolated at the faster rate, a slower truth leaves a bias D). The plan
    asks for the cheaper: a centred bias far beyond t se_f + z se needs no slope precision
    at all; one short of it by a factor k scales every size by k^2; none (a flat
    statistic, D = 0) leaves the rate test's own demand."""
    precise = _result(se_scale=0.1)  # the limit itself needs nothing more
    slope = dataclasses.replace(precise, beta_se=0.25)  # a slope too loose
    flat = check_demand(dataclasses.replace(slope, centred_faster=None), COSTS, tests=4,
                        q=3.0, rate=0.5, rated=True)
    assert flat.replicates is not None  # the rate test alone: more draws
    # D = 0.05 (se 0.001) against t se_f = 0.003: its limit test rejects it already
    biased = check_demand(dataclasses.replace(slope, centred_faster=[0.05, 0.003, 0.001]), COSTS,
                          tests=4, q=3.0, rate=0.5, rated=True)
    assert biased.replicates is None
    # D short of t se_f + z (se + se_D) by 1.5x: 2.25x the draws at every size (beta at the stated
    # rate: the standard errors at both rates are the judged one), cheaper than the
    # slope's least-cost design here; short by 4x (16x the draws), dearer: the slope's
    z = margin_quantile(4, sides=1)
    need = 0.003 + z * (slope.limit_se + 0.001)
    short = check_demand(dataclasses.replace(slope, centred_faster=[need / 1.5, 0.003, 0.001]),
                         COSTS, tests=4, q=3.0, rate=0.5, rated=True)
    assert short.replicates == {int(T): 27 for T in SIZES}  # ceil(12 * 1.5^2)
    far = check_demand(dataclasses.replace(slope, centred_faster=[need / 4, 0.003, 0.001]),
                       COSTS, tests=4, q=3.0, rate=0.5, rated=True)
    assert far.replicates == flat.replicates
    # an empirical prediction's rate is not asked to reject a faster one: nothing more
    empirical = dataclasses.replace(slope, centred_faster=None, status="empirical")
    assert check_demand(empirical, COSTS, tests=4, q=3.0, rate=0.5, rated=True).replicates is None


def test_the_margin_grows_with_the_claims_tests():
    assert margin_quantile(1) == pytest.approx(stats.norm.isf(0.025))  # beta = 5%, two-sided
    assert margin_quantile(1) < margin_quantile(8) < margin_quantile(24)
    # a rate's margin is one-sided: a faster rate escapes rejection on one side only
    assert margin_quantile(1, sides=1) == pytest.approx(stats.norm.isf(0.05))
    assert margin_quantile(8, sides=1) == pytest.approx(stats.norm.isf(0.05 / 8))


def _coverage(rule: str, seeds: int = 4000, step: int = 10, looks: int = 8) -> float:
    """Coverage of the 95% t-interval of a normal mean after a sequential design: draw
    ``step`` at a time up to ``looks`` times; ``precision`` stops once the half-width is
    below 0.45 (a rule on the standard error), ``estimate`` stops as soon as the
    interval excludes the truth (a rule on where the estimate sits)."""
    rng = np.random.default_rng(7)
    x = rng.normal(0.0, 1.0, (seeds, step * looks))
    m = step * np.arange(1, looks + 1)  # draws at each look
    sums, squares = np.cumsum(x, 1)[:, m - 1], np.cumsum(x ** 2, 1)[:, m - 1]
    mean = sums / m
    sd = np.sqrt((squares - m * mean ** 2) / (m - 1))
    half = stats.t.isf(0.025, m - 1) * sd / np.sqrt(m)
    hit = np.abs(mean) <= half
    stop = half < 0.45 if rule == "precision" else ~hit
    stop[:, -1] = True
    first = np.argmax(stop, axis=1)  # the look at which the design stops
    return float(hit[np.arange(seeds), first].mean())


def test_a_rule_that_looks_at_the_estimate_breaks_coverage_and_precision_keeps_it():
    """4000 synthetic sequential designs: stopping on precision covers 95% within its
    binomial 99.9% bounds; stopping when the interval misses the truth ("sampling to a
    foregone conclusion") covers far less: the property the test above holds the rounds to."""
    low, high = stats.binom.interval(0.999, 4000, 0.95)
    assert low / 4000 <= _coverage("precision") <= high / 4000
    assert _coverage("estimate") < low / 4000 - 0.05


def test_the_planned_power_of_the_judging_does_not_see_the_estimates_offset():
    """``centred_power``, what the rounds plan on, is the judging's own power search on the
    samples moved so that their estimate sits at the prediction: moving every sample by a
    constant (the estimate with it) leaves it unchanged, while the measured power moves."""
    from gapverify.verification.claims.model import Check, Claim, Prediction, Profile
    from gapverify.verification.judging.verdict import judge_claim

    sizes = (64, 128, 256, 512, 1024)
    claim = Claim(id="synthetic", title="x_T = 2 + 3/T + noise/sqrt(T)",
                  predictions=(Prediction("x", "derived", lambda p: 2, "x"),),
                  checks=(Check("x", "x", "limit", rate=0.5, rate_status="derived"),),
                  parameters=(), experiment="none", references=(),
                  profiles={"quick": Profile(sizes, 16)})
    rng = np.random.default_rng(3)
    noise = {T: rng.standard_normal(16) for T in sizes}

    def judged(offset: float):
        data = {T: [{"x": 2.0 + offset + 3.0 / T + 0.2 * z / np.sqrt(T)} for z in noise[T]]
                for T in sizes}
        return judge_claim(claim, data, {}, q=3.0, root_seed=0, power_target=0.05,
                           measure=True).checks[0]

    base, moved = judged(0.0), judged(0.004)
    assert base.centred_power is not None and np.isfinite(base.centred_power)
    assert moved.centred_power == pytest.approx(base.centred_power, rel=1e-6)
    assert moved.power != pytest.approx(base.power, rel=1e-3)
    # the faster rate's gap, what its limit-test route plans on, is the samples' own too
    assert base.centred_faster is not None
    assert moved.centred_faster == pytest.approx(base.centred_faster, rel=1e-6, abs=1e-12)


def test_a_statistic_exact_at_every_replicate_asks_for_nothing():
    """causal.cesaro's s1_mean at the standard profile: the same value at every replicate,
    its standard error 0 at one size and 1e-16 at the others. The plan used to give that
    size an infinite least-squares weight (numpy LinAlgError: Singular matrix, which ended
    a standard run); draws cannot change such a statistic: no demand."""
    T = np.array([64, 91, 128, 181, 256, 362, 512, 724, 1024], float)
    rows = [SizeRow(int(t), 39, 1.5 + 0.1 * np.log(t), 0.0 if t == 512 else 3.6e-17,
                    0.4 - 0.01 * np.log(t), 1e-17) for t in T]
    result = CheckResult(claim="causal.cesaro", label="s1_mean", statistic="s1", kind="limit",
                         status="derived", predicted=2.0, rate=None, verdict=Outcome.PASS,
                         reason="", rows=rows, limit_hat=2.0, limit_se=1e-16,
                         power_target=0.03, models=["L + c/log T"], limit_interval=[1.99, 2.01])
    costs = {int(t): 1e-3 for t in T}
    assert check_demand(result, costs, tests=4, q=3.0, rate=0.5, rated=False) is None
    # one noisy size among exact ones still plans, with finite draws
    noisy = [dataclasses.replace(r, se=1e-3) if r.T == 1024 else r for r in rows]
    demand = check_demand(dataclasses.replace(result, rows=noisy, limit_se=1e-3), costs,
                          tests=4, q=3.0, rate=0.5, rated=False)
    assert demand is not None and all(np.isfinite(list((demand.replicates or {1: 1}).values())))


def test_a_law_a_little_short_of_its_target_asks_a_quarter_more():
    """A law plans on its measured power, which moves by a few percent from draw to draw:
    3% short asks MEASURED_STEP (25%) more at every size, not one draw; 2x short asks 4x."""
    rows = [SizeRow(int(T), 16, 0.05 * T ** -0.5, 0.004 * T ** -0.5, 0.05 * T ** -0.5,
                    0.004 * T ** -0.5) for T in SIZES]
    law = CheckResult(claim="c", label="law:x", statistic="x", kind="distance",
                      status="theorem", predicted=0.0, rate=0.5, verdict=Outcome.LACKS_POWER,
                      reason="", rows=rows, power=0.0309, power_target=0.03,
                      limit_hat=0.0, limit_se=1e-3, zero_scale=1.0)
    short = check_demand(law, COSTS, tests=4, q=3.0, rate=0.5, rated=False)
    assert MEASURED_STEP == 0.25
    assert short.replicates == {int(T): 20 for T in SIZES}  # ceil(16 * 1.25)
    far = check_demand(dataclasses.replace(law, power=0.06), COSTS, tests=4, q=3.0, rate=0.5,
                       rated=False)
    assert far.replicates == {int(T): 64 for T in SIZES}  # 16 * 2^2
    met = check_demand(dataclasses.replace(law, power=0.029, verdict=Outcome.PASS), COSTS,
                       tests=4, q=3.0, rate=0.5, rated=False)
    assert met.replicates is None
