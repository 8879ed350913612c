"""Every bad input of issue 10 gets exit 2 and a message naming the parameter and its
allowed range (or is computed correctly); none gives a traceback or exit 1 (reserved for
"a claim failed")."""
import gc
import json
import math
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gapverify.cli import main
from gapverify.verification.running.store import Store, StoreReadOnly

#: A quick run of one cheap claim at three tiny sizes (seconds).
TINY = ["softmax.kappa", "--sizes", "64,91,128", "--replicates", "2", "--quiet", "--no-replay",
        "--workers", "1"]


def _err(capsys) -> str:
    return capsys.readouterr().err


# --- parameters -------------------------------------------------------------------------
def test_s2_where_kappa_overflows_is_refused_with_its_range(tmp_path, capsys):
    """--set s2=1e308 gave kappa: Infinity (invalid JSON) and a VERIFIED verdict against
    inf with a measured nan."""
    for argv in (["predict", "softmax.kappa", "--set", "s2=1e308", "--json"],
                 ["run", *TINY, "--set", "s2=1e308", "--store", str(tmp_path / "s.sqlite")]):
        assert main(argv) == 2
        err = _err(capsys)
        assert "'s2'" in err and "(0, 709.78]" in err and "Traceback" not in err
    assert not (tmp_path / "s.sqlite").exists() or Store(tmp_path / "s.sqlite").count() == 0


def test_a_non_finite_prediction_is_refused_naming_the_parameters(capsys):
    """Parameters inside their domains whose prediction still overflows a double."""
    from gapverify.verification.claims.inputs import UsageError, check_finite

    with pytest.raises(UsageError, match=r"sigma_V=1e\+300, depth=4: prediction "
                                         r"'grad_std_over_T_L'.* is inf.*sigma_V in \(0, inf\)"):
        check_finite(["gradient.value_frobenius"], {"sigma_V": 1e300, "depth": 4})


def test_tiny_s2_is_computed_without_cancellation(capsys):
    """--set s2=1e-300 gave kappa 3.8e-65 (exp(s2) - 1 cancelled) instead of 1e-150."""
    assert main(["predict", "softmax.kappa", "--set", "s2=1e-300", "--json"]) == 0
    kappa = json.loads(capsys.readouterr().out)["predictions"]["kappa"]
    assert kappa == pytest.approx(1e-150, rel=1e-14)


def test_json_never_holds_infinity_or_nan(capsys):
    from gapverify.cli.args import print_json, write_json

    print_json({"a": math.inf, "b": [math.nan, 1.0]})
    text = capsys.readouterr().out
    assert "Infinity" not in text and "NaN" not in text
    assert json.loads(text) == {"a": "inf", "b": [None, 1.0]}


def test_a_set_the_claim_does_not_take_is_refused(tmp_path, capsys):
    """run silently ignored a --set its claim does not take (predict refused it)."""
    assert main(["run", *TINY, "--set", "gamma=0.5", "--store", str(tmp_path / "s.sqlite")]) == 2
    err = _err(capsys)
    assert "'gamma'" in err and "softmax.kappa" in err and "s2, mu" in err
    # with several claims, one that lacks it is enough to refuse
    assert main(["run", "softmax.kappa", "width.stable_rank", "--set", "gamma=0.5",
                 "--store", str(tmp_path / "s.sqlite")]) == 2
    assert "softmax.kappa" in _err(capsys)


def test_a_repeated_set_is_refused(tmp_path, capsys):
    """A repeated --set silently kept the last value."""
    for cmd in (["run", *TINY, "--store", str(tmp_path / "s.sqlite")],
                ["predict", "softmax.kappa"]):
        assert main([*cmd, "--set", "s2=0.3", "--set", "s2=0.4"]) == 2
        err = _err(capsys)
        assert "'s2' is set twice" in err and "(0, 709.78]" in err


def test_too_few_sizes_for_a_rate_fit_is_refused(tmp_path, capsys):
    """--sizes 64 gave "not assessed" with exit 0 (0 means verified)."""
    for sizes in ("64", "64,128"):
        assert main(["run", "softmax.kappa", "--sizes", sizes, "--store",
                     str(tmp_path / "s.sqlite")]) == 2
        err = _err(capsys)
        assert "'--sizes'" in err and "at least 3" in err and "softmax.kappa needs 3" in err
    assert not (tmp_path / "s.sqlite").exists()


def test_sizes_enough_for_some_checks_only_are_said_and_never_exit_0(tmp_path, capsys):
    """3 sizes judge the stated rates but not a rate range (4): the run goes on, says so
    on stderr, and the claim cannot be verified."""
    from gapverify.verification.claims.inputs import check_sizes

    check_sizes(["markov.singular_law", "softmax.kappa"], [64, 91, 128])
    err = _err(capsys)
    assert "not assessed" in err and "markov.singular_law (needs 4" in err
    assert "softmax.kappa" not in err
    code = main(["run", "markov.outliers", "--sizes", "32", "--replicates", "2", "--quiet",
                 "--workers", "1", "--no-replay", "--store", str(tmp_path / "s.sqlite")])
    assert code in (1, 3)  # lambda1 = 1 is exact at one size; the rest is not assessed


@pytest.mark.parametrize("seed", ["9223372036854775807", "9007199254740993"])
def test_seeds_are_exact_over_the_stated_range(seed):
    """2^63 - 1 was refused (parsed through a float: 2^63) and seeds above 2^53 were
    rounded (2^53 + 1 became 2^53)."""
    from gapverify.cli import build_parser

    args = build_parser().parse_args(["run", "softmax.kappa", "--seed", seed])
    assert args.seed == int(seed) and isinstance(args.seed, int)


def test_seed_outside_the_range_names_it(capsys):
    assert main(["run", "softmax.kappa", "--seed", "9223372036854775808"]) == 2
    assert "'--seed' must be an integer in [0, 9223372036854775807]" in _err(capsys)
    assert main(["run", "softmax.kappa", "--seed", "1.5"]) == 2


def test_a_seed_above_2_53_is_stored_exactly(tmp_path, capsys):
    path = tmp_path / "s.sqlite"
    seed = 2**63 - 1
    assert main(["run", *TINY, "--seed", str(seed), "--store", str(path), "--json",
                 str(tmp_path / "r.json")]) in (0, 3)
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["root_seed"] == seed and doc["claims"][0]["root_seed"] == seed


# --- output files -----------------------------------------------------------------------
@pytest.mark.parametrize("where", ["folder", "slash", "long", "under_a_file"])
def test_json_to_a_bad_path_exits_2_before_sampling(where, tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    target = {"folder": str(tmp_path), "slash": str(tmp_path / "new") + "/",
              "long": str(tmp_path / ("x" * 300 + ".json")),
              "under_a_file": str(tmp_path / "afile" / "r.json")}[where]
    path = tmp_path / "s.sqlite"
    assert main(["run", *TINY, "--store", str(path), "--json", target]) == 2
    err = _err(capsys)
    assert "parameter '--json'" in err and "Traceback" not in err
    assert not path.exists()  # refused before anything was sampled


def test_json_to_a_missing_folder_creates_it(tmp_path, capsys):
    target = tmp_path / "a" / "b" / "r.json"
    assert main(["run", *TINY, "--store", str(tmp_path / "s.sqlite"), "--json", str(target)]) in (0, 3)
    assert json.loads(target.read_text())["claims"]


# --- stores -----------------------------------------------------------------------------
def test_a_store_of_another_program_is_refused(tmp_path, capsys):
    path = tmp_path / "foreign.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE people (name TEXT)")
    db.commit(), db.close()
    assert main(["run", *TINY, "--store", str(path)]) == 2
    err = _err(capsys)
    assert "parameter '--store'" in err and "another program" in err and "Traceback" not in err


def test_a_store_whose_tables_lack_columns_is_refused(tmp_path, capsys):
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE measurements (experiment TEXT, x REAL)")
    db.commit(), db.close()
    assert main(["run", *TINY, "--store", str(path)]) == 2
    assert "without column(s)" in _err(capsys)


def test_a_store_that_is_a_folder_or_not_sqlite_is_refused(tmp_path, capsys):
    assert main(["run", *TINY, "--store", str(tmp_path)]) == 2
    assert "parameter '--store'" in _err(capsys)
    bad = tmp_path / "text.sqlite"
    bad.write_text("not a database " * 200)
    assert main(["runs", "--store", str(bad)]) == 2
    assert "parameter '--store'" in _err(capsys)


def test_a_read_only_store_still_judges_what_it_holds(tmp_path, capsys, monkeypatch):
    """A store that cannot be written (root ignores chmod, so os.access is made to say
    so) is opened with SQLite's mode=ro: a run whose measurements are stored gives its
    verdict (and --json) without writing; a run that would need to sample exits 2."""
    path = tmp_path / "s.sqlite"
    assert main(["run", *TINY, "--store", str(path)]) in (0, 3)
    capsys.readouterr()
    # fold the first run's write-ahead log into the file now: a connection of that run
    # collected later would otherwise checkpoint it during the read-only run (seen once
    # in a full test run), which is not a write of the read-only run
    gc.collect()
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    real = os.access

    def access(p, mode, *a, **k):
        if mode & os.W_OK and Path(p).resolve() in (path.resolve(), tmp_path.resolve()):
            return False
        return real(p, mode, *a, **k)

    monkeypatch.setattr(os, "access", access)
    before = path.read_bytes()
    (tmp_path / "out").mkdir()  # writable (only the store and its folder are not)
    out = tmp_path / "out" / "r.json"
    code = main(["run", *TINY, "--store", str(path), "--json", str(out)])
    captured = capsys.readouterr()
    assert code in (0, 3), captured.err
    assert "read-only" in captured.err and "not recorded" in captured.err
    assert json.loads(out.read_text())["claims"][0]["claim"] == "softmax.kappa"
    assert path.read_bytes() == before
    # more replicates than stored: the run would have to write
    assert main(["run", *TINY[:-4], "--replicates", "3", "--quiet", "--no-replay", "--workers",
                 "1", "--store", str(path)]) == 2
    err = _err(capsys)
    assert "parameter '--store'" in err and "read-only" in err and "Traceback" not in err


def test_a_store_opened_read_only_refuses_writes(tmp_path):
    path = tmp_path / "s.sqlite"
    Store(path).close()
    store = Store(path, readonly=True)
    assert store.readonly and store.count() == 0 and store.add_run("x", {}) == 0
    with pytest.raises(StoreReadOnly, match="'--store'"):
        store.put("e", "{}", 16, 0, 1, "v", b"", 0.0)
    with pytest.raises(ValueError, match="'--store'.*cannot be created"):
        Store(tmp_path / "missing.sqlite", readonly=True)


# --- pipes ------------------------------------------------------------------------------
def test_a_closed_pipe_ends_quietly():
    """`gapverify claims --json | head -1` ended in a BrokenPipeError traceback."""
    cmd = [sys.executable, "-m", "gapverify", "claims", "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=Path(__file__).resolve().parents[2])
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, as head does
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert code in (0, 141)


# --- the recent features: schedulers, corrupt stores, entry laws, precision, leases -------
def _one_line_exit_2(argv, capsys, *fragments):
    assert main(argv) == 2
    err = [line for line in _err(capsys).splitlines() if line.startswith("gapverify: error:")]
    assert len(err) == 1, err
    for fragment in fragments:
        assert fragment in err[0], err[0]
    return err[0]


@pytest.mark.parametrize("address,fragment", [
    ("tcp://127.0.0.1:notaport", "PORT in [1, 65535]"),
    ("foo://127.0.0.1:8786", "not the scheme 'foo'"),
    ("tcp://127.0.0.1", "SCHEME://HOST:PORT"),
])
def test_a_bad_scheduler_address_exits_2(address, fragment, tmp_path, capsys):
    _one_line_exit_2(["run", *TINY, "--scheduler", address, "--store", str(tmp_path / "s.sqlite")],
                     capsys, "parameter '--scheduler'", fragment)


def test_a_scheduler_that_accepts_and_never_answers_fails_within_10_s(tmp_path, capsys):
    pytest.importorskip("distributed")
    import socket
    import threading
    import time

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    held = []

    def accept_and_never_answer():
        try:
            for _ in range(4):
                held.append(server.accept())
        except OSError:  # closed at the end of the test
            pass

    threading.Thread(target=accept_and_never_answer, daemon=True).start()
    start = time.monotonic()
    try:
        _one_line_exit_2(["run", *TINY, "--store", str(tmp_path / "s.sqlite"), "--scheduler",
                          f"tcp://127.0.0.1:{server.getsockname()[1]}"], capsys,
                         "parameter '--scheduler'", "did not answer")
    finally:
        server.close()
    assert time.monotonic() - start < 10.0


def _stored_run(tmp_path, capsys):
    path = tmp_path / "s.sqlite"
    assert main(["run", *TINY, "--store", str(path)]) in (1, 3)
    _err(capsys)
    return path


def test_a_corrupt_payload_exits_2_naming_the_row(tmp_path, capsys):
    path = _stored_run(tmp_path, capsys)
    db = sqlite3.connect(path)
    db.execute("UPDATE measurements SET payload = X'00112233' WHERE T = 91 AND replicate = 1")
    db.commit()
    db.close()
    _one_line_exit_2(["run", *TINY, "--store", str(path)], capsys, "parameter '--store'",
                     "damaged", "softmax.kappa at T=91, replicate 1")


@pytest.mark.parametrize("column", ["provenance", "results", "claims"])
def test_a_corrupt_run_row_is_listed_or_exits_2(column, tmp_path, capsys):
    path = _stored_run(tmp_path, capsys)
    db = sqlite3.connect(path)
    db.execute(f"UPDATE runs SET {column} = '{{not json'")
    db.commit()
    db.close()
    assert main(["runs", "--store", str(path), "--json"]) == 0  # listed, never a traceback
    (run,) = json.loads(capsys.readouterr().out)
    assert run["claims"] == ["softmax.kappa"] and run["perturbations"] == []
    if column == "results":
        assert run["damaged"] == ["results"]
        _one_line_exit_2(["tables", "--store", str(path), "--out", str(tmp_path / "t")], capsys,
                         "parameter '--store'", "results of run 1 are not JSON")
    else:
        assert "damaged" not in run  # read from the results instead
        assert main(["tables", "--store", str(path), "--out", str(tmp_path / "t")]) == 0
    assert main(["run", *TINY, "--store", str(path)]) in (1, 3)  # the resume judges again


@pytest.mark.parametrize("law,fragment", [
    ("scipy:poisson(1e308)", "overflows"),
    ("scipy:gamma(" + "9" * 400 + ")", "(400 characters)"),
    ("scipy:gamma(a=2, a=3)", "'a' is given twice"),
    ("scipy:gamma(1e-300)", "underflow to 0"),
    ("scipy:expon(scale=1e300)", "overflow in float64"),
    ("scipy:expon(loc=1e17)", "below float64's resolution"),
    ("gaussian-logits(1e-300)", "[1e-16, 709.78]"),
])
def test_an_entry_law_float64_cannot_hold_exits_2(law, fragment, tmp_path, capsys):
    line = _one_line_exit_2(["run", "markov.outliers", "--entries", law, "--sizes", "64,91,128",
                             "--quiet", "--store", str(tmp_path / "s.sqlite")], capsys,
                            "parameter '--entries'", fragment)
    assert len(line) < 1000


def test_s2_below_what_float64_resolves_is_refused_for_a_run_not_for_predict(tmp_path, capsys):
    """s2 = 1e-300: the samples of A are constant to round-off (sqrt(T) s_2 broke down at
    s2 = 1e-24 for T = 1024); the theory still predicts there."""
    _one_line_exit_2(["run", *TINY, "--set", "s2=1e-300", "--store", str(tmp_path / "s.sqlite")],
                     capsys, "parameter 's2'", "[1e-16, 709.78]")
    assert main(["predict", "softmax.kappa", "--set", "s2=1e-300", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["predictions"]["kappa"] == pytest.approx(1e-150)
    from gapverify.api import verify
    with pytest.raises(ValueError, match="'s2'"):
        verify("softmax.kappa", params={"s2": 1e-300}, sizes=[64, 91, 128], replicates=2)


def test_device_cuda_with_numpy_is_refused_not_sampled_on_the_cpu(tmp_path, capsys):
    _one_line_exit_2(["run", "markov.outliers", "--device", "cuda", "--sizes", "64,91,128",
                      "--quiet", "--store", str(tmp_path / "s.sqlite")], capsys,
                     "parameter '--device'")


def test_runs_csv_into_a_missing_folder_creates_it(tmp_path, capsys):
    path = _stored_run(tmp_path, capsys)
    out = tmp_path / "new" / "sub" / "rows.csv"
    assert main(["runs", "--store", str(path), "--csv", str(out)]) == 0
    from gapverify.reports.results import CSV_COLUMNS
    header, *rows = out.read_text().splitlines()
    assert header == ",".join(CSV_COLUMNS) and rows


def test_a_killed_runs_lease_is_taken_at_once_and_said(tmp_path, capsys):
    """A run killed with SIGKILL leaves its leases (120 s); the rerun on the same host
    sees that the owner's pid is gone and takes them at once."""
    import socket
    import time

    from gapverify.verification.claims.registry import get_claim
    from gapverify.verification.running.runner import plan, sweep
    from gapverify.verification.running.store import code_version

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    store = Store(tmp_path / "s.sqlite")
    claim = get_claim("softmax.kappa")
    tasks = plan(store, claim.experiment, claim.resolve({}), [16, 23], 2, 1, code_version())
    owner = f"{socket.gethostname()}:{dead.pid}:deadbeef"
    for t in tasks:
        assert store.claim(t.key, owner, 120.0) == "mine"
    start = time.monotonic()
    from gapverify.verification.running.runner import SerialExecutor
    assert sweep(store, tasks, SerialExecutor(), lease_seconds=120.0) == len(tasks)
    assert time.monotonic() - start < 10.0
    assert "taking over the tasks leased by a run on this host whose process is gone" in _err(capsys)
    # a live owner's lease is still respected
    live = f"{socket.gethostname()}:{os.getppid()}:cafe"
    more = plan(store, claim.experiment, claim.resolve({}), [32], 1, 1, code_version())
    assert store.claim(more[0].key, live, 120.0) == "mine"
    assert store.claim(more[0].key, "other", 120.0) == "busy"
