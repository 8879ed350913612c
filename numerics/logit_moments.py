r"""First-layer key-query logits at isometric input, and their pooled moments.

The logits of one key-query layer on :math:`X_0` (:math:`X_0X_0^\top = I_T`) are
:math:`M = X_0 W^{QK} X_0^\top` (merged: exactly i.i.d. :math:`N(0, s^2)`) or
:math:`X_0 W^Q W^{K\top} X_0^\top/\sqrt{d_{qk}}` (separate heads: variance :math:`s^2`,
excess kurtosis :math:`6/d_{qk}`; claim ``kq.attention``, [1]_ Prop. 1). The network itself
is :mod:`numerics.networks`.

References
----------
.. [1] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap", ICML 2025, arXiv:2410.07799.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gapverify.numerics.networks import NetworkConfig, _as_int, attention_logits
from gapverify.numerics.samplers import isometric_input

__all__ = ["LogitMoments", "first_layer_logits", "logit_moments"]


@dataclass(frozen=True)
class LogitMoments:
    r"""Pooled sample moments of first-layer logits over ``replicates`` independent draws.

    ``mean``, ``var`` (:math:`m_2`, about the pooled mean), ``excess_kurtosis``
    (:math:`m_4 / m_2^2 - 3`), ``n`` (number of logits pooled, ``replicates * T^2``), and
    delete-one-replicate jackknife standard errors ``se_mean``, ``se_var``,
    ``se_excess_kurtosis`` (``nan`` when ``replicates == 1``). The jackknife over
    independent replicates is valid although logits within one draw are dependent.
    """

    mean: float
    var: float
    excess_kurtosis: float
    n: int
    replicates: int
    se_mean: float
    se_var: float
    se_excess_kurtosis: float


def first_layer_logits(rng: np.random.Generator, T: int, d: int, d_qk: int, s2: float,
                       separate: bool, *, init: str = "gaussian") -> np.ndarray:
    r"""First-layer key-query logits with an isometric input (``T x T``).

    .. math::

        M = X_0 W^{QK} X_0^\top \ (\text{merged; exactly i.i.d. } N(0, s^2)),\qquad
        M = X_0 W^Q W^{K\top} X_0^\top / \sqrt{d_{qk}} \ (\text{separate}),

    since :math:`\operatorname{vec} M = (X_0 \otimes X_0)\operatorname{vec} W^{QK}` and
    :math:`(X_0 \otimes X_0)(X_0 \otimes X_0)^\top = I`. Separate heads: mean 0, variance
    :math:`s_Q^2 s_K^2 = s^2` (Gaussian) or :math:`4/(d + d_{qk})^2` (Xavier), excess
    kurtosis :math:`6/d_{qk}` (claim ``kq.attention``, [1]_ Prop. 1). Draws ``X0`` then
    the weights. Cost ``O(d T^2 + T d^2)`` merged, ``O(d T^2 + T d d_qk)`` separate.
    """
    attention = "kq_separate" if separate else "kq_merged"
    config = NetworkConfig(T=T, d=d, depth=1, attention=attention, init=init, s2=s2, d_qk=d_qk)
    X0 = isometric_input(rng, config.T, config.d)
    return attention_logits(rng, config, X0, 0.0)


def logit_moments(rng: np.random.Generator, T: int, d: int, d_qk: int, s2: float,
                  separate: bool, *, replicates: int = 1, init: str = "gaussian") -> LogitMoments:
    r"""Sample mean, variance and excess kurtosis of first-layer logits.

    .. math::

        \bar M = \frac1n\sum M_{ij},\quad m_k = \frac1n \sum (M_{ij} - \bar M)^k,\quad
        \hat\kappa_4 = \frac{m_4}{m_2^2} - 3,

    pooled over ``replicates`` independent draws of ``(X0, weights)``
    (:func:`first_layer_logits`), ``n = replicates T^2``. Standard errors by the
    delete-one-replicate jackknife,
    :math:`\mathrm{se}^2 = \tfrac{R-1}{R}\sum_r (\hat\theta_{(r)} - \bar\theta)^2`
    (Efron & Stein 1981). Expected: variance :math:`s^2`, excess kurtosis 0 (merged,
    exact) or :math:`6/d_{qk}` (separate). Cost ``replicates`` times the logits' plus
    ``O(T^2)``.
    """
    R = _as_int("replicates", replicates, 1)
    sums = np.empty((R, 5))  # power sums sum M^k, k = 0..4, per replicate
    for r in range(R):
        M = first_layer_logits(rng, T, d, d_qk, s2, separate, init=init).ravel()
        M2 = M * M
        sums[r] = (M.size, M.sum(), M2.sum(), (M2 * M).sum(), (M2 * M2).sum())

    def moments(S: np.ndarray) -> np.ndarray:
        """``(mean, m2, m4/m2^2 - 3)`` from power sums ``(n, sum M, ..., sum M^4)``."""
        n, s1, s2_, s3, s4 = S
        mean = s1 / n
        e2, e3, e4 = s2_ / n, s3 / n, s4 / n
        m2 = e2 - mean**2  # central second moment
        m4 = e4 - 4 * mean * e3 + 6 * mean**2 * e2 - 3 * mean**4  # central fourth moment
        return np.array([mean, m2, m4 / m2**2 - 3.0])

    total = sums.sum(axis=0)
    est = moments(total)
    if R >= 2:
        loo = np.array([moments(total - sums[r]) for r in range(R)])  # leave one replicate out
        se = np.sqrt((R - 1) / R * np.sum((loo - loo.mean(axis=0)) ** 2, axis=0))
    else:
        se = np.full(3, np.nan)
    return LogitMoments(mean=float(est[0]), var=float(est[1]), excess_kurtosis=float(est[2]),
                        n=int(total[0]), replicates=R, se_mean=float(se[0]),
                        se_var=float(se[1]), se_excess_kurtosis=float(se[2]))
