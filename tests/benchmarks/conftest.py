"""Benchmarks run at full size under ``make bench`` (``--benchmark-enable``) and as quick
smoke tests (small sizes, one round) in the default test run."""
import pytest


@pytest.fixture(scope="session")
def benchmarking(request) -> bool:
    # --benchmark-enable on the command line wins over --benchmark-disable in addopts
    return bool(request.config.getoption("benchmark_enable")) or \
        not request.config.getoption("benchmark_disable")


@pytest.fixture(scope="session")
def ratios():
    """Timings (seconds, min over rounds) collected across one run, for ratios."""
    return {}
