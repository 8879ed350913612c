r"""The Tracy-Widom offset of the bulk edge: where :math:`\sqrt T s_1` sits at finite ``T``.

For a ``T x T`` real matrix with i.i.d. entries of variance :math:`\kappa^2/T`, the largest
eigenvalue of :math:`T\,XX^\top/\kappa^2` (``n = p = T``) is :math:`\mu_T + \sigma_T\,
\mathrm{TW}_1` to second order, with Johnstone's centring and scale [1]_ in Ma's
half-integer form [2]_

.. math:: \mu_T = \big(2\sqrt{T - 1/2}\big)^2,\qquad
          \sigma_T = 2\sqrt{T-1/2}\,\big(2/\sqrt{T-1/2}\big)^{1/3},

so :math:`s_1 = \kappa\sqrt{\lambda_{\max}/T}` has the mean (derived here in sympy,
:func:`edge_mean_expansion`)

.. math:: \mathbb E\,s_1 = 2\kappa + \kappa\,2^{-2/3}\zeta_1\,T^{-2/3} - \kappa/(2T)
          + O(T^{-4/3}),\qquad \zeta_1 = \mathbb E\,\mathrm{TW}_1 = -1.2065\ldots

(Bornemann [3]_). The :math:`T^{-2/3}` term, :func:`tracy_widom_offset`, is universal: it
holds for entries with four moments and the Tracy-Widom edge (edge universality, Ding
and Yang [4]_), and for the row-normalised :math:`\sqrt T A^\perp` of a Markov matrix,
whose entries are i.i.d. up to :math:`O(1/\sqrt T)` correlations. The :math:`1/T` term is
Gaussian only: the entries' fourth cumulant and the row normalisation add
:math:`O(1/T)` terms of their own, so a check subtracts the offset and leaves every
:math:`O(1/T)` term to its fitted ``c T^-r``.

Why it matters: the offset is negative and the :math:`O(1/T)` terms of
:math:`\sqrt T s_2(A)` are positive, so the mean approaches :math:`2\kappa` from below
with a local exponent under 2/3 (0.55-0.6 at :math:`s^2 = 1/4`, ``T = 128..1024``,
pooled over 25 standard root seeds), and a single :math:`L + cT^{-r}` with ``r`` in
``[2/3, 1]`` extrapolates low.

References
----------
.. [1] I. M. Johnstone, "On the distribution of the largest eigenvalue in principal
   components analysis", Ann. Statist. 29 (2001).
.. [2] Z. Ma, "Accuracy of the Tracy-Widom limits for the extreme eigenvalues in white
   Wishart matrices", Bernoulli 18 (2012), arXiv:1012.0409.
.. [3] F. Bornemann, "On the numerical evaluation of distributions in random matrix
   theory", Markov Process. Related Fields 16 (2010), arXiv:0904.1581.
.. [4] X. Ding, F. Yang, "A necessary and sufficient condition for edge universality at
   the largest singular values of covariance matrices", Ann. Appl. Probab. 28 (2018),
   arXiv:1607.06873.
"""
from __future__ import annotations

from functools import cache

import numpy as np
import sympy as sp

__all__ = ["TW1_MEAN", "johnstone_square", "edge_mean_expansion", "tracy_widom_coefficient",
           "tracy_widom_offset", "squared_edge_relative_offset"]

#: :math:`\zeta_1 = \mathbb E\,\mathrm{TW}_1`, the GOE Tracy-Widom mean, tabulated by Bornemann [3]_.
TW1_MEAN = -1.2065335745820

T_SYM = sp.Symbol("T", positive=True)
KAPPA_SYM = sp.Symbol("kappa", positive=True)
ZETA_SYM = sp.Symbol("zeta_1", real=True)


def johnstone_square(n: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    r"""Johnstone's centring and scale of :math:`\lambda_{\max}(XX^\top)` for a square
    ``n x n`` real Gaussian ``X`` (``n = p``), in Ma's half-integer form:
    :math:`\mu_n = (2\sqrt{n-1/2})^2`, :math:`\sigma_n = 2\sqrt{n-1/2}\,(2/\sqrt{n-1/2})^{1/3}`."""
    root = sp.sqrt(n - sp.Rational(1, 2))
    return (2 * root) ** 2, 2 * root * (2 / root) ** sp.Rational(1, 3)


@cache
def edge_mean_expansion(order: int = 3) -> sp.Expr:
    r""":math:`\kappa\sqrt{(\mu_T + \sigma_T\zeta_1)/T}` expanded in :math:`\epsilon =
    T^{-1/3}` to :math:`O(\epsilon^{\mathrm{order}})`, written back in ``T``:
    :math:`2\kappa + \kappa 2^{-2/3}\zeta_1 T^{-2/3} - \kappa/(2T)` at ``order = 3``."""
    eps = sp.Symbol("epsilon", positive=True)
    mu, sigma = johnstone_square(T_SYM)
    s1 = KAPPA_SYM * sp.sqrt((mu + sigma * ZETA_SYM) / T_SYM)
    series = sp.series(s1.subs(T_SYM, eps ** -3), eps, 0, order + 1).removeO()
    return sp.expand(sp.simplify(series).subs(eps, T_SYM ** sp.Rational(-1, 3)))


@cache
def tracy_widom_coefficient() -> sp.Expr:
    r"""The coefficient of :math:`T^{-2/3}` in :func:`edge_mean_expansion`, per unit
    :math:`\kappa` and :math:`\zeta_1`: :math:`2^{-2/3}`."""
    expansion = edge_mean_expansion()
    coeff = sp.simplify(sp.expand(expansion * T_SYM ** sp.Rational(2, 3)).coeff(ZETA_SYM)
                        / KAPPA_SYM)
    if coeff.free_symbols:
        raise AssertionError(f"the T^-2/3 coefficient should be a number, got {coeff}")
    return coeff


def tracy_widom_offset(kappa: float, T) -> np.ndarray:
    r""":math:`\kappa\,2^{-2/3}\zeta_1 T^{-2/3}`: the mean of :math:`\sqrt T s_1 - 2\kappa`
    to leading order (negative; vectorised in ``T``)."""
    T = np.asarray(T, dtype=float)
    if not (np.all(np.isfinite(T)) and np.all(T >= 4)):
        raise ValueError(f"parameter 'T' must be >= 4, got {T!r}")
    return kappa * float(tracy_widom_coefficient()) * TW1_MEAN * T ** (-2.0 / 3.0)


def squared_edge_relative_offset(n) -> np.ndarray:
    r""":math:`2^{-2/3}\zeta_1 n^{-2/3}`: the relative offset of the squared edge
    :math:`s_1^2` of an ``n x n`` matrix with i.i.d. entries, twice that of :math:`s_1`
    (:math:`(2 + c\,n^{-2/3})^2/4 - 1 \approx c\,n^{-2/3}` with :math:`c = 2^{-2/3}\zeta_1`).
    A product of independent squared edges (``gradient.input_jacobian``'s
    :math:`\|W_1\|_2^2\|A^\perp\|_2^2`) carries the sum of its factors' offsets to leading
    order."""
    # s_1's relative offset is tracy_widom_offset(1, n) / 2 (edge 2 at kappa = 1); doubled
    return tracy_widom_offset(1.0, n)
