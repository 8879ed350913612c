r"""Samplers of the finite-size random matrices of the theory.

Every sampler takes a :class:`numpy.random.Generator` first; there is no global random
state. Shapes follow the paper: ``T`` tokens, ``d`` width, ``A`` is ``T x T``.

.. math::

    A = D^{-1} Z,\qquad D = \operatorname{diag}(Z \mathbf 1),\qquad
    A^\perp = A - \tfrac1T \mathbf 1 \mathbf 1^\top .

Threads. Large matrices are sampled in blocks of :data:`BLOCK_ROWS` rows; block ``b`` is
filled from its own stream, the ``b``-th child spawned from the task's generator
(``Generator.spawn``, numpy's "Multithreaded generation" recipe), in a thread pool of
:func:`sampling_threads` threads (numpy releases the GIL while it fills an array). The
number of blocks depends on the shape only, so the numbers are the same for any thread
count.

References
----------
.. [1] C. Bordenave, P. Caputo, D. Chafai, "Circular law theorem for random Markov
   matrices", PTRF 152 (2012), arXiv:0808.1502.
.. [2] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap", ICML 2025, arXiv:2410.07799.
"""
from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy import stats

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

#: Rows per independently seeded block of a sampled matrix (fixed: the numbers must not
#: depend on the thread count). T = 4096 is 8 blocks of 16 MiB, T = 16384 is 32.
BLOCK_ROWS = 512

_threads = threading.local()


def sampling_threads() -> int:
    """Threads this thread's samplers use (1 unless :func:`set_sampling_threads` said more)."""
    return getattr(_threads, "n", 1)


def set_sampling_threads(n: int) -> None:
    """Threads for the samplers called from this thread; the runner sets it per task."""
    if int(n) < 1:
        raise ValueError(f"parameter 'threads' must be an integer >= 1, got {n!r}")
    _threads.n = int(n)


def fill_blocks(rng: np.random.Generator, shape: tuple[int, ...],
                fill: Callable[[np.random.Generator, np.ndarray], None]) -> np.ndarray:
    """A new array of ``shape`` whose row block ``b`` is ``fill(child_b, out[block b])``,
    ``child_b = rng.spawn(n_blocks)[b]``, blocks filled by :func:`sampling_threads` threads.
    An array of one block (at most :data:`BLOCK_ROWS` rows) is filled from ``rng`` itself,
    as an unblocked sampler would.

    ``fill`` works in place on its block (e.g. ``g.standard_normal(out=block)``); cost
    ``O(prod(shape))`` split evenly over the threads.
    """
    out = np.empty(shape)
    rows = shape[0] if len(shape) else 1
    starts = range(0, max(rows, 1), BLOCK_ROWS)
    children = rng.spawn(len(starts)) if len(starts) > 1 else [rng]
    jobs = [(g, out[i:i + BLOCK_ROWS]) for g, i in zip(children, starts)]
    threads = min(sampling_threads(), len(jobs))
    if threads <= 1:
        for g, block in jobs:
            fill(g, block)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda job: fill(*job), jobs))  # list(): re-raise a block's error
    return out


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

    def _fill_logits(self, g: np.random.Generator, block: np.ndarray) -> None:
        # M_ij = mu + sqrt(s2) N(0, 1), in place
        g.standard_normal(out=block)
        block *= math.sqrt(self.s2)
        block += self.mu

    def logits(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """``M_ij ~ N(mu, s2)``, sampled in threaded blocks (:func:`fill_blocks`)."""
        return fill_blocks(rng, shape, self._fill_logits)

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return np.exp(self.logits(rng, shape))

    def markov(self, rng: np.random.Generator, T: int) -> np.ndarray:
        """``softmax_rows(M)``: each block of rows is drawn and normalised in its own
        thread (rows are independent), ``O(T^2)`` split over the threads."""
        def fill(g: np.random.Generator, block: np.ndarray) -> None:
            self._fill_logits(g, block)
            _softmax_rows_inplace(block)

        return fill_blocks(rng, (T, T), fill)


@dataclass(frozen=True)
class ExponentialEntries(EntryLaw):
    """``Z ~ Exp(1)``: each row of ``A`` is Dirichlet(1, ..., 1); ``kappa = 1``."""

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return fill_blocks(rng, shape, lambda g, block: g.standard_exponential(out=block))


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


def entry_law(spec: str | None = None, mu: float = -math.log(2.0) / 2,
              s2: float = math.log(2.0)) -> EntryLaw:
    """The sampler of an ``--entries`` law (:mod:`theory.entry_laws` syntax):
    ``gaussian-logits``/``lognormal`` (``None``, the default) -> :class:`LogNormalEntries`
    at ``(mu, s2)`` (``gaussian-logits(S2)`` fixes ``s2``), ``exponential`` ->
    :class:`ExponentialEntries`, ``scipy:NAME(ARGS)`` -> :class:`ScipyEntries`. Only the
    syntax and the scipy parameters are checked here (no moments computed): cheap enough
    for every task."""
    from gapverify.theory.entry_laws import parse_syntax, scipy_frozen

    family, name, args, kwargs = parse_syntax(spec or "gaussian-logits")
    if family == "gaussian-logits":
        return LogNormalEntries(mu=mu, s2=args[0] if args else s2)
    if family == "exponential":
        return ExponentialEntries()
    # a frozen law of its own (not the cached one): threads of one process never share it
    return ScipyEntries(scipy_frozen.__wrapped__(name, args, kwargs))


def softmax_rows(M: np.ndarray) -> np.ndarray:
    """Row-wise softmax, shifted by the row maximum so that ``exp`` never overflows.

    ``softmax(M)_ij = exp(M_ij - max_k M_ik) / sum_l exp(M_il - max_k M_ik)``.
    Works in place on a copy; cost ``O(T^2)``.
    """
    E = M - M.max(axis=-1, keepdims=True)
    np.exp(E, out=E)
    E /= E.sum(axis=-1, keepdims=True)
    return E


def _softmax_rows_inplace(M: np.ndarray) -> None:
    # the same arithmetic as softmax_rows, overwriting M (one T^2 buffer instead of two)
    M -= M.max(axis=-1, keepdims=True)
    np.exp(M, out=M)
    M /= M.sum(axis=-1, keepdims=True)


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
    dist = stats.lognorm(s=math.sqrt(s2), scale=math.exp(mu))
    return float(dist.mean()), float(dist.var())
