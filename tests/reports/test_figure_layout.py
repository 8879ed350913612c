"""Layout of the report's figures: no text overlaps another or leaves the figure, no
figure legend covers data, and drawing raises no matplotlib warning (``constrained_layout
not applied`` among them). Run over every figure of the small judged run of
``conftest.tiny`` and over a width figure with two cases (the one that collapsed)."""
from __future__ import annotations

import copy

import pytest
from matplotlib.lines import Line2D

from gapverify.reports.canvas import layout_problems, new_figure
from gapverify.reports.figure_text import figure_problems
from gapverify.reports.claim_figures import asserted_panels, claim_figures, figure_name
from gapverify.reports.figures import draw_all, stable_rank_figure


def test_every_figure_of_a_small_run_reads_cleanly(tiny):
    """Layout and text (:func:`reports.figure_text.figure_problems`): typeset text, two labelled
    ticks on every log axis, a key for every series."""
    _, store_path, run = tiny
    drawn, _ = draw_all(run, store_path)
    assert drawn
    for d in drawn:
        assert figure_problems(d.figure) == [], d.name


def test_a_figure_per_claim_with_a_panel_per_asserted_check(tiny):
    _, _, run = tiny
    drawn = {d.name: d for d in claim_figures(run)}
    for claim in run["claims"]:
        panels = asserted_panels(claim)
        if panels:
            fig = drawn[figure_name(claim["claim"])].figure
            assert len([ax for ax in fig.axes if ax.get_visible()]) == len(panels)


def test_the_checker_finds_overlap_clipping_and_a_legend_on_the_data():
    fig = new_figure(3.0, 2.0)
    ax = fig.subplots()
    ax.set_title("a title long enough to run past both edges of a small figure, surely")
    assert any("clipped" in p for p in layout_problems(fig))
    fig = new_figure(4.0, 3.0)
    ax = fig.subplots()
    ax.text(0.5, 0.5, "one", transform=ax.transAxes)
    ax.text(0.5, 0.5, "two", transform=ax.transAxes)
    assert any("overlaps" in p for p in layout_problems(fig))
    fig = new_figure(4.0, 3.0)
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1])
    fig.legend(handles=[Line2D([], [], label="on the data")], loc="center")
    assert any("legend covers" in p for p in layout_problems(fig))


def test_a_layout_warning_is_a_problem():
    fig = new_figure(1.0, 0.6)  # too small for its decorations: constrained layout gives up
    axes = fig.subplots(2, 2)
    for ax in axes.ravel():
        ax.set_ylabel("a long y label")
        ax.set_title("a title")
    problems = layout_problems(fig)
    assert problems and ("warn" in problems[0] or "overlaps" in " ".join(problems)
                         or "clipped" in " ".join(problems))


def _width_run():
    # width.stable_rank with two cases, standard and fixed checks, and recorded duplicates
    rows = [{"T": T, "n": 8, "mean": m, "se": 0.002, "error": abs(m - 1.28), "error_se": 0.002}
            for T, m in ((64, 1.27), (128, 1.275), (256, 1.279), (512, 1.281))]
    fixed = [{**r, "mean": 0.24 + 0.0005 * i, "error": 0.01} for i, r in enumerate(rows)]
    checks = []
    for case, params in (("s2=0.25, gamma=1", {"s2": 0.25, "gamma": 1.0}),
                         ("s2=0.5, gamma=0.5", {"s2": 0.5, "gamma": 0.5})):
        for label, rr in (("sr_A", rows), ("sr_X1", rows), ("sr_Aperp_over_T", fixed),
                          ("sr_X1perp_over_T", fixed)):
            for verdict in ("pass", "recorded"):
                checks.append({"label": f"{label} @ {case}", "kind": "limit", "verdict": verdict,
                               "status": "derived", "rows": copy.deepcopy(rr),
                               "predicted": 1.28 if "over" not in label else 0.25,
                               "rate": 0.85, "beta": 0.9, "beta_se": 0.1, "limit_hat": 1.28,
                               "limit_se": 0.002, "case": params})
    return {"claims": [{"claim": "width.stable_rank", "status": "derived", "verdict": "pass",
                        "checks": checks, "q": 3.0, "cases": [{"s2": 0.25, "gamma": 1.0},
                                                              {"s2": 0.5, "gamma": 0.5}],
                        "sizes": [64, 128, 256, 512], "replicates": 8}]}


def test_the_width_figure_has_its_legend_below_and_names_the_fix():
    d = stable_rank_figure(_width_run())
    assert layout_problems(d.figure) == []
    labels = [t.get_text() for leg in d.figure.legends for t in leg.get_texts()]
    assert len(labels) <= 8  # quantities, cases and "predicted", not one per series
    assert not any("standard" in t for t in labels)
    std, fix = d.figure.axes
    assert "fix" in fix.get_title() and "standard" in std.get_title()
    assert len(std.lines) and len(fix.lines)  # both panels hold data (no collapsed axes)


@pytest.mark.parametrize("n", [1, 5, 13])
def test_claim_figures_of_any_size_read_cleanly(n):
    run = _width_run()
    run["claims"][0]["checks"] = [c for c in run["claims"][0]["checks"] if c["verdict"] == "pass"][:n]
    if n > 8:
        extra = copy.deepcopy(run["claims"][0]["checks"])
        run["claims"][0]["checks"] += extra[: n - 8]
    for d in claim_figures(run):
        assert layout_problems(d.figure) == [], d.name


def test_a_narrow_range_of_large_sizes_keeps_its_tick_labels_apart():
    # the long profile's T = 4096..16384 (a factor 4, five-digit labels): labelling every
    # size, or three of them, ran "4096", "8192" and "16384" into each other
    from gapverify.reports.overview_figure import overview_figures

    run = _width_run()
    for check in run["claims"][0]["checks"]:
        check["rows"] = [{**r, "T": T} for r, T in zip(check["rows"] * 2, (4096, 5793, 8192, 11585, 16384))]
    drawn = claim_figures(run) + overview_figures(run)
    assert drawn
    for d in drawn:
        assert layout_problems(d.figure) == [], d.name
        for ax in (a for a in d.figure.axes if a.get_xscale() == "log"):  # the T axes
            labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
            assert "16384" in labels, (d.name, labels)
