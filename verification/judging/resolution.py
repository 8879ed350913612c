r"""The resolution of a limit test: a quarter of the power target, below which the test
does not narrow (:func:`resolution`, its reasons in its docstring and ``docs/judging.md``),
the interval a verdict accepts once widened to it (:func:`widened_interval`), and the scale
a relative error of a check is read against (:func:`estimate_scale`)."""
from __future__ import annotations

import math
from typing import Protocol

from gapverify.verification.claims.model import Check

__all__ = ["RESOLUTION_SHARE", "resolution", "estimate_scale", "judged_scale",
           "widened_interval", "resolution_note", "Judged"]


class Judged(Protocol):
    """What these read of a judged check (a :class:`~verification.judging.checks.CheckResult`)."""

    kind: str
    predicted: float
    zero_scale: float | None
    limit_hat: float | None
    power_target: float | None


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


def resolution(check: Check, result: "Judged", power_target: float | None) -> float:
    r"""The half-width below which a limit test does not narrow: a quarter of the power
    target :math:`P^*` times the check's scale (:func:`estimate_scale`, read from its
    samples), :math:`\rho = P^* s/4`. The limit is accepted when it lies within
    :math:`\max(t\,\mathrm{se}, \rho)` of the estimate (a rate range or a model family:
    in its interval, or within :math:`\rho` of the estimate).

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
    resolution. Read from the samples, not the statement, it is the same for a changed
    statement (a variant, ``--perturb``, an edit in ``theory/``) as for the one it
    replaced.

    0 where none applies: no power target, a law, a check not asserted, and a model
    family fitted after a subtracted finite-size term (the Tracy-Widom offset's judge,
    whose purpose is to reject that term wrong by a few percent)."""
    if (power_target is None or check.kind != "limit" or not check.asserted
            or (check.models and check.correction is not None)):
        return 0.0
    scale = estimate_scale(result, power_target)
    return RESOLUTION_SHARE * float(power_target) * (scale or 0.0)


def estimate_scale(result: "Judged", power_target: float | None = None) -> float | None:
    r"""What a relative error of a check is relative to, read from its samples and never
    from its statement, so that a statement changed in ``theory/`` (or by a variant) is
    planned and resolved on the scale of the one it replaced: the estimate's magnitude
    :math:`|\hat L|`, or the check's zero scale :math:`s_0` where the estimate is within
    the power target of 0 on that scale, :math:`|\hat L| \le P^* s_0` (``power_target``,
    default ``result``'s). There a prediction cannot be told from 0 at the target's
    resolution, and a relative error of :math:`|\hat L|` would ask to resolve sampling
    noise: a true limit of 0 measured against its own estimate plans without end (a
    statement that moves variants.linear's outlier at :math:`\mu = 0` off 0 once asked
    37 000 times the draws; docs/power.md, 2026-12-07). Without a zero scale and without
    an estimate, the prediction's magnitude (``None`` for 0: no relative error is
    defined, as the power search says, ``nan``). The sampling's plan
    (:mod:`verification.running.allocation`) and :func:`resolution` read it."""
    hat = result.limit_hat
    if result.kind != "limit" or hat is None or not math.isfinite(hat):
        hat = None
    target = result.power_target if power_target is None else power_target
    zero = abs(result.zero_scale) if result.zero_scale else None
    if zero is not None and (hat is None or abs(hat) <= float(target or 0.0) * zero):
        return zero
    if hat is not None and hat != 0.0:
        return abs(hat)
    return abs(result.predicted) or None


def judged_scale(result: "Judged") -> float | None:
    """What the judging's power is relative to (the power search's reference): the
    prediction's magnitude, or for a prediction of 0 the check's zero scale; ``None``
    where no relative error is defined (0 without a zero scale: power ``nan``)."""
    if result.predicted != 0.0:
        return abs(result.predicted)
    return abs(result.zero_scale) if result.zero_scale else None
