"""tests for the time-left estimate of a sweep (verification/running/runner.py TimeLeft,
used by the rich Progress and LineProgress): synthetic task times, the sweep's order
(largest first) on two workers. The experiments are not in the reference table
(REFERENCE_SECONDS), as a claim file's would not be: the estimate fits their cost from their
finished tasks. The replays of real sweeps are in test_time_left_replay.py."""
import heapq
import io

import numpy as np
import pytest

from gapverify.verification.running.runner import Task, TimeLeft, task_cost

SIZES = (64, 91, 128, 181, 256, 362, 512, 724, 1024)


def _tasks():
    tasks = [Task(e, (), T, r, 1, "v") for e in ("claimfile.cubic", "claimfile.quadratic")
             for T in SIZES for r in range(24)]
    return sorted(tasks, key=task_cost, reverse=True)  # the sweep's order


def _seconds(task, rng):
    # a cubic (or quadratic) cost, a per-task overhead and 20% noise
    p = 2.0 if task.experiment == "claimfile.quadratic" else 3.0
    return (2e-3 + 3e-9 * task.T ** p) * rng.lognormal(0.0, 0.2)


def _simulate(workers=2, seed=0):
    """Completion events ``(time, task, seconds)`` of a list schedule on ``workers``."""
    rng = np.random.default_rng(seed)
    free = [0.0] * workers
    events = []
    for task in _tasks():
        start = heapq.heappop(free)
        s = _seconds(task, rng)
        heapq.heappush(free, start + s)
        events.append((start + s, task, s))
    return sorted(events, key=lambda e: e[0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_time_left_is_within_a_factor_two_once_a_tenth_is_done(seed):
    """From a tenth of the tasks on, the estimate is within a factor 2 of the time the
    simulated sweep really had left (in its last 2%, within 2% of the run's time); the
    per-task average (elapsed x left / done) was not."""
    events = _simulate(seed=seed)
    end = events[-1][0]
    left = TimeLeft(_tasks())
    ratios, naive = [], []
    for i, (now, task, s) in enumerate(events, 1):
        left.finished(task, s)
        truth = end - now
        if i < len(events) / 10 or i == len(events):
            continue
        estimate = left.seconds(now)
        naive.append(now * (len(events) - i) / i / truth)
        if truth < 0.02 * end:  # the last 2% of the run: within 2% of it in absolute terms
            assert abs(estimate - truth) <= 0.02 * end, (i, estimate, truth)
            continue
        ratios.append(estimate / truth)
    assert 0.5 <= min(ratios) and max(ratios) <= 2.0, (min(ratios), max(ratios))
    # the per-task average it replaces is off by more (the largest tasks run first)
    assert max(naive) > 2.0


def test_line_progress_says_the_models_time_left():
    from gapverify.cli.sampling import LineProgress

    events = _simulate()
    tasks = _tasks()
    out = io.StringIO()
    progress = LineProgress(stream=out, every=0.0)
    progress.start("2 claim(s)", len(tasks), len(tasks), tasks=tasks)
    model = TimeLeft(tasks)
    for now, task, s in events[:len(events) // 5]:
        progress.advance(task, s)
        model.finished(task, s)
    assert progress.time_left(10.0) == pytest.approx(model.seconds(10.0))
    assert "s left" in out.getvalue().splitlines()[-1]


def test_rich_progress_shows_the_models_time_left(monkeypatch):
    from gapverify.cli import display

    tasks = _tasks()[:20]
    bar = display.Progress()
    bar._shown = -1e9  # refresh at once
    monkeypatch.setattr(display.Progress, "__enter__", lambda self: self)
    bar.start("x", len(tasks), len(tasks), tasks=tasks)
    bar._shown = -1e9
    bar.advance(tasks[0], 1.0)
    text = bar._bar.tasks[0].fields["left"]
    assert text.startswith("about ") and text.endswith(" left")
