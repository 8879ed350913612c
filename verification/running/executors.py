"""Where a run's tasks execute: this process, a local process pool, or a Dask cluster,
all behind the one :class:`concurrent.futures.Executor` interface the sweep uses.

``--scheduler ADDRESS`` connects a :class:`distributed.Client` to a running scheduler
(``tcp://host:8786``; start one with ``dask scheduler`` and ``dask worker ADDRESS
--nthreads 1`` on each machine, in an environment with gapverify installed);
``--scheduler local:N`` starts a :class:`distributed.LocalCluster` of ``N`` single-threaded
worker processes on this machine. Either way tasks go through
``Client.get_executor()``, results come back to this process and only this process
writes to the store. The numbers are the same as the process pool's: every task sets its
own thread limits (:func:`verification.running.runner.task_limits`) and its random stream depends
on its ids only.
"""
from __future__ import annotations

import re
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Callable

from gapverify.verification.running.runner import (
    available_cores, check_memory, default_executor, shutdown_executor, task_threads,
)

__all__ = ["Engine", "make_engine", "parse_scheduler"]


@dataclass
class Engine:
    """An executor with what the sweep needs to keep it busy: ``slots`` tasks run at
    once, each with ``threads`` sampling threads; :meth:`close` ends it (``abort``: at once)."""

    executor: Executor
    slots: int
    threads: int
    name: str
    _close: Callable[[bool], None] = field(repr=False, default=lambda abort: None)
    #: ``(tasks at once, bytes)`` of the smallest machine that runs tasks, where it is not
    #: this one (a Dask worker: its threads and ``memory_limit``); ``None``: this machine
    memory: tuple[int, int] | None = None

    def check_memory(self, tasks) -> None:
        """:func:`verification.running.runner.check_memory` against where the tasks will run."""
        if self.memory is None:
            check_memory(tasks, self.slots)
        else:
            check_memory(tasks, self.memory[0], available=self.memory[1])

    @property
    def in_flight(self) -> int:
        """Tasks submitted ahead: every slot busy plus one queued each, so that no worker
        waits while the coordinator stores a result."""
        return 2 * self.slots

    def close(self, abort: bool = False) -> None:
        self._close(abort)


#: Address schemes of Dask's comms (``distributed.comm.registry``).
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")


def parse_scheduler(text: str | None) -> tuple[str, int | str] | None:
    """``None``, ``("local", N)`` for ``local:N`` (1 <= N <= 256) or ``("address", ADDRESS)``."""
    if text is None:
        return None
    m = re.fullmatch(r"local:(\d+)", text.strip())
    if m:
        n = int(m.group(1))
        if not 1 <= n <= 256:
            raise ValueError(f"parameter '--scheduler' local:N needs N in [1, 256], got {text!r}")
        return ("local", n)
    if text.startswith("local"):
        raise ValueError(f"parameter '--scheduler' must be local:N (N in [1, 256]) or a "
                         f"scheduler address such as tcp://host:8786, got {text!r}")
    m = re.fullmatch(r"(?:([a-z]+)://)?([^\s/]+?)(?::([^\s:/]*))?/?", text.strip())
    usage = (f"parameter '--scheduler' must be local:N (N in [1, 256]) or a scheduler address "
             f"SCHEME://HOST:PORT (SCHEME one of {', '.join(SCHEMES)}, PORT in [1, 65535]), "
             f"e.g. tcp://host:8786, got {text!r}")
    if not m:
        raise ValueError(usage)
    scheme, host, port = m.groups()
    if scheme is not None and scheme not in SCHEMES:
        raise ValueError(usage.replace("got", f"not the scheme {scheme!r}; got", 1))
    if scheme in ("tcp", "tls", "ws", "wss", None):
        if port is None or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise ValueError(usage)
    return ("address", text.strip())


#: Seconds to wait for a Dask scheduler to answer (connection and handshake).
CONNECT_SECONDS = 5.0


def _connect(Client, target: str, seconds: float = CONNECT_SECONDS):
    """A :class:`distributed.Client` of the scheduler at ``target``, or a ``ValueError``
    naming ``--scheduler`` within ``seconds``: a refused connection, a bad address, or a
    peer that accepts and never answers (``Client(timeout=...)`` alone blocked for minutes
    on one: the handshake is not under its timeout), so the connection is made in a
    daemon thread and abandoned at the deadline."""
    import threading

    box: dict = {}

    def connect() -> None:
        try:
            box["client"] = Client(target, timeout=seconds)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    thread = threading.Thread(target=connect, daemon=True, name="gapverify-dask-connect")
    thread.start()
    thread.join(seconds + 0.5)
    if thread.is_alive():
        raise ValueError(f"parameter '--scheduler': {target} accepted the connection but did not "
                         f"answer as a Dask scheduler within {seconds:g} s; give the address of a "
                         "running 'dask scheduler' (tcp://host:8786) or local:N")
    if "error" in box:
        exc = box["error"]
        if isinstance(exc, KeyboardInterrupt):
            raise exc
        text = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise ValueError(f"parameter '--scheduler': no Dask scheduler at {target}: {text}; "
                         "give tcp://host:PORT of a running 'dask scheduler', or local:N") from None
    return box["client"]


def _dask_engine(kind: str, target, processes: bool = True) -> Engine:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ValueError("parameter '--scheduler' needs Dask distributed: "
                         "pip install 'gapverify[distributed]'") from None
    cluster = None
    if kind == "local":
        cluster = LocalCluster(n_workers=int(target), threads_per_worker=1, processes=processes,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        client = _connect(Client, target)
    slots = max(1, sum(client.nthreads().values()))
    workers = client.scheduler_info().get("workers", {}).values()
    limits = [(int(w.get("nthreads") or 1), int(w["memory_limit"])) for w in workers
              if w.get("memory_limit")]  # 0 or None: the worker has no limit
    memory = (max(n for n, _ in limits), min(m for _, m in limits)) if limits else None
    executor = client.get_executor(pure=False)

    def close(abort: bool) -> None:
        client.close()  # releases (and so cancels) this client's futures
        if cluster is not None:
            cluster.close()

    # a worker thread samples single-threaded: the cluster's own threads fill its cores
    return Engine(executor, slots, 1, f"dask {target}", close, memory)


def make_engine(workers: int, scheduler: str | None = None, processes: bool = True) -> Engine:
    """The process pool of ``workers`` (this process when 1), or the Dask cluster named by
    ``scheduler`` (:func:`parse_scheduler`); ``processes=False`` runs a local cluster's
    workers as threads of this process (tests)."""
    parsed = parse_scheduler(scheduler)
    if parsed is not None:
        return _dask_engine(*parsed, processes=processes)
    ex = default_executor(workers)
    return Engine(ex, max(1, workers), task_threads(workers, available_cores()),
                  f"{workers} local worker(s)", lambda abort: shutdown_executor(ex, abort))
