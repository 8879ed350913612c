"""The convergence overview of the main report (issue 22): one panel per claim with an
asserted limit or distance check, the values plotted are the results JSON's (relative
deviation of the mean from its prediction, 1.96 se error bars, the power target's band),
the layout guard passes, the paper's claims and the peers' results get their own figures,
and the main report sets it after the summary."""
from __future__ import annotations

import copy
import math
import re

import numpy as np
import pytest
from matplotlib.collections import LineCollection

from gapverify.reports import document
from gapverify.reports.canvas import layout_problems
from gapverify.reports.overview_figure import (
    MAX_HEIGHT, OVERVIEW, Z95, check_series, overview_checks, overview_figures,
)

SIZES = (64, 128, 256, 512)


def _rows(means, se=0.004):
    return [{"T": T, "n": 16, "mean": m, "se": se, "error": 0.0, "error_se": se}
            for T, m in zip(SIZES, means)]


def _check(label, kind="limit", verdict="pass", predicted=2.0, means=None, **extra):
    means = means if means is not None else [predicted * f for f in (1.2, 1.1, 1.05, 1.02)]
    return {"label": label, "kind": kind, "verdict": verdict, "status": "derived",
            "predicted": predicted, "rows": _rows(means), "power": 0.01, "power_target": 0.03,
            "rate": 1.0, "beta": 1.0, "limit_hat": None, "limit_se": None,
            "limit_interval": None, "case": {}, "corrected": False, "models": None, **extra}


def _claim(claim_id, checks, verdict="pass"):
    return {"claim": claim_id, "status": "derived", "verdict": verdict, "checks": checks,
            "q": 3.0, "cases": [{}], "parameters": {}, "sizes": list(SIZES), "replicates": 16}


def _run():
    """Four claims, not in the registry: two with asserted limit or distance checks, one
    with only recorded and exact checks (no panel), one whose check lacks power."""
    return {"profile": "standard", "level": 0.01, "claims": [
        _claim("test.limits", [
            _check("x_over_L @ s2=0.25", case={"s2": 0.25}),  # 2% above L at T = 512
            _check("x_over_L @ s2=0.5", case={"s2": 0.5}, predicted=-4.0,
                   means=[-4.4, -4.2, -4.1, -4.04]),  # 1% below |L|: -0.01
            _check("recorded_one", verdict="recorded"),
            _check("exact_one", kind="exact"),
        ]),
        _claim("test.law", [_check("law:bulk", kind="distance", predicted=1.07,
                                   means=[0.12, 0.08, 0.05, 0.03])]),
        _claim("test.recorded", [_check("only_recorded", verdict="recorded"),
                                 _check("only_exact", kind="exact")], verdict="recorded"),
        _claim("test.weak", [_check("zero_limit", verdict="lacks power", predicted=0.0,
                                    means=[0.04, 0.02, 0.01, 0.005])], verdict="not verified"),
    ]}


def _panels(fig):
    # the panels: axes drawn with their axis (the key's host is an axes without one)
    return [ax for ax in fig.axes if ax.get_visible() and ax.axison]


def _claim_id(title: str) -> str:
    # the claim id of a panel title: "$\mathtt{test.\!limits}$\nverified" -> "test.limits"
    first = title.split("\n")[0]
    return first.replace(r"$\mathtt{", "").replace("}$", "").replace(r".\!", ".").replace(r"\_", "_")


def _by_title(fig):
    return {_claim_id(ax.get_title()): ax for ax in _panels(fig)}


def test_one_panel_per_claim_with_an_asserted_limit_or_distance_check():
    run = _run()
    (drawn,) = overview_figures(run)
    assert drawn.name == OVERVIEW and drawn.overview and drawn.claim is None
    assert sorted(_by_title(drawn.figure)) == ["test.law", "test.limits", "test.weak"]
    assert [len(overview_checks(c)) for c in run["claims"]] == [2, 1, 0, 1]
    assert layout_problems(drawn.figure) == []


def test_panel_titles_carry_the_verdict_words_of_outcomes():
    titles = {_claim_id(t): " ".join(t.split("\n")[1:])
              for t in (ax.get_title() for ax in _panels(overview_figures(_run())[0].figure))}
    assert titles["test.limits"] == "verified"
    assert titles["test.weak"] == "not verified: lacks power"  # the claim's word, on two lines


def test_a_mean_two_percent_above_its_prediction_is_plotted_at_0_02():
    run = _run()
    s = check_series(run["claims"][0], run["claims"][0]["checks"][0])
    assert s.scale == "relative" and s.y[-1] == pytest.approx(0.02, abs=1e-12)
    assert s.half[-1] == pytest.approx(Z95 * 0.004 / 2.0)  # 1.96 se / |L|
    below = check_series(run["claims"][0], run["claims"][0]["checks"][1])
    assert below.y[-1] == pytest.approx(-0.01, abs=1e-12)  # divided by |L|, sign kept
    # and the figure plots exactly these values: a line of the panel ends at 0.02, at the
    # largest size (moved sideways by at most 4%), with an error bar 1.96 se/|L| long
    ax = _by_title(overview_figures(run)[0].figure)["test.limits"]
    ends = [(line.get_xdata()[-1], line.get_ydata()[-1]) for line in ax.get_lines()
            if len(line.get_xdata()) == len(SIZES)]
    assert any(abs(y - 0.02) < 1e-12 and abs(x / 512 - 1) <= 0.041 for x, y in ends), ends
    bars = [seg for coll in ax.collections if isinstance(coll, LineCollection)
            for seg in coll.get_segments()]
    assert any(abs(seg[0][1] - (0.02 - s.half[-1])) < 1e-12 and abs(seg[1][1] - (0.02 + s.half[-1])) < 1e-12
               for seg in bars)


def test_the_band_is_the_power_target():
    run = _run()
    ax = _by_title(overview_figures(run)[0].figure)["test.limits"]
    assert [(p.get_y(), p.get_height()) for p in ax.patches] == [(-0.03, 0.06)]
    for check in run["claims"][0]["checks"]:
        check["power_target"] = 0.05  # the quick profile's
    ax = _by_title(overview_figures(run)[0].figure)["test.limits"]
    assert [(p.get_y(), p.get_height()) for p in ax.patches] == [(-0.05, 0.1)]


def test_a_law_is_its_distance_and_a_zero_prediction_its_scale():
    run = _run()
    law = check_series(run["claims"][1], run["claims"][1]["checks"][0])
    assert law.scale == "distance" and list(law.y) == [0.12, 0.08, 0.05, 0.03]
    weak = run["claims"][3]
    s = check_series(weak, weak["checks"][0])  # L = 0, no zero scale anywhere: absolute
    assert s.scale == "absolute" and s.y[-1] == 0.005
    assert "absolute" in _by_title(overview_figures(run)[0].figure)["test.weak"].get_ylabel()
    scaled = copy.deepcopy(weak)
    scaled["checks"][0]["zero_scale"] = 0.5  # the results' own zero scale
    s = check_series(scaled, scaled["checks"][0])
    assert s.scale == "zero scale" and s.y[-1] == pytest.approx(0.01)


def test_the_judging_writes_the_zero_scale_the_overview_reads():
    """kq.attention's merged kurtosis is predicted 0 and its power is measured against the
    check's zero scale 3: the judging writes it into the results, the overview divides by
    it."""
    import dataclasses

    from gapverify.verification.claims.registry import CLAIMS
    from gapverify.verification.judging.verdict import judge_claim

    params = {"s2": 0.5, "d_qk": 16, "gamma": 1.0, "sigma_V": 1.0}
    data = {T: [{"merged_kurtosis": e} for e in (0.9 / T, 1.1 / T, 1.0 / T)] for T in SIZES}
    res = judge_claim(CLAIMS["kq.attention"], data, params, q=3.0, root_seed=0, measure=False,
                      only=["merged_kurtosis"], parameter_coverage=False)
    (check,) = [dataclasses.asdict(c) for c in res.checks]
    assert check["zero_scale"] == 3.0
    check.update(verdict="pass", kind="limit")
    claim = _claim("kq.attention", [check])
    s = check_series(claim, check)
    assert s.scale == "zero scale"
    assert s.y[-1] == pytest.approx(np.mean([0.9, 1.1, 1.0]) / SIZES[-1] / 3.0)


def test_the_extrapolated_limit_is_relative_too():
    run = _run()
    check = run["claims"][0]["checks"][0]
    check.update(limit_hat=2.01, limit_interval=[1.99, 2.03])
    s = check_series(run["claims"][0], check)
    assert s.limit == pytest.approx((0.005, -0.005, 0.015))


def test_a_pooled_check_shows_the_corrected_mean():
    """causal.cesaro's frob_noise_over_H: the theory's finite-size mean is subtracted, as
    the verdict judges it (the raw mean is 30% low at T = 1024)."""
    from gapverify.verification.claims.registry import CLAIMS

    reg = next(c for c in CLAIMS["causal.cesaro"].checks if c.label == "frob_noise_over_H")
    params = {"s2": 0.5, "mu": -0.5 * math.log(2)}
    L = math.exp(0.5) - 1
    corr = np.asarray(reg.correction(params, np.array(SIZES)), dtype=float)
    claim = _claim("causal.cesaro", [_check("frob_noise_over_H @ s2=0.5", predicted=L,
                                            means=list(L + corr), case=params, corrected=True)])
    s = check_series(claim, claim["checks"][0])
    assert np.allclose(s.y, 0.0, atol=1e-9)


def test_peers_get_their_own_overview():
    run = _run()
    peer = copy.deepcopy(run["claims"][0])
    peer["claim"] = "peers.test_peer"
    run["claims"].insert(0, peer)
    drawn = {d.name: d for d in overview_figures(run)}
    assert set(drawn) == {OVERVIEW, OVERVIEW + "-peers"}
    assert list(_by_title(drawn[OVERVIEW + "-peers"].figure)) == ["peers.test_peer"]
    assert "peers.test_peer" not in _by_title(drawn[OVERVIEW].figure)
    assert "Peers" in drawn[OVERVIEW + "-peers"].caption
    for d in drawn.values():
        assert layout_problems(d.figure) == [], d.name


@pytest.mark.parametrize("claims", [1, 3, 5, 21])
def test_overviews_of_any_size_read_cleanly(claims):
    base = _run()["claims"][0]
    run = {"claims": [{**copy.deepcopy(base), "claim": f"test.claim_{i}"} for i in range(claims)]}
    drawn = overview_figures(run)
    assert sum(len(_panels(d.figure)) for d in drawn) == claims
    assert len(drawn) >= math.ceil(claims / 20)
    for d in drawn:  # a part fits the report's page at 1:1, panel keys and all
        assert d.figure.get_size_inches()[1] <= MAX_HEIGHT + 1e-9, d.name
        assert layout_problems(d.figure) == [], d.name


def test_no_overview_without_an_asserted_check():
    run = _run()
    run["claims"] = [run["claims"][2]]
    assert overview_figures(run) == []


def test_the_main_report_sets_the_overview_after_the_summary(tiny, tmp_path, monkeypatch):
    monkeypatch.setattr(document, "latex_status",
                        lambda engine=None: document.LatexStatus(False, None, (), "test"))
    files = document.write_report(tiny[2], tmp_path / "r", None)
    tex = files.tex.read_text()
    body = tex[tex.index(r"\begin{document}"):]
    at = body.index("{figures/overview.pdf}")
    assert body.index(r"\input{tables/summary}") < body.index(r"\section{Measured against predicted}") < at
    assert at < body.index(r"\section{Checks}")
    caption = re.search(r"\\caption\{(Every asserted prediction against \$T\$.*)\}$", body[at:], re.M)
    assert caption and all(w in caption.group(1) for w in ("1.96", "band", "power target"))
    assert (files.out_dir / "figures" / "overview.png").is_file()
    assert (files.out_dir / "figures" / "overview.pdf").is_file()
