"""Shared fixtures: one quick-profile sample of the claims the judging tests need,
stored once per test session and re-judged by every test (no resampling)."""
import pytest

from gapverify.verification.running.store import Store
from gapverify.verification.running.suite import RunOptions, verify

#: Claims whose quick profile the tests sample (the cheap ones; together they cover the
#: limit, law, exact, rate-range, model-family and parameter-dependent checks and every
#: parameter: s2 (kappa), gamma, sigma_V, depth).
QUICK_CLAIMS = ("softmax.kappa", "markov.outliers", "width.stable_rank",
                "gradient.value_frobenius", "causal.cesaro", "variants.linear",
                "kq.attention", "depth.frobenius")


@pytest.fixture(scope="session")
def quick_store(tmp_path_factory):
    """A store holding the quick profile of :data:`QUICK_CLAIMS` (2 workers), and the
    results of judging them as stated."""
    path = tmp_path_factory.mktemp("quick") / "quick.sqlite"
    store = Store(path)
    results = verify(RunOptions(claims=list(QUICK_CLAIMS), profile="quick", workers=2,
                                replay=False), store)
    return str(path), {r.claim: r for r in results}
