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
  itself (hollow markers), which tends to 0, in a panel of its own (never on the relative
  deviation's axis or its band): a claim with both gets two panels.

Each panel has its own key below it: the check's measured quantity, typeset from the
registry's LaTeX (colour), and, where the panel has several, the parameter case (marker);
the figure's key says what the markers, the line at 0 and the band are. Error bars are
:math:`\pm 1.96\,\mathrm{se}` everywhere (as the per-claim figures).

The shaded band is :math:`\pm` the check's ``power_target`` (the profile's: 5% quick, 3%
standard), the relative error a check must be able to reject to count
(:mod:`verification.judging.power`): a prediction converging into its band is one a few
percent wrong would not have matched. The verdict extrapolates to :math:`T = \infty`; a
mean at the largest size outside the band is not by itself a failure.

Each panel is titled with the claim id (typewriter) and its verdict word (:mod:`verification.judging.
outcomes`, through :func:`reports.results.claim_verdict_word`); colour tells a panel's
checks apart, the marker its parameter cases. The paper's claims and the peers' results
(:func:`reports.table_cells.claim_blocks`) get separate figures, ``overview`` and
``overview-peers``; a block of more than :data:`PANELS` panels, or taller than
:data:`MAX_HEIGHT` with its panel keys, gets parts (``overview-2``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
from matplotlib.patches import Patch

from gapverify.reports.canvas import Drawn, new_figure
from gapverify.reports.claim_figures import _varying
from gapverify.reports.claim_panels import Z95, judged_means, limit_interval, size_ticks
from gapverify.reports.figure_text import (
    Key, case_text, describe, furniture, identifier, line, quantity,
)
from gapverify.reports.latex import TeX, escape
from gapverify.reports.numbers import significant
from gapverify.reports.results import claim_verdict_word
from gapverify.reports.table_cells import split_case
from gapverify.reports.table_cells import claim_blocks

__all__ = ["Series", "overview_checks", "check_series", "overview_figures", "PANELS",
           "MAX_HEIGHT", "OVERVIEW", "Z95"]

#: File stem of the overview of the paper's claims (the peers': ``overview-peers``).
OVERVIEW = "overview"
#: Panels of one overview figure: 4 columns by 5 rows fill a page at text width.
PANELS = 20
_COLUMNS = 4
_WIDTH = 17.0 / 2.54  # the report's text width (a4, 2 cm margins): drawn at 1:1
_PANEL_H = 1.5
#: Largest height of one overview figure, inches: the report sets it at 1:1 within
#: 0.74 of the text height (``reports.document.OVERVIEW_HEIGHT``, a4 with 2 cm margins)
MAX_HEIGHT = 7.4
_FRAME = 0.85  # the title, the figure's key and the T label, when no spare place holds the key
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
    #: the check's measured quantity, typeset (the key's entry of its colour)
    name: str = ""
    #: the case's parameters, typeset (the key's entry of its marker)
    case_tex: str = ""


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
    name = quantity(str(claim["claim"]), str(check["label"]))
    case_tex = case_text(check.get("case"), _varying(claim) or None) if case else ""
    if check["kind"] == "distance":
        T, d, se = judged_means(claim, check)
        return Series(base, case, "distance", T, d, Z95 * se, target, None, name, case_tex)
    T, mean, se = judged_means(claim, check)
    L = check.get("predicted")
    if isinstance(L, (int, float)) and math.isfinite(L) and L != 0.0:
        centre, ref, scale = float(L), abs(float(L)), "relative"  # (xbar_T - L)/|L|
    else:
        zero = _zero_scale(check)
        centre, (ref, scale) = 0.0, ((zero, "zero scale") if zero else (1.0, "absolute"))
    band = limit_interval(claim, check)
    limit = tuple((v - centre) / ref for v in band) if band is not None else None
    return Series(base, case, scale, T, (mean - centre) / ref, Z95 * se / ref, target, limit,
                  name, case_tex)


@dataclass(frozen=True)
class Panel:
    """One panel: a claim's relative deviations, or its laws' distances (``law``);
    ``both``: the claim has a panel of each."""

    claim: Mapping[str, Any]
    series: list[Series]
    law: bool = False
    both: bool = False


def _panels(claims: Sequence[Mapping[str, Any]]) -> list[Panel]:
    out = []
    for claim in claims:
        series = [check_series(claim, c) for c in overview_checks(claim)]
        limits = [s for s in series if s.scale != "distance"]
        laws = [s for s in series if s.scale == "distance"]
        out += [Panel(claim, group, law, bool(limits and laws))
                for group, law in ((limits, False), (laws, True)) if group]
    return out


def _dodge(T: np.ndarray, i: int, n: int) -> np.ndarray:
    # series i of n moved sideways by up to +-4% of T (a tenth of a size step of sqrt 2),
    # so that error bars at one size do not hide each other; the values are not moved
    return T * math.exp(0.08 * (i / (n - 1) - 0.5)) if n > 1 else T


_MEAN = r"mean: $(\bar x_T - L)/|L| \pm 1.96\,\mathrm{se}/|L|$"
_LIMIT = r"at $\infty$: the extrapolated limit, the verdict's interval"
_LAW = r"a law: Kolmogorov distance $D_T \pm 1.96\,\mathrm{se}$ (own axis)"
_PREDICTION = "0: the prediction"


def _series_keys(own: Key, s: Series, colour: str, marker: str, cases: int) -> list[str]:
    """The panel's key entries of a series: its quantity (colour), its case (marker)."""
    texts = [own.add(s.name, line(colour, lw=2.5))]
    if cases > 1:
        texts.append(own.add(s.case_tex or "the claim's parameters",
                             line("0.35", marker=marker, linestyle="none", ms=3.5)))
    return texts


def _plot_series(ax, key: Key, own: Key, series: Sequence[Series], x_inf: float) -> None:
    names = list(dict.fromkeys(s.name for s in series))
    cases = list(dict.fromkeys(s.case for s in series))
    for name in names:  # the panel's key: every quantity first, then every case
        own.add(name, line(_COLOURS[names.index(name) % len(_COLOURS)], lw=2.5))
    for i, s in enumerate(series):
        colour = _COLOURS[names.index(s.name) % len(_COLOURS)]
        marker = _MARKERS[cases.index(s.case) % len(_MARKERS)]
        hollow = s.scale == "distance"
        general = key.add(_LAW, line("0.25", marker="o", mfc="white", ms=3.5, lw=0.6)) if hollow \
            else key.add(_MEAN, line("0.25", marker="o", ms=3.5, lw=0.6))
        texts = _series_keys(own, s, colour, marker, len(cases))
        describe(ax.errorbar(_dodge(s.T, i, len(series)), s.y, yerr=s.half, fmt=marker + "-",
                             ms=2.6, lw=0.6, elinewidth=0.7, capsize=0, color=colour,
                             mfc="white" if hollow else colour, mew=0.8, alpha=0.9, zorder=3),
                 general, *texts)
        if s.limit is not None:
            centre, lo, hi = s.limit
            describe(ax.errorbar(_dodge(np.array([x_inf]), i, len(series)), [centre],
                                 yerr=[[centre - lo], [hi - centre]], fmt=marker, ms=2.6,
                                 color=colour, elinewidth=0.9, capsize=1.2, alpha=0.9, zorder=3),
                     key.add(_LIMIT, line("0.25", marker="o", ms=3.5, lw=0)), *texts)


def _y_range(ax, series: Sequence[Series], room: float, law: bool) -> None:
    low = min(min(float(np.min(s.y - s.half)) for s in series),
              min((s.limit[1] for s in series if s.limit), default=0.0))
    high = max(max(float(np.max(s.y + s.half)) for s in series),
               max((s.limit[2] for s in series if s.limit), default=0.0))
    pad = 0.06 * (max(high, room) - min(low, -room))
    ax.set_ylim(min(low - pad, 0.0 if law else -room), max(high + pad, room))
    ax.ticklabel_format(axis="y", useOffset=False)


def _draw_panel(ax, key: Key, panel: Panel, band_text: str) -> None:
    series, claim = panel.series, panel.claim
    targets = [] if panel.law else sorted({s.target for s in series if s.target is not None},
                                          reverse=True)
    for t in targets:
        key.mark(ax.axhspan(-t, t, color=_BAND, alpha=0.18 if len(targets) == 1 else 0.12,
                            lw=0, zorder=0), (band_text, Patch(color=_BAND, alpha=0.3)))
    key.mark(ax.axhline(0.0, color=_ZERO, lw=0.8, zorder=1), (_PREDICTION, line(_ZERO, lw=0.8)))
    sizes = np.unique(np.concatenate([s.T for s in series]).astype(int))
    x_inf = sizes[-1] * 2.4  # where T = infinity is drawn
    limits = any(s.limit is not None for s in series)
    own = Key()
    _plot_series(ax, key, own, series, x_inf)
    ax.set_xscale("log")
    ax.set_xlim(sizes[0] / 1.3, (x_inf if limits else sizes[-1]) * 1.3)
    size_ticks(ax, sizes, x_inf if limits else None)
    if limits:  # T = infinity stands apart from the sizes
        furniture(ax.axvline(math.sqrt(sizes[-1] * x_inf), color="0.6", lw=0.6, ls=":", zorder=1))
    _y_range(ax, series, 1.6 * (targets[0] if targets else 0.0), panel.law)
    if panel.law:
        ax.set_ylabel("$D_T$", fontsize=7, labelpad=1)
    elif any(s.scale == "absolute" for s in series):
        ax.set_ylabel(r"$L = 0$: mean, absolute", fontsize=7)
    elif all(s.scale == "zero scale" for s in series):  # else the caption says it
        ax.set_ylabel(r"$L = 0$: $\bar x_T/s$", fontsize=7, labelpad=1)
    word = claim_verdict_word(claim)
    shown = word.replace(": ", ":\n") if len(word) > 18 else word  # a panel is 1.4 in wide
    shown = ("its law: " if panel.law and panel.both else "") + shown
    ax.set_title(f"{identifier(str(claim['claim']))}\n{shown}",
                 fontsize=min(8.0, 1.3 * 72 / (0.62 * len(str(claim["claim"])))),
                 color="black" if word in _PASS_WORDS else _FAILED)
    ax.tick_params(labelsize=7, pad=1.5)
    _panel_key(ax, own)


def _key_columns(own: Key) -> int:
    from gapverify.reports.figure_text import _width

    return 2 if len(own) > 2 and max(_width(h.get_label()) for h in own.handles()) <= 12 else 1


def _panel_key(ax, own: Key) -> None:
    """The panel's key below it: quantities (colour), cases (marker)."""
    from matplotlib.transforms import offset_copy

    below = offset_copy(ax.transAxes, fig=ax.figure, y=-13, units="points")  # the ticks' room
    ax.legend(handles=own.handles(), loc="upper center", bbox_to_anchor=(0.5, 0.0),
              bbox_transform=below, fontsize=6, frameon=False, ncol=_key_columns(own), handlelength=1.3,
              handletextpad=0.4, columnspacing=0.8, borderaxespad=0.0, labelspacing=0.25)


def _key_lines(panel: Panel) -> int:
    own = Key()
    names = list(dict.fromkeys(s.name for s in panel.series))
    cases = list(dict.fromkeys(s.case_tex or "the claim's parameters" for s in panel.series))
    for n in names + (cases if len(cases) > 1 else []):
        own.add(n, line())
    return math.ceil(len(own) / _key_columns(own))


def _targets_text(panels: Sequence[Panel]) -> str:
    targets = sorted({s.target for p in panels if not p.law for s in p.series
                      if s.target is not None})
    return ", ".join(f"{significant(100 * t, 3)}%" for t in targets) or "none"


def _caption(title: str, panels: Sequence[Panel], part: int, parts: int) -> TeX:
    every = [s for p in panels for s in p.series]
    absolute = any(s.scale == "absolute" for s in every)
    zero = any(s.scale == "zero scale" for s in every)
    distance = any(p.law for p in panels)
    limits = any(s.limit is not None for s in every)
    text = (
        (f"{escape(title)}: every" if title else "Every") + r" asserted prediction against $T$"
        + r", one panel per claim, its verdict in the title: per check (colour, its quantity "
        r"in the key below the panel) and parameter case (marker) the relative deviation of "
        r"the mean from the prediction, $(\bar x_T - L)/|L|$, with error bars "
        r"$\pm 1.96\,\mathrm{se}/|L|$ (95\%; moved sideways by up to 4\% of $T$)"
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
        text += (r" A law (hollow markers, a panel of its own): its Kolmogorov distance $D_T$ "
                 r"$\pm 1.96\,\mathrm{se}$, which tends to 0.")
    text += r" A pooled check: the mean less the theory's finite-size mean."
    if parts > 1:
        text += f" Part {part} of {parts}."
    return TeX(text)


def overview_figures(run: Mapping[str, Any]) -> list[Drawn]:
    """The overview of the paper's claims (``overview``) and of the peers' results
    (``overview-peers``), each only when it has a claim to show; parts of at most
    :data:`PANELS` panels and :data:`MAX_HEIGHT` inches (:func:`_parts`)."""
    drawn = []
    for block in claim_blocks(run):
        panels = _panels(block.claims)
        if not panels:
            continue
        stem = OVERVIEW if block.key == "paper" else f"{OVERVIEW}-peers"
        heading = ("the paper's claims" if block.key == "paper" else "the peers' results") \
            if block.title else ""
        chunks = _parts(panels)
        for part, chunk in enumerate(chunks, 1):
            drawn.append(_figure(chunk, stem + (f"-{part}" if part > 1 else ""), heading,
                                 block.title, part, len(chunks)))
    return drawn


def _parts(panels: Sequence[Panel]) -> list[list[Panel]]:
    """Whole rows of panels per part: a part ends before a row that would make it taller
    than :data:`MAX_HEIGHT` (its panel keys counted) or hold more than :data:`PANELS`."""
    rows = [list(panels[i:i + _COLUMNS]) for i in range(0, len(panels), _COLUMNS)]
    parts: list[list[list[Panel]]] = [[]]
    for row in rows:
        grown = [p for r in parts[-1] + [row] for p in r]
        if parts[-1] and (_height(grown, len(parts[-1]) + 1) + _FRAME > MAX_HEIGHT
                          or len(grown) > PANELS):
            parts.append([])
        parts[-1].append(row)
    return [[p for r in part for p in r] for part in parts]


def _height(chunk: Sequence[Panel], nrows: int) -> float:
    """Rows of panels, each with room for its tallest panel key."""
    keys = [max(_key_lines(p) for p in chunk[r * _COLUMNS:(r + 1) * _COLUMNS])
            for r in range(nrows)]
    return sum(_PANEL_H + 0.12 * k for k in keys)


def _figure(chunk: Sequence[Panel], name: str, heading: str, title: str, part: int,
            parts: int) -> Drawn:
    ncols = _COLUMNS  # panels a quarter of the text width, however many
    nrows = math.ceil(len(chunk) / ncols)
    spare = nrows * ncols - len(chunk)  # empty places of the last row: the key goes there
    fig = new_figure(_WIDTH, _height(chunk, nrows) + (0.35 if spare >= 2 else _FRAME))
    grid = fig.add_gridspec(nrows, ncols)
    key = Key()
    band = f"$\\pm$ power target ({_targets_text(chunk)})"
    for k, panel in enumerate(chunk):
        _draw_panel(fig.add_subplot(grid[k // ncols, k % ncols]), key, panel, band)
    suptitle = "Measured against predicted: every asserted check" + (f", {heading}" if heading else "")
    if parts > 1:
        suptitle += f" (part {part} of {parts})"
    fig.supylabel(r"$(\bar x_T - L)/|L|$", fontsize=8.5)  # a law's panel: its own axis
    fig.supxlabel("$T$ (log scale)", fontsize=8.5)
    if spare >= 2:  # the key in the empty places, off the data; the title on top
        host = fig.add_subplot(grid[nrows - 1, ncols - spare:])
        host.axis("off")
        host.legend(handles=key.handles(), loc="center", fontsize=7.5, frameon=False)
        fig.suptitle(suptitle, fontsize=9.5)
    else:
        fig.legend(handles=key.handles(), loc="outside upper center", ncol=2,
                   fontsize=7.5, frameon=False, title=suptitle, title_fontsize=9.5,
                   alignment="center")  # the title above the key: one block
    return Drawn(name, fig, _caption(title, chunk, part, parts), overview=True)
