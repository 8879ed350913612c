#!/usr/bin/env python3
"""The prepared GPU check of issue 11: one command, under 10 minutes on one H200.

    python scripts/gpu_check.py                # torch on cuda, float64, the gpu profile
    python scripts/gpu_check.py --dtype float32
    python scripts/gpu_check.py --dry-run      # CPU torch, tiny sizes (what the test runs)

For markov.outliers (T = 1024 .. 65536) and width.stable_rank (T = 1024 .. 32768), one
after the other, it runs

    gapverify run CLAIM --profile gpu --backend torch --device cuda --store OUT/gpu.sqlite

(each with what is left of ``--budget`` seconds, 420 by default; a run cut short keeps
what it stored in ``--store``, by default ``build/gpu_check/gpu.sqlite``, a path git
ignores, so the same command resumes it), then prints

* the seconds per task at every size (median over replicates, read from the store), and
  those at T = 16384 and 65536 (width: 16384 and 32768, its largest);
* the ratio numpy / torch at T = 4096: one replicate of the numpy path timed on the CPU in
  this script (one BLAS thread, the suite's policy) against the median torch task there;
* the claim and check verdicts.

Everything also goes to OUT/gpu_check.json (``--out``, default ``$OUT``, else
``build/gpu_check``). Needs torch with CUDA and array-api-compat (``pip install -e
'.[gpu]'``). Memory: A is T^2 numbers, 32 GiB at T = 65536
in float64 (16 GiB in float32), then markov.outliers' Ginibre reference G (the same size,
drawn after A is freed); width.stable_rank at T = 32768, gamma = 1/2 holds A (8 GiB),
Y and A Y (16 GiB each).
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CLAIMS = ("markov.outliers", "width.stable_rank")
REPORT_T = {"markov.outliers": (16384, 65536), "width.stable_rank": (16384, 32768)}


def _args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    p.add_argument("--out", default=os.environ.get("OUT", str(ROOT / "build" / "gpu_check")),
                   help="folder for gpu_check.json and the runs' JSON (default: $OUT, else "
                        "build/gpu_check)")
    p.add_argument("--store", default=str(ROOT / "build" / "gpu_check" / "gpu.sqlite"),
                   help="store of the runs (kept between calls: a rerun resumes)")
    p.add_argument("--budget", type=float, default=420.0,
                   help="seconds for the two runs together (default 420; the numpy timings "
                        "at --numpy-T come after, about a minute on one core)")
    p.add_argument("--numpy-T", type=int, default=4096, help="size of the numpy comparison")
    p.add_argument("--sizes", default=None, help="T1,T2,... instead of the gpu profile's")
    p.add_argument("--replicates", default=None, help="instead of the gpu profile's 4")
    p.add_argument("--dry-run", action="store_true",
                   help="CPU torch, sizes 64,91,128,181, 2 replicates, numpy at T = 128")
    a = p.parse_args(argv)
    if a.dry_run:
        a.device, a.sizes, a.replicates, a.numpy_T = "cpu", "64,91,128,181", "2", 128
        a.budget = min(a.budget, 300.0)
        a.store = str(Path(a.out) / "gpu.sqlite")
    return a


def _environment(device: str) -> dict:
    import numpy
    import torch

    env = {"python": sys.version.split()[0], "numpy": numpy.__version__, "torch": torch.__version__,
           "cuda_available": torch.cuda.is_available(), "cpu_count": os.cpu_count()}
    if device == "cuda" and torch.cuda.is_available():
        free, total = torch.cuda.mem_get_info()
        env.update(gpu=torch.cuda.get_device_name(0), gpu_memory_gib=round(total / 2**30, 1),
                   gpu_free_gib=round(free / 2**30, 1))
    return env


def _run_claim(claim: str, a, store: Path, seconds_left: float) -> dict:
    out = Path(a.out) / f"{claim}.json"
    cmd = [sys.executable, "-m", "gapverify", "run", claim, "--profile", "gpu",
           "--backend", "torch", "--device", a.device, "--dtype", a.dtype, "--store", str(store),
           "--json", str(out), "--workers", "1", "--no-replay"]
    if a.sizes:
        cmd += ["--sizes", a.sizes]
    if a.replicates:
        cmd += ["--replicates", a.replicates]
    print("$", " ".join(cmd[2:]), flush=True)
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                              timeout=max(1.0, seconds_left))
        code, tail = proc.returncode, (proc.stdout + proc.stderr)[-3000:]
    except subprocess.TimeoutExpired:
        code, tail = None, f"cut short after {seconds_left:.0f} s (budget); rerun to resume"
    wall = time.perf_counter() - start
    print(tail, flush=True)
    doc = json.loads(out.read_text()) if code is not None and out.exists() else None
    return {"exit": code, "wall_s": round(wall, 1), "results": doc}


def _times(store: Path, experiment: str) -> dict[int, list[float]]:
    if not store.exists():
        return {}
    con = sqlite3.connect(store)
    rows = con.execute("SELECT T, seconds FROM measurements WHERE experiment=? AND params LIKE "
                       "'%\"backend\": \"torch\"%'", (experiment,)).fetchall()
    out: dict[int, list[float]] = {}
    for T, s in rows:
        out.setdefault(int(T), []).append(float(s))
    return out


def _numpy_seconds(experiment: str, T: int) -> float:
    """One replicate of the numpy path at T, first case of the gpu profile, one BLAS thread."""
    from gapverify.numerics.experiments import EXPERIMENTS
    from gapverify.verification.claims.registry import get_claim
    from gapverify.verification.running.runner import stream, task_limits

    task_limits()
    case = get_claim(experiment).cases_for("gpu")[0]
    start = time.perf_counter()
    EXPERIMENTS[experiment](stream(experiment, T, 0, 1), T, case)
    return time.perf_counter() - start


def main(argv=None) -> int:
    a = _args(argv)
    Path(a.out).mkdir(parents=True, exist_ok=True)
    store = Path(a.store)
    store.parent.mkdir(parents=True, exist_ok=True)
    report = {"device": a.device, "dtype": a.dtype, "environment": _environment(a.device),
              "claims": {}}
    print(json.dumps(report["environment"]), flush=True)
    deadline = time.monotonic() + a.budget
    for claim in CLAIMS:
        report["claims"][claim] = _run_claim(claim, a, store, deadline - time.monotonic())
    print("\n=== seconds per task (median over replicates), torch on", a.device, a.dtype)
    for claim in CLAIMS:
        times = _times(store, claim)
        info = report["claims"][claim]
        info["seconds_per_size"] = {T: round(statistics.median(v), 4)
                                    for T, v in sorted(times.items())}
        print(claim + ":")
        for T, v in sorted(times.items()):
            print(f"  T = {T:6d}: {statistics.median(v):9.3f} s  ({len(v)} tasks)")
        for T in REPORT_T[claim]:
            s = info["seconds_per_size"].get(T)
            print(f"  time at T = {T}: {'not reached' if s is None else f'{s:.3f} s'}")
        nT = a.numpy_T
        if nT in times:
            t_np = _numpy_seconds(claim, nT)
            ratio = t_np / statistics.median(times[nT])
            info["numpy"] = {"T": nT, "numpy_s": round(t_np, 3), "ratio": round(ratio, 2)}
            print(f"  ratio numpy(cpu, 1 BLAS thread) / torch({a.device}) at T = {nT}: "
                  f"{t_np:.3f} s / {statistics.median(times[nT]):.3f} s = {ratio:.1f}x")
        else:
            print(f"  ratio at T = {nT}: no torch task at that size")
    print("\n=== verdicts")
    for claim in CLAIMS:
        doc = report["claims"][claim]["results"]
        if doc is None:
            print(f"{claim}: no verdict (run cut short or failed: exit "
                  f"{report['claims'][claim]['exit']})")
            continue
        for c in doc["claims"]:
            print(f"{c['claim']}: verdict {c['verdict']} ({c['power_summary']})")
            for k in c["checks"]:
                print(f"  {k['label']}: {k['verdict']}")
    (Path(a.out) / "gpu_check.json").write_text(json.dumps(report, indent=2, default=str))
    return 0 if all(report["claims"][c]["exit"] in (0, 3) for c in CLAIMS) else 1


if __name__ == "__main__":
    sys.exit(main())
