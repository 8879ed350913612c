r"""Tests of :mod:`numerics.gradients` (claims ``gradient.value_frobenius`` and
``gradient.input_jacobian``; Naderi, Nait Saada, Tanner, ICML 2025, arXiv:2410.07799).

1. The fast norms equal the explicit Jacobians' (built from the definition, by
   linearity exact) to 1e-10 relative, standard and fixed attention.
2. Monte Carlo over the value weights, the ``A``'s held fixed:
   ``E_W ||dX_L/dW_l||_F^2 = sigma_V^{2(L-1)} d^L ||A_L...A_1||_F^2`` for every ``l``.
   Check ``|mean - prediction| <= 4 se`` with ``se`` the sample standard error of the
   mean of ``N = 5000`` i.i.d. draws (finite variance: the norms are polynomials in
   Gaussians; CLT). Per check the two-sided false-alarm probability is
   ``P(|Z| > 4) = 6.3e-5``; over the 12 checks of this file at most 7.6e-4 (union bound).
   Power: the same check must reject wrong identities (exponent ``L - 1`` on ``d``,
   exponent ``2L`` on ``sigma_V``, 5 percent off); the test first asserts that 5 percent
   is at least 8 se, so a miss has probability ``P(Z > 4) = 3e-5`` or less.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from gapverify.numerics.gradients import (
    explicit_input_jacobian, explicit_value_jacobian, input_jacobian_sq_norm,
    value_gradient_sq_norms,
)
from gapverify.numerics.forward_pass import forward
from gapverify.numerics.networks import NetworkConfig
from gapverify.numerics.samplers import LogNormalEntries, isometric_input, remove_outlier

Z = 4.0
LAW = LogNormalEntries()  # mu = -log2/2, s2 = log 2 (kappa = 1)


def _markov_network(rng, T, d, L, fixed, sigma_V=1.0):
    """``A_1..A_L`` (fixed or not), isometric ``X0`` and ``W_1..W_L`` ~ N(0, sigma_V^2)."""
    As = [LAW.markov(rng, T) for _ in range(L)]
    if fixed:
        As = [remove_outlier(A) for A in As]
    X0 = isometric_input(rng, T, d)
    Ws = [rng.normal(0.0, sigma_V, (d, d)) for _ in range(L)]
    return As, X0, Ws


def _vec(M):
    """Column-major ``vec``."""
    return M.reshape(-1, order="F")  # column-major vec


# ------------------------------------------------------------------ exact identities
@pytest.mark.parametrize("fixed", [False, True])
def test_value_norms_equal_explicit_jacobian(fixed):
    T, d, L = 6, 8, 3
    As, X0, Ws = _markov_network(np.random.default_rng([30, fixed]), T, d, L, fixed, 1.3)
    fast = value_gradient_sq_norms(As, X0, Ws)
    assert fast.shape == (L,)
    for l in range(1, L + 1):
        J = explicit_value_jacobian(As, X0, Ws, l)
        assert J.shape == (T * d, d * d)
        assert math.isclose(fast[l - 1], np.sum(J * J), rel_tol=1e-10)
    logs = value_gradient_sq_norms(As, X0, Ws, return_log=True)
    assert np.allclose(np.exp(logs), fast, rtol=1e-12)


@pytest.mark.parametrize("fixed", [False, True])
def test_explicit_value_jacobian_is_the_kronecker_product(fixed):
    """``d vec X_L / d vec W_l = (W_{l+1}...W_L)^T kron (A_L...A_l X_{l-1})`` and
    ``vec X_L = J vec W_l`` (linearity)."""
    T, d, L = 5, 7, 3
    As, X0, Ws = _markov_network(np.random.default_rng([31, fixed]), T, d, L, fixed)
    Xs = [X0]
    for A, W in zip(As, Ws):
        Xs.append(A @ Xs[-1] @ W)
    for l in range(1, L + 1):
        R, S = np.eye(d), np.eye(T)
        for W in Ws[l:]:
            R = R @ W
        for A in As[l - 1:]:
            S = A @ S
        J = explicit_value_jacobian(As, X0, Ws, l)
        assert np.allclose(J, np.kron(R.T, S @ Xs[l - 1]), rtol=0, atol=1e-12 * np.abs(J).max())
        assert np.allclose(J @ _vec(Ws[l - 1]), _vec(Xs[L]), rtol=1e-12, atol=1e-12 * np.abs(Xs[L]).max())


@pytest.mark.parametrize("fixed", [False, True])
def test_input_jacobian_spectral_norm(fixed):
    T, d = 6, 8
    As, _, Ws = _markov_network(np.random.default_rng([32, fixed]), T, d, 1, fixed, 0.8)
    J = explicit_input_jacobian(As[0], Ws[0])
    assert J.shape == (T * d, T * d)
    assert np.allclose(J, np.kron(Ws[0].T, As[0]), rtol=0, atol=1e-14)
    ref = np.linalg.norm(J, 2) ** 2  # full SVD of the explicit Jacobian (test only)
    assert math.isclose(input_jacobian_sq_norm(As[0], Ws[0]), ref, rel_tol=1e-10)


def test_input_jacobian_large_uses_lanczos():
    """Above the dense threshold: compare with the factors' full SVDs (test only)."""
    rng = np.random.default_rng(33)
    A, W = LAW.markov(rng, 120), rng.standard_normal((150, 150))
    ref = (np.linalg.norm(A, 2) * np.linalg.norm(W, 2)) ** 2
    assert math.isclose(input_jacobian_sq_norm(A, W), ref, rel_tol=1e-10)


def test_forward_trace_feeds_gradients():
    cfg = NetworkConfig(T=6, d=8, depth=3, fixed=True, sigma_V=0.9)
    tr = forward(np.random.default_rng(34), cfg, keep_matrices=True)
    fast = value_gradient_sq_norms(tr.As, tr.X0, tr.Ws)
    J = explicit_value_jacobian(tr.As, tr.X0, tr.Ws, 2)
    assert math.isclose(fast[1], np.sum(J * J), rel_tol=1e-10)


def test_activations_from_forward_are_not_recomputed_and_agree():
    # value_gradients passes forward's activations as the prefix: same norms to round-off
    cfg = NetworkConfig(T=40, d=60, depth=3, fixed=True, sigma_V=1.3)
    tr = forward(np.random.default_rng(37), cfg, keep_matrices=True, ranks=False)
    assert np.all(np.isnan(tr.sr_X))  # ranks=False: no stable ranks computed
    prefix = [(tr.X0, 0.0)] + list(zip(tr.X_normalised[:-1], tr.log_frob_X[:-1]))
    given = value_gradient_sq_norms(tr.As, tr.X0, tr.Ws, return_log=True, prefix=prefix)
    again = value_gradient_sq_norms(tr.As, tr.X0, tr.Ws, return_log=True)
    assert np.allclose(given, again, rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="parameter 'prefix'"):
        value_gradient_sq_norms(tr.As, tr.X0, tr.Ws, prefix=prefix[:2])


def test_twin_networks_share_their_weight_products_exactly():
    """value_gradients draws the standard and the fixed network once (forward_twins) and
    computes the weights' suffix norms once: the fixed network's norms are, number for
    number, those of its own forward pass on a generator seeded alike."""
    from gapverify.numerics.gradients import weight_suffix_logs
    from gapverify.numerics.forward_pass import forward_twins

    cfg = NetworkConfig(T=40, d=60, depth=3, sigma_V=1.3)
    std, fix = forward_twins(np.random.default_rng(38), cfg, keep_matrices=True, ranks=False)
    alone = forward(np.random.default_rng(38), NetworkConfig(T=40, d=60, depth=3, sigma_V=1.3,
                                                             fixed=True),
                    keep_matrices=True, ranks=False)
    shared = weight_suffix_logs(std.Ws)
    for a, b in zip((fix.X0, *fix.As, *fix.Ws), (alone.X0, *alone.As, *alone.Ws)):
        assert np.array_equal(a, b)
    assert np.array_equal(value_gradient_sq_norms(fix.As, fix.X0, fix.Ws, weight_logs=shared),
                          value_gradient_sq_norms(alone.As, alone.X0, alone.Ws))
    with pytest.raises(ValueError, match="parameter 'weight_logs'"):
        value_gradient_sq_norms(fix.As, fix.X0, fix.Ws, weight_logs=shared[:2])


def test_deep_network_does_not_overflow():
    """``d^L`` with d = 64, L = 180 is 1e325 > float max: the log stays finite."""
    rng = np.random.default_rng(35)
    T, d, L = 4, 64, 180
    As = [LAW.markov(rng, T) for _ in range(L)]
    Ws = [rng.standard_normal((d, d)) for _ in range(2)] * (L // 2)
    logs = value_gradient_sq_norms(As, isometric_input(rng, T, d), Ws, return_log=True)
    assert np.all(np.isfinite(logs)) and logs.max() > math.log(np.finfo(float).max)


def test_input_validation():
    rng = np.random.default_rng(36)
    As, X0, Ws = _markov_network(rng, 4, 5, 2, False)
    with pytest.raises(ValueError, match="'As' and 'Ws'"):
        value_gradient_sq_norms(As, X0, Ws[:1])
    with pytest.raises(ValueError, match="'Ws' entry 2"):
        value_gradient_sq_norms(As, X0, [Ws[0], Ws[1][:4]])
    with pytest.raises(ValueError, match="'l'"):
        explicit_value_jacobian(As, X0, Ws, 3)
    with pytest.raises(ValueError, match="MAX_EXPLICIT_ENTRIES"):
        explicit_value_jacobian([np.eye(64)], np.eye(64), [np.eye(64)], 1)


# ----------------------------------------------------------------- Monte Carlo identity
@pytest.mark.parametrize(
    "fixed, sigma_V", [(False, 1.0), (True, 1.0), (False, 0.7), (True, 1.3)]
)
def test_expected_value_gradient_identity(fixed, sigma_V):
    T, d, L, N = 16, 32, 3, 5000
    rng = np.random.default_rng([37, fixed, int(10 * sigma_V)])
    As, X0, _ = _markov_network(rng, T, d, L, fixed)
    P = np.eye(T)
    for A in As:
        P = A @ P  # A_L ... A_1
    frob = np.sum(P * P)
    G = np.array([
        value_gradient_sq_norms(As, X0, [rng.normal(0.0, sigma_V, (d, d)) for _ in range(L)])
        for _ in range(N)
    ])  # N x L, draws of ||dX_L/dW_l||_F^2
    mean = G.mean(axis=0)
    se = G.std(axis=0, ddof=1) / math.sqrt(N)

    def accepted(prediction):
        """Per ``l``: is ``prediction`` within ``Z`` standard errors of the mean?"""
        return np.abs(mean - prediction) <= Z * se  # per l

    truth = sigma_V ** (2 * (L - 1)) * d**L * frob
    assert np.all(accepted(truth)), (mean / truth - 1, se / truth)
    assert np.all(0.05 * truth >= 2 * Z * se)  # power: 5 percent is >= 8 se
    wrong = {
        "d^(L-1)": sigma_V ** (2 * (L - 1)) * d ** (L - 1) * frob,
        "5 percent high": 1.05 * truth,
        "5 percent low": 0.95 * truth,
    }
    if sigma_V != 1.0:
        wrong["sigma_V^(2L)"] = sigma_V ** (2 * L) * d**L * frob
    for name, prediction in wrong.items():
        assert not np.any(accepted(prediction)), name
