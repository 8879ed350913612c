r"""Samplers of the finite-size random matrices of the theory.

Every sampler takes a :class:`numpy.random.Generator` first; there is no global random
state. Shapes follow THEORY.md: ``T`` tokens, ``d`` width, ``A`` is ``T x T``.

.. math::

    A = D^{-1} Z,\qquad D = \operatorname{diag}(Z \mathbf 1),\qquad
    A^\perp = A - \tfrac1T \mathbf 1 \mathbf 1^\top .

References
----------
.. [1] C. Bordenave, P. Caputo, D. Chafai, "Circular law theorem for random Markov
   matrices", PTRF 152 (2012), arXiv:0808.1502.
.. [2] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap", ICML 2025, arXiv:2410.07799.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

__all__ = [
    "EntryLaw",
    "LogNormalEntries",
    "ExponentialEntries",
    "ScipyEntries",
    "softmax_rows",
    "markov_matrix",
    "softmax_markov_matrix",
    "remove_outlier",
    "isometric_input",
    "gaussian_matrix",
]


@dataclass(frozen=True)
class EntryLaw:
    """Law of the i.i.d. nonnegative entries ``Z_ij`` of a random Markov matrix."""

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError

    def markov(self, rng: np.random.Generator, T: int) -> np.ndarray:
        """``A = D^{-1} Z`` for a ``T x T`` matrix ``Z`` of entries of this law."""
        Z = self.sample(rng, (T, T))
        # A_ij = Z_ij / sum_k Z_ik
        Z /= Z.sum(axis=1, keepdims=True)
        return Z


@dataclass(frozen=True)
class LogNormalEntries(EntryLaw):
    r"""``Z = exp(M)``, ``M ~ N(mu, s2)``: the softmax Markov matrix.

    The Markov matrix is sampled as ``softmax_rows(M)``, which never overflows.
    :math:`\kappa^2 = e^{s^2} - 1` (``theory.softmax``).
    """

    mu: float = -math.log(2.0) / 2
    s2: float = math.log(2.0)

    def logits(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        # M_ij ~ N(mu, s2)
        return rng.normal(self.mu, math.sqrt(self.s2), size=shape)

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return np.exp(self.logits(rng, shape))

    def markov(self, rng: np.random.Generator, T: int) -> np.ndarray:
        return softmax_rows(self.logits(rng, (T, T)))


@dataclass(frozen=True)
class ExponentialEntries(EntryLaw):
    """``Z ~ Exp(1)``: each row of ``A`` is Dirichlet(1, ..., 1); ``kappa = 1``."""

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return rng.standard_exponential(size=shape)


@dataclass(frozen=True)
class ScipyEntries(EntryLaw):
    """Entries from any nonnegative ``scipy.stats`` frozen distribution."""

    dist: Any = None

    def __post_init__(self) -> None:
        if self.dist is None or not hasattr(self.dist, "rvs"):
            raise ValueError("parameter 'dist' must be a frozen scipy.stats distribution")
        if self.dist.support()[0] < 0:
            raise ValueError(
                f"parameter 'dist' must be supported on [0, inf), got support {self.dist.support()}"
            )

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return np.asarray(self.dist.rvs(size=shape, random_state=rng), dtype=float)


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
    G = rng.standard_normal((d, T))
    Q, R = np.linalg.qr(G)
    Q *= np.sign(np.diag(R))
    return Q.T.copy()


def gaussian_matrix(rng: np.random.Generator, rows: int, cols: int, std: float = 1.0) -> np.ndarray:
    """A ``rows x cols`` matrix of i.i.d. ``N(0, std^2)`` entries (value or key/query weights)."""
    return rng.normal(0.0, std, size=(rows, cols))


def lognormal_entry_moments(mu: float, s2: float) -> tuple[float, float]:
    """Mean and variance of ``exp(N(mu, s2))`` via ``scipy.stats.lognorm`` (a numerical cross-check)."""
    dist = stats.lognorm(s=math.sqrt(s2), scale=math.exp(mu))
    return float(dist.mean()), float(dist.var())
