"""Shared fixtures: one quick-profile sample of the claims the judging tests need,
stored once per test session and re-judged by every test (no resampling)."""
import fcntl
import os
import pickle

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
    results of judging them as stated. Sampled once per test run: under pytest-xdist
    (``make test`` runs two test processes) the store sits in the folder the processes
    share and the first to arrive samples and judges it, under a lock; the other reads
    its results (a pickle beside the store)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # shared by every xdist worker of this run
    folder = root / "quick-shared"
    folder.mkdir(exist_ok=True)
    path, judged = folder / "quick.sqlite", folder / "results.pickle"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if judged.exists():  # judged by the other process: the same results
                results = pickle.loads(judged.read_bytes())
            else:
                store = Store(path)
                results = verify(RunOptions(claims=list(QUICK_CLAIMS), profile="quick",
                                            workers=2, replay=False), store)
                store.close()
                judged.write_bytes(pickle.dumps(results))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return str(path), {r.claim: r for r in results}


@pytest.fixture
def isolated_registry(monkeypatch):
    """The registry with the session's configured claims (plug-ins) loaded, and empty
    ``$GAPVERIFY_CLAIMS``: whatever a test loads or registers is gone afterwards, even
    where the code under test failed to put it back."""
    from gapverify.verification.claims.registry import REGISTRY

    REGISTRY.load_configured()  # what the session's environment configures, kept
    saved = REGISTRY.state()
    monkeypatch.setenv("GAPVERIFY_CLAIMS", "")  # restored afterwards
    yield
    REGISTRY.restore(saved)
