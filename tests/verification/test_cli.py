"""tests for verification/cli.py: the command-line contract (exit codes, JSON, errors)."""
import json

import pytest

from verification.cli import main
from verification.store import Store

ISSUE_CLAIMS = ["markov.singular_law", "markov.circular_law", "markov.outliers",
                "softmax.kappa", "fix.spectrum", "width.stable_rank"]
LAYER_CLAIMS = ["width.stable_rank", "depth.stable_rank", "depth.frobenius",
                "gradient.value_frobenius", "gradient.input_jacobian", "kq.attention"]
ALL_CLAIMS = list(dict.fromkeys(ISSUE_CLAIMS + LAYER_CLAIMS))


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    return str(tmp_path_factory.mktemp("store") / "suite.sqlite")


@pytest.fixture(scope="module")
def quick_run(store_path, tmp_path_factory):
    """One quick-profile run of every claim (2 workers); the tests below read it."""
    out = tmp_path_factory.mktemp("run") / "run.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["run", *ALL_CLAIMS, "--profile", "quick", "--store", store_path,
                     "--json", str(out), "--quiet", "--workers", "2"])
    return code, json.loads(out.read_text()), buf.getvalue()


@pytest.mark.slow
def test_quick_profile_verifies_every_claim(quick_run):
    code, result, printed = quick_run
    assert code == 0, printed
    assert {c["claim"] for c in result["claims"]} == set(ALL_CLAIMS)
    assert all(c["verdict"] == "pass" for c in result["claims"]), printed
    statuses = {c["claim"]: c["status"] for c in result["claims"]}
    assert statuses["markov.outliers"] == "conjecture"  # contains sqrtT_lambda2
    assert "SUPPORTED" in printed and "not a theorem" in printed


@pytest.mark.slow
def test_layer_claims_cover_depth_three_and_gamma_below_one(quick_run):
    _, result, _ = quick_run
    depth = next(c for c in result["claims"] if c["claim"] == "depth.stable_rank")
    assert {(c["depth"], c["gamma"]) for c in depth["cases"]} >= {(2, 1.0), (3, 0.5)}
    kq = next(c for c in result["claims"] if c["claim"] == "kq.attention")
    recorded = {c["label"] for c in kq["checks"] if c["verdict"] == "recorded"}
    assert recorded == {"separate_sr_A", "separate_sqrtT_s2"}  # shown, never asserted


@pytest.mark.slow
def test_perturbed_statements_are_rejected(quick_run, store_path, tmp_path, capsys):
    """--perturb 0.05 multiplies every limit by 1.05; the same samples must reject every
    claim that asserts a limit (all of them)."""
    out = tmp_path / "perturbed.json"
    code = main(["run", *ALL_CLAIMS, "--profile", "quick", "--store", store_path,
                 "--json", str(out), "--quiet", "--perturb", "0.05", "--no-replay"])
    printed = capsys.readouterr().out
    assert code == 1
    failed = {c["claim"] for c in json.loads(out.read_text())["claims"] if c["verdict"] == "fail"}
    assert failed == set(ALL_CLAIMS)
    for claim in ("markov.singular_law", "markov.outliers", "width.stable_rank"):
        assert f"{claim} (" in printed and "FAILED" in printed
    assert "reproduce: gapverify run" in printed


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
    (["run", "markov.outliers", "--set", "gamma=0.5"], "no selected claim takes parameter 'gamma'"),
    (["run", "no.such.claim"], "unknown claim 'no.such.claim'"),
    (["run", "markov.outliers", "--replicates", "1"], "'--replicates' must be an integer in [2,"),
    (["run", "markov.outliers", "--perturb", "nan"], "'--perturb'"),
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
