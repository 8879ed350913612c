"""tests for gapverify/api.py (the Python API), the README's walk-through and the
generated theory document docs/claims.md."""
import json
import re
import sys
from pathlib import Path

import pytest
import sympy as sp

from gapverify.api import describe, predict, statement, verify
from gapverify.api import Run

ROOT = Path(__file__).resolve().parents[2]
TINY = dict(sizes=[64, 91, 128], replicates=2, seed=1)


def _readme_block(section: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"## {section}\n")
    end = text.find("\n## ", start + 1)
    blocks = re.findall(r"```python\n(.*?)```", text[start:end], flags=re.S)
    assert len(blocks) == 1, f"README section {section!r} must hold one python block"
    return blocks[0]


def test_readme_python_api_walkthrough_runs(capsys):
    exec(compile(_readme_block("Python API"), "README.md (Python API)", "exec"), {})
    out = capsys.readouterr().out
    assert "Eq(Limit(s1(T), T, oo, dir='-'), 1)" in out
    assert "1.0658" in out


def test_docs_claims_md_is_generated_from_the_registry():
    """docs/claims.md is what `gapverify docs` writes now: regenerate it with
    `gapverify docs --out docs/claims.md` when the registry changes."""
    from gapverify.verification.tools.claimdocs import claims_markdown
    from gapverify.verification.claims.registry import get_claim, package_claim_ids

    committed = (ROOT / "docs" / "claims.md").read_text(encoding="utf-8")
    fresh = claims_markdown()
    assert committed == fresh, ("docs/claims.md differs from the registry: run "
                                "'gapverify docs --out docs/claims.md' and commit it")
    for cid in package_claim_ids():  # an installed plug-in documents its own claims
        claim = get_claim(cid)
        assert f"### {cid}" in fresh
        for p in claim.predictions:
            assert f"`{p.name}`" in fresh
        for ref in claim.references:
            assert ref in fresh
    assert (ROOT / "docs" / "index.md").read_text().count("claims.md") >= 1


def test_predict_matches_the_command_line(capsys):
    from gapverify.cli import main

    assert main(["predict", "width.stable_rank", "--set", "gamma=0.5", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["predictions"]
    assert predict("width.stable_rank", gamma=0.5) == cli
    with pytest.raises(ValueError, match="takes no parameter 'gamma'"):
        predict("softmax.kappa", gamma=0.5)
    with pytest.raises(ValueError, match=r"'s2'.*709\.78"):
        predict("softmax.kappa", s2=1e308)
    with pytest.raises(ValueError, match="known claims"):
        predict("no.such")


def test_statement_is_written_with_functions_of_T():
    T = sp.Symbol("T", positive=True, integer=True)
    eqs = statement("markov.outliers", symbolic=True)
    s2 = sp.Symbol("s2", positive=True)
    assert eqs[0] == sp.Eq(sp.Function("lambda1")(T), 1)  # exact at every T
    assert eqs[1].lhs == sp.Limit(sp.Function("s1")(T), T, sp.oo, "-") and eqs[1].rhs == 1
    assert eqs[2].rhs.free_symbols == {s2}
    # at parameters the right-hand side is a number, the same as predict's
    at = statement("markov.outliers", s2=0.25)
    assert float(at[2].rhs) == pytest.approx(predict("markov.outliers", s2=0.25)["sqrtT_s2"],
                                             rel=1e-15)
    # a formula that needs an integer depth gets it
    deep = statement("depth.stable_rank", symbolic=True, depth=2)
    assert sp.Symbol("gamma", positive=True) in deep[2].rhs.free_symbols
    # a given parameter is a number, the integer depth its default, the others symbols
    half = statement("depth.stable_rank", symbolic=True, gamma=0.5)
    assert half[2].rhs.free_symbols == set() and half[0].rhs.free_symbols == {s2}


def test_describe_has_parameters_predictions_checks_and_power_targets():
    d = describe("markov.singular_law")
    assert [p["name"] for p in d["parameters"]] == ["s2", "mu"]
    assert d["parameters"][0]["domain"] == "(0, inf)"
    edge = next(c for c in d["checks"] if c["prediction"] == "edge")
    assert edge["model"] == "rate range" and edge["minimum_sizes"] == 4 and edge["domain"]
    assert d["power_targets"]["quick"] == 0.05 and d["profiles"]["quick"]["power_target"] == 0.05
    values = next(p for p in d["predictions"] if p["name"] == "edge")["values"]
    assert len(values) == len(d["cases"]) == 2
    json.dumps(d, allow_nan=False)


def test_verify_returns_plain_results(tmp_path):
    run = verify("softmax.kappa", store=tmp_path / "s.sqlite", **TINY)
    assert isinstance(run, Run) and run.run_id == 1
    claim = run["softmax.kappa"]
    # tiny sizes: not verified (no power), or a (flaky) failure; never verified
    expected = {"not verified": ("not verified", 3), "fail": ("failed", 1), "flaky": ("flaky", 1)}
    assert (claim.verdict.split(":")[0], run.exit_code) == expected[claim.outcome]
    assert not claim.verified and claim.root_seed == 1 and claim.sizes == [64, 91, 128]
    data = run.to_dict()
    json.dumps(data, allow_nan=False)
    assert data["provenance"]["schema"] == 2
    rows = run.rows()
    assert {r["T"] for r in rows} == {64, 91, 128} and rows[0]["claim"] == "softmax.kappa"
    # the same measurements again: reused, same numbers, a second run recorded
    again = verify("softmax.kappa", store=tmp_path / "s.sqlite", **TINY)
    assert again.run_id == 2 and again.rows()[0]["mean"] == rows[0]["mean"]


def test_verify_refuses_bad_input_like_the_command_line():
    with pytest.raises(ValueError, match="at least 3"):
        verify("softmax.kappa", sizes=[64])
    with pytest.raises(ValueError, match="'gamma' in params is not a parameter"):
        verify("softmax.kappa", params={"gamma": 0.5}, **TINY)
    with pytest.raises(ValueError, match="'seed'"):
        verify("softmax.kappa", seed=-1)
    with pytest.raises(ValueError, match="profile"):
        verify("softmax.kappa", profile="huge")


def test_to_dataframe_needs_pandas_and_says_so(monkeypatch):
    run = verify("softmax.kappa", **TINY)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        run.to_dataframe()


def test_to_dataframe_with_pandas():
    pd = pytest.importorskip("pandas")
    frame = verify("softmax.kappa", **TINY).to_dataframe()
    assert isinstance(frame, pd.DataFrame) and set(frame["T"]) == {64, 91, 128}


def test_verify_takes_a_backend_with_the_command_lines_checks():
    """verify(..., backend=...) runs the array-API path (CPU torch here) and refuses what
    the command line refuses: an unknown backend, a claim without a backend path, the gpu
    profile on numpy."""
    with pytest.raises(ValueError, match="backend"):
        verify("markov.outliers", backend="jax")
    with pytest.raises(ValueError, match="numpy"):
        verify("markov.outliers", profile="gpu")
    pytest.importorskip("torch", reason="torch not installed: pip install gapverify[gpu]")
    with pytest.raises(ValueError, match="take backend"):
        verify("softmax.kappa", backend="torch", sizes=[64, 91, 128], replicates=2)
    run = verify("markov.outliers", backend="torch", sizes=[64, 91, 128, 45], replicates=2, seed=3)
    (claim,) = run.claims
    assert claim.claim == "markov.outliers" and run.exit_code in (0, 1, 3)


@pytest.mark.parametrize("kwargs,parameter", [
    (dict(claims=[]), "'claims' names no claim"),
    (dict(claims="no.such"), "'claims': unknown claim"),
    (dict(claims=[3]), "'claims' must list claim ids"),
    (dict(claims=5), "'claims' must be a claim id"),
    (dict(claims="softmax.kappa", sizes=[16.7, 32, 64]), "'sizes' must be an integer"),
    (dict(claims="softmax.kappa", sizes=[True, 32, 64]), "'sizes' must be a number"),
    (dict(claims="softmax.kappa", sizes=[32, 32, 64]), "'sizes' must list distinct"),
    (dict(claims="softmax.kappa", sizes=64), "'sizes' must be a list"),
    (dict(claims="softmax.kappa", level=0.9), "'level' must be a finite number in (0, 0.5)"),
    (dict(claims="softmax.kappa", seed=1.5), "'seed' must be an integer"),
    (dict(claims="softmax.kappa", workers=0), "'workers' must be an integer in [1, 64]"),
    (dict(claims="softmax.kappa", replicates=1), "'replicates' must be an integer"),
    (dict(claims="softmax.kappa", params=[1]), "'params' must be a mapping"),
    (dict(claims="softmax.kappa", params={"s2": None}), "'s2' must be a number"),
    (dict(claims="softmax.kappa", profile=3), "'profile' must be one of"),
    (dict(claims="softmax.kappa", dtype=32), "'dtype' must be one of"),
    (dict(claims="softmax.kappa", store=3), "'store' must be a path"),
    (dict(claims="softmax.kappa", replay="no"), "'replay' must be True or False"),
])
def test_every_bad_argument_is_a_value_error_naming_it(kwargs, parameter):
    """Never a KeyError or TypeError, never a silent truncation (16.7 -> 16) or an empty run."""
    with pytest.raises(ValueError) as info:
        verify(**kwargs)
    assert parameter in str(info.value)


@pytest.mark.parametrize("kwargs,words", [
    (dict(sizes=[16, 32]), "parameter 'sizes' gives 2 size(s)"),
    (dict(sizes="16,16.5"), "parameter 'sizes' must be an integer in [16, 16384]"),
    (dict(sizes="16,16,32"), "parameter 'sizes' must not repeat a size"),
    (dict(params={"gamma": 0.5}), "parameter 'gamma' in params is not a parameter"),
    (dict(profile="gpu"), "parameter 'profile' ('gpu')"),
    (dict(claims="markov.outliers", device="cuda"), "use backend='torch' or cupy for cuda"),
    (dict(claims_from=3), "parameter 'claims_from' must be a path"),
])
def test_api_errors_name_the_apis_parameters_not_the_flags(kwargs, words):
    """The checks the API shares with the command line speak of ``sizes``, ``params``
    and ``profile``, the API's parameters, never of ``--sizes`` or ``--set``."""
    with pytest.raises(ValueError) as info:
        verify(**{"claims": "softmax.kappa", **kwargs})
    assert words in str(info.value)
    assert "--" not in str(info.value)


def test_api_claim_lookups_are_value_errors():
    for call in (lambda: predict("no.such"), lambda: describe("no.such"),
                 lambda: statement("no.such")):
        with pytest.raises(ValueError, match="parameter 'claim': unknown claim 'no.such'"):
            call()


def test_exit_code_is_the_outcomes_table_and_a_duplicate_is_judged_once(tmp_path):
    from gapverify.verification.judging.outcomes import exit_code

    run = verify(["softmax.kappa", "softmax.kappa"], store=tmp_path / "s.sqlite", **TINY)
    assert [c.claim for c in run.claims] == ["softmax.kappa"]
    assert run.exit_code == exit_code([c["verdict"] for c in run.results["claims"]])
