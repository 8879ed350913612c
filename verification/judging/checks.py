"""The per-size judging of one check, shared by the verdict and the power search.

It holds the result records (:class:`Variant`, :class:`SizeRow`, :class:`CheckResult`,
:class:`ClaimResult`) with the default false-alarm level and the round-off tolerance, and
the primitives that judge a check's measurements once: an exact check's residuals
(:func:`_exact`), a statistical check's measurements arranged per size (:class:`_Prepared`)
and judged by its rate and limit tests, rate-range interval or model family
(:func:`_judge_rows`, :func:`_statistical`), at the resolution below which a limit test
does not narrow (:mod:`verification.judging.resolution`). :mod:`verification.judging.power`
judges the same samples again against wrong predictions with these; :mod:`verification.judging.verdict`
builds a claim's verdict from them (the rules are in its docstring).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from gapverify.verification.claims.model import Check
from gapverify.verification.judging.inference import (
    extrapolate_limit, family_limit, power_law_fit, profile_limit, student_quantile, summarise,
    per_test_level,
)
from gapverify.verification.judging.outcomes import Outcome
from gapverify.verification.judging.resolution import resolution_note, widened_interval

__all__ = ["Variant", "SizeRow", "CheckResult", "ClaimResult", "Measurements",
           "DEFAULT_LEVEL", "ROUNDOFF"]

DEFAULT_LEVEL = 0.01
#: A limit statistic whose every replicate equals the prediction to this relative
#: accuracy is exact at those parameters (1000 ulps of accumulated round-off).
ROUNDOFF = 1e3 * float(np.finfo(float).eps)

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
    verdict: Outcome  # pass / fail / lacks power / recorded / outside domain / not assessed
    reason: str
    rows: list[SizeRow]
    beta: float | None = None
    beta_se: float | None = None
    limit_hat: float | None = None
    limit_se: float | None = None
    #: the degrees of freedom of ``limit_se`` (Welch-Satterthwaite over the fit's sizes) of
    #: a rated check, whose limit test uses the Student quantile there; None elsewhere
    limit_dof: float | None = None
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
    #: the power these samples would have with the estimate at the prediction (every
    #: value moved by L - L_hat): what the sampling plans on (verification.running.rounds),
    #: a function of the samples' precision, not of where the estimate sits
    centred_power: float | None = None
    #: a rated check's samples moved as for :attr:`centred_power`, judged at the stated
    #: rate + RATE_SHIFT: ``[|L_hat - L|, t se, se of the gap]`` of that extrapolation.
    #: The faster rate's limit test rejects it when the first exceeds the second, a
    #: property of the samples' curve and precision (what the sampling plans the rate's
    #: power on)
    centred_faster: list[float] | None = None
    power_target: float | None = None
    #: the scale a prediction of 0 is measured against (``Check.zero_scale`` at the theory's
    #: parameters), so that readers of the results need not look the check up again
    zero_scale: float | None = None
    rate_range: list[float] | None = None
    limit_interval: list[float] | None = None  # accepted limits (rate-range, model-family checks)
    models: list[str] | None = None  # a model-family check's members (formulas)
    corrected: bool = False  # the theory's finite-size mean was subtracted before fitting
    #: how far each wrong parameter value moves the prediction (:func:`parameter_moves`)
    parameter_moves: list[dict] | None = None
    #: the half-width below which the limit test does not narrow: a quarter of the power target,
    #: in the limit's units (:func:`~verification.judging.resolution.resolution`); ``None``
    #: where none applies
    resolution: float | None = None

    @property
    def powered(self) -> bool:
        return self.power is not None and self.power_target is not None and self.power <= self.power_target


@dataclass
class ClaimResult:
    claim: str
    status: str
    verdict: Outcome  # pass / fail / flaky / not verified / not assessed
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
    #: the most severe reason of ``unverified`` (outcomes.NOT_VERIFIED_REASONS), else ""
    reason: str = ""
    power_summary: str = ""  # "k of n predictions verified with power"
    level: float = DEFAULT_LEVEL
    tests: int = 0
    #: how each case was sized (verification.running.rounds.Sizing.to_dict): the
    #: replicates drawn per size, the rounds, why sampling stopped, the pilot's spread
    sizing: list[dict] = field(default_factory=list)

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.verdict == Outcome.FAIL]


def _values(reps: Sequence[Mapping[str, object]], key: str) -> np.ndarray:
    # .item(): a number, or an array of one number (an experiment's np.array([x]), which
    # the claim checks accept as a real number; float() refuses ndim > 0 in numpy >= 2.3)
    return np.array([float(np.asarray(r[key]).item()) for r in reps])


def _matching_residual(measured: np.ndarray, predicted: np.ndarray) -> float:
    # max_i |mu_i - lambda_pi(i)| for the assignment pi minimising the total distance
    cost = np.abs(np.asarray(measured)[:, None] - np.asarray(predicted)[None, :])
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].max())


def _exact(check: Check, data: Measurements, predicted: float, base: dict,
           params: Mapping[str, float] | None = None) -> CheckResult:
    """Every replicate's residual ``|x - L|`` (or the matched spectrum's) against
    ``check.tolerance``; the power is ``max(residual + tolerance) / scale``: the relative
    error of ``L`` that the worst replicate would reject. ``scale`` is ``|L|``, 1 for a
    spectrum, and for ``L = 0`` the check's ``zero_scale(params)`` (as
    :func:`verification.judging.power._zero_reference` reads it; ``params`` defaults to the
    case, ``base["case"]``), else none (power ``inf``)."""
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
    verdict = Outcome.FAIL if fail_T is not None else Outcome.PASS
    reason = (f"residual above tolerance ({check.tolerance_note}) at T={fail_T}, replicate {fail_r}"
              if fail_T else f"max residual {max(r.error for r in rows):.2e} within tolerance "
                             f"({check.tolerance_note})")
    # |x - L(1 + e)| >= e|L| - |x - L| exceeds the tolerance once e|L| > residual + tolerance;
    # a spectrum's scale moves its largest eigenvalue (|lambda_1| = 1) by e
    if check.kind == "matching":
        scale = 1.0
    elif predicted == 0.0 and check.zero_scale is not None:  # L(1 + e) = 0: e zero_scale
        case = (base.get("case") or {}) if params is None else params
        scale = abs(float(check.zero_scale(case)))
    else:
        scale = abs(predicted)
    power = worst / scale if scale else math.inf
    return CheckResult(**base, verdict=verdict, reason=reason, rows=rows,
                       failing_size=fail_T, failing_replicate=fail_r, power=power)


class _Prepared:
    """One check's measurements arranged for repeated judging (power search): the values
    of a limit statistic, or each replicate's sorted sample for a distance, per size."""

    def __init__(self, check: Check, data: Measurements):
        self.check = check
        self.sizes = sorted(data)
        #: the limit test's resolution (:mod:`verification.judging.resolution`), set once
        #: the check is judged as stated; the power search judges wrong predictions at it
        self.resolution = 0.0
        if check.kind == "distance":
            self.samples = {T: [np.sort(np.asarray(m[check.statistic], dtype=float)) for m in data[T]]
                            for T in self.sizes}
        else:
            self.values = {T: _values(data[T], check.statistic) for T in self.sizes}

    def moved(self, shift: float) -> "_Prepared":
        """These measurements with every value of a limit statistic moved by ``shift``."""
        out = object.__new__(_Prepared)
        # moved samples plan the sampling on the interval's own precision: no resolution
        out.check, out.sizes, out.resolution = self.check, self.sizes, 0.0
        out.values = {T: v + shift for T, v in self.values.items()}
        return out

    def errors(self, T: int, predicted: float, params, scale: float) -> np.ndarray:
        if self.check.kind == "distance":
            samples = self.samples[T]
            if not samples:
                return np.array([])
            # one call of the CDF on every replicate's sample (a call costs far more than
            # its points: scipy's checks), cut back into replicates
            every = self.check.cdf(params, scale)(np.concatenate(samples))
            cuts = np.cumsum([x.size for x in samples])[:-1]
            out = []
            for F in np.split(every, cuts):
                # Kolmogorov distance of a sorted sample to a continuous CDF
                n = F.size
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
    limit_dof: float | None = None
    interval: tuple[float, float] | None = None


def _misfit(p_fit: float, q: float) -> str | None:
    """The reason a check fails when its finite-size model does not fit at the test's
    level (:func:`verification.judging.inference.per_test_level`), else ``None``."""
    if p_fit < per_test_level(q):
        return f"the measurements contradict the stated finite-size form (goodness of fit p = {p_fit:.2g})"
    return None


def _judge_rows(check: Check, rows: list[SizeRow], predicted: float, rate: float | None,
                q: float, params: Mapping[str, float] | None = None,
                resolution: float = 0.0) -> _Outcome:
    """The rate and limit tests of a rated check, or the profile interval of a rate-range
    check, or the union of a model family's intervals, on the per-size summaries ``rows``.

    ``q`` is a normal quantile; every standard error here is estimated from the sizes'
    replicates, so each test uses the Student quantile of ``q`` at that error's degrees
    of freedom (Welch-Satterthwaite over the sizes of a fit). A limit check whose
    finite-size model the measurements contradict (goodness of fit below the test's
    level) fails, whatever the interval the misfit would have inflated: the model is part
    of the statement, and a prediction off by orders of magnitude must not pass as
    "lacks power" inside an interval inflated by that misfit. ``resolution`` (absolute,
    :func:`~verification.judging.resolution.resolution`): the limit is accepted within it
    of the estimate whatever the interval's width."""
    Ts = np.array([r.T for r in rows], dtype=float)
    n = np.array([r.n for r in rows], dtype=float)
    err = np.array([r.error for r in rows])
    err_se = np.array([r.error_se for r in rows])
    means = np.array([r.mean for r in rows])
    mean_se = np.array([r.se for r in rows])
    if check.correction is not None:  # the theory's E x_T - L, known at every size
        means = means - np.asarray(check.correction(params, Ts.astype(int)), dtype=float)
    if check.models or check.rate_range is not None:
        return _interval(check, Ts, means, mean_se, n, predicted, q, resolution)
    fit = power_law_fit(Ts, err, err_se, n)
    beta = -fit.b
    rate_ok = beta + student_quantile(q, fit.dof_b) * fit.se_b >= rate
    target = 0.0 if check.kind == "distance" else predicted
    # extrapolate at the stated rate, or at the fitted one where the data converge faster
    # (a stated rate is a lower bound; a faster truth would bias a fixed-rate intercept)
    ext = extrapolate_limit(Ts, means, mean_se, max(rate, beta), n)
    t_a = student_quantile(q, ext.dof_a)
    # a limit is accepted within t se of the estimate, or within the resolution
    half = max(t_a * ext.se_a, resolution)
    limit_ok = (ext.a <= t_a * ext.se_a if check.kind == "distance"
                else abs(ext.a - target) <= half)
    # the finite-size form x_T = L + c T^-r, a distance's too: a law far off (scaled by
    # 0.001) gives distances near 1 that do not decay, whose misfit would otherwise
    # inflate the rate's and the limit's errors until both pass
    misfit = _misfit(ext.p_fit, q)
    reasons = []
    if not rate_ok:
        reasons.append(f"error decays like T^(-beta), beta = {beta:.2f}±{fit.se_b:.2f}, "
                       f"slower than the stated rate {rate:.3g}")
    if misfit:
        reasons.append(f"{misfit} of x_T = L + c T^-{max(rate, beta):.3g}")
    elif not limit_ok:
        reasons.append(f"extrapolated limit {ext.a:.5g}±{ext.se_a:.2g} misses {target:.5g}"
                       + (f" by more than the resolution {resolution:.2g}"
                          if half > t_a * ext.se_a else ""))
    ok = rate_ok and limit_ok and misfit is None
    reason = "; ".join(reasons) or (f"error ~ T^(-beta), beta = {beta:.2f}±{fit.se_b:.2f} "
                                    f"(stated {rate:.3g}); limit {ext.a:.5g}±{ext.se_a:.2g}"
                                    + (f", judged at the resolution ±{resolution:.2g}"
                                       if half > t_a * ext.se_a else ""))
    failing = None if ok else _first_outside_envelope(Ts, err, err_se, rate,
                                                      student_quantile(q, float(n.min()) - 1))
    return _Outcome(ok, reason, beta, fit.se_b, ext.a, ext.se_a, rate, failing,
                    limit_dof=float(ext.dof_a) if math.isfinite(ext.dof_a) else None)


def _interval(check: Check, Ts: np.ndarray, means: np.ndarray, mean_se: np.ndarray,
              n: np.ndarray, predicted: float, q: float, resolution: float) -> _Outcome:
    """A model family's union of intervals, or a rate range's profile-likelihood
    interval, widened to at least the estimate +- ``resolution``."""
    if check.models:
        fit = family_limit(Ts, means, mean_se, check.models, q, n)
        members = ", ".join(f"{name} {L:.5g}" for name, L, _ in fit.fits)
        head = f"{len(fit.fits)} finite-size models ({members}): "
    else:
        fit = profile_limit(Ts, means, mean_se, check.rate_range, q, n=n)
        form = "x_T - E_T" if check.correction is not None else "x_T"  # E_T: the theory's term
        head = (f"{form} = L + c T^-r, r in [{fit.rates[0]:.2f}, {fit.rates[1]:.2f}] "
                f"(stated range [{check.rate_range[0]:.3g}, {check.rate_range[1]:.3g}]): ")
    misfit = _misfit(fit.p_fit, q)
    low, high = widened_interval(fit.low, fit.high, fit.L, resolution)
    ok = misfit is None and low <= predicted <= high
    reason = head + (misfit if misfit else f"L in [{low:.5g}, {high:.5g}]"
                     + resolution_note(fit.low, fit.high, low, high, resolution)
                     + ("" if ok else f", which misses {predicted:.5g}"))
    return _Outcome(ok, reason, limit_hat=fit.L, limit_se=fit.se_L,
                    failing=None if ok else int(Ts[-1]),
                    interval=None if misfit else (fit.low, fit.high))


def _first_outside_envelope(T, err, se, rate, q) -> int:
    r"""Smallest size whose error exceeds the stated-rate envelope anchored at the smallest
    size: :math:`\bar e_i > \bar e_1 (T_i/T_1)^{-\alpha} + q\,\mathrm{se}`."""
    for i in range(1, len(T)):
        shrink = (T[i] / T[0]) ** (-rate)
        if err[i] > err[0] * shrink + q * math.hypot(se[i], se[0] * shrink):
            return int(T[i])
    return int(T[-1])


def _informative(check: Check, rows: list[SizeRow], predicted: float) -> np.ndarray:
    """Sizes whose mean error is above round-off: a statistic equal to its limit to
    round-off carries no rate (the gradient identity at depth 1 is exact for every draw;
    sr(Sigma_l) - 1 ~ T^(1-2l) reaches double precision by T ~ 100 at depth 4)."""
    if check.kind != "limit":
        return np.ones(len(rows), bool)
    floor = ROUNDOFF * max(1.0, abs(predicted))
    return np.array([r.error > floor for r in rows])


def _statistical(check: Check, prep: _Prepared, predicted: float, params: Mapping[str, float],
                 scale: float, rate: float | None, q: float, base: dict,
                 resolution: float = 0.0) -> CheckResult:
    rows = [prep.mean_rows(T, predicted, params, scale) for T in prep.sizes]
    result = CheckResult(**base, verdict=Outcome.PASS, reason="", rows=rows)
    if not check.asserted:
        result.verdict, result.reason = Outcome.RECORDED, check.record_note or check.rate_note
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
        result.verdict = Outcome.NOT_ASSESSED
        what = "model family" if check.models else "rate range" if check.rate_range else "rate"
        result.reason = f"a {what} needs at least {needed} sizes"
        return result
    out = _judge_rows(check, used, predicted, rate, q, params, resolution)
    result.resolution = resolution if resolution > 0 else None
    result.verdict = Outcome.PASS if out.ok else Outcome.FAIL
    result.reason += out.reason
    result.beta, result.beta_se = out.beta, out.beta_se
    result.limit_hat, result.limit_se = out.limit_hat, out.limit_se
    result.limit_dof = out.limit_dof
    result.failing_size = out.failing
    if out.interval is not None and all(map(math.isfinite, out.interval)):
        result.limit_interval = [float(out.interval[0]), float(out.interval[1])]
    return result

