r"""Samplers of the finite-size random matrices of the theory.

Every sampler takes a :class:`numpy.random.Generator` first; there is no global random
state. Shapes follow the paper: ``T`` tokens, ``d`` width, ``A`` is ``T x T``.

.. math::

    A = D^{-1} Z,\qquad D = \operatorname{diag}(Z \mathbf 1),\qquad
    A^\perp = A - \tfrac1T \mathbf 1 \mathbf 1^\top .

Entry laws. A law of ``Z`` is one object holding its theory and its sampler
(:mod:`theory.entry_laws`: :class:`~theory.entry_laws.GaussianLogits`,
:class:`~theory.entry_laws.Exponential`, :class:`~theory.entry_laws.ScipyLaw`); the names
below (:class:`LogNormalEntries`, :class:`ExponentialEntries`, :class:`ScipyEntries`,
:func:`entry_law`) are those classes and that factory.

Threads. Large matrices are sampled in blocks of :data:`BLOCK_ROWS` rows, each from its own
spawned stream, in a pool of :func:`sampling_threads` threads
(:mod:`theory.row_blocks`): the numbers are the same for any thread count.

References
----------
.. [1] C. Bordenave, P. Caputo, D. Chafai, "Circular law theorem for random Markov
   matrices", PTRF 152 (2012), arXiv:0808.1502.
.. [2] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap", ICML 2025, arXiv:2410.07799.
"""
from __future__ import annotations

import math

import numpy as np

from gapverify.theory.entry_laws import EntryLaw, Exponential, GaussianLogits, ScipyLaw, sampler
from gapverify.theory.row_blocks import BLOCK_ROWS, fill_blocks, sampling_threads, set_sampling_threads

__all__ = [
    "EntryLaw",
    "LogNormalEntries",
    "ExponentialEntries",
    "ScipyEntries",
    "entry_law",
    "softmax_rows",
    "markov_matrix",
    "softmax_markov_matrix",
    "remove_outlier",
    "isometric_input",
    "gaussian_matrix",
    "BLOCK_ROWS",
    "sampling_threads",
    "set_sampling_threads",
    "fill_blocks",
]

#: ``Z = exp(M)``, ``M ~ N(mu, s2)``: the softmax Markov matrix (:class:`theory.entry_laws.GaussianLogits`).
LogNormalEntries = GaussianLogits
#: ``Z ~ Exp(1)`` (:class:`theory.entry_laws.Exponential`).
ExponentialEntries = Exponential
#: Entries of a nonnegative frozen ``scipy.stats`` law (:class:`theory.entry_laws.ScipyLaw`).
ScipyEntries = ScipyLaw


def entry_law(spec: str | None = None, mu: float = -math.log(2.0) / 2,
              s2: float = math.log(2.0)) -> EntryLaw:
    """The sampler of an ``--entries`` law (:mod:`theory.entry_laws` syntax):
    ``gaussian-logits``/``lognormal`` (``None``, the default) -> :class:`LogNormalEntries`
    at ``(mu, s2)`` (``gaussian-logits(S2)`` fixes ``s2``), ``exponential`` ->
    :class:`ExponentialEntries`, ``scipy:NAME(ARGS)`` -> :class:`ScipyEntries`
    (:func:`theory.entry_laws.sampler`). Only the syntax and the scipy parameters are
    checked here (no moments computed): cheap enough for every task."""
    return sampler(spec, mu, s2)


def softmax_rows(M: np.ndarray) -> np.ndarray:
    """Row-wise softmax, shifted by the row maximum so that ``exp`` never overflows.

    ``softmax(M)_ij = exp(M_ij - max_k M_ik) / sum_l exp(M_il - max_k M_ik)``.
    Works in place on a copy; cost ``O(T^2)``.
    """
    E = M - M.max(axis=-1, keepdims=True)
    np.exp(E, out=E)
    E /= E.sum(axis=-1, keepdims=True)
    return E


def softmax_markov_matrix(rng: np.random.Generator, T: int, mu: float, s2: float) -> np.ndarray:
    """``softmax_rows(M)`` with ``M`` a ``T x T`` matrix of i.i.d. ``N(mu, s2)``."""
    return LogNormalEntries(mu=mu, s2=s2).markov(rng, T)


def markov_matrix(rng: np.random.Generator, T: int, law: EntryLaw) -> np.ndarray:
    """A ``T x T`` random Markov matrix ``D^{-1} Z`` with entries of ``law``."""
    return law.markov(rng, T)


def remove_outlier(A: np.ndarray, mean: float = 1.0) -> np.ndarray:
    r"""The fix :math:`A^\perp = A - \tfrac{\mathrm{mean}}{T}\mathbf 1\mathbf 1^\top`.

    ``mean = 1`` for a Markov matrix; ``mean = mu_phi`` for ``phi(M)/T`` attention.
    """
    T = A.shape[-1]
    return A - mean / T


def isometric_input(rng: np.random.Generator, T: int, d: int) -> np.ndarray:
    """``X0``: the first ``T`` rows of a Haar-orthogonal ``d x d`` matrix (``X0 X0^T = I_T``).

    Sampled as the transposed Q factor of a ``d x T`` Gaussian matrix with the signs of
    ``diag(R)`` absorbed (Mezzadri's recipe), which is Haar on the Stiefel manifold;
    cost ``O(d T^2)``.
    """
    if T > d:
        raise ValueError(f"parameter 'T' must be <= d for an isometric input, got T={T}, d={d}")
    G = gaussian_matrix(rng, d, T)
    Q, R = np.linalg.qr(G)
    Q *= np.sign(np.diag(R))
    return Q.T.copy()


def gaussian_matrix(rng: np.random.Generator, rows: int, cols: int, std: float = 1.0) -> np.ndarray:
    """A ``rows x cols`` matrix of i.i.d. ``N(0, std^2)`` entries (value or key/query
    weights), sampled in threaded blocks (:func:`fill_blocks`)."""
    def fill(g: np.random.Generator, block: np.ndarray) -> None:
        g.standard_normal(out=block)
        block *= std  # N(0, std^2)

    return fill_blocks(rng, (rows, cols), fill)


def lognormal_entry_moments(mu: float, s2: float) -> tuple[float, float]:
    """Mean and variance of ``exp(N(mu, s2))`` via ``scipy.stats.lognorm`` (a numerical cross-check)."""
    from scipy import stats

    dist = stats.lognorm(s=math.sqrt(s2), scale=math.exp(mu))
    return float(dist.mean()), float(dist.var())
