r"""The experiments of ``markov.outliers`` and ``width.stable_rank`` on any array library.

One code path written against the array API standard (``xp = array_namespace(x)``,
``array_api_compat``): numpy, torch (CPU or CUDA) or cupy, in float64 or float32
(:mod:`numerics.backends`). The default numpy/float64 runs never come here: they keep the
numpy/scipy path of :mod:`numerics.experiments` (ARPACK, PROPACK), bit for bit.

Iterative methods, no full decomposition of a ``T x T`` matrix:

* **top singular values**: Golub-Kahan-Lanczos bidiagonalisation with full
  reorthogonalisation (:func:`top_singular_values`), matrix-vector products only
  (``O(T^2)`` each, on the device); the small bidiagonal matrix is decomposed on the host.
  A Ritz value ``theta_i`` is accepted when its residual ``|beta_m P_{m,i}|`` (the norm of
  ``A^T u_i - theta_i v_i``, an upper bound on ``|theta_i - s_i|``) is at most
  ``tol * theta_1``: ``tol = 1e-10`` in float64 (ARPACK's tolerance in the numpy path,
  :data:`numerics.statistics.LANCZOS_TOL`), ``1e-5`` in float32 (about 100 float32 eps:
  reorthogonalisation in float32 cannot go much below ``eps ||A||``).
* **top eigenvalues of the non-symmetric A**: Krylov-Schur restarted Arnoldi (Stewart
  2001), basis of 40 vectors as in the numpy path (``ARNOLDI_VECTORS``), full
  reorthogonalisation (classical Gram-Schmidt twice) on the device, the 40 x 40 Schur
  decompositions on the host (scipy); same acceptance rule, ``|r^T y| <= tol |theta|``.

Both start from the deterministic vector ``1 + sin(i)`` of the numpy path. Costs per
replicate: one ``T x T`` matrix on the device (32 GiB at ``T = 65536`` in float64, 16 GiB
in float32), a Lanczos basis of ``2 T m`` numbers (``m`` <= 1000 steps), and for
``width.stable_rank`` the ``T x d`` products ``A Y`` (``Gram`` Frobenius norms are
accumulated over row blocks, never a ``T x T`` Gram matrix).

References
----------
.. [1] G. H. Golub, W. Kahan, "Calculating the singular values and pseudo-inverse of a
   matrix", SIAM J. Numer. Anal. B 2 (1965).
.. [2] G. W. Stewart, "A Krylov-Schur algorithm for large eigenproblems", SIAM J. Matrix
   Anal. Appl. 23 (2001).
"""
from __future__ import annotations

import math
from typing import Callable, Mapping

import numpy as np
from scipy import linalg as sla

from gapverify.numerics.backends import Backend, backend_of
from gapverify.numerics.edge import EDGE_K, tracy_widom_edge
from gapverify.numerics.statistics import ginibre_ratio, moment_ratio, outlier_measurement

__all__ = ["lanczos_tol", "softmax_markov", "top_singular_values", "top_eigenvalues",
           "outliers", "width_stable_rank", "bulk_edge", "perp_singular_values", "MAX_LANCZOS_STEPS", "ARNOLDI_VECTORS"]

#: Most Golub-Kahan steps (the numpy path's PROPACK takes at most 600; full
#: reorthogonalisation converges in fewer, the margin is for float32).
MAX_LANCZOS_STEPS = 1000
#: Arnoldi basis size (as ``numerics.statistics.ARNOLDI_VECTORS``).
ARNOLDI_VECTORS = 40
#: Most Krylov-Schur restarts.
MAX_RESTARTS = 500
#: Rows per block when a Gram matrix's Frobenius norm is accumulated.
GRAM_BLOCK = 4096


def lanczos_tol(dtype: str) -> float:
    """Relative residual at which a Ritz value is accepted: 1e-10 (float64), 1e-5 (float32)."""
    return 1e-10 if dtype == "float64" else 1e-5


def _ns(x):
    from array_api_compat import array_namespace

    return array_namespace(x)


def _start(xp, n: int, like):
    from array_api_compat import device

    v = 1.0 + xp.sin(xp.arange(n, dtype=like.dtype, device=device(like)))
    return v / xp.linalg.vector_norm(v)


def _exp_inplace(xp, M):
    if hasattr(M, "exp_"):  # torch: no second T x T buffer
        return M.exp_()
    return xp.exp(M)


def softmax_markov(backend: Backend, rng: np.random.Generator, T: int, mu: float, s2: float):
    """``A = softmax_rows(M)``, ``M_ij ~ N(mu, s2)``, drawn by the backend's own stream
    (seeded from ``rng``), shifted by the row maximum (no overflow), ``O(T^2)``."""
    M = backend.generator(rng).normal((T, T), mean=mu, std=math.sqrt(s2))
    xp = _ns(M)
    M -= xp.max(M, axis=1, keepdims=True)
    M = _exp_inplace(xp, M)
    M /= xp.sum(M, axis=1, keepdims=True)
    return M


def _scalar(x) -> float:
    return float(x)


def top_singular_values(shape: tuple[int, int], mv: Callable, rmv: Callable, like, k: int,
                        tol: float, max_steps: int = MAX_LANCZOS_STEPS) -> np.ndarray:
    """The ``k`` largest singular values (descending, a numpy array) of the operator
    ``x -> mv(x)`` (``m x n``), ``rmv`` its transpose, by Golub-Kahan-Lanczos with full
    reorthogonalisation; ``like`` an array of the backend, dtype and device to work in.
    Raises ``RuntimeError`` when ``max_steps`` steps do not reach ``tol``."""
    xp = _ns(like)
    m, n = shape
    steps = min(max_steps, m, n)
    from array_api_compat import device

    dev = device(like)
    U = xp.zeros((m, steps), dtype=like.dtype, device=dev)
    V = xp.zeros((n, steps + 1), dtype=like.dtype, device=dev)
    v = _start(xp, n, like)
    V[:, 0] = v
    alphas: list[float] = []
    betas: list[float] = []
    u_prev, beta = None, 0.0
    s = np.zeros(0)
    for j in range(steps):
        u = mv(v)
        if u_prev is not None:
            u = u - beta * u_prev
        if j:
            for _ in range(2):  # classical Gram-Schmidt twice
                Uj = U[:, :j]
                u = u - Uj @ (Uj.T @ u)
        alpha = _scalar(xp.linalg.vector_norm(u))
        if alpha == 0.0:
            break
        u = u / alpha
        U[:, j] = u
        w = rmv(u) - alpha * v
        for _ in range(2):
            Vj = V[:, :j + 1]
            w = w - Vj @ (Vj.T @ w)
        beta = _scalar(xp.linalg.vector_norm(w))
        alphas.append(alpha)
        betas.append(beta)
        done = j + 1 == steps
        if j + 1 >= k and ((j + 1) % 10 == 0 or done or beta == 0.0):
            B = np.diag(alphas) + np.diag(betas[:-1], 1)  # upper bidiagonal
            P, s, _ = np.linalg.svd(B)
            residual = np.abs(beta * P[-1, :k])
            if np.all(residual <= tol * s[0]) or beta == 0.0 or (done and j + 1 == min(m, n)):
                return s[:k].copy()
        if beta == 0.0:
            break
        v = w / beta
        V[:, j + 1] = v
        u_prev = u
    if len(s) >= k and len(alphas) == min(m, n):
        return s[:k].copy()
    raise RuntimeError(f"Golub-Kahan-Lanczos did not reach relative residual {tol:g} in "
                       f"{len(alphas)} steps")


def matrix_singular_values(X, k: int, tol: float) -> np.ndarray:
    """The ``k`` largest singular values of a backend matrix ``X``."""
    if min(X.shape) <= 16:
        xp = _ns(X)
        return np.asarray(_to_host(xp.linalg.svdvals(X)), dtype=float)[:k]
    return top_singular_values(tuple(X.shape), lambda x: X @ x, lambda y: X.T @ y, X, k, tol)


def _to_host(x) -> np.ndarray:
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    if hasattr(x, "get"):
        return x.get()
    return np.asarray(x)


def top_eigenvalues(A, k: int = 2, tol: float = 1e-10, ncv: int = ARNOLDI_VECTORS,
                    max_restarts: int = MAX_RESTARTS) -> np.ndarray:
    """The ``k`` eigenvalues of largest modulus of a square backend matrix (complex numpy
    array, by modulus descending): Krylov-Schur restarted Arnoldi, ``ncv`` vectors."""
    xp = _ns(A)
    n = A.shape[0]
    if n <= 16 or k >= n - 2:
        ev = np.linalg.eigvals(_to_host(A).astype(float))
        return ev[np.argsort(-np.abs(ev))][:k]
    from array_api_compat import device

    m = min(n - 1, ncv)
    Q = xp.zeros((n, m + 1), dtype=A.dtype, device=device(A))
    Q[:, 0] = _start(xp, n, A)
    H = np.zeros((m + 1, m))
    p = 0
    keep = k + (m - k) // 2
    for _ in range(max_restarts):
        for j in range(p, m):
            w = A @ Q[:, j]
            Qj = Q[:, :j + 1]
            h = np.zeros(j + 1)
            for _ in range(2):  # classical Gram-Schmidt twice
                c = Qj.T @ w
                w = w - Qj @ c
                h += _to_host(c).astype(float)
            H[:j + 1, j] = h
            beta = _scalar(xp.linalg.vector_norm(w))
            H[j + 1, j] = beta
            if beta == 0.0:
                raise RuntimeError("Arnoldi breakdown (invariant subspace); not expected for "
                                   "a random matrix")
            Q[:, j + 1] = w / beta
        Hm, r = H[:m, :m].copy(), H[m, :m].copy()
        vals, Y = np.linalg.eig(Hm)
        order = np.argsort(-np.abs(vals))
        residual = np.abs(r @ Y)  # columns of Y have unit norm
        want = order[:k]
        if np.all(residual[want] <= tol * np.abs(vals[want])):
            return vals[want]
        S, Z, p = _sorted_schur(Hm, np.abs(vals[order]), keep)
        if p >= m:  # keep at most m - 1 vectors
            p = m - 1
        Zp = xp.asarray(Z[:, :p].astype(_np_dtype(A)), device=device(A))
        Q[:, :p] = Q[:, :m] @ Zp
        Q[:, p] = Q[:, m]
        H[:] = 0.0
        H[:p, :p] = S[:p, :p]
        H[p, :p] = r @ Z[:, :p]
    raise RuntimeError(f"Krylov-Schur did not reach relative residual {tol:g} in "
                       f"{max_restarts} restarts")


def _sorted_schur(Hm: np.ndarray, mods: np.ndarray, keep: int):
    """Real Schur form of ``Hm`` with about ``keep`` eigenvalues of largest modulus first:
    the cut is put in the widest gap of the moduli among the few after ``keep`` (never
    between a conjugate pair, whose moduli are equal), at its middle, so that round-off in
    the reordering cannot move an eigenvalue across it (LAPACK's ``info = n + 2``)."""
    cuts = sorted(range(keep, min(keep + 6, len(mods) - 1)),
                  key=lambda c: mods[c] - mods[c - 1])  # widest gap first (most negative)
    for c in cuts:
        threshold = 0.5 * (mods[c - 1] + mods[c])
        try:
            return sla.schur(Hm, output="real",
                             sort=lambda re, im: math.hypot(re, im) >= threshold)
        except np.linalg.LinAlgError:
            continue
    raise RuntimeError("Krylov-Schur: no cut of the Ritz values survives the Schur reordering")


def _np_dtype(x) -> str:
    return "float32" if "float32" in str(x.dtype) else "float64"


def frobenius_sq(M) -> float:
    """``||M||_F^2`` (``vector_norm`` of the flattened array: no second ``T x d`` buffer)."""
    xp = _ns(M)
    return _scalar(xp.linalg.vector_norm(M)) ** 2


def _gram_frobenius_sq(X) -> float:
    """``||X X^T||_F^2`` over row blocks (no ``T x T`` Gram matrix; ``O(T^2 d)``)."""
    xp = _ns(X)
    total = 0.0
    for i in range(0, X.shape[0], GRAM_BLOCK):
        G = X[i:i + GRAM_BLOCK, :] @ X.T
        total += _scalar(xp.linalg.vector_norm(G)) ** 2
    return total


def _stable_ranks(X, tol: float, edge: bool = False) -> tuple[float, ...]:
    """``(sr(X), sr(X X^T))`` from one top singular value (as ``statistics.stable_ranks``);
    ``X`` has at most as many rows as columns here (``d >= T``). ``edge=True`` also reads
    both through the edge from the top ``EDGE_K`` values (as ``edge.edge_stable_ranks``)."""
    top = matrix_singular_values(X, EDGE_K if edge else 1, tol)
    G = _gram_frobenius_sq(X) if X.shape[0] <= X.shape[1] else _gram_frobenius_sq(X.T)
    frob, s1 = frobenius_sq(X), float(top[0])
    if not edge:
        return frob / s1**2, G / s1**4
    x_star = tracy_widom_edge(top)
    return frob / s1**2, G / s1**4, frob / x_star, G / x_star**2


def _backend_params(p: Mapping[str, object]) -> Backend:
    if p.get("entries") is not None:
        raise ValueError("parameter '--backend': entry laws (--entries) are sampled by the "
                         "numpy path only")
    b = backend_of(p)
    if b.name == "torch" and b.device == "cpu":
        # the runner's policy (verification.running.runner.task_limits): one BLAS thread per task,
        # so the numbers do not depend on --workers
        b.lib.set_num_threads(1)
    return b


def outliers(rng: np.random.Generator, T: int, p: Mapping[str, object]) -> dict:
    r"""``markov.outliers`` on the backend: :math:`\lambda_1`, :math:`s_1`,
    :math:`\sqrt T s_2`, :math:`\sqrt T|\lambda_2|` of :math:`A` and its ratio to the
    spectral radius of a real Ginibre matrix drawn after it on the backend's stream (every
    key of the numpy path), plus ``dtype_eps`` and ``lanczos_tol`` (what the exact check of
    :math:`\lambda_1` scales its round-off tolerance by)."""
    b = _backend_params(p)
    tol = lanczos_tol(b.dtype)
    A = softmax_markov(b, rng, T, float(p["mu"]), float(p["s2"]))
    out = outlier_measurement(matrix_singular_values(A, 2, tol), top_eigenvalues(A, 2, tol), T)
    del A  # G after A, not beside it: one T x T matrix on the device at a time
    G = b.generator(rng).normal((T, T), std=1.0 / math.sqrt(T))  # G_ij ~ N(0, 1/T)
    rho = float(abs(top_eigenvalues(G, 3, tol)[0]))  # three: a conjugate pair and the next
    del G
    # the numpy path's keys, and what the exact check of lambda1 scales its tolerance by
    return {**out, **ginibre_ratio(out["sqrtT_lambda2"], rho),
            "dtype_eps": b.eps, "lanczos_tol": tol}


def width_stable_rank(rng: np.random.Generator, T: int, p: Mapping[str, object]) -> dict:
    r"""``width.stable_rank`` on the backend, every key of the numpy path:
    :math:`Y \sim X_0 W_1` (``T x d`` i.i.d. :math:`N(0, \sigma_V^2)`), :math:`X_1 = AY`,
    :math:`X_1^\perp = X_1 - \mathbf 1 \bar Y` (in place), :math:`A^\perp` as an operator
    (:math:`A^\perp x = Ax - \mathbf 1 (\mathbf 1^\top x)/T`, never formed) with
    :math:`\|A^\perp\|_F^2 = \|A\|_F^2 - 2\,\mathrm{sum}(A)/T + 1`."""
    from gapverify.numerics.common import width_of

    b = _backend_params(p)
    tol = lanczos_tol(b.dtype)
    d = width_of(T, float(p["gamma"]))
    A = softmax_markov(b, rng, T, float(p["mu"]), float(p["s2"]))
    xp = _ns(A)
    Y = b.generator(rng).normal((T, d), std=float(p["sigma_V"]))
    X1 = A @ Y
    y_mean = xp.mean(Y, axis=0, keepdims=True)
    del Y
    sr_X1, sr_Sigma1 = _stable_ranks(X1, tol)
    X1 -= y_mean  # Aperp Y = A Y - 1 (1^T Y) / T
    sr_X1perp, sr_Sigma1perp, edge_X1perp, edge_Sigma1perp = _stable_ranks(X1, tol, edge=True)
    del X1
    frob_A = frobenius_sq(A)
    s1_A = float(matrix_singular_values(A, 1, tol)[0])

    top_perp = perp_singular_values(A, EDGE_K, tol)
    s1_perp = float(top_perp[0])
    frob_perp = frob_A - 2.0 * _scalar(xp.sum(A)) / T + 1.0
    return {
        "sr_A": frob_A / s1_A**2,
        "sr_X1": sr_X1,
        "sr_Sigma1": sr_Sigma1,
        "sr_Aperp_over_T": frob_perp / s1_perp**2 / T,
        "sr_X1perp_over_T": sr_X1perp / T,
        "sr_Sigma1perp_over_T": sr_Sigma1perp / T,
        "sr_Aperp_edge_over_T": frob_perp / tracy_widom_edge(top_perp) / T,
        "sr_X1perp_edge_over_T": edge_X1perp / T,
        "sr_Sigma1perp_edge_over_T": edge_Sigma1perp / T,
        "m2_ratio_X1perp": moment_ratio(sr_X1perp / T, sr_Sigma1perp / T),  # -> m2/m1^2
    }


def perp_singular_values(A, k: int, tol: float) -> np.ndarray:
    r"""The ``k`` largest singular values of :math:`A^\perp = A - \mathbf 1\mathbf 1^\top/T`
    through the operator :math:`x \mapsto Ax - \mathbf 1(\mathbf 1^\top x)/T` and its
    transpose (``O(T^2)`` a step, :math:`A^\perp` never formed; formed for ``T <= 16``)."""
    xp = _ns(A)
    T = A.shape[0]
    if T <= 16:
        return matrix_singular_values(A - 1.0 / T, k, tol)
    return top_singular_values((T, T), lambda x: A @ x - xp.sum(x) / T,  # Aperp x
                               lambda y: A.T @ y - xp.sum(y) / T, A, k, tol)  # Aperp^T y


def _perp_frobenius_and_max(A, block: int = 512) -> tuple[float, float]:
    r""":math:`\|A^\perp\|_F^2` and :math:`\max_{ij}|A_{ij} - 1/T|`, accumulated in float64 over
    row blocks (a float32 sum of ``T^2`` squares would lose digits; no ``T x T`` copy)."""
    xp = _ns(A)
    T = A.shape[0]
    frob, top = 0.0, 0.0
    for i in range(0, T, block):
        B = xp.astype(A[i:i + block, :], xp.float64) - 1.0 / T  # rows of Aperp = A - 11^T/T
        frob += _scalar(xp.sum(B * B))
        top = max(top, _scalar(xp.max(xp.abs(B))))
    return frob, top


def bulk_edge(rng: np.random.Generator, T: int, p: Mapping[str, object]) -> dict:
    r"""The edge statistics of one softmax Markov matrix at large ``T``, ``O(T^2)`` memory and
    work per Lanczos step: what the ``long`` profile of ``markov.outliers``, ``fix.spectrum``
    and ``width.stable_rank`` judges, all from one draw (their tasks are shared).

    * :math:`s_1(A)` and :math:`\sqrt T s_2(A)`: Golub-Kahan-Lanczos on :math:`A`, ``k = 2``;
    * :math:`\sqrt T s_1(A^\perp)` and the top ``EDGE_K`` singular values of :math:`A^\perp`
      as an operator, :math:`A^\perp x = Ax - \mathbf 1(\mathbf 1^\top x)/T` (never formed);
    * :math:`\mathrm{sr}(A^\perp)/T = \|A^\perp\|_F^2/(T s_1^2)`, and read through the edge
      (:func:`numerics.edge.tracy_widom_edge`);
    * ``max_entry_Aperp`` :math:`= \sqrt T \max|A_{ij} - 1/T|`, the largest entry ``a_T`` whose
      spike :math:`a + \kappa^2/a` (:mod:`theory.spike_edge`) lifts the edge while ``a > kappa``.

    Sampled in **float32** unless the parameters name a backend (``--backend``): a Ritz
    value is accepted at residual ``1e-5 s_1`` (:func:`lanczos_tol`), which bounds the error
    of :math:`\sqrt T s_2(A)` by :math:`10^{-5}\sqrt T s_1(A)` (0.0013 at ``T = 16384``,
    0.06% of ``2 kappa = 2``) and of :math:`s_1(A^\perp)` by ``1e-5`` relative; the entries'
    own rounding (``T eps_32`` on a row sum) is smaller still. Frobenius norms accumulate in
    float64. Peak memory: ``A`` (``4 T^2`` bytes) and the normal draws' buffer."""
    if p.get("entries") is not None:
        raise ValueError("parameter '--entries': the long profile's experiment (markov.edge) "
                         "samples softmax entries only; run the quick or standard profile")
    b = _backend_params(p if "backend" in p else {**p, "dtype": "float32"})
    tol = lanczos_tol(b.dtype)
    A = softmax_markov(b, rng, T, float(p["mu"]), float(p["s2"]))
    s = matrix_singular_values(A, 2, tol)
    frob_perp, max_perp = _perp_frobenius_and_max(A)
    top_perp = perp_singular_values(A, EDGE_K, tol)
    root = math.sqrt(T)
    return {
        "s1": float(s[0]),
        "sqrtT_s2": float(s[1]) * root,
        "sqrtT_s1_Aperp": float(top_perp[0]) * root,
        "sr_Aperp_over_T": frob_perp / float(top_perp[0]) ** 2 / T,
        "sr_Aperp_edge_over_T": frob_perp / tracy_widom_edge(top_perp) / T,
        "max_entry_Aperp": max_perp * root,
        "dtype_eps": b.eps, "lanczos_tol": tol,
    }


EXPERIMENTS = {"markov.outliers": outliers, "width.stable_rank": width_stable_rank,
               "markov.edge": bulk_edge}
