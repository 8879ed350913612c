"""Time one draw of every built-in experiment against its cost record.

    python scripts/experiment_times.py                      # every default claim, quick sizes
    python scripts/experiment_times.py kq.attention --profile standard

For each claim's first case, one draw at its smallest, middle and largest size of the
profile is repeated for about ``--seconds`` (after one warm-up draw), and the mean seconds
are printed beside the experiment's reference seconds (``a + b T^2 + c T^3`` of its
record, :mod:`gapverify.numerics.experiment_record`). A draw far below its record points
at a stale record (refit it: ``scripts/replay_time_left.py STORE --calibrate``); far above,
at work a draw repeats that it need not (``variants.*`` once spent 45-84 ms of a 50-90 ms
draw in a quadrature whose value is the same for every draw). Run it with
``OMP_NUM_THREADS=1`` on an idle machine: the records are per worker on 2 cores.
"""
from __future__ import annotations

import argparse
import time
from typing import Sequence

import numpy as np


def main(argv: Sequence[str] | None = None) -> int:
    from gapverify.numerics.experiments import RECORDS
    from gapverify.verification.claims.registry import default_claim_ids
    from gapverify.verification.running.planning import plan_run
    from gapverify.verification.running.suite import RunOptions

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("claims", nargs="*", help="claim ids (default: every default claim)")
    ap.add_argument("--profile", default="quick", choices=("quick", "standard"))
    ap.add_argument("--seconds", type=float, default=0.4, help="time per size (default 0.4)")
    args = ap.parse_args(argv)
    plan = plan_run(RunOptions(claims=list(args.claims or default_claim_ids()),
                               profile=args.profile))
    seen = set()
    for job in plan.jobs:
        record = RECORDS.get(job.claim.experiment)
        if job.claim_id in seen or record is None:
            continue
        seen.add(job.claim_id)
        sizes, rng, cells = job.profile.sizes, np.random.default_rng(0), []
        for T in sorted({sizes[0], sizes[len(sizes) // 2], sizes[-1]}):
            record(rng, T, job.sampling)  # warm-up: imports, caches
            start, draws = time.perf_counter(), 0
            while time.perf_counter() - start < args.seconds:
                record(rng, T, job.sampling)
                draws += 1
            mean = (time.perf_counter() - start) / draws
            cells.append(f"T={T}: {1e3 * mean:.1f} ms (record {1e3 * record.reference_seconds(T):.1f})")
        print(f"{job.claim_id:26s} " + " | ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
