"""The cost of a sweep's tasks and the time the sweep has left (the progress line's
"about N s left").

Reference seconds. A task of experiment ``e`` at size ``T`` took, on the reference
machine, ``R_e(T) = a_e + b_e T^2 + c_e T^3`` seconds: the ``seconds`` of ``e``'s record
(:class:`numerics.experiment_record.Experiment`, written beside its function: non-negative
least squares in relative error on the per-size mean seconds of the standard sweep of
2026-12-01, ``make verify`` on 2 cores, 22 444 tasks; printed by
``python scripts/replay_time_left.py STORE --calibrate``, to be rerun when the experiments'
cost changes). An experiment without them (a claim file's, a plug-in's) takes
``R_e(T) = 1e-9 task_cost`` with :func:`task_cost` = ``c T^2`` or ``T^3`` (the record's
``quadratic``: the relative cost the sweep orders its tasks by), and its own fitted
``a + b T^2 + c T^3`` once it has finished tasks at three sizes or more.
:data:`REFERENCE_SECONDS` and ``_QUADRATIC`` are views of the records, by name.

Time left (:class:`TimeLeft`). A task still to run is predicted to take ``t_e(T)``: the
mean seconds of the finished tasks at that ``(e, T)``; else ``k_e R_e(T)`` with
``k_e = sum t / sum R_e`` over ``e``'s finished tasks (this machine's speed on ``e``), or
over all finished tasks when ``e`` has none. The time left after ``elapsed`` seconds is

    elapsed * sum(t_e(T) over the tasks left) / sum(t over the finished tasks),

the rate at which task-seconds were done so far, workers and in-flight overlap included.
Replayed on recorded sweeps (docs/performance.md, "Time-left estimate on recorded
sweeps"; ``python scripts/replay_time_left.py STORE_OR_CSV``): 0.95 of the truth at a
tenth of the standard sweep's tasks, 0.82-1.06 from 10% on.
"""
from __future__ import annotations

from typing import Iterable, Protocol

import numpy as np


class Task(Protocol):
    """What the cost model reads of a task (:class:`~gapverify.verification.running.runner.Task`
    has it): its experiment's name and its size."""

    experiment: str
    T: int

__all__ = ["task_cost", "REFERENCE_SECONDS", "reference_seconds", "TimeLeft"]

def _record(name: str):
    """The built-in record of experiment ``name`` (its cost facts), else one without facts
    (a claim file's, a plug-in's): :mod:`numerics.experiment_record`."""
    from gapverify.numerics.experiment_record import bare_record
    from gapverify.numerics.experiments import RECORDS  # every family, when costed

    return RECORDS.get(name) or bare_record(name, None)


def task_cost(task: Task) -> float:
    """A relative cost to order tasks by, largest first: ``c T^2`` or ``T^3``
    (:meth:`~numerics.experiment_record.Experiment.order_cost`)."""
    return _record(task.experiment).order_cost(task.T)


def reference_seconds(task: Task) -> float:
    """A task's seconds on the reference machine, ``a + b T^2 + c T^3`` of its record; an
    experiment without them (a claim file's, a plug-in's) takes ``1e-9 task_cost``
    (:meth:`~numerics.experiment_record.Experiment.reference_seconds`)."""
    return _record(task.experiment).reference_seconds(task.T)


def __getattr__(name: str):
    # views of the records, by name (PEP 562: built when first read)
    if name == "REFERENCE_SECONDS":  # experiment: (a, b, c) of its reference seconds
        from gapverify.numerics.experiments import RECORDS

        return {e: r.seconds for e, r in RECORDS.items() if r.seconds is not None}
    if name == "_QUADRATIC":  # experiment: c of its O(T^2) cost c T^2
        from gapverify.numerics.experiments import RECORDS

        return {e: r.quadratic for e, r in RECORDS.items() if r.quadratic is not None}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class TimeLeft:
    """The time a sweep has left: a cost model of the tasks still to run, scaled to this
    machine by the tasks already finished.

    A task of experiment ``e`` at size ``T`` is predicted to take ``t_e(T)``: the mean of
    the finished tasks at that ``(e, T)``; else ``k_e R_e(T)`` with ``R_e`` the reference
    seconds (:func:`reference_seconds`) and ``k_e = sum t / sum R_e`` over ``e``'s
    finished tasks (this machine's speed on ``e``), or over all finished tasks when ``e``
    has none yet. An experiment without reference seconds in its record with finished tasks at
    three sizes or more takes for ``R_e`` its own ``a + b T^2 + c T^3`` (non-negative least
    squares in relative error on its mean seconds per size, ``scipy.optimize.nnls``). The
    time left is ``elapsed * sum(t_e(T) left) / sum(t finished)``: the rate at which
    task-seconds were done so far, workers and in-flight overlap included.

    Why a reference table: the sweep runs the largest tasks first, so at a tenth of the
    tasks every finished one is large. A fit to them misses each task's fixed cost (60 to
    80 ms per task of ``variants.*`` at every size in that sweep) and knows nothing of the experiments
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
        """``(a, b, c)`` of each experiment without reference seconds with finished
        tasks at three sizes or more (see the class docstring)."""
        from scipy.optimize import nnls

        sizes: dict[str, list[int]] = {}
        for e, T in self._done:
            if _record(e).seconds is None:
                sizes.setdefault(e, []).append(T)
        fits = {}
        for e, Ts in sizes.items():
            if len(Ts) >= 3:  # three coefficients
                mean = np.array([self._done[(e, T)][1] / self._done[(e, T)][0] for T in Ts])
                T = np.array(Ts, dtype=float)[:, None]
                design = np.hstack([np.ones_like(T), T ** 2, T ** 3]) / mean[:, None]
                fits[e] = nnls(design, np.ones(len(Ts)))[0]  # min |design x - 1|, x >= 0
        return fits

