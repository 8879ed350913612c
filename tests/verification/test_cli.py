"""tests for verification/cli.py: the command-line contract (exit codes, JSON, errors)."""
import json

import pytest

from verification.cli import main
from verification.store import Store

ISSUE_CLAIMS = ["markov.singular_law", "markov.circular_law", "markov.outliers",
                "softmax.kappa", "fix.spectrum", "width.stable_rank"]


def _run(argv, capsys):
    code = main(argv)
    return code, capsys.readouterr().out


@pytest.mark.slow
def test_quick_profile_verdicts_and_power(quick_store, tmp_path, capsys):
    """The shared quick run: no claim fails; each is verified with power or says exactly
    which prediction lacks power; exit 0 only when every claim is verified."""
    path, results = quick_store
    out = tmp_path / "run.json"
    code, printed = _run(["run", *results, "--profile", "quick", "--store", path,
                          "--json", str(out), "--quiet", "--workers", "1", "--no-replay"], capsys)
    doc = json.loads(out.read_text())
    verdicts = {c["claim"]: c["outcome"] for c in doc["claims"]}
    assert "fail" not in verdicts.values(), printed
    assert code == (0 if set(verdicts.values()) == {"pass"} else 3), printed
    for c in doc["claims"]:
        assert c["power_summary"].endswith("predictions verified with power")
        for why in c["unverified"]:
            assert "lacks power at T <=" in why or "not assessed" in why
        for check in c["checks"]:
            assert check["power_class"] in ("exact", "rated", "rate range", "outside domain", "recorded")
            if check["outcome"] == "pass":
                assert check["power"] is not None and check["power"] <= 0.05
    statuses = {c["claim"]: c["status"] for c in doc["claims"]}
    assert statuses["markov.outliers"] == "conjecture"  # contains sqrtT_lambda2
    assert "predictions verified with power" in printed and "power" in printed
    # kappa != 1, two gamma, two sigma_V and two depths are all judged
    width = next(c for c in doc["claims"] if c["claim"] == "width.stable_rank")
    assert {(c["s2"], c["gamma"]) for c in width["cases"]} >= {(0.25, 1.0), (0.5, 0.5)}
    grad = next(c for c in doc["claims"] if c["claim"] == "gradient.value_frobenius")
    assert len({c["sigma_V"] for c in grad["cases"]}) == 2 and 1.0 not in {c["sigma_V"] for c in grad["cases"]}
    assert len({c["depth"] for c in grad["cases"]}) == 2


@pytest.mark.slow
def test_perturbed_statements_are_rejected(quick_store, tmp_path, capsys):
    """--perturb 0.05 multiplies every limit by 1.05; the same samples must reject every
    claim. --perturb NAME=EPS makes one prediction wrong, and only its checks fail."""
    path, results = quick_store
    out = tmp_path / "perturbed.json"
    code, printed = _run(["run", *results, "--profile", "quick", "--store", path,
                          "--json", str(out), "--quiet", "--perturb", "0.05", "--no-replay"], capsys)
    assert code == 1
    failed = {c["claim"] for c in json.loads(out.read_text())["claims"] if c["outcome"] == "fail"}
    assert failed == set(results)
    assert "reproduce: gapverify run" in printed
    code, printed = _run(["run", "markov.outliers", "--profile", "quick", "--store", path,
                          "--json", str(out), "--quiet", "--perturb", "sqrtT_s2=-0.05",
                          "--no-replay"], capsys)
    doc = json.loads(out.read_text())
    assert code == 1 and doc["perturb_predictions"] == {"sqrtT_s2": -0.05}
    failed = {c["label"].split(" @")[0] for c in doc["claims"][0]["checks"] if c["outcome"] == "fail"}
    assert failed == {"sqrtT_s2"}
    assert "--perturb sqrtT_s2=-0.05" in printed  # the reproduce line carries the variant


@pytest.mark.slow
def test_one_prediction_at_a_wrong_parameter_is_rejected(quick_store, tmp_path, capsys):
    path, _ = quick_store
    out = tmp_path / "wrong.json"
    code, _ = _run(["run", "width.stable_rank", "--profile", "quick", "--store", path, "--json",
                    str(out), "--quiet", "--no-replay", "--perturb-parameter",
                    "sr_X1perp_over_T:gamma=0.8"], capsys)
    doc = json.loads(out.read_text())
    assert code == 1
    failed = {c["label"].split(" @")[0] for c in doc["claims"][0]["checks"] if c["outcome"] == "fail"}
    assert failed == {"sr_X1perp_over_T"}


def test_too_few_sizes_is_not_verified_and_not_exit_0(tmp_path, capsys):
    code, printed = _run(["run", "softmax.kappa", "--sizes", "16,23,32", "--replicates", "3",
                          "--store", str(tmp_path / "s.sqlite"), "--quiet", "--workers", "1"], capsys)
    assert code in (1, 3), printed
    if code == 3:
        assert "NOT VERIFIED" in printed and "lacks power" in printed


def test_claims_json_lists_ids_and_statuses(capsys):
    assert main(["claims", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    ids = {r["id"]: r for r in rows}
    assert set(ISSUE_CLAIMS) <= set(ids)
    assert ids["markov.singular_law"]["status"] == "theorem"
    assert ids["markov.outliers"]["predictions"]["sqrtT_lambda2"] == "conjecture"


def test_predict_json_contract(capsys):
    assert main(["predict", "width.stable_rank", "--set", "gamma=1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"claim", "status", "parameters", "predictions", "statement"}
    p = out["predictions"]
    assert p["sr_A"] == pytest.approx(2.0) and p["sr_Sigma1"] == 1.0
    assert p["sr_Aperp_over_T"] == 0.25
    assert p["sr_X1perp_over_T"] == pytest.approx(4 / 27, rel=1e-14)
    assert p["sr_Sigma1perp_over_T"] == pytest.approx(16 / 243, rel=1e-14)
    assert main(["predict", "softmax.kappa", "--set", "s2=1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["predictions"]["kappa"] == pytest.approx(
        (2.718281828459045 - 1) ** 0.5, rel=1e-15)


@pytest.mark.parametrize("argv,fragment", [
    (["run", "markov.outliers", "--sizes", "64,-5"], "'--sizes (T)' must be an integer in [16,"),
    (["run", "markov.outliers", "--sizes", "64,1.5"], "'--sizes (T)' must be an integer"),
    (["run", "markov.outliers", "--sizes", "abc"], "'--sizes (T)'"),
    (["run", "markov.outliers", "--sizes", "10"], "in [16, 16384]"),
    (["run", "width.stable_rank", "--set", "gamma=1.5"], "'gamma'"),
    (["run", "width.stable_rank", "--set", "gamma=0"], "(0, 1]"),
    (["run", "markov.outliers", "--set", "s2=-1"], "'s2'"),
    (["run", "width.stable_rank", "--set", "sigma_V=-1"], "'sigma_V'"),
    (["run", "markov.outliers", "--set", "s2=nan"], "finite"),
    (["run", "markov.outliers", "--set", "s2=inf"], "finite"),
    (["run", "markov.outliers", "--set", "mu=nan"], "'mu'"),
    (["run", "markov.outliers", "--set", "beta=1"], "unknown parameter 'beta'"),
    (["run", "markov.outliers", "--set", "gamma=0.5"], "parameter 'gamma' in --set is not a parameter of claim(s) markov.outliers"),
    (["run", "no.such.claim"], "unknown claim 'no.such.claim'"),
    (["run", "markov.outliers", "--replicates", "1"], "'--replicates' must be an integer in [2,"),
    (["run", "markov.outliers", "--perturb", "nan"], "'--perturb'"),
    (["run", "markov.outliers", "--perturb", "0.1", "--perturb", "0.2"], "EPS given twice"),
    (["run", "markov.outliers", "--perturb", "s1=2"], "'--perturb s1'"),
    (["run", "markov.outliers", "--perturb", "nosuch=0.1"], "no selected claim has a prediction named 'nosuch'"),
    (["run", "markov.outliers", "--perturb-parameter", "s1=1.2"], "PREDICTION:PARAMETER=FACTOR"),
    (["run", "markov.outliers", "--perturb-parameter", "s1:beta=1.2"], "unknown parameter 'beta'"),
    (["run", "markov.outliers", "--perturb-parameter", "s1:s2=-1"], "'--perturb-parameter s1:s2'"),
    (["run", "markov.outliers", "--perturb-parameter", "s1:gamma=0.8"], "takes no parameter 'gamma'"),
    (["run", "markov.outliers", "--workers", "0"], "'--workers'"),
    (["run", "markov.outliers", "--seed", "-3"], "'--seed'"),
    (["predict", "markov.outliers", "--set", "gamma=0.5"], "takes no parameter 'gamma'"),
    (["predict", "nope"], "unknown claim 'nope'"),
    (["run", "--profile", "huge"], "invalid choice"),
])
def test_bad_input_exits_2_naming_the_parameter(argv, fragment, tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    Store(store).close()
    before = store.read_bytes()
    code = main([*argv, "--store", str(store)] if argv[0] == "run" else argv)
    err = capsys.readouterr().err
    assert code == 2
    assert fragment in err
    assert store.read_bytes() == before  # nothing stored, nothing corrupted
