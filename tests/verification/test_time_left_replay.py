"""tests for the time-left estimate (verification/running/runner.py TimeLeft) on recorded
real sweeps: each task's experiment, size, seconds and time of storing, replayed in the
order the sweep stored them (scripts/replay_time_left.py; the clock at a task is its
``created`` counted from the sweep's start).

Fixtures (tests/verification/data, written by ``scripts/replay_time_left.py STORE --csv``):
- ``sweep_standard_2026-12-01.csv.gz``: ``make verify`` of 2026-12-01, 18 claims, 22 444
  tasks, 975.6 s on 2 cores. The reference table REFERENCE_SECONDS was fitted on this very
  sweep, so it checks the model's arithmetic more than its power to predict;
- ``sweep_quick_2026-12-01.csv.gz``: a quick-profile run of the same day (``gapverify run
  --profile quick --workers 2``, 6 896 tasks, 884 s, other sizes and replicates, an
  earlier code version, a shared machine): held out from the table.

The issue's target (issue 22): within a factor 2 of the truth once a tenth of the tasks is
done; in the run's last 2% (a ratio of two near-zero times means nothing) within 2% of
the run's time instead. The model it replaced fails it (0.38 of the truth at a tenth of
the standard sweep).
"""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"


def _script():
    spec = importlib.util.spec_from_file_location(
        "replay_time_left", ROOT / "scripts" / "replay_time_left.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def replay():
    return _script()


#: The reference seconds of the experiments whose code has changed since the fixtures'
#: sweeps ran (2026-12-01), as fitted on the standard sweep then. ``variants.*``: their
#: draws then paid 45-84 ms of quadrature each (``moments_float``, cached since 2026-12-03,
#: when the records were refitted to 2-3 ms). The four network experiments: their records
#: were scaled by measured speed-ups since (twin networks drawn once, then ``X_0 W_1``
#: drawn whole; docs/performance.md, 2026-12-07): with the faster records the quick replay
#: read 2.11 times the truth at a tenth. The replay judges the time-left model on those
#: sweeps, so it is given the costs of the code that made them.
SWEEP_SECONDS = {"variants.relu": (0.0447, 3.54e-07, 0.0),
                 "variants.sigmoid": (0.0837, 2.11e-07, 2.07e-10),
                 "variants.linear": (0.0715, 4.23e-07, 0.0),
                 "depth.network": (0.00252, 6.55e-07, 1.08e-09),
                 "gradient.value": (0.00237, 4.08e-07, 2.31e-09),
                 "causal.depth": (0.00433, 4.27e-07, 1.32e-09),
                 "variants.normalization": (0.0156, 1.25e-06, 6.29e-09)}


@pytest.fixture(autouse=True)
def costs_of_the_sweeps(monkeypatch):
    import dataclasses

    from gapverify.numerics.experiments import RECORDS

    for name, seconds in SWEEP_SECONDS.items():
        monkeypatch.setitem(RECORDS, name, dataclasses.replace(RECORDS[name], seconds=seconds))


def _judge(replay, name, model=None):
    rows = replay.load(str(DATA / name))
    end = rows[-1][3] - rows[0][3] + rows[0][2]
    points = replay.replay(rows, model or replay.TimeLeft, every=max(1, len(rows) // 400))
    return replay.judge(points, end)


@pytest.mark.parametrize("name", ["sweep_standard_2026-12-01.csv.gz",
                                  "sweep_quick_2026-12-01.csv.gz"])
def test_time_left_is_within_a_factor_two_from_a_tenth_on_real_sweeps(replay, name):
    j = _judge(replay, name)
    assert 0.5 <= j["min"] and j["max"] <= 2.0, (j["min"], j["max"], j["at"])
    assert j["late"] <= 0.02, j["late"]


def test_the_model_it_replaced_fails_the_same_replay(replay):
    """The check can fail: the per-experiment ``c T^p`` fit (OldTimeLeft) said 235 s at a
    tenth of the standard sweep, when 613 s were left."""
    j = _judge(replay, "sweep_standard_2026-12-01.csv.gz", replay.OldTimeLeft)
    assert j["min"] < 0.5, j
    assert j["at"][0.1] == pytest.approx(235 / 613, abs=0.02)


def test_fixture_is_the_recorded_sweep(replay):
    """The standard fixture is the whole sweep, in the order it was stored."""
    rows = replay.load(str(DATA / "sweep_standard_2026-12-01.csv.gz"))
    assert len(rows) == 22444
    assert len({r[0] for r in rows}) == 17
    assert rows[-1][3] - rows[0][3] + rows[0][2] == pytest.approx(975.6, abs=0.1)
    assert all(a[3] <= b[3] for a, b in zip(rows, rows[1:]))
