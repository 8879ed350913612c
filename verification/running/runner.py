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
(:func:`task_cost`), with a few more in flight than there are workers so that none waits
for the coordinator; each task is leased in the store before it is submitted, so two runs
on one store never compute the same task (:meth:`verification.running.store.Store.claim`).
"""
from __future__ import annotations

import json
import math
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

#: The root seed used when none is given (recorded in every result either way).

#: Seconds a lease on a task lasts unless renewed; the coordinator renews its leases every
#: ``LEASE_SECONDS / 4``, so a lease expires only when its run has died.
LEASE_SECONDS = 120.0

__all__ = ["LEASE_SECONDS", "Task", "params_key", "Terminated", "stream", "run_task",
           "task_limits", "task_threads", "available_cores", "task_cost", "task_memory",
           "available_memory", "check_memory", "SerialExecutor", "default_executor",
           "shutdown_executor", "plan", "sweep", "replay_seed", "TimeLeft",
           "REFERENCE_SECONDS", "reference_seconds"]


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
            # a claim file's experiment in a fresh worker (spawned, Dask): the registry
            # loads $GAPVERIFY_CLAIMS and the plug-ins, which registers it
            import gapverify.verification.claims.registry  # noqa: F401
        measurement = experiment(task.experiment)(rng, task.T, dict(task.params))
    finally:
        set_sampling_threads(before)
    return task, encode(measurement), time.perf_counter() - start


# --- cost and memory ---------------------------------------------------------------------

#: Experiments whose cost is O(T^2) per task (sampling, Lanczos); all others are taken
#: as O(T^3) (full spectra, products with d x d weights).
_QUADRATIC = {"softmax.kappa": 1.0, "markov.outliers": 200.0, "gradient.input": 200.0}


def task_cost(task: Task) -> float:
    """A relative cost to order tasks by, largest first: ``c T^2`` or ``T^3``."""
    T = float(task.T)
    c = _QUADRATIC.get(task.experiment)
    return c * T * T if c is not None else T ** 3


#: Seconds one task took on the reference machine, ``a + b T^2 + c T^3`` per experiment
#: (non-negative least squares in relative error on the per-size means): the standard
#: sweep of 2026-12-01 (``make verify``, 2 cores, 22 444 tasks), printed by
#: ``python scripts/replay_time_left.py STORE --calibrate``. Read by :class:`TimeLeft` only.
REFERENCE_SECONDS: dict[str, tuple[float, float, float]] = {
    "causal.cesaro": (0.00349, 4.17e-08, 5.46e-12),
    "causal.depth": (0.00433, 4.27e-07, 1.32e-09),
    "depth.network": (0.00252, 6.55e-07, 1.08e-09),
    "fix.spectrum": (0.00113, 5.59e-07, 1.77e-09),
    "gradient.input": (0.00369, 1.07e-07, 2e-10),
    "gradient.value": (0.00237, 4.08e-07, 2.31e-09),
    "heavy_tail.edge": (0.00164, 2.38e-08, 8.66e-12),
    "kq.attention": (0.00795, 4.38e-07, 8.74e-10),
    "markov.circular_law": (0.0004, 3.25e-07, 4.76e-10),
    "markov.outliers": (0.00629, 1.61e-07, 0.0),
    "markov.singular_law": (0.00147, 6.82e-08, 1.31e-10),
    "softmax.kappa": (0.000571, 1.81e-08, 0.0),
    "variants.linear": (0.0715, 4.23e-07, 0.0),
    "variants.normalization": (0.0156, 1.25e-06, 6.29e-09),
    "variants.relu": (0.0447, 3.54e-07, 0.0),
    "variants.sigmoid": (0.0837, 2.11e-07, 2.07e-10),
    "width.stable_rank": (0.00268, 1.62e-07, 1.03e-10),
}


def reference_seconds(task: Task) -> float:
    """A task's seconds on the reference machine (:data:`REFERENCE_SECONDS`); an
    experiment not listed (a claim file's, a plug-in's) takes ``1e-9 task_cost``."""
    coef = REFERENCE_SECONDS.get(task.experiment)
    if coef is None:
        return 1e-9 * task_cost(task)
    a, b, c = coef
    return a + b * task.T ** 2 + c * task.T ** 3


class TimeLeft:
    """The time a sweep has left: a cost model of the tasks still to run, scaled to this
    machine by the tasks already finished.

    A task of experiment ``e`` at size ``T`` is predicted to take ``t_e(T)``: the mean of
    the finished tasks at that ``(e, T)``; else ``k_e R_e(T)`` with ``R_e`` the reference
    seconds (:func:`reference_seconds`) and ``k_e = sum t / sum R_e`` over ``e``'s
    finished tasks (this machine's speed on ``e``), or over all finished tasks when ``e``
    has none yet. An experiment not in :data:`REFERENCE_SECONDS` with finished tasks at
    three sizes or more takes for ``R_e`` its own ``a + b T^2 + c T^3`` (non-negative least
    squares in relative error on its mean seconds per size, ``scipy.optimize.nnls``). The
    time left is ``elapsed * sum(t_e(T) left) / sum(t finished)``: the rate at which
    task-seconds were done so far, workers and in-flight overlap included.

    Why a reference table: the sweep runs the largest tasks first, so at a tenth of the
    tasks every finished one is large. A fit to them misses each task's fixed cost (60 to
    80 ms per task of ``variants.*`` at every size) and knows nothing of the experiments
    not started (those with ``T <= 512`` start after a tenth of the tasks, and cost 2 to
    10 ns per ``T^3`` at ``T = 512`` against 0.07 to 2.7 for those started). Replayed on
    the standard sweep (docs/performance.md), the estimate at a tenth of the tasks was 0.38
    of the truth with the fit of ``c_e T^p_e`` it replaces, 0.95 with this.
    """

    def __init__(self, tasks: Iterable[Task]) -> None:
        self._left: dict[tuple[str, int], int] = {}
        self._ref: dict[tuple[str, int], float] = {}
        for t in tasks:
            key = (t.experiment, int(t.T))
            self._left[key] = self._left.get(key, 0) + 1
            self._ref[key] = reference_seconds(t)
        self._done: dict[tuple[str, int], list[float]] = {}  # (e, T): [count, seconds]
        self._speed: dict[str, list[float]] = {}  # e: [sum t, sum R_e] of finished tasks
        self._seconds = 0.0

    def finished(self, task: Task, seconds: float) -> None:
        key, seconds = (task.experiment, int(task.T)), max(float(seconds), 1e-9)
        if self._left.get(key):
            self._left[key] -= 1
        ref = self._ref.setdefault(key, reference_seconds(task))
        done = self._done.setdefault(key, [0, 0.0])
        done[0], done[1] = done[0] + 1, done[1] + seconds
        speed = self._speed.setdefault(task.experiment, [0.0, 0.0])
        speed[0], speed[1] = speed[0] + seconds, speed[1] + ref
        self._seconds += seconds

    def seconds(self, elapsed: float) -> float | None:
        """Seconds left after ``elapsed`` seconds of the sweep (``None`` before the first
        task has finished)."""
        if not self._done:
            return None
        pooled = self._seconds / sum(r for _, r in self._speed.values())
        fits = self._fits()
        left = 0.0
        for (e, T), n in self._left.items():
            if n and (e, T) in self._done:
                count, total = self._done[(e, T)]
                left += n * total / count
            elif n and e in fits:
                a, b, c = fits[e]
                left += n * (a + b * T ** 2 + c * T ** 3)
            elif n:
                t, r = self._speed.get(e, (0.0, 0.0))
                left += n * (t / r if r else pooled) * self._ref[(e, T)]
        return elapsed * left / self._seconds

    def _fits(self) -> dict[str, np.ndarray]:
        """``(a, b, c)`` of each experiment not in :data:`REFERENCE_SECONDS` with finished
        tasks at three sizes or more (see the class docstring)."""
        from scipy.optimize import nnls

        sizes: dict[str, list[int]] = {}
        for e, T in self._done:
            if e not in REFERENCE_SECONDS:
                sizes.setdefault(e, []).append(T)
        fits = {}
        for e, Ts in sizes.items():
            if len(Ts) >= 3:  # three coefficients
                mean = np.array([self._done[(e, T)][1] / self._done[(e, T)][0] for T in Ts])
                T = np.array(Ts, dtype=float)[:, None]
                design = np.hstack([np.ones_like(T), T ** 2, T ** 3]) / mean[:, None]
                fits[e] = nnls(design, np.ones(len(Ts)))[0]  # min |design x - 1|, x >= 0
        return fits


def _width(task: Task) -> int:
    from gapverify.numerics.common import width_of

    params = dict(task.params)
    return width_of(task.T, params["gamma"]) if "gamma" in params else task.T


#: Peak number of live ``T x T`` / ``T x d`` / ``d x d`` float64 arrays per experiment,
#: read off the code of ``numerics/experiments.py`` (LAPACK's workspaces included).
_ARRAYS = {
    "softmax.kappa": (4, 0, 0),           # M, Z, A, Aperp
    "markov.singular_law": (3, 0, 0),     # A, gesdd's copy and workspace
    "markov.circular_law": (3, 0, 0),     # A, geev's copy and workspace
    "markov.outliers": (1.1, 0, 0),       # A (softmax in place; peak RSS 2.2 GiB at 16384)
    "fix.spectrum": (4, 0, 0),            # A, Aperp, LAPACK's copy and workspace
    "width.stable_rank": (4, 4, 1),       # A, Aperp, Gram | X0, G, Y, A Y | W
    "gradient.input": (2, 0, 2),          # A, Aperp | W, its copy
}


#: The same for the array-API path (:mod:`numerics.array_api`): A and the exp's buffer
#: (numpy, cupy; torch works in place) | Y, A Y and a Gram row block.
_ARRAYS_BACKEND = {"markov.outliers": (2, 0, 0), "width.stable_rank": (2, 2.5, 0)}


def task_memory(task: Task) -> int:
    """Estimated peak bytes of one task: ``8 (a T^2 + b T d + c d^2)`` from :data:`_ARRAYS`
    (experiments not listed: six ``T x d`` and two ``d x d`` arrays, a deep network's)."""
    T, d = task.T, _width(task)
    a, b, c = _ARRAYS.get(task.experiment, (2, 6, 2))
    params = dict(task.params)
    if "backend" in params:  # numerics.array_api: A, Y, A Y at most (A^perp never formed)
        if params.get("device") == "cuda":
            return 256 * 2**20  # the matrices live on the device; the host holds small ones
        a, b, c = _ARRAYS_BACKEND.get(task.experiment, (a, b, c))
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

def plan(store: Store, experiment: str, params: Mapping[str, float],
         sizes: Iterable[int], replicates: int, root_seed: int, version: str) -> list[Task]:
    """The tasks not yet in the store, smallest sizes first."""
    key = params_key(params)
    done = store.existing(experiment, key, root_seed, version)
    items = tuple(sorted((k, v if isinstance(v, str) else float(v)) for k, v in params.items()))
    return [Task(experiment, items, T, r, root_seed, version)
            for T in sorted(sizes) for r in range(replicates) if (T, r) not in done]


def lease_owner() -> str:
    """This run's name in the lease table: host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def sweep(store: Store, tasks: list[Task], executor: Executor,
          on_done: Callable[[Task, float], None] | None = None, in_flight: int = 8,
          threads: int = 1, lease_seconds: float = LEASE_SECONDS, poll: float = 0.2) -> int:
    """Run ``tasks`` (most expensive first) and store each result as it completes.

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
        for fut in pending:
            fut.cancel()
        try:
            store.release(owner)
        except Exception:  # noqa: BLE001 - the store may be what failed; leases then expire
            pass
        raise
    return computed
