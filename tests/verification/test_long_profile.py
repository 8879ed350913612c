"""tests for the ``long`` profile: the bulk edge at the paper's kappa = 1 judged from one
shared ``O(T^2)`` experiment (``markov.edge``), each claim through its own predictions only,
and the ``(s2, T)`` domains of the three edge checks (verification/claims/registry/_bulk_edge.py)."""
from __future__ import annotations

import math

import pytest

from gapverify.verification.claims.model import Check, Claim, Prediction, Profile
from gapverify.verification.claims.registry import get_claim
from gapverify.cli import main
from gapverify.verification.running.runner import plan
from gapverify.verification.running.store import Store
from gapverify.verification.running.suite import RunOptions, plan_run, run_claim

EDGE_CLAIMS = {"markov.outliers": "sqrtT_s2", "fix.spectrum": "sqrtT_s1_Aperp",
               "width.stable_rank": "sr_Aperp_over_T"}
LOG2 = math.log(2)


@pytest.mark.parametrize("claim_id,prediction", EDGE_CLAIMS.items())
def test_the_long_profile_judges_its_prediction_through_the_shared_experiment(claim_id, prediction):
    claim = get_claim(claim_id)
    long = claim.for_profile("long")
    assert long.experiment == "markov.edge" and long.parameters == ("s2", "mu")
    assert [p.name for p in long.predictions] == [prediction]
    assert long.checks and {c.prediction for c in long.checks} == {prediction}
    # the other profiles judge the whole claim, through its own experiment
    assert claim.for_profile("quick") is claim and claim.for_profile("standard") is claim
    assert run_claim(claim_id, None, "long").checks == long.checks


def test_the_three_claims_share_every_long_task():
    run = plan_run(RunOptions(claims=list(EDGE_CLAIMS), profile="long"))
    keys = []
    for claim in run.claims:
        prof = run.profiles[claim.id]
        assert [c["s2"] for c in run.cases[claim.id]] == [0.5, pytest.approx(LOG2)]
        keys.append({t.key for values in run.cases[claim.id]
                     for t in plan(Store(":memory:"), claim.experiment, values, prof.sizes,
                                   prof.replicates, 1, "v")})
    assert keys[0] == keys[1] == keys[2] and len(keys[0]) == 2 * 5 * 32


def test_the_edge_checks_are_judged_from_t_min_on_at_log_2():
    sizes = get_claim("markov.outliers").profiles["long"].sizes
    assert sizes == (4096, 5793, 8192, 11585, 16384)
    for claim_id, prediction in EDGE_CLAIMS.items():
        checks = [c for c in get_claim(claim_id).checks if c.prediction == prediction]
        for check in checks:
            # sr(Aperp)/T ~ s_1^-2 doubles the spike's lift: t_min = 5756 at log 2, 909 at 1/2
            floor = 5793 if prediction == "sr_Aperp_over_T" else 4096
            assert check.judged_sizes({"s2": LOG2}, sizes) == [T for T in sizes if T >= floor]
            assert check.judged_sizes({"s2": 0.5}, sizes) == list(sizes)
    # at the quick sizes s2 = 1/2 keeps every size for the edges, one (1024) for sr(Aperp)/T
    quick = get_claim("width.stable_rank").profiles["quick"].sizes
    sr = next(c for c in get_claim("width.stable_rank").checks if c.prediction == "sr_Aperp_over_T")
    assert sr.judged_sizes({"s2": 0.5}, quick) == [1024]
    assert sr.judged_sizes({"s2": 0.25}, quick) == list(quick)


def test_describe_lists_the_long_profile_and_its_judged_sizes(capsys):
    import json

    assert main(["describe", "width.stable_rank", "--profile", "long", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["experiment"] == "markov.edge"
    assert d["profiles"]["long"]["judges"] == ["sr_Aperp_over_T"]
    assert "judges" not in d["profiles"]["quick"]
    sizes = {(c["statistic"], round(j["parameters"]["s2"], 6)): j["sizes"]
             for c in d["checks"] for j in c["judged_sizes"]}
    assert sizes[("sr_Aperp_edge_over_T", 0.5)] == [4096, 5793, 8192, 11585, 16384]
    assert sizes[("sr_Aperp_edge_over_T", round(LOG2, 6))] == [5793, 8192, 11585, 16384]


def test_a_claim_without_a_long_profile_and_an_entry_law_are_refused(capsys):
    assert main(["run", "softmax.kappa", "--profile", "long"]) == 2
    err = capsys.readouterr().err
    assert "claim softmax.kappa has no long profile" in err
    assert "markov.outliers, fix.spectrum, width.stable_rank" in err
    assert main(["run", "markov.outliers", "--profile", "long", "--entries", "exponential"]) == 2
    assert "parameter '--entries'" in capsys.readouterr().err


def test_a_profile_narrows_only_the_claim_it_belongs_to():
    claim = Claim(id="toy.narrow", title="toy", parameters=("s2", "mu"), experiment="toy",
                  predictions=(Prediction("x", "derived", lambda p: 1, "x"),
                               Prediction("y", "derived", lambda p: 2, "y")),
                  checks=(Check("x", "x", "limit", rate=1.0), Check("y", "y", "limit", rate=1.0)),
                  references=(), profiles={"quick": Profile((64, 128), 4),
                                           "long": Profile((64, 128), 4, experiment="other",
                                                           predictions=("y",))})
    long = claim.for_profile("long")
    assert (long.experiment, [c.prediction for c in long.checks]) == ("other", ["y"])
    assert long.parameters == ("s2", "mu")  # none named: the claim's
    assert claim.for_profile("quick") is claim and claim.for_profile("gpu") is claim


def test_every_profile_the_command_line_offers_has_a_power_target():
    from gapverify.verification.claims.inputs import PROFILES as OFFERED
    from gapverify.verification.claims.model import POWER_TARGETS, PROFILES

    assert PROFILES == OFFERED == tuple(POWER_TARGETS)


def test_verify_long_runs_the_edge_claims_and_the_report_without_the_depth_figure(
        tmp_path, monkeypatch, capsys):
    import json
    from pathlib import Path

    from gapverify.cli import pipeline

    calls = []

    def step(argv):
        calls.append(argv)
        if argv[0] == "run":
            claims = [{"claim": c, "verdict": "verified"} for c in EDGE_CLAIMS]
            Path(argv[argv.index("--json") + 1]).write_text(json.dumps({"claims": claims}))
        return 0

    monkeypatch.setattr(pipeline, "_step", step)
    assert main(["verify", "--profile", "long", "--out", str(tmp_path / "out"),
                 "--store", str(tmp_path / "s.sqlite")]) == 0
    assert [a[0] for a in calls] == ["run", "report"]
    assert calls[0][:3] == ["run", "--profile", "long"]
    out = capsys.readouterr().out
    assert "3 verified: exit 0" in out and "depth_profile" not in out


def test_the_long_profile_takes_a_backend_for_all_three_claims(tmp_path, capsys):
    # markov.edge is an array-API experiment: fix.spectrum, whose own experiment takes full
    # spectra in numpy, samples on a backend at the long profile too
    from gapverify.verification.running.sampling_inputs import takes_backend

    assert all(takes_backend(c, "long") for c in EDGE_CLAIMS)
    assert not takes_backend("fix.spectrum", "quick")
    code = main(["run", "fix.spectrum", "--profile", "long", "--backend", "numpy", "--dtype",
                 "float32", "--sizes", "64,91,128,181", "--replicates", "2", "--quiet",
                 "--store", str(tmp_path / "s.sqlite")])
    assert code in (0, 3), capsys.readouterr().err
    assert main(["run", "fix.spectrum", "--backend", "numpy", "--dtype", "float32"]) == 2
