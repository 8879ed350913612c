"""tests for the rest of issue 19's list: each case ends in one line and its documented
exit code (2: bad input), or works. Integer options written as ``1e3``; ``--perturb``
given twice, 0 included; ``runs`` on an empty file (no writes) and on a run whose
``claims`` are not claim objects; ``report --from`` with a 5 MB claim id (and LaTeX
escaping linear in the text); the API's ``describe(profile='nope')`` and
``load_claims``; the paper figure's silent
``sr_Sigma`` step and the figures' plan lines."""
from __future__ import annotations

import argparse
import json
import random
import sqlite3
import time
from pathlib import Path

import pytest

from gapverify.cli import main
from gapverify.verification.claims.inputs import UsageError, _int_in, parse_perturb

#: A quick run of one cheap claim at three tiny sizes (seconds).
TINY = ["softmax.kappa", "--sizes", "64,91,128", "--replicates", "2", "--quiet", "--no-replay",
        "--workers", "1"]


def _error_line(capsys) -> str:
    """The one error line (an argparse error is preceded by its usage line)."""
    err = [line for line in capsys.readouterr().err.splitlines()
           if line.startswith("gapverify: error:")]
    assert len(err) == 1, err
    return err[0]


# --- integer options ------------------------------------------------------------------
@pytest.mark.parametrize("argv, name", [
    (["run", "softmax.kappa", "--replicates", "1e3"], "--replicates"),
    (["run", "softmax.kappa", "--seed", "1e3"], "--seed"),
    (["run", "softmax.kappa", "--workers", "2.0"], "--workers"),
    (["runs", "--csv", "-", "--run", "1E1"], "--run"),
    (["paper-figure", "--depth", "1e1"], "--depth"),
    (["normalization-figure", "--seeds", "5.0"], "--seeds"),
    (["verify", "--workers", "0x2"], "--workers"),
])
def test_an_integer_option_written_as_a_float_is_refused(argv, name, capsys):
    """``--replicates 1e3`` read as 1000 (Decimal); integer options take digits only."""
    assert main(argv) == 2
    line = _error_line(capsys)
    assert f"parameter '{name}' must be an integer in [" in line, line


def test_an_integer_option_takes_digits_and_underscores_exactly():
    parse = _int_in("--seed", 0, 2**63 - 1)
    assert parse("9223372036854775807") == 2**63 - 1 and parse(" 1_000 ") == 1000
    for text in ("1e3", "1000.0", "0x10", "1__0", "", "nan", "9" * 5000):
        with pytest.raises(UsageError, match="parameter '--seed' must be an integer"):
            parse(text)


def test_the_api_still_takes_an_integral_float_but_not_1e3_text():
    from gapverify.api import _verify_arguments

    def args(**kw):
        base = dict(claims="softmax.kappa", profile="quick", seed=None, workers=1, sizes=None,
                    params=None, replicates=None, level=None, replay=False, backend="numpy",
                    device="cpu", dtype="float64", store=None)
        return _verify_arguments(**{**base, **kw})

    assert args(replicates=4.0)["replicates"] == 4
    with pytest.raises(UsageError, match="parameter 'replicates' must be an integer"):
        args(replicates="1e3")


# --- --perturb ------------------------------------------------------------------------
@pytest.mark.parametrize("items", [["0", "0.3"], ["0.1", "0.3"], ["0.1", "0"], ["0", "0"]])
def test_perturb_eps_given_twice_is_refused_whatever_the_values(items, capsys):
    """``--perturb 0 --perturb 0.3`` was accepted while ``--perturb 0.1 --perturb 0.3``
    was refused."""
    with pytest.raises(UsageError, match="'--perturb' EPS given twice"):
        parse_perturb(items)
    argv = ["run", *TINY]
    for eps in items:
        argv += ["--perturb", eps]
    assert main(argv) == 2
    assert "'--perturb' EPS given twice" in _error_line(capsys)


def test_perturb_once_and_per_prediction_are_taken():
    assert parse_perturb(["0"]) == (0.0, {})
    assert parse_perturb(["0.1", "kappa=0.2"]) == (0.1, {"kappa": 0.2})


# --- runs -----------------------------------------------------------------------------
def _files(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in folder.iterdir()}


def test_runs_on_an_empty_file_lists_nothing_and_writes_nothing(tmp_path, capsys):
    """``runs --json`` on an empty file turned it into a store (a listing wrote)."""
    store = tmp_path / "empty.sqlite"
    store.write_bytes(b"")
    before = _files(tmp_path)
    assert main(["runs", "--json", "--store", str(store)]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["runs", "--store", str(store)]) == 0
    assert "no run recorded" in capsys.readouterr().out
    assert main(["runs", "--csv", "-", "--store", str(store)]) == 2
    assert "no run recorded in" in _error_line(capsys)
    assert _files(tmp_path) == before  # no schema, no -wal or -shm file


def _store_with_run(path: Path, results: dict, claims_column: str) -> None:
    from gapverify.verification.running.store import Store

    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO runs (created, command, results, profile, claims) "
                   "VALUES (1.0, 'gapverify run', ?, 'quick', ?)",
                   (json.dumps(results), claims_column))


@pytest.mark.parametrize("claims", [[1], [{"claim": "a", "checks": [{"label": 1}]}], "x"])
def test_runs_csv_of_a_run_that_is_not_ours_exits_2_naming_it(claims, tmp_path, capsys):
    """``runs --csv`` on a store whose run lists ``claims=[1]`` raised a TypeError."""
    store = tmp_path / "s.sqlite"
    _store_with_run(store, {"claims": claims, "profile": "quick"}, json.dumps(claims))
    assert main(["runs", "--csv", "-", "--store", str(store)]) == 2
    line = _error_line(capsys)
    assert f"parameter '--store': run 1 in {store} cannot be exported: " in line, line
    assert main(["runs", "--store", str(store)]) == 0  # the listing still lists it
    assert main(["runs", "--json", "--store", str(store)]) == 0


# --- report ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def results_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    path = folder / "r.json"
    assert main(["run", *TINY, "--store", str(folder / "s.sqlite"), "--json", str(path)]) in (1, 3)
    return path


@pytest.mark.parametrize("claim_id, words", [
    ("x" * 5_000_000, "is 5,000,000 characters long"),
    ("x" * 20_000, "is 20,000 characters long"),
    ("../../elsewhere", "must be a claim id"),
    (7, "must be a claim id (a string), got int"),
])
def test_report_from_a_results_file_with_an_absurd_claim_id_exits_2_at_once(
        results_file, claim_id, words, tmp_path, capsys):
    """A 5 MB claim id hung in LaTeX escaping; 20 000 characters raised 'File name too
    long' (the id names a table's file)."""
    run = json.loads(results_file.read_text())
    run["claims"][0]["claim"] = claim_id
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(run))
    start = time.monotonic()
    assert main(["report", "--from", str(bad), "--out", str(tmp_path / "out")]) == 2
    assert time.monotonic() - start < 10
    line = _error_line(capsys)
    assert f"parameter '--from' ({bad}): claims[0].claim" in line and words in line
    assert len(line) < 400  # the id itself is never printed whole


def test_latex_escaping_is_linear_and_the_same_in_pieces():
    from gapverify.reports.latex import _encode, _encode_piece, escape

    rng = random.Random(5)
    alphabet = [chr(c) for c in range(32, 127)] + list("±κé𝔼–—…“”‘’ñ\n\t|\u0301\u0308")
    for _ in range(30):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(500, 3000)))
        assert _encode(text) == _encode_piece(text)
    start = time.monotonic()
    assert escape("a_b%" * 50_000).startswith(r"a\_b\%")  # 200 000 characters
    assert time.monotonic() - start < 5  # pylatexenc alone: quadratic, 2 s at this length


# --- the API --------------------------------------------------------------------------
@pytest.mark.parametrize("profile", ["nope", 3, None])
def test_describe_with_a_profile_the_claim_lacks_names_it(profile):
    """``describe(profile='nope')`` raised KeyError."""
    from gapverify import describe

    with pytest.raises(UsageError, match=r"parameter 'profile': claim softmax.kappa has no "
                                         r"profile .*; it has: quick, standard"):
        describe("softmax.kappa", profile=profile)


@pytest.mark.usefixtures("isolated_registry")
def test_load_claims_takes_one_path_as_one_path_and_names_paths(tmp_path):
    """``load_claims(123)`` raised TypeError; ``load_claims('good.py')`` walked the string."""
    from gapverify import load_claims
    from gapverify.verification.claims.errors import ClaimTypeError

    with pytest.raises(ClaimTypeError, match="parameter 'paths' must be a path"):
        load_claims(123)
    missing = str(tmp_path / "good.py")
    with pytest.raises(ValueError, match="no such file: " + repr(missing).replace(".", r"\.")):
        load_claims(missing)


# $GAPVERIFY_CLAIMS named as the source of a missing file (not --claims-from): already in
# test_claim_validation.py (test_a_missing_file_names_where_its_path_came_from, and
# test_the_command_line_refuses_a_bad_rate_and_names_the_environment, in a subprocess)


# --- the figures ----------------------------------------------------------------------
def test_sr_sigma_at_depth_64_is_one_and_fast():
    """paper-figure --depth 40 or 64 spent 100 to 155 s in sr_Sigma after its progress
    said 'about 0 s left' (the engine's symbolic second moment, per layer)."""
    from gapverify.theory.layers import sr_Sigma

    start = time.monotonic()
    assert all(sr_Sigma(l) == 1 for l in (1, 2, 40, 64))
    assert time.monotonic() - start < 5


def test_the_figures_say_their_plan_before_they_start(capsys):
    from gapverify.cli import normalization, paper

    paper._say_plan(argparse.Namespace(T=4096, depth=64, seeds=1000, gamma=1.0))
    line = capsys.readouterr().err.strip()
    assert line.startswith("paper-figure: T = 4096, d = 4096, depth 64, 1000 seeds: 2000 "
                           "networks") and "days" in line, line
    args = argparse.Namespace(depth=10, seeds=5)
    assert normalization._say_plan([150, 300], args) == [150, 300]
    line = capsys.readouterr().err.strip()
    assert line.startswith("normalization-figure: 2 size(s) (T = d = 150, 300) x 5 seeds x 6 "
                           "variants x (A, Aperp): 120 networks of 10 layers; about "), line


# --- the claim errors a user meets, documented --------------------------------------------
def _claim_error_words() -> list[tuple[str, int, str]]:
    """Every fixed part of every claim error's message in the code: ``(file, line, text)``."""
    import ast

    root = Path(__file__).resolve().parents[2]
    out = []
    for name in ("verification/running/claim_errors.py", "verification/running/runner.py"):
        for node in ast.walk(ast.parse((root / name).read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ClaimError"
                    and node.args and isinstance(node.args[0], (ast.JoinedStr, ast.Constant))):
                message = node.args[0]
                parts = ([message.value] if isinstance(message, ast.Constant) else
                         [v.value for v in message.values if isinstance(v, ast.Constant)])
                out += [(name, node.lineno, p.strip(" (),;:")) for p in parts
                        if len(p.strip(" (),;:")) >= 4]
    return out


def test_docs_list_every_claim_error_message():
    """docs/writing-a-claim.md, "Claim errors (exit 4)", holds each fixed part of each
    claim error's message the code raises (a new message must be documented)."""
    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "writing-a-claim.md").read_text(encoding="utf-8")
    section = doc.split("## Claim errors (exit 4)")[1].split("\n## ")[0]
    words = _claim_error_words()
    assert len(words) > 20
    missing = [w for w in words if w[2] not in section]
    assert not missing, missing


@pytest.mark.usefixtures("isolated_registry")
def test_a_misspelled_statistic_fails_at_quick_within_15_s(tmp_path, capsys):
    """The tutorial's claim file with its statistic misspelled, at the quick profile: exit
    4 within 15 s (measured 3 to 5 s; a run of every claim with it, 14 s: the built-in
    claims' predictions are valued first), one line naming the statistic and both lines."""
    import re

    from gapverify.verification.judging.outcomes import EXIT_CLAIM_ERROR

    root = Path(__file__).resolve().parents[2]
    text = re.search(r"```python\n(.*?)```", (root / "docs" / "writing-a-claim.md")
                     .read_text(encoding="utf-8"), re.S).group(1)
    assert 'return {"T_sum_sq"' in text
    path = tmp_path / "participation.py"
    path.write_text(text.replace('return {"T_sum_sq"', 'return {"T_sum_sqq"'))
    start = time.monotonic()
    code = main(["run", "tutorial.participation", "--claims-from", str(path), "--profile",
                 "quick", "--workers", "1", "--quiet", "--store", str(tmp_path / "s.sqlite")])
    seconds = time.monotonic() - start
    err = [line for line in capsys.readouterr().err.splitlines()
           if line.startswith("gapverify: claim error:")]
    assert code == EXIT_CLAIM_ERROR and seconds < 15, (code, seconds)
    assert len(err) == 1 and "no statistic 'T_sum_sq'" in err[0] and "a misspelling?" in err[0]
    lines = text.splitlines()
    returned = next(i for i, line in enumerate(lines, 1) if '"T_sum_sq"' in line)
    check = next(i for i, line in enumerate(lines, 1) if "Check(" in line)
    assert f"{path}:{returned}:" in err[0] and f"({path}:{check})" in err[0], err[0]
