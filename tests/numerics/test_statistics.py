"""tests for numerics/statistics.py: cheap statistics agree with full decompositions."""
import numpy as np
import pytest

from numerics.samplers import LogNormalEntries, remove_outlier
from numerics.statistics import (
    LANCZOS_TOL,
    gram_stable_rank,
    stable_rank,
    top_eigenvalues,
    top_singular_values,
)


@pytest.fixture(scope="module")
def A():
    return LogNormalEntries().markov(np.random.default_rng([5, 300]), 300)


def test_top_singular_values_match_full_svd(A):
    full = np.linalg.svd(A, compute_uv=False)
    np.testing.assert_allclose(top_singular_values(A, 2), full[:2], rtol=10 * LANCZOS_TOL)
    np.testing.assert_allclose(top_singular_values(remove_outlier(A), 1), full[1:2] * 0 +
                               np.linalg.svd(remove_outlier(A), compute_uv=False)[:1],
                               rtol=10 * LANCZOS_TOL)


def test_stable_ranks_match_their_definitions(A):
    s = np.linalg.svd(A, compute_uv=False)
    assert stable_rank(A) == pytest.approx(np.sum(s**2) / s[0] ** 2, rel=1e-9)
    X = A @ np.random.default_rng([6]).standard_normal((300, 420))
    sx = np.linalg.svd(X, compute_uv=False)
    assert gram_stable_rank(X) == pytest.approx(np.sum(sx**4) / sx[0] ** 4, rel=1e-9)
    assert gram_stable_rank(X.T) == pytest.approx(np.sum(sx**4) / sx[0] ** 4, rel=1e-9)


def test_top_eigenvalues_find_perron_root_and_second(A):
    ev = np.linalg.eigvals(A)
    ev = ev[np.argsort(-np.abs(ev))]
    got = top_eigenvalues(A, 2)
    assert got[0].real == pytest.approx(1.0, abs=1e-9)
    assert abs(got[1]) == pytest.approx(abs(ev[1]), rel=1e-8)


def test_top_eigenvalues_fall_back_to_lapack_beyond_the_restarts():
    # a centred i.i.d. matrix: no outlier, near-equal moduli at the edge of the disc; one
    # Arnoldi restart cannot converge, so the full spectrum answers, with the same values
    from scipy.sparse.linalg import ArpackNoConvergence, eigs

    M = np.random.default_rng(7).standard_normal((300, 300)) / 300
    ev = np.linalg.eigvals(M)
    ev = ev[np.argsort(-np.abs(ev))][:2]
    with pytest.raises(ArpackNoConvergence):
        eigs(M, k=2, which="LM", tol=1e-10, ncv=40, maxiter=1, v0=np.ones(300),
             return_eigenvectors=False)
    got = top_eigenvalues(M, 2, restarts=1)
    assert np.allclose(np.abs(got), np.abs(ev), rtol=1e-12)
    assert np.allclose(np.sort_complex(got), np.sort_complex(ev), rtol=1e-12)
