"""benchmark of the sweep engine: the quick profile of two claims (``markov.outliers``,
``width.stable_rank``) sampled with 1 worker and with every core, one round each, into a
fresh in-memory store; the scaling curve (seconds and speedup per worker count) goes to
``extra_info`` and is printed. Only the sweep is timed (judging is not on the workers'
critical path). Target (issue 8): 2 workers on 2 cores at least 1.8x faster than 1.

In the default test run (benchmarks disabled) the same code runs on two tiny sizes as a
smoke test. Run: ``make bench`` or ``pytest tests/benchmarks/test_bench_sweep.py
--benchmark-enable``.
"""
import time

import pytest

from gapverify.verification.running.executors import make_engine
from gapverify.verification.running.runner import available_cores
from gapverify.verification.running.store import Store
from gapverify.verification.running.suite import RunOptions, plan_run, sample_all

CLAIMS = ["markov.outliers", "width.stable_rank"]


def _sweep_seconds(workers: int, opts: RunOptions) -> tuple[float, int]:
    store = Store(":memory:")
    engine = make_engine(workers)
    try:
        start = time.perf_counter()
        n = sample_all(store, plan_run(opts), opts.seed, engine)
        return time.perf_counter() - start, n
    finally:
        engine.close()


@pytest.mark.benchmark(group="sweep-quick")
def test_bench_sweep_quick_profile_scaling(benchmark, benchmarking, capsys):
    cores = available_cores()
    if benchmarking:
        opts = RunOptions(claims=CLAIMS, profile="quick", seed=20250713)
    else:
        opts = RunOptions(claims=CLAIMS, profile="quick", sizes=[32, 45], replicates=2, seed=1)
    curve = {w: _sweep_seconds(w, opts) for w in range(1, cores) if w == 1 or w & (w - 1) == 0}
    # pytest-benchmark's record: the all-core sweep, once
    curve[cores] = benchmark.pedantic(lambda: _sweep_seconds(cores, opts), rounds=1, iterations=1)
    n = curve[cores][1]
    assert n == curve[1][1] > 0
    speedup = {w: curve[1][0] / s for w, (s, _) in curve.items()}
    benchmark.extra_info.update(cores=cores, tasks=n, claims=CLAIMS,
                                seconds={str(w): s for w, (s, _) in curve.items()},
                                speedup={str(w): v for w, v in speedup.items()})
    if benchmarking:
        with capsys.disabled():
            print(f"\nquick profile of {', '.join(CLAIMS)}: {n} tasks on {cores} core(s)")
            for w, (s, _) in curve.items():
                print(f"  {w} worker(s): {s:7.1f} s   speedup {speedup[w]:.2f}x")
