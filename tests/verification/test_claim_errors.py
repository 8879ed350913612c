"""tests for claim errors (verification/running/claim_errors.py): a claim file's code that
misbehaves during a run ends in one line naming the file and line, the claim, the case,
the size and the replicate, and exit code 4 (neither failed, 1, nor not verified, 3),
caught on the first replicate before the sweep; a claim file's reproduce command loads
the file."""
from __future__ import annotations

import pytest

from gapverify.cli import main
from gapverify.verification.judging.outcomes import (
    EXIT_CLAIM_ERROR, ClaimError, exit_code_table,
)

GOOD = '''\
import numpy as np
import sympy as sp

from gapverify import Check, Claim, Prediction, profiles


def participation(rng, T, params):
    logits = rng.normal(params["mu"], np.sqrt(params["s2"]), size=(T, T))
    A = np.exp(logits - logits.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    return {"T_sum_sq": float(T * np.mean(np.sum(A**2, axis=1)))}


def limit(p):
    return sp.exp(p["s2"])


CLAIMS = [Claim(
    id="mine.participation",
    title="participation",
    predictions=(Prediction("participation", "derived", limit, "x"),),
    checks=(Check("participation", "T_sum_sq", "limit", rate=1.0),),
    parameters=("s2", "mu"),
    experiment=participation,
    references=("test",),
    profiles=profiles(quick=(64, 1024, 24)),
)]
'''
RETURN = '    return {"T_sum_sq": float(T * np.mean(np.sum(A**2, axis=1)))}'


# claims loaded here leave the registry and $GAPVERIFY_CLAIMS as they found them
pytestmark = pytest.mark.usefixtures("isolated_registry")


def run(tmp_path, capsys, text, *extra, name="claims.py"):
    path = tmp_path / name
    path.write_text(text)
    code = main(["run", "mine.participation", "--claims-from", str(path), "--sizes",
                 "64,91,128", "--replicates", "4", "--workers", "1", "--quiet",
                 "--store", str(tmp_path / "s.sqlite"), *extra])
    err = [line for line in capsys.readouterr().err.splitlines()
           if not line.startswith("gapverify: store")]
    return code, err, str(path)


def line_of(text, fragment):
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


@pytest.mark.parametrize("returned, words", [
    ('{"T_sum_sqq": 1.0}', ["no statistic 'T_sum_sq'", "'T_sum_sqq': a misspelling?"]),
    ("{}", ["no statistic 'T_sum_sq'", "it returned nothing"]),
    ("5", ["returned int 5, not a dict"]),
    ('"oops"', ["returned str 'oops', not a dict"]),
    ('{"T_sum_sq": float("nan")}', ["'T_sum_sq'", "is not finite: nan"]),
])
def test_a_bad_result_is_a_claim_error_on_the_first_replicate(tmp_path, capsys, returned,
                                                              words):
    text = GOOD.replace(RETURN, f"    return {returned}")
    code, err, path = run(tmp_path, capsys, text)
    assert code == EXIT_CLAIM_ERROR
    assert len(err) == 1, err
    line = err[0]
    assert line.startswith(f"gapverify: claim error: {path}:")
    assert "claim mine.participation, case s2=" in line and "T=64, replicate 0" in line
    assert all(w in line for w in words), line


def test_a_misspelled_statistic_names_both_lines(tmp_path, capsys):
    text = GOOD.replace('return {"T_sum_sq"', 'return {"T_sum_sqq"')
    code, (line,), path = run(tmp_path, capsys, text)
    assert code == EXIT_CLAIM_ERROR
    assert f"{path}:{line_of(text, 'T_sum_sqq')}:" in line  # the experiment's return
    assert f"({path}:{line_of(text, 'Check(')})" in line  # the check that reads it


def test_a_raising_experiment_names_the_line_it_raised(tmp_path, capsys):
    text = GOOD.replace("    A /= A.sum", "    1 / 0\n    A /= A.sum")
    code, (line,), path = run(tmp_path, capsys, text)
    assert code == EXIT_CLAIM_ERROR
    assert line.startswith(f"gapverify: claim error: {path}:{line_of(text, '1 / 0')}: ")
    assert "T=64, replicate 0" in line and "raised ZeroDivisionError" in line


def test_a_later_replicate_is_named_by_its_size_and_replicate(tmp_path, capsys):
    text = GOOD.replace(RETURN, '    return {"T_sum_sq": float("nan") if T == 128 else 1.0}')
    code, (line,), _ = run(tmp_path, capsys, text)
    assert code == EXIT_CLAIM_ERROR and "T=128, replicate 0" in line and "not finite" in line


def test_a_complex_prediction_at_a_case_is_a_claim_error(tmp_path, capsys):
    text = GOOD.replace('return sp.exp(p["s2"])', 'return sp.sqrt(p["s2"] - sp.Rational(1, 2))')
    code, (line,), path = run(tmp_path, capsys, text, "--set", "s2=0.25")
    assert code == EXIT_CLAIM_ERROR
    assert line.startswith(f"gapverify: claim error: {path}:")
    assert "case s2=0.25" in line and "prediction 'participation' is complex" in line


def test_a_raising_domain_is_a_claim_error(tmp_path, capsys):
    text = GOOD.replace('rate=1.0)', 'rate=1.0, domain=lambda p: p["nope"] > 1)')
    code, (line,), path = run(tmp_path, capsys, text)
    assert code == EXIT_CLAIM_ERROR
    assert line.startswith(f"gapverify: claim error: {path}:{line_of(text, 'nope')}: ")
    assert "check participation" in line and "KeyError" in line


def test_a_claim_files_reproduce_command_loads_the_file(tmp_path, capsys):
    import json

    text = GOOD.replace('return sp.exp(p["s2"])', 'return 3 * sp.exp(p["s2"])')
    out = tmp_path / "r.json"
    code, _, path = run(tmp_path, capsys, text, "--no-replay", "--json", str(out))
    assert code == 1
    (check,) = json.loads(out.read_text())["claims"][0]["checks"]
    assert f"--claims-from {path}" in check["reproduce"]


def test_the_good_file_still_runs(tmp_path, capsys):
    code, err, _ = run(tmp_path, capsys, GOOD)
    assert code in (0, 3) and not any("claim error" in line for line in err)


def test_the_error_pickles_and_reads_as_one_line():
    import pickle

    error = ClaimError("boom", "f.py:3", "a.b", {"s2": 0.5}, 64, 0)
    again = pickle.loads(pickle.dumps(error))
    assert str(again) == str(error) == "f.py:3: claim a.b, case s2=0.5, T=64, replicate 0: boom"
    assert str(ClaimError("x").within(T=32, replicate=0)) == "T=32, replicate 0: x"


def test_the_exit_code_is_documented():
    from pathlib import Path

    from gapverify.cli import build_parser

    root = Path(__file__).resolve().parents[2]
    assert exit_code_table() in (root / "README.md").read_text(encoding="utf-8")
    assert "4 a claim error" in " ".join(build_parser().format_help().split())


def test_a_statistic_returned_as_an_array_of_one_number_is_judged(tmp_path, capsys):
    # the claim checks accept np.array([x]) as a real number; the judging must read it
    # (numpy >= 2.3 refuses float() of an array with ndim > 0)
    text = GOOD.replace(RETURN, '    return {"T_sum_sq": np.array([T * np.mean(np.sum(A**2, axis=1))])}')
    code, err, _ = run(tmp_path, capsys, text)
    assert code in (0, 3) and not any("claim error" in line or "Traceback" in line for line in err)
