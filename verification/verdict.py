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
    :math:`|\hat L - L| \le q\,\mathrm{se}(\hat L)` (for a distance, :math:`\hat L \le q\,\mathrm{se}`).
``limit`` with a rate range :math:`[r_{lo}, r_{hi}]`
    the finite-size model :math:`\bar x_T = L + c T^{-r}` with :math:`r` estimated in the
    range: the claimed limit lies in the profile-likelihood interval of :math:`L`
    (:func:`verification.inference.profile_limit`).
``limit`` with a model family
    each finite-size model of the family (a correction of known form, e.g.
    :math:`1/\log^2 T`) is fitted; the claimed limit lies in the union of their intervals
    (:func:`verification.inference.family_limit`).

Power. A check that passes is also asked how wrong its prediction would have to be for
the same samples to reject it: the *power* is the smallest relative error :math:`e` such
that the prediction times :math:`1 + e` and times :math:`1 - e` are both rejected (found
by bisection on the judging itself; exact for a rate-range check, whose interval does not
depend on the prediction; for a prediction equal to 0, relative to the check's
``zero_scale``). A check whose power is worse than its profile's target (5% quick, 3%
standard) *lacks power*: its prediction is not verified, and neither is the claim.

:math:`q` is the normal quantile for the false-alarm level of a claim (default 1%) split by
Bonferroni over the statistical tests of that claim, across its parameter cases: a claim's
verdict does not depend on which other claims are in the run. Fits inflate their errors by
the Birge ratio (``verification.inference``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from verification.claims import Check, Claim
from verification.inference import (
    extrapolate_limit,
    family_limit,
    power_law_fit,
    profile_limit,
    summarise,
)

__all__ = ["Variant", "CheckResult", "ClaimResult", "judge_claim", "count_tests", "RULES",
           "DEFAULT_LEVEL", "ROUNDOFF", "claim_verdict", "VERIFYING_STATUSES", "power_class",
           "power_text", "family_label", "wrong_values", "PARAMETER_FACTORS", "RATE_SHIFT"]

DEFAULT_LEVEL = 0.01
#: A limit statistic whose every replicate equals the prediction to this relative
#: accuracy is exact at those parameters (1000 ulps of accumulated round-off).
ROUNDOFF = 1e3 * float(np.finfo(float).eps)
#: Predictions of these statuses must be verified with power for a claim to be verified.
VERIFYING_STATUSES = ("theorem", "derived", "conjecture")
#: The wrong parameter values a prediction must be told from (``value`` times these).
PARAMETER_FACTORS = (1.25, 0.8)
#: A stated rate has power when the same samples reject the rate this much faster (the
#: audit's "rate +0.5" variant): otherwise the rate assertion could not tell a slowdown
RATE_SHIFT = 0.5
#: Bisection range of the power search (relative error).
_POWER_LOW, _POWER_HIGH, _POWER_STEPS = 1e-4, 1.0, 14
RULES = (
    "exact: every replicate within the stated round-off tolerance",
    "rate: fitted exponent beta of the mean |error| satisfies beta + q se >= stated rate "
    "(a stated rate is a lower bound, set below the local slopes measured at T <= 1024)",
    "limit: extrapolation x_T = L + c T^-r, r = max(stated rate, fitted beta), gives |L_hat - L| <= q se",
    "rate range: x_T = L + c T^-r with r estimated in the stated range; L in the profile-likelihood interval",
    "model family: finite-size models of known form each fitted; L in the union of their intervals",
    "power: smallest relative error of the prediction the same samples reject (both signs); "
    "worse than the profile's target (quick 5%, standard 3%): lacks power, not verified",
    "q: normal quantile at the false-alarm level of each claim, Bonferroni over that claim's tests",
)

Measurements = Mapping[int, Sequence[Mapping[str, object]]]  # size -> replicates


@dataclass(frozen=True)
class Variant:
    """A (possibly wrong) version of a claim's statement, judged on the same data.

    Global changes: ``scale`` multiplies every predicted limit (``--perturb EPS`` is
    ``scale = 1 + EPS``; for a law, its scale); ``parameters`` evaluates the theory at
    other parameter values than those sampled; ``rate_shift`` is added to every stated
    rate. Changes to one prediction alone (the rest of the statement unchanged):
    ``scales``, ``prediction_parameters`` and ``rate_shifts``, keyed by prediction name.
    """

    name: str = "as stated"
    scale: float = 1.0
    parameters: Mapping[str, float] = field(default_factory=dict)
    rate_shift: float = 0.0
    scales: Mapping[str, float] = field(default_factory=dict)
    prediction_parameters: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    rate_shifts: Mapping[str, float] = field(default_factory=dict)
    #: added to one prediction after scaling: a prediction equal to 0 made wrong
    offsets: Mapping[str, float] = field(default_factory=dict)

    @property
    def identity(self) -> bool:
        return (self.scale == 1.0 and not self.parameters and not self.rate_shift
                and all(s == 1.0 for s in self.scales.values())
                and not any(self.offsets.values())
                and not self.prediction_parameters and not any(self.rate_shifts.values()))

    def scale_for(self, prediction: str) -> float:
        return self.scale * self.scales.get(prediction, 1.0)

    def rate_shift_for(self, prediction: str) -> float:
        return self.rate_shift + self.rate_shifts.get(prediction, 0.0)

    def theory_parameters(self, prediction: str, params: Mapping[str, float]) -> dict:
        out = dict(params)
        out.update(self.parameters)
        out.update(self.prediction_parameters.get(prediction, {}))
        return out


@dataclass
class SizeRow:
    T: int
    n: int
    mean: float
    se: float
    error: float
    error_se: float


@dataclass
class CheckResult:
    claim: str
    label: str
    statistic: str
    kind: str
    status: str
    predicted: float
    rate: float | None
    verdict: str  # pass / fail / lacks power / recorded / outside domain / not assessed
    reason: str
    rows: list[SizeRow]
    beta: float | None = None
    beta_se: float | None = None
    limit_hat: float | None = None
    limit_se: float | None = None
    failing_size: int | None = None
    failing_replicate: int | None = None
    rate_note: str = ""
    rate_status: str = ""
    tolerance_note: str = ""
    case: dict | None = None  # the parameters this check was judged at
    reproduce: str = ""  # one command that replays a failure
    prediction: str = ""
    power_class: str = ""  # exact / rated / rate range / recorded / outside domain
    power: float | None = None  # smallest relative error rejected (both signs); inf: none
    power_target: float | None = None
    rate_range: list[float] | None = None
    limit_interval: list[float] | None = None  # accepted limits (rate-range, model-family checks)
    models: list[str] | None = None  # a model-family check's members (formulas)
    corrected: bool = False  # the theory's finite-size mean was subtracted before fitting
    #: how far each wrong parameter value moves the prediction (:func:`parameter_moves`)
    parameter_moves: list[dict] | None = None

    @property
    def powered(self) -> bool:
        return self.power is not None and self.power_target is not None and self.power <= self.power_target


@dataclass
class ClaimResult:
    claim: str
    status: str
    verdict: str  # pass / fail / flaky / not verified / not assessed
    checks: list[CheckResult]
    parameters: dict
    sizes: list[int]
    replicates: int
    root_seed: int
    variant: str = "as stated"
    replay: dict | None = None
    q: float = 0.0  # the Bonferroni quantile the verdicts used
    experiment: str = ""  # the store key of the measurements (claims may share one)
    cases: list[dict] | None = None  # parameters of every case, when a claim sweeps several
    unverified: list[str] = field(default_factory=list)  # why the claim is not verified
    power_summary: str = ""  # "k of n predictions verified with power"
    level: float = DEFAULT_LEVEL
    tests: int = 0

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.verdict == "fail"]


def power_class(check: Check, params: Mapping[str, float] | None = None) -> str:
    """``exact``, ``rated`` (stated rate), ``rate range`` (estimated rate), ``model family``,
    ``recorded`` or ``outside domain`` (at ``params``)."""
    if not check.asserted:
        return "recorded"
    if params is not None and not check.applies(params):
        return "outside domain"
    if check.kind in ("exact", "matching"):
        return "exact"
    if check.models:
        return "model family"
    return "rate range" if check.rate_range is not None else "rated"


def _tests_in(check: Check, sizes: int, params: Mapping[str, float] | None) -> int:
    cls = power_class(check, params)
    if cls in ("exact", "recorded", "outside domain"):
        return 0
    if cls in ("rate range", "model family"):
        return 1 if sizes >= check.minimum_sizes else 0
    return 2 if sizes >= 3 else 0


def count_tests(claims: Sequence[Claim], sizes: Mapping[str, int],
                params: Mapping[str, Mapping[str, float]] | None = None) -> int:
    """Number of statistical tests of ``claims`` (one case each; ``params`` by claim id
    decides the checks' domains): the Bonferroni divisor."""
    return sum(_tests_in(ch, sizes[c.id], (params or {}).get(c.id)) for c in claims for ch in c.checks)


def _values(reps: Sequence[Mapping[str, object]], key: str) -> np.ndarray:
    return np.array([float(r[key]) for r in reps])


def _matching_residual(measured: np.ndarray, predicted: np.ndarray) -> float:
    # max_i |mu_i - lambda_pi(i)| for the assignment pi minimising the total distance
    cost = np.abs(np.asarray(measured)[:, None] - np.asarray(predicted)[None, :])
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].max())


def _exact(check: Check, data: Measurements, predicted: float, base: dict) -> CheckResult:
    rows, fail_T, fail_r, worst = [], None, None, 0.0
    for T in sorted(data):
        residuals = []
        for r, m in enumerate(data[T]):
            if check.kind == "matching":
                res = _matching_residual(np.asarray(m[check.statistic]),
                                         check.predicted_spectrum(m, predicted))
            else:
                res = abs(float(m[check.statistic]) - predicted)
            residuals.append(res)
            tol = check.tolerance(T, m)
            worst = max(worst, res + tol)
            if res > tol and fail_T is None:
                fail_T, fail_r = T, r
        residuals = np.array(residuals)
        rows.append(SizeRow(T, len(residuals), float(residuals.max()), 0.0,
                            float(residuals.max()), 0.0))
    verdict = "fail" if fail_T is not None else "pass"
    reason = (f"residual above tolerance ({check.tolerance_note}) at T={fail_T}, replicate {fail_r}"
              if fail_T else f"max residual {max(r.error for r in rows):.2e} within tolerance "
                             f"({check.tolerance_note})")
    # |x - L(1 + e)| >= e|L| - |x - L| exceeds the tolerance once e|L| > residual + tolerance;
    # a spectrum's scale moves its largest eigenvalue (|lambda_1| = 1) by e
    scale = 1.0 if check.kind == "matching" else abs(predicted)
    power = worst / scale if scale else math.inf
    return CheckResult(**base, verdict=verdict, reason=reason, rows=rows,
                       failing_size=fail_T, failing_replicate=fail_r, power=power)


class _Prepared:
    """One check's measurements arranged for repeated judging (power search): the values
    of a limit statistic, or each replicate's sorted sample for a distance, per size."""

    def __init__(self, check: Check, data: Measurements):
        self.check = check
        self.sizes = sorted(data)
        if check.kind == "distance":
            self.samples = {T: [np.sort(np.asarray(m[check.statistic], dtype=float)) for m in data[T]]
                            for T in self.sizes}
        else:
            self.values = {T: _values(data[T], check.statistic) for T in self.sizes}

    def errors(self, T: int, predicted: float, params, scale: float) -> np.ndarray:
        if self.check.kind == "distance":
            cdf = self.check.cdf(params, scale)
            out = []
            for x in self.samples[T]:
                # Kolmogorov distance of a sorted sample to a continuous CDF
                F, n = cdf(x), x.size
                i = np.arange(1, n + 1)
                out.append(max(float(np.max(i / n - F)), float(np.max(F - (i - 1) / n))))
            return np.array(out)
        return np.abs(self.values[T] - predicted)

    def mean_rows(self, T: int, predicted: float, params, scale: float) -> SizeRow:
        e = self.errors(T, predicted, params, scale)
        x = e if self.check.kind == "distance" else self.values[T]
        sx, se_ = summarise(T, x), summarise(T, e)
        return SizeRow(T, sx.n, sx.mean, sx.se, se_.mean, se_.se)


@dataclass
class _Outcome:
    ok: bool
    reason: str
    beta: float | None = None
    beta_se: float | None = None
    limit_hat: float | None = None
    limit_se: float | None = None
    rate: float | None = None
    failing: int | None = None
    interval: tuple[float, float] | None = None


def _judge_rows(check: Check, rows: list[SizeRow], predicted: float, rate: float | None,
                q: float, params: Mapping[str, float] | None = None) -> _Outcome:
    """The rate and limit tests of a rated check, or the profile interval of a rate-range
    check, on the per-size summaries ``rows``."""
    Ts = np.array([r.T for r in rows], dtype=float)
    err = np.array([r.error for r in rows])
    err_se = np.array([r.error_se for r in rows])
    means = np.array([r.mean for r in rows])
    mean_se = np.array([r.se for r in rows])
    if check.models:
        if check.correction is not None:  # the theory's E x_T - L, known at every size
            means = means - np.asarray(check.correction(params, Ts.astype(int)), dtype=float)
        fam = family_limit(Ts, means, mean_se, check.models, q)
        ok = fam.accepts(predicted)
        members = ", ".join(f"{name} {L:.5g}" for name, L, _ in fam.fits)
        reason = (f"{len(fam.fits)} finite-size models ({members}): L in "
                  f"[{fam.low:.5g}, {fam.high:.5g}]" + ("" if ok else f", which misses {predicted:.5g}"))
        return _Outcome(ok, reason, limit_hat=fam.L, limit_se=fam.se_L,
                        failing=None if ok else int(Ts[-1]), interval=(fam.low, fam.high))
    if check.rate_range is not None:
        prof = profile_limit(Ts, means, mean_se, check.rate_range, q)
        ok = prof.accepts(predicted)
        reason = (f"x_T = L + c T^-r, r in [{prof.rates[0]:.2f}, {prof.rates[1]:.2f}] "
                  f"(stated range [{check.rate_range[0]:.3g}, {check.rate_range[1]:.3g}]): "
                  f"L in [{prof.low:.5g}, {prof.high:.5g}]"
                  + ("" if ok else f", which misses {predicted:.5g}"))
        return _Outcome(ok, reason, limit_hat=prof.L, limit_se=prof.se_L,
                        failing=None if ok else int(Ts[-1]), interval=(prof.low, prof.high))
    fit = power_law_fit(Ts, err, err_se)
    beta = -fit.b
    rate_ok = beta + q * fit.se_b >= rate
    target = 0.0 if check.kind == "distance" else predicted
    # extrapolate at the stated rate, or at the fitted one where the data converge faster
    # (a stated rate is a lower bound; a faster truth would bias a fixed-rate intercept)
    ext = extrapolate_limit(Ts, means, mean_se, max(rate, beta))
    limit_ok = (ext.a <= q * ext.se_a if check.kind == "distance"
                else abs(ext.a - target) <= q * ext.se_a)
    reasons = []
    if not rate_ok:
        reasons.append(f"error decays like T^(-beta), beta = {beta:.2f}±{fit.se_b:.2f}, "
                       f"slower than the stated rate {rate:.3g}")
    if not limit_ok:
        reasons.append(f"extrapolated limit {ext.a:.5g}±{ext.se_a:.2g} misses {target:.5g}")
    ok = rate_ok and limit_ok
    reason = "; ".join(reasons) or (f"error ~ T^(-beta), beta = {beta:.2f}±{fit.se_b:.2f} "
                                    f"(stated {rate:.3g}); limit {ext.a:.5g}±{ext.se_a:.2g}")
    failing = None if ok else _first_outside_envelope(Ts, err, err_se, rate, q)
    return _Outcome(ok, reason, beta, fit.se_b, ext.a, ext.se_a, rate, failing)


def _informative(check: Check, rows: list[SizeRow], predicted: float) -> np.ndarray:
    """Sizes whose mean error is above round-off: a statistic equal to its limit to
    round-off carries no rate (the gradient identity at depth 1 is exact for every draw;
    sr(Sigma_l) - 1 ~ T^(1-2l) reaches double precision by T ~ 100 at depth 4)."""
    if check.kind != "limit":
        return np.ones(len(rows), bool)
    floor = ROUNDOFF * max(1.0, abs(predicted))
    return np.array([r.error > floor for r in rows])


def _statistical(check: Check, prep: _Prepared, predicted: float, params: Mapping[str, float],
                 scale: float, rate: float | None, q: float, base: dict) -> CheckResult:
    rows = [prep.mean_rows(T, predicted, params, scale) for T in prep.sizes]
    result = CheckResult(**base, verdict="pass", reason="", rows=rows)
    if not check.asserted:
        result.verdict, result.reason = "recorded", check.record_note or check.rate_note
        return result
    keep = _informative(check, rows, predicted)
    used = [r for r, k in zip(rows, keep) if k]
    if not keep.all():
        first = rows[int(np.flatnonzero(~keep)[0])].T
        if len(used) < 3:
            floor = ROUNDOFF * max(1.0, abs(predicted))
            result.reason = (f"equal to the limit to round-off (mean error <= {floor:.1e}) "
                             f"from T = {first} on: exact there, faster than any rate")
            result.power_class = "exact"
            result.power = (floor + max(r.error for r in rows)) / max(abs(predicted), 1e-300)
            return result
        result.reason = f"sizes at round-off from T = {first} excluded; "
    needed = check.minimum_sizes
    if len(used) < needed:
        result.verdict = "not assessed"
        what = "model family" if check.models else "rate range" if check.rate_range else "rate"
        result.reason = f"a {what} needs at least {needed} sizes"
        return result
    out = _judge_rows(check, used, predicted, rate, q, params)
    result.verdict = "pass" if out.ok else "fail"
    result.reason += out.reason
    result.beta, result.beta_se = out.beta, out.beta_se
    result.limit_hat, result.limit_se = out.limit_hat, out.limit_se
    result.failing_size = out.failing
    if out.interval is not None and all(map(math.isfinite, out.interval)):
        result.limit_interval = [float(out.interval[0]), float(out.interval[1])]
    return result


def _rejects(check: Check, prep: _Prepared, value: float, params, scale: float,
             rate: float | None, q: float, sizes_used: list[int]) -> bool:
    rows = [prep.mean_rows(T, value, params, scale) for T in sizes_used]
    try:
        return not _judge_rows(check, rows, value, rate, q, params).ok
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
        # rate range: the interval does not move with the prediction
        low, high = result.limit_interval
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
    from theory.parameters import PARAMETERS, ParameterError

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
        if c.verdict != "pass" or c.power is None:
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


def _first_outside_envelope(T, err, se, rate, q) -> int:
    """Smallest size whose error exceeds the stated-rate envelope anchored at the smallest
    size: :math:`\\bar e_i > \\bar e_1 (T_i/T_1)^{-\\alpha} + q\\,\\mathrm{se}`."""
    for i in range(1, len(T)):
        shrink = (T[i] / T[0]) ** (-rate)
        if err[i] > err[0] * shrink + q * math.hypot(se[i], se[0] * shrink):
            return int(T[i])
    return int(T[-1])


def family_label(models: Sequence[str], corrected: bool) -> str:
    """A model-family check's finite-size model in a table cell (terminal and LaTeX):
    ``theory's mean`` (subtracted), ``N models``, ``unbiased`` (the one model ``L``) or the
    one model's formula (``L + c/T``)."""
    if corrected:
        return "theory's mean"
    if len(models) > 1:
        return f"{len(models)} models"
    return "unbiased" if models[0].strip() == "L" else models[0]


def power_text(power: float | None) -> str:
    """A check's power as a person reads it: the smallest relative error it rejects."""
    if power is None or math.isnan(power):
        return "n/a"
    return "none (>100%)" if math.isinf(power) else f"{100 * power:.2g}%"


def judge_claim(claim: Claim, data: Measurements, params: Mapping[str, float], *,
                q: float, root_seed: int, variant: Variant = Variant(),
                power_target: float | None = None, measure: bool | None = None,
                only: Sequence[str] | None = None,
                parameter_coverage: bool = True,
                predictions: dict | None = None) -> ClaimResult:
    """Judge every check of ``claim`` on ``data`` (size -> list of replicate measurements).

    ``power_target`` (the profile's) turns a passing check whose power is worse into
    "lacks power"; ``measure`` (default: when judging the statement as stated) computes
    each check's power; ``only`` judges the checks of those predictions alone (the audit's
    one-prediction variants); ``parameter_coverage`` (see :func:`claim_verdict`);
    ``predictions``: a memo of predicted values that calls judging the same claims share
    (a run's cases and variants, an audit's probes: the sympy and quadrature work is done
    once per claim and parameter set)."""
    measure = variant.identity if measure is None else measure
    cache: dict[tuple, dict[str, float]] = {} if predictions is None else predictions

    def predicted_for_params(name: str, theory: Mapping[str, float]) -> float:
        key = (claim.id, tuple(sorted(theory.items())))
        if key not in cache:
            cache[key] = claim.predict_numbers(theory)
        return cache[key][name]

    def predicted_for(name: str) -> tuple[float, dict]:
        theory = variant.theory_parameters(name, params)
        value = predicted_for_params(name, theory)
        return value * variant.scale_for(name) + variant.offsets.get(name, 0.0), theory

    results = []
    for check in claim.checks:
        if only is not None and check.prediction not in only:
            continue
        pred = claim.prediction(check.prediction)
        value, theory = predicted_for(check.prediction)
        stated_rate = check.rate_at(theory) if check.rate is not None else None
        rate = None if stated_rate is None else stated_rate + variant.rate_shift_for(check.prediction)
        base = dict(claim=claim.id, label=check.label, statistic=check.statistic,
                    kind=check.kind, status=pred.status, predicted=value, rate=rate,
                    rate_note=check.rate_note or check.record_note, rate_status=check.rate_status,
                    tolerance_note=check.tolerance_note, case=dict(params),
                    prediction=check.prediction, power_class=power_class(check, params),
                    power_target=power_target,
                    rate_range=list(check.rate_range) if check.rate_range else None,
                    models=[m.formula for m in check.models] or None,
                    corrected=check.correction is not None)
        if not check.applies(params):
            results.append(CheckResult(**base, verdict="outside domain", rows=[],
                                       reason=check.domain_note or "outside the check's domain"))
            continue
        if check.kind in ("exact", "matching"):
            scale = variant.scale_for(check.prediction) if check.kind == "matching" else 1.0
            res = _exact(check, data, scale if check.kind == "matching" else value, base)
        else:
            # a law's scale moves with the variant's parameters and scale
            scale = variant.scale_for(check.prediction)
            prep = _Prepared(check, data)
            res = _statistical(check, prep, value, theory, scale, rate, q, base)
            if measure and res.verdict == "pass" and res.power is None:
                res.power = measure_power(check, prep, res, value, theory, scale, rate, q)
        needs_power = (res.verdict == "pass" and power_target is not None and res.power is not None
                       and pred.status in VERIFYING_STATUSES and pred.asserted)
        if needs_power and not res.power <= power_target:
            res.verdict = "lacks power"
            res.reason += (f"; power {power_text(res.power)} is worse than the target "
                           f"{power_target:.0%} at T <= {max(data)}")
        elif needs_power and check.kind != "matching":
            # evaluated at a wrong parameter, the prediction must move by more than the
            # power at some case of the claim (claim_verdict)
            res.parameter_moves = parameter_moves(
                claim, check, value, theory,
                lambda p, n=check.prediction: predicted_for_params(n, p))
            if rate is not None and res.power_class != "exact":
                # the stated rate must have power too: the rate RATE_SHIFT faster fails
                faster = _statistical(check, prep, value, theory, scale, rate + RATE_SHIFT, q, base)
                if faster.verdict != "fail":
                    res.verdict = "lacks power"
                    res.reason += (f"; a rate {RATE_SHIFT:g} faster than stated "
                                   f"({rate + RATE_SHIFT:.3g}) is not rejected at T <= {max(data)}")
        results.append(res)
    sizes = sorted(data)
    out = ClaimResult(claim=claim.id, status=claim.status, verdict="pass", checks=results,
                      parameters=dict(params), sizes=sizes,
                      replicates=min(len(v) for v in data.values()), root_seed=root_seed,
                      variant=variant.name, q=q, experiment=claim.experiment)
    out.verdict, out.unverified, out.power_summary = claim_verdict(
        claim, results, max(sizes), parameter_coverage=parameter_coverage)
    return out


def claim_verdict(claim: Claim, checks: Sequence[CheckResult], T_max: int, *,
                  parameter_coverage: bool = True) -> tuple[str, list[str], str]:
    """The claim's verdict from its checks (of one case or of all its cases):

    * ``fail`` if an asserted check failed;
    * ``not verified`` if a theorem, derived or conjecture prediction has no check that
      passed with power (each of its judged checks must pass with power, and at least
      one must be judged, and every wrong parameter value that moves it must be seen at
      some case: :func:`parameter_blind_spots`; ``parameter_coverage=False`` leaves
      that to the audit's parameter variants), with the reasons;
    * ``pass`` otherwise (``not assessed`` when nothing was judged).

    Also "k of n predictions verified with power"."""
    if any(c.verdict == "fail" for c in checks):
        verdict = "fail"
    else:
        verdict = None
    needed = [p for p in claim.predictions if p.asserted and p.status in VERIFYING_STATUSES]
    unverified, verified = [], 0
    for p in needed:
        mine = [c for c in checks if c.prediction == p.name]
        judged = [c for c in mine if c.verdict in ("pass", "fail", "lacks power", "not assessed")]
        weak = [c for c in judged if c.verdict == "lacks power"]
        if not judged:
            why = "; ".join(sorted({c.reason for c in mine if c.reason})) or "no check measures it"
            unverified.append(f"{p.name} lacks power at T <= {T_max}: not judged ({why})")
        elif weak:
            too_weak = [c for c in weak if not c.power <= c.power_target]
            parts = []
            if too_weak:
                parts.append(f"power {', '.join(power_text(c.power) for c in too_weak)}, target "
                             f"{too_weak[0].power_target:.0%}")
            parts += [c.reason.rsplit("; ", 1)[-1].rsplit(" at T <=", 1)[0]
                      for c in weak if c not in too_weak]
            unverified.append(f"{p.name} lacks power at T <= {T_max} ({'; '.join(parts)})")
        elif any(c.verdict == "not assessed" for c in judged):
            unverified.append(f"{p.name} not assessed: too few sizes")
        elif parameter_coverage and (blind := parameter_blind_spots(judged)):
            unverified.append(f"{p.name} lacks power at T <= {T_max} (a wrong parameter "
                              f"no case can see: {'; '.join(blind)})")
        elif all(c.verdict == "pass" for c in judged):
            verified += 1
    summary = f"{verified} of {len(needed)} predictions verified with power"
    if verdict is None:
        if unverified:
            verdict = "not verified"
        elif any(c.verdict == "pass" for c in checks):
            verdict = "pass"
        else:
            verdict = "not assessed"
    return verdict, unverified, summary
