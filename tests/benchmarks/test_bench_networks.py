r"""Benchmark: a standard network and its fixed twin drawn once, against two passes.

``depth.network``'s and ``gradient.value``'s draws hold a standard network and the same
network with :math:`A_\ell^\perp = A_\ell - \tfrac1T\mathbf 1\mathbf 1^\top` at every
layer, on the same draws. Two ways to get both:

* twins, :func:`numerics.forward_pass.forward_twins`: ``X0`` (a QR of a ``d x T`` Gaussian),
  every layer's logits and ``W_l``, and the first layer's ``X_0 W_1`` computed once;
* two passes, :func:`numerics.forward_pass.forward` on two generators seeded alike: all of it
  twice.

The same numbers either way (asserted every round). ``extra_info`` records the median of
each over interleaved ``perf_counter`` rounds on fresh seeds and their ratio. Full size
(``make bench``): ``depth.stable_rank``'s standard depth-2 case at its largest size,
``T = 724``, ``gamma = 1/2`` (``d = 1448``), ``s2 = 0.35``, both read through the edge as
``numerics.experiments.depth_network`` does; the default test run times ``T = 64`` once.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest

from gapverify.numerics.forward_pass import forward, forward_twins
from gapverify.numerics.networks import NetworkConfig

ROUNDS = 5


def _config(T: int) -> NetworkConfig:
    return NetworkConfig.from_gamma(T, 0.5, 2, s2=0.35)


def _two_passes(seed: int, config: NetworkConfig):
    fixed = dataclasses.replace(config, fixed=True)
    return (forward(np.random.default_rng(seed), config),
            forward(np.random.default_rng(seed), fixed, edge=True))


@pytest.mark.benchmark(group="networks")
def test_bench_twin_networks_against_two_passes(benchmark, benchmarking):
    T, rounds = (724, ROUNDS) if benchmarking else (64, 1)
    config = _config(T)
    seeds = iter(range(10_000))
    out = benchmark.pedantic(lambda: forward_twins(np.random.default_rng(next(seeds)), config,
                                                   edge=True), rounds=rounds, warmup_rounds=0)
    assert np.isfinite(out[1].sr_Sigma_edge_over_T[-1])
    twins_s, passes_s = [], []
    for seed in range(100, 100 + rounds):  # interleaved, the same seed each way
        t0 = time.perf_counter()
        twin = forward_twins(np.random.default_rng(seed), config, edge=True)
        t1 = time.perf_counter()
        passes = _two_passes(seed, config)
        t2 = time.perf_counter()
        for a, b in zip(twin, passes):
            assert np.array_equal(a.sr_Sigma, b.sr_Sigma)
            assert np.array_equal(a.sr_X_edge_over_T, b.sr_X_edge_over_T, equal_nan=True)
        twins_s.append(t1 - t0)
        passes_s.append(t2 - t1)
    benchmark.extra_info.update(
        T=T, d=config.d, depth=config.depth, twins_median_s=float(np.median(twins_s)),
        two_passes_median_s=float(np.median(passes_s)),
        ratio_twins_over_two_passes=float(np.median(twins_s) / np.median(passes_s)))
