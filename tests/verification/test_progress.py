"""tests for the time-left estimate of a sweep (verification/running/runner.py TimeLeft,
used by the rich Progress and LineProgress): synthetic task times, the sweep's order
(largest first) on two workers. The experiments are not in the reference table
(REFERENCE_SECONDS), as a claim file's would not be: the estimate fits their cost from their
finished tasks. The replays of real sweeps are in test_time_left_replay.py. The phase lines of ``gapverify
verify`` and ``gapverify report`` are here too (the display's: test_terminal_width.py)."""
import heapq
import io
from pathlib import Path

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


def test_verify_says_each_step_as_it_starts(tmp_path, monkeypatch, capsys):
    """``gapverify verify``: a phase line on stderr before the run, the figure and the
    report (minutes, each in a child process), with the command it runs."""
    import json

    from gapverify.cli import main, pipeline

    def step(argv):
        if argv[0] == "run":
            Path(argv[argv.index("--json") + 1]).write_text(json.dumps(
                {"claims": [{"claim": "a", "verdict": "verified"}]}))
        return 0

    monkeypatch.setattr(pipeline, "_step", step)
    assert main(["verify", "--profile", "quick", "--out", str(tmp_path / "out"),
                 "--store", str(tmp_path / "s.sqlite")]) == 0
    err = capsys.readouterr().err.splitlines()
    steps = [line for line in err if line.startswith("gapverify verify: step ")]
    assert [s.split(" (gapverify ")[0] for s in steps] == [
        "gapverify verify: step 1 of 3: sampling and judging the claims",
        "gapverify verify: step 2 of 3: drawing the paper's depth figure",
        "gapverify verify: step 3 of 3: writing the report (tables, figures, report.tex, "
        "the PDF)"]
    assert steps[2].endswith(f"--out {tmp_path / 'out'})")


def test_report_says_it_is_writing_the_report(tmp_path, monkeypatch, capsys):
    """``gapverify report``: the minute of tables and figures is a phase line with its
    seconds, not silence."""
    from types import SimpleNamespace

    from gapverify.cli import main
    from gapverify.cli import reports as report_cli
    from gapverify.reports import document

    files = SimpleNamespace(tables=[], figures=[], skipped=[], tex=tmp_path / "report.tex",
                            out_dir=tmp_path)
    monkeypatch.setattr(report_cli, "_load", lambda args: ({"claims": [{}, {}]}, None))
    monkeypatch.setattr(document, "write_report", lambda *a, **k: files)
    monkeypatch.setattr(document, "latex_status",
                        lambda: SimpleNamespace(usable=False, reason="no LaTeX here"))
    monkeypatch.setattr(document, "compile_pdf", lambda tex, status: None)
    assert main(["report", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert "gapverify: writing the report of 2 claim(s): tables, figures and report.tex ..." \
        in err
    assert any(line.startswith("gapverify: writing the report of 2 claim(s): tables, figures "
                               "and report.tex: done in ") for line in err)
