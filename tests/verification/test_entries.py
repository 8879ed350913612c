"""tests for ``gapverify run --entries``: law plumbing (claims, cases, store keys), the
status drops outside a theorem's hypotheses, exit 2 on bad laws, and small end-to-end runs
whose predictions are evaluated at the law's kappa."""
import json
import math

import pytest

from gapverify.theory.entry_laws import parse_entry_law
from gapverify.cli import main
from gapverify.verification.claims.registry import get_claim
from gapverify.verification.claims.registry.markov import (
    ENTRY_LAW_HYPOTHESES, entry_law_drops, with_entry_law,
)
from gapverify.verification.running.runner import params_key
from gapverify.verification.running.store import parameters_key
from gapverify.verification.running.suite import (
    RunOptions, plan_run, reproduce_command, select_entry_claims,
)

SIZES = "128,181,256,362,512"  # five sizes from markov.outliers' smallest profile size, 128
# (its finite-size models are judged from there): the rate-range (edge) checks need four


def _run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _checks(doc):
    return {c["label"]: c for c in doc["claims"][0]["checks"]}


# --- bad input: exit 2, the allowed values, no traceback -----------------------------------

@pytest.mark.parametrize("law, fragments", [
    ("cauchy", ["unknown entry law", "gaussian-logits", "exponential", "scipy:NAME(ARGS)"]),
    ("scipy:notalaw", ["scipy.stats has no distribution named 'notalaw'"]),
    ("scipy:gamma(1, 2, 3, 4)", ["bad arguments for scipy.stats.gamma(a, loc=0, scale=1)",
                                 "positional arguments"]),
    ("scipy:gamma(-2)", ["outside the domain of scipy.stats.gamma"]),
    ("scipy:gamma(open('x'))", ["must be finite numbers"]),
    ("scipy:pareto(1.5)", ["variance is infinite"]),
    ("scipy:norm", ["nonnegative"]),
])
def test_bad_laws_exit_2_with_the_allowed_values(law, fragments, tmp_path, capsys):
    code, out, err = _run(["run", "markov.outliers", "--entries", law, "--store",
                           str(tmp_path / "s.sqlite"), "--quiet"], capsys)
    assert code == 2, err
    assert err.startswith("gapverify: error: parameter '--entries'") and "Traceback" not in err
    for f in fragments:
        assert f in err, err
    assert not (tmp_path / "s.sqlite").exists() or "measurements" not in out


def test_claims_without_entry_laws_exit_2_naming_them(tmp_path, capsys):
    code, _, err = _run(["run", "markov.outliers", "depth.stable_rank", "--entries", "exponential",
                         "--store", str(tmp_path / "s.sqlite"), "--quiet"], capsys)
    assert code == 2 and "depth.stable_rank take no entry law" in err, err
    for claim in ENTRY_LAW_HYPOTHESES:
        assert claim in err


def test_set_s2_with_another_law_exits_2(tmp_path, capsys):
    code, _, err = _run(["run", "markov.outliers", "--entries", "exponential", "--set", "s2=0.5",
                         "--store", str(tmp_path / "s.sqlite"), "--quiet"], capsys)
    assert code == 2 and "--set s2" in err and "kappa = 1" in err, err


def test_lognormal_s2_conflicting_with_set_exits_2(tmp_path, capsys):
    code, _, err = _run(["run", "markov.outliers", "--entries", "lognormal(0.25)", "--set",
                         "s2=0.5", "--store", str(tmp_path / "s.sqlite"), "--quiet"], capsys)
    assert code == 2 and "differs" in err, err


# --- plan: claims, one case at s2_eff, store keys ----------------------------------------

def test_without_claim_names_the_entry_law_claims_are_selected():
    assert select_entry_claims(["markov.outliers", "depth.stable_rank"], "exponential",
                               named=False) == ["markov.outliers"]
    assert select_entry_claims(["depth.stable_rank"], "exponential", named=False) == \
        list(ENTRY_LAW_HYPOTHESES)
    assert select_entry_claims(["depth.stable_rank"], None, named=True) == ["depth.stable_rank"]
    assert select_entry_claims(["depth.stable_rank"], "lognormal", named=True) == ["depth.stable_rank"]


def test_one_case_at_the_equivalent_s2():
    run = plan_run(RunOptions(claims=["markov.outliers", "width.stable_rank"], profile="quick",
                              entries="exponential"))
    for claim in run.claims:
        (case,) = run.cases[claim.id]
        assert case["s2"] == pytest.approx(math.log(2), rel=1e-15)
    assert run.cases["width.stable_rank"][0]["gamma"] == 1.0
    # the default law keeps its cases and claims
    run = plan_run(RunOptions(claims=["markov.outliers"], profile="quick"))
    assert [c["s2"] for c in run.cases["markov.outliers"]] == [0.25, 0.5] and run.law is None
    run = plan_run(RunOptions(claims=["markov.outliers"], profile="quick", entries="lognormal(0.3)"))
    assert [c["s2"] for c in run.cases["markov.outliers"]] == [0.3] and run.law is None


def test_default_store_keys_are_unchanged_and_a_law_is_in_its_key():
    case = {"s2": 0.25, "mu": -0.5}
    assert params_key(case) == parameters_key(case)
    key = json.loads(params_key({**case, "entries": "scipy:gamma(2)"}))
    assert key == {"s2": 0.25, "mu": -0.5, "entries": "scipy:gamma(2)"}


def test_reproduce_command_names_the_law_not_s2():
    opts = RunOptions(claims=["markov.outliers"], profile="quick", seed=1, replicates=8,
                      entries="scipy:gamma(2)")
    (job,) = plan_run(opts).jobs
    cmd = reproduce_command(job, [64, 91, 128])
    assert "--entries 'scipy:gamma(2)'" in cmd and "s2=" not in cmd and "mu=" not in cmd
    # fixed replicates (--replicates 8) are restated; narrowed sizes of a self-sized run
    # would restate the replicates drawn there
    assert "--sizes 64,91,128 --replicates 8 --seed 1" in cmd and cmd.endswith("--no-replay")


# --- hypotheses: status drops, never silently a theorem ------------------------------------

def test_infinite_fourth_moment_drops_the_edge_predictions():
    law = parse_entry_law("scipy:pareto(3.5)")
    claim = with_entry_law(get_claim("markov.outliers"), law)
    status = {p.name: p.status for p in claim.predictions}
    assert status == {"lambda1": "theorem", "s1": "conjecture", "sqrtT_s2": "conjecture",
                      "sqrtT_lambda2": "conjecture"}
    why = entry_law_drops(get_claim("markov.outliers"), law)["sqrtT_s2"]
    assert "fourth moment" in why and "theorem -> conjecture" in why
    edge = next(c for c in claim.checks if c.prediction == "sqrtT_s2")
    assert "theorem -> conjecture" in edge.rate_note and edge.domain is None
    sr = with_entry_law(get_claim("width.stable_rank"), law)
    assert {p.name for p in sr.predictions if p.status == "conjecture"} >= {
        "sr_Aperp_over_T", "sr_X1perp_over_T", "sr_Sigma1perp_over_T"}
    sing = {p.name: p.status for p in with_entry_law(get_claim("markov.singular_law"), law).predictions}
    assert sing["law"] == "theorem" and sing["edge"] == "conjecture"  # the law needs a variance only


def test_unbounded_density_drops_the_circular_law():
    for spec in ("scipy:gamma(0.5)", "scipy:poisson(3)"):
        law = parse_entry_law(spec)
        circ = with_entry_law(get_claim("markov.circular_law"), law)
        assert circ.prediction("law").status == "conjecture" and circ.status == "conjecture"
        assert "bounded density" in circ.prediction("law").note
        # the singular-value law and the edges do not need a density
        sing = with_entry_law(get_claim("markov.singular_law"), law)
        assert {p.status for p in sing.predictions} == {"theorem"}


def test_a_law_inside_every_hypothesis_keeps_every_status():
    for spec in ("exponential", "scipy:gamma(2)", "scipy:uniform"):
        law = parse_entry_law(spec)
        for cid in ENTRY_LAW_HYPOTHESES:
            claim = get_claim(cid)
            assert with_entry_law(claim, law).status == claim.status, (spec, cid)


def test_lognormal_domain_kept_for_lognormal_entries_lifted_for_others():
    edge = lambda claim: next(c for c in claim.checks if c.prediction == "sqrtT_s2")  # noqa: E731
    claim = get_claim("markov.outliers")
    # the log-normal domain of the edge is in (s2, T): a smallest judged size above s2 = 1/2
    kept = edge(with_entry_law(claim, parse_entry_law("scipy:lognorm(0.5)")))
    assert kept.min_size is not None and kept.min_size({"s2": 1.0}) > 16384
    lifted = edge(with_entry_law(claim, parse_entry_law("exponential")))
    assert lifted.domain is None and lifted.min_size is None


# --- end to end ------------------------------------------------------------------------------

def _quick(law, tmp_path, capsys, *extra):
    out = tmp_path / "run.json"
    code, printed, err = _run(["run", "markov.outliers", "--entries", law, "--profile", "quick",
                               "--sizes", SIZES, "--replicates", "8", "--workers", "1", "--quiet",
                               "--no-replay", "--store", str(tmp_path / "s.sqlite"),
                               "--json", str(out), *extra], capsys)
    return code, printed, json.loads(out.read_text())


@pytest.mark.slow
def test_exponential_entries_are_judged_at_kappa_1_and_a_wrong_kappa_fails(tmp_path, capsys):
    code, printed, doc = _quick("exponential", tmp_path, capsys)
    checks = _checks(doc)
    assert code in (0, 3), printed
    assert doc["entries"]["kappa"] == 1.0 and doc["entries"]["kappa2"] == "1"
    assert doc["claims"][0]["parameters"]["s2"] == pytest.approx(math.log(2))
    assert checks["sqrtT_s2"]["predicted"] == pytest.approx(2.0, rel=1e-15)      # 2 kappa
    assert checks["sqrtT_lambda2"]["predicted"] == pytest.approx(1.0, rel=1e-15)  # kappa
    assert checks["s1"]["outcome"] == "pass" and checks["lambda1"]["outcome"] == "pass"
    assert checks["sqrtT_s2"]["outcome"] in ("pass", "lacks power")
    assert "Entry law exponential: kappa = 1 " in printed
    # reports look measurements up by experiment: never softmax's at s2 = log 2 for these
    assert doc["claims"][0]["experiment"] == "markov.outliers[entries=exponential]"
    from gapverify.reports.results import load_measurements
    assert load_measurements(tmp_path / "s.sqlite", doc, doc["claims"][0]) is None
    # the same exponential samples judged against log-normal s2 = 1/2 (kappa = 0.805): fail
    factor = 0.5 / math.log(2)
    code, printed, doc = _quick("exponential", tmp_path, capsys, "--perturb-parameter",
                                f"sqrtT_s2:s2={factor!r}")
    checks = _checks(doc)
    assert code == 1, printed
    assert checks["sqrtT_s2"]["outcome"] == "fail"
    assert checks["sqrtT_s2"]["predicted"] == pytest.approx(2 * math.sqrt(math.e ** 0.5 - 1))
    assert "--entries exponential" in checks["sqrtT_s2"]["reproduce"]


@pytest.mark.slow
def test_scipy_gamma_2_is_judged_at_kappa_one_over_sqrt_2(tmp_path, capsys):
    code, printed, doc = _quick("scipy:gamma(2)", tmp_path, capsys)
    checks = _checks(doc)
    assert code in (0, 3), printed
    assert doc["entries"]["kappa"] == pytest.approx(1 / math.sqrt(2), rel=1e-15)
    assert checks["sqrtT_s2"]["predicted"] == pytest.approx(math.sqrt(2), rel=1e-15)
    assert checks["s1"]["outcome"] == "pass"
    assert checks["sqrtT_s2"]["outcome"] in ("pass", "lacks power")
    assert doc["claims"][0]["status"] == "conjecture"  # sqrtT_lambda2, as for softmax


@pytest.mark.slow
def test_pareto_run_reports_the_dropped_statuses(tmp_path, capsys):
    code, printed, doc = _quick("scipy:pareto(3.5)", tmp_path, capsys)
    checks = _checks(doc)
    assert checks["sqrtT_s2"]["status"] == "conjecture" and checks["lambda1"]["status"] == "theorem"
    assert "theorem -> conjecture" in checks["sqrtT_s2"]["rate_note"]
    assert set(doc["entries"]["dropped"]["markov.outliers"]) == {"s1", "sqrtT_s2", "sqrtT_lambda2"}
    assert doc["entries"]["fourth_moment_finite"] is False
    assert "markov.outliers: sqrtT_s2: entry law scipy:pareto(3.5) lacks a finite fourth moment" in printed
    assert code != 0  # never verified as a theorem


@pytest.mark.parametrize("command", ["audit", "calibrate"])
def test_audit_and_calibrate_take_entries_and_scheduler_and_refuse_bad_ones(command, tmp_path, capsys):
    """The shared run options: a bad law, a claim that takes none, or a bad scheduler
    address exit 2 before anything is sampled (no store is created)."""
    store = tmp_path / "s.sqlite"
    for args, words in ((["--entries", "nonsense"], "unknown entry law"),
                        (["depth.stable_rank", "--entries", "exponential"], "take no entry law"),
                        (["--scheduler", "bogus"], "parameter '--scheduler'")):
        assert main([command, *args, "--store", str(store)]) == 2
        assert words in capsys.readouterr().err
    assert not store.exists()


def test_audit_with_an_entry_law_judges_at_its_kappa(tmp_path, capsys):
    """audit --entries exponential: the predictions at kappa = 1 (2 kappa = 2)."""
    out = tmp_path / "a.json"
    main(["audit", "markov.outliers", "--entries", "exponential", "--sizes", "64,91,128,181",
          "--replicates", "4", "--workers", "1", "--quiet", "--store", str(tmp_path / "s.sqlite"),
          "--json", str(out)])
    doc = json.loads(out.read_text())
    (claim,) = doc["claims"]
    assert claim["parameters"]["s2"] == pytest.approx(math.log(2))
