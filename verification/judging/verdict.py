r"""Judging stored measurements against a claim's statement, and the power of each check.

The rules (printed with every verdict table, see :data:`RULES`):

``exact``
    every replicate's residual is within the round-off tolerance stated by the check.
``limit`` / ``distance`` with a stated rate :math:`\alpha`
    *rate*: the exponent :math:`\hat\beta` of the mean absolute error
    :math:`\bar e_T \approx C T^{-\beta}` (weighted log-log fit) is not significantly
    below :math:`\alpha`: :math:`\hat\beta + q\,\mathrm{se}(\hat\beta) \ge \alpha`;
    a stated rate is a lower bound, set (and documented per check) below the local slopes
    measured at ``T <= 1024``;
    *limit*: the extrapolation :math:`\bar x_T = \hat L + c T^{-r}`,
    :math:`r = \max(\alpha, \hat\beta)`, reaches the claimed limit:
    :math:`|\hat L - L| \le \max(q\,\mathrm{se}(\hat L), \rho)` (for a distance,
    :math:`\hat L \le q\,\mathrm{se}`), :math:`\rho = P^*|\hat L|/4` the resolution:
    a quarter of the profile's power target (:func:`verification.judging.resolution.resolution`).
``limit`` with a rate range :math:`[r_{lo}, r_{hi}]`
    the finite-size model :math:`\bar x_T = L + c T^{-r}` with :math:`r` estimated in the
    range: the claimed limit lies in the profile-likelihood interval of :math:`L`
    (:func:`verification.judging.inference.profile_limit`), or within :math:`\rho` of
    its estimate.
``limit`` with a model family
    each finite-size model of the family (a correction of known form, e.g.
    :math:`1/\log^2 T`) is fitted; the claimed limit lies in the union of their intervals
    (:func:`verification.judging.inference.family_limit`), or within :math:`\rho` of
    the best member's estimate (not for the family that judges a subtracted
    Tracy-Widom offset).

Power. A check that passes is also asked how wrong its prediction would have to be for
the same samples to reject it: the *power* is the smallest relative error :math:`e` such
that the prediction times :math:`1 + e` and times :math:`1 - e` are both rejected (found
by bisection on the judging itself; exact for a rate-range check, whose interval does not
depend on the prediction; for a prediction equal to 0, relative to the check's
``zero_scale``). A check whose power is worse than its profile's target (5% quick, 3%
standard) *lacks power*: its prediction is not verified, and neither is the claim; this
holds for every asserted prediction, an empirical law's included.

A claim ends in one machine outcome (:func:`claim_verdict`): ``pass``, ``fail``,
``recorded`` (nothing asserted by design) or ``not verified`` with the most severe
reason of its predictions (:func:`claim_reason`: lacks power > not assessed > outside
domain); :mod:`verification.judging.outcomes` gives each its word and exit code.

:math:`q` is the quantile for the false-alarm level of a claim (default 1%) split by
Bonferroni over the statistical tests of that claim (rate, limit and the goodness of fit of
the finite-size model), across its parameter cases: a claim's verdict does not depend on
which other claims are in the run. It is read from Student's t at the degrees of freedom of
each standard error (Welch-Satterthwaite over a fit's sizes). A fit inflates its errors by
the Birge ratio when it fits; measurements that no member of the model fits fail the check
(``verification.judging.inference``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from gapverify.verification.claims.model import Check, Claim
from gapverify.verification.judging.checks import (
    DEFAULT_LEVEL, ROUNDOFF, CheckResult, ClaimResult, Measurements, SizeRow, Variant, _exact,
    _first_outside_envelope, _informative, _judge_rows, _matching_residual, _Outcome,
    _Prepared, _statistical, _values,
)
from gapverify.verification.judging.inference import estimator_weights, student_quantile
from gapverify.verification.judging.outcomes import Outcome
from gapverify.verification.judging.resolution import resolution
from gapverify.verification.judging.claim_verdict import (
    VERIFYING_STATUSES, asserted_predictions, claim_reason, claim_verdict,
)
from gapverify.verification.judging.power import (
    _POWER_HIGH, _POWER_LOW, _POWER_STEPS, PARAMETER_FACTORS, _rejects, _zero_reference,
    measure_power, parameter_blind_spots, parameter_moves, power_text, wrong_values,
)

#: every name this module defined before judging, power and the claim's verdict moved out
#: (:mod:`verification.judging.checks`, :mod:`verification.judging.power`,
#: :mod:`verification.judging.claim_verdict`): those re-exported from there
__all__ = ["Variant", "CheckResult", "ClaimResult", "judge_claim", "count_tests", "RULES",
           "DEFAULT_LEVEL", "ROUNDOFF", "claim_verdict", "claim_reason", "asserted_predictions",
           "VERIFYING_STATUSES", "power_class",
           "power_text", "family_label", "wrong_values", "PARAMETER_FACTORS", "RATE_SHIFT",
           "SizeRow", "Measurements", "measure_power", "parameter_moves",
           "parameter_blind_spots", "_values", "_matching_residual", "_exact", "_Prepared",
           "_Outcome", "_judge_rows", "_informative", "_statistical", "_rejects",
           "_zero_reference", "_first_outside_envelope", "_tests_in",
           "_POWER_LOW", "_POWER_HIGH", "_POWER_STEPS"]

#: A stated rate has power when the same samples reject the rate this much faster (the
#: audit's "rate +0.5" variant): otherwise the rate assertion could not tell a slowdown
RATE_SHIFT = 0.5
RULES = (
    "exact: every replicate within the stated round-off tolerance",
    "rate: fitted exponent beta of the mean |error| satisfies beta + q se >= stated rate "
    "(a stated rate is a lower bound, set below the local slopes measured at T <= 1024)",
    "limit: extrapolation x_T = L + c T^-r, r = max(stated rate, fitted beta), gives "
    "|L_hat - L| <= max(q se, rho)",
    "rate range: x_T = L + c T^-r with r estimated in the stated range; L in the profile-likelihood interval",
    "model family: finite-size models of known form each fitted; L in the union of their intervals",
    "resolution rho: a quarter of the profile's power target times |L_hat|; a rate range's or model "
    "family's interval is widened to at least L_hat +- rho (not the Tracy-Widom offset's judge)",
    "power: smallest relative error of the prediction the same samples reject (both signs); "
    "worse than the profile's target (quick 5%, standard 3%): lacks power, not verified",
    "goodness of fit: measurements that no member of the check's finite-size model fits fail it",
    "q: Student-t quantile (the standard error's degrees of freedom, Welch-Satterthwaite over a "
    "fit's sizes) at the false-alarm level of each claim, Bonferroni over that claim's tests",
)


def power_class(check: Check, params: Mapping[str, float] | None = None) -> str:
    """``exact``, ``rated`` (stated rate), ``rate range`` (estimated rate), ``model family``,
    ``recorded`` or ``outside domain`` (at ``params``; these two are the check's outcome,
    :attr:`Outcome.RECORDED` and :attr:`Outcome.OUTSIDE_DOMAIN`: it has no power to measure)."""
    if not check.asserted:
        return Outcome.RECORDED
    if params is not None and not check.applies(params):
        return Outcome.OUTSIDE_DOMAIN
    if check.kind in ("exact", "matching"):
        return "exact"
    if check.models:
        return "model family"
    return "rate range" if check.rate_range is not None else "rated"


def _tests_in(check: Check, sizes: int, params: Mapping[str, float] | None) -> int:
    cls = power_class(check, params)
    if cls in ("exact", Outcome.RECORDED, Outcome.OUTSIDE_DOMAIN):
        return 0
    if cls in ("rate range", "model family"):
        # the limit, and the goodness of fit of its finite-size model
        return 2 if sizes >= check.minimum_sizes else 0
    if sizes < 3:
        return 0
    # the rate and the limit, and a limit check's goodness of fit (a distance keeps two)
    return 3 if check.kind == "limit" else 2


def count_tests(claims: Sequence[Claim], sizes: Mapping[str, int],
                params: Mapping[str, Mapping[str, float]] | None = None) -> int:
    """Number of statistical tests of ``claims`` (one case each; ``params`` by claim id
    decides the checks' domains): the Bonferroni divisor."""
    return sum(_tests_in(ch, sizes[c.id], (params or {}).get(c.id)) for c in claims for ch in c.checks)


def family_label(models: Sequence[str], corrected: bool) -> str:
    """A model-family check's finite-size model in a table cell (terminal and LaTeX):
    ``theory's mean`` (subtracted), ``N models``, ``unbiased`` (the one model ``L``) or the
    one model's formula (``L + c/T``)."""
    if corrected:
        return "theory's mean"
    if len(models) > 1:
        return f"{len(models)} models"
    return "unbiased" if models[0].strip() == "L" else models[0]


def _judged_data(check: Check, data: Measurements, params: Mapping[str, float],
                 sampled_from: int) -> Measurements:
    """``data`` at the sizes the check judges at ``params`` (:meth:`Check.floor`)."""
    floor = check.floor(params, sampled_from)
    return {T: values for T, values in data.items() if T >= floor}


def judge_claim(claim: Claim, data: Measurements, params: Mapping[str, float], *,
                q: float, root_seed: int, variant: Variant = Variant(),
                power_target: float | None = None, measure: bool | None = None,
                only: Sequence[str] | None = None,
                parameter_coverage: bool = True,
                predictions: dict | None = None, planning: bool = False) -> ClaimResult:
    """Judge every check of ``claim`` on ``data`` (size -> list of replicate measurements).

    ``power_target`` (the profile's) turns a passing check whose power is worse into
    "lacks power"; ``measure`` (default: when judging the statement as stated) computes
    each check's power; ``only`` judges the checks of those predictions alone (the audit's
    one-prediction variants); ``parameter_coverage`` (see :func:`claim_verdict`);
    ``predictions``: a memo of predicted values that calls judging the same claims share
    (a run's cases and variants, an audit's probes: the sympy and quadrature work is done
    once per claim and parameter set); ``planning``: only what the sampling plans on
    (a limit check's centred power, a law's power; no parameter moves, no faster rate:
    :mod:`verification.running.rounds` judges every round so, then once in full)."""
    measure = variant.identity if measure is None else measure
    predicted = _Predicted(claim, params, variant, {} if predictions is None else predictions)
    results = [_judge_check(claim, check, data, params, predicted, q=q, variant=variant,
                            power_target=power_target, measure=measure, planning=planning)
               for check in claim.checks if only is None or check.prediction in only]
    return _claim_result(claim, results, data, params, q=q, root_seed=root_seed,
                         variant=variant, parameter_coverage=parameter_coverage)


@dataclass
class _Predicted:
    """A claim's predictions as ``variant`` states them at the case ``params``; the values
    at each set of theory parameters are computed once into ``cache`` (the memo that
    :func:`judge_claim`'s calls share), keyed by claim id and those parameters."""

    claim: Claim
    params: Mapping[str, float]
    variant: Variant
    cache: dict[tuple, dict[str, float]]

    def at(self, name: str, theory: Mapping[str, float]) -> float:
        """Prediction ``name`` of the theory at ``theory``, unscaled."""
        key = (self.claim.id, tuple(sorted(theory.items())))
        if key not in self.cache:
            self.cache[key] = self.claim.predict_numbers(theory)
        return self.cache[key][name]

    def __call__(self, name: str) -> tuple[float, dict]:
        """Prediction ``name`` as the variant states it, ``x s + o`` at the variant's
        parameters, and those parameters."""
        theory = self.variant.theory_parameters(name, self.params)
        value = self.at(name, theory)
        return value * self.variant.scale_for(name) + self.variant.offsets.get(name, 0.0), theory


def _base_fields(claim: Claim, check: Check, pred, params: Mapping[str, float],
                 theory: Mapping[str, float], value: float, rate: float | None,
                 power_target: float | None) -> dict:
    """The fields of a check's result (of prediction ``pred``) that do not depend on its
    judging."""
    return dict(claim=claim.id, label=check.label, statistic=check.statistic,
                kind=check.kind, status=pred.status, predicted=value, rate=rate,
                rate_note=check.rate_note or check.record_note, rate_status=check.rate_status,
                tolerance_note=check.tolerance_note, case=dict(params),
                prediction=check.prediction, power_class=power_class(check, params),
                power_target=power_target,
                zero_scale=float(check.zero_scale(theory)) if check.zero_scale else None,
                rate_range=list(check.rate_range) if check.rate_range else None,
                models=[m.formula for m in check.models] or None,
                corrected=check.correction is not None)


def _too_few_sizes(check: Check, judged: Measurements, params: Mapping[str, float],
                   base: dict, sampled_from: int) -> CheckResult:
    """A check whose smallest judged size leaves this run too few sizes: outside domain."""
    floor = check.floor(params, sampled_from)
    own = check.floor(params) >= floor  # the check's own min_size sets it, not the claim's
    why = (check.min_size_note or "judged from a smallest size") if own else (
        "judged from the smallest size its claim's profiles sample, where its finite-size "
        "model was calibrated")
    return CheckResult(**base, verdict=Outcome.OUTSIDE_DOMAIN, rows=[], reason=(
        f"{why}: judged at T >= {floor}, where this run has {len(judged)} size(s) and the "
        f"check needs {check.minimum_sizes}"))


def _judge_check(claim: Claim, check: Check, data: Measurements, params: Mapping[str, float],
                 predicted: _Predicted, *, q: float, variant: Variant,
                 power_target: float | None, measure: bool,
                 planning: bool = False) -> CheckResult:
    """One check of ``claim`` at the case ``params``: outside its domain, or judged at the
    sizes of its domain (an exact check's residuals; a statistical check's tests, with its
    power when ``measure``), then held to ``power_target``."""
    pred = claim.prediction(check.prediction)
    own, theory = predicted(check.prediction)
    # a check relative to another prediction: P / P_other^k (that one as the variant has it)
    value = check.relative_value(own, lambda other: predicted(other)[0])
    stated_rate = check.rate_at(theory) if check.rate is not None else None
    rate = None if stated_rate is None else stated_rate + variant.rate_shift_for(check.prediction)
    base = _base_fields(claim, check, pred, params, theory, value, rate, power_target)
    if not check.applies(params):
        return CheckResult(**base, verdict=Outcome.OUTSIDE_DOMAIN, rows=[],
                           reason=check.domain_note or "outside the check's domain")
    sampled_from = claim.sampled_from
    judged = _judged_data(check, data, params, sampled_from)  # its (params, T) domain
    if len(judged) < min(len(data), check.minimum_sizes):
        return _too_few_sizes(check, judged, params, base, sampled_from)
    # a law's scale (a spectrum's too) moves with the variant's parameters and scale
    scale = variant.scale_for(check.prediction)
    prep = None
    if check.kind in ("exact", "matching"):
        # a prediction of 0 is measured against its zero scale at the theory's parameters
        res = _exact(check, judged, scale if check.kind == "matching" else value, base,
                     params=theory)
    else:
        prep = _Prepared(check, judged)
        res = _statistical(check, prep, value, theory, scale, rate, q, base)
        # read from the samples: a variant that moves the prediction keeps the resolution
        rho = 0.0 if planning else resolution(check, res, power_target)
        if rho > 0 and res.verdict in (Outcome.PASS, Outcome.FAIL):
            # judged again at the resolution a quarter of the power target sets (its rule)
            prep.resolution = rho
            res = _statistical(check, prep, value, theory, scale, rate, q, base, rho)
        if measure and power_target is not None:
            moved = _centred(check, prep, res, value, theory, scale, rate)
            res.centred_power = _centred_power(check, moved, value, theory, scale, rate, q, base)
            res.centred_faster = _centred_faster(check, moved, value, theory, scale, rate, q, base)
        # planning reads the centred power where there is one, else the measured power
        if (measure and res.verdict == Outcome.PASS and res.power is None
                and not (planning and res.centred_power is not None)):
            res.power = measure_power(check, prep, res, value, theory, scale, rate, q)
    # every asserted check must pass with power (an empirical law's too: a law a few
    # percent off that passes as well is not reproduced); a theorem's, derived or
    # conjecture's must also see every wrong parameter and the stated rate
    needs_power = (res.verdict == Outcome.PASS and power_target is not None
                   and res.power is not None and pred.asserted and not planning)
    if needs_power and not res.power <= power_target:
        res.verdict = Outcome.LACKS_POWER
        res.reason += (f"; power {power_text(res.power)} is worse than the target "
                       f"{power_target:.0%} at T <= {max(judged)}")
    elif needs_power and pred.status in VERIFYING_STATUSES and check.kind != "matching":
        # evaluated at a wrong parameter, the prediction must move by more than the
        # power at some case of the claim (claim_verdict); it alone moves (a relative
        # check's divisor stays)
        res.parameter_moves = parameter_moves(
            claim, check, value, theory,
            lambda p, n=check.prediction, r=value / own if check.relative_to else 1.0:
            r * predicted.at(n, p))
        if rate is not None and res.power_class != "exact":
            _reject_faster_rate(res, check, prep, value, theory, scale, rate, q, base, max(judged))
    return res


def _centred(check: Check, prep: _Prepared, res: CheckResult, value: float,
             theory: Mapping[str, float], scale: float, rate: float | None) -> _Prepared | None:
    """``res``'s samples moved so that their estimate sits at the prediction (every value
    plus ``L - L_hat``): data whose offset from the prediction is removed, so that what is
    judged on them is a function of their precision and curve alone. A limit check's only
    (a law has no location to move); ``None`` otherwise."""
    if (check.kind != "limit" or res.limit_hat is None or not math.isfinite(res.limit_hat)
            or not res.rows):
        return None
    estimate = res.limit_hat  # a rate range's, a model family's: moves with the samples
    if check.rate_range is None and not check.models and rate is not None:
        # a rated check extrapolates at max(rate, fitted), which a move changes: take the
        # estimate at the stated rate, which moves with the samples exactly
        estimate = _at_stated_rate(check, prep, value, theory, scale, rate)
    return prep.moved(value - estimate)


def _centred_power(check: Check, moved: _Prepared | None, value: float,
                   theory: Mapping[str, float], scale: float, rate: float | None, q: float,
                   base: dict) -> float | None:
    """The judging's own power search on the centred samples (:func:`_centred`)."""
    if moved is None:
        return None
    again = _statistical(check, moved, value, theory, scale, rate, q, base)
    if again.verdict != Outcome.PASS:
        return None
    return measure_power(check, moved, again, value, theory, scale, rate, q)


def _centred_faster(check: Check, moved: _Prepared | None, value: float,
                    theory: Mapping[str, float], scale: float, rate: float | None, q: float,
                    base: dict) -> list[float] | None:
    """A rated check's centred samples (:func:`_centred`) judged at the rate
    :data:`RATE_SHIFT` faster: ``[|L_hat - L|, t se, se_D]`` of that extrapolation,
    ``se_D`` the standard error of the gap (:func:`_difference_se`). Where the
    truth decays more slowly than the faster rate, extrapolating at it leaves a bias that
    its limit test sees; the gap is the samples' own (their estimate at the stated rate
    sits at ``L``), so planning on it reads no offset from the prediction."""
    if moved is None or rate is None or check.rate_range is not None or check.models:
        return None
    faster = _statistical(check, moved, value, theory, scale, rate + RATE_SHIFT, q, base)
    if (faster.limit_hat is None or faster.limit_se is None or faster.limit_dof is None
            or not math.isfinite(faster.limit_hat) or not math.isfinite(faster.limit_se)):
        return None
    fast = max(rate + RATE_SHIFT, faster.beta if faster.beta is not None else -math.inf)
    return [abs(faster.limit_hat - value),
            student_quantile(q, faster.limit_dof) * faster.limit_se,
            _difference_se(faster.rows, rate, fast)]


def _difference_se(rows: Sequence[SizeRow], rate: float, fast: float) -> float:
    r"""Standard error of :math:`\hat L_{fast} - \hat L_{rate}`, the difference of two
    weighted least-squares intercepts of the same means (weights :math:`1/\mathrm{se}_T^2`):
    :math:`(\sum_T (w^{fast}_T - w^{rate}_T)^2 \mathrm{se}_T^2)^{1/2}`. The gap between the two
    extrapolations is itself an estimate, noisy at a pilot's few draws."""
    import numpy as np

    T = np.array([r.T for r in rows], float)
    se = np.array([r.se for r in rows], float)
    if T.size < 3 or not np.all(np.isfinite(se) & (se > 0)):
        return math.inf
    one = np.ones_like(T)  # weights n / sd^2 with n = 1, sd = se: 1 / se^2
    w = estimator_weights(T ** -fast, one, se) - estimator_weights(T ** -rate, one, se)
    return float(np.sqrt(np.sum(w ** 2 * se ** 2)))


def _at_stated_rate(check: Check, prep: _Prepared, value: float, theory: Mapping[str, float],
                    scale: float, rate: float) -> float:
    """The limit extrapolated from ``x_T = L + c T^-rate`` at the stated rate (after the
    theory's finite-size term, when the check subtracts one)."""
    import numpy as np

    from gapverify.verification.judging.inference import extrapolate_limit

    rows = [prep.mean_rows(T, value, theory, scale) for T in prep.sizes]
    T = np.array([r.T for r in rows], dtype=float)
    means = np.array([r.mean for r in rows])
    if check.correction is not None:
        means = means - np.asarray(check.correction(theory, T.astype(int)), dtype=float)
    n = np.array([r.n for r in rows], dtype=float)
    return float(extrapolate_limit(T, means, np.array([r.se for r in rows]), rate, n).a)


def _reject_faster_rate(res: CheckResult, check: Check, prep: _Prepared, value: float,
                        theory: Mapping[str, float], scale: float, rate: float, q: float,
                        base: dict, T_max: int) -> None:
    """The stated rate must have power too: ``res`` lacks power unless the same samples
    reject the rate :data:`RATE_SHIFT` faster."""
    faster = _statistical(check, prep, value, theory, scale, rate + RATE_SHIFT, q, base)
    if faster.verdict != Outcome.FAIL:
        res.verdict = Outcome.LACKS_POWER
        res.reason += (f"; a rate {RATE_SHIFT:g} faster than stated "
                       f"({rate + RATE_SHIFT:.3g}) is not rejected at T <= {T_max}")


def _claim_result(claim: Claim, results: list[CheckResult], data: Measurements,
                  params: Mapping[str, float], *, q: float, root_seed: int, variant: Variant,
                  parameter_coverage: bool) -> ClaimResult:
    """The claim's result from its checks' results (:func:`claim_verdict`,
    :func:`claim_reason`)."""
    sizes = sorted(data)
    out = ClaimResult(claim=claim.id, status=claim.status, verdict=Outcome.PASS, checks=results,
                      parameters=dict(params), sizes=sizes,
                      replicates=min(len(v) for v in data.values()), root_seed=root_seed,
                      variant=variant.name, q=q, experiment=claim.experiment)
    out.verdict, out.unverified, out.power_summary = claim_verdict(
        claim, results, max(sizes), parameter_coverage=parameter_coverage)
    out.reason = claim_reason(out.verdict, out.unverified)
    return out
