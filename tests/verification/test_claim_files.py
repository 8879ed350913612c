"""tests for verification/claims/loading.py: claims written outside the package are
checked before anything samples, and a bad file is refused with its name and line."""
from __future__ import annotations

import textwrap

import pytest

from gapverify.verification.claims.loading import ClaimFileError, read_claim_file
from gapverify.verification.claims.registry import CLAIMS

BUILTIN = {c: "the built-in claim" for c in CLAIMS}

GOOD = '''\
import numpy as np
import sympy as sp

from gapverify import Check, Claim, Prediction, profiles


def experiment(rng, T, params):
    return {{"x": float(rng.normal())}}


CLAIMS = [Claim(
    id={id!r},
    title="a test claim",
    predictions=(Prediction("x", "derived", lambda p: {formula}, "x"),),
    checks=(Check("x", "x", "limit", rate=0.5, rate_status="derived", rate_note="CLT"),),
    parameters={parameters!r},
    experiment=experiment,
    references=("test",),
    profiles=profiles(quick=(64, 256, 4)),
)]
'''


def write(tmp_path, text, name="claims.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def good(tmp_path, id="mine.zero", formula="sp.Integer(0)", parameters=("s2",), name="claims.py"):
    return write(tmp_path, GOOD.format(id=id, formula=formula, parameters=parameters), name)


def refused(path, *, taken=BUILTIN) -> str:
    with pytest.raises(ClaimFileError) as info:
        read_claim_file(path, taken)
    assert isinstance(info.value, ValueError)  # the API's and the CLI's input error
    return str(info.value)


def test_a_good_file_loads_and_its_experiment_is_keyed_by_its_code(tmp_path):
    from gapverify.numerics.plugins import EXTRA_EXPERIMENTS, experiment

    loaded = read_claim_file(good(tmp_path), BUILTIN)
    (claim,) = loaded.claims
    assert claim.id == "mine.zero" and claim.experiment.startswith("mine.zero@")
    assert claim.experiment in EXTRA_EXPERIMENTS and callable(experiment(claim.experiment))
    # another statement, the same experiment: judged again on the same stored samples
    # (a changed experiment is another key: tests/verification/test_experiment_digest.py)
    other = read_claim_file(good(tmp_path, formula="sp.Integer(0) + 0"), BUILTIN)
    assert other.claims[0].experiment == claim.experiment


def test_a_syntax_error_names_the_file_and_line(tmp_path):
    path = write(tmp_path, "import sympy\nCLAIMS = [\n")
    message = refused(path)
    assert message.startswith(f"{path}:") and "syntax error" in message


def test_an_exception_in_the_file_names_its_line(tmp_path):
    path = write(tmp_path, "x = 1\ny = 1 / 0\n")
    assert refused(path) == f"{path}:2: ZeroDivisionError: division by zero"


def test_a_prediction_that_is_not_a_number_is_refused(tmp_path):
    message = refused(good(tmp_path, formula="sp.Symbol('q')"))
    assert f"{tmp_path / 'claims.py'}:12" in message
    assert "prediction 'x' of 'mine.zero' is not a finite number" in message


def test_an_unknown_parameter_is_refused_with_the_known_ones(tmp_path):
    message = refused(good(tmp_path, parameters=("s2", "temperature")))
    assert "unknown parameter(s) temperature" in message and "known: s2" in message


def test_an_id_that_clashes_with_a_builtin_claim_is_refused(tmp_path):
    message = refused(good(tmp_path, id="softmax.kappa"))
    assert "clashes with the built-in claim" in message and ":12:" in message


def test_an_id_that_clashes_with_another_file_is_refused(tmp_path):
    first = read_claim_file(good(tmp_path, name="a.py"), BUILTIN)
    taken = {**BUILTIN, **{c.id: f"the claim of {first.source}" for c in first.claims}}
    message = refused(good(tmp_path, name="b.py"), taken=taken)
    assert "a.py" in message and "b.py" in message


def test_a_file_without_claims_and_a_missing_file_are_refused(tmp_path):
    assert "defines no CLAIMS" in refused(write(tmp_path, "x = 1\n"))
    assert "no such file" in refused(tmp_path / "absent.py")


def test_a_check_of_an_unknown_prediction_is_refused(tmp_path):
    text = GOOD.format(id="mine.zero", formula="sp.Integer(0)", parameters=("s2",))
    path = write(tmp_path, text.replace('Check("x", "x"', 'Check("y", "x"'))
    assert "measures unknown prediction 'y'" in refused(path)
