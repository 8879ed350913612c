r"""Statistics of a sweep: per-size confidence intervals, power-law fits, extrapolation.

All fits are weighted least squares with the per-size standard errors as weights. When
the scatter about the model exceeds what those errors explain (Birge ratio
:math:`R_B = \sqrt{\chi^2/\nu} > 1`), the parameter errors are multiplied by :math:`R_B`,
so that pre-asymptotic curvature widens the interval instead of producing a false alarm.

References
----------
.. [1] R. T. Birge, "The calculation of errors by the method of least squares",
   Phys. Rev. 40 (1932) 207.
.. [2] P. R. Bevington, D. K. Robinson, "Data Reduction and Error Analysis", 3rd ed.,
   ch. 6-7 (weighted linear least squares).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from scipy import optimize, stats

__all__ = ["SizeSummary", "LinearFit", "ProfileLimit", "summarise", "weighted_linear_fit",
           "power_law_fit", "extrapolate_limit", "profile_limit", "two_sided_quantile",
           "FiniteSizeModel", "FamilyLimit", "family_limit"]


@dataclass(frozen=True)
class SizeSummary:
    """Replicates at one size: mean, standard error and the sample count."""

    T: int
    n: int
    mean: float
    se: float

    def interval(self, q: float) -> tuple[float, float]:
        return self.mean - q * self.se, self.mean + q * self.se


def summarise(T: int, values: np.ndarray) -> SizeSummary:
    """Mean and standard error :math:`s/\\sqrt n` of ``values`` (``n >= 2`` for an error)."""
    values = np.asarray(values, dtype=float)
    n = values.size
    se = float(values.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
    return SizeSummary(T=T, n=n, mean=float(values.mean()), se=se)


@dataclass(frozen=True)
class LinearFit:
    """``y = a + b x`` by weighted least squares; errors already Birge-inflated."""

    a: float
    b: float
    se_a: float
    se_b: float
    birge: float
    dof: int


def weighted_linear_fit(x: np.ndarray, y: np.ndarray, se: np.ndarray) -> LinearFit:
    r"""Weighted least squares :math:`\min \sum_i (y_i - a - b x_i)^2 / \sigma_i^2`.

    Parameter covariance :math:`(X^\top W X)^{-1}`, scaled by :math:`R_B^2` when
    :math:`R_B = \sqrt{\chi^2/(k-2)} > 1` [1]_. Needs at least 3 points.
    """
    x, y, se = (np.asarray(v, dtype=float) for v in (x, y, se))
    if x.size < 3:
        raise ValueError(f"a fit needs at least 3 sizes, got {x.size}")
    # guard zero errors (a statistic exact at some size): floor at 1e-12 of the scale of y
    floor = 1e-12 * max(1.0, float(np.max(np.abs(y))))
    w = 1.0 / np.maximum(se, floor) ** 2
    X = np.column_stack([np.ones_like(x), x])
    cov = np.linalg.inv(X.T @ (w[:, None] * X))
    a, b = cov @ (X.T @ (w * y))
    resid = y - (a + b * x)
    dof = x.size - 2
    birge = math.sqrt(max(float(np.sum(w * resid**2)) / dof, 1.0))
    return LinearFit(a=float(a), b=float(b), se_a=birge * math.sqrt(cov[0, 0]),
                     se_b=birge * math.sqrt(cov[1, 1]), birge=birge, dof=dof)


def power_law_fit(T: np.ndarray, error: np.ndarray, se: np.ndarray) -> LinearFit:
    r"""Fit :math:`\log e_T = \log C - \beta \log T`; returns the fit of ``log e`` on
    ``log T`` whose slope is :math:`-\beta`. Delta method:
    :math:`\operatorname{se}(\log e) = \operatorname{se}(e)/e`."""
    error = np.asarray(error, dtype=float)
    if np.any(error <= 0):
        raise ValueError("a power-law fit needs positive errors")
    return weighted_linear_fit(np.log(T), np.log(error), np.asarray(se) / error)


def extrapolate_limit(T: np.ndarray, mean: np.ndarray, se: np.ndarray, rate: float) -> LinearFit:
    r"""Fit :math:`\bar x_T = L + c\,T^{-\alpha}` at the stated rate :math:`\alpha`;
    the intercept ``a`` is the extrapolated limit :math:`\hat L`."""
    return weighted_linear_fit(np.asarray(T, dtype=float) ** (-rate), mean, se)


@dataclass(frozen=True)
class ProfileLimit:
    r"""The limit of :math:`\bar x_T = L + c\,T^{-r}` with the rate :math:`r` estimated.

    ``low``/``high`` bound the accepted limits at the quantile the fit was made with;
    ``L``/``se_L``/``r`` are the best fit (the rate minimising :math:`\chi^2`);
    ``rates`` is the confidence set of the rate (its smallest and largest value)."""

    L: float
    se_L: float
    r: float
    rates: tuple[float, float]
    low: float
    high: float
    birge: float

    def accepts(self, limit: float) -> bool:
        return self.low <= limit <= self.high


def profile_limit(T: np.ndarray, mean: np.ndarray, se: np.ndarray,
                  rate_range: tuple[float, float], q: float, points: int = 61) -> ProfileLimit:
    r"""Limit of :math:`\bar x_T = L + c\,T^{-r}`, :math:`r \in [r_{lo}, r_{hi}]` estimated,
    by profile likelihood.

    For each rate :math:`r` on a grid the model is linear in :math:`(L, c)`: a weighted
    least-squares fit gives :math:`\hat L(r)`, :math:`\mathrm{se}(r)` and
    :math:`\chi^2(r)`. The rates consistent with the data are
    :math:`\{r : \chi^2(r) - \chi^2_{\min} \le q^2 R_B^2\}` (:math:`R_B` the Birge ratio at
    the best rate, at least 1), and the accepted limits are the union over those rates of
    :math:`\hat L(r) \pm q R_B\,\mathrm{se}(r)`. The rate is a nuisance parameter: a rate
    the data cannot pin down widens the interval instead of biasing it, and a rate the
    data exclude cannot rescue a wrong limit. Needs at least 4 sizes (3 parameters).
    Cost: ``points`` weighted 2-parameter fits.

    References
    ----------
    .. [3] S. A. Murphy, A. W. van der Vaart, "On profile likelihood", JASA 95 (2000) 449.
    """
    T, mean, se = (np.asarray(v, dtype=float) for v in (T, mean, se))
    if T.size < 4:
        raise ValueError(f"a finite-size model with an estimated rate needs at least 4 sizes, got {T.size}")
    floor = 1e-12 * max(1.0, float(np.max(np.abs(mean))))
    sigma = np.maximum(se, floor)
    fits = []
    for r in np.linspace(rate_range[0], rate_range[1], points):
        x = T ** (-r)
        f = weighted_linear_fit(x, mean, sigma)
        chi2 = float(np.sum(((mean - f.a - f.b * x) / sigma) ** 2))
        # undo the per-fit Birge inflation: one inflation, the best fit's, for all rates
        fits.append((r, f.a, f.se_a / f.birge, chi2))
    best = min(fits, key=lambda f: f[3])
    birge = math.sqrt(max(best[3] / (T.size - 3), 1.0))
    kept = [f for f in fits if f[3] - best[3] <= (q * birge) ** 2]
    low = min(a - q * birge * s for _, a, s, _ in kept)
    high = max(a + q * birge * s for _, a, s, _ in kept)
    return ProfileLimit(L=best[1], se_L=birge * best[2], r=best[0],
                        rates=(min(f[0] for f in kept), max(f[0] for f in kept)),
                        low=low, high=high, birge=birge)


@dataclass(frozen=True)
class FiniteSizeModel:
    r"""A finite-size model :math:`\bar x_T = f(T; L, \theta)`: the limit :math:`L` and
    nuisance parameters :math:`\theta`, fitted together. ``curve(T, L, *theta)``;
    ``start`` the nuisances' starting values; ``formula`` as a person reads it."""

    name: str
    formula: str
    curve: Callable[..., np.ndarray]
    start: tuple[float, ...]

    @property
    def parameters(self) -> int:
        return 1 + len(self.start)


@dataclass(frozen=True)
class FamilyLimit:
    """The limit by a family of finite-size models: ``low``/``high`` bound the union of
    the members' intervals; ``L``/``se_L``/``birge`` are the best-fitting member's;
    ``fits`` lists ``(name, L, q-interval half-width)`` per member."""

    L: float
    se_L: float
    low: float
    high: float
    birge: float
    fits: tuple[tuple[str, float, float], ...]

    def accepts(self, limit: float) -> bool:
        return self.low <= limit <= self.high


def family_limit(T: np.ndarray, mean: np.ndarray, se: np.ndarray,
                 models: Sequence[FiniteSizeModel], q: float) -> FamilyLimit:
    r"""The limit of a statistic whose correction to its limit is known in form but not in
    its constants: each member of ``models`` is fitted by weighted nonlinear least squares
    (``scipy.optimize.curve_fit``), its error Birge-inflated
    (:math:`R_B = \sqrt{\chi^2/\nu}` when above 1), and the accepted limits are the union of
    :math:`\hat L_m \pm q R_{B,m}\,\mathrm{se}(\hat L_m)` over the members. The spread
    between members is the model uncertainty: for a deterministic statistic (no sampling
    error) it is the whole of it, and a single member's residual scatter would understate
    it. Sampled sizes are weighted by a power law fitted to their standard errors (a
    skewed statistic's sample mean and sample sd are correlated). A member that cannot be fitted (too few sizes, no convergence, undefined
    covariance) leaves the interval unbounded: nothing is accepted on a model that failed.
    """
    T, mean, se = (np.asarray(v, dtype=float) for v in (T, mean, se))
    floor = 1e-12 * max(1.0, float(np.max(np.abs(mean))))
    sigma = np.maximum(np.where(np.isfinite(se), se, 0.0), floor)
    if np.all(se > floor) and np.all(np.isfinite(se)) and T.size >= 3:
        # weights from a power law fitted to the standard errors, not from each size's own:
        # for a skewed statistic a size's sample mean and sample sd move together, and
        # weighting by its own sd would pull the pooled limit towards the low side
        slope, icept = np.polyfit(np.log(T), np.log(se), 1)
        sigma = np.exp(icept + slope * np.log(T))
    fits, low, high, best = [], math.inf, -math.inf, None
    for m in models:
        dof = T.size - m.parameters
        try:
            if dof < 1:
                raise ValueError(f"{m.name}: {m.parameters} parameters need {m.parameters + 1} sizes")
            with warnings.catch_warnings():
                warnings.simplefilter("error", optimize.OptimizeWarning)
                p, cov = optimize.curve_fit(m.curve, T, mean, p0=(float(mean[-1]), *m.start),
                                            sigma=sigma, absolute_sigma=True, maxfev=20000)
            chi2 = float(np.sum(((mean - m.curve(T, *p)) / sigma) ** 2))
            birge = math.sqrt(max(chi2 / dof, 1.0))
            se_L = birge * math.sqrt(float(cov[0, 0]))
            if not math.isfinite(se_L):
                raise ValueError(f"{m.name}: undefined covariance")
        except (RuntimeError, ValueError, optimize.OptimizeWarning, np.linalg.LinAlgError):
            fits.append((m.name, math.nan, math.inf))
            low, high = -math.inf, math.inf
            continue
        fits.append((m.name, float(p[0]), q * se_L))
        low, high = min(low, p[0] - q * se_L), max(high, p[0] + q * se_L)
        if best is None or chi2 / dof < best[0]:
            best = (chi2 / dof, float(p[0]), se_L, birge)
    if best is None:
        return FamilyLimit(math.nan, math.inf, -math.inf, math.inf, math.inf, tuple(fits))
    return FamilyLimit(L=best[1], se_L=best[2], low=float(low), high=float(high),
                       birge=best[3], fits=tuple(fits))


def two_sided_quantile(level: float, tests: int) -> float:
    """Normal quantile for a two-sided test at family-wise ``level`` split over ``tests``
    tests (Bonferroni): :math:`z_{1 - \\alpha/(2m)}`."""
    if not 0 < level < 1:
        raise ValueError(f"parameter 'level' must be in (0, 1), got {level}")
    return float(stats.norm.isf(level / (2 * max(tests, 1))))
