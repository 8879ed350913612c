r"""The resolution of a limit test: a quarter of the power target, below which the test
does not narrow (:func:`resolution`, its reasons in its docstring and ``docs/judging.md``),
the interval a verdict accepts once widened to it (:func:`widened_interval`), and the scale
a relative error of a check is read against (:func:`estimate_scale`)."""
from __future__ import annotations

import math
from typing import Protocol

from gapverify.verification.claims.model import Check

__all__ = ["RESOLUTION_SHARE", "resolution", "estimate_scale", "widened_interval",
           "resolution_note", "Judged"]


class Judged(Protocol):
    """What these read of a judged check (a :class:`~verification.judging.checks.CheckResult`)."""

    kind: str
    predicted: float
    zero_scale: float | None
    limit_hat: float | None


def widened_interval(low: float, high: float, estimate: float | None,
                     resolution: float | None) -> tuple[float, float]:
    """The accepted limits ``[low, high]``, widened to at least ``estimate +- resolution``
    (:func:`resolution`): the limits a verdict accepts. Unchanged without a resolution or
    a finite estimate."""
    if not resolution or not resolution > 0 or estimate is None or not math.isfinite(estimate):
        return low, high
    return min(low, estimate - resolution), max(high, estimate + resolution)


def resolution_note(low: float, high: float, wide_low: float, wide_high: float,
                    resolution: float) -> str:
    """The reason's words when the resolution widened ``[low, high]``; empty otherwise."""
    if (wide_low, wide_high) == (low, high):
        return ""
    return f" (the interval [{low:.5g}, {high:.5g}] widened to the resolution ±{resolution:.2g})"


#: The resolution's share of the power target, either side of the estimate
#: (:func:`resolution`).
RESOLUTION_SHARE = 0.25


def resolution(check: Check, result: "Judged", power_target: float | None,
               zero: bool | None = None) -> float:
    r"""The half-width below which a limit test does not narrow: a quarter of the power
    target :math:`P^*`, relative to the estimate, :math:`\rho = P^*|\hat L|/4` (for a
    prediction of 0, relative to the check's zero scale). The limit is accepted when it
    lies within :math:`\max(t\,\mathrm{se}, \rho)` of the estimate (a rate range or a
    model family: in its interval, or within :math:`\rho` of the estimate).

    Why: "verified" asks that the prediction pass and that the same samples reject it
    wrong by :math:`P^*`. Samples far more precise than that needs (draws another test of
    the same case bought: the faster rate's rejection, a stated rate's least-cost design)
    also resolve the finite-size terms the one-term model :math:`L + c\,T^{-r}` leaves
    out, and a true prediction then failed by 3 to 4 standard errors (softmax.kappa at
    :math:`T = 64..128`: :math:`\hat L = 1.0011 \pm 0.00032` against 1). Below the
    resolution the verdict does not tell predictions apart (an indifference zone,
    Bechhofer 1954). A quarter: a check that passes at the resolution has
    :math:`|\hat L - L| \le \rho`, so its power (measured with the same rule) is at
    most :math:`2\rho/|L| \approx P^*/2`. The resolution alone never makes a check lack
    power, and the prediction wrong by half the target still fails. The interval
    :math:`\hat L \pm t\,\mathrm{se}` is what the calibration's coverage measures and
    what the sampling plans on; the faster rate's rejection is judged without a
    resolution.

    ``zero``: whether the statement as stated predicts 0 (default: ``result``'s
    prediction is 0), so that a variant that moves a prediction of 0 off it (the audit's,
    ``--perturb``) is judged at the resolution its power was measured at.

    0 where none applies: no power target, a law, a check not asserted, and a model
    family fitted after a subtracted finite-size term (the Tracy-Widom offset's judge,
    whose purpose is to reject that term wrong by a few percent)."""
    if (power_target is None or check.kind != "limit" or not check.asserted
            or (check.models and check.correction is not None)):
        return 0.0
    return RESOLUTION_SHARE * float(power_target) * (estimate_scale(result, zero) or 0.0)


def estimate_scale(result: "Judged", zero: bool | None = None) -> float | None:
    """What a relative error of a check is relative to, read from its samples: the
    estimate's magnitude ``|L_hat|``, not the prediction's (so that a changed statement
    is judged on the draws and at the resolution of the statement it replaced), or, for
    a prediction of 0 (``zero``: as stated; default: ``result``'s), the check's zero
    scale; the prediction's magnitude where there is no estimate. The one place the
    statement shows: a statement changed in ``theory/`` that moves a prediction onto or
    off 0 switches between the two scales, and its plan may ask other draws (moved off
    a true 0, ``|L_hat| ~ 0`` plans far more; docs/power.md, 2026-12-07). The sampling's plan
    (:mod:`verification.running.allocation`) and :func:`resolution` read it."""
    if (result.predicted == 0.0) if zero is None else zero:
        return abs(result.zero_scale) if result.zero_scale else None
    hat = result.limit_hat
    if result.kind == "limit" and hat is not None and math.isfinite(hat) and hat != 0.0:
        return abs(hat)
    return abs(result.predicted)
