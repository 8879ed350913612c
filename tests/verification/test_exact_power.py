"""tests for the power of an exact check (verification/judging/checks.py _exact): the
relative error of the prediction the worst replicate would reject, ``max(residual +
tolerance) / scale``; for a prediction of 0 the scale is the check's ``zero_scale`` (as the
power search of statistical checks reads it), and without one there is no power (inf)."""
import math

import pytest

from gapverify.verification.claims.model import Check
from gapverify.verification.judging.checks import _exact

TOL = 1e-10
DATA = {64: [{"x": 3e-11}, {"x": -2e-11}], 128: [{"x": 5e-11}]}  # residuals <= 5e-11


def _base(case=None):
    return dict(claim="c", label="x", statistic="x", kind="exact", status="theorem",
                predicted=0.0, rate=None, case=case or {"s2": 0.5})


def _check(**kw):
    return Check("x", "x", "exact", tolerance=lambda T, m: TOL, tolerance_note="round-off", **kw)


def test_zero_prediction_is_powered_on_its_zero_scale():
    # zero_scale 2 s2 = 1 at the case's s2 = 0.5: power (5e-11 + 1e-10) / 1
    res = _exact(_check(zero_scale=lambda p: 2 * p["s2"]), DATA, 0.0, _base())
    assert res.verdict == "pass"
    assert res.power == pytest.approx((5e-11 + TOL) / 1.0, rel=1e-12)


def test_zero_scale_reads_the_parameters_given():
    res = _exact(_check(zero_scale=lambda p: 2 * p["s2"]), DATA, 0.0, _base(),
                 params={"s2": 0.25})
    assert res.power == pytest.approx((5e-11 + TOL) / 0.5, rel=1e-12)


def test_zero_prediction_without_zero_scale_has_no_power():
    res = _exact(_check(), DATA, 0.0, _base())
    assert res.verdict == "pass" and res.power == math.inf


def test_nonzero_prediction_is_relative_to_itself_whatever_the_zero_scale():
    data = {T: [{"x": 2.0 + m["x"]} for m in reps] for T, reps in DATA.items()}
    res = _exact(_check(zero_scale=lambda p: 1e6), data, 2.0, _base())
    assert res.power == pytest.approx((5e-11 + TOL) / 2.0, rel=1e-4)
