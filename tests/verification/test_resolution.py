"""The limit test's resolution (verification/judging/resolution.py): a limit is
accepted within a quarter of the power target of its estimate even where the samples resolve far
finer, so that a finite-size term the one-term model leaves out does not fail a true
statement; a prediction wrong by the target still fails, the power is measured with the
same rule, the sampling plans without it and the Tracy-Widom offset's judge has none."""
import math

import numpy as np
import pytest

from gapverify.verification.claims.model import Check, Claim, Prediction, Profile
from gapverify.verification.claims.registry import REGISTRY
from gapverify.verification.judging import verdict
from gapverify.verification.judging.resolution import resolution
from gapverify.verification.judging.verdict import Variant, judge_claim

SIZES = (64, 91, 128)
TARGET = 0.05  # the quick profile's power target
Q = 3.0


def rated_claim() -> Claim:
    return Claim(
        id="resolved", title="x_T -> 1 at rate 3/4",
        predictions=(Prediction("x", "derived", lambda p: 1.0, "x"),),
        checks=(Check("x", "x", "limit", rate=0.75, rate_status="derived"),),
        parameters=(), experiment="none", references=(),
        profiles={"quick": Profile(SIZES, 16, TARGET)})


def resolved_data(seed: int, reps: int = 4000) -> dict:
    """x_T = 1 + 0.5 T^-3/4 + 3 T^-3/2 + 0.01 z: true limit 1, with a second-order term the
    one-term model L + c T^-3/4 leaves out, at the precision 4000 draws a size buy (the
    faster rate's rejection bought 36 372 at softmax.kappa's three smallest sizes)."""
    rng = np.random.default_rng([seed, 3])
    return {T: [{"x": 1 + 0.5 * T ** -0.75 + 3 * T ** -1.5 + 0.01 * rng.standard_normal()}
                for _ in range(reps)] for T in SIZES}


@pytest.fixture(scope="module")
def data():
    return resolved_data(1)


def test_a_true_limit_resolved_past_its_target_passes_at_the_resolution(data):
    strict = judge_claim(rated_claim(), data, {}, q=Q, root_seed=1)
    # without a power target the interval alone judges: 0.9987 +- 0.0004 misses 1
    assert strict.verdict == "fail" and "misses 1" in strict.checks[0].reason
    res = judge_claim(rated_claim(), data, {}, q=Q, root_seed=1, power_target=TARGET)
    (check,) = res.checks
    assert res.verdict == "pass", check.reason
    assert check.resolution == pytest.approx(TARGET / 4 * abs(check.limit_hat))
    assert "resolution" in check.reason
    assert check.power <= TARGET  # verified still means a prediction wrong by 5% fails


@pytest.mark.parametrize("scale", [1.05, 0.95, 1.025, 0.975])
def test_a_prediction_wrong_by_more_than_the_resolution_still_fails(data, scale):
    res = judge_claim(rated_claim(), data, {}, q=Q, root_seed=1, power_target=TARGET,
                      variant=Variant(scale=scale))
    assert res.verdict == "fail", res.checks[0].reason


def edge_claim(**check) -> Claim:
    return Claim(
        id="edge", title="x_T -> 1, rate in [2/3, 1]",
        predictions=(Prediction("x", "derived", lambda p: 1.0, "x"),),
        checks=(Check("x", "x", "limit", rate_range=(2 / 3, 1.0), rate_status="derived",
                      **check),),
        parameters=(), experiment="none", references=(),
        profiles={"quick": Profile((64, 128, 256, 512, 1024), 16, TARGET)})


def edge_data(seed: int, reps: int = 2000) -> dict:
    rng = np.random.default_rng([seed, 7])
    return {T: [{"x": 1 + 0.5 * T ** (-2 / 3) + 0.02 * T ** (-1 / 3) * rng.standard_normal()}
                for _ in range(reps)] for T in (64, 128, 256, 512, 1024)}


def test_an_interval_is_widened_to_the_resolution_and_its_power_measured_so():
    res = judge_claim(edge_claim(), edge_data(2), {}, q=Q, root_seed=2, power_target=TARGET)
    (check,) = res.checks
    assert check.verdict == "pass", check.reason
    low, high = check.limit_interval  # the fitted interval, as the sampling plans on it
    rho = check.resolution
    assert rho == pytest.approx(TARGET / 4 * abs(check.limit_hat))
    assert high - low < rho  # these samples resolve far finer than the target
    assert "widened to the resolution" in check.reason
    # power: the widened interval's far end from the prediction, no better than rho / |L|
    widened = (min(low, check.limit_hat - rho), max(high, check.limit_hat + rho))
    assert check.power == pytest.approx(max(1 - widened[0], widened[1] - 1))
    assert TARGET / 4 * 0.99 < check.power <= TARGET / 2 * 1.01
    for scale in (1.05, 0.95):
        wrong = judge_claim(edge_claim(), edge_data(2), {}, q=Q, root_seed=2,
                            power_target=TARGET, variant=Variant(scale=scale))
        assert wrong.verdict == "fail", wrong.checks[0].reason


def test_the_sampling_plans_on_the_interval_without_the_resolution(data, monkeypatch):
    """The centred power and the faster rate's test read the interval's own precision: the
    same with the resolution as with none (rounds.py draws the same samples)."""
    with_rho = judge_claim(rated_claim(), data, {}, q=Q, root_seed=1, power_target=TARGET)
    monkeypatch.setattr(verdict, "resolution", lambda *a, **k: 0.0)
    without = judge_claim(rated_claim(), data, {}, q=Q, root_seed=1, power_target=TARGET)
    a, b = with_rho.checks[0], without.checks[0]
    assert b.resolution is None and a.resolution > 0
    assert a.centred_power == b.centred_power and a.centred_faster == b.centred_faster
    planned = judge_claim(rated_claim(), data, {}, q=Q, root_seed=1, power_target=TARGET,
                          planning=True)
    assert planned.checks[0].resolution is None


def test_the_tracy_widom_offsets_judge_and_laws_have_no_resolution():
    edge = next(c for c in REGISTRY.get("markov.singular_law").checks
                if c.models and c.correction is not None)
    law = next(c for c in REGISTRY.get("markov.singular_law").checks if c.kind == "distance")
    res = judge_claim(rated_claim(), resolved_data(1, reps=16), {}, q=Q, root_seed=1,
                      power_target=TARGET)
    assert resolution(edge, res.checks[0], TARGET) == 0.0
    assert resolution(law, res.checks[0], TARGET) == 0.0
    assert resolution(rated_claim().checks[0], res.checks[0], None) == 0.0
    assert math.isclose(resolution(rated_claim().checks[0], res.checks[0], TARGET),
                        TARGET / 4 * abs(res.checks[0].limit_hat))


def test_a_prediction_of_zero_moved_off_it_keeps_its_zero_scales_resolution():
    """The audit's and --perturb's offset of a prediction of 0 is judged at the resolution
    the power was measured at (the zero scale's), not at one relative to an estimate near 0."""
    claim = Claim(
        id="zero", title="x -> 0", parameters=(),
        predictions=(Prediction("x", "derived", lambda p: 0, "x"),),
        checks=(Check("x", "x", "limit", rate=0.9, zero_scale=lambda p: 3.0),),
        experiment="none", references=(), profiles={"quick": Profile(SIZES, 16, TARGET)})
    rng = np.random.default_rng(11)
    data = {T: [{"x": 0.5 / T + 0.01 * rng.standard_normal()} for _ in range(400)]
            for T in SIZES}
    stated = judge_claim(claim, data, {}, q=Q, root_seed=11, power_target=TARGET)
    assert stated.checks[0].resolution == pytest.approx(TARGET / 4 * 3.0)
    moved = judge_claim(claim, data, {}, q=Q, root_seed=11, power_target=TARGET,
                        variant=Variant(offsets={"x": 0.01}), measure=False)
    assert moved.checks[0].resolution == pytest.approx(TARGET / 4 * 3.0)
