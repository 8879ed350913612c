#!/usr/bin/env python3
r"""The spike of :math:`\sqrt T A^\perp` carried to :math:`X_1^\perp = A^\perp Y`
(``gapverify.theory.spike_width``) against samples.

    python scripts/spike_width_check.py                          # s2 = 1/2, gamma = 1/2
    python scripts/spike_width_check.py --s2 0.25 --gamma 1 --sizes 64,128 --replicates 100

Per size it samples ``A`` with the suite's sampler (``numerics.samplers.LogNormalEntries``,
``mu = -s2/2``) and ``G`` (``T x d``, ``d = T/gamma``, variance ``1/d``), and measures the
top eigenvalue :math:`\lambda_1` of :math:`CGG^\top C^\top`, :math:`C = \sqrt T A^\perp/\kappa`
(the units of ``theory.layers``, depth 1, edge :math:`x^*_1(\gamma)`) and ``u = a_T/kappa``,
the largest entry of ``C``. It prints the fraction of draws with ``u > u_c`` against the
entry law's, the mean lift :math:`\lambda_1/x^* - 1` of those draws against the model's
:math:`\psi(u)/x^* - 1`, and of the others, and the model's mean excess
(:func:`~gapverify.theory.spike_width.width_excess`). Replicate ``r`` of size ``T`` draws from
``SeedSequence(seed).spawn`` children in a fixed order: reproducible from ``--seed``.
"""
from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from gapverify.numerics.samplers import LogNormalEntries
from gapverify.theory import spike_edge, spike_width


def replicate(rng: np.random.Generator, s2: float, gamma: float, T: int) -> tuple[float, float]:
    kappa, d = math.sqrt(math.expm1(s2)), int(round(T / gamma))
    C = math.sqrt(T) * (LogNormalEntries(mu=-s2 / 2, s2=s2).markov(rng, T) - 1.0 / T) / kappa
    G = rng.standard_normal((T, d)) / math.sqrt(d)
    return float(C.max()), float(np.linalg.svd(C @ G, compute_uv=False)[0] ** 2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--s2", type=float, default=0.5)
    ap.add_argument("--gamma", type=float, default=0.5)
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[256, 512])
    ap.add_argument("--replicates", type=int, default=300)
    ap.add_argument("--seed", type=int, default=20261202)
    args = ap.parse_args(argv)
    if args.replicates < 2:
        print("spike_width_check: error: parameter '--replicates' must be >= 2", file=sys.stderr)
        return 2
    uc = spike_width.width_threshold(args.gamma)
    xs = spike_width.width_outlier(uc, args.gamma)  # = x*_1(gamma)
    kappa = math.sqrt(math.expm1(args.s2))
    children = iter(np.random.SeedSequence(args.seed).spawn(len(args.sizes) * args.replicates))
    print(f"s2 = {args.s2}, gamma = {args.gamma}: u_c = {uc:.4f}, x* = {xs:.4f}")
    print("     T   spiked (model)   lift spiked (model)   lift others   mean excess (model)")
    for T in args.sizes:
        u, lam = np.array([replicate(np.random.default_rng(next(children)), args.s2,
                                     args.gamma, T) for _ in range(args.replicates)]).T
        spiked = u > uc
        model_p = float(spike_edge.order_statistic_sf(kappa * uc, args.s2, T))
        lift = lam[spiked].mean() / xs - 1 if spiked.any() else math.nan
        model_lift = spike_width.width_outlier(u[spiked], args.gamma).mean() / xs - 1 if spiked.any() else math.nan
        print(f"{T:6d}   {spiked.mean():5.3f} ({model_p:5.3f})   {lift:+7.4f} ({model_lift:+7.4f})"
              f"      {lam[~spiked].mean() / xs - 1:+7.4f}     "
              f"{lam.mean() / lam[~spiked].mean() - 1:+7.4f} "
              f"({spike_width.width_excess(args.s2, args.gamma, T):.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
