r"""The panels of the per-claim figures (:mod:`reports.claim_figures`): how each asserted
check earned its verdict.

* a **limit** check: the means against the variable of the check's own finite-size model
  (:class:`Variable`: :math:`T^{-r}`, :math:`1/T`, :math:`1/\log T`, :math:`1/\log^2 T`),
  on a linear axis that ends at :math:`T = \infty` (variable 0): the fitted model is drawn
  out to its limit, and the limit with the interval the verdict used stands at the axis'
  end beside the prediction;
* a **distance** (law) check: the Kolmogorov distance :math:`D_T` against
  :math:`T^{-r}` (the stated rate), which ends at :math:`D = 0`, the law's prediction:
  the fitted power law :math:`C\,T^{-\hat\beta}` and the stated rate through the same
  weighted centroid (a straight line to 0);
* an **exact** check: the largest residual :math:`|x - L|` per size against the check's
  round-off tolerance, on a log axis that shows both (a residual of exactly 0 at the
  axis' floor, marked so).

Error bars are :math:`\pm 1.96\,\mathrm{se}` (a normal 95% interval of the mean), as in
the overview (:data:`Z95`). Every series is marked in the figure's :class:`Key`.
"""
from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import numpy as np

from gapverify.reports.figure_text import Key, line, mathtext
from gapverify.reports.numbers import rate_fraction, significant
from gapverify.reports.table_cells import _registry_check
from gapverify.verification.judging.resolution import widened_interval

__all__ = ["Variable", "Fit", "model_fit", "limit_panel", "distance_panel", "exact_panel",
           "judged_means", "limit_interval", "size_ticks", "log_ticks", "Z95", "MEAN",
           "power_variable", "family_variable", "formula_tex", "variable_ticks"]

#: 97.5% quantile of the standard normal: every error bar is 1.96 se (95%)
Z95 = 1.959963984540054
#: the key's entry of a measured mean, with the error-bar convention
MEAN = r"mean $\pm\, 1.96\,\mathrm{se}$ (95%)"
_EMP, _THEORY, _FIT, _LIMIT = "#4C72B0", "#C44E52", "#333333", "#55A868"
_TOLERANCE, _POWER = "#DD8452", "#8172B3"
_HUGE = 1e300  # the largest T a curve is evaluated at: the variable is 0 to the eye


@dataclass(frozen=True)
class Variable:
    """A finite-size model's variable :math:`u(T)`, 0 at :math:`T = \\infty`: ``tex`` its
    formula, ``of`` :math:`u(T)`, ``size`` :math:`T(u)` (clipped at 1e300)."""

    tex: str
    of: Callable[[np.ndarray], np.ndarray]
    size: Callable[[np.ndarray], np.ndarray]


def power_variable(r: float) -> Variable:
    """:math:`u = T^{-r}`."""
    exponent = rate_fraction(r)
    exponent = exponent if len(exponent) <= 4 else significant(r, 2)
    tex = "1/T" if exponent == "1" else f"T^{{-{exponent}}}"
    with np.errstate(divide="ignore", over="ignore"):
        return Variable(tex, lambda T: np.asarray(T, float) ** (-r),
                        lambda u: np.minimum(np.asarray(u, float) ** (-1.0 / r), _HUGE))


def _log_variable(power: int) -> Variable:
    tex = r"1/\log T" if power == 1 else rf"1/\log^{{{power}}} T"
    return Variable(tex, lambda T: np.log(np.asarray(T, float)) ** (-power),
                    lambda u: np.exp(np.minimum(np.asarray(u, float) ** (-1.0 / power),
                                                math.log(_HUGE))))


def family_variable(formula: str) -> Variable:
    """The variable a model family's member is linear in near the limit, read off its
    formula: :math:`1/\\log^2 T` for a correction in :math:`(\\log T + b)^{-2}`,
    :math:`1/\\log T`, else :math:`1/T`."""
    text = formula.replace(" ", "")
    if "log" in text:
        return _log_variable(2 if re.search(r"log[^)]*\)\^2|log\^?2|logT\)\^2", text) else 1)
    return power_variable(1.0)


def formula_tex(formula: str) -> str:
    """A model's formula as the registry writes it (``L + c/T + e/T^2``, ``L (1 +
    4 pi^2/(log T + b)^2)^(-1/2)``) in mathtext."""
    tex = re.sub(r"\^\(([^()]*)\)", r"^{\1}", formula)
    tex = re.sub(r"\bpi\b", r"\\pi", tex)
    tex = re.sub(r"\blog\b", r"\\log", tex)
    return mathtext(tex)


class Fit(NamedTuple):
    """A check's fitted finite-size model: ``curve(T)``, its formula (mathtext, no
    dollars), the model's :class:`Variable` and the fitted limit (the curve at
    :math:`T = \\infty`)."""

    curve: Callable[[np.ndarray], np.ndarray]
    formula: str
    variable: Variable
    limit: float


def _wls_line(x: np.ndarray, y: np.ndarray, se: np.ndarray) -> tuple[float, float, float]:
    """Weighted least squares of ``y = a + b x`` (weights :math:`1/\\mathrm{se}^2`):
    ``(a, b, chi2)``."""
    w = 1.0 / np.maximum(se, 1e-300) ** 2
    X = np.column_stack([np.ones_like(x), x])
    cov = np.linalg.pinv(X.T @ (X * w[:, None]))
    a, b = cov @ (X.T @ (w * y))  # normal equations
    return float(a), float(b), float(np.sum(w * (y - a - b * x) ** 2))


def _family(claim, check) -> tuple:
    """The registry's model family that judged ``check``: of the checks with its label
    and statistic, the one whose members' formulas the results name (a label can name a
    rate-range check and a model-family check whose domains overlap)."""
    from gapverify.reports.results import registry_claim
    from gapverify.reports.table_cells import split_case

    reg = registry_claim(str(claim["claim"]))
    base, stat = split_case(str(check["label"]))[0], check.get("statistic")
    named = list(check.get("models") or [])
    families = [c.models for c in (reg.checks if reg is not None else ())
                if c.label == base and c.models and (stat is None or c.statistic == stat)]
    exact = [f for f in families if [m.formula for m in f] == named]
    if exact or families:
        return (exact or families)[0]
    reg_check, _ = _registry_check(str(claim["claim"]), str(check["label"]), check)
    return getattr(reg_check, "models", ()) or ()


def _family_fit(claim, check, T, mean, se) -> Fit | None:
    from scipy import optimize

    models = _family(claim, check)
    best = None
    for m in models:
        if T.size <= m.parameters:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                p, _ = optimize.curve_fit(m.curve, T, mean, p0=(float(mean[-1]), *m.start),
                                          sigma=se, absolute_sigma=True, maxfev=20000)
        except (RuntimeError, ValueError, TypeError):
            continue
        chi2 = float(np.sum(((mean - m.curve(T, *p)) / se) ** 2)) / (T.size - m.parameters)
        if best is None or chi2 < best[0]:
            best = (chi2, m, p)
    if best is None:
        return None
    _, m, p = best
    return Fit(lambda t: m.curve(t, *p), formula_tex(m.formula), family_variable(m.formula),
               float(p[0]))


def model_fit(claim: Mapping[str, Any], check: Mapping[str, Any], T: np.ndarray,
              mean: np.ndarray, se: np.ndarray) -> Fit | None:
    """The check's finite-size model fitted to the means (as its verdict extrapolates:
    a model family's best member, the best rate of a rate range, or the stated rate
    :math:`\\max(\\alpha, \\hat\\beta)`); ``None`` when the rows cannot fit it."""
    se = np.where(np.isfinite(se) & (se > 0), se, max(1e-12, float(np.max(np.abs(mean))) * 1e-12))
    if check.get("models"):
        return _family_fit(claim, check, T, mean, se)
    rr = check.get("rate_range")
    rate, beta = check.get("rate"), check.get("beta")
    if rr:
        fits = [(r, *_wls_line(T ** (-r), mean, se)) for r in np.linspace(rr[0], rr[1], 41)]
        r, a, b, _ = min(fits, key=lambda f: f[3])  # the profile's best rate
        variable = power_variable(float(r))
        return Fit(lambda t: a + b * np.asarray(t, float) ** (-r),
                   rf"L + c\,T^{{-r}},\ r = {r:.2f} \in [{rate_fraction(rr[0])}, "
                   rf"{rate_fraction(rr[1])}]", variable, a)
    if isinstance(rate, (int, float)) and math.isfinite(rate):
        r = max(float(rate), float(beta)) if _finite(beta) else float(rate)
        a, b, _ = _wls_line(T ** (-r), mean, se)
        variable = power_variable(r)
        term = "c/T" if variable.tex == "1/T" else rf"c\,{variable.tex}"
        return Fit(lambda t: a + b * np.asarray(t, float) ** (-r), f"L + {term}", variable, a)
    return None


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def limit_interval(claim: Mapping[str, Any], check: Mapping[str, Any]) -> tuple[float, float, float] | None:
    """``(centre, low, high)`` of the extrapolated limit the verdict used: the fitted
    interval, widened to at least the limit +- the check's ``resolution``
    (:func:`verification.judging.resolution.resolution`)."""
    lim, se = check.get("limit_hat"), check.get("limit_se")
    band = check.get("limit_interval")
    if not _finite(lim):
        return None
    rho = float(check["resolution"]) if _finite(check.get("resolution")) else 0.0
    if band and all(_finite(v) for v in band):
        return (float(lim), *widened_interval(float(band[0]), float(band[1]), float(lim), rho))
    q = float(claim.get("q") or 0.0)
    if _finite(se):
        half = max(q * se, rho)
        return float(lim), float(lim - half), float(lim + half)
    return None


def judged_means(claim: Mapping[str, Any], check: Mapping[str, Any]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""``(T, mean, se)`` of a check's rows as its verdict judged them: for a pooled check
    (``corrected``) the mean less the theory's finite-size mean (the registry's
    ``Check.correction``, :math:`\bar x_T - \mathrm{E}_T`), else the rows' means."""
    rows = check["rows"]
    T = np.array([r["T"] for r in rows], dtype=float)
    mean = np.array([r["mean"] for r in rows], dtype=float)
    se = np.array([r["se"] for r in rows], dtype=float)
    if check.get("corrected"):
        reg_check, _ = _registry_check(str(claim["claim"]), str(check["label"]), check)
        correction = getattr(reg_check, "correction", None)
        if correction is not None:
            mean = mean - np.asarray(correction(check.get("case") or claim.get("parameters", {}),
                                                T.astype(int)), dtype=float)
    return T, mean, se


def _label_width(label: str, points: float) -> float:
    # a tick label's width in inches (digits and the infinity sign), with a margin
    return len(label) * 0.6 * points / 72 + 0.1


def variable_ticks(ax, variable: Variable, T: np.ndarray) -> None:
    """Ticks of a variable axis (its limits set) at the measured sizes, labelled with
    :math:`T`, and ``∞`` at 0: from ``∞`` leftwards, a size is labelled when its label
    clears the last one labelled."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties

    lo, hi = ax.get_xlim()
    per_unit = ax.get_position().width * ax.figure.get_figwidth() / max(abs(hi - lo), 1e-300)
    points = FontProperties(size=rcParams["xtick.labelsize"]).get_size_in_points()
    ticks, labels = [0.0], ["∞"]
    sizes = np.unique(np.asarray(T, dtype=int))
    for t in sizes[::-1]:
        u, label = float(variable.of(np.array([float(t)]))[0]), str(int(t))
        gap = abs(u - ticks[-1]) * per_unit
        if gap < 0.5 * (_label_width(label, points) + _label_width(labels[-1], points)):
            continue
        ticks.append(u)
        labels.append(label)
    ax.set_xticks(ticks, labels)
    ax.minorticks_off()


def size_ticks(ax, T: np.ndarray, x_inf: float | None = None) -> None:
    """Label a log ``T`` axis (its limits set) at measured sizes whose labels do not touch:
    from the largest size down, a size is labelled when its label clears the last one
    labelled, by the labels' widths in this axis's inches (a narrow range, e.g. 4096 to
    16384, labels fewer sizes than a wide one); ``x_inf``: also ``∞`` there."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties

    sizes = np.unique(np.asarray(T, dtype=int))
    lo, hi = (math.log(v) for v in ax.get_xlim())
    per_log = ax.get_position().width * ax.figure.get_figwidth() / max(hi - lo, 1e-12)
    points = FontProperties(size=rcParams["xtick.labelsize"]).get_size_in_points()

    def half(label: str) -> float:  # half a label's width in inches, with a margin
        return 0.5 * len(label) * 0.6 * points / 72 + 0.05

    ticks, labels = ([x_inf], ["∞"]) if x_inf is not None else ([], [])
    for t in sizes[::-1]:
        label = str(int(t))
        if ticks and (math.log(ticks[-1]) - math.log(t)) * per_log < half(label) + half(labels[-1]):
            continue  # would touch the label to its right
        ticks.append(float(t))
        labels.append(label)
    ax.set_xticks(ticks[::-1], labels[::-1])
    ax.minorticks_off()


def _tick_text(v: float) -> str:
    exponent = math.floor(math.log10(v) + 1e-12)
    mantissa = v / 10 ** exponent
    if -3 <= exponent <= 3:
        return f"{v:g}"
    if abs(mantissa - 1) < 1e-9:
        return rf"$10^{{{exponent}}}$"
    return rf"${significant(mantissa, 2)}\times 10^{{{exponent}}}$"


def log_ticks(axis, low: float, high: float) -> None:
    """At least two labelled ticks on a log ``axis`` spanning ``[low, high]``: decades,
    or 1-3, 1-2-5 or 1..9 steps, whichever first gives two or more (at most five)."""
    from matplotlib.ticker import FixedLocator, FixedFormatter, NullLocator

    ticks: list[float] = []
    for steps in ((1,), (1, 3), (1, 2, 5), tuple(range(1, 10))):
        candidates = [m * 10.0 ** e for e in range(math.floor(math.log10(low)) - 1,
                                                   math.ceil(math.log10(high)) + 1) for m in steps]
        ticks = [v for v in candidates if low <= v <= high]
        if len(ticks) >= 2:
            break
    if len(ticks) > 5:  # many decades: every other (or third) one, the top one kept
        ticks = ticks[::-1][::math.ceil(len(ticks) / 4)][::-1]
    if len(ticks) < 2:
        ticks = [low, high]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FixedFormatter([_tick_text(v) for v in ticks]))
    axis.set_minor_locator(NullLocator())


def _curve_to_limit(fit: Fit, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fitted curve against its variable from the smallest size to 0 (the limit)."""
    u0 = float(fit.variable.of(np.array([T.min()]))[0])
    u = np.linspace(u0, 0.0, 240)[:-1]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = np.asarray(fit.curve(fit.variable.size(u)), dtype=float)
    return np.append(u, 0.0), np.append(y, fit.limit)


def limit_panel(ax, key: Key, claim, check) -> None:
    """A limit check's panel (module docstring)."""
    T, mean, se = judged_means(claim, check)
    fit = model_fit(claim, check, T, mean, se)
    variable = fit.variable if fit is not None else power_variable(1.0)
    u = variable.of(T)
    key.mark(ax.errorbar(u, mean, yerr=Z95 * se, fmt="o", color=_EMP, ms=3.5, capsize=2,
                         zorder=3), (MEAN, line(_EMP, marker="o", linestyle="none", ms=4)))
    predicted = check.get("predicted")
    if _finite(predicted):
        key.mark(ax.axhline(predicted, color=_THEORY, linestyle="--", linewidth=1.1),
                 ("prediction $L$", line(_THEORY, linestyle="--")))
    if fit is not None:
        x, y = _curve_to_limit(fit, T)
        key.mark(ax.plot(x, y, color=_FIT, linewidth=1.0)[0],
                 ("fitted finite-size model, out to $T = \\infty$", line(_FIT)))
    band = limit_interval(claim, check)
    if band is not None:
        centre, lo, hi = band
        key.mark(ax.errorbar([0.0], [centre], yerr=[[centre - lo], [hi - centre]], fmt="s",
                             color=_LIMIT, ms=4, capsize=3, zorder=4),
                 ("extrapolated limit, the verdict's interval",
                  line(_LIMIT, marker="s", linestyle="none", ms=4)))
    top = float(u.max())
    ax.set_xlim(top * 1.08, -0.07 * top)  # T grows to the right, T = infinity at the end
    variable_ticks(ax, variable, T)
    ax.ticklabel_format(axis="y", useOffset=False)  # 1.0010, not "+1" and 0.0010
    model = f"\nmodel ${fit.formula}$" if fit is not None else ""
    ax.set_xlabel(f"$T$ (axis linear in ${variable.tex}$){model}", fontsize=8)
    ax.set_ylabel(r"mean less $\mathrm{E}_T$" if check.get("corrected") else "mean")


def _centroid(T, d, se) -> tuple[float, float]:
    x, y = np.log(T), np.log(d)
    w = (d / np.maximum(se, 1e-300)) ** 2  # 1/se(log d)^2, delta method
    return float(np.sum(w * x) / np.sum(w)), float(np.sum(w * y) / np.sum(w))


def distance_panel(ax, key: Key, check) -> None:
    """A law's panel: :math:`D_T` against :math:`T^{-r}`, to :math:`D = 0` at
    :math:`T = \\infty` (module docstring)."""
    rows = check["rows"]
    T = np.array([r["T"] for r in rows], dtype=float)
    d = np.array([r["mean"] for r in rows], dtype=float)
    se = np.array([r["se"] for r in rows], dtype=float)
    beta, rate = check.get("beta"), check.get("rate")
    r = float(rate) if _finite(rate) and rate > 0 else 0.5
    variable = power_variable(r)
    u = variable.of(T)
    key.mark(ax.errorbar(u, d, yerr=Z95 * se, fmt="o", color=_EMP, mfc="white", ms=3.5,
                         capsize=2, zorder=3),
             (r"Kolmogorov distance $D_T$ $\pm\, 1.96\,\mathrm{se}$",
              line(_EMP, marker="o", mfc="white", linestyle="none", ms=4)))
    key.mark(ax.axhline(0.0, color=_THEORY, linestyle="--", linewidth=1.1),
             ("prediction $L$", line(_THEORY, linestyle="--")))
    fitted = ""
    if np.all(d > 0) and T.size >= 2:
        xc, yc = _centroid(T, d, se)
        grid = np.linspace(float(u.max()), 0.0, 120)
        with np.errstate(all="ignore"):
            t = variable.size(np.maximum(grid, 1e-300))
        if _finite(beta):
            key.mark(ax.plot(grid, np.exp(yc - beta * (np.log(t) - xc)), color=_POWER, lw=1.0)[0],
                     (r"fitted power law $C\,T^{-\hat\beta}$", line(_POWER)))
            fitted = rf", $\hat\beta = {significant(float(beta), 2)}$"
        if _finite(rate):
            key.mark(ax.plot(grid, np.exp(yc - r * (np.log(t) - xc)), color=_THEORY, lw=1.0,
                             linestyle=":")[0],
                     ("stated rate, through the same centroid", line(_THEORY, linestyle=":")))
    top = float(u.max())
    ax.set_xlim(top * 1.08, -0.07 * top)
    ax.set_ylim(min(-0.04 * float(np.max(d + Z95 * se)), 0.0), 1.12 * float(np.max(d + Z95 * se)))
    variable_ticks(ax, variable, T)
    ax.set_xlabel(f"$T$ (axis linear in ${variable.tex}$){fitted}", fontsize=8)
    ax.set_ylabel("$D_T$")


def exact_panel(ax, key: Key, check, tolerance: Sequence[float | None]) -> None:
    """An exact check's panel: largest residual per size against the tolerance, log
    axis showing both; a residual of 0 at the axis' floor (downward triangle)."""
    rows = check["rows"]
    T = np.array([r["T"] for r in rows], dtype=float)
    err = np.array([float(r.get("error") or 0.0) for r in rows])
    tol = np.array([t if t is not None and t > 0 else np.nan for t in tolerance], dtype=float)
    shown = np.concatenate([err[err > 0], tol[np.isfinite(tol)]])
    top = float(shown.max()) if shown.size else 1.0
    floor = float(shown.min()) / 30 if shown.size else 1e-3
    floor = min(floor, top / 1e3)
    if np.any(err > 0):
        key.mark(ax.plot(T[err > 0], err[err > 0], "o-", color=_EMP, ms=3.5, lw=1.0)[0],
                 (r"largest residual $|x - L|$", line(_EMP, marker="o", ms=4)))
    if np.any(err <= 0):
        key.mark(ax.plot(T[err <= 0], np.full(int(np.sum(err <= 0)), floor * 1.6), "v",
                         color=_EMP, ms=4.5)[0],
                 ("residual exactly 0 (at the floor)", line(_EMP, marker="v", linestyle="none")))
    if np.any(np.isfinite(tol)):
        key.mark(ax.plot(T, tol, color=_TOLERANCE, linestyle="-.", lw=1.1)[0],
                 ("tolerance (round-off bound)", line(_TOLERANCE, linestyle="-.")))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(T.min() / 1.25, T.max() * 1.25)
    ax.set_ylim(floor, top * 6)
    log_ticks(ax.yaxis, floor, top * 6)
    size_ticks(ax, T)
    ax.set_xlabel("$T$")
    ax.set_ylabel("$|x - L|$")

