#!/usr/bin/env python3
r"""The spike model of the finite-size edge (``gapverify.theory.spike_edge``) against samples.

    OMP_NUM_THREADS=1 taskset -c 0 python scripts/spike_edge_check.py            # the table
    python scripts/spike_edge_check.py --s2 0.6931471805599453 --sizes 4096 --replicates 24
    python scripts/spike_edge_check.py --time 8192                               # one replicate timed

For each ``s2`` and ``T`` it samples ``A = softmax_rows(M)``, ``M_ij ~ N(-s2/2, s2)``, the
suite's sampler (``numerics.samplers.LogNormalEntries``), and measures
:math:`\sqrt T s_1(A^\perp)`, :math:`\sqrt T s_2(A)`, :math:`\sqrt T s_2(A^\perp)` (Lanczos,
``numerics.statistics.top_singular_values``) and the largest and second largest entries
``a_T``, ``a_(2)`` of :math:`\sqrt T A^\perp`. It prints, per size, the means +- standard
errors beside the model's :math:`\mathbb E a_T` and :math:`\mathbb E\max(e_T,
\mathrm{spike}(a_{(k)}))`, and the paired difference :math:`\sqrt T s_1(A^\perp) -
\mathrm{spike}(a_T)` (the spike map alone, given the sampled entry). Replicate ``r`` of
size ``T`` and case ``s2`` draws from ``SeedSequence(seed).spawn`` children in a fixed
order, so a run is reproducible from ``--seed``. JSON of every replicate goes to ``--out``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np

from gapverify.numerics.samplers import LogNormalEntries
from gapverify.numerics.statistics import top_singular_values
from gapverify.theory import spike_edge as se


def replicate(rng: np.random.Generator, s2: float, T: int) -> dict[str, float]:
    A = LogNormalEntries(mu=-s2 / 2, s2=s2).markov(rng, T)
    root = math.sqrt(T)
    s_A = top_singular_values(A, 2)
    B = root * (A - 1.0 / T)  # sqrt(T) Aperp
    s_B = top_singular_values(B, 2)
    top = np.partition(B.ravel(), -2)[-2:]  # the two largest entries, ascending
    return {"sqrtT_s1_Aperp": float(s_B[0]), "sqrtT_s2_Aperp": float(s_B[1]),
            "sqrtT_s2_A": float(s_A[1] * root), "a1": float(top[1]), "a2": float(top[0])}


def summary(rows: list[dict[str, float]], s2: float, T: int) -> dict[str, float]:
    kap = math.sqrt(math.expm1(s2))
    arr = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    n = len(rows)
    out = {"T": T, "n": n, "two_kappa": 2 * kap}
    for k, v in arr.items():
        out[k] = float(v.mean())
        out[k + "_se"] = float(v.std(ddof=1) / math.sqrt(n))
    paired = arr["sqrtT_s1_Aperp"] - se.spike(arr["a1"], kap)
    out["s1_minus_spike"], out["s1_minus_spike_se"] = float(paired.mean()), float(paired.std(ddof=1) / math.sqrt(n))
    out["model_a1"] = se.max_entry_mean(s2, T)
    out["model_a2"] = se.max_entry_mean(s2, T, 2)
    out["model_s1"] = se.edge_mean(s2, T)
    out["model_s2"] = se.edge_mean(s2, T, 2)
    out["bulk_edge"] = se.bulk_edge(s2, T)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--s2", type=float, nargs="+", default=[0.5, math.log(2)])
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")],
                    default=[128, 256, 512, 1024, 2048])
    ap.add_argument("--replicates", type=int, default=32)
    ap.add_argument("--seed", type=int, default=20260101)
    ap.add_argument("--out", default=None, help="JSON file for every replicate and summary")
    ap.add_argument("--time", type=int, default=None, metavar="T",
                    help="time one replicate at this T (s2 = log 2) and exit")
    args = ap.parse_args(argv)
    if args.replicates < 2:
        print("spike_edge_check: error: parameter '--replicates' must be >= 2", file=sys.stderr)
        return 2
    root = np.random.SeedSequence(args.seed)
    if args.time:
        rng = np.random.default_rng(root.spawn(1)[0])
        t0 = time.perf_counter()
        r = replicate(rng, math.log(2), args.time)
        print(json.dumps({"T": args.time, "seconds": time.perf_counter() - t0, **r}))
        return 0
    report = {"seed": args.seed, "replicates": args.replicates, "cases": {}}
    cases = root.spawn(len(args.s2))
    for s2, case_seq in zip(args.s2, cases):
        print(f"s2 = {s2:.6g}, kappa = {math.sqrt(math.expm1(s2)):.4f}, seed {args.seed}, "
              f"{args.replicates} replicates")
        print(f"{'T':>6} {'a_T':>14} {'model':>6} {'sqrtT s1(Aperp)':>17} {'model':>7} "
              f"{'sqrtT s2(A)':>16} {'s2(Aperp)':>16} {'model':>7} {'s1-spike(a_T)':>16} "
              f"{'2kappa':>7} {'sec':>5}")
        rows_by_T = {}
        for T, size_seq in zip(args.sizes, case_seq.spawn(len(args.sizes))):
            t0 = time.perf_counter()
            rows = [replicate(np.random.default_rng(g), s2, T)
                    for g in size_seq.spawn(args.replicates)]
            sm = summary(rows, s2, T)
            sm["seconds"] = time.perf_counter() - t0
            rows_by_T[T] = {"summary": sm, "replicates": rows}

            def f(k):
                return f"{sm[k]:.4f}±{sm[k + '_se']:.4f}"
            print(f"{T:>6} {f('a1'):>14} {sm['model_a1']:6.3f} {f('sqrtT_s1_Aperp'):>17} "
                  f"{sm['model_s1']:7.4f} {f('sqrtT_s2_A'):>16} {f('sqrtT_s2_Aperp'):>16} "
                  f"{sm['model_s2']:7.4f} {f('s1_minus_spike'):>16} {sm['two_kappa']:7.4f} "
                  f"{sm['seconds']:5.0f}", flush=True)
        report["cases"][repr(s2)] = rows_by_T
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(report, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
