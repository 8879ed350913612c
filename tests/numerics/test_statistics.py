"""tests for numerics/statistics.py: cheap statistics agree with full decompositions."""
import numpy as np
import pytest

from gapverify.numerics.samplers import LogNormalEntries, remove_outlier
from gapverify.numerics.statistics import (
    LANCZOS_TOL, gram, gram_stable_rank, moment_ratio, stable_rank, stable_ranks, top_eigenvalues,
    top_singular_values, top_singular_values_by_gram,
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


def test_top_singular_values_by_gram_match_full_svd(A):
    """The top singular values of a wide and a tall ``X`` read from its Gram matrix (the
    smaller one, ``min(m, n)`` square) are LAPACK's, to the Lanczos tolerance."""
    X = A @ np.random.default_rng([7]).standard_normal((300, 420))  # rows < columns
    full = np.linalg.svd(X, compute_uv=False)
    for M in (X, X.T):
        G = gram(M)
        assert G.shape == (300, 300)
        np.testing.assert_allclose(top_singular_values_by_gram(G, 4), full[:4],
                                   rtol=10 * LANCZOS_TOL)
    s = np.linalg.svd(X[:, :250], compute_uv=False)  # tall (300 x 250): G = X^T X
    assert stable_ranks(X[:, :250])[0] == pytest.approx(np.sum(s**2) / s[0] ** 2, rel=1e-9)


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


def test_moment_ratio_is_the_trace_ratio_free_of_the_edge():
    # T sum s^4 / (sum s^2)^2, whatever s_1; for a T x d Gaussian matrix its mean is
    # (T + d + 1)/d up to O(1/(T d)) (E tr (G G^T)^2 = T d (T + d + 1), E tr G G^T = T d),
    # i.e. m2/m1^2 = 1 + T/d of Marchenko-Pastur plus 1/d
    rng = np.random.default_rng([7])
    T, d, n = 200, 400, 40
    values = []
    for _ in range(n):
        X = rng.standard_normal((T, d))
        s = np.linalg.svd(X, compute_uv=False)
        sr_X, sr_Sigma = stable_ranks(X)
        r = moment_ratio(sr_X / T, sr_Sigma / T)
        assert r == pytest.approx(T * np.sum(s**4) / np.sum(s**2) ** 2, rel=1e-9)
        values.append(r)
    values = np.array(values)
    se = values.std(ddof=1) / np.sqrt(n)
    # 5 standard errors of the mean (a two-sided 6e-7 false-alarm level)
    assert abs(values.mean() - (T + d + 1) / d) < 5 * se


def test_the_ginibre_ratio_sheds_the_radius_excess_of_markov_outliers():
    """markov.outliers' sqrt(T)|lambda_2(A)| sits above kappa by Rider's sqrt(log T / 4T)
    excess at small T; its ratio to the spectral radius of a Ginibre matrix drawn after A
    does not. At T = 256, s2 = 1/2, 60 replicates (seeded streams): the raw mean is more
    than 4 standard errors above kappa (measured +3.5%, 5.7 se), the ratio within 4 (-0.5%,
    0.8 se). The ratio is the raw value over the recorded radius, and A's own statistics
    are the same with and without the reference drawn after it."""
    import math

    from gapverify.numerics.experiments import EXPERIMENTS, _attention
    from gapverify.numerics.statistics import top_eigenvalues
    from gapverify.verification.running.runner import stream

    T, n, s2 = 256, 60, 0.5
    p = {"s2": s2, "mu": -s2 / 2}
    kappa = math.sqrt(math.exp(s2) - 1)
    ms = [EXPERIMENTS["markov.outliers"](stream("markov.outliers", T, r, 3), T, p)
          for r in range(n)]
    for m in ms:
        assert m["sqrtT_lambda2_ginibre"] == m["sqrtT_lambda2"] / m["ginibre_rho"]
    raw = np.array([m["sqrtT_lambda2"] for m in ms])
    ratio = np.array([m["sqrtT_lambda2_ginibre"] for m in ms])
    assert (raw.mean() - kappa) / (raw.std(ddof=1) / math.sqrt(n)) > 4
    assert abs(ratio.mean() - kappa) / (ratio.std(ddof=1) / math.sqrt(n)) < 4
    # lambda_2 of A is the same draw as without the reference (G is drawn after A)
    A = _attention(stream("markov.outliers", T, 0, 3), T, p)
    assert abs(top_eigenvalues(A, 2)[1]) * math.sqrt(T) == ms[0]["sqrtT_lambda2"]
