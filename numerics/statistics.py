r"""Spectral statistics of sampled matrices, each computed no more expensively than needed.

A stable rank :math:`\mathrm{sr}(M) = \|M\|_F^2/\|M\|_2^2` needs one Frobenius norm
(:math:`O(mn)`) and the top singular value, found by ARPACK's implicitly restarted Lanczos
(:func:`scipy.sparse.linalg.svds`, :math:`O(mn\,k)` for :math:`k` matrix-vector products),
never by a full SVD (:math:`O(mn\min(m,n))`); where the Gram matrix :math:`XX^\top` is
built anyway (:func:`stable_ranks`), the Lanczos runs on it. Full spectra are computed
only for the law claims, with LAPACK's values-only drivers. scipy's linear algebra is
imported on first use: the claim registry reads :data:`LANCZOS_TOL` from here without
sampling anything.

References
----------
.. [1] R. B. Lehoucq, D. C. Sorensen, C. Yang, "ARPACK Users' Guide", SIAM 1998.
.. [2] M. Rudelson, R. Vershynin, "Sampling from large matrices: an approach through
   geometric functional analysis", J. ACM 54 (2007) (stable rank).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = [
    "outlier_measurement",
    "ginibre_ratio",
    "frobenius_sq",
    "top_singular_values",
    "stable_rank",
    "gram_stable_rank",
    "stable_ranks",
    "gram",
    "top_singular_values_by_gram",
    "moment_ratio",
    "singular_values",
    "eigenvalues",
    "top_eigenvalues",
    "LANCZOS_TOL",
    "interruptible",
]

#: Relative accuracy asked of ARPACK; far below every statistical tolerance of the suite.
LANCZOS_TOL = 1e-10
#: Most Lanczos steps PROPACK may take (its default, 10 k, is too few at the bulk edge).
PROPACK_MAXITER = 600
#: Arnoldi basis size for the top eigenvalues (ARPACK's default is max(2k + 1, 20)).
ARNOLDI_VECTORS = 40
#: Below this many rows (or columns), LAPACK's full values are cheaper than a Krylov
#: solve's set-up and Python-level products: at 64 x 64, svdvals 0.22 ms against 0.56 ms
#: for PROPACK's top two, eigvals 0.8 ms against 3.6 ms for ARPACK's; at 1024 x 64,
#: 1.4 ms against 3.6 ms; even at 91, 0.44 against 0.59 ms and 2.4 against 2.4 ms
#: (one thread, 2026-12-03). The values are the same to LANCZOS_TOL.
DENSE_BELOW = 96


def frobenius_sq(M: np.ndarray) -> float:
    """:math:`\\|M\\|_F^2 = \\sum_{ij} M_{ij}^2`, ``O(mn)``."""
    flat = M.ravel()
    return float(flat @ flat)


def _start_vector(M: np.ndarray) -> np.ndarray:
    # deterministic ARPACK start vector v_i = 1 + sin(i): not orthogonal to the Perron
    # direction 1, nor inside the kernel of Aperp (Aperp 1 = 0), and no hidden RNG state
    n = min(M.shape)
    v = 1.0 + np.sin(np.arange(n))
    return v / np.linalg.norm(v)


def _interrupt_in(exc: BaseException) -> KeyboardInterrupt | None:
    """The ``KeyboardInterrupt`` (SIGINT, or a run's SIGTERM) in ``exc``'s chain of
    causes, if any."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def interruptible(call, *args, **kwargs):
    """``call(*args, **kwargs)`` with a ``SystemError`` that an interrupt caused (a native
    routine reporting a callback's ``KeyboardInterrupt`` as "returned a result with an
    exception set") raised as the interrupt itself. (ARPACK is driven from Python by
    reverse communication: its interrupt arrives as it is; PROPACK is run by
    :func:`_propack`, which never lets one reach it.)"""
    try:
        return call(*args, **kwargs)
    except SystemError as exc:
        interrupt = _interrupt_in(exc)
        if interrupt is None:
            raise
        raise interrupt.with_traceback(None) from None


class _Deferred:
    """While PROPACK runs (its Fortran calls the matrix-vector products back), a SIGINT or
    SIGTERM whose handler is Python's (Ctrl-C's ``KeyboardInterrupt``, a run's
    ``Terminated``) is noted instead of raised: an exception raised inside the callback
    reached PROPACK, which went on calling back with it set and ended in ``SystemError:
    <built-in function dlansvd> returned a result with an exception set`` or an unrelated
    ``AttributeError``. The products return zeros from then on (PROPACK then ends within
    0.05 s at ``T = 8192``, measured, where the solve takes 5 to 9 s), and on leaving the
    signal is raised again, to its own handler. Main thread only (elsewhere a signal has
    no Python handler to defer)."""

    def __init__(self) -> None:
        self.signals: list[int] = []
        self._old: dict = {}

    def __enter__(self) -> "_Deferred":
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                old = signal.getsignal(sig)
                if callable(old):
                    self._old[sig] = old
                    signal.signal(sig, self._note)
        return self

    def _note(self, signum, frame) -> None:
        self.signals.append(signum)

    def __exit__(self, *exc) -> bool:
        import signal

        for sig, old in self._old.items():
            signal.signal(sig, old)
        if self.signals:
            signal.raise_signal(self.signals[0])  # its handler raises, here
        return False

    def operator(self, M: np.ndarray):
        """``M`` as PROPACK's operator: the very products scipy makes of an array
        (:func:`scipy.sparse.linalg.aslinearoperator`: the same numbers, bit for bit),
        zeros once a signal is noted; ``M`` itself where no signal is deferred."""
        if not self._old:
            return M
        from scipy.sparse.linalg import LinearOperator, aslinearoperator

        op, noted = aslinearoperator(M), self.signals

        class Stoppable(LinearOperator):
            def _matvec(self, x):
                return np.zeros(self.shape[0], dtype=self.dtype) if noted else op.matvec(x)

            def _rmatvec(self, x):
                return np.zeros(self.shape[1], dtype=self.dtype) if noted else op.rmatvec(x)

        return Stoppable(dtype=M.dtype, shape=M.shape)


def _propack(M: np.ndarray, k: int) -> np.ndarray:
    """PROPACK's ``k`` top singular values of ``M``, a signal deferred (:class:`_Deferred`)."""
    from scipy.sparse.linalg import svds

    with _Deferred() as deferred:
        return svds(deferred.operator(M), k=k, tol=LANCZOS_TOL, solver="propack",
                    maxiter=PROPACK_MAXITER, v0=_start_vector(M.T),
                    return_singular_vectors=False)


def top_singular_values(M: np.ndarray, k: int = 1) -> np.ndarray:
    """The ``k`` largest singular values, descending; Lanczos, ``O(mn)`` per iteration.

    LAPACK's values when ``k`` is not small against ``min(M.shape)`` (ARPACK needs
    ``k < min(m, n)``) or the matrix is small (:data:`DENSE_BELOW`).
    """
    from scipy import linalg
    from scipy.sparse.linalg import svds

    if k >= min(M.shape) - 1 or min(M.shape) < DENSE_BELOW:
        return linalg.svdvals(M)[:k]
    try:
        # PROPACK's Golub-Kahan bidiagonalisation (partial reorthogonalisation): the same
        # values as ARPACK's Lanczos on M^T M to LANCZOS_TOL, 2 to 3x fewer passes over M
        # at the clustered bulk edge (s_2(A), s_1(Aperp)); measured at T = 2048
        s = _propack(M, k)
    except (np.linalg.LinAlgError, ValueError):
        s = interruptible(svds, M, k=k, tol=LANCZOS_TOL, v0=_start_vector(M),
                          return_singular_vectors=False)
    return np.sort(s)[::-1]


def stable_rank(M: np.ndarray) -> float:
    """:math:`\\mathrm{sr}(M) = \\|M\\|_F^2 / s_1(M)^2`."""
    s1 = top_singular_values(M, 1)[0]
    return frobenius_sq(M) / s1**2


def gram(X: np.ndarray) -> np.ndarray:
    r"""The smaller of :math:`XX^\top` and :math:`X^\top X` (``min(m, n)`` square, the
    nonzero eigenvalues :math:`s_i(X)^2`); ``O(mn min(m, n))``, half of it by symmetry
    (BLAS ``syrk``)."""
    return X @ X.T if X.shape[0] <= X.shape[1] else X.T @ X


def top_singular_values_by_gram(G: np.ndarray, k: int = 1) -> np.ndarray:
    r"""The ``k`` largest singular values of ``X`` from its Gram matrix ``G``
    (:func:`gram`): :math:`s_i(X) = \sqrt{\lambda_i(G)}`, :math:`\lambda_i(G) = s_i(G)` for
    ``G`` positive semi-definite. Lanczos on ``G`` costs ``2 min(m, n)^2`` a step against
    ``2mn`` on ``X``, and the relative gaps of :math:`s_i^2` are twice those of :math:`s_i`:
    the top four of a depth-2 network's :math:`X_2^\perp` at ``T = 724``, ``d = 1448`` in
    9 ms against 24 ms, equal to 2e-15 (one thread, 2026-12-08). For callers that build
    ``G`` anyway (:func:`edge_stable_ranks <numerics.edge.edge_stable_ranks>`)."""
    return np.sqrt(top_singular_values(G, k))  # s_i(X) = sqrt(lambda_i(X X^T))


def stable_ranks(X: np.ndarray) -> tuple[float, float]:
    r"""Both stable ranks of ``X`` from one top singular value: ``(sr(X), sr(X X^T))``.

    .. math::

        \mathrm{sr}(X) = \frac{\|X\|_F^2}{s_1^2},\qquad
        \mathrm{sr}(XX^\top) = \frac{\sum_i s_i^4}{s_1^4} = \frac{\|G\|_F^2}{s_1^4},

    ``G`` the smaller of :math:`XX^\top`, :math:`X^\top X` (:func:`gram`, the same nonzero
    spectrum). ``O(mn min(m, n))`` for ``G``, then one Lanczos on ``G`` for
    :math:`s_1^2 = \lambda_1(G)` (as :func:`top_singular_values_by_gram`); no SVD.
    """
    G = gram(X)  # eigenvalues s_i^2
    s1_sq = top_singular_values(G, 1)[0]  # s_1(G) = lambda_1(G) = s_1(X)^2 (G psd)
    return frobenius_sq(X) / s1_sq, frobenius_sq(G) / s1_sq**2


def moment_ratio(sr_X_over_T: float, sr_Sigma_over_T: float) -> float:
    r"""The normalised second moment of the squared singular values of a ``T``-row
    matrix, from its two stable ranks over ``T`` (:func:`stable_ranks`):

    .. math::

        \frac{\mathrm{sr}(XX^\top)/T}{(\mathrm{sr}(X)/T)^2}
        = \frac{T\sum_i s_i^4}{\bigl(\sum_i s_i^2\bigr)^2} \to \frac{m_2}{m_1^2},

    :math:`m_k` the moments of the limiting law of :math:`s_i^2` (up to scale). The
    :math:`s_1^4` of both stable ranks cancels: a ratio of traces with no edge in it, whose
    mean expands in powers of ``1/T`` (the part of :math:`\mathrm{sr}(\Sigma)/T` that
    :math:`(\mathrm{sr}(X)/T)^2` does not carry)."""
    return sr_Sigma_over_T / sr_X_over_T**2  # T sum s^4 / (sum s^2)^2


def gram_stable_rank(X: np.ndarray) -> float:
    r"""Stable rank of :math:`\Sigma = XX^\top`: :math:`\sum_i s_i^4 / s_1^4` (:func:`stable_ranks`)."""
    return stable_ranks(X)[1]


def singular_values(M: np.ndarray) -> np.ndarray:
    """All singular values, descending (LAPACK ``gesdd`` values only, ``O(T^3)``)."""
    from scipy import linalg

    return linalg.svdvals(M, check_finite=False)


def eigenvalues(M: np.ndarray) -> np.ndarray:
    """All eigenvalues (LAPACK ``geev`` values only, ``O(T^3)``)."""
    from scipy import linalg

    return linalg.eigvals(M, check_finite=False, overwrite_a=False)


def top_eigenvalues(M: np.ndarray, k: int = 2, restarts: int | None = None) -> np.ndarray:
    """The ``k`` eigenvalues of largest modulus, by modulus descending (ARPACK ``naupd``).

    ``restarts``: at most that many implicit restarts, then LAPACK's full spectrum (the
    same values; for a spectrum whose top moduli are near-equal, where Arnoldi converges
    slowly or not at all). ``None``: ARPACK's default ``10 T``, and
    ``ArpackNoConvergence`` beyond it."""
    from scipy.sparse.linalg import ArpackNoConvergence, eigs

    if k >= M.shape[0] - 2 or M.shape[0] < DENSE_BELOW:
        ev = eigenvalues(M)
    else:
        try:
            # ncv = 40 Arnoldi vectors instead of 20: the moduli at the edge of the disc
            # are dense, and the larger basis needs ~40% fewer matrix-vector products
            # (T = 2048)
            ev = interruptible(eigs, M, k=k, which="LM", tol=LANCZOS_TOL, v0=_start_vector(M),
                               ncv=min(M.shape[0] - 1, ARNOLDI_VECTORS), maxiter=restarts,
                               return_eigenvectors=False)
        except ArpackNoConvergence:
            if restarts is None:
                raise
            ev = eigenvalues(M)
    return ev[np.argsort(-np.abs(ev))][:k]


def ginibre_ratio(sqrtT_lambda2: float, rho: float) -> dict[str, float]:
    r"""A bulk radius against a Ginibre matrix drawn with the replicate (``markov.outliers``,
    the ``variants`` claims):
    ``ginibre_rho`` :math:`= \rho(G)` and ``sqrtT_lambda2_ginibre`` :math:`= \sqrt
    T|\lambda_2(A)|/\rho(G)`. Both radii exceed their limits by :math:`\sqrt{\log T/4T}`
    (Rider 2003), a correction universal at the Gumbel scale (Cipolloni, Erdos, Xu 2023),
    so the ratio tends to :math:`\kappa` without it."""
    return {"ginibre_rho": float(rho), "sqrtT_lambda2_ginibre": float(sqrtT_lambda2) / float(rho)}


def outlier_measurement(s: "np.ndarray", lam: "np.ndarray", T: int) -> dict[str, float]:
    r"""What ``markov.outliers`` measures from the top two singular values ``s`` and the
    top two eigenvalues ``lam`` of :math:`A` (any array library: plain floats out):
    :math:`\lambda_1`, :math:`|\mathrm{Im}\,\lambda_1|`, :math:`s_1`, :math:`\sqrt T s_2`,
    :math:`\sqrt T|\lambda_2|` and :math:`s_1/s_2`."""
    root = math.sqrt(T)
    return {
        "lambda1": float(lam[0].real),
        "lambda1_imag": float(abs(lam[0].imag)),
        "s1": float(s[0]),
        "sqrtT_s2": float(s[1]) * root,
        "sqrtT_lambda2": float(abs(lam[1])) * root,
        "gap_ratio": float(s[0]) / float(s[1]),
    }
