"""Sweeps: sample every missing (claim, size, replicate) through a ``concurrent.futures``
executor and store each result as it arrives.

Random streams. Replicate ``r`` of experiment ``e`` at size ``T`` under root seed ``root``
uses ``numpy.random.default_rng([r, T, crc32(e), root])``: ids first, the recorded root last
(``doc/source/reference/random/parallel.rst`` in numpy). The stream depends on nothing
else, so the numbers are the same for any number of workers and any order of completion.

Threads: one policy for every executor (:func:`task_limits`, the one place that calls
``threadpoolctl``). BLAS and OpenMP run one thread inside a task, always: OpenBLAS's
results change in the last bits with its thread count (measured: every experiment's
payload at ``T = 700`` differs between 1 and 2 BLAS threads), so a multi-threaded BLAS
would make the numbers depend on ``--workers``. A task is given ``threads`` =
``cores // workers`` threads for *sampling* instead (:mod:`numerics.samplers`, blocks of
rows drawn from spawned streams; the block count depends on the shape only), so
``--workers 1`` still uses every core while it samples and the numbers stay bit-identical.

Executors. ``workers=1`` runs everything in this process; otherwise a process pool whose
workers apply the same limits, ignore SIGINT (the coordinator ends them) and exit on their
own when the coordinator dies (a watchdog thread polls ``os.getppid()``). Any
:class:`concurrent.futures.Executor` (e.g. Dask's, :mod:`verification.running.executors`)
can be passed instead: tasks are module-level functions of plain data. Only the coordinating
process writes to the store.

Scheduling. The tasks of a whole run are submitted together, the most expensive first
(:func:`~verification.running.time_left.task_cost`), with a few more in flight than there
are workers so that none waits for the coordinator; each task is leased in the store
before it is submitted, so two runs on one store never compute the same task
(:meth:`verification.running.store.Store.claim`). The time a sweep has left is estimated
in :mod:`verification.running.time_left`.
"""
from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import uuid
import zlib
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

import numpy as np

from gapverify.verification.running.store import Store, encode, parameters_key
# the cost model (read off each experiment's record) and the time-left estimate live in
# time_left.py; importable from here too
from gapverify.verification.running.time_left import (  # noqa: F401 - re-exported
    TimeLeft, reference_seconds, task_cost)

#: Seconds a lease on a task lasts unless renewed; the coordinator renews its leases every
#: ``LEASE_SECONDS / 4``, so a lease expires only when its run has died.
LEASE_SECONDS = 120.0

__all__ = ["LEASE_SECONDS", "Task", "params_key", "Terminated", "stream", "run_task",
           "task_limits", "task_threads", "available_cores", "task_cost", "task_memory",
           "available_memory", "check_memory", "SerialExecutor", "default_executor",
           "shutdown_executor", "plan", "per_size", "abandon", "sweep", "replay_seed", "TimeLeft",
           "reference_seconds"]


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like SIGINT's ``KeyboardInterrupt`` (exit 143)."""


def stream(experiment: str, T: int, replicate: int, root_seed: int) -> np.random.Generator:
    """The random stream of one replicate (see module docstring). Claims that share an
    experiment share its samples."""
    return np.random.default_rng([replicate, T, zlib.crc32(experiment.encode()), root_seed])


def replay_seed(root_seed: int) -> int:
    """A fresh root for replaying a failure, derived (not offset) from the recorded root."""
    return int(np.random.SeedSequence([1, root_seed]).generate_state(1, dtype=np.uint32)[0])


#: Sampling parameters kept as text in the store's key: the entry law (``--entries``) and
#: the array library, device and dtype (``--backend``, ``--device``, ``--dtype``; present
#: only when not numpy in float64, :func:`numerics.backends.sampling_keys`).
TEXT_PARAMS = ("entries", "backend", "device", "dtype")


def params_key(params: Mapping[str, object]) -> str:
    """The store's key of a case's sampling parameters:
    :func:`~verification.running.store.parameters_key` (unchanged, so existing stores stay
    valid) unless the case names an entry law
    (``entries``, ``--entries``) or a backend (``backend``, ``device``, ``dtype``), which
    are then kept as text in the same JSON object."""
    text = {k: str(params[k]) for k in TEXT_PARAMS if params.get(k) is not None}
    if not text:
        return parameters_key(params)  # type: ignore[arg-type]
    numbers = {k: float(v) for k, v in params.items()  # type: ignore[arg-type]
               if k not in TEXT_PARAMS}
    return json.dumps({**numbers, **text}, sort_keys=True)


@dataclass(frozen=True)
class Task:
    experiment: str
    params: tuple[tuple[str, float | str], ...]  # str: the entry law (``entries``)
    T: int
    replicate: int
    root_seed: int
    version: str

    @property
    def key(self) -> tuple:
        """The store's primary key of this task's measurement."""
        return (self.experiment, params_key(dict(self.params)), self.T, self.replicate,
                self.root_seed, self.version)


# --- threads ------------------------------------------------------------------------------

def available_cores() -> int:
    """Cores this process may run on (its CPU affinity, else ``os.cpu_count()``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def task_threads(workers: int, cores: int | None = None) -> int:
    """Sampling threads per task when ``workers`` tasks share ``cores`` cores."""
    return max(1, (cores or available_cores()) // max(1, workers))


_controller = None


def task_limits() -> None:
    """The threading policy of a task, the one place that sets it: BLAS and OpenMP at one
    thread (results bit-identical for any worker count; see the module docstring).

    Applied for the whole process and never restored: threads of one process (a Dask
    worker's, this process's) share the BLAS setting, so a restoring context manager in
    one task would change the threads of another mid-run. The ``threadpoolctl``
    controller is built once, after numpy's and scipy's BLAS are loaded (7 us per call
    afterwards instead of 1 ms).
    """
    global _controller
    if _controller is None:
        import scipy.linalg  # noqa: F401 - load scipy's BLAS before the controller looks
        import scipy.sparse.linalg  # noqa: F401
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    _controller.limit(limits=1)


def run_task(task: Task, threads: int = 1) -> tuple[Task, bytes, float]:
    """Sample one replicate with ``threads`` sampling threads (BLAS at one thread);
    returns the encoded measurement and the seconds it took."""
    from gapverify.numerics.plugins import EXTRA_EXPERIMENTS, experiment
    from gapverify.numerics.samplers import sampling_threads, set_sampling_threads

    start = time.perf_counter()
    task_limits()
    before = sampling_threads()
    set_sampling_threads(threads)
    try:
        rng = stream(task.experiment, task.T, task.replicate, task.root_seed)
        if task.experiment not in EXTRA_EXPERIMENTS and "@" in task.experiment:
            # a claim file's experiment in a fresh worker (spawned, Dask): loading
            # $GAPVERIFY_CLAIMS and the plug-ins, asked for explicitly, registers it
            from gapverify.verification.claims.registry import REGISTRY

            REGISTRY.load_configured()
        fn = experiment(task.experiment)
        if task.experiment in EXTRA_EXPERIMENTS:  # a claim file's or plug-in's: user code
            measurement = _user_measurement(task, fn, rng)
        else:
            measurement = fn(rng, task.T, dict(task.params))
    finally:
        set_sampling_threads(before)
    return task, encode(measurement), time.perf_counter() - start


def _user_measurement(task: Task, fn: Callable, rng: np.random.Generator) -> dict:
    """The measurement of an experiment of a claim file or plug-in: an exception it raises
    (but memory running out) or a result that is not a dict of numbers or arrays is a
    :class:`~verification.judging.outcomes.ClaimError` naming its file and line, the
    claim, the case (its sampling parameters), the size and the replicate."""
    from gapverify.verification.running.claim_errors import (
        ClaimError, checked_measurement, raised_at,
    )

    # a claim file's experiment is keyed "<claim id>@<digest>" (claims.loading)
    claim = task.experiment.split("@")[0] if "@" in task.experiment else ""
    context = dict(claim=claim, T=task.T, replicate=task.replicate,
                   case={k: v for k, v in task.params if not isinstance(v, str)})
    try:
        measurement = fn(rng, task.T, dict(task.params))
    except (MemoryError, ClaimError):
        raise
    except Exception as exc:  # noqa: BLE001 - user code: one line with its place
        raise ClaimError(f"the experiment {getattr(fn, '__name__', fn)} raised "
                         f"{type(exc).__name__}: {exc}", where=raised_at(exc, [fn]),
                         **context) from None
    try:
        return checked_measurement(measurement, fn)
    except ClaimError as exc:
        raise exc.within(**context) from None


# --- memory ------------------------------------------------------------------------------

def _width(task: Task) -> int:
    from gapverify.numerics.common import width_of

    params = dict(task.params)
    return width_of(task.T, params["gamma"]) if "gamma" in params else task.T


def task_memory(task: Task) -> int:
    """Estimated peak bytes of one task: ``8 (a T^2 + b T d + c d^2)`` from its experiment's
    record (:attr:`~gapverify.numerics.experiment_record.Experiment.arrays`; a claim file's:
    six ``T x d`` and two ``d x d`` arrays, a deep network's)."""
    from gapverify.numerics.plugins import record

    T, d = task.T, _width(task)
    facts = record(task.experiment)
    a, b, c = facts.arrays
    params = dict(task.params)
    if "backend" in params:  # numerics.array_api: A, Y, A Y at most (A^perp never formed)
        if params.get("device") == "cuda":
            return 256 * 2**20  # the matrices live on the device; the host holds small ones
        a, b, c = facts.arrays_backend or facts.arrays
        size = 4 if params.get("dtype") == "float32" else 8
        return int(size * (a * T * T + b * T * d + c * d * d)) + 256 * 2**20
    return int(8 * (a * T * T + b * T * d + c * d * d)) + 64 * 2**20  # + interpreter, libraries


def available_memory() -> int:
    """Bytes this run may use: the least of ``MemAvailable`` (``/proc/meminfo``), the
    cgroup's ``memory.max - memory.current``, ``RLIMIT_AS`` and ``GAPVERIFY_MEMORY_LIMIT``
    (bytes; a test's fake limit). Unknown parts are ignored."""
    limits: list[int] = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                limits.append(int(line.split()[1]) * 1024)
    except OSError:
        pass
    try:
        cg = Path("/sys/fs/cgroup")
        high = (cg / "memory.max").read_text().strip()
        if high != "max":
            limits.append(int(high) - int((cg / "memory.current").read_text()))
    except (OSError, ValueError):
        pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            limits.append(int(soft))
    except (ImportError, ValueError, OSError):
        pass
    if os.environ.get("GAPVERIFY_MEMORY_LIMIT"):
        limits.append(int(float(os.environ["GAPVERIFY_MEMORY_LIMIT"])))
    return min(limits) if limits else 2**62


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


def check_memory(tasks: Iterable[Task], concurrent: int, available: int | None = None) -> None:
    """Raise ``ValueError`` naming ``--sizes`` (exit 2) when the ``concurrent`` largest
    tasks cannot fit in memory together, before anything is sampled."""
    tasks = list(tasks)
    if not tasks:
        return
    available = available_memory() if available is None else available
    need = sorted((task_memory(t) for t in tasks), reverse=True)
    total = sum(need[:max(1, concurrent)])
    if total > available:
        big = max(tasks, key=task_memory)
        fits = [t.T for t in tasks if task_memory(t) * max(1, concurrent) <= available]
        hint = (f"; sizes up to T={max(fits)} fit" if fits else "")
        raise ValueError(
            f"parameter '--sizes': T={big.T} ({big.experiment}) needs about "
            f"{_gib(task_memory(big))} per task, {_gib(total)} for {max(1, concurrent)} "
            f"concurrent task(s), but {_gib(available)} is available{hint}; give smaller "
            f"--sizes or fewer --workers")


# --- executors ---------------------------------------------------------------------------

class SerialExecutor(Executor):
    """Runs each task at submission, in this process (``workers=1``)."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller via the future
            if isinstance(exc, KeyboardInterrupt):
                raise
            # a signal inside a native call that calls back into Python (a solver's
            # SystemError "returned a result with an exception set"): still the interrupt
            from gapverify.numerics.statistics import _interrupt_in

            interrupt = _interrupt_in(exc)
            if interrupt is not None:
                raise interrupt.with_traceback(None) from None
            future.set_exception(exc)
        return future


def _watch_parent(parent: int) -> None:
    # a worker whose coordinator died (SIGKILL: no chance to end us) exits on its own
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(1)


def _worker_init(parent: int) -> None:
    """Process-pool worker: BLAS limits for the whole process, SIGINT left to the
    coordinator (which ends the pool), SIGTERM ends it at once, and the parent watchdog."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the coordinator's handler (forked)
    task_limits()
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True,
                     name="gapverify-watchdog").start()


def default_executor(workers: int) -> Executor:
    if workers <= 1:
        return SerialExecutor()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return ProcessPoolExecutor(max_workers=workers, initializer=_worker_init,
                               initargs=(os.getpid(),))


def shutdown_executor(executor: Executor, abort: bool = False) -> None:
    """Shut ``executor`` down; with ``abort`` (interrupted run) a process pool's workers
    are terminated at once rather than left to finish their task."""
    if abort and isinstance(executor, ProcessPoolExecutor):
        processes = list(getattr(executor, "_processes", {}).values())  # CPython's pool
        executor.shutdown(wait=False, cancel_futures=True)
        for p in processes:
            p.terminate()
        for p in processes:
            p.join(timeout=5)
        return
    if isinstance(executor, ProcessPoolExecutor) or isinstance(executor, SerialExecutor):
        executor.shutdown(cancel_futures=True)
    else:
        executor.shutdown(wait=not abort)


# --- planning and sweeping -----------------------------------------------------------------

def per_size(sizes: Iterable[int], replicates: int | Mapping[int, int]) -> dict[int, int]:
    """Replicates per size: ``replicates`` at every size, or read off a mapping."""
    if isinstance(replicates, Mapping):
        return {int(T): int(replicates[T]) for T in sizes}
    return {int(T): int(replicates) for T in sizes}


def plan(store: Store, experiment: str, params: Mapping[str, float],
         sizes: Iterable[int], replicates: int | Mapping[int, int], root_seed: int,
         version: str) -> list[Task]:
    """The tasks not yet in the store, smallest sizes first (``replicates``: a count at
    every size, or one per size). Replicate ``r`` at ``T`` is the same task whatever the
    count, so a round that draws more extends what earlier rounds stored."""
    key = params_key(params)
    done = store.existing(experiment, key, root_seed, version)
    items = tuple(sorted((k, v if isinstance(v, str) else float(v)) for k, v in params.items()))
    counts = per_size(sizes, replicates)
    return [Task(experiment, items, T, r, root_seed, version)
            for T in sorted(counts) for r in range(counts[T]) if (T, r) not in done]


def lease_owner() -> str:
    """This run's name in the lease table: host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def sweep(store: Store, tasks: list[Task], executor: Executor,
          on_done: Callable[[Task, float], None] | None = None, in_flight: int = 8,
          threads: int = 1, lease_seconds: float = LEASE_SECONDS, poll: float = 0.2,
          on_drained: Callable[[], None] | None = None) -> int:
    """Run ``tasks`` (most expensive first) and store each result as it completes.
    ``on_drained`` is called once, as soon as every task is submitted (at once when there
    is none): what it submits to ``executor`` then runs on the workers the sweep's last
    tasks leave idle.

    Each task is leased in the store before it is submitted; a task another live run
    holds is left to it and waited for (taken over if its lease expires), one already
    stored is skipped. A ``KeyboardInterrupt`` (or :class:`Terminated`) cancels what has
    not started, releases this run's leases and keeps what has been stored. Returns the
    number of tasks this call computed.
    """
    owner = lease_owner()
    queue = sorted(dict.fromkeys(tasks), key=task_cost, reverse=True)
    queue.reverse()  # pop() from the end: the most expensive first
    pending: dict[Future, Task] = {}
    waiting: list[Task] = []
    computed = taken = 0
    waited = False
    renewed = time.monotonic()
    try:
        while queue or pending or waiting:
            while queue and len(pending) < in_flight:
                task = queue.pop()
                state = store.claim(task.key, owner, lease_seconds)
                if state == "taken":
                    taken += 1
                    if taken == 1:  # said once: a killed run's leases are taken at once
                        print("gapverify: note: taking over the tasks leased by a run on this "
                              "host whose process is gone (killed); not waiting for its leases "
                              "to expire", file=sys.stderr, flush=True)
                    state = "mine"
                if state == "mine":
                    pending[executor.submit(run_task, task, threads)] = task
                elif state == "busy":
                    if not waited:
                        waited = True
                        print("gapverify: note: waiting for tasks another live run is computing "
                              "on this store (its leases; a killed run's are taken at once, one "
                              "of another host's when it expires)", file=sys.stderr, flush=True)
                    waiting.append(task)
            if on_drained is not None and not queue and not waiting:
                on_drained, drained = None, on_drained
                drained()
            if not pending:
                if waiting:  # everything left is leased by another run: wait for it
                    time.sleep(poll)
                    queue, waiting = list(reversed(waiting)), []
                continue
            done, _ = wait(list(pending), timeout=lease_seconds / 4, return_when=FIRST_COMPLETED)
            for fut in [f for f in pending if f in done]:  # in submission order
                task = pending.pop(fut)
                _, payload, seconds = fut.result()
                store.put(*task.key[:2], task.T, task.replicate, task.root_seed, task.version,
                          payload, seconds)
                computed += 1
                if on_done:
                    on_done(task, seconds)
            if time.monotonic() - renewed > lease_seconds / 4:
                store.renew([t.key for t in pending.values()], owner, lease_seconds)
                renewed = time.monotonic()
    except BaseException:
        abandon(pending, store, owner)
        raise
    if on_drained is not None:  # nothing was left to submit
        on_drained()
    return computed


def abandon(futures: Iterable, store: Store, owner: str) -> None:
    """After an error or an interrupt: cancel what has not started and give back the
    leases of ``owner`` (the store may be what failed: its leases then expire)."""
    for fut in futures:
        fut.cancel()
    try:
        store.release(owner)
    except Exception:  # noqa: BLE001 - the store may be what failed; leases then expire
        pass
