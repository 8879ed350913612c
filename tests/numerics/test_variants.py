"""tests for numerics/variants.py and numerics/causal.py: samplers and experiments."""
import math

import numpy as np
import pytest

from gapverify.numerics.causal import (
    causal_cesaro, causal_softmax, cesaro_dense, cesaro_operator, cesaro_top_singular_value,
)
from gapverify.numerics.experiments import EXPERIMENTS
from gapverify.numerics.variants import (
    MAPS, bulk_rank_of_lambda2, elementwise_attention, ginibre_reference,
)
from gapverify.theory.elementwise import moments_float


def test_experiments_are_registered():
    for key in ("variants.relu", "variants.sigmoid", "variants.linear", "causal.cesaro"):
        assert key in EXPERIMENTS


@pytest.mark.parametrize("name", list(MAPS))
def test_elementwise_attention_entries_have_the_theory_moments(name):
    """T^2 = 160000 entries of T A = phi(M): mean and variance within 5 se of (mu_phi, v_phi)."""
    T, mu, s2 = 400, 0.5, 1.0
    Y = elementwise_attention(np.random.default_rng(1), T, name, mu, s2).ravel() * T
    m1, var = moments_float(name, mu, s2)
    assert abs(Y.mean() - m1) < 5 * Y.std() / T
    assert abs(Y.var() - var) < 5 * math.sqrt(np.mean((Y - Y.mean()) ** 4) - var**2) / T


def test_sigmoid_map_is_the_logistic_function_without_overflow():
    x = np.array([-800.0, -1.0, 0.0, 2.0, 800.0])
    assert np.allclose(MAPS["sigmoid"](x), [0.0, 1 / (1 + math.e), 0.5, 1 / (1 + math.exp(-2)), 1.0],
                       rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", list(MAPS))
def test_the_fix_removes_the_outlier(name):
    """T = 400: s_1(A) is near |mu_phi| = O(1) but sqrt(T) s_1 of the fix is near the bulk
    edge 2 sqrt(v_phi) (within 10%, far from the outlier's sqrt(T) |mu_phi|)."""
    T, mu, s2 = 400, 0.5, 1.0
    m = EXPERIMENTS[f"variants.{name}"](np.random.default_rng(2), T, {"mu": mu, "s2": s2})
    m1, var = moments_float(name, mu, s2)
    assert m["s1"] == pytest.approx(abs(m1), rel=0.05)
    assert m["sqrtT_s1_fix"] == pytest.approx(2 * math.sqrt(var), rel=0.1)
    assert m["sqrtT_s1_fix"] < 0.5 * math.sqrt(T) * abs(m1)


def test_ginibre_reference_is_the_kth_largest_modulus_of_a_real_ginibre_matrix():
    """Arnoldi's |lambda_k| equals LAPACK's on the same draw (the same generator state), and
    the spectral radius sits near 1 + sqrt(log T / 4T) (within 0.2: T = 300 is small)."""
    T = 300
    for k in (1, 2):
        got = ginibre_reference(np.random.default_rng(3), T, k)
        G = np.random.default_rng(3).normal(0.0, 1 / math.sqrt(T), size=(T, T))
        want = np.sort(np.abs(np.linalg.eigvals(G)))[::-1][k - 1]
        assert got == pytest.approx(want, rel=1e-8)
    assert abs(ginibre_reference(np.random.default_rng(4), T, 1) - 1.0) < 0.2
    with pytest.raises(ValueError, match="parameter 'k' must be 1 or 2"):
        ginibre_reference(np.random.default_rng(0), T, 3)


def test_lambda2_is_the_bulk_top_with_an_outlier_and_its_second_without():
    # linear at mu = 0: no outlier, lambda_2 is the bulk's second; ReLU: mu_phi > 0 outside
    assert bulk_rank_of_lambda2(*moments_float("linear", 0.0, 1.0), T=64) == 2
    assert bulk_rank_of_lambda2(*moments_float("relu", 0.0, 1.0), T=64) == 1
    assert bulk_rank_of_lambda2(*moments_float("linear", 0.05, 1.0), T=64) == 2  # 0.05 < 1/8
    assert bulk_rank_of_lambda2(*moments_float("linear", 0.5, 1.0), T=64) == 1


@pytest.mark.parametrize("name", list(MAPS))
def test_the_ginibre_ratio_is_the_radius_over_the_reference(name):
    m = EXPERIMENTS[f"variants.{name}"](np.random.default_rng(5), 200, {"mu": 0.5, "s2": 1.0})
    assert m["sqrtT_lambda2_ginibre"] == pytest.approx(m["sqrtT_lambda2"] / m["ginibre_rho"], rel=1e-14)
    _, var = moments_float(name, 0.5, 1.0)
    assert m["sqrtT_lambda2_ginibre"] == pytest.approx(math.sqrt(var), rel=0.15)


def test_causal_softmax_is_lower_triangular_and_stochastic():
    A = causal_softmax(np.random.default_rng(0), 50, 0.0, 1.0)
    assert np.all(np.triu(A, 1) == 0)
    assert np.allclose(A.sum(axis=1), 1.0, rtol=0, atol=50 * np.finfo(float).eps)
    assert A[0, 0] == 1.0


def test_cesaro_operator_matches_dense():
    T = 37
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal(T), rng.standard_normal(T)
    C, op = cesaro_dense(T), cesaro_operator(T)
    assert np.allclose(op.matvec(x), C @ x, rtol=1e-13, atol=0)
    assert np.allclose(op.rmatvec(y), C.T @ y, rtol=1e-13, atol=1e-14)
    assert cesaro_top_singular_value(T) == pytest.approx(np.linalg.norm(C, 2), rel=1e-9)


def test_causal_experiment_identities():
    m = causal_cesaro(np.random.default_rng(3), 128, {"mu": 0.0, "s2": math.log(2)})
    assert abs(m["frob_C_over_H"] - 1) < 2 * (128**2 + 128) * np.finfo(float).eps
    assert 1.6 < m["s1_cesaro"] < 2
    # the noise is kappa^2 = 1 per unit of H, less the 1/H correction: well inside (0.2, 1.5)
    assert 0.2 < m["frob_noise_over_H"] < 1.5 and 0.5 < m["frob_noise_late_rows"] < 1.5


def test_spike_edge_is_continuous_at_the_transition_and_dominated_by_the_spike():
    from gapverify.numerics.heavy_tail import spike_edge

    assert spike_edge(1.0, 1.0) == 2.0 and spike_edge(1.0, 1.0 + 1e-12) == pytest.approx(2.0)
    assert spike_edge(2.0, 1.0) == 4.0  # below the bulk: the edge 2 kappa
    assert spike_edge(1.0, 10.0) == pytest.approx(10.1)  # c + kappa^2 / c


def test_heavy_tail_edge_measures_consistent_quantities():
    from gapverify.numerics.heavy_tail import heavy_tail_edge

    m = heavy_tail_edge(np.random.default_rng(4), 256, {"mu": 0.0, "s2": 2.0})
    kappa = math.sqrt(math.expm1(2.0))
    assert m["edge_over_max"] == pytest.approx(m["sqrtT_s2"] / max(2 * kappa, m["col_max"]))
    # s_2(A) <= s_1(Aperp) (Weyl, rank one) >= every column norm: the edge is of the
    # order of the largest column, not of 2 kappa, at s2 = 2 and T = 256
    assert m["col_max"] > 2 * kappa and 0.7 < m["edge_over_max"] < 1.3


def test_normalization_experiment_measures_every_variant():
    m = EXPERIMENTS["variants.normalization"](
        np.random.default_rng(6), 32, {"s2": math.log(2), "mu": 0.0, "gamma": 1.0,
                                       "sigma_V": 1.0, "depth": 2})
    assert set(m) == {f"{k}_{v}" for k in ("sr_Sigma", "sr_Sigmaperp_over_T")
                      for v in ("LN", "skip", "skip_LN", "upscaled")}
    # collapse at depth 2 for the standard networks but the upscaled skip
    assert all(1 <= m[f"sr_Sigma_{v}"] < 1.01 for v in ("LN", "skip", "skip_LN"))
    assert m["sr_Sigma_upscaled"] > 1.5
