r"""Row blocks of a sampled matrix, each drawn from its own stream: the numbers of a draw
do not depend on the thread count.

A matrix of more than :data:`BLOCK_ROWS` rows is filled block by block; block ``b`` from
``rng.spawn(n_blocks)[b]`` (``Generator.spawn``, numpy's "Multithreaded generation"
recipe), in a pool of :func:`sampling_threads` threads (numpy releases the GIL while it
fills an array). The number of blocks depends on the shape only. numpy only: the entry
laws (:mod:`theory.entry_laws`) sample with it, and :mod:`numerics.samplers` re-exports it.

References
----------
.. [1] numpy, "Multithreaded generation", https://numpy.org/doc/stable/reference/random/multithreading.html
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np

__all__ = ["BLOCK_ROWS", "sampling_threads", "set_sampling_threads", "fill_blocks",
           "softmax_rows_inplace"]

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


def softmax_rows_inplace(M: np.ndarray) -> None:
    """Row-wise softmax overwriting ``M`` (one ``T^2`` buffer, not two):
    ``M_ij <- exp(M_ij - max_k M_ik) / sum_l exp(M_il - max_k M_ik)``, ``O(T^2)``."""
    M -= M.max(axis=-1, keepdims=True)
    np.exp(M, out=M)
    M /= M.sum(axis=-1, keepdims=True)
