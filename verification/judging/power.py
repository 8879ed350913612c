"""A check's power and the parameter blind spots of a prediction.

A check that passes is judged again, on the same samples, against predictions made wrong:
:func:`measure_power` finds by bisection the smallest relative error of the prediction
those samples reject on both sides; :func:`wrong_values` and :func:`parameter_moves` say
how far each wrong parameter value (``x1.25``, ``x0.8``) moves a prediction, and
:func:`parameter_blind_spots` which of those no check that passed with power can see;
:func:`power_text` prints a power. The judging itself is
:mod:`verification.judging.checks`'s; :mod:`verification.judging.verdict` turns a power
worse than the profile's target into "lacks power".
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from gapverify.verification.claims.model import Check, Claim
from gapverify.verification.judging.checks import ROUNDOFF, CheckResult, _judge_rows, _Prepared
from gapverify.verification.judging.resolution import widened_interval
from gapverify.verification.judging.outcomes import Outcome

__all__ = ["measure_power", "wrong_values", "parameter_moves", "parameter_blind_spots",
           "power_text", "PARAMETER_FACTORS"]

#: The wrong parameter values a prediction must be told from (``value`` times these).
PARAMETER_FACTORS = (1.25, 0.8)
#: Bisection range of the power search (relative error).
_POWER_LOW, _POWER_HIGH, _POWER_STEPS = 1e-4, 1.0, 14


def _rejects(check: Check, prep: _Prepared, value: float, params, scale: float,
             rate: float | None, q: float, sizes_used: list[int]) -> bool:
    rows = [prep.mean_rows(T, value, params, scale) for T in sizes_used]
    try:
        return not _judge_rows(check, rows, value, rate, q, params, prep.resolution).ok
    except (np.linalg.LinAlgError, ValueError):
        # the fit degenerates only for a value so wrong that every replicate sits at the
        # same extreme (a Kolmogorov distance of 1 at every size): rejected
        return True


def _zero_reference(check: Check, predicted: float, params) -> float | None:
    if predicted != 0.0:
        return abs(predicted)
    return float(check.zero_scale(params)) if check.zero_scale else None


def measure_power(check: Check, prep: _Prepared, result: CheckResult, predicted: float,
                  params: Mapping[str, float], scale: float, rate: float | None, q: float) -> float:
    r"""Smallest relative error :math:`e` of the prediction that the samples reject on both
    sides (:math:`L(1 \pm e)`; for a law, its scale; for :math:`L = 0`,
    :math:`\pm e\cdot` ``zero_scale``), by bisection in :math:`\log e` on the judging
    itself. ``inf`` when even :math:`e = 1` passes; ``nan`` when undefined (a zero limit
    without a reference scale)."""
    if result.limit_interval is not None and predicted != 0.0:
        # rate range, model family: the interval (at least the resolution either side of
        # the estimate) does not move with the prediction
        low, high = widened_interval(*result.limit_interval, result.limit_hat,
                                     prep.resolution)
        return max(predicted - low, high - predicted) / abs(predicted)
    ref = _zero_reference(check, predicted, params)
    if ref is None or ref == 0.0:
        return math.nan
    used = [r.T for r in result.rows if r.error > ROUNDOFF * max(1.0, abs(predicted))] \
        if check.kind == "limit" else [r.T for r in result.rows]

    def rejects(e: float, sign: int) -> bool:
        if check.kind == "distance":  # a law: its scale moves
            return _rejects(check, prep, predicted, params, scale * (1 + sign * e), rate, q, used)
        return _rejects(check, prep, predicted + sign * e * ref, params, scale, rate, q, used)

    worst = 0.0
    for sign in (1, -1):
        if not rejects(_POWER_HIGH if sign > 0 else 0.999, sign):
            return math.inf
        lo, hi = math.log(_POWER_LOW), math.log(_POWER_HIGH)
        if rejects(_POWER_LOW, sign):
            continue
        for _ in range(_POWER_STEPS):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if rejects(math.exp(mid), sign) else (mid, hi)
        worst = max(worst, math.exp(hi))
    return max(worst, _POWER_LOW)


def wrong_values(name: str, value: float | int) -> list[float | int]:
    """``value`` times each of :data:`PARAMETER_FACTORS`, kept where inside the parameter's
    domain (integers rounded and moved by at least one; 0 moves to +-0.25)."""
    from gapverify.theory.parameters import PARAMETERS, ParameterError

    p = PARAMETERS[name]
    out = []
    for f in PARAMETER_FACTORS:
        if p.integer:
            c = max(int(round(value * f)), int(value) + 1) if f > 1 else min(int(round(value * f)), int(value) - 1)
        else:
            c = value * f if value else (f - 1)
        try:
            out.append(p.validate(c))
        except ParameterError:
            continue
    return out


def parameter_moves(claim: Claim, check: Check, value: float, params: Mapping[str, float],
                    predict) -> list[dict]:
    """How far each wrong parameter value (``x1.25``, ``x0.8``; ``+-0.25`` at 0) moves the
    prediction, relative to its reference scale: ``{"parameter", "direction" (up/down),
    "value", "moved"}`` for each that moves it at all (a prediction free of a parameter
    has nothing to tell)."""
    ref = _zero_reference(check, value, params)
    if not ref:
        return []
    out = []
    for par in claim.parameters:
        if par in claim.fixed_parameters:
            continue
        for wrong in wrong_values(par, params[par]):
            moved = abs(predict({**params, par: wrong}) - value) / ref
            if moved > 1e-12:
                out.append({"parameter": par, "direction": "up" if wrong > params[par] else "down",
                            "value": float(wrong), "moved": float(moved)})
    return out


def parameter_blind_spots(checks: Sequence[CheckResult]) -> list[str]:
    """The wrong parameter values that no check of a prediction can see, over all the
    cases judged: a wrong value is *seen* by a check that passed with power when it moves
    the prediction by more than that power (the same samples would reject it). A
    dependence on ``mu`` that is flat at ``mu = 0`` and steep at ``mu = 1.5`` is seen by
    the claim: the wrong statement fails at 1.5. ``[]`` when every one is seen."""
    seen, blind = set(), {}
    for c in checks:
        if c.verdict != Outcome.PASS or c.power is None:
            continue
        for m in c.parameter_moves or ():
            key = (m["parameter"], m["direction"])
            if m["moved"] > c.power:
                seen.add(key)
            elif key not in blind or m["moved"] > blind[key][0]:
                case = ", ".join(f"{k}={v:g}" for k, v in (c.case or {}).items())
                blind[key] = (m["moved"], f"{m['parameter']} = {m['value']:g} moves the "
                              f"prediction by {m['moved']:.2%}, within the power "
                              f"{power_text(c.power)} at {case}")
    return [text for key, (_, text) in blind.items() if key not in seen]


def power_text(power: float | None) -> str:
    """A check's power as a person reads it: the smallest relative error it rejects."""
    if power is None or math.isnan(power):
        return "n/a"
    return "none (>100%)" if math.isinf(power) else f"{100 * power:.2g}%"
