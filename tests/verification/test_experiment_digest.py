"""A claim file's samples are keyed by its experiment's code, not by the file: a changed
prediction, rate or title is judged again on the stored samples; a changed experiment, a
helper it calls or a constant it reads samples again; a comment changes nothing."""
from __future__ import annotations

import textwrap

from gapverify.verification.claims.experiment_digest import experiment_digest
from gapverify.verification.running.store import Store

FILE = '''
import numpy as np
import sympy as sp
from gapverify import Check, Claim, Prediction, profiles

SPREAD = 0.01


def shift(T):
    return T ** -0.5


def noisy(rng, T, params):
    # one replicate
    return {{"x": float(1.0 + shift(T) + SPREAD * rng.standard_normal())}}


CLAIMS = [Claim(
    id="mine.keyed", title="{title}",
    predictions=(Prediction("one", "derived", lambda p: sp.Integer({limit}), "x"),),
    checks=(Check("one", "x", "limit", rate={rate}, rate_status="derived", rate_note="CLT"),),
    parameters=("s2",), experiment=noisy, references=("test",),
    profiles=profiles(quick=(64, 128)))]
'''


def _text(**changes) -> str:
    values = {"title": "a limit", "limit": 1, "rate": 0.5, **changes}
    return textwrap.dedent(FILE.format(**values))


def _module(text: str, tmp_path, name: str):
    from gapverify.verification.claims.loading import read_claim_file

    path = tmp_path / f"{name}.py"
    path.write_text(text)
    (claim,) = read_claim_file(path, {}).claims
    return claim.experiment


def test_a_statement_change_keeps_the_key_and_an_experiment_change_moves_it(tmp_path):
    base = _module(_text(), tmp_path, "a")
    assert base.startswith("mine.keyed@")
    for i, text in enumerate((_text(title="another title"), _text(limit=2), _text(rate=1.0),
                              _text().replace("# one replicate", "# a comment"))):
        assert _module(text, tmp_path, f"same{i}") == base, text
    for i, text in enumerate((_text().replace("SPREAD * rng", "2 * SPREAD * rng"),
                              _text().replace("T ** -0.5", "T ** -1.0"),
                              _text().replace("SPREAD = 0.01", "SPREAD = 0.02"))):
        assert _module(text, tmp_path, f"moved{i}") != base, text


def test_a_changed_prediction_samples_nothing_again(tmp_path, capsys):
    import os

    from gapverify.cli import main
    from gapverify.verification.claims.registry import REGISTRY

    saved = REGISTRY.state()  # each run as its own process would: the registry as it was
    store = tmp_path / "s.sqlite"
    args = ["run", "mine.keyed", "--profile", "quick", "--replicates", "4", "--quiet", "--no-replay",
            "--store", str(store), "--workers", "1"]
    first = tmp_path / "first.py"
    first.write_text(_text())
    main([*args, "--claims-from", str(first)])
    count = Store(store).count()
    REGISTRY.restore(saved)
    os.environ.pop("GAPVERIFY_CLAIMS", None)
    second = tmp_path / "second.py"
    second.write_text(_text(limit=2))  # a wrong limit: judged again, not sampled again
    assert main([*args, "--claims-from", str(second)]) == 1
    assert Store(store).count() == count
    capsys.readouterr()


def test_a_callable_without_code_has_no_digest():
    assert experiment_digest(len) is None
