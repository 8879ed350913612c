r"""Figures of a judged run (matplotlib, Agg canvas; PDF for LaTeX, PNG for people).

Each figure reads what the run stored and recomputes no sample:

``singular-values``
    histogram of the bulk singular values :math:`\sqrt T s_2, \dots, \sqrt T s_T` of
    :math:`A` at the largest size (``markov.singular_law``, stored array ``bulk``), and of
    all singular values of :math:`\sqrt T A^\perp` (``fix.spectrum``, ``bulk_perp``), against
    the quarter-circle density :math:`q_\kappa(x) = \sqrt{4\kappa^2 - x^2}/(\pi\kappa^2)`
    (:data:`theory.laws.quarter_circle`).
``eigenvalues``
    the eigenvalues :math:`\sqrt T\lambda` of :math:`A`, Perron root removed, in the complex
    plane against the circle of radius :math:`\kappa` (``fix.spectrum``, ``eig_A``), and the
    radial CDF :math:`P(|\sqrt T\lambda| \le r)` of the stored moduli
    (``markov.circular_law``, ``modulus``) against the disc law :math:`\min(r/\kappa, 1)^2`.
``stable-rank``
    stable ranks after one layer against :math:`T` (``width.stable_rank`` rows of the
    results): bounded for standard attention, linear in :math:`T` with the fix.
``error-rates``
    mean absolute error against :math:`T` on log-log axes for every check with a stated
    rate, with the fitted line :math:`C T^{-\hat\beta}` and the stated rate
    :math:`T^{-\alpha}` through the same point.

Figures are built on :class:`matplotlib.figure.Figure` with an Agg canvas (no pyplot, no
global backend), and saved without creation dates, so equal runs give equal files.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gapverify.reports.latex import TeX, escape
from gapverify.reports.numbers import rate_fraction, shorthand
from gapverify.reports.results import load_measurements, split_case, verdict_word

__all__ = ["Drawn", "singular_values_figure", "eigenvalues_figure", "stable_rank_figure",
           "error_rate_figures", "draw_all", "save", "STYLE"]

#: matplotlib settings of every figure: sizes that stay legible at text width.
STYLE = {
    "font.size": 10, "axes.titlesize": 10.5, "axes.labelsize": 10, "legend.fontsize": 8.5,
    "xtick.labelsize": 9, "ytick.labelsize": 9, "axes.grid": True, "grid.alpha": 0.3,
    "axes.spines.top": False, "axes.spines.right": False, "savefig.dpi": 150,
    "figure.constrained_layout.use": True, "lines.linewidth": 1.6,
}
_EMP, _THEORY, _FIX = "#4C72B0", "#C44E52", "#55A868"
_METADATA = {"pdf": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None},
             "png": {"Software": None}}


@dataclass
class Drawn:
    """A figure with the file stem it is saved under and its LaTeX caption."""

    name: str
    figure: Figure
    caption: TeX


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _claim(run: Mapping[str, Any], claim_id: str) -> Mapping[str, Any] | None:
    for claim in run["claims"]:
        if claim["claim"] == claim_id:
            return claim
    return None


def _kappa(claim: Mapping[str, Any]) -> float:
    r""":math:`\kappa = \sqrt{e^{s^2} - 1}` at the claim's logit variance (theory.markov)."""
    import sympy as sp

    from gapverify.theory.markov import kappa_of

    return float(kappa_of(sp.Float(claim["parameters"]["s2"], 30)))


def _row_at(claim: Mapping[str, Any], label: str, T: int) -> Mapping[str, Any] | None:
    for check in claim["checks"]:
        if check["label"] == label:
            for row in check.get("rows", []):
                if int(row["T"]) == T:
                    return row
    return None


def _pooled(data: Mapping[int, Sequence[Mapping[str, Any]]], T: int, key: str) -> np.ndarray | None:
    reps = data.get(T) or []
    if not reps or any(key not in m for m in reps):
        return None
    return np.concatenate([np.ravel(np.asarray(m[key])) for m in reps])


def _quarter_circle_panel(ax, values: np.ndarray, kappa: float, T: int, n: int, title: str,
                          sample_label: str, ks_row, colour: str) -> None:
    from gapverify.theory.laws import quarter_circle

    edge = 2 * kappa
    top = max(edge * 1.12, float(np.quantile(values, 0.999)) * 1.02)
    bins = np.linspace(0.0, top, 61)
    heights, _, _ = ax.hist(values, bins=bins, density=True, color=colour, alpha=0.55,
                            edgecolor="white", linewidth=0.4, label=sample_label)
    x = np.linspace(0.0, edge, 400)
    density = quarter_circle(scale=kappa).pdf(x)
    ax.plot(x, density, color=_THEORY,
            label=rf"quarter-circle density $q_\kappa$, $\kappa = {kappa:.4g}$")
    ax.axvline(edge, color=_THEORY, linestyle=":", linewidth=1.2, label=rf"edge $2\kappa$")
    ax.set_xlim(0.0, top)
    ax.set_ylim(0.0, 1.4 * max(float(np.max(heights)), float(np.max(density))))  # legend room
    ax.set_xlabel("singular value")
    ax.set_ylabel("density")
    ax.set_title(f"{title}\nT = {T}, {n} draws pooled")
    if ks_row is not None:
        ax.text(0.03, 0.04, f"Kolmogorov distance\nD = {shorthand(ks_row['mean'], ks_row['se'])}",
                transform=ax.transAxes, fontsize=8.5, va="bottom",
                bbox={"boxstyle": "round", "fc": "white", "ec": "0.8"})
    ax.legend(loc="upper right", frameon=True, framealpha=0.9)


def singular_values_figure(run: Mapping[str, Any], store) -> Drawn | None:
    """Panel per available claim: ``markov.singular_law`` (bulk of :math:`\\sqrt T A`) and
    ``fix.spectrum`` (all of :math:`\\sqrt T A^\\perp`), each at its largest size, against
    :math:`q_\\kappa`. ``None`` when neither claim's spectra are in the store."""
    panels = []
    for claim_id, key, title, label, ks, colour in (
            ("markov.singular_law", "bulk", r"Singular values of $\sqrt{T}A$ (outlier removed)",
             r"$\sqrt{T}\,s_2, \ldots, \sqrt{T}\,s_T$", "law:bulk", _EMP),
            ("fix.spectrum", "bulk_perp", r"Singular values of $\sqrt{T}A^\perp$ (the fix)",
             r"$\sqrt{T}\,s_1, \ldots, \sqrt{T}\,s_T$ of $A^\perp$", "law:bulk_perp", _FIX)):
        claim = _claim(run, claim_id)
        if claim is None:
            continue
        T = max(claim["sizes"])
        data = load_measurements(store, run, claim, [T])
        values = _pooled(data, T, key) if data else None
        if values is None:
            continue
        panels.append((claim, values, T, title, label, _row_at(claim, ks, T), colour))
    if not panels:
        return None
    fig = _figure(4.2 * len(panels) + 0.6, 3.9)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (claim, values, T, title, label, row, colour) in zip(axes, panels):
        _quarter_circle_panel(ax, values, _kappa(claim), T, int(claim["replicates"]), title,
                              label, row, colour)
    names = " and ".join(r"\texttt{" + escape(p[0]["claim"]) + "}" for p in panels)
    caption = TeX(
        r"Empirical singular values at the largest size against the quarter-circle law "
        r"$Q_\kappa$ (density $\sqrt{4\kappa^2 - x^2}/(\pi\kappa^2)$ on $[0, 2\kappa]$), from the "
        rf"stored spectra of {names}. For $A$ the outlier $s_1 \approx 1$ (at $\sqrt{{T}}$ after "
        r"scaling) is left out; $A^\perp$ has none.")
    return Drawn("singular-values", fig, caption)


def eigenvalues_figure(run: Mapping[str, Any], store) -> Drawn | None:
    r"""Complex-plane eigenvalues of :math:`\sqrt T A` (``fix.spectrum``) with the circle of
    radius :math:`\kappa`, and the radial CDF of the moduli (``markov.circular_law``, smallest
    and largest size) against :math:`\min(r/\kappa, 1)^2`. ``None`` when neither is stored."""
    scatter = radial = None
    fix = _claim(run, "fix.spectrum")
    if fix is not None:
        T = max(fix["sizes"])
        data = load_measurements(store, run, fix, [T])
        if data and all("eig_A" in m for m in data[T]):
            points = []
            for m in data[T]:
                ev = np.asarray(m["eig_A"], dtype=complex)
                ev = np.delete(ev, int(np.argmin(np.abs(ev - 1.0))))  # the Perron root
                points.append(ev * math.sqrt(T))
            scatter = (fix, np.concatenate(points), T)
    circ = _claim(run, "markov.circular_law")
    if circ is not None:
        sizes = sorted({min(circ["sizes"]), max(circ["sizes"])})
        data = load_measurements(store, run, circ, sizes)
        if data:
            curves = [(T, _pooled(data, T, "modulus")) for T in sizes]
            curves = [(T, v) for T, v in curves if v is not None]
            if curves:
                radial = (circ, curves)
    panels = [p for p in (scatter, radial) if p is not None]
    if not panels:
        return None
    fig = _figure(4.2 * len(panels) + 0.6, 4.1)
    axes = list(fig.subplots(1, len(panels), squeeze=False)[0])
    if scatter is not None:
        ax = axes.pop(0)
        claim, z, T = scatter
        kappa = _kappa(claim)
        ax.scatter(z.real, z.imag, s=2.0, color=_EMP, alpha=0.35, linewidths=0,
                   label=rf"$\sqrt{{T}}\,\lambda_i$, $i \geq 2$")
        t = np.linspace(0.0, 2 * math.pi, 400)
        ax.plot(kappa * np.cos(t), kappa * np.sin(t), color=_THEORY,
                label=rf"circle of radius $\kappa = {kappa:.4g}$")
        lim = max(1.35 * kappa, float(np.max(np.abs(z))) * 1.05)
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.set_xlabel("real part")
        ax.set_ylabel("imaginary part")
        ax.set_title(rf"Eigenvalues of $\sqrt{{T}}A$ (Perron root removed)"
                     f"\nT = {T}, {claim['replicates']} draws pooled")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, markerscale=4,
                  frameon=False)
    if radial is not None:
        ax = axes.pop(0)
        claim, curves = radial
        kappa = _kappa(claim)
        top = max(1.3 * kappa, max(float(np.max(v)) for _, v in curves) * 1.02)
        shades = ["#A6BDDB", _EMP]
        for (T, values), colour in zip(curves, shades[-len(curves):]):
            x = np.sort(values)
            y = np.arange(1, x.size + 1) / x.size
            ax.step(np.concatenate([[0.0], x, [top]]), np.concatenate([[0.0], y, [1.0]]),
                    where="post", color=colour, label=f"empirical, T = {T}")
        r = np.linspace(0.0, top, 400)
        ax.plot(r, np.minimum(r / kappa, 1.0) ** 2, color=_THEORY, linestyle="--",
                label=r"disc law $\min(r/\kappa, 1)^2$")
        ax.set_xlim(0.0, top)
        ax.set_ylim(0.0, 1.02)
        ax.set_xlabel(r"$r$")
        ax.set_ylabel(r"fraction with $|\sqrt{T}\,\lambda| \leq r$")
        T = curves[-1][0]
        row = _row_at(claim, "law:modulus", T)
        extra = f", D = {shorthand(row['mean'], row['se'])}" if row else ""
        ax.set_title(f"Radial CDF of the eigenvalue moduli\n{claim['replicates']} draws pooled"
                     f"{extra} at T = {T}")
        ax.legend(loc="lower right", framealpha=0.9)
    names = " and ".join(r"\texttt{" + escape(p[0]["claim"]) + "}" for p in panels)
    caption = TeX(
        r"Eigenvalues of $\sqrt{T}A$ against the uniform law on the disc of radius $\kappa$ "
        rf"(stored spectra of {names}): the fraction of moduli below $r$ tends to "
        r"$\min(r/\kappa, 1)^2$.")
    return Drawn("eigenvalues", fig, caption)


_SR_NAMES = {"sr_A": r"$\mathrm{sr}(A)$", "sr_X1": r"$\mathrm{sr}(X_1)$",
             "sr_Sigma1": r"$\mathrm{sr}(\Sigma_1)$", "sr_Aperp": r"$\mathrm{sr}(A^\perp)$",
             "sr_X1perp": r"$\mathrm{sr}(X_1^\perp)$", "sr_Sigma1perp": r"$\mathrm{sr}(\Sigma_1^\perp)$"}


def stable_rank_figure(run: Mapping[str, Any]) -> Drawn | None:
    r"""Stable ranks of ``width.stable_rank`` against :math:`T`: measured means (checks whose
    label ends in ``_over_T`` are multiplied back by :math:`T`) with the predicted
    :math:`\mathrm{sr}_\infty` (standard) or :math:`c\,T` (fixed), and the ratio
    measured/predicted. ``None`` when the run has no ``width.stable_rank``."""
    claim = _claim(run, "width.stable_rank")
    if claim is None:
        return None
    series = []
    for check in claim["checks"]:
        rows = check.get("rows") or []
        if check["kind"] != "limit" or not rows:
            continue
        label, case = split_case(check["label"])
        fixed = label.endswith("_over_T")
        base = label[: -len("_over_T")] if fixed else label
        T = np.array([r["T"] for r in rows], dtype=float)
        scale = T if fixed else np.ones_like(T)
        mean = np.array([r["mean"] for r in rows]) * scale
        se = np.array([r["se"] for r in rows]) * scale
        name = _SR_NAMES.get(base, base.replace("_", " ")) + (f" [{case}]" if case else "")
        series.append((name, fixed, T, mean, se, float(check["predicted"]) * scale))
    if not series:
        return None
    fig = _figure(8.4, 4.0)
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.35, 1]})
    markers = "osD^vP"
    cmap_std = ["#1F4E79", "#4C72B0", "#8FAADC"]
    cmap_fix = ["#1B5E20", "#55A868", "#A5D6A7"]
    n_std = n_fix = 0
    for i, (name, fixed, T, mean, se, pred) in enumerate(series):
        colour = cmap_fix[n_fix % 3] if fixed else cmap_std[n_std % 3]
        n_fix, n_std = (n_fix + 1, n_std) if fixed else (n_fix, n_std + 1)
        kind = "fixed" if fixed else "standard"
        ax.errorbar(T, mean, yerr=se, fmt=markers[i % len(markers)], color=colour, ms=5,
                    capsize=2, label=f"{name} ({kind})")
        ax.plot(T, pred, color=colour, linestyle="--", linewidth=1.1)
        ax2.errorbar(T, mean / pred, yerr=se / pred, fmt=markers[i % len(markers)] + "-",
                     color=colour, ms=4, capsize=2, linewidth=1.0, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _size_ticks(ax, series[0][2])
    ax.set_xlabel("T (tokens)")
    ax.set_ylabel("stable rank")
    ax.set_title("Stable rank after one layer: bounded (standard)\n"
                 "vs linear in T (fixed); dashed: predicted")
    ax.legend(loc="upper left", fontsize=7.5, ncol=2, framealpha=0.9)
    ax2.axhline(1.0, color=_THEORY, linestyle="--", linewidth=1.1)
    ax2.set_xscale("log")
    _size_ticks(ax2, series[0][2])
    ax2.set_xlabel("T (tokens)")
    ax2.set_ylabel("measured / predicted")
    ax2.set_title("Measured / predicted: convergence")
    caption = TeX(
        r"Stable rank $\mathrm{sr}(M) = \|M\|_F^2/\|M\|_2^2$ after one attention layer "
        r"(\texttt{width.stable\_rank}): standard attention (blue) stays bounded, "
        r"$\mathrm{sr} \to 1 + \kappa^2$ or $1$ (rank collapse in width); with the fix "
        r"$A^\perp$ (green) it grows linearly in $T$. Dashed lines are the predictions; error "
        r"bars are one standard error. Right: measured over predicted.")
    return Drawn("stable-rank", fig, caption)


def _rated(run: Mapping[str, Any]) -> list[tuple[Mapping, Mapping]]:
    out = []
    for claim in run["claims"]:
        for check in claim["checks"]:
            rows = check.get("rows") or []
            beta = check.get("beta")
            if (check["kind"] in ("limit", "distance") and isinstance(beta, (int, float))
                    and math.isfinite(beta) and isinstance(check.get("rate"), (int, float))
                    and len(rows) >= 2 and all(r["error"] > 0 for r in rows)):
                out.append((claim, check))
    return out


def _centroid_line(T: np.ndarray, err: np.ndarray, se: np.ndarray, slope: float):
    # weighted least squares passes through the weighted centroid of (log T, log e):
    # log C = ybar_w + beta xbar_w, weights 1/se(log e)^2 = (e/se)^2 (delta method)
    rel = np.maximum(se / err, 1e-12)
    w = 1.0 / rel**2
    x, y = np.log(T), np.log(err)
    xc, yc = float(np.sum(w * x) / np.sum(w)), float(np.sum(w * y) / np.sum(w))
    return lambda t: np.exp(yc + slope * (np.log(t) - xc))


def _size_ticks(ax, T: np.ndarray) -> None:
    # plain integer ticks at (up to five of) the measured sizes, no minor labels
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator, ScalarFormatter

    sizes = np.unique(np.asarray(T, dtype=int))
    step = max(1, math.ceil(len(sizes) / 5))
    ticks = sizes[::step]
    if sizes[-1] not in ticks:
        ticks = np.append(ticks[:-1] if len(ticks) >= 5 else ticks, sizes[-1])
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def error_rate_figures(run: Mapping[str, Any], per_figure: int = 6) -> list[Drawn]:
    r"""Small multiples, ``per_figure`` panels each: for every check with a stated rate
    :math:`\alpha` and a fitted exponent, the mean absolute error (one standard error bars)
    against :math:`T` on log-log axes, the fitted line :math:`C T^{-\hat\beta}` (through the
    weighted centroid of the points, as the weighted fit is) and the stated rate through the
    same point."""
    rated = _rated(run)
    count = math.ceil(len(rated) / per_figure)
    size = math.ceil(len(rated) / count) if count else per_figure  # even parts: 5,4,4 not 6,6,1
    figures = []
    for start in range(0, len(rated), size):
        chunk = rated[start:start + size]
        ncols = min(2, len(chunk))
        nrows = math.ceil(len(chunk) / ncols)
        fig = _figure(3.5 * ncols + 0.3, 2.75 * nrows + 0.2)
        axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
        for ax, (claim, check) in zip(axes, chunk):
            rows = check["rows"]
            T = np.array([r["T"] for r in rows], dtype=float)
            err = np.array([r["error"] for r in rows])
            se = np.array([r["error_se"] for r in rows])
            beta, beta_se, rate = float(check["beta"]), check.get("beta_se"), float(check["rate"])
            t = np.geomspace(T.min() / 1.08, T.max() * 1.08, 50)
            passed = check["verdict"] == "pass"
            ax.errorbar(T, err, yerr=se, fmt="o", color=_EMP, ms=4, capsize=2,
                        label="mean |error|")
            ax.plot(t, _centroid_line(T, err, se, -beta)(t), color=_THEORY,
                    label=rf"fit $\hat\beta$ = {shorthand(beta, beta_se)}")
            ax.plot(t, _centroid_line(T, err, se, -rate)(t), color="0.35", linestyle="--",
                    linewidth=1.1, label=rf"stated $\alpha$ = {rate_fraction(rate)}")
            ax.set_xscale("log")
            ax.set_yscale("log")
            _size_ticks(ax, T)
            ax.set_xlabel("T")
            ax.set_ylabel("Kolmogorov distance" if check["kind"] == "distance" else "mean |error|")
            word = verdict_word(str(check["verdict"]), str(check.get("status", "")))
            base, case = split_case(check["label"])
            ax.set_title(f"{claim['claim']}: {base}\n" + (f"{case}: " if case else "") + word,
                         color="black" if passed else "#B00020", fontsize=9.5)
            ax.legend(loc="lower left", fontsize=7.5, framealpha=0.9)
        for ax in axes[len(chunk):]:
            ax.set_visible(False)
        part = start // size + 1
        parts = math.ceil(len(rated) / size)
        name = "error-rates" if parts == 1 else f"error-rates-{part}"
        caption = TeX(
            r"Mean absolute error (for a law, the Kolmogorov distance) against $T$ for every "
            r"check with a stated rate $\alpha$: points with one standard error bars, the "
            r"fitted power law $C\,T^{-\hat\beta}$ (solid) and the stated rate (dashed) through "
            r"the same point. A check passes the rate test when $\hat\beta + q\,"
            r"\mathrm{se}(\hat\beta) \geq \alpha$."
            + (f" (Part {part} of {parts}.)" if parts > 1 else ""))
        figures.append(Drawn(name, fig, caption))
    return figures


def draw_all(run: Mapping[str, Any], store) -> tuple[list[Drawn], list[str]]:
    """Every figure the run and the store allow, and a sentence for each one left out."""
    drawn, skipped = [], []
    with rc_context(STYLE):
        for name, make, needs, stored in (
                ("singular-values", lambda: singular_values_figure(run, store),
                 "the stored spectra of markov.singular_law or fix.spectrum", True),
                ("eigenvalues", lambda: eigenvalues_figure(run, store),
                 "the stored spectra of fix.spectrum or markov.circular_law", True),
                ("stable-rank", lambda: stable_rank_figure(run),
                 "width.stable_rank in the results", False)):
            fig = make()
            if fig is not None:
                drawn.append(fig)
                continue
            where = ("" if not stored else
                     " (no store given: pass --store)" if not store else
                     " (the results hold neither claim, or the store lacks their "
                     "measurements at this code version)")
            skipped.append(f"{name}: needs {needs}{where}")
        rates = error_rate_figures(run)
        if rates:
            drawn += rates
        else:
            skipped.append("error-rates: no check with a stated rate and a fitted exponent")
    return drawn, skipped


def save(drawn: Drawn, out_dir: str | Path) -> tuple[Path, Path]:
    """Write ``<name>.pdf`` (vector, for LaTeX) and ``<name>.png`` (150 dpi) into
    ``out_dir``; no creation dates, so the same figure gives the same bytes."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pdf, png = out / f"{drawn.name}.pdf", out / f"{drawn.name}.png"
    with rc_context(STYLE):
        drawn.figure.savefig(pdf, metadata=_METADATA["pdf"])
        drawn.figure.savefig(png, metadata=_METADATA["png"])
    return pdf, png
