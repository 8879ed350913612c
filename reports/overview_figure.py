r"""The convergence overview of a run: one small panel per claim with an asserted limit or
distance check, every such check and case of the claim in it, read from the run's results
(no new sample). It is the main report's figure of measured against predicted (issue 22);
the per-claim figures of :mod:`reports.claim_figures` (appendix) add the fitted models.

Per check and case, against :math:`T` on a log axis, a panel plots:

* a **limit** check with prediction :math:`L \neq 0`: the relative deviation of the mean,
  :math:`(\bar x_T - L)/|L|`, with error bars :math:`\pm 1.96\,\mathrm{se}_T/|L|` (a normal
  95% interval of the mean); a pooled check (``corrected``) plots the mean less the theory's
  finite-size mean, as its verdict judged it (:func:`reports.claim_figures.judged_means`);
* a limit check with :math:`L = 0`: :math:`\bar x_T/s` with the check's zero scale
  :math:`s` (the results' ``zero_scale``, which the judging writes from ``Check.zero_scale``: the
  scale its power is measured in), else :math:`\bar x_T` itself, and the panel's axis says
  so;
* a **distance** (law) check: the Kolmogorov distance :math:`D_T` to the limiting law
  itself (hollow markers), which tends to 0.

The shaded band is :math:`\pm` the check's ``power_target`` (the profile's: 5% quick, 3%
standard), the relative error a check must be able to reject to count
(:mod:`verification.judging.power`): a prediction converging into its band is one a few
percent wrong would not have matched. The verdict extrapolates to :math:`T = \infty`; a
mean at the largest size outside the band is not by itself a failure.

Each panel is titled with the claim id and its verdict word (:mod:`verification.judging.
outcomes`, through :func:`reports.results.claim_verdict_word`); colour tells a panel's
checks apart, the marker its parameter cases. The paper's claims and the peers' results
(:func:`reports.table_cells.claim_blocks`) get separate figures, ``overview`` and
``overview-peers``; a block of more than :data:`PANELS` claims gets parts (``overview-2``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from gapverify.reports.canvas import Drawn, new_figure
from gapverify.reports.claim_figures import judged_means, limit_interval, size_ticks
from gapverify.reports.latex import TeX, escape
from gapverify.reports.numbers import significant
from gapverify.reports.results import claim_verdict_word, split_case
from gapverify.reports.table_cells import claim_blocks

__all__ = ["Series", "overview_checks", "check_series", "overview_figures", "PANELS",
           "OVERVIEW", "Z95"]

#: File stem of the overview of the paper's claims (the peers': ``overview-peers``).
OVERVIEW = "overview"
#: Panels of one overview figure: 4 columns by 5 rows fill a page at text width.
PANELS = 20
_COLUMNS = 4
_WIDTH = 17.0 / 2.54  # the report's text width (a4, 2 cm margins): drawn at 1:1
_PANEL_H = 1.5
#: 97.5% quantile of the standard normal (scipy.stats.norm.ppf(0.975)): error bars 1.96 se
Z95 = 1.959963984540054
_KINDS = ("limit", "distance")
_ASSERTED = ("pass", "fail", "lacks power")
_BAND, _ZERO, _FAILED = "#55A868", "#333333", "#B00020"
_COLOURS = ("#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2",
            "#7F7F7F", "#BCBD22", "#17BECF")
_MARKERS = "os^Dvp<>h*"
_PASS_WORDS = ("verified", "supported", "reproduced", "recorded")


@dataclass(frozen=True)
class Series:
    """One check and case of a panel: ``y`` and ``half`` (the error bar's half width,
    1.96 se) in the units ``scale`` names: ``relative`` (divided by :math:`|L|`), ``zero
    scale`` (:math:`L = 0`, divided by the check's zero scale), ``absolute`` (:math:`L = 0`
    without one) or ``distance`` (a Kolmogorov distance)."""

    check: str
    case: str
    scale: str
    T: np.ndarray
    y: np.ndarray
    half: np.ndarray
    target: float | None
    #: the extrapolated limit in the same units, ``(centre, low, high)`` of the interval the
    #: verdict used (:func:`reports.claim_figures.limit_interval`); ``None`` for a law or
    #: a check without one
    limit: tuple[float, float, float] | None = None


def overview_checks(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The checks of ``claim`` the overview plots: asserted (pass, fail, lacks power) limit
    and distance checks with at least one size."""
    return [c for c in claim["checks"]
            if c.get("kind") in _KINDS and c["verdict"] in _ASSERTED and c.get("rows")]


def _zero_scale(check: Mapping[str, Any]) -> float | None:
    # the scale a zero prediction's power is measured in, as the judging wrote it
    value = check.get("zero_scale")
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) and value > 0 else None


def check_series(claim: Mapping[str, Any], check: Mapping[str, Any]) -> Series:
    """What the overview plots of one check and case (module docstring)."""
    base, case = split_case(str(check["label"]))
    target = check.get("power_target")
    target = float(target) if isinstance(target, (int, float)) and math.isfinite(target) else None
    if check["kind"] == "distance":
        T, d, se = judged_means(claim, check)
        return Series(base, case, "distance", T, d, Z95 * se, target)
    T, mean, se = judged_means(claim, check)
    L = check.get("predicted")
    if isinstance(L, (int, float)) and math.isfinite(L) and L != 0.0:
        centre, ref, scale = float(L), abs(float(L)), "relative"  # (xbar_T - L)/|L|
    else:
        zero = _zero_scale(check)
        centre, (ref, scale) = 0.0, ((zero, "zero scale") if zero else (1.0, "absolute"))
    band = limit_interval(claim, check)
    limit = tuple((v - centre) / ref for v in band) if band is not None else None
    return Series(base, case, scale, T, (mean - centre) / ref, Z95 * se / ref, target, limit)


def _panels(claims: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], list[Series]]]:
    out = []
    for claim in claims:
        checks = overview_checks(claim)
        if checks:
            out.append((claim, [check_series(claim, c) for c in checks]))
    return out


def _dodge(T: np.ndarray, i: int, n: int) -> np.ndarray:
    # series i of n moved sideways by up to +-4% of T (a tenth of a size step of sqrt 2),
    # so that error bars at one size do not hide each other; the values are not moved
    return T * math.exp(0.08 * (i / (n - 1) - 0.5)) if n > 1 else T


def _draw_panel(ax, claim: Mapping[str, Any], series: Sequence[Series]) -> None:
    checks = list(dict.fromkeys(s.check for s in series))
    cases = list(dict.fromkeys(s.case for s in series))
    targets = sorted({s.target for s in series if s.target is not None}, reverse=True)
    for t in targets:
        ax.axhspan(-t, t, color=_BAND, alpha=0.18 if len(targets) == 1 else 0.12, lw=0, zorder=0)
    ax.axhline(0.0, color=_ZERO, lw=0.8, zorder=1)
    sizes = np.unique(np.concatenate([s.T for s in series]).astype(int))
    x_inf = sizes[-1] * 2.4  # where T = infinity is drawn
    limits = any(s.limit is not None for s in series)
    for i, s in enumerate(series):
        colour = _COLOURS[checks.index(s.check) % len(_COLOURS)]
        marker = _MARKERS[cases.index(s.case) % len(_MARKERS)]
        hollow = s.scale == "distance"
        ax.errorbar(_dodge(s.T, i, len(series)), s.y, yerr=s.half, fmt=marker + "-", ms=2.6,
                    lw=0.6, elinewidth=0.7, capsize=0, color=colour,
                    mfc="white" if hollow else colour, mew=0.8, alpha=0.9, zorder=3)
        if s.limit is not None:
            centre, lo, hi = s.limit
            ax.errorbar(_dodge(np.array([x_inf]), i, len(series)), [centre],
                        yerr=[[centre - lo], [hi - centre]], fmt=marker, ms=2.6, color=colour,
                        elinewidth=0.9, capsize=1.2, alpha=0.9, zorder=3)
    ax.set_xscale("log")
    ax.set_xlim(sizes[0] / 1.3, (x_inf if limits else sizes[-1]) * 1.3)
    size_ticks(ax, sizes, x_inf if limits else None)
    if limits:  # T = infinity stands apart from the sizes
        ax.axvline(math.sqrt(sizes[-1] * x_inf), color="0.6", lw=0.6, ls=":", zorder=1)
    room = 1.6 * (targets[0] if targets else 0.0)  # the band and a margin always show
    low = min(min(float(np.min(s.y - s.half)) for s in series),
              min((s.limit[1] for s in series if s.limit), default=0.0))
    high = max(max(float(np.max(s.y + s.half)) for s in series),
               max((s.limit[2] for s in series if s.limit), default=0.0))
    pad = 0.06 * (max(high, room) - min(low, -room))
    ax.set_ylim(min(low - pad, -room), max(high + pad, room))
    ax.ticklabel_format(axis="y", useOffset=False)
    if any(s.scale == "absolute" for s in series):
        ax.set_ylabel("L = 0: mean, absolute", fontsize=7)
    word = claim_verdict_word(claim)
    shown = word.replace(": ", ":\n") if len(word) > 18 else word  # a panel is 1.4 in wide
    name = str(claim["claim"])
    if len(name) > 26:  # an id wider than the panel breaks after its family
        name = name.replace(".", ".\n", 1)
    ax.set_title(f"{name}\n{shown}", fontsize=8,
                 color="black" if word in _PASS_WORDS else _FAILED)
    ax.tick_params(labelsize=7, pad=1.5)


def _legend_handles(target_text: str, distance: bool, limits: bool) -> list:
    handles = [Line2D([], [], color="0.25", marker="o", ms=3.5, lw=0.6,
                      label="mean: (x̄_T − L)/|L| ± 1.96 se/|L|")]
    if limits:
        handles.append(Line2D([], [], color="0.25", marker="o", ms=3.5, lw=0,
                              label="at ∞: extrapolated limit, the verdict's interval"))
    if distance:
        handles.append(Line2D([], [], color="0.25", marker="o", mfc="white", ms=3.5, lw=0.6,
                              label="law: Kolmogorov distance D_T ± 1.96 se"))
    handles += [Line2D([], [], color=_ZERO, lw=0.8, label="0: the prediction"),
                Patch(color=_BAND, alpha=0.3, label=f"± power target ({target_text})")]
    return handles


def _targets_text(panels) -> str:
    targets = sorted({s.target for _, ss in panels for s in ss if s.target is not None})
    return ", ".join(f"{significant(100 * t, 3)}%" for t in targets) or "none"


def _caption(title: str, panels, part: int, parts: int) -> TeX:
    absolute = any(s.scale == "absolute" for _, ss in panels for s in ss)
    zero = any(s.scale == "zero scale" for _, ss in panels for s in ss)
    distance = any(s.scale == "distance" for _, ss in panels for s in ss)
    limits = any(s.limit is not None for _, ss in panels for s in ss)
    text = (
        (f"{escape(title)}: every" if title else "Every") + r" asserted prediction against $T$"
        + r", one panel per claim, its verdict in the title: per check (colour) and parameter "
        r"case (marker) the relative deviation of the mean from the prediction, "
        r"$(\bar x_T - L)/|L|$, with error bars $\pm 1.96\,\mathrm{se}/|L|$ (moved sideways "
        r"by up to 4\% of $T$)"
        + (r"; at $T = \infty$ the extrapolated limit with the interval its verdict used"
           if limits else "")
        + r". Line at 0: the prediction; band: $\pm$ the profile's power target ("
        + escape(_targets_text(panels)) + r"), the relative error each check must be able "
        r"to reject.")
    if zero:
        text += r" $L = 0$: $\bar x_T/s$, $s$ the check's zero scale."
    if absolute:
        text += r" $L = 0$ without a zero scale: $\bar x_T$ itself (the panel's axis says so)."
    if distance:
        text += (r" A law (hollow): its Kolmogorov distance $D_T$, which tends to 0 (its power "
                 r"is of the law's scale: the band is a guide).")
    text += r" A pooled check: the mean less the theory's finite-size mean."
    if parts > 1:
        text += f" Part {part} of {parts}."
    return TeX(text)


def overview_figures(run: Mapping[str, Any]) -> list[Drawn]:
    """The overview of the paper's claims (``overview``) and of the peers' results
    (``overview-peers``), each only when it has a claim to show; parts of at most
    :data:`PANELS` panels."""
    drawn = []
    for block in claim_blocks(run):
        panels = _panels(block.claims)
        if not panels:
            continue
        stem = OVERVIEW if block.key == "paper" else f"{OVERVIEW}-peers"
        heading = ("the paper's claims" if block.key == "paper" else "the peers' results") \
            if block.title else ""
        parts = math.ceil(len(panels) / PANELS)
        size = math.ceil(len(panels) / parts)
        for part, start in enumerate(range(0, len(panels), size), 1):
            chunk = panels[start:start + size]
            drawn.append(_figure(chunk, stem + (f"-{part}" if part > 1 else ""), heading,
                                 block.title, part, parts))
    return drawn


def _figure(chunk, name: str, heading: str, title: str, part: int, parts: int) -> Drawn:
    ncols = _COLUMNS  # panels a quarter of the text width, however many
    nrows = math.ceil(len(chunk) / ncols)
    spare = nrows * ncols - len(chunk)  # empty places of the last row: the key goes there
    fig = new_figure(_WIDTH, _PANEL_H * nrows + (0.35 if spare >= 2 else 0.75))
    grid = fig.add_gridspec(nrows, ncols)
    for k, (claim, series) in enumerate(chunk):
        _draw_panel(fig.add_subplot(grid[k // ncols, k % ncols]), claim, series)
    suptitle = "Measured against predicted: every asserted check" + (f", {heading}" if heading else "")
    if parts > 1:
        suptitle += f" (part {part} of {parts})"
    distance = any(s.scale == "distance" for _, ss in chunk for s in ss)
    fig.supylabel("(x̄_T − L)/|L|" + ("   (a law: D_T)" if distance else ""), fontsize=8.5)
    fig.supxlabel("T (log scale)", fontsize=8.5)
    limits = any(s.limit is not None for _, ss in chunk for s in ss)
    handles = _legend_handles(_targets_text(chunk), distance, limits)
    if spare >= 2:  # the key in the empty places, off the data; the title on top
        host = fig.add_subplot(grid[nrows - 1, ncols - spare:])
        host.axis("off")
        host.legend(handles=handles, loc="center", fontsize=7.5, frameon=False)
        fig.suptitle(suptitle, fontsize=9.5)
    else:
        fig.legend(handles=handles, loc="outside upper center", ncol=2,
                   fontsize=7.5, frameon=False, title=suptitle, title_fontsize=9.5,
                   alignment="center")  # the title above the key: one block
    return Drawn(name, fig, _caption(title, chunk, part, parts), overview=True)
