r"""Judging stored measurements against a claim's statement.

The rules (printed with every verdict table, see :data:`RULES`):

``exact``
    every replicate's residual is within the round-off tolerance stated by the check.
``limit`` / ``distance`` with a stated rate :math:`\alpha`
    *rate*: the exponent :math:`\hat\beta` of the mean absolute error
    :math:`\bar e_T \approx C T^{-\beta}` (weighted log-log fit) is not significantly
    below :math:`\alpha`: :math:`\hat\beta + q\,\mathrm{se}(\hat\beta) \ge \alpha`;
    a stated rate is a lower bound, set (and documented per check) below the local slopes
    measured at ``T <= 1024``, since subleading corrections keep the local slope of
    several statistics below their asymptotic rate there;
    *limit*: the extrapolation :math:`\bar x_T = \hat L + c T^{-r}`,
    :math:`r = \max(\alpha, \hat\beta)`, reaches the claimed limit: :math:`|\hat L - L| \le q\,\mathrm{se}(\hat L)` (for a distance,
    :math:`\hat L \le q\,\mathrm{se}(\hat L)`).
``limit`` with no rate
    consistency only: the error at the largest size is not significantly larger than at
    the smallest, :math:`\bar e_{T_k} \le \bar e_{T_1} + q\sqrt{\mathrm{se}_1^2 + \mathrm{se}_k^2}`.

:math:`q` is the normal quantile for the family-wise false-alarm level (default 1%)
split by Bonferroni over every statistical test in the run. Fits inflate their errors by
the Birge ratio (``verification.inference``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
from scipy import stats
from scipy.optimize import linear_sum_assignment

from verification.claims import Check, Claim
from verification.inference import (
    extrapolate_limit,
    power_law_fit,
    summarise,
)

__all__ = ["Variant", "CheckResult", "ClaimResult", "judge_claim", "count_tests", "RULES",
           "DEFAULT_LEVEL"]

DEFAULT_LEVEL = 0.01
#: A limit statistic whose every replicate equals the prediction to this relative
#: accuracy is exact at those parameters (1000 ulps of accumulated round-off).
ROUNDOFF = 1e3 * float(np.finfo(float).eps)
RULES = (
    "exact: every replicate within the stated round-off tolerance",
    "rate: fitted exponent beta of the mean |error| satisfies beta + q se >= stated rate "
    "(a stated rate is a lower bound, set below the local slopes measured at T <= 1024)",
    "limit: extrapolation x_T = L + c T^-r, r = max(stated rate, fitted beta), gives |L_hat - L| <= q se",
    "no rate: error at the largest size <= error at the smallest + q se (consistency only)",
    "q: normal quantile at the family-wise false-alarm level, Bonferroni over all tests",
)

Measurements = Mapping[int, Sequence[Mapping[str, object]]]  # size -> replicates


@dataclass(frozen=True)
class Variant:
    """A (possibly wrong) version of a claim's statement, judged on the same data.

    ``scale`` multiplies every predicted limit (``--perturb EPS`` is ``scale = 1 + EPS``;
    for a law, its scale); ``parameters`` evaluates the theory at other parameter values
    than those sampled; ``rate_shift`` is added to every stated rate.
    """

    name: str = "as stated"
    scale: float = 1.0
    parameters: Mapping[str, float] = field(default_factory=dict)
    rate_shift: float = 0.0


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
    verdict: str  # pass / fail / recorded / not assessed
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


@dataclass
class ClaimResult:
    claim: str
    status: str
    verdict: str
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

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.verdict == "fail"]


def _tests_in(check: Check, sizes: int) -> int:
    if check.kind in ("exact", "matching") or not check.asserted:
        return 0
    if check.rate is None:
        return 1
    return 2 if sizes >= 3 else 0


def count_tests(claims: Sequence[Claim], sizes: Mapping[str, int]) -> int:
    """Number of statistical tests in a run: the Bonferroni divisor."""
    return sum(_tests_in(ch, sizes[c.id]) for c in claims for ch in c.checks)


def _values(reps: Sequence[Mapping[str, object]], key: str) -> np.ndarray:
    return np.array([float(r[key]) for r in reps])


def _matching_residual(measured: np.ndarray, predicted: np.ndarray) -> float:
    # max_i |mu_i - lambda_pi(i)| for the assignment pi minimising the total distance
    cost = np.abs(np.asarray(measured)[:, None] - np.asarray(predicted)[None, :])
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].max())


def _exact(check: Check, claim: Claim, data: Measurements, predicted: float,
           variant: Variant, base: dict) -> CheckResult:
    rows, fail_T, fail_r = [], None, None
    for T in sorted(data):
        residuals = []
        for r, m in enumerate(data[T]):
            if check.kind == "matching":
                res = _matching_residual(np.asarray(m[check.statistic]),
                                         check.predicted_spectrum(m, predicted))
            else:
                res = abs(float(m[check.statistic]) - predicted)
            residuals.append(res)
            if res > check.tolerance(T, m) and fail_T is None:
                fail_T, fail_r = T, r
        residuals = np.array(residuals)
        rows.append(SizeRow(T, len(residuals), float(residuals.max()), 0.0,
                            float(residuals.max()), 0.0))
    verdict = "fail" if fail_T is not None else "pass"
    reason = (f"residual above tolerance ({check.tolerance_note}) at T={fail_T}, replicate {fail_r}"
              if fail_T else f"max residual {max(r.error for r in rows):.2e} within tolerance "
                             f"({check.tolerance_note})")
    return CheckResult(**base, verdict=verdict, reason=reason, rows=rows,
                       failing_size=fail_T, failing_replicate=fail_r)


def _errors(check: Check, claim: Claim, reps, predicted: float, params, scale: float) -> np.ndarray:
    if check.kind == "distance":
        cdf = check.cdf(params, scale)
        return np.array([stats.kstest(np.asarray(m[check.statistic]), cdf).statistic for m in reps])
    return np.abs(_values(reps, check.statistic) - predicted)


def _statistical(check: Check, claim: Claim, data: Measurements, predicted: float,
                 params: Mapping[str, float], variant: Variant, q: float, base: dict) -> CheckResult:
    sizes = sorted(data)
    rows = []
    for T in sizes:
        reps = data[T]
        e = _errors(check, claim, reps, predicted, params, variant.scale)
        x = e if check.kind == "distance" else _values(reps, check.statistic)
        sx, se_ = summarise(T, x), summarise(T, e)
        rows.append(SizeRow(T, sx.n, sx.mean, sx.se, se_.mean, se_.se))
    result = CheckResult(**base, verdict="pass", reason="", rows=rows)
    Ts = np.array(sizes, dtype=float)
    err = np.array([r.error for r in rows])
    err_se = np.array([r.error_se for r in rows])
    if not check.asserted:
        result.verdict, result.reason = "recorded", check.record_note or check.rate_note
        return result
    floor = ROUNDOFF * max(1.0, abs(predicted))
    informative = err > floor if check.kind == "limit" else np.ones(len(err), bool)
    if not informative.all():
        # sizes where the statistic equals its limit to round-off carry no rate: the
        # gradient identity at depth 1 is exact for every draw; sr(Sigma_l) - 1 ~ T^(1-2l)
        # reaches double precision by T ~ 100 at depth 4
        first = sizes[int(np.flatnonzero(~informative)[0])]
        if informative.sum() < 3:
            result.reason = (f"equal to the limit to round-off (mean error <= {floor:.1e}) "
                             f"from T = {first} on: exact there, faster than any rate")
            return result
        Ts, err, err_se = Ts[informative], err[informative], err_se[informative]
        rows_used = [r for r, keep in zip(rows, informative) if keep]
        result.reason = f"sizes at round-off from T = {first} excluded; "
    else:
        rows_used = rows
    if check.rate is None:
        bound = err[0] + q * math.hypot(err_se[0], err_se[-1])
        ok = err[-1] <= bound
        result.verdict = "pass" if ok else "fail"
        result.reason = (f"consistency only ({check.rate_note}): error {err[-1]:.3g} at "
                         f"T={sizes[-1]} {'<=' if ok else '>'} {bound:.3g}")
        if not ok:
            result.failing_size = sizes[-1]
        return result
    rate = check.rate_at(params) + variant.rate_shift
    result.rate = rate
    if len(sizes) < 3:
        result.verdict, result.reason = "not assessed", "a rate needs at least 3 sizes"
        return result
    fit = power_law_fit(Ts, err, err_se)
    result.beta, result.beta_se = -fit.b, fit.se_b
    rate_ok = result.beta + q * fit.se_b >= rate
    means = np.array([r.mean for r in rows_used])
    mean_se = np.array([r.se for r in rows_used])
    target = 0.0 if check.kind == "distance" else predicted
    # extrapolate at the stated rate, or at the fitted one where the data converge faster
    # (a stated rate is a lower bound; a faster truth would bias a fixed-rate intercept)
    ext = extrapolate_limit(Ts, means, mean_se, max(rate, result.beta))
    result.limit_hat, result.limit_se = ext.a, ext.se_a
    if check.kind == "distance":
        limit_ok = ext.a <= q * ext.se_a
    else:
        limit_ok = abs(ext.a - target) <= q * ext.se_a
    reasons = []
    if not rate_ok:
        reasons.append(f"error decays like T^(-beta), beta = {result.beta:.2f}±{fit.se_b:.2f}, "
                       f"slower than the stated rate {rate:.3g}")
    if not limit_ok:
        reasons.append(f"extrapolated limit {ext.a:.5g}±{ext.se_a:.2g} misses {target:.5g}")
    result.verdict = "pass" if rate_ok and limit_ok else "fail"
    result.reason += "; ".join(reasons) or (
        f"error ~ T^(-beta), beta = {result.beta:.2f}±{fit.se_b:.2f} (stated {rate:.3g}); "
        f"limit {ext.a:.5g}±{ext.se_a:.2g}")
    if result.verdict == "fail":
        result.failing_size = _first_outside_envelope(Ts, err, err_se, rate, q)
    return result


def _first_outside_envelope(T, err, se, rate, q) -> int:
    """Smallest size whose error exceeds the stated-rate envelope anchored at the smallest
    size: :math:`\\bar e_i > \\bar e_1 (T_i/T_1)^{-\\alpha} + q\\,\\mathrm{se}`."""
    for i in range(1, len(T)):
        shrink = (T[i] / T[0]) ** (-rate)
        if err[i] > err[0] * shrink + q * math.hypot(se[i], se[0] * shrink):
            return int(T[i])
    return int(T[-1])


def judge_claim(claim: Claim, data: Measurements, params: Mapping[str, float], *,
                q: float, root_seed: int, variant: Variant = Variant()) -> ClaimResult:
    """Judge every check of ``claim`` on ``data`` (size -> list of replicate measurements)."""
    theory_params = dict(params)
    theory_params.update(variant.parameters)
    predicted = claim.predict_numbers(theory_params)
    results = []
    for check in claim.checks:
        pred = claim.prediction(check.prediction)
        value = predicted[check.prediction] * variant.scale
        base = dict(claim=claim.id, label=check.label, statistic=check.statistic,
                    kind=check.kind, status=pred.status, predicted=value,
                    rate=check.rate_at(theory_params),
                    rate_note=check.rate_note or check.record_note, rate_status=check.rate_status,
                    tolerance_note=check.tolerance_note, case=dict(params))
        if check.kind in ("exact", "matching"):
            scale = variant.scale if check.kind == "matching" else 1.0
            results.append(_exact(check, claim, data, scale if check.kind == "matching" else value,
                                  variant, base))
        else:
            # the law's scale moves with the variant's parameters and scale
            law_params = dict(params)
            law_params.update(variant.parameters)
            results.append(_statistical(check, claim, data, value, law_params, variant, q, base))
    asserted = [r for r in results if r.verdict in ("pass", "fail")]
    verdict = "fail" if any(r.verdict == "fail" for r in asserted) else (
        "pass" if asserted else "not assessed")
    sizes = sorted(data)
    return ClaimResult(claim=claim.id, status=claim.status, verdict=verdict, checks=results,
                       parameters=dict(params), sizes=sizes,
                       replicates=min(len(v) for v in data.values()), root_seed=root_seed,
                       variant=variant.name, q=q, experiment=claim.experiment)
