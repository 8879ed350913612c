r"""Figures of a judged run (matplotlib, Agg canvas; PDF for LaTeX, PNG for people).

Each figure reads what the run stored and recomputes no sample:

``overview`` (and ``overview-peers``; :mod:`reports.overview_figure`)
    one panel per claim: every asserted limit check as the relative deviation
    :math:`(\bar x_T - L)/|L|` of its mean against :math:`T`, with the band of the
    profile's power target, and a law's Kolmogorov distance in a panel of its own; a key
    below each panel names its quantities (typeset) and cases; in the main report after
    the summary.
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
    stable ranks after one layer against :math:`T` (the asserted checks of
    ``width.stable_rank``): standard attention (left) stays bounded, with the fix
    :math:`A^\perp` (right) the stable rank grows like :math:`cT`; colour the quantity,
    marker the case, one legend below the panels.
per claim (:mod:`reports.claim_figures`)
    every asserted check and case against the variable of its finite-size model, drawn
    out to :math:`T = \infty` with the extrapolated limit's interval there.

All text is typeset with mathtext from the claims' LaTeX (:mod:`reports.figure_text`);
error bars are :math:`\pm 1.96\,\mathrm{se}` in every figure; every series is named by a
key (:func:`reports.figure_text.figure_problems` checks layout and text).

Figures are built on :class:`matplotlib.figure.Figure` with an Agg canvas (no pyplot, no
global backend), and saved without creation dates, so equal runs give equal files.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
from matplotlib import rc_context

from gapverify.reports.canvas import STYLE, Drawn, new_figure, save
from gapverify.reports.claim_figures import claim_figures
from gapverify.reports.claim_panels import MEAN, Z95, log_ticks
from gapverify.reports.figure_text import Key, case_text
from gapverify.reports.figure_text import line as key_line
from gapverify.reports.latex import TeX, escape
from gapverify.reports.numbers import shorthand
from gapverify.reports.overview_figure import overview_figures
from gapverify.reports.results import draws_at, load_measurements
from gapverify.reports.table_cells import ASSERTED, split_case

__all__ = ["Drawn", "singular_values_figure", "eigenvalues_figure", "stable_rank_figure",
           "draw_all", "save", "STYLE"]

_EMP, _THEORY, _FIX = "#4C72B0", "#C44E52", "#55A868"


def _figure(width: float, height: float):
    return new_figure(width, height)


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
    # the row at T of the check labelled ``label`` ("law:bulk @ s2=0.25": the case of the
    # claim's parameters, the ones its spectra are drawn at, first)
    params = claim.get("parameters") or {}
    checks = [c for c in claim["checks"] if split_case(str(c["label"]))[0] == label]
    checks.sort(key=lambda c: any(params.get(k) != v for k, v in (c.get("case") or {}).items()))
    for check in checks:
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
    ax.axvline(edge, color=_THEORY, linestyle=":", linewidth=1.2, label=r"edge $2\kappa$")
    ax.set_xlim(0.0, top)
    ax.set_ylim(0.0, 1.4 * max(float(np.max(heights)), float(np.max(density))))  # legend room
    ax.set_xlabel("singular value")
    ax.set_ylabel("density")
    ax.set_title(f"{title}\n$T = {T}$, {n} draws pooled")
    if ks_row is not None:
        ax.text(0.03, 0.04, f"Kolmogorov distance\n$D_T$ = {shorthand(ks_row['mean'], ks_row['se'])}",
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
        _quarter_circle_panel(ax, values, _kappa(claim), T, draws_at(claim, T), title,
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
                   label=r"$\sqrt{T}\,\lambda_i$, $i \geq 2$")
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
                     f"\n$T = {T}$, {draws_at(claim, T)} draws pooled")
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
                    where="post", color=colour, label=f"empirical, $T = {T}$")
        r = np.linspace(0.0, top, 400)
        ax.plot(r, np.minimum(r / kappa, 1.0) ** 2, color=_THEORY, linestyle="--",
                label=r"disc law $\min(r/\kappa, 1)^2$")
        ax.set_xlim(0.0, top)
        ax.set_ylim(0.0, 1.02)
        ax.set_xlabel(r"$r$")
        ax.set_ylabel(r"fraction with $|\sqrt{T}\,\lambda| \leq r$")
        T = curves[-1][0]
        row = _row_at(claim, "law:modulus", T)
        extra = f", $D_T$ = {shorthand(row['mean'], row['se'])}" if row else ""
        ax.set_title(f"Radial CDF of the eigenvalue moduli\n{draws_at(claim, T)} draws pooled"
                     f"{extra} at $T = {T}$")
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
_SR_COLOURS = {"sr_A": "#1F4E79", "sr_X1": "#4C72B0", "sr_Sigma1": "#8FAADC",
               "sr_Aperp": "#1B5E20", "sr_X1perp": "#55A868", "sr_Sigma1perp": "#A5D6A7"}
_CASE_MARKERS = "osD^vP"


def _sr_series(claim: Mapping[str, Any]) -> list[tuple]:
    """``(base, case, fixed, T, sr, se, predicted sr)`` of every asserted stable-rank check
    of ``width.stable_rank``, once per check and case: a ``*_over_T`` check (the fix) is
    multiplied back by :math:`T`; recorded duplicates and ratios of two stable ranks are
    left out."""
    series, seen = [], set()
    for check in claim["checks"]:
        rows = check.get("rows") or []
        if check["kind"] != "limit" or not rows or check["verdict"] not in ASSERTED:
            continue
        label, case = split_case(check["label"])
        fixed = label.endswith("_over_T")
        base = label[: -len("_over_T")] if fixed else label
        if base not in _SR_NAMES or (label, case) in seen:
            continue
        seen.add((label, case))
        T = np.array([r["T"] for r in rows], dtype=float)
        scale = T if fixed else np.ones_like(T)
        series.append((base, case, fixed, T, np.array([r["mean"] for r in rows]) * scale,
                       np.array([r["se"] for r in rows]) * scale,
                       float(check["predicted"]) * scale))
    return series


def stable_rank_figure(run: Mapping[str, Any]) -> Drawn | None:
    r"""Stable ranks of ``width.stable_rank`` against :math:`T`: standard attention (left,
    bounded: :math:`\mathrm{sr}\to 1+\kappa^2` or a constant) and with the fix
    :math:`A^\perp` (right, log-log: :math:`\mathrm{sr} \approx c\,T`), measured means with
    one standard error and the predictions dashed; colour the quantity, marker the case.
    ``None`` when the run has no asserted stable rank of ``width.stable_rank`` of standard
    attention to set against the fix's (the long profile judges ``sr(Aperp)/T`` alone: its
    claim figure shows it)."""
    claim = _claim(run, "width.stable_rank")
    series = _sr_series(claim) if claim is not None else []
    if not any(not fixed for _, _, fixed, *_ in series):
        return None
    cases = sorted({s[1] for s in series})
    fig = _figure(7.2, 4.3)
    ax_std, ax_fix = fig.subplots(1, 2)
    key = Key()
    key.add(MEAN, key_line("0.3", marker="o", linestyle="none", ms=4))  # the key's order
    key.add("predicted", key_line("0.3", linestyle="--"))
    for base in (b for b in _SR_NAMES if any(s[0] == b for s in series)):
        key.add(_SR_NAMES[base], key_line(_SR_COLOURS[base], marker="o", linestyle="none", ms=4))
    for base, case, fixed, T, sr, se, pred in series:
        ax = ax_fix if fixed else ax_std
        colour, marker = _SR_COLOURS[base], _CASE_MARKERS[cases.index(case) % len(_CASE_MARKERS)]
        entries = [(_SR_NAMES[base], key_line(colour, marker="o", linestyle="none", ms=4))]
        if len(cases) > 1:
            entries.append((_case_label(case), key_line("0.3", marker=marker, linestyle="none", ms=4)))
        key.mark(ax.errorbar(T, sr, yerr=Z95 * se, fmt=marker, color=colour, ms=4, capsize=2),
                 (MEAN, key_line("0.3", marker="o", linestyle="none", ms=4)), *entries)
        key.mark(ax.plot(T, pred, color=colour, linestyle="--", linewidth=1.0)[0],
                 (entries[0]), ("predicted", key_line("0.3", linestyle="--")))
    for ax, title in ((ax_std, "standard attention: bounded"),
                      (ax_fix, "with the fix $A^\\perp$: linear in $T$")):
        ax.set_xscale("log")
        _size_ticks(ax, series[0][3])
        ax.set_xlabel("$T$ (tokens)")
        ax.set_title(title, fontsize=9.5)
    ax_std.set_ylabel("stable rank")
    ax_fix.set_yscale("log")
    low, high = ax_fix.get_ylim()
    log_ticks(ax_fix.yaxis, low, high)
    fig.legend(handles=key.handles(), loc="outside lower center", ncol=4, fontsize=8, frameon=False)
    caption = TeX(
        r"Stable rank $\mathrm{sr}(M) = \|M\|_F^2/\|M\|_2^2$ after one attention layer "
        r"(\texttt{width.stable\_rank}, its asserted checks): standard attention (left) stays "
        r"bounded, $\mathrm{sr} \to 1 + \kappa^2$ or a constant (rank collapse in width); with "
        r"the fix $A^\perp$ (right, log-log) it grows like $c\,T$. Colour: the quantity; "
        r"marker: the parameter case; dashed: the predictions; error bars: $\pm 1.96$ standard "
        r"errors (95\%).")
    return Drawn("stable-rank", fig, caption)


def _case_label(case: str) -> str:
    # "s2=0.25, gamma=1" -> "$s^2 = 0.25$, $\gamma = 1$" for a key
    values = {}
    for kv in case.split(","):
        k, _, v = kv.strip().partition("=")
        values[k.strip()] = v.strip()
    return case_text(values, list(values)) if case else "the claim's parameters"


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
                 "width.stable_rank's stable ranks of standard attention and of the fix "
                 "in the results (its quick or standard profile)", False)):
            fig = make()
            if fig is not None:
                drawn.append(fig)
                continue
            where = ("" if not stored else
                     " (no store given: pass --store)" if not store else
                     " (the results hold neither claim, or the store lacks their "
                     "measurements at this code version)")
            skipped.append(f"{name}: needs {needs}{where}")
        overview = overview_figures(run)
        drawn = overview + drawn
        if not overview:
            skipped.append("overview: no asserted limit or distance check with a measured size")
        per_claim = claim_figures(run, store)
        drawn += per_claim
        if not per_claim:
            skipped.append("per-claim figures: no asserted check with a measured size")
    return drawn, skipped
