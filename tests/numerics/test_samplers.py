"""tests for numerics/samplers.py: Markov matrices, softmax, isometric inputs."""
import numpy as np
import pytest
from scipy import stats

from gapverify.numerics.samplers import (
    ExponentialEntries, LogNormalEntries, ScipyEntries, isometric_input, remove_outlier,
    softmax_rows,
)


@pytest.mark.parametrize("law", [LogNormalEntries(), ExponentialEntries(),
                                 ScipyEntries(stats.gamma(a=2.0))])
def test_markov_rows_sum_to_one_and_are_nonnegative(law):
    A = law.markov(np.random.default_rng([1, 50]), 50)
    assert A.shape == (50, 50) and np.all(A >= 0)
    np.testing.assert_allclose(A.sum(axis=1), 1.0, rtol=0, atol=1e-14)


def test_softmax_is_stable_for_huge_logits():
    M = np.array([[1000.0, 999.0, -1000.0], [-1e308, 0.0, 1e-300]])
    A = softmax_rows(M)
    assert np.all(np.isfinite(A))
    np.testing.assert_allclose(A[0, :2], [1 / (1 + np.exp(-1)), np.exp(-1) / (1 + np.exp(-1))])
    np.testing.assert_allclose(A.sum(axis=1), 1.0)


def test_softmax_markov_equals_normalised_exponentials():
    rng = np.random.default_rng([2, 30])
    law = LogNormalEntries(mu=0.3, s2=0.5)
    A = law.markov(rng, 30)
    Z = np.exp(law.logits(np.random.default_rng([2, 30]), (30, 30)))
    np.testing.assert_allclose(A, Z / Z.sum(axis=1, keepdims=True), rtol=1e-12)


def test_isometric_input_has_orthonormal_rows():
    X0 = isometric_input(np.random.default_rng([3, 20]), 20, 35)
    np.testing.assert_allclose(X0 @ X0.T, np.eye(20), atol=1e-13)
    with pytest.raises(ValueError, match="'T' must be <= d"):
        isometric_input(np.random.default_rng(0), 40, 35)


def test_remove_outlier_kills_the_perron_direction():
    A = ExponentialEntries().markov(np.random.default_rng([4, 25]), 25)
    np.testing.assert_allclose(remove_outlier(A) @ np.ones(25), 0.0, atol=1e-14)


def test_scipy_entries_reject_signed_laws():
    with pytest.raises(ValueError, match="'dist'"):
        ScipyEntries(stats.norm())
