r"""Jacobians of attention-only networks with respect to value weights and inputs.

Markov surrogate with the attention matrices held fixed (conditional on the ``A``'s),
:math:`X_L = A_L \cdots A_1 X_0 W_1 \cdots W_L` is linear in each :math:`W_\ell`:

.. math::

    X_L = B_\ell\, W_\ell\, R_\ell,\qquad
    B_\ell = A_L \cdots A_\ell X_{\ell-1},\quad R_\ell = W_{\ell+1} \cdots W_L,

so with column-major :math:`\operatorname{vec}` (:math:`\operatorname{vec}(BWR) =
(R^\top \otimes B)\operatorname{vec} W`)

.. math::

    \frac{\partial \operatorname{vec} X_L}{\partial \operatorname{vec} W_\ell}
    = R_\ell^\top \otimes B_\ell,\qquad
    \Big\|\frac{\partial X_L}{\partial W_\ell}\Big\|_F^2 = \|R_\ell\|_F^2\, \|B_\ell\|_F^2,

and, one layer, :math:`\partial \operatorname{vec} X_1 / \partial \operatorname{vec} X_0
= W_1^\top \otimes A_1` with spectral norm :math:`\|W_1\|_2 \|A_1\|_2`
(:math:`\|P \otimes Q\|_2 = \|P\|_2 \|Q\|_2`). Claims ``gradient.value_frobenius`` and
``gradient.input_jacobian``. The explicit Jacobians are built from the definition
(the linear map evaluated on the basis matrices) and are for tests and benchmarks only.

References
----------
.. [1] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap: a Spectral Analysis of Rank
   Collapse and Signal Propagation in Attention Layers", ICML 2025, arXiv:2410.07799.
.. [2] J. R. Magnus, H. Neudecker, "Matrix Differential Calculus with Applications in
   Statistics and Econometrics", 3rd ed., Wiley 2019 (vec and Kronecker identities).
.. [3] R. A. Horn, C. R. Johnson, "Topics in Matrix Analysis", CUP 1991, Thm 4.2.15
   (singular values of a Kronecker product).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from gapverify.numerics.statistics import top_singular_values

__all__ = [
    "value_gradient_sq_norms",
    "weight_suffix_logs",
    "input_jacobian_sq_norm",
    "explicit_value_jacobian",
    "explicit_input_jacobian",
]

#: Largest explicit Jacobian (number of entries) the explicit builders agree to form:
#: 2^23 float64 = 64 MiB.
MAX_EXPLICIT_ENTRIES = 1 << 23


def _check_network(As: Sequence[np.ndarray], X0: np.ndarray, Ws: Sequence[np.ndarray]
                   ) -> tuple[list[np.ndarray], np.ndarray, list[np.ndarray]]:
    """Validate shapes: ``L >= 1`` matrices ``A`` (``T x T``), ``X0`` (``T x d``), ``W`` (``d x d``)."""
    As = [np.asarray(A, dtype=float) for A in As]
    Ws = [np.asarray(W, dtype=float) for W in Ws]
    X0 = np.asarray(X0, dtype=float)
    if len(As) == 0 or len(As) != len(Ws):
        raise ValueError(
            f"parameters 'As' and 'Ws' must be non-empty and of equal length (depth L >= 1), "
            f"got {len(As)} and {len(Ws)}"
        )
    if X0.ndim != 2:
        raise ValueError(f"parameter 'X0' must be a T x d matrix, got shape {X0.shape}")
    T, d = X0.shape
    for i, A in enumerate(As, start=1):
        if A.shape != (T, T):
            raise ValueError(f"parameter 'As' entry {i} must have shape (T, T) = {(T, T)}, got {A.shape}")
    for i, W in enumerate(Ws, start=1):
        if W.shape != (d, d):
            raise ValueError(f"parameter 'Ws' entry {i} must have shape (d, d) = {(d, d)}, got {W.shape}")
    return As, X0, Ws


def _normalised(M: np.ndarray) -> tuple[np.ndarray, float]:
    """``(M / ||M||_F, log ||M||_F)``; ``(M, -inf)`` for ``M = 0``."""
    nrm = float(np.linalg.norm(M))
    if nrm == 0.0:
        return M, -math.inf
    return M / nrm, math.log(nrm)


def value_gradient_sq_norms(As: Sequence[np.ndarray], X0: np.ndarray, Ws: Sequence[np.ndarray],
                            *, return_log: bool = False,
                            prefix: Sequence[tuple[np.ndarray, float]] | None = None,
                            weight_logs: np.ndarray | None = None) -> np.ndarray:
    r"""Exact :math:`\|\partial X_L / \partial W_\ell\|_F^2` for ``l = 1..L`` (fixed ``A``'s).

    .. math::

        \Big\|\frac{\partial \operatorname{vec} X_L}{\partial \operatorname{vec} W_\ell}\Big\|_F^2
        = \|W_{\ell+1} \cdots W_L\|_F^2\; \|A_L \cdots A_\ell X_{\ell-1}\|_F^2,
        \qquad X_{\ell} = A_\ell X_{\ell-1} W_\ell,

    from :math:`\|P \otimes Q\|_F = \|P\|_F \|Q\|_F` [2]_ (empty product :math:`= I_d`,
    norm :math:`d`). Theory (``gradient.value_frobenius``, [1]_): with i.i.d.
    :math:`N(0, \sigma_V^2)` weights and :math:`X_0 X_0^\top = I`,
    :math:`\mathbb E_W \|\partial X_L/\partial W_\ell\|_F^2 = \sigma_V^{2(L-1)} d^L
    \|A_L\cdots A_1\|_F^2` for every ``l``.

    ``As`` = ``[A_1, ..., A_L]`` (``T x T``; pass the fixed :math:`A^\perp` for the fix),
    ``X0`` ``T x d``, ``Ws`` = ``[W_1, ..., W_L]`` (``d x d``). Every running product is
    kept divided by its Frobenius norm and the logs of the norms are summed, so nothing
    overflows; ``return_log=True`` returns :math:`\log\|\cdot\|_F^2` instead.

    Cost ``O(L (T^2 d + T d^2 + T^3 + d^3))`` = ``O(L T^2 d + L d^3)`` for ``T <= d``:
    the prefix activations :math:`X_{\ell-1}`, the suffix products
    :math:`A_L \cdots A_\ell` and :math:`W_{\ell+1}\cdots W_L`; no Kronecker product.
    ``prefix``: the activations :math:`X_0, \dots, X_{L-1}` already computed, as pairs
    ``(X_hat, log ||X||_F)`` (``forward(..., keep_matrices=True)`` of a network without
    residual or LayerNorm: ``(X0, 0)``, then ``X_normalised[l]`` with ``log_frob_X[l]``):
    they are then not recomputed, which saves ``L - 1`` of the ``T d^2 + T^2 d`` products.
    ``weight_logs``: :func:`weight_suffix_logs` of ``Ws``, already computed (a standard and
    a fixed network on the same weights share its ``L - 1`` products of ``O(d^3)``).
    Returns an array of length ``L``, entry ``l - 1`` for :math:`W_\ell`.
    """
    As, X0, Ws = _check_network(As, X0, Ws)
    L = len(As)
    if prefix is not None:
        if len(prefix) != L or any(np.shape(Xp) != X0.shape for Xp, _ in prefix):
            raise ValueError(f"parameter 'prefix' must hold the L = {L} activations X_0..X_(L-1) "
                             f"of shape {X0.shape}, got {len(prefix)}")
        Xh, logX = [Xp for Xp, _ in prefix], [float(lg) for _, lg in prefix]
    else:
        # prefix activations X_{l-1} = e^{logX[l-1]} Xh[l-1], l = 1..L
        Xh, logX = [X0], [0.0]
        for ell in range(L - 1):
            Y, lg = _normalised(As[ell] @ (Xh[-1] @ Ws[ell]))  # X_l = A_l X_{l-1} W_l, O(T d^2 + T^2 d)
            Xh.append(Y)
            logX.append(logX[-1] + lg)
    logR = weight_suffix_logs(Ws) if weight_logs is None else np.asarray(weight_logs, float)
    if logR.shape != (L,):
        raise ValueError(f"parameter 'weight_logs' must have length L = {L}, got shape {logR.shape}")
    out = np.empty(L)
    # suffix products A_L ... A_l = e^{logS} S_hat; None is the empty product, never multiplied out
    S_hat, logS = None, 0.0
    for ell in range(L - 1, -1, -1):  # l = L, ..., 1 (0-based ell = l - 1)
        S_hat, lg = _normalised(As[ell] if S_hat is None else S_hat @ As[ell])  # A_L ... A_l, O(T^3)
        logS += lg
        B = S_hat @ Xh[ell]  # A_L ... A_l X_{l-1} / scale, O(T^2 d)
        logB = math.log(np.linalg.norm(B)) if np.any(B) else -math.inf
        out[ell] = 2.0 * (logR[ell] + logS + logX[ell] + logB)  # log(||R_l||_F^2 ||B_l||_F^2)
    return out if return_log else np.exp(out)


def weight_suffix_logs(Ws: Sequence[np.ndarray]) -> np.ndarray:
    r""":math:`\log\|W_{\ell+1}\cdots W_L\|_F` for ``l = 1..L`` (entry ``l - 1``; the empty
    product at ``l = L`` is :math:`I_d`, :math:`\|I_d\|_F^2 = d`), each running product kept
    divided by its Frobenius norm. ``L - 1`` products of ``O(d^3)``."""
    L, d = len(Ws), Ws[0].shape[0]
    logR = np.empty(L)
    logR[L - 1] = 0.5 * math.log(d)
    R_hat = None
    for ell in range(L - 1, 0, -1):  # W_l ... W_L for l = L, ..., 2 (0-based ell = l - 1)
        R_hat, lg = _normalised(Ws[ell] if R_hat is None else Ws[ell] @ R_hat)  # O(d^3)
        logR[ell - 1] = lg if ell == L - 1 else logR[ell] + lg
    return logR


def input_jacobian_sq_norm(A: np.ndarray, W: np.ndarray) -> float:
    r"""Squared spectral norm of the one-layer input Jacobian (constant ``A``).

    .. math::

        \frac{\partial \operatorname{vec} X_1}{\partial \operatorname{vec} X_0}
        = W^\top \otimes A,\qquad
        \|W^\top \otimes A\|_2^2 = \|W\|_2^2\, \|A\|_2^2

    (singular values of a Kronecker product are the products of the factors' [3]_).
    Theory (``gradient.input_jacobian``, [1]_): about :math:`4\sigma_V^2 d` for standard
    attention, :math:`16\sigma_V^2\kappa^2/\gamma` with the fix. Two top singular values
    (:func:`numerics.statistics.top_singular_values`: Lanczos, ``O(T^2 + d^2)`` per
    iteration; LAPACK values-only for sides <= 16).
    """
    A = np.asarray(A, dtype=float)
    W = np.asarray(W, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"parameter 'A' must be a square T x T matrix, got shape {A.shape}")
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"parameter 'W' must be a square d x d matrix, got shape {W.shape}")
    s_w, s_a = top_singular_values(W, 1)[0], top_singular_values(A, 1)[0]  # Lanczos (LAPACK if tiny)
    return float(s_w * s_a) ** 2  # ||W||_2^2 ||A||_2^2


def _vec_columns(Y: np.ndarray) -> np.ndarray:
    """The ``(p q) x n`` matrix whose column ``k`` is the column-major ``vec(Y_k)``,
    ``Y`` a batch ``n x p x q``; ``O(n p q)``."""
    n = Y.shape[0]
    return Y.transpose(0, 2, 1).reshape(n, -1).T  # column k = vec(Y_k), vec(M)[i + j p] = M[i, j]


def _basis(p: int, q: int) -> np.ndarray:
    r"""The ``p q`` basis matrices :math:`E_k = e_i e_j^\top`, ``k = i + j p`` (column-major)."""
    E = np.zeros((p * q, p, q))
    k = np.arange(p * q)
    E[k, k % p, k // p] = 1.0  # E_k[i, j] = 1 with i = k mod p, j = k div p
    return E


def explicit_value_jacobian(As: Sequence[np.ndarray], X0: np.ndarray, Ws: Sequence[np.ndarray],
                            l: int) -> np.ndarray:
    r"""The full Jacobian :math:`\partial \operatorname{vec} X_L / \partial \operatorname{vec} W_\ell`,
    ``(T d) x d^2``, from its definition. Tests and benchmarks only.

    .. math::

        J_{:, i + j d} = \operatorname{vec} X_L\big|_{W_\ell = e_i e_j^\top}
        = \operatorname{vec}\big(A_L(\cdots A_{\ell+1}(A_\ell X_{\ell-1} e_i e_j^\top)
          W_{\ell+1} \cdots) W_L\big),

    exact because :math:`X_L` is linear in :math:`W_\ell` (the ``A``'s are fixed): no
    finite-difference error. Every basis matrix is pushed through layers ``l..L``
    (batched); it does not use the Kronecker formula it is meant to check.
    ``l`` is 1-based. Cost ``O(d^2 (L T^2 d + L T d^2 + T d^2))`` time and ``T d^3`` memory;
    raises ValueError above :data:`MAX_EXPLICIT_ENTRIES` entries.
    """
    As, X0, Ws = _check_network(As, X0, Ws)
    L = len(As)
    T, d = X0.shape
    if isinstance(l, bool) or not isinstance(l, (int, np.integer)) or not 1 <= l <= L:
        raise ValueError(f"parameter 'l' must be an integer in [1, L] = [1, {L}], got {l!r}")
    if T * d * d * d > MAX_EXPLICIT_ENTRIES:
        raise ValueError(
            f"explicit value Jacobian needs (T d) x d^2 = {T * d} x {d * d} entries "
            f"(batch T d^3 = {T * d**3}) > MAX_EXPLICIT_ENTRIES = {MAX_EXPLICIT_ENTRIES}"
        )
    X = X0
    for k in range(l - 1):
        X = As[k] @ X @ Ws[k]  # X_k = A_k X_{k-1} W_k
    Y = (As[l - 1] @ X) @ _basis(d, d)  # X_l at W_l = E_ij, batch of d^2 (T x d)
    for k in range(l, L):
        Y = As[k] @ Y @ Ws[k]  # X_{k+1} = A_{k+1} X_k W_{k+1}, batched
    return _vec_columns(Y)


def explicit_input_jacobian(A: np.ndarray, W: np.ndarray) -> np.ndarray:
    r"""The full one-layer input Jacobian :math:`\partial \operatorname{vec} X_1 /
    \partial \operatorname{vec} X_0`, ``(T d) x (T d)``, from its definition.

    .. math:: J_{:, i + j T} = \operatorname{vec}\big(A\, e_i e_j^\top\, W\big)
              \quad(X_1 = A X_0 W \text{ is linear in } X_0),

    tests and benchmarks only. Cost ``O(T d (T^2 d + T d^2))`` time, ``(T d)^2`` memory;
    raises ValueError above :data:`MAX_EXPLICIT_ENTRIES` entries.
    """
    A = np.asarray(A, dtype=float)
    W = np.asarray(W, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(
            f"parameters 'A' and 'W' must be square (T x T, d x d), got {A.shape} and {W.shape}"
        )
    T, d = A.shape[0], W.shape[0]
    if (T * d) ** 2 > MAX_EXPLICIT_ENTRIES:
        raise ValueError(
            f"explicit input Jacobian needs (T d)^2 = {(T * d) ** 2} entries "
            f"> MAX_EXPLICIT_ENTRIES = {MAX_EXPLICIT_ENTRIES}"
        )
    Y = A @ _basis(T, d) @ W  # X_1 at X_0 = E_ij, batch of T d (T x d)
    return _vec_columns(Y)
