r"""Rank collapse stops the gradients of the queries and keys (Noci et al., NeurIPS 2022).

A single-head attention layer on tokens :math:`X \in \mathbb{R}^{T\times d}`:
:math:`S = X W_Q (X W_K)^\top/\sqrt d`, :math:`A = \mathrm{softmax}(S)` by rows,
:math:`Y = A X W_V`, and the loss :math:`L = \langle Y, R\rangle` for a fixed random
:math:`R` (so :math:`\partial L/\partial Y = R`). Its gradients (written out, no autodiff):

.. math::
    G_V = (AX)^\top R,\quad
    \Delta = A \odot (R V^\top - \mathrm{rowsum}(A \odot R V^\top)),\quad
    G_Q = X^\top \Delta K/\sqrt d,\quad G_K = X^\top \Delta^\top Q/\sqrt d .

**Exact (derived; Noci et al. 2022, arXiv:2206.03126, the rank-collapse gradient result).**
The rows of the softmax Jacobian's image sum to zero, :math:`\Delta\mathbf 1 = 0`. At
collapse, :math:`X = \mathbf 1 x^\top`, every key is :math:`k = W_K^\top x`, so
:math:`\mathbf 1^\top \Delta K = (\Delta^\top\mathbf 1)^\top \dots` reduces to
:math:`\sum_{ij}\Delta_{ij} k^\top = 0` and :math:`X^\top\Delta^\top Q = x(\Delta\mathbf
1)^\top Q = 0`: :math:`G_Q = G_K = 0` while :math:`G_V = x(\mathbf 1^\top R) \ne 0`. The
statistic is the values' share of the gradient norm,
:math:`\|G_V\|/(\|G_V\| + \|G_Q\| + \|G_K\|) = 1`.

**Rate in** :math:`1-\rho` **(derived here).** Tokens
:math:`X = \sqrt\rho\,\mathbf 1 z^\top + \sqrt{1-\rho}\,E` (cosine :math:`\rho` between
tokens), :math:`\epsilon = \sqrt{1-\rho}`. With :math:`\Delta\mathbf 1 = 0`,
:math:`X^\top\Delta X = \epsilon\, u(\mathbf 1^\top\Delta E) + \epsilon^2 E^\top\Delta E`, and
:math:`\Delta = O(\epsilon)` (the values differ by :math:`\epsilon W_V^\top(E_j - \bar E)`
about a uniform :math:`A`), so :math:`\|G_Q\|, \|G_K\| = O(\epsilon^2) = O(1-\rho)` while
:math:`\|G_V\| = O(1)`: the ratio :math:`\|G_Q\|/\|G_V\|` vanishes like :math:`(1-\rho)^1`.
Measured as the local exponent :math:`\log_2[r(\delta)/r(\delta/2)]`, :math:`1-\rho =
\delta = 1/T`, on the same draws: it tends to 1; the next term of the expansion is odd in
:math:`E`, a sum over the tokens of mean-zero terms, so the exponent's error is
:math:`O(\sqrt{\delta/T}) = O(1/T)`.
"""
import math

import numpy as np
import sympy as sp

from gapverify import Check, Claim, Prediction, profiles

EPS = float(np.finfo(float).eps)


def attention_gradients(X, WQ, WK, WV, R):
    """``(G_Q, G_K, G_V)`` of ``L = <softmax(X WQ (X WK)^T / sqrt d) X WV, R>``."""
    d = WQ.shape[1]
    Q, K, V = X @ WQ, X @ WK, X @ WV
    S = Q @ K.T / math.sqrt(d)
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)  # A = softmax by rows
    dA = R @ V.T  # dL/dA
    dS = A * (dA - np.sum(A * dA, axis=1, keepdims=True))  # softmax backward: rows sum to 0
    GQ = X.T @ (dS @ K) / math.sqrt(d)  # dL/dWQ = X^T dS K / sqrt d
    GK = X.T @ (dS.T @ Q) / math.sqrt(d)  # dL/dWK = X^T dS^T Q / sqrt d
    GV = (A @ X).T @ R  # dL/dWV = (A X)^T R
    return GQ, GK, GV


def attention_loss(X, WQ, WK, WV, R):
    """``L = <softmax(X WQ (X WK)^T / sqrt d) X WV, R>`` (for finite differences)."""
    d = WQ.shape[1]
    S = (X @ WQ) @ (X @ WK).T / math.sqrt(d)
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    return float(np.sum((A @ X @ WV) * R))


def _weights(rng, d):
    return rng.standard_normal((3, d, d)) / math.sqrt(d)  # W ~ N(0, 1/d)


def value_share(GQ, GK, GV):
    nq, nk, nv = (np.linalg.norm(G) for G in (GQ, GK, GV))
    return nv / (nv + nq + nk)  # ||G_V|| / (||G_V|| + ||G_Q|| + ||G_K||)


def share_tolerance(T, d):
    """Round-off of the share at collapse: ``G_Q`` and ``G_K`` are sums of ``T^2`` terms
    that cancel exactly (``Delta 1 = 0``), each row sum exact to ``(T + 2) eps`` of its
    terms' size; with ``d``-term dot products around them, ``16 (T + d) eps`` of
    ``||G_V||`` bounds the left-over norm (measured: below ``2 T eps``)."""
    return 16.0 * (T + d) * EPS


def gradients_experiment(rng, T, params):
    """One replicate at ``T`` tokens of width ``d = d_qk``: the value share at exact collapse,
    and the local exponent of ``||G_Q|| / ||G_V||`` in ``1 - rho`` at ``1 - rho = 1/T``."""
    d = int(params["d_qk"])
    WQ, WK, WV = _weights(rng, d)
    R = rng.standard_normal((T, d))
    x = rng.standard_normal(d)
    collapsed = np.ones((T, 1)) * x[None, :]  # X = 1 x^T
    out = {"value_share_collapsed": float(value_share(*attention_gradients(collapsed, WQ, WK, WV, R))),
           "d": float(d)}
    z, E = rng.standard_normal(d), rng.standard_normal((T, d))

    def ratio(delta):
        X = math.sqrt(1 - delta) * z[None, :] + math.sqrt(delta) * E  # cosine 1 - delta
        GQ, GK, GV = attention_gradients(X, WQ, WK, WV, R)
        return np.linalg.norm(GQ) / np.linalg.norm(GV), np.linalg.norm(GK) / np.linalg.norm(GV)

    delta = 1.0 / T
    (q1, k1), (q2, k2) = ratio(delta), ratio(delta / 2)
    out["exponent_q"] = float(math.log2(q1 / q2))  # local exponent of ||G_Q||/||G_V|| in 1 - rho
    out["exponent_k"] = float(math.log2(k1 / k2))
    out["ratio_q_over_delta"] = float(q1 / delta)
    return out


_RATE_NOTE = ("1 - rho = delta = 1/T: the next term in eps = sqrt(delta) is odd in E, a sum "
              "over the T tokens of mean-zero terms, of relative size sqrt(delta / T) = 1/T "
              "(measured at T <= 1024, quick, two root seeds: beta = 0.98 +- 0.06 and 1.08 +- "
              "0.06 for G_Q, 0.92 +- 0.06 and 1.14 +- 0.05 for G_K)")

CLAIMS = [Claim(
    id="peers.collapsed_gradients",
    title=r"Rank collapse stops the query and key gradients: $G_Q = G_K = 0$ at $X = 1x^\top$, "
          r"$\|G_Q\|/\|G_V\| = O(1-\rho)$",
    predictions=(
        Prediction("value_share", "derived", lambda p: sp.Integer(1),
                   r"\|G_V\|/(\|G_V\|+\|G_Q\|+\|G_K\|),\ X = \mathbf 1 x^\top", kind="exact",
                   note="Delta 1 = 0 (softmax backward) and identical keys/queries: "
                        "X^T Delta K = x sum_ij Delta_ij k^T = 0, X^T Delta^T Q = x (Delta 1)^T Q = 0"),
        Prediction("exponent_q", "derived", lambda p: sp.Integer(1),
                   r"\log_2\frac{\|G_Q\|/\|G_V\|\,(1-\rho=\delta)}{\|G_Q\|/\|G_V\|\,(1-\rho=\delta/2)}",
                   note="X^T Delta X = eps u (1^T Delta E) + eps^2 E^T Delta E with Delta = O(eps), "
                        "eps^2 = 1 - rho"),
        Prediction("exponent_k", "derived", lambda p: sp.Integer(1),
                   r"\log_2\frac{\|G_K\|/\|G_V\|\,(\delta)}{\|G_K\|/\|G_V\|\,(\delta/2)}",
                   note="as for the queries, G_K = X^T Delta^T Q / sqrt d"),
    ),
    checks=(
        Check("value_share", "value_share_collapsed", "exact",
              tolerance=lambda T, m: share_tolerance(T, int(m["d"])),
              tolerance_note="16 (T + d) eps: G_Q and G_K are exactly cancelling sums of T^2 "
                             "terms (rows of Delta sum to 0), d = d_qk"),
        Check("exponent_q", "exponent_q", "limit", rate=1.0, rate_status="derived",
              rate_note=_RATE_NOTE),
        Check("exponent_k", "exponent_k", "limit", rate=1.0, rate_status="derived",
              rate_note=_RATE_NOTE),
        Check("exponent_q", "ratio_q_over_delta", "limit", asserted=False,
              record_note="the prefactor ||G_Q|| / (||G_V|| (1 - rho)) at 1 - rho = 1/T"),
    ),
    parameters=("d_qk",),
    experiment=gradients_experiment,
    paper_result='beyond the paper: Noci et al. (NeurIPS 2022), rank collapse and vanishing query and key gradients (result number not confirmed)',
    derived_in='docs/peers.md, peers.collapsed_gradients',
    references=("L. Noci et al., Signal propagation in transformers: theoretical perspectives "
                "and the role of rank collapse, NeurIPS 2022, arXiv:2206.03126",
                "docs/peers.md"),
    profiles=profiles(quick=(64, 1024), standard=(64, 2048)),
)]
