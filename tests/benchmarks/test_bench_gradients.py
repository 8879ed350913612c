r"""Benchmark: value-weight gradient norms, fast Kronecker formula vs explicit Jacobian.

Markov surrogate, fixed ``A``'s, ``T = 24``, ``d = 32``, ``L = 2`` (the explicit Jacobian
``d vec X_L / d vec W_l`` is ``(T d) x d^2 = 768 x 1024`` per ``l``). Both paths return
all ``L`` values :math:`\|\partial X_L/\partial W_\ell\|_F^2`:

* fast, :func:`numerics.gradients.value_gradient_sq_norms`,
  :math:`\|W_{\ell+1}\cdots W_L\|_F^2 \|A_L\cdots A_\ell X_{\ell-1}\|_F^2`,
  ``O(L T^2 d + L d^3)``;
* explicit, :func:`numerics.gradients.explicit_value_jacobian` for every ``l`` and its
  squared Frobenius norm, ``O(L d^2 (T^2 d + T d^2))``.

Matrices are sampled in ``setup`` (not timed). ``extra_info`` records the ratio of the
medians explicit / fast, measured by interleaved ``perf_counter`` timings on the same
matrices. Run with
``PYTHONPATH=. python3 -m pytest tests/benchmarks/test_bench_gradients.py --benchmark-enable``.
Reference: Naderi, Nait Saada, Tanner, ICML 2025, arXiv:2410.07799 (``gradient.value_frobenius``).
"""
from __future__ import annotations

import time

import numpy as np
import pytest

from gapverify.numerics.gradients import explicit_value_jacobian, value_gradient_sq_norms
from gapverify.numerics.samplers import LogNormalEntries, isometric_input

T, D, L = 24, 32, 2
ROUNDS = 30
LAW = LogNormalEntries()


def _sample(rng: np.random.Generator):
    """``(As, X0, Ws)``: Markov ``A``'s, isometric ``X0``, ``N(0, 1)`` value weights."""
    As = [LAW.markov(rng, T) for _ in range(L)]
    X0 = isometric_input(rng, T, D)
    Ws = [rng.standard_normal((D, D)) for _ in range(L)]
    return As, X0, Ws


def _explicit_sq_norms(As, X0, Ws) -> np.ndarray:
    """``||J_l||_F^2`` of the explicit Jacobian for every ``l`` (test/benchmark only)."""
    out = np.empty(len(As))
    for l in range(1, len(As) + 1):
        J = explicit_value_jacobian(As, X0, Ws, l)
        out[l - 1] = np.vdot(J, J)  # ||J||_F^2
    return out


def _paired_medians(rng: np.random.Generator, rounds: int) -> tuple[float, float]:
    """Median seconds ``(fast, explicit)`` over ``rounds`` interleaved runs, same inputs."""
    fast, explicit = [], []
    for _ in range(rounds):
        args = _sample(rng)
        t0 = time.perf_counter()
        a = value_gradient_sq_norms(*args)
        t1 = time.perf_counter()
        b = _explicit_sq_norms(*args)
        t2 = time.perf_counter()
        np.testing.assert_allclose(a, b, rtol=1e-10)
        fast.append(t1 - t0)
        explicit.append(t2 - t1)
    return float(np.median(fast)), float(np.median(explicit))


def _setup(rng: np.random.Generator):
    """A pytest-benchmark ``setup``: fresh ``(args, kwargs)`` each round (not timed)."""
    def setup():
        """``((As, X0, Ws), {})``."""
        return _sample(rng), {}
    return setup


@pytest.mark.benchmark(group="gradient")
def test_bench_value_gradient_fast(benchmark):
    rng = np.random.default_rng(40)
    out = benchmark.pedantic(value_gradient_sq_norms, setup=_setup(rng), rounds=ROUNDS,
                             warmup_rounds=2)
    assert out.shape == (L,) and np.all(out > 0)
    benchmark.extra_info.update(T=T, d=D, L=L, path="fast Kronecker formula")


@pytest.mark.benchmark(group="gradient")
def test_bench_value_gradient_explicit(benchmark):
    rng = np.random.default_rng(41)
    out = benchmark.pedantic(_explicit_sq_norms, setup=_setup(rng), rounds=ROUNDS,
                             warmup_rounds=2)
    assert out.shape == (L,) and np.all(out > 0)
    rounds = 3 if benchmark.disabled else ROUNDS
    fast_s, explicit_s = _paired_medians(np.random.default_rng(42), rounds)
    benchmark.extra_info.update(
        T=T, d=D, L=L, path="explicit (T d) x d^2 Jacobian per l",
        fast_median_s=fast_s, explicit_median_s=explicit_s,
        ratio_explicit_over_fast=explicit_s / fast_s,
    )
    assert explicit_s > fast_s
