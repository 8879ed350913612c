"""Issue 34, item 1 and item 3 (part): a claim file is validated where it is loaded, the
claim objects validate their own fields, and the snapshot's advice can be followed
literally without rewriting the package's own snapshots."""
from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sympy as sp

from gapverify import Check, Claim, Prediction, profiles
from gapverify.verification.claims.errors import (
    ClaimDefinitionError, ClaimTypeError, UsageError,
)
from gapverify.verification.claims.loading import (
    ENV, ClaimFileError, ClaimFileInterrupt, claim_paths, configured_claims, read_claim_file,
)
from gapverify.verification.claims.registry import CLAIMS
from gapverify.verification.running.defaults import SNAPSHOT_PATH
from gapverify.verification.tools.snapshot import (
    inside_package_snapshots, suggested_path, update_command,
)

from tests.verification.test_claim_files import GOOD

BUILTIN = {c: "the built-in claim" for c in CLAIMS}
ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path, text, name="claims.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def good(tmp_path, name="claims.py", id="mine.zero") -> Path:
    return write(tmp_path, GOOD.format(id=id, formula="sp.Integer(0)", parameters=("s2",)), name)


def with_check(tmp_path, check_args: str) -> Path:
    """The good file with its check's ``rate=0.5`` replaced by ``check_args``."""
    text = GOOD.format(id="mine.bad", formula="sp.Integer(0)", parameters=("s2",))
    return write(tmp_path, text.replace("rate=0.5", check_args))


def refused(path, taken=BUILTIN) -> str:
    with pytest.raises(ClaimFileError) as info:
        read_claim_file(path, taken)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def gapverify(*args, env=None, cwd=None):
    """The command line in a subprocess: ``(exit code, stdout, stderr)``."""
    environ = {k: v for k, v in os.environ.items() if k != ENV}
    environ.update({"OMP_NUM_THREADS": "1", **(env or {})})
    done = subprocess.run([sys.executable, "-m", "gapverify", *args], capture_output=True,
                          text=True, env=environ, cwd=cwd or ROOT, timeout=120)
    return done.returncode, done.stdout, done.stderr


# --- the claim objects validate their own fields -------------------------------------------

def _check(**kw):
    return Check("x", "x", kw.pop("kind", "limit"), **kw)


@pytest.mark.parametrize("rate", [-1.0, 0.0, 0, math.nan, math.inf, -math.inf])
def test_a_rate_must_be_finite_and_positive(rate):
    with pytest.raises(ClaimDefinitionError, match=r"parameter 'rate' .*finite number > 0"):
        _check(rate=rate)


@pytest.mark.parametrize("rate", ["1", True, (1.0,)])
def test_a_rate_of_the_wrong_type_is_a_type_error(rate):
    with pytest.raises(TypeError, match="parameter 'rate'") as info:
        _check(rate=rate)
    assert isinstance(info.value, ValueError) and isinstance(info.value, UsageError)


@pytest.mark.parametrize("bounds", [(1.0, 0.5), (0.5, 0.5), (0.0, 1.0), (-1.0, 1.0),
                                    (0.5, math.inf), (math.nan, 1.0)])
def test_a_rate_range_must_be_ordered_and_finite(bounds):
    with pytest.raises(ClaimDefinitionError, match=r"parameter 'rate_range' .*0 < r_lo < r_hi"):
        _check(rate_range=bounds)


@pytest.mark.parametrize("bounds", [(1.0,), (0.5, 1.0, 2.0), "ab", 1.0, ("a", "b")])
def test_a_rate_range_must_be_a_pair_of_numbers(bounds):
    with pytest.raises(ClaimTypeError, match="parameter 'rate_range'"):
        _check(rate_range=bounds)


@pytest.mark.parametrize("tolerance", [-1e-9, math.nan, math.inf])
def test_a_tolerance_must_be_finite_and_non_negative(tolerance):
    with pytest.raises(ClaimDefinitionError, match=r"parameter 'tolerance' .*finite and >= 0"):
        _check(kind="exact", tolerance=tolerance)


def test_a_tolerance_may_be_a_number_or_a_function_and_an_exact_check_needs_one():
    assert _check(kind="exact", tolerance=0.0).tolerance(64, {}) == 0.0
    assert _check(kind="exact", tolerance=1e-12).tolerance(1024, {"x": 1.0}) == 1e-12
    assert _check(kind="exact", tolerance=lambda T, m: 2.0 / T).tolerance(64, {}) == 2.0 / 64
    with pytest.raises(ClaimTypeError, match="parameter 'tolerance'"):
        _check(kind="exact", tolerance="small")
    with pytest.raises(ClaimDefinitionError, match="parameter 'tolerance' .*needs one"):
        _check(kind="exact")


def test_the_good_values_still_construct():
    assert _check(rate=1).rate == 1 and _check(rate=0.5).rate_at({}) == 0.5
    assert _check(rate_range=[0.5, 1.5]).rate_range == (0.5, 1.5)


@pytest.mark.parametrize("field, value, match", [
    ("status", "proved", "parameter 'status' of Prediction 'x' must be one of theorem"),
    ("kind", "limits", "parameter 'kind' of Prediction 'x' must be one of limit"),
    ("formula", 3, "parameter 'formula' of Prediction 'x' must be a function"),
])
def test_a_prediction_validates_its_fields(field, value, match):
    kw = {"name": "x", "status": "derived", "formula": lambda p: sp.Integer(0), "quantity": "x",
          field: value}
    with pytest.raises(UsageError, match=match):
        Prediction(**kw)


def _claim(**kw):
    base = dict(id="mine.x", title="t",
                predictions=(Prediction("x", "derived", lambda p: sp.Integer(0), "x"),),
                checks=(_check(rate=0.5),), parameters=("s2",), experiment=lambda r, T, p: {},
                references=(), profiles=profiles(quick=(64, 256, 4)))
    return Claim(**{**base, **kw})


def test_a_claim_validates_its_fields():
    assert _claim(predictions=[Prediction("x", "derived", lambda p: 0, "x")]).predictions[0].name
    assert _claim(parameters="s2").parameters == ("s2",)  # one name, not its letters
    for kw, match in [({"predictions": ()}, "parameter 'predictions' .*at least one"),
                      ({"predictions": (1,)}, "parameter 'predictions' .*Prediction objects"),
                      ({"checks": 5}, "parameter 'checks' .*list or tuple of Check"),
                      ({"parameters": (1,)}, "parameter 'parameters'"),
                      ({"experiment": 3}, "parameter 'experiment'"),
                      ({"profiles": {"quick": (64, 256, 4)}}, "parameter 'profiles'"),
                      ({"id": None}, "parameter 'id' of Claim")]:
        with pytest.raises(UsageError, match=match):
            _claim(**kw)


# --- the loader: everything a file can throw, and the shapes --------------------------------

def test_sys_exit_in_a_file_is_refused_with_its_line(tmp_path):
    assert refused(write(tmp_path, "import sys\nsys.exit(0)\n")).endswith(
        "claims.py:2: SystemExit(0) while the file loads (sys.exit in a claim file); a claim "
        "file defines its claims, never exits")
    assert "SystemExit('bye')" in refused(write(tmp_path, "x = 1\nraise SystemExit('bye')\n"))


def test_an_interrupt_while_a_file_loads_stays_an_interrupt_naming_the_file(tmp_path):
    path = write(tmp_path, "x = 1\nraise KeyboardInterrupt\n")
    with pytest.raises(ClaimFileInterrupt) as info:
        read_claim_file(path, BUILTIN)
    assert isinstance(info.value, KeyboardInterrupt)
    assert str(info.value) == f"interrupted while loading claim file {path}:2"


def test_a_base_exception_in_a_formula_is_refused(tmp_path):
    path = good(tmp_path)
    path.write_text(path.read_text().replace("lambda p: sp.Integer(0)",
                                             "lambda p: __import__('sys').exit(3)"))
    assert "cannot be evaluated at the defaults" in refused(path)


def test_a_bad_rate_in_a_file_is_refused_with_the_check_line(tmp_path):
    for args in ("rate=-1.0", "rate=float('nan')", "rate_range=(2.0, 1.0)"):
        message = refused(with_check(tmp_path, args))
        assert ":15: parameter 'rate" in message, message


@pytest.mark.parametrize("text, match", [
    ("CLAIMS = 5\n", "CLAIMS must be a list of gapverify.Claim objects, got int 5"),
    ("CLAIMS = 'mine.x'\n", "CLAIMS must be a list of gapverify.Claim objects, got str"),
    ("CLAIMS = [5]\n", "CLAIMS must list gapverify.Claim objects, got int"),
    ("PARAMETERS = 5\nCLAIMS = []\n", "PARAMETERS must be a list of gapverify.Parameter "
                                      "objects, got int 5"),
    ("PARAMETERS = [5]\nCLAIMS = []\n", "PARAMETERS must list gapverify.Parameter objects"),
])
def test_the_shapes_of_claims_and_parameters_are_checked(tmp_path, text, match):
    assert match in refused(write(tmp_path, text))


def test_a_missing_file_names_where_its_path_came_from(tmp_path, monkeypatch):
    missing = tmp_path / "nope.py"
    assert "parameter '--claims-from': no such file" in refused(missing)
    monkeypatch.setenv(ENV, str(missing))
    assert "parameter '$GAPVERIFY_CLAIMS': no such file" in refused(missing)
    with pytest.raises(ClaimFileError, match=r"parameter '\$GAPVERIFY_CLAIMS'"):
        configured_claims(BUILTIN, plugins=False)
    with pytest.raises(ClaimFileError, match="parameter 'paths': no such file"):
        configured_claims(BUILTIN, paths=[missing], plugins=False, source="paths")


def test_paths_take_one_path_or_a_list_and_refuse_anything_else(tmp_path):
    assert claim_paths("good.py") == ["good.py"]
    assert claim_paths(tmp_path) == [tmp_path]
    assert claim_paths(("a.py", tmp_path)) == ["a.py", tmp_path]
    for bad in (123, None, b"good.py", [1], {"a.py": 1}):
        with pytest.raises(ClaimTypeError, match="parameter 'paths' must be a path") as info:
            claim_paths(bad)
        assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    with pytest.raises(ClaimTypeError, match="parameter 'path'"):
        read_claim_file(123, BUILTIN)


def test_one_path_given_as_a_string_is_one_file(tmp_path):
    loaded = configured_claims(BUILTIN, paths=str(good(tmp_path, id="mine.one")), plugins=False)
    assert [c.id for item in loaded for c in item.claims] == ["mine.one"]


def test_the_api_load_claims_checks_its_paths(tmp_path):
    import gapverify

    with pytest.raises(TypeError, match="parameter 'paths'"):
        gapverify.load_claims(123)
    assert gapverify.load_claims(str(good(tmp_path, id="mine.api_one"))) == ["mine.api_one"]


# --- the command line: one line, the exit code ----------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("import sys\nsys.exit(0)\n", "claims.py:2: SystemExit(0) while the file loads"),
    ("raise SystemExit('bye')\n", "claims.py:1: SystemExit('bye') while the file loads"),
    ("CLAIMS = 5\n", "CLAIMS must be a list of gapverify.Claim objects, got int 5"),
    ("PARAMETERS = 5\nCLAIMS = []\n", "PARAMETERS must be a list of gapverify.Parameter"),
])
def test_the_command_line_refuses_a_bad_file_on_one_line(tmp_path, text, message):
    code, out, err = gapverify("claims", "--claims-from", str(write(tmp_path, text)))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("gapverify: error: ") and message in err, err


def test_the_command_line_refuses_a_bad_rate_and_names_the_environment(tmp_path):
    path = with_check(tmp_path, "rate=-1.0")
    code, _, err = gapverify("describe", "mine.bad", env={ENV: str(path)})
    assert code == 2 and "claims.py:15: parameter 'rate' of Check x:x" in err
    assert err.count("\n") == 1
    code, _, err = gapverify("claims", env={ENV: str(tmp_path / "nope.py")})
    assert code == 2 and "parameter '$GAPVERIFY_CLAIMS': no such file" in err
    code, _, err = gapverify("claims", "--claims-from", str(tmp_path / "nope.py"))
    assert code == 2 and "parameter '--claims-from': no such file" in err


def test_ctrl_c_while_a_file_loads_ends_as_an_interrupt(tmp_path):
    import signal

    path = write(tmp_path, "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\n"
                           "time.sleep(30)\n")
    environ = {k: v for k, v in os.environ.items() if k != ENV}
    # SIGINT at its default in the child: a test run in the background of a
    # non-interactive shell inherits it ignored, and the file's Ctrl-C would do nothing
    done = subprocess.run([sys.executable, "-m", "gapverify", "claims", "--claims-from",
                           str(path)], capture_output=True, text=True, env=environ,
                          cwd=ROOT, timeout=120,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    code, err = done.returncode, done.stderr
    assert code == 130 and "Traceback" not in err and err.count("\n") == 1, err
    assert f"interrupted while loading claim file {path}:2" in err


# --- the snapshot: advice with --path and --claims-from, the package's folder refused -------

def test_the_update_command_carries_the_path_and_the_claim_files(tmp_path):
    assert update_command() == "gapverify snapshot --update"
    assert update_command(SNAPSHOT_PATH) == "gapverify snapshot --update"
    assert update_command(tmp_path / "s") == f"gapverify snapshot --update --path {tmp_path}/s"
    assert update_command(tmp_path / "s", ["/a b/c.py"]) == (
        f"gapverify snapshot --update --claims-from '/a b/c.py' --path {tmp_path}/s")
    assert suggested_path(["/x/my_claims.py"]) == "/x/my_claims.snapshots"


def test_the_package_folder_and_anything_inside_it_are_the_package_snapshots(tmp_path):
    assert inside_package_snapshots(SNAPSHOT_PATH)
    assert inside_package_snapshots(SNAPSHOT_PATH / "mine")
    assert inside_package_snapshots(SNAPSHOT_PATH / "mine.json")
    assert not inside_package_snapshots(tmp_path / "snapshots")


def test_snapshot_of_claim_files_refuses_the_package_folder_and_gives_the_path(tmp_path):
    path = good(tmp_path, name="my_claims.py", id="mine.snap")
    before = sorted(p.name for p in SNAPSHOT_PATH.iterdir())
    for extra in ([], ["--path", str(SNAPSHOT_PATH)], ["--path", str(SNAPSHOT_PATH / "mine")]):
        code, out, err = gapverify("snapshot", "--update", "--claims-from", str(path), *extra)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert f"give e.g. --path {tmp_path}/my_claims.snapshots" in err
    code, _, err = gapverify("snapshot", "--update", env={ENV: str(path)})
    assert code == 2 and "parameter '--path'" in err
    assert sorted(p.name for p in SNAPSHOT_PATH.iterdir()) == before


def test_snapshot_advice_can_be_followed_literally(tmp_path):
    path = good(tmp_path, name="my_claims.py", id="mine.snap")
    snap = tmp_path / "my_claims.snapshots"
    code, out, _ = gapverify("snapshot", "--claims-from", str(path), "--path", str(snap))
    advice = (f"`gapverify snapshot --update --claims-from {path} --path {snap}`")
    assert code == 1 and advice in out, out
    code, out, _ = gapverify(*advice.strip("`").split()[1:])
    assert code == 0 and (snap / "mine.snap.json").is_file(), out
    code, out, _ = gapverify("snapshot", "--claims-from", str(path), "--path", str(snap))
    assert code == 0 and "all 1 claims match" in out
