r"""One figure per claim: every asserted check and case in a panel of its own, read from the
run's results (no new sample).

A panel shows what the verdict saw (:mod:`verification.judging.checks`):

* a **limit** check: the mean per size :math:`\bar x_T` with one standard error, the
  prediction :math:`L` (dashed), the check's own finite-size model fitted to the means
  (solid) and, at :math:`T = \infty`, the extrapolated limit with the interval the verdict
  used. The model is the check's:

  - a stated rate :math:`\alpha`: :math:`\bar x_T = \hat L + c\,T^{-\max(\alpha, \hat\beta)}`
    (weighted least squares, as the verdict extrapolates), interval
    :math:`\hat L \pm q\,\mathrm{se}(\hat L)`;
  - a rate range :math:`[r_0, r_1]`: :math:`\bar x_T = L + c\,T^{-r}` at the best
    :math:`r` of a grid over the range, interval the profile-likelihood one of the results
    (``limit_interval``);
  - a model family: the member with the smallest :math:`\chi^2` (``scipy``'s
    ``curve_fit`` of the registry's ``FiniteSizeModel.curve``), interval the union over the
    members (``limit_interval``); a pooled check (the theory's finite-size mean subtracted,
    ``corrected``) shows the corrected means.

* a **distance** (law) check: the Kolmogorov distance to the limiting law against
  :math:`T` on log-log axes, with the fitted power law :math:`C\,T^{-\hat\beta}` and the
  stated rate through the same weighted centroid (the law holds when the distance tends to
  0 at least at that rate);
* an **exact** check: the largest residual :math:`|x - L|` over the replicates per size.

The figure is titled with the claim's statement, the paper's result it checks
(``Claim.paper_result`` when the registry has it) and the parameters shared by its cases;
each panel with its check and case. One legend for the figure, below the panels, never on
the data. At most :data:`PANELS` panels a figure; a claim with more gets parts.
"""
from __future__ import annotations

import math
import textwrap
import warnings
from typing import Any, Mapping, Sequence

import numpy as np
from matplotlib.lines import Line2D
from pylatexenc.latex2text import LatexNodes2Text

from gapverify.reports.canvas import Drawn, new_figure
from gapverify.reports.latex import TeX, escape, math_or_text
from gapverify.reports.numbers import rate_fraction, significant
from gapverify.reports.prose import prose
from gapverify.reports.results import registry_claim, verdict_word
from gapverify.reports.table_cells import _registry_check, _slug, split_case
from gapverify.verification.judging.outcomes import Outcome

__all__ = ["claim_figures", "asserted_panels", "paper_result", "PANELS", "figure_name",
           "judged_means", "limit_interval"]

#: Panels of one figure (3 columns, 4 rows fit a page at text width).
PANELS = 12
_COLUMNS = 3
_PANEL_W, _PANEL_H = 2.75, 2.2
_EMP, _THEORY, _FIT, _LIMIT = "#4C72B0", "#C44E52", "#333333", "#55A868"
_ASSERTED = ("pass", "fail", "lacks power")


def paper_result(claim_id: str) -> str:
    """The paper's numbered result a claim checks (``Claim.paper_result``, e.g. "Theorem
    3.1"), ``"beyond the paper"`` when the registry says so or gives nothing, ``""`` for a
    claim the registry does not hold."""
    reg = registry_claim(claim_id)
    if reg is None:
        return ""
    return str(getattr(reg, "paper_result", "") or "").strip() or "beyond the paper"


def asserted_panels(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The checks of ``claim`` a panel is drawn for: asserted (pass, fail, lacks power)
    and with at least one size."""
    return [c for c in claim["checks"] if c["verdict"] in _ASSERTED and c.get("rows")]


def figure_name(claim_id: str, part: int = 1, parts: int = 1) -> str:
    """``width-stable-rank`` (or ``width-stable-rank-2`` for a second part)."""
    return _slug(claim_id) + (f"-{part}" if parts > 1 else "")


def _plain(latex: str) -> str:
    # a registry title (LaTeX) as text for a matplotlib title: mathtext would refuse macros
    # such as \operatorname, and a title that fails to draw is worse than a plain one
    # pylatexenc drops the norm bars of \| ... \| ("W_1_2^2"): they become the double bar first
    text = str(latex).replace(r"\|", "‖").replace(r"\lVert", "‖").replace(r"\rVert", "‖")
    return " ".join(LatexNodes2Text().latex_to_text(text).split())


def _case_words(check: Mapping[str, Any], varying: Sequence[str]) -> str:
    case = check.get("case") or {}
    names = {"s2": "s²", "gamma": "γ", "depth": "ℓ", "sigma_V": "σ_V", "mu": "μ"}
    return ", ".join(f"{names.get(k, k)} = {significant(float(case[k]), 3)}"
                     for k in varying if k in case)


def _varying(claim: Mapping[str, Any]) -> list[str]:
    cases = claim.get("cases") or []
    keys = sorted({k for c in cases for k in c})
    return [k for k in keys if len({str(c.get(k)) for c in cases}) > 1]


def _shared(claim: Mapping[str, Any]) -> str:
    cases = claim.get("cases") or [claim.get("parameters") or {}]
    varying = set(_varying(claim))
    common = {k: v for k, v in cases[0].items() if k not in varying}
    return ", ".join(f"{k} = {significant(float(v), 4)}" for k, v in sorted(common.items()))


def _wls_line(x: np.ndarray, y: np.ndarray, se: np.ndarray) -> tuple[float, float, float]:
    """Weighted least squares of ``y = a + b x`` (weights :math:`1/\\mathrm{se}^2`):
    ``(a, b, chi2)``."""
    w = 1.0 / np.maximum(se, 1e-300) ** 2
    X = np.column_stack([np.ones_like(x), x])
    cov = np.linalg.pinv(X.T @ (X * w[:, None]))
    a, b = cov @ (X.T @ (w * y))  # normal equations
    return float(a), float(b), float(np.sum(w * (y - a - b * x) ** 2))


def _model_curve(claim: Mapping[str, Any], check: Mapping[str, Any], T: np.ndarray,
                 mean: np.ndarray, se: np.ndarray):
    """The check's fitted finite-size model as ``(curve, label)``; ``None`` when it cannot
    be fitted from the rows."""
    se = np.where(np.isfinite(se) & (se > 0), se, max(1e-12, float(np.max(np.abs(mean))) * 1e-12))
    if check.get("models"):
        reg_check, _ = _registry_check(str(claim["claim"]), str(check["label"]), check)
        models = getattr(reg_check, "models", ()) or ()
        best = None
        from scipy import optimize

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
        return (lambda t: m.curve(t, *p)), f"fitted model {m.formula} (best of {len(models)})"
    rr = check.get("rate_range")
    if rr:
        fits = [(r, *_wls_line(T ** (-r), mean, se)) for r in np.linspace(rr[0], rr[1], 41)]
        r, a, b, _ = min(fits, key=lambda f: f[3])  # the profile's best rate
        return (lambda t: a + b * t ** (-r)), f"fitted L + c T^-r, r = {r:.2f} in [{rate_fraction(rr[0])}, {rate_fraction(rr[1])}]"
    rate, beta = check.get("rate"), check.get("beta")
    if isinstance(rate, (int, float)) and math.isfinite(rate):
        r = max(float(rate), float(beta)) if isinstance(beta, (int, float)) and math.isfinite(beta) else float(rate)
        a, b, _ = _wls_line(T ** (-r), mean, se)
        return (lambda t: a + b * t ** (-r)), f"fitted L + c T^-{r:.2g} (stated rate {rate_fraction(rate)})"
    return None


def limit_interval(claim: Mapping[str, Any], check: Mapping[str, Any]) -> tuple[float, float, float] | None:
    """``(centre, low, high)`` of the extrapolated limit the verdict used."""
    lim, se = check.get("limit_hat"), check.get("limit_se")
    band = check.get("limit_interval")
    if not (isinstance(lim, (int, float)) and math.isfinite(lim)):
        return None
    if band and all(isinstance(v, (int, float)) and math.isfinite(v) for v in band):
        return float(lim), float(band[0]), float(band[1])
    q = float(claim.get("q") or 0.0)
    if isinstance(se, (int, float)) and math.isfinite(se):
        return float(lim), float(lim - q * se), float(lim + q * se)
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


def _limit_panel(ax, claim, check) -> None:
    T, mean, se = judged_means(claim, check)
    x_inf = T.max() * 2.2  # where T = infinity is drawn
    ax.errorbar(T, mean, yerr=se, fmt="o", color=_EMP, ms=3.5, capsize=2, zorder=3)
    predicted = check.get("predicted")
    if isinstance(predicted, (int, float)) and math.isfinite(predicted):
        ax.axhline(predicted, color=_THEORY, linestyle="--", linewidth=1.1)
    fitted = _model_curve(claim, check, T, mean, se)
    if fitted is not None:
        t = np.geomspace(T.min(), x_inf, 80)
        ax.plot(t, fitted[0](t), color=_FIT, linewidth=1.0)
    band = limit_interval(claim, check)
    if band is not None:
        centre, lo, hi = band
        ax.errorbar([x_inf], [centre], yerr=[[centre - lo], [hi - centre]], fmt="s",
                    color=_LIMIT, ms=4, capsize=3, zorder=3)
    ax.set_xscale("log")
    ax.set_xlim(T.min() / 1.25, x_inf * 1.3)
    size_ticks(ax, T, x_inf)
    ax.ticklabel_format(axis="y", useOffset=False)  # 1.0010, not "+1" and 0.0010
    ax.set_xlabel("T")
    ax.set_ylabel("corrected mean" if check.get("corrected") else "mean")


def _distance_panel(ax, check) -> None:
    rows = check["rows"]
    T = np.array([r["T"] for r in rows], dtype=float)
    d = np.array([r["mean"] for r in rows], dtype=float)
    se = np.array([r["se"] for r in rows], dtype=float)
    ax.errorbar(T, d, yerr=se, fmt="o", color=_EMP, ms=3.5, capsize=2, zorder=3)
    beta, rate = check.get("beta"), check.get("rate")
    if np.all(d > 0) and T.size >= 2:
        x, y = np.log(T), np.log(d)
        w = (d / np.maximum(se, 1e-300)) ** 2  # 1/se(log d)^2, delta method
        xc, yc = float(np.sum(w * x) / np.sum(w)), float(np.sum(w * y) / np.sum(w))
        t = np.geomspace(T.min(), T.max(), 50)
        if isinstance(beta, (int, float)) and math.isfinite(beta):
            ax.plot(t, np.exp(yc - beta * (np.log(t) - xc)), color=_FIT, linewidth=1.0)
        if isinstance(rate, (int, float)) and math.isfinite(rate):
            ax.plot(t, np.exp(yc - rate * (np.log(t) - xc)), color=_THEORY, linestyle="--",
                    linewidth=1.1)
        ax.set_yscale("log")
    ax.set_xscale("log")
    _size_axis(ax, T)
    ax.set_ylabel("Kolmogorov distance")


def _exact_panel(ax, check) -> None:
    rows = check["rows"]
    T = np.array([r["T"] for r in rows], dtype=float)
    err = np.array([max(float(r.get("error") or 0.0), 1e-300) for r in rows])
    ax.plot(T, err, "o-", color=_EMP, ms=3.5, linewidth=1.0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _size_axis(ax, T)
    ax.set_ylabel("largest |x − L|")


def _size_axis(ax, T: np.ndarray) -> None:
    """The log axis's ticks at the run's sizes (those whose labels fit), labelled T."""
    size_ticks(ax, T)
    ax.set_xlabel("T")


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


def _legend_handles() -> list:
    return [
        Line2D([], [], color=_EMP, marker="o", linestyle="none", ms=4,
               label="measured mean (distance) ± 1 se"),
        Line2D([], [], color=_THEORY, linestyle="--", label="prediction L (stated rate for a law)"),
        Line2D([], [], color=_FIT, label="check's fitted finite-size model"),
        Line2D([], [], color=_LIMIT, marker="s", linestyle="none", ms=4,
               label="extrapolated limit at T = ∞, interval of the verdict"),
    ]


def _title(claim: Mapping[str, Any], part: int, parts: int, width: float) -> str:
    reg = registry_claim(str(claim["claim"]))
    statement = _plain(reg.title) if reg is not None else str(claim["claim"])
    result = paper_result(str(claim["claim"]))
    head = f"{claim['claim']} ({result})" if result else str(claim["claim"])
    shared = _shared(claim)
    text = f"{head}: {statement}" + (f"\nparameters: {shared}" if shared else "")
    if parts > 1:
        text += f" (part {part} of {parts})"
    chars = max(40, int(width * 13))  # about 13 characters an inch at 9.5 pt
    return "\n".join(textwrap.fill(line, chars) for line in text.split("\n"))


def claim_figures(run: Mapping[str, Any]):
    """One :class:`reports.canvas.Drawn` per claim (parts of at most :data:`PANELS`
    panels) with at least one asserted check."""
    drawn = []
    for claim in run["claims"]:
        checks = asserted_panels(claim)
        if not checks:
            continue
        varying = _varying(claim)
        parts = math.ceil(len(checks) / PANELS)
        size = math.ceil(len(checks) / parts)
        for part, start in enumerate(range(0, len(checks), size), 1):
            chunk = checks[start:start + size]
            ncols = min(_COLUMNS, len(chunk))
            nrows = math.ceil(len(chunk) / ncols)
            width = max(_PANEL_W * ncols + 0.4, 6.2)
            fig = new_figure(width, _PANEL_H * nrows + 1.6)
            axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
            for ax, check in zip(axes, chunk):
                kind = check["kind"]
                if kind == "distance":
                    _distance_panel(ax, check)
                elif kind in ("exact", "matching"):
                    _exact_panel(ax, check)
                else:
                    _limit_panel(ax, claim, check)
                base, _ = split_case(str(check["label"]))
                word = verdict_word(str(check["verdict"]), str(check.get("status", "")))
                case = _case_words(check, varying)
                title = textwrap.fill(base, 30) + (f"\n{case}" if case else "") + f"\n{word}"
                ax.set_title(title, fontsize=8.5,
                             color="black" if check["verdict"] == Outcome.PASS else "#B00020")
            for ax in axes[len(chunk):]:
                ax.set_visible(False)
            fig.suptitle(_title(claim, part, parts, width), fontsize=9.5)
            fig.legend(handles=_legend_handles(), loc="outside lower center", ncol=2,
                       fontsize=8, frameon=False)
            caption = _caption(claim, chunk, part, parts)
            drawn.append(Drawn(figure_name(str(claim["claim"]), part, parts), fig, caption,
                               claim=str(claim["claim"])))
    return drawn


def _caption(claim: Mapping[str, Any], checks: Sequence[Mapping[str, Any]], part: int,
             parts: int) -> TeX:
    reg = registry_claim(str(claim["claim"]))
    result = paper_result(str(claim["claim"]))
    text = (r"\texttt{" + escape(claim["claim"]) + "}"
            + (" (" + prose(result) + ")" if result else "")
            + (": " + math_or_text(reg.title) if reg is not None else "")
            + r". Each asserted check and case: the mean per size with one standard error "
              r"(for a law, the Kolmogorov distance), the prediction (dashed), the check's "
              r"fitted finite-size model (solid) and, at $T=\infty$, the extrapolated limit "
              r"with the interval its verdict used; "
            + escape(str(len(checks))) + " panel" + ("s" if len(checks) != 1 else "")
            + (f", part {part} of {parts}" if parts > 1 else "") + ".")
    return TeX(text)
