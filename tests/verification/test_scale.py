"""tests for the sweep engine at scale (verification/running/: runner.py, executors.py, store.py):
bit-identical numbers for any worker count, sampling thread count and a Dask cluster;
largest tasks first; memory estimate before sampling; leases shared by concurrent runs;
clean shutdown on SIGTERM, SIGINT and SIGKILL."""
from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gapverify.verification.running.executors import make_engine, parse_scheduler
from gapverify.verification.running.runner import (
    SerialExecutor, Task, check_memory, plan, run_task, sweep, task_memory,
)
from gapverify.verification.running.store import Store
from gapverify.verification.running.suite import RunOptions, plan_run, sample_all

ROOT = Path(__file__).resolve().parents[2]


def _params(claim_id):
    from gapverify.verification.claims.registry import get_claim

    claim = get_claim(claim_id)
    return claim.experiment, tuple(sorted((k, float(v)) for k, v in claim.resolve({}).items()))


def _payloads(store: Store) -> list[tuple]:
    return store.db.execute("SELECT experiment, params, T, replicate, payload FROM measurements "
                            "ORDER BY experiment, params, T, replicate").fetchall()


@pytest.mark.parametrize("claim_id,T", [("markov.outliers", 600), ("width.stable_rank", 600)])
def test_sampling_thread_count_does_not_change_the_numbers(claim_id, T):
    # T > BLOCK_ROWS: several blocks, filled by 1 or 3 threads
    experiment, params = _params(claim_id)
    task = Task(experiment, params, T, 0, 3, "v")
    assert run_task(task, threads=1)[1] == run_task(task, threads=3)[1]


def test_stored_payloads_identical_for_1_and_2_workers_and_dask():
    pytest.importorskip("distributed")
    # one case per claim (the overrides collapse the profile's cases)
    opts = RunOptions(claims=["markov.outliers", "width.stable_rank"], sizes=[64, 560],
                      replicates=2, seed=17, overrides={"s2": 0.25, "gamma": 1.0})
    run = plan_run(opts)
    stored = []
    for workers, scheduler in ((1, None), (2, None), (1, "local:2")):
        store = Store(":memory:")
        engine = make_engine(workers, scheduler, processes=False)
        if scheduler:  # memory is checked against the Dask workers' own limits
            assert engine.memory[0] == 1 and engine.memory[1] > 0
        try:
            assert sample_all(store, run, opts.seed, engine) == 2 * 2 * 2
        finally:
            engine.close()
        stored.append(_payloads(store))
    assert len(stored[0]) == 8
    assert stored[0] == stored[1] == stored[2]  # byte for byte


def test_tasks_run_largest_first_across_claims():
    store = Store(":memory:")
    tasks = []
    for claim_id in ("softmax.kappa", "markov.outliers"):
        experiment, params = _params(claim_id)
        tasks += plan(store, experiment, dict(params), (32, 64, 128), 1, 1, "v")
    order = []
    sweep(store, tasks, SerialExecutor(), on_done=lambda t, s: order.append((t.experiment, t.T)))
    assert order[:3] == [("markov.outliers", 128), ("markov.outliers", 64), ("markov.outliers", 32)]
    assert [T for e, T in order[3:]] == [128, 64, 32]


def test_memory_estimate_refuses_a_size_that_cannot_fit(tmp_path, monkeypatch, capsys):
    from gapverify.cli import main

    experiment, params = _params("markov.outliers")
    big = Task(experiment, params, 16384, 0, 1, "v")
    assert task_memory(big) > 8 * 16384**2  # one T x T float64 array at least
    check_memory([big], 1, available=2**40)  # fits: no error
    twin = Task(experiment, params, 16384, 1, 1, "v")
    check_memory([big, twin], 2, available=2 * task_memory(big))
    with pytest.raises(ValueError, match="'--sizes'"):  # two at once do not fit
        check_memory([big, twin], 2, available=int(1.5 * task_memory(big)))
    from gapverify.verification.running.executors import Engine

    with pytest.raises(ValueError, match="'--sizes'"):  # a cluster of 1 GiB workers
        Engine(SerialExecutor(), 4, 1, "cluster", memory=(1, 2**30)).check_memory([big])
    monkeypatch.setenv("GAPVERIFY_MEMORY_LIMIT", str(2**30))  # a fake 1 GiB machine
    path = tmp_path / "mem.sqlite"
    code = main(["run", "markov.outliers", "--sizes", "64,16384", "--replicates", "2",
                 "--store", str(path), "--quiet", "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--sizes" in err and "T=16384" in err and "GiB" in err
    assert Store(path).count() == 0  # refused before sampling anything


def test_bad_scheduler_is_a_usage_error(capsys):
    from gapverify.cli import main

    assert parse_scheduler("local:3") == ("local", 3)
    assert parse_scheduler("tcp://10.0.0.1:8786") == ("address", "tcp://10.0.0.1:8786")
    code = main(["run", "softmax.kappa", "--scheduler", "local:0", "--quiet"])
    assert code == 2 and "'--scheduler'" in capsys.readouterr().err


def test_a_live_lease_is_respected_and_an_expired_one_taken_over(tmp_path):
    store = Store(tmp_path / "lease.sqlite")
    experiment, params = _params("softmax.kappa")
    tasks = plan(store, experiment, dict(params), (32, 45), 2, 1, "v")
    assert store.claim(tasks[0].key, "other", 60.0) == "mine"
    assert store.claim(tasks[0].key, "me", 60.0) == "busy"
    for t in tasks[1:]:
        store.claim(t.key, "dead", 0.3)  # a run that died holding leases
    time.sleep(0.4)
    store.release("other")
    assert sweep(store, tasks, SerialExecutor(), poll=0.05) == len(tasks)
    assert store.count() == len(tasks) and store.leases() == []
    assert store.claim(tasks[0].key, "me", 60.0) == "done"


_CONCURRENT = textwrap.dedent("""
    import os, sys, time
    from gapverify.verification.claims.registry import get_claim
    from gapverify.verification.running.runner import plan, sweep, default_executor
    from gapverify.verification.running.store import Store, code_version
    claim = get_claim("markov.outliers")
    store = Store(sys.argv[1])
    tasks = plan(store, claim.experiment, claim.resolve({}), (128, 181, 256, 362), 6, 5, code_version())
    print("ready", flush=True)
    while not os.path.exists(sys.argv[1] + ".go"):  # both runs start together
        time.sleep(0.01)
    print(sweep(store, tasks, default_executor(1), poll=0.02, in_flight=1))
""")


def test_two_runs_on_one_store_never_compute_a_task_twice(tmp_path):
    path = tmp_path / "shared.sqlite"
    Store(path).close()
    procs = [subprocess.Popen([sys.executable, "-c", _CONCURRENT, str(path)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    Path(str(path) + ".go").touch()
    computed = [int(p.communicate(timeout=120)[0].strip().splitlines()[-1]) for p in procs]
    store = Store(path)
    assert store.count() == 4 * 6  # nothing lost
    assert sum(computed) == 4 * 6  # nothing computed twice
    assert store.leases() == []


def _children(pid: int) -> set[int]:
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.add(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start_run(tmp_path):
    cmd = [sys.executable, "-m", "gapverify", "run", "markov.outliers", "--sizes",
           "1024,1448,2048", "--replicates", "50", "--workers", "2", "--quiet",
           "--store", str(tmp_path / "sig.sqlite")]
    # SIGINT at its default in the child: a test run started in the background of a
    # non-interactive shell inherits SIGINT ignored, and Python then keeps ignoring it
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while len(_children(proc.pid)) < 2:  # the pool's two workers
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.1)
    time.sleep(0.5)
    return proc, _children(proc.pid)


def _gone(pids, seconds=10.0) -> bool:
    deadline = time.monotonic() + seconds
    while any(_alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_sigterm_and_sigint_end_the_workers_and_keep_the_work(tmp_path, sig, code):
    proc, workers = _start_run(tmp_path)
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)  # faulthandler: where every thread waits
        time.sleep(2)
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"the run did not end within 60 s of {sig.name}; its threads:\n{err[-6000:]}")
    assert proc.returncode == code, err
    assert "measurements are kept" in err and "Traceback" not in err
    assert _gone(workers)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_pool_workers_exit_on_their_own_when_the_main_process_is_killed(tmp_path):
    proc, workers = _start_run(tmp_path)
    proc.kill()
    proc.communicate(timeout=30)
    assert _gone(workers)  # the watchdog sees its parent gone


def test_large_profile_reaches_16384_and_names_the_claims_that_have_one(capsys):
    from gapverify.cli import main
    from gapverify.verification.claims.registry import get_claim

    for claim_id in ("markov.outliers", "width.stable_rank"):
        assert get_claim(claim_id).profiles["large"].sizes[-1] == 16384
    code = main(["run", "softmax.kappa", "--profile", "large", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "markov.outliers" in err and "width.stable_rank" in err


def test_judging_in_the_pool_gives_what_judging_here_gives(tmp_path):
    """With 2 workers every case is judged in a pool worker that opens the store
    read-only (suite.judge_stored); the results are those of judging in this process."""
    import dataclasses
    import json

    from gapverify.verification.running.suite import _judge_in_pool, verify

    opts = RunOptions(claims=["softmax.kappa", "variants.linear"], sizes=[64, 91, 128, 181],
                      replicates=4, seed=5, workers=1, replay=False)
    store = Store(tmp_path / "s.sqlite")
    here = verify(opts, store)
    pooled = verify(dataclasses.replace(opts, workers=2), store)
    text = lambda results: json.dumps([dataclasses.asdict(r) for r in results], default=str)
    assert text(here) == text(pooled)
    # and the 2-worker run did judge in the pool
    engine = make_engine(2)
    try:
        judged = _judge_in_pool(store, plan_run(opts), engine, {})
    finally:
        engine.close()
    assert len(judged) == sum(len(v) for v in plan_run(opts).cases.values()) > 0
