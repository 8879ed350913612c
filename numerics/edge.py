r"""A spectral edge read through the top few singular values, the Tracy-Widom offset removed.

The largest squared singular value of a real ``T x d`` bulk matrix (no outlier) sits below
the law's edge :math:`x_*` by a Tracy-Widom distance: for the ``k`` largest,

.. math::

    \mathbb E\,s_k^2 = x_* + \tau_T\,\zeta_k + O(T^{-1}),\qquad \tau_T \propto T^{-2/3},

where :math:`\zeta_k` is the mean of the ``k``-th largest point of the Airy-1 point process
(real matrices, :math:`\beta = 1`; :math:`\zeta_1 = \mathbb E\,\mathrm{TW}_1 \approx -1.2065`)
and the scale :math:`\tau_T` is not universal (it depends on the law's square-root edge)
[1]_ [2]_. So the ``k`` largest values regressed on :math:`\zeta_k` give the edge as their
intercept, :math:`\hat x_* = \sum_k w_k s_k^2` with :math:`\sum_k w_k = 1`,
:math:`\sum_k w_k\zeta_k = 0`: the ``T^{-2/3}`` bias of :math:`s_1^2` cancels in the mean,
whatever :math:`\tau_T`, and :math:`\hat x_*` approaches :math:`x_*` at the order ``1/T``
left (Frobenius mass, fourth-cumulant shift of the edge). A stable rank read through it,
:math:`\|X\|_F^2/\hat x_*`, has the same limit as :math:`\|X\|_F^2/s_1^2` and a faster
approach, which is what gives the fix's stable ranks their power at ``T <= 1024``.

The :math:`\zeta_k` (:data:`AIRY1_MEANS`) are universal constants, estimated once by
``scripts/airy_means.py`` from the Dumitriu-Edelman tridiagonal model of the
:math:`\beta`-Hermite ensemble [3]_ at ``n = 10^6`` (its top ``14 n^{1/3}`` rows, where the
top eigenvectors live), rescaled as :math:`(\lambda - \sqrt{2n})\sqrt2\,n^{1/6}`.
:func:`goe_tracy_widom_mean` computes :math:`\zeta_1` independently, from Bornemann's
Fredholm determinant [4]_; the test suite checks the one against the other.

References
----------
.. [1] C. A. Tracy, H. Widom, "On orthogonal and symplectic matrix ensembles",
   Comm. Math. Phys. 177 (1996) 727.
.. [2] N. El Karoui, "Tracy-Widom limit for the largest eigenvalue of a large class of
   complex sample covariance matrices", Ann. Probab. 35 (2007) 663; K. Wang, "Random
   covariance matrices: universality of local statistics of eigenvalues up to the edge",
   Random Matrices: Theory Appl. 1 (2012) (edge universality).
.. [3] I. Dumitriu, A. Edelman, "Matrix models for beta ensembles", J. Math. Phys. 43
   (2002) 5830; A. Edelman, B. D. Sutton, "From random matrices to stochastic operators",
   J. Stat. Phys. 127 (2007) 1121.
.. [4] F. Bornemann, "On the numerical evaluation of distributions in random matrix
   theory: a review", Markov Process. Related Fields 16 (2010) 803.
"""
from __future__ import annotations


import numpy as np

from gapverify.numerics.statistics import frobenius_sq, gram, top_singular_values_by_gram

__all__ = ["AIRY1_MEANS", "AIRY1_MEANS_SE", "EDGE_K", "edge_weights", "tracy_widom_edge",
           "edge_stable_ranks", "goe_tracy_widom_mean"]

#: Means of the k largest points of the Airy-1 point process (beta = 1), k = 1..8:
#: ``python scripts/airy_means.py`` (150000 samples, seed 12; about 5 minutes). The first
#: is the exact E TW_1 = -1.206533574582 within 0.91 of its standard errors.
AIRY1_MEANS = (-1.20953, -3.26481, -4.82367, -6.16473, -7.37245, -8.48906, -9.54157,
               -10.54812)
#: Their Monte-Carlo standard errors.
AIRY1_MEANS_SE = (0.00328, 0.00263, 0.00234, 0.00217, 0.00204, 0.00195, 0.00188, 0.00183)
#: How many top values the edge is read from: the power of the fix's stable ranks was
#: measured at k = 2, 3, 4, 6, 8 (width, T <= 1024, 40 replicates, s2 = 1/4 and 1/2): for
#: X1perp and Sigma1perp 4 was best or within 0.1 percentage points of the best; for Aperp
#: 6-8 were better (0.6-0.8% against 1.3% at s2 = 1/4), not needed for its power.
EDGE_K = 4


def edge_weights(k: int = EDGE_K) -> np.ndarray:
    r"""Weights :math:`w` of the least-squares intercept of :math:`s_j^2` on
    :math:`\zeta_j`, ``j = 1..k``: :math:`\sum w_j = 1`, :math:`\sum w_j \zeta_j = 0`."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= len(AIRY1_MEANS):
        raise ValueError(f"parameter 'k' must be an integer in [2, {len(AIRY1_MEANS)}], got {k!r}")
    design = np.column_stack([np.ones(k), np.asarray(AIRY1_MEANS[:k])])
    return np.linalg.pinv(design)[0]  # first row: the intercept's weights


def tracy_widom_edge(top: np.ndarray, k: int = EDGE_K) -> float:
    r"""The edge :math:`\hat x_* = \sum_{j\le k} w_j s_j^2` from the top singular values
    ``top`` (descending, at least ``k``): unbiased for :math:`x_*` up to ``O(1/T)``."""
    top = np.asarray(top, dtype=float)
    if top.ndim != 1 or top.size < k:
        raise ValueError(f"parameter 'top' must hold at least {k} singular values, got shape {top.shape}")
    return float(edge_weights(k) @ top[:k] ** 2)  # intercept of s_j^2 against zeta_j


def edge_stable_ranks(X: np.ndarray, k: int = EDGE_K) -> tuple[float, float, float, float]:
    r"""Stable ranks of a bulk matrix ``X`` and of :math:`XX^\top`, read through
    :math:`s_1^2` and through the edge :math:`\hat x_*` (:func:`tracy_widom_edge`), from one
    Lanczos run for the ``k`` largest singular values:

    .. math::

        \Bigl(\frac{\|X\|_F^2}{s_1^2},\ \frac{\sum_i s_i^4}{s_1^4},\
        \frac{\|X\|_F^2}{\hat x_*},\ \frac{\sum_i s_i^4}{\hat x_*^2}\Bigr).

    The first two equal :func:`numerics.statistics.stable_ranks`'s. Cost as there (the
    Lanczos on the Gram matrix), its basis ``k`` vectors wider."""
    G = gram(X)  # eigenvalues s_i^2
    top = top_singular_values_by_gram(G, k)
    edge = tracy_widom_edge(top, k)
    frob, frob_G = frobenius_sq(X), frobenius_sq(G)
    return frob / top[0] ** 2, frob_G / top[0] ** 4, frob / edge, frob_G / edge**2


def goe_tracy_widom_mean(nodes: int = 64, s_range: tuple[float, float] = (-12.0, 12.0),
                         points: int = 481) -> float:
    r""":math:`\mathbb E\,\mathrm{TW}_1` from :math:`F_1(s) = \det(I - K_s)` on
    :math:`L^2(0, \infty)`, :math:`K_s(x, y) = \tfrac12\mathrm{Ai}((x+y)/2 + s)`, by
    Gauss-Legendre Nystrom discretisation on ``(0, 30)`` [4]_ (the kernel is below ``1e-14``
    beyond, wherever :math:`F_1(s) > 10^{-30}`). The mean is :math:`s_+ - \int_{s_-}^{s_+} F_1(s)\,ds` (integration by
    parts; the tails beyond ``s_range`` add below ``1e-13``), by Simpson's rule on ``points``
    nodes: ``-1.206533574582``, the value tabulated in [4]_.
    ``O(points * nodes^3)``."""
    from scipy.integrate import simpson
    from scipy.special import airy

    x, w = np.polynomial.legendre.leggauss(nodes)
    x, w = 15.0 * (x + 1.0), 15.0 * w  # nodes and weights on (0, 30)
    sw = np.sqrt(w)
    s = np.linspace(*s_range, points)
    F = np.empty_like(s)
    for i, si in enumerate(s):
        # symmetrised Nystrom matrix w^1/2 K w^1/2, K(x, y) = Ai((x + y)/2 + s)/2
        kernel = 0.5 * airy(0.5 * (x[:, None] + x[None, :]) + si)[0]
        F[i] = np.linalg.det(np.eye(nodes) - sw[:, None] * kernel * sw[None, :])
    return float(s[-1] - simpson(F, x=s))  # E X = s_+ - int F ds
