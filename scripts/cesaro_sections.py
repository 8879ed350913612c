#!/usr/bin/env python3
"""The finite sections of the Cesaro matrix far beyond the sampled sizes, and the model
family that judges ``causal.cesaro`` ``s1_mean`` fitted to them.

    python scripts/cesaro_sections.py                 # T = 64 .. 2^22 (about 15 s)
    python scripts/cesaro_sections.py --max-log2 25   # T up to 2^25 (about 2 min, 2 GiB)

``s_1(C_T)`` is deterministic: Lanczos on the matrix-free operator (``O(T)`` per product,
:func:`numerics.causal.cesaro_top_singular_value`) on the sizes ``2^(k/2)``. For each
window of sizes the three finite-size models of the check
(``verification.claims.registry.causal._SECTION_MODELS``) are fitted to the values alone, as
the verdict fits them to the sampled sizes' means, and the union of their intervals
(:func:`verification.judging.inference.family_limit`, at the quantile of 10 tests at level 0.01)
is printed with whether it holds 2 and whether it rejects 2 (1 +- 3%).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from gapverify.numerics.causal import cesaro_top_singular_value
from gapverify.verification.judging.inference import family_limit, two_sided_quantile
from gapverify.verification.claims.registry.causal import _SECTION_MODELS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-log2", type=int, default=22, help="largest size 2^N (default 22)")
    args = ap.parse_args()
    if not 10 <= args.max_log2 <= 27:
        ap.error(f"parameter '--max-log2' must be in [10, 27], got {args.max_log2}")
    sizes = [int(round(2 ** (h / 2))) for h in range(12, 2 * args.max_log2 + 1)]
    start = time.perf_counter()
    s = np.array([cesaro_top_singular_value(T) for T in sizes])
    print(f"s_1(C_T) at {len(sizes)} sizes, T = {sizes[0]} .. {sizes[-1]}, in "
          f"{time.perf_counter() - start:.1f} s; s_1(C_{sizes[-1]}) = {s[-1]:.10f}")
    q = two_sided_quantile(0.01, 10)
    T = np.array(sizes, dtype=float)
    print(f"{'window':>22}  " + "  ".join(f"{m.name:>16}" for m in _SECTION_MODELS)
          + "   union of intervals      holds 2  rejects 2(1+-3%)")
    lows = [64, 1024, 8192, 65536]
    for lo in lows:
        for hi in (512, 2 ** 14, 2 ** 19, sizes[-1]):
            keep = (T >= lo) & (T <= hi)
            if hi <= lo or keep.sum() < 5:
                continue
            fam = family_limit(T[keep], s[keep], np.zeros(keep.sum()), _SECTION_MODELS, q)
            fits = "  ".join(f"{L:16.6f}" for _, L, _ in fam.fits)
            print(f"{lo:>10} .. {hi:<9}  {fits}   [{fam.low:.5f}, {fam.high:.5f}]  "
                  f"{'yes' if fam.accepts(2.0) else 'NO':>7}  "
                  f"{'yes' if not fam.accepts(2.06) and not fam.accepts(1.94) else 'NO':>16}")


if __name__ == "__main__":
    main()
