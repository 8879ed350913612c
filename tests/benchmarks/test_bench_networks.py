r"""Benchmarks of the forward passes: a standard network and its fixed twin drawn once,
against two passes; and the first layer's :math:`X_0 W_1` drawn whole, against ``X0`` and
``W_1``.

``depth.network``'s and ``gradient.value``'s draws hold a standard network and the same
network with :math:`A_\ell^\perp = A_\ell - \tfrac1T\mathbf 1\mathbf 1^\top` at every
layer, on the same draws. Two ways to get both:

* twins, :func:`numerics.forward_pass.forward_twins`: every layer's logits and ``W_l``, the
  first layer's ``X_0 W_1`` and the chain ``X_0 W_1 \cdots W_l``, computed once;
* two passes, :func:`numerics.forward_pass.forward` on two generators seeded alike: all of it
  twice.

The same numbers either way, to rounding (the twins take the products in another order;
1e-12 relative, asserted every round). A Markov network that keeps no matrices
draws :math:`X_0 W_1` as one ``T x d`` Gaussian (its law; no QR of a ``d x T`` Gaussian and
no ``d x d`` ``W_1``); ``keep_matrices=True`` draws ``X0`` and ``W_1``, and times the old way.

``extra_info`` records the median of each over interleaved ``perf_counter`` rounds on fresh
seeds and their ratio. Full size (``make bench``): ``depth.stable_rank``'s standard depth-2
case at its largest size, ``T = 724``, ``gamma = 1/2`` (``d = 1448``), ``s2 = 0.35``, read
through the edge as ``numerics.experiments.depth_network`` does, and its depth-1 case for the
first product; the default test run times ``T = 64`` once.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest

from gapverify.numerics.forward_pass import forward, forward_twins
from gapverify.numerics.networks import NetworkConfig

ROUNDS = 5


def _config(T: int, depth: int = 2) -> NetworkConfig:
    return NetworkConfig.from_gamma(T, 0.5, depth, s2=0.35)


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

    def same_numbers(twin, passes):
        for a, b in zip(twin, passes):
            assert np.allclose(a.sr_Sigma, b.sr_Sigma, rtol=1e-12, atol=0.0)
            assert np.allclose(a.sr_X_edge_over_T, b.sr_X_edge_over_T, rtol=1e-12, atol=0.0,
                               equal_nan=True)

    twins, passes = _interleaved(
        rounds, lambda seed: forward_twins(np.random.default_rng(seed), config, edge=True),
        lambda seed: _two_passes(seed, config), same_numbers)
    benchmark.extra_info.update(
        T=T, d=config.d, depth=config.depth, twins_median_s=twins, two_passes_median_s=passes,
        ratio_twins_over_two_passes=twins / passes)


@pytest.mark.benchmark(group="networks")
def test_bench_first_product_drawn_whole(benchmark, benchmarking):
    T, rounds = (724, ROUNDS) if benchmarking else (64, 1)
    config = dataclasses.replace(_config(T, depth=1), fixed=True)
    seeds = iter(range(10_000))
    out = benchmark.pedantic(lambda: forward(np.random.default_rng(next(seeds)), config, edge=True),
                             rounds=rounds, warmup_rounds=0)
    assert out.X0 is None and np.isfinite(out.sr_Sigma_edge_over_T[-1])

    def drew_x0(whole, kept):
        assert whole.X0 is None and kept.X0 is not None  # only the second drew the QR and W_1

    whole, kept = _interleaved(
        rounds, lambda seed: forward(np.random.default_rng(seed), config, edge=True),
        lambda seed: forward(np.random.default_rng(seed), config, edge=True, keep_matrices=True),
        drew_x0)
    benchmark.extra_info.update(
        T=T, d=config.d, depth=config.depth, whole_median_s=whole, x0_and_w1_median_s=kept,
        ratio_whole_over_x0_and_w1=whole / kept)


def _interleaved(rounds: int, new, old, check) -> tuple[float, float]:
    """Median seconds of ``new(seed)`` and ``old(seed)``, timed alternately on the seeds
    ``100, 101, ...`` (the same seed each way); ``check(new_out, old_out)`` every round."""
    new_s, old_s = [], []
    for seed in range(100, 100 + rounds):
        t0 = time.perf_counter()
        a = new(seed)
        t1 = time.perf_counter()
        b = old(seed)
        t2 = time.perf_counter()
        check(a, b)
        new_s.append(t1 - t0)
        old_s.append(t2 - t1)
    return float(np.median(new_s)), float(np.median(old_s))
