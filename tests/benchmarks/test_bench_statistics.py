"""benchmarks for numerics/statistics.py: each stable-rank and outlier statistic at
T = 4096 as a ratio to sampling the matrix (the unavoidable T^2 work) and to a full SVD.

Run: ``make bench`` (or ``pytest tests/benchmarks --benchmark-enable``). The last test
prints the ratios and stores them in ``extra_info``. Sampling is kept out of the timed
region with ``benchmark.pedantic(setup=...)``.
"""
import math

import numpy as np
import pytest

from numerics.samplers import LogNormalEntries, remove_outlier
from numerics.statistics import (
    frobenius_sq,
    singular_values,
    stable_rank,
    top_eigenvalues,
    top_singular_values,
)

LAW = LogNormalEntries()


@pytest.fixture(scope="module")
def T(benchmarking):
    return 4096 if benchmarking else 256


def _bench(benchmark, ratios, name, fn, T, rounds):
    def setup():
        return (LAW.markov(np.random.default_rng([0, T]), T),), {}

    result = benchmark.pedantic(fn, setup=setup, rounds=rounds, iterations=1)
    if benchmark.stats is not None:  # None when benchmarking is disabled
        ratios[name] = benchmark.stats.stats.min
    return result


STATISTICS = {
    "sample_matrix": None,
    "stable_rank_A": lambda A: stable_rank(A),
    "stable_rank_Aperp": lambda A: stable_rank(remove_outlier(A)),
    "outlier_singular_values": lambda A: top_singular_values(A, 2),
    "outlier_eigenvalues": lambda A: top_eigenvalues(A, 2),
    "frobenius": lambda A: frobenius_sq(A),
    "full_svd_baseline": lambda A: singular_values(A),
}


@pytest.mark.benchmark(group="statistics-T4096")
def test_sample_matrix(benchmark, ratios, T, benchmarking):
    rounds = 3 if benchmarking else 1
    A = benchmark.pedantic(lambda: LAW.markov(np.random.default_rng([0, T]), T),
                           rounds=rounds, iterations=1)
    if benchmark.stats is not None:
        ratios["sample_matrix"] = benchmark.stats.stats.min
    np.testing.assert_allclose(A.sum(axis=1), 1.0, atol=1e-12)


@pytest.mark.benchmark(group="statistics-T4096")
@pytest.mark.parametrize("name", [k for k in STATISTICS if k != "sample_matrix"])
def test_statistic(benchmark, ratios, T, benchmarking, name):
    rounds = (1 if name == "full_svd_baseline" else 3) if benchmarking else 1
    value = _bench(benchmark, ratios, name, STATISTICS[name], T, rounds)
    assert np.all(np.isfinite(np.abs(value)))


def test_report_ratios(ratios, benchmarking, T, capsys):
    """Ratios of each statistic to sampling and to the full SVD, from the same run."""
    if not benchmarking:
        pytest.skip("ratios are measured under --benchmark-enable (make bench)")
    lines = [f"T = {T}: seconds (min) and ratios"]
    for name, t in ratios.items():
        lines.append(f"  {name:26s} {t:9.4f} s   x sampling {t / ratios['sample_matrix']:7.2f}"
                     f"   x full SVD {t / ratios['full_svd_baseline']:7.4f}")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    # the partial methods are the point: each stable-rank statistic beats the full SVD
    for name in ("stable_rank_A", "stable_rank_Aperp", "outlier_singular_values"):
        assert ratios[name] < ratios["full_svd_baseline"], name
