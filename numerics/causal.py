r"""Experiments of ``causal.cesaro``: causal (decoder) softmax attention.

Row :math:`i` is a softmax over its first :math:`i` logits (the mask :math:`j > i`):

.. math::

    A_{ij} = \frac{e^{M_{ij}}}{\sum_{k\le i} e^{M_{ik}}}\ (j \le i),\qquad
    (C_T)_{ij} = \frac1i\ (j\le i),\qquad \mathbb E A = C_T .

:math:`C_T` is applied matrix-free: :math:`C_T x = \mathrm{cumsum}(x)/i`,
:math:`C_T^\top y = \mathrm{reverse\,cumsum}(y/i)`, ``O(T)`` per product, so
:math:`s_1(C_T)` costs a Lanczos run of ``O(T)`` steps.

References
----------
.. [1] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap", ICML 2025, arXiv:2410.07799.
.. [2] G. H. Hardy, J. E. Littlewood, G. Polya, "Inequalities", CUP 1952, Thm. 326.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
from scipy.sparse.linalg import LinearOperator, svds

from gapverify.numerics.experiment_record import Experiment
from gapverify.numerics.samplers import softmax_rows
from gapverify.numerics.statistics import LANCZOS_TOL, frobenius_sq, top_singular_values

__all__ = ["causal_softmax", "cesaro_dense", "cesaro_operator", "cesaro_top_singular_value",
           "causal_cesaro", "causal_depth", "CAUSAL_EXPERIMENTS", "CAUSAL_RECORDS"]


def causal_softmax(rng: np.random.Generator, T: int, mu: float, s2: float) -> np.ndarray:
    r"""Causal softmax attention of i.i.d. :math:`N(\mu, s^2)` logits; ``O(T^2)``.
    Draws the full ``T x T`` logit matrix (masked entries are drawn and discarded)."""
    M = rng.normal(mu, math.sqrt(s2), size=(T, T))  # M_ij ~ N(mu, s2)
    M[np.triu_indices(T, 1)] = -np.inf  # mask j > i: exp(-inf) = 0
    return softmax_rows(M)


def cesaro_dense(T: int) -> np.ndarray:
    r""":math:`C_T` as a dense array: :math:`1/i` on and below the diagonal."""
    return np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]


def cesaro_operator(T: int) -> LinearOperator:
    r""":math:`C_T` matrix-free (``O(T)`` per product)."""
    i = np.arange(1, T + 1, dtype=float)
    mv = lambda x: np.cumsum(np.ravel(x)) / i  # (C x)_i = (1/i) sum_{j<=i} x_j
    rmv = lambda y: np.cumsum((np.ravel(y) / i)[::-1])[::-1]  # (C^T y)_j = sum_{i>=j} y_i / i
    return LinearOperator((T, T), matvec=mv, rmatvec=rmv, dtype=float)


def cesaro_top_singular_value(T: int) -> float:
    r""":math:`s_1(C_T)` by Lanczos on the matrix-free operator (deterministic start)."""
    v0 = np.ones(T) / math.sqrt(T)
    return float(svds(cesaro_operator(T), k=1, tol=LANCZOS_TOL, v0=v0,
                      return_singular_vectors=False)[0])


def causal_cesaro(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> dict[str, float]:
    r"""One causal attention matrix: :math:`\frac1T\sum_i i A_{i1}` and
    :math:`\frac1T\sum_i i A_{ii}` (mean 1 exactly when :math:`\mathbb E A = C_T`),
    :math:`\|C_T\|_F^2/H_T` (exact identity),
    :math:`s_1(C_T)`, the noise :math:`\|A - C_T\|_F^2/H_T` (all rows) and over the rows
    :math:`T/2 < i \le T` divided by :math:`H_T - H_{\lfloor T/2\rfloor}`,
    :math:`s_1(A)`, :math:`s_1(A - C_T)` (the causal fix) and
    :math:`\mathrm{sr}(A)/H_T`. Two dense Lanczos runs, ``O(T^2)`` per iteration."""
    A = causal_softmax(rng, T, p["mu"], p["s2"])
    C = cesaro_dense(T)
    inv = 1.0 / np.arange(1, T + 1)
    H = float(np.sum(inv[::-1]))  # H_T, smallest terms first
    half = T // 2
    H_late = float(np.sum(inv[half:][::-1]))  # H_T - H_{T/2}
    N = A - C  # the noise about the mean
    row_noise = np.einsum("ij,ij->i", N, N)  # ||A_i - C_i||^2 per row
    s1_A = float(top_singular_values(A, 1)[0])
    i = np.arange(1, T + 1)
    return {
        # (1/T) sum_i i A_i1 and (1/T) sum_i i A_ii: unbiased for 1 iff E A_ij = 1/i at the
        # first and the last visible position of each row (exchangeability), sd ~ kappa/sqrt(T)
        "first_column": float(np.mean(i * A[:, 0])),
        "diagonal": float(np.mean(i * np.diagonal(A))),
        "frob_C_over_H": frobenius_sq(C) / H,
        "s1_cesaro": cesaro_top_singular_value(T),
        "frob_noise_over_H": float(row_noise.sum() / H),
        "frob_noise_late_rows": float(row_noise[half:].sum() / H_late),
        "s1_A": s1_A,
        "s1_fix": float(top_singular_values(N, 1)[0]),
        "sr_A_over_H": frobenius_sq(A) / s1_A**2 / H,
    }


def causal_depth(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> dict:
    r"""A causal network of depth ``L`` (the Markov surrogate with the decoder mask,
    :class:`numerics.networks.NetworkConfig` ``attention="causal"``), standard and with the
    causal fix :math:`A_\ell - C_T` at every layer, on the same draws (the same logits and
    weights): :math:`\mathrm{sr}(\Sigma_L)` of both, :math:`\mathrm{sr}(\Sigma_L)/T` of the
    both, and the per-layer arrays. ``O(L (T d^2 + T^3))`` twice, the draws once
    (:func:`numerics.forward_pass.forward_twins`)."""
    from gapverify.numerics.common import _network_config, network_stream
    from gapverify.numerics.forward_pass import forward_twins

    std, fix = forward_twins(network_stream(rng), _network_config(T, p, False, attention="causal"))
    return {"sr_Sigma_std": float(std.sr_Sigma[-1]), "sr_Sigma_fix": float(fix.sr_Sigma[-1]),
            "sr_Sigma_std_over_T": float(std.sr_Sigma_over_T[-1]),
            "sr_Sigma_fix_over_T": float(fix.sr_Sigma_over_T[-1]),
            "layers_sr_Sigma_std": std.sr_Sigma, "layers_sr_Sigma_fix": fix.sr_Sigma}


#: The records of these experiments (:mod:`numerics.experiment_record`; registered by
#: :mod:`numerics.experiments`) and their functions by claim id.
CAUSAL_RECORDS = (
    Experiment("causal.cesaro", causal_cesaro, seconds=(0.00349, 4.17e-08, 5.46e-12)),
    # the fit times the measured ratios of the twins to two passes (0.733) and of X_0 W_1
    # drawn whole to X0 and W_1 (0.866; docs/performance.md)
    Experiment("causal.depth", causal_depth, seconds=(0.00275, 2.71e-07, 8.38e-10)),
)
CAUSAL_EXPERIMENTS = {r.name: r.function for r in CAUSAL_RECORDS}
