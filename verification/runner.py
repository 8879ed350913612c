"""Sweeps: sample every missing (claim, size, replicate) through a ``concurrent.futures``
executor and store each result as it arrives.

Random streams. Replicate ``r`` of experiment ``e`` at size ``T`` under root seed ``root``
uses ``numpy.random.default_rng([r, T, crc32(e), root])``: ids first, the recorded root last
(``doc/source/reference/random/parallel.rst`` in numpy). The stream depends on nothing
else, so the numbers are the same for any number of workers and any order of completion.

Executors. The default is a local process pool whose workers cap BLAS at one thread
(``threadpoolctl``), so that ``workers`` processes never oversubscribe the cores;
``workers=1`` runs everything in this process. Any :class:`concurrent.futures.Executor`
(e.g. a distributed one) can be passed instead: tasks are module-level functions of
plain data.
"""
from __future__ import annotations

import os
import time
import zlib
from concurrent.futures import Executor, Future, ProcessPoolExecutor, wait, FIRST_COMPLETED
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

import numpy as np

from verification.store import Store, encode, parameters_key

#: The root seed used when none is given (recorded in every result either way).
DEFAULT_SEED = 20250713

__all__ = ["DEFAULT_SEED", "Task", "stream", "run_task", "SerialExecutor", "default_executor", "sweep",
           "replay_seed"]


def stream(experiment: str, T: int, replicate: int, root_seed: int) -> np.random.Generator:
    """The random stream of one replicate (see module docstring). Claims that share an
    experiment share its samples."""
    return np.random.default_rng([replicate, T, zlib.crc32(experiment.encode()), root_seed])


def replay_seed(root_seed: int) -> int:
    """A fresh root for replaying a failure, derived (not offset) from the recorded root."""
    return int(np.random.SeedSequence([1, root_seed]).generate_state(1, dtype=np.uint32)[0])


@dataclass(frozen=True)
class Task:
    experiment: str
    params: tuple[tuple[str, float], ...]
    T: int
    replicate: int
    root_seed: int
    version: str


def run_task(task: Task) -> tuple[Task, bytes, float]:
    """Sample one replicate; returns the encoded measurement and the seconds it took."""
    from numerics.experiments import EXPERIMENTS

    start = time.perf_counter()
    rng = stream(task.experiment, task.T, task.replicate, task.root_seed)
    measurement = EXPERIMENTS[task.experiment](rng, task.T, dict(task.params))
    return task, encode(measurement), time.perf_counter() - start


class SerialExecutor(Executor):
    """Runs each task at submission, in this process (``workers=1``)."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller via the future
            if isinstance(exc, KeyboardInterrupt):
                raise
            future.set_exception(exc)
        return future


def _limit_blas_threads() -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)


def default_executor(workers: int) -> Executor:
    if workers <= 1:
        return SerialExecutor()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return ProcessPoolExecutor(max_workers=workers, initializer=_limit_blas_threads)


def plan(store: Store, experiment: str, params: Mapping[str, float],
         sizes: Iterable[int], replicates: int, root_seed: int, version: str) -> list[Task]:
    """The tasks not yet in the store, smallest sizes first."""
    key = parameters_key(params)
    done = store.existing(experiment, key, root_seed, version)
    items = tuple(sorted((k, float(v)) for k, v in params.items()))
    return [Task(experiment, items, T, r, root_seed, version)
            for T in sorted(sizes) for r in range(replicates) if (T, r) not in done]


def sweep(store: Store, tasks: list[Task], executor: Executor,
          on_done: Callable[[Task, float], None] | None = None, in_flight: int = 8) -> None:
    """Run ``tasks`` and store each result as it completes; a ``KeyboardInterrupt``
    cancels what has not started and keeps what has been stored."""
    pending: set[Future] = set()
    queue = list(reversed(tasks))
    try:
        while queue or pending:
            while queue and len(pending) < in_flight:
                pending.add(executor.submit(run_task, queue.pop()))
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                task, payload, seconds = fut.result()
                store.put(task.experiment, parameters_key(dict(task.params)), task.T, task.replicate,
                          task.root_seed, task.version, payload, seconds)
                if on_done:
                    on_done(task, seconds)
    except BaseException:
        for fut in pending:
            fut.cancel()
        raise
