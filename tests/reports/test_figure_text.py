r"""Typeset text of the report's figures (issue 35): every title and label rendered from the
claim's LaTeX with mathtext, panel titles the measured quantity, a key for every series,
log axes with two labelled ticks, one error-bar convention (1.96 se), limit panels drawn
out to :math:`T = \infty` in the model's own variable, laws on their own axis, exact
checks against their tolerance. The guard, :func:`reports.figure_text.text_problems`, is
run over synthetic runs here and over every figure of the small judged run of
``conftest.tiny`` in ``test_figure_layout`` (:func:`reports.figure_text.figure_problems`)."""
from __future__ import annotations

import copy

import numpy as np
import pytest
from matplotlib.collections import LineCollection

from gapverify.reports.canvas import new_figure
from gapverify.reports.latex import single_scripts
from gapverify.reports.figure_text import figure_problems
from gapverify.reports.claim_figures import claim_figures
from gapverify.reports.claim_panels import Z95
from gapverify.reports.figure_text import (
    Key, _brace, _parses, _rename, _split, case_text, identifier, line, mathtext, rich, text_problems, wrap,
)
from gapverify.reports.figures import stable_rank_figure
from gapverify.reports.overview_figure import overview_figures

SIZES = (64, 128, 256, 512)


def _width_run():
    """width.stable_rank with two cases (the layout tests' synthetic run)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "figure_layout_tests", Path(__file__).with_name("test_figure_layout.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._width_run()


def _rows(means, se=0.004, error=0.0):
    return [{"T": T, "n": 16, "mean": m, "se": se, "error": error, "error_se": 0.0}
            for T, m in zip(SIZES, means)]


def _run():
    """causal.cesaro as the issue saw it (s1_mean 1.60 -> 1.72, limit 1.98 +- 0.04, an
    exact check with zero residuals) and markov.singular_law's law with a limit check."""
    cesaro = [
        {"label": "s1_mean", "kind": "limit", "verdict": "pass", "status": "theorem",
         "predicted": 2.0, "rows": _rows((1.60, 1.64, 1.68, 1.72)), "models": ["a", "b", "c"],
         "statistic": "s1_cesaro", "limit_hat": 1.98, "limit_se": 0.013,
         "limit_interval": [1.94, 2.02], "case": {"s2": 1.0}, "power_target": 0.05},
        {"label": "frob_C_over_H", "kind": "exact", "verdict": "pass", "status": "theorem",
         "predicted": 1.0, "rows": _rows((1.0,) * 4), "case": {"s2": 1.0}},
    ]
    law = [
        {"label": "law:bulk", "kind": "distance", "verdict": "pass", "status": "theorem",
         "predicted": 1.07, "rate": 0.5, "beta": 0.6, "rows": _rows((0.12, 0.08, 0.05, 0.035)),
         "case": {"s2": 0.5}, "power_target": 0.05},
        {"label": "edge", "kind": "limit", "verdict": "pass", "status": "theorem",
         "predicted": 1.4, "rate": 0.667, "beta": 0.8, "rows": _rows((1.30, 1.34, 1.37, 1.38)),
         "limit_hat": 1.4, "limit_se": 0.01, "case": {"s2": 0.5}, "power_target": 0.05},
    ]
    claim = {"status": "theorem", "verdict": "pass", "q": 3.0, "sizes": list(SIZES),
             "replicates": 16}
    return {"claims": [
        {**claim, "claim": "causal.cesaro", "checks": cesaro, "cases": [{"s2": 1.0}],
         "parameters": {"s2": 1.0}},
        {**claim, "claim": "markov.singular_law", "checks": law, "cases": [{"s2": 0.5}],
         "parameters": {"s2": 0.5}}]}


def _figures():
    run = _run()
    return {d.name: d for d in claim_figures(run) + overview_figures(run)}


@pytest.fixture(scope="module")
def drawn():
    return _figures()


def test_every_registry_title_and_quantity_is_mathtext():
    from gapverify.verification.claims.registry import CLAIMS

    for claim in CLAIMS.values():
        for is_math, piece in _split(rich(claim.title)):
            assert not is_math or _parses(piece) is None, (claim.id, piece)
        for p in claim.predictions:
            spelled = single_scripts(_brace(_rename(p.quantity)))  # nothing dropped, no fallback
            assert _parses(spelled) is None and mathtext(p.quantity) == spelled, (claim.id, spelled)


def test_a_users_latex_is_typeset_not_converted():
    text = mathtext(r"\frac1n\mathrm{tr}(W/\sqrt n)^2")
    assert text == r"\frac{1}{n}\mathrm{tr}(W/\sqrt{n})^2"
    assert mathtext(r"\tfrac{1}{T-1}\textstyle\sum_{i\ge2} s_i^2") == r"\frac{1}{T-1}\sum_{i\geq2} s_i^2"
    assert mathtext(r"\|A\|_F^2_{\mathrm{tok}}") == r"\|A\|_F^2{}_{\mathrm{tok}}"  # TeX refuses it too
    assert rich(r"Cesaro: $\|C_T\|_F^2=H_T$ and x_1") == r"Cesaro: $\|C_T\|_F^2=H_T$ and x$\_$1"
    assert identifier("markov.singular_law") == r"$\mathtt{markov.\!singular\_law}$"
    assert case_text({"s2": 0.25, "gamma": 1.0}) == r"$\gamma = 1$, $s^2 = 0.25$"
    lines = wrap(r"a $\frac{1}{2} + x$ b c d e f", 6).split("\n")
    assert r"$\frac{1}{2} + x$" in lines  # a formula is never broken


def test_the_guard_finds_raw_text_bare_log_axes_and_unkeyed_series():
    fig = new_figure(4.0, 3.0)
    ax = fig.subplots()
    ax.set_title(r"$\kappa$ and \frac1n")
    ax.set_xlabel("sr_Sigma1perp_over_T")
    ax.set_ylabel("s -> 1, sqrt(T) s")
    ax.plot([1, 2], [1, 2])  # a series no key names
    ax.set_yscale("log")
    ax.set_yticks([1.5], ["1.5"])  # one labelled tick
    ax.minorticks_off()
    problems = " | ".join(text_problems(fig))
    for what in ("a backslash", "an underscore", "ASCII math", "log y axis", "no key describes"):
        assert what in problems, what
    fig = new_figure(4.0, 3.0)
    ax = fig.subplots()
    key = Key()
    key.mark(ax.plot([1, 2], [1, 2])[0], (r"$\mathrm{sr}(A)$", line("C0")))
    key.add("a marker never drawn", line("C1", marker="s"))
    ax.legend(handles=key.handles())
    assert text_problems(fig) == ["the key lists 'a marker never drawn', which nothing drawn is"]


def test_synthetic_figures_are_typeset_and_laid_out(drawn):
    for name, d in drawn.items():
        assert figure_problems(d.figure) == [], name
    assert text_problems(stable_rank_figure(_width_run()).figure) == []


def test_the_model_is_drawn_out_to_the_limit_in_its_own_variable(drawn):
    """causal.cesaro's s1_mean: means 1.60 .. 1.72, the limit 1.98 +- 0.04 at T = infinity;
    the axis is linear in 1/log^2 T and reaches 0, where the fitted model ends."""
    ax = drawn["causal-cesaro"].figure.axes[0]
    assert r"1/\log^{2} T" in ax.get_xlabel()
    low, high = sorted(ax.get_xlim())
    assert low < 0.0 < high  # the axis reaches T = infinity (u = 0)
    assert "∞" in [t.get_text() for t in ax.get_xticklabels()]
    curve = max(ax.get_lines(), key=lambda l: len(l.get_xdata()))
    assert curve.get_xdata()[-1] == 0.0 and curve.get_ydata()[-1] > 1.9  # not "near 1.75"
    limit = [c for c in ax.containers if len(c[0].get_xdata()) == 1][0]
    assert limit[0].get_xdata()[0] == 0.0 and limit[0].get_ydata()[0] == pytest.approx(1.98)


def test_panel_titles_are_the_typeset_quantity(drawn):
    titles = [ax.get_title().split("\n")[0] for ax in drawn["causal-cesaro"].figure.axes]
    assert titles == [r"$s_1(C_T)$", r"$\|C_T\|_F^2/H_T$"]
    law = drawn["markov-singular-law"].figure.axes[0].get_title()
    assert law.startswith(r"$D_T$: law of $\mathrm{ESD}(\sqrt{T}A)$")


def test_error_bars_are_1_96_se_everywhere(drawn):
    ax = drawn["causal-cesaro"].figure.axes[0]
    segments = [seg for c in ax.collections if isinstance(c, LineCollection)
                for seg in c.get_segments()]
    halves = sorted({round(abs(seg[1][1] - seg[0][1]) / 2, 12) for seg in segments})
    assert Z95 * 0.004 == pytest.approx(halves[0])
    assert "1.96" in " ".join(t.get_text() for leg in drawn["causal-cesaro"].figure.legends
                               for t in leg.get_texts())


def test_an_exact_check_shows_residuals_against_the_tolerance(drawn):
    ax = drawn["causal-cesaro"].figure.axes[1]
    low, high = ax.get_ylim()
    assert low > 1e-20 and high < 1.0  # not 1e-314 to 1e-2
    tolerance = [l for l in ax.get_lines() if l.get_linestyle() == "-."][0]
    assert np.all((tolerance.get_ydata() > low) & (tolerance.get_ydata() < high))
    zeros = [l for l in ax.get_lines() if l.get_marker() == "v"][0]
    assert np.all(zeros.get_ydata() > low)  # a residual of 0, at the floor, in view


def test_a_law_has_its_own_overview_panel_without_the_band(drawn):
    fig = drawn["overview"].figure
    panels = [ax for ax in fig.axes if ax.axison]
    titles = [ax.get_title() for ax in panels]
    assert len(panels) == 3  # causal.cesaro; markov.singular_law's limit and its law
    law = [ax for ax, t in zip(panels, titles) if "its law:" in t]
    assert len(law) == 1 and not law[0].patches and law[0].get_ylabel() == "$D_T$"
    assert all(ax.patches for ax in panels if ax is not law[0])  # the relative band


def test_every_overview_series_is_in_a_panel_key(drawn):
    run = copy.deepcopy(_width_run())
    (d,) = overview_figures(run)
    assert figure_problems(d.figure) == []
    (panel,) = [ax for ax in d.figure.axes if ax.axison]
    entries = [t.get_text() for t in panel.get_legend().get_texts()]
    assert r"$\mathrm{sr}(A)$" in entries and r"$\gamma = 0.5$, $s^2 = 0.5$" in entries
