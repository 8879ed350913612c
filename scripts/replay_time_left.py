"""Replay a recorded sweep through the time-left estimate and say how far off it was.

    python scripts/replay_time_left.py STORE_OR_CSV             # the replay
    python scripts/replay_time_left.py STORE --csv OUT.csv.gz   # write the replay's table
    python scripts/replay_time_left.py STORE --calibrate        # the reference cost table

The input is a store (``.sqlite``, opened read-only) or a table written by ``--csv``
(columns ``experiment, T, seconds, created``), one row per task of one sweep. The tasks
are fed to :class:`gapverify.verification.running.runner.TimeLeft` in the order they were
stored (``created``) with their measured ``seconds``; the sweep's clock at task ``i`` is
``created_i - created_1 + seconds_1`` and the truth left is the clock at the last task
minus it. Printed: the ratio estimate / truth at 5, 10, 20 and 50% of the tasks, and its
least and largest value from 10% on (tasks left in the last 2% of the run are judged in
absolute terms, within 2% of the run, since a ratio of two near-zero times means
nothing), for the current model and for the one it replaced (:class:`OldTimeLeft`).

``--calibrate`` fits ``a + b T^2 + c T^3`` seconds per experiment (non-negative least
squares in relative error on the per-size means, ``scipy.optimize.nnls``) and prints it
in the form of :attr:`~gapverify.numerics.experiment_record.Experiment.seconds`.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import io
import math
import sqlite3
import sys
from collections import defaultdict
from typing import Callable, Sequence

import numpy as np

from gapverify.numerics.plugins import record
from gapverify.verification.running.runner import Task, TimeLeft, task_cost

Row = tuple[str, int, float, float]  # experiment, T, seconds, created

#: Fractions of the tasks at which the replay reports the ratio.
MARKS = (0.05, 0.10, 0.20, 0.50)


def load(path: str) -> list[Row]:
    """The tasks of one sweep in the order they were stored."""
    if path.endswith((".csv", ".csv.gz")):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", newline="") as f:
            rows = [(r["experiment"], int(r["T"]), float(r["seconds"]), float(r["created"]))
                    for r in csv.DictReader(f)]
    else:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        rows = db.execute("SELECT experiment, T, seconds, created FROM measurements").fetchall()
        db.close()
    return sorted(rows, key=lambda r: r[3])


def write_csv(rows: Sequence[Row], path: str) -> None:
    """The replay's table, ``created`` counted from the first task (byte-stable gzip)."""
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(["experiment", "T", "seconds", "created"])
    t0 = rows[0][3]
    for e, T, s, c in rows:
        out.writerow([e, T, f"{s:.5f}", f"{c - t0:.4f}"])
    with open(path, "wb") as f:
        f.write(gzip.compress(buf.getvalue().encode(), 9, mtime=0))


class OldTimeLeft:
    """The model :class:`TimeLeft` replaced (before 2026-12-02), kept to compare: the mean
    at a finished ``(e, T)``, else ``c_e T^p_e`` from a least-squares line of ``log t`` on
    ``log T`` over ``e``'s finished tasks (``p`` in [0, 4]; one size: ``p`` of
    :func:`task_cost`), else (experiment not started) the finished tasks' mean of
    ``t / task_cost`` times ``task_cost``."""

    def __init__(self, tasks: Sequence[Task]) -> None:
        self._left: dict[tuple[str, int], int] = defaultdict(int)
        for t in tasks:
            self._left[(t.experiment, t.T)] += 1
        self._done: dict[tuple[str, int], list[float]] = defaultdict(list)
        self._seconds = 0.0

    def finished(self, task: Task, seconds: float) -> None:
        self._left[(task.experiment, task.T)] -= 1
        self._done[(task.experiment, task.T)].append(max(seconds, 1e-9))
        self._seconds += max(seconds, 1e-9)

    def seconds(self, elapsed: float) -> float:
        cost = {k: task_cost(Task(k[0], (), k[1], 0, 0, "")) for k in self._left}
        ratio = np.mean([s / cost[k] for k, ss in self._done.items() for s in ss])
        fits = {}
        for e in {k[0] for k in self._done}:
            x, y = np.array([(math.log(T), math.log(s)) for (ee, T), ss in self._done.items()
                             if ee == e for s in ss]).T
            p = (float(np.clip(np.polyfit(x, y, 1)[0], 0.0, 4.0)) if len(set(x)) >= 2
                 else 2.0 if record(e).quadratic is not None else 3.0)
            fits[e] = (p, float(np.mean(y - p * x)))

        def predict(e: str, T: int) -> float:
            if self._done.get((e, T)):
                return float(np.mean(self._done[(e, T)]))
            if e in fits:
                return math.exp(fits[e][1] + fits[e][0] * math.log(T))
            return ratio * cost[(e, T)]
        return elapsed * sum(n * predict(*k) for k, n in self._left.items() if n) / self._seconds


def replay(rows: Sequence[Row], model: Callable = TimeLeft, every: int = 1):
    """``(fraction done, clock, truth left, estimate)`` after every ``every``-th task (and
    at :data:`MARKS`), the tasks fed to ``model`` in their stored order."""
    tasks = [Task(e, (), int(T), 0, 0, "") for e, T, _, _ in rows]
    left = model(tasks)
    t0 = rows[0][3] - rows[0][2]  # the sweep's start: the first task began its seconds earlier
    end = rows[-1][3] - t0
    n = len(rows)
    marks = {max(1, round(f * n)) for f in MARKS}
    out = []
    for i, (task, (_, _, s, created)) in enumerate(zip(tasks, rows), 1):
        left.finished(task, s)
        if i % every == 0 or i in marks:
            now = created - t0
            out.append((i / n, now, end - now, left.seconds(now)))
    return out


def judge(points, end: float) -> dict:
    """The ratio at :data:`MARKS`; its range from 10% on where more than 2% of the run
    is left; the largest absolute error in the last 2%, as a fraction of the run."""
    at = {}
    for f in MARKS:
        at[f] = min(points, key=lambda p: abs(p[0] - f))
    late = [p for p in points if p[0] >= 0.1 and p[2] < 0.02 * end]
    ratios = [p[3] / p[2] for p in points if p[0] >= 0.1 and p[2] >= 0.02 * end]
    return {"at": {f: p[3] / p[2] for f, p in at.items()},
            "truth": {f: p[2] for f, p in at.items()}, "estimate": {f: p[3] for f, p in at.items()},
            "min": min(ratios), "max": max(ratios),
            "late": max((abs(p[3] - p[2]) / end for p in late), default=0.0)}


def calibrate(rows: Sequence[Row]) -> dict[str, tuple[float, float, float]]:
    """Per experiment ``(a, b, c)``: seconds ``a + b T^2 + c T^3``, non-negative least
    squares in relative error on the mean seconds per size."""
    from scipy.optimize import nnls

    by: dict[tuple[str, int], list[float]] = defaultdict(list)
    for e, T, s, _ in rows:
        by[(e, T)].append(s)
    out = {}
    for e in sorted({k[0] for k in by}):
        sizes = sorted(T for ee, T in by if ee == e)
        means = np.array([np.mean(by[(e, T)]) for T in sizes])
        design = np.array([[1.0, T ** 2, T ** 3] for T in map(float, sizes)]) / means[:, None]
        coef, _ = nnls(design, np.ones(len(sizes)))  # min |design coef - 1|, coef >= 0
        out[e] = tuple(float(f"{c:.3g}") for c in coef)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source", help="a store (.sqlite, read-only) or a table from --csv")
    ap.add_argument("--csv", help="write the replay's table (csv.gz) here and stop")
    ap.add_argument("--calibrate", action="store_true", help="print the reference cost table")
    args = ap.parse_args(argv)
    rows = load(args.source)
    if args.csv:
        write_csv(rows, args.csv)
        return 0
    if args.calibrate:
        for e, (a, b, c) in calibrate(rows).items():
            print(f'    "{e}": ({a:.3g}, {b:.3g}, {c:.3g}),')
        return 0
    end = rows[-1][3] - rows[0][3] + rows[0][2]
    print(f"{len(rows)} tasks, {end:.1f} s, {sum(r[2] for r in rows):.1f} task-seconds")
    for name, model in (("current", TimeLeft), ("old", OldTimeLeft)):
        j = judge(replay(rows, model, every=max(1, len(rows) // 400)), end)
        marks = "  ".join(f"{100 * f:.0f}%: {j['estimate'][f]:.0f}/{j['truth'][f]:.0f} s = "
                          f"{j['at'][f]:.2f}" for f in MARKS)
        print(f"{name:8s} {marks}  from 10%: {j['min']:.2f}..{j['max']:.2f}, "
              f"last 2%: within {100 * j['late']:.1f}% of the run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
