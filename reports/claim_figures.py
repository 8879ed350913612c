r"""One figure per claim: every asserted check and case in a panel of its own, read from the
run's results (no new sample), showing how its verdict was earned
(:mod:`reports.claim_panels`):

* a **limit** check: the means with :math:`\pm 1.96\,\mathrm{se}` against the variable of
  the check's own finite-size model (:math:`T^{-r}` for a stated rate or a rate range,
  :math:`1/T`, :math:`1/\log T` or :math:`1/\log^2 T` for a model family), on a linear
  axis that ends at :math:`T = \infty`; the fitted model drawn out to its limit there, the
  prediction :math:`L` (dashed) and the extrapolated limit with the interval the verdict
  used at the axis' end. The fit is the verdict's:

  - a stated rate :math:`\alpha`: :math:`\bar x_T = \hat L + c\,T^{-\max(\alpha, \hat\beta)}`
    (weighted least squares, as the verdict extrapolates), interval
    :math:`\hat L \pm q\,\mathrm{se}(\hat L)`;
  - a rate range :math:`[r_0, r_1]`: :math:`\bar x_T = L + c\,T^{-r}` at the best
    :math:`r` of a grid over the range, interval the profile-likelihood one of the results
    (``limit_interval``);
  - a model family: the member with the smallest :math:`\chi^2` (``scipy``'s
    ``curve_fit`` of the registry's ``FiniteSizeModel.curve``), interval the union over the
    members (``limit_interval``); a pooled check (the theory's finite-size mean subtracted,
    ``corrected``) shows the corrected means;
  - each interval widened, as the verdict widens it, to at least
    :math:`\hat L \pm \rho`, the check's resolution (``resolution``).

* a **distance** (law) check: the Kolmogorov distance :math:`D_T` against
  :math:`T^{-r}` (the stated rate), which reaches the law's prediction :math:`D = 0` at
  :math:`T = \infty`, with the fitted power law :math:`C\,T^{-\hat\beta}` and the stated
  rate through the same weighted centroid;
* an **exact** check: the largest residual :math:`|x - L|` per size against the check's
  round-off tolerance (from the registry; a tolerance that needs the measurements reads
  them from the store when one is given), on a log scale that shows both.

Text is typeset from the claim's LaTeX with mathtext (:mod:`reports.figure_text`): the
figure is titled with the claim id, the paper's result it checks (``Claim.paper_result``)
and its statement, and the parameters its cases share; each panel with the quantity its
check measures, the case and the verdict. One key for the figure, below the panels, with
exactly the entries drawn. At most :data:`PANELS` panels a figure; a claim with more gets
parts.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from pylatexenc.latex2text import LatexNodes2Text

from gapverify.reports.canvas import Drawn, new_figure
from gapverify.reports.claim_panels import (  # judged_means ... size_ticks: re-exported
    distance_panel, exact_panel, judged_means, limit_interval, limit_panel, model_fit,
    size_ticks,
)
from gapverify.reports.figure_text import Key, case_text, identifier, quantity, rich, wrap
from gapverify.reports.latex import TeX, escape, math_or_text
from gapverify.reports.prose import prose
from gapverify.reports.results import registry_claim, verdict_word
from gapverify.reports.table_cells import _registry_check, _slug
from gapverify.verification.judging.outcomes import Outcome

__all__ = ["claim_figures", "asserted_panels", "paper_result", "PANELS", "figure_name",
           "judged_means", "limit_interval", "size_ticks"]

#: Panels of one figure (3 columns, 4 rows fit a page at text width).
PANELS = 12
_COLUMNS = 3
_PANEL_W, _PANEL_H = 2.75, 2.45
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


def _plain(latex: str) -> str:  # text of a title for plain-text output (no longer the figures)
    # a registry title (LaTeX) as text for a matplotlib title: mathtext would refuse macros
    # such as \operatorname, and a title that fails to draw is worse than a plain one
    # pylatexenc drops the norm bars of \| ... \| ("W_1_2^2"): they become the double bar first
    text = str(latex).replace(r"\|", "‖").replace(r"\lVert", "‖").replace(r"\rVert", "‖")
    return " ".join(LatexNodes2Text().latex_to_text(text).split())


#: the verdict's fit of a check, as :func:`reports.claim_panels.model_fit` (its old name)
_model_curve = model_fit


def _varying(claim: Mapping[str, Any]) -> list[str]:
    cases = claim.get("cases") or []
    keys = sorted({k for c in cases for k in c})
    return [k for k in keys if len({str(c.get(k)) for c in cases}) > 1]


def _shared(claim: Mapping[str, Any]) -> str:
    cases = claim.get("cases") or [claim.get("parameters") or {}]
    varying = set(_varying(claim))
    return case_text({k: v for k, v in cases[0].items() if k not in varying})


def _title(claim: Mapping[str, Any], part: int, parts: int, width: float) -> str:
    """The figure's title: claim id (and the paper's result), its typeset statement, the
    parameters its cases share; wrapped without breaking a formula."""
    reg = registry_claim(str(claim["claim"]))
    result = paper_result(str(claim["claim"]))
    head = identifier(claim["claim"]) + (f" ({rich(prose(result))})" if result else "")
    text = head + (f": {rich(reg.title)}" if reg is not None else "")
    if parts > 1:
        text += f" (part {part} of {parts})"
    shared = _shared(claim)
    chars = max(40, int(width * 11.5))  # about 12 characters an inch at 9.5 pt
    return wrap(text, chars) + (f"\nparameters: {shared}" if shared else "")


def _panel_title(claim, check, varying: Sequence[str], width: float) -> tuple[str, float]:
    """``(title, font size)`` of a panel: the quantity its check measures (a law: the
    distance of its empirical law), the case, the verdict; smaller type for a quantity
    wider than the panel."""
    from gapverify.reports.figure_text import _width

    what = quantity(str(claim["claim"]), str(check["label"]))
    if check["kind"] == "distance":
        what = f"$D_T$: law of {what}"
    word = verdict_word(str(check["verdict"]), str(check.get("status", "")))
    case = case_text(check.get("case"), varying)
    size = min(8.5, max(6.0, width * 72 / (0.5 * max(_width(what), 1))))
    return what + (f"\n{case}" if case else "") + f"\n{word}", size


def _tolerances(claim, check, store, run) -> list[float | None]:
    """The round-off tolerance of an exact check at each size (the registry's
    ``Check.tolerance``; the largest over the stored measurements when it needs them)."""
    reg_check, _ = _registry_check(str(claim["claim"]), str(check["label"]), check)
    tol = getattr(reg_check, "tolerance", None)
    sizes = [int(r["T"]) for r in check["rows"]]
    if tol is None:
        return [None] * len(sizes)
    out: list[float | None] = []
    data = None
    for T in sizes:
        try:
            out.append(float(tol(T, {})))
            continue
        except (KeyError, TypeError, ValueError):
            pass
        if data is None and store is not None and run is not None:
            from gapverify.reports.results import load_measurements

            try:
                data = load_measurements(store, run, claim, sizes) or {}
            except Exception:  # a store without this claim: no tolerance drawn
                data = {}
        reps = (data or {}).get(T) or []
        try:
            out.append(max(float(tol(T, m)) for m in reps) if reps else None)
        except (KeyError, TypeError, ValueError):
            out.append(None)
    return out


def _panel(ax, key: Key, claim, check, store, run) -> None:
    kind = check["kind"]
    if kind == "distance":
        distance_panel(ax, key, check)
    elif kind in ("exact", "matching"):
        exact_panel(ax, key, check, _tolerances(claim, check, store, run))
    else:
        limit_panel(ax, key, claim, check)


def _claim_part(claim, chunk, part: int, parts: int, store, run) -> Drawn:
    varying = _varying(claim)
    ncols = min(_COLUMNS, len(chunk))
    nrows = math.ceil(len(chunk) / ncols)
    width = max(_PANEL_W * ncols + 0.4, 6.2)
    fig = new_figure(width, _PANEL_H * nrows + 1.7)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    key = Key()
    for ax, check in zip(axes, chunk):
        _panel(ax, key, claim, check, store, run)
        title, size = _panel_title(claim, check, varying, _PANEL_W - 0.2)
        ax.set_title(title, fontsize=size,
                     color="black" if check["verdict"] == Outcome.PASS else "#B00020")
    for ax in axes[len(chunk):]:
        ax.set_visible(False)
    fig.suptitle(_title(claim, part, parts, width), fontsize=9.5)
    fig.legend(handles=key.handles(), loc="outside lower center", ncol=2, fontsize=8,
               frameon=False)
    return Drawn(figure_name(str(claim["claim"]), part, parts), fig,
                 _caption(claim, chunk, part, parts), claim=str(claim["claim"]))


def claim_figures(run: Mapping[str, Any], store=None):
    """One :class:`reports.canvas.Drawn` per claim (parts of at most :data:`PANELS`
    panels) with at least one asserted check; ``store`` (optional) gives the measurements
    an exact check's tolerance needs."""
    drawn = []
    for claim in run["claims"]:
        checks = asserted_panels(claim)
        if not checks:
            continue
        parts = math.ceil(len(checks) / PANELS)
        size = math.ceil(len(checks) / parts)
        for part, start in enumerate(range(0, len(checks), size), 1):
            drawn.append(_claim_part(claim, checks[start:start + size], part, parts, store,
                                     run))
    return drawn


def _caption(claim: Mapping[str, Any], checks: Sequence[Mapping[str, Any]], part: int,
             parts: int) -> TeX:
    reg = registry_claim(str(claim["claim"]))
    result = paper_result(str(claim["claim"]))
    text = (r"\texttt{" + escape(claim["claim"]) + "}"
            + (" (" + prose(result) + ")" if result else "")
            + (": " + math_or_text(reg.title) if reg is not None else "")
            + r". Each asserted check and case. A limit: the mean per size with error bars "
              r"$\pm 1.96\,\mathrm{se}$ (95\%) against the variable of the check's "
              r"finite-size model (axis linear in it, labelled with $T$), the prediction "
              r"(dashed), the fitted model (solid) out to $T=\infty$ and there the "
              r"extrapolated limit with the interval its verdict used. A law: the "
              r"Kolmogorov distance $D_T$ against $T^{-r}$ at the stated rate $r$, which "
              r"tends to 0. An exact check: the largest residual against the tolerance; "
            + escape(str(len(checks))) + " panel" + ("s" if len(checks) != 1 else "")
            + (f", part {part} of {parts}" if parts > 1 else "") + ".")
    return TeX(text)
