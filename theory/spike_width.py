r"""The spike of :math:`\sqrt T A^\perp` carried one layer on: the edge of
:math:`X_1^\perp = A^\perp Y` at finite ``T``.

:math:`Y` is ``T x d`` with i.i.d. :math:`N(0, \sigma_V^2)` entries, :math:`\gamma = T/d`.
In the units of :func:`theory.layers.fixed_attention_law` (depth 1) the squared singular
values of :math:`X_1^\perp` fill a law with right edge :math:`x^*_1(\gamma)`, and
:math:`\mathrm{sr}(X_1^\perp)/T \to m_1/x^*_1`.

1. **Rotation.** Write :math:`C = \sqrt T A^\perp/\kappa = U\Sigma V^\top` and
   :math:`G = Y/(\sigma_V\sqrt d)`. ``G`` is Gaussian and independent of ``A``, so
   :math:`V^\top G` is again a ``T x d`` Gaussian matrix and :math:`CG\,G^\top C^\top` has
   the eigenvalues of :math:`\Sigma\,G'G'^\top\Sigma = \frac1d\sum_{i\le d}(\Sigma z_i)
   (\Sigma z_i)^\top`: a sample covariance matrix of ``d`` samples in dimension ``T``
   (ratio :math:`\gamma`) whose population covariance :math:`\Sigma^2` has the squared
   singular values of ``C``. Exactly, for every ``T``.
2. **Population spike.** :math:`\Sigma^2` has the law :math:`H = MP(1)` (support
   :math:`[0, 4]`: the quarter circle of radius 2, squared) and, when the largest entry
   ``a`` of :math:`\sqrt T A^\perp` exceeds :math:`\kappa`, the outlier
   :math:`\alpha = (u + 1/u)^2`, :math:`u = a/\kappa` (the spike map :math:`a + \kappa^2/a`
   of :mod:`theory.spike_edge`, over :math:`\kappa`).
3. **Sample spike** (Baik & Silverstein [1]_, Bai & Yao [2]_ for a general population law).
   A population spike :math:`\alpha` outside the support of ``H`` gives the sample outlier
   :math:`\psi(\alpha) = \alpha(1 + \gamma\int t/(\alpha - t)\,dH(t))` where
   :math:`\psi'(\alpha) > 0`, and none (the edge :math:`x^*`) where :math:`\psi' \le 0`.
   With :math:`G_H(\alpha) = 1/(u^2+1)` (:func:`width_spike_map` derives it) this is

   .. math:: \psi(u) = (u + 1/u)^2 (1 + \gamma/u^2),\qquad
             u_c^2 = \frac{1 + \sqrt{1 + 8\gamma}}{2},\qquad \psi(u_c) = x^*_1(\gamma).

   So a spike lifts the edge of :math:`X_1^\perp` only above :math:`a_c = \kappa u_c`
   (:math:`\sqrt 2\kappa` at :math:`\gamma = 1`, :math:`1.272\kappa` at :math:`\gamma = 1/2`),
   later than it lifts the edge of :math:`A^\perp` (:math:`a > \kappa`).
4. **Finite-size excess and domain** (:func:`width_excess`, :func:`t_min_width`).
   :math:`\mathrm{sr}(X_1^\perp)/T` carries the top squared singular value in its
   denominator, so its relative lift is that of the top eigenvalue,
   :math:`\mathbb E\max(x^*, \psi(a_T/\kappa))/x^* - 1`, by quadrature over the law of
   :math:`a_T` (:func:`theory.spike_edge.order_statistic_sf`). The suite's edge read
   (``numerics.edge``, the intercept of the top four :math:`s_j^2` against the Airy-1 means)
   weights :math:`s_1^2` by :math:`w_1 = 1.004`, so it carries that lift whole. The check of
   :math:`\mathrm{sr}(X_1^\perp)/T` is judged from the size on which that excess stays
   below a threshold (the registry's ``WIDTH_SPIKE_THRESHOLD``, 2%; the default here is
   the 1% of :mod:`theory.spike_edge`).

References
----------
.. [1] J. Baik, J. W. Silverstein, "Eigenvalues of large sample covariance matrices of spiked
   population models", J. Multivariate Anal. 97 (2006), arXiv:math/0408165.
.. [2] Z. Bai, J. Yao, "On sample eigenvalues in a generalized spiked population model",
   J. Multivariate Anal. 106 (2012), arXiv:0806.1141.
"""
from __future__ import annotations

import math
from functools import cache

import sympy as sp

from gapverify.theory import spike_edge
from gapverify.theory.layers import x_star_depth1_formula

__all__ = ["width_spike_map", "width_spike_identities", "width_threshold", "width_outlier",
           "width_excess", "t_min_width"]


@cache
def width_spike_map() -> tuple[sp.Symbol, sp.Symbol, sp.Expr]:
    r"""``(u, gamma, psi(u))``: the top eigenvalue of :math:`X_1^\perp{X_1^\perp}^\top` (the
    units of the module docstring) for a spike ``u = a/kappa > u_c``, derived from
    :math:`\psi(\alpha) = \alpha(1 + \gamma(\alpha G_H(\alpha) - 1))` with
    :math:`\alpha = (u + 1/u)^2` and :math:`G_H` the Stieltjes transform of :math:`MP(1)`,
    the root of :math:`\alpha G^2 - \alpha G + 1 = 0` that is :math:`\sim 1/\alpha` at infinity."""
    u, g, G, al, w = sp.symbols("u gamma G alpha w", positive=True)
    roots = sp.solve(sp.Eq(al * G**2 - al * G + 1, 0), G)
    decaying = [r for r in roots if sp.limit(r * al, al, sp.oo) == 1]
    if len(decaying) != 1:
        raise AssertionError(f"expected one decaying Stieltjes branch, got {roots}")
    alpha = ((1 + w) + 1 / (1 + w)) ** 2  # u = 1 + w > 1: square roots of squares resolve
    G_w = sp.simplify(decaying[0].subs(al, alpha).replace(
        lambda e: e.is_Pow and e.exp == sp.Rational(1, 2), lambda e: sp.sqrt(sp.factor(e.base))))
    G_u = sp.simplify(G_w.subs(w, u - 1))
    psi = sp.factor(sp.simplify((u + 1 / u) ** 2 * (1 + g * ((u + 1 / u) ** 2 * G_u - 1))))
    return u, g, psi


@cache
def width_spike_identities() -> dict[str, bool]:
    r"""Prove in sympy, for :math:`u > 1`:

    * ``stieltjes``: :math:`G_H = 1/(u^2+1)` solves the quadratic at
      :math:`\alpha = (u+1/u)^2` and is below 1/2 (the decaying branch);
    * ``closed_form``: :math:`\psi(u) = (u + 1/u)^2(1 + \gamma/u^2)`;
    * ``threshold``: :math:`\psi'(u) = 0` has the single root :math:`u_c^2 =
      (1+\sqrt{1+8\gamma})/2` above 1, where :math:`\psi` turns from decreasing to increasing;
    * ``edge``: :math:`\psi(u_c) = x^*_1(\gamma)` of :func:`theory.layers.x_star_depth1_formula`
      (checked exactly at :math:`\gamma = 1/4, 1/2, 1` and symbolically through
      :math:`p = 1/u_c^2`).
    """
    u, g, psi = width_spike_map()
    alpha = (u + 1 / u) ** 2
    Gu = 1 / (u**2 + 1)
    stieltjes = (sp.simplify(alpha * Gu**2 - alpha * Gu + 1) == 0
                 and sp.simplify(sp.Rational(1, 2) - Gu - (u**2 - 1) / (2 * (u**2 + 1))) == 0)
    closed = sp.simplify(psi - _psi_closed(u, g)) == 0
    crit = sp.solve(sp.numer(sp.together(sp.diff(psi, u))), u)
    uc = sp.sqrt((1 + sp.sqrt(1 + 8 * g)) / 2)
    above_one = [c for c in crit if sp.simplify(c - uc) == 0]
    # psi' changes sign at u_c: negative just above 1, positive at large u (gamma = 1/2)
    dpsi = sp.diff(psi, u).subs(g, sp.Rational(1, 2))
    sign_change = bool(dpsi.subs(u, sp.Rational(101, 100)) < 0 and dpsi.subs(u, 10) > 0)
    edge = all(sp.simplify(psi.subs(u, uc).subs(g, gv) - x_star_depth1_formula(gv)) == 0
               for gv in (sp.Rational(1, 4), sp.Rational(1, 2), sp.Integer(1)))
    p = sp.Symbol("p", positive=True)
    edge_symbolic = sp.simplify(_psi_closed(u, g).subs(u, 1 / sp.sqrt(p))
                                - (1 + p) ** 2 * (1 + g * p) / p) == 0
    return {"stieltjes": bool(stieltjes), "closed_form": bool(closed),
            "threshold": bool(len(above_one) == 1 and sign_change),
            "edge": bool(edge and edge_symbolic)}


def _gamma(gamma: float) -> float:
    if not (isinstance(gamma, (int, float)) and 0 < gamma <= 1):
        raise ValueError(f"parameter 'gamma' must be a number in (0, 1], got {gamma!r}")
    return float(gamma)


def width_threshold(gamma: float) -> float:
    r""":math:`u_c = \sqrt{(1 + \sqrt{1 + 8\gamma})/2}`: the spike strength ``a/kappa`` from
    which the edge of :math:`X_1^\perp` moves."""
    g = _gamma(gamma)
    return math.sqrt((1.0 + math.sqrt(1.0 + 8.0 * g)) / 2.0)


def _psi_closed(u, g):
    return (u + 1 / u) ** 2 * (1 + g / u**2)  # the closed form of item 3


@cache
def _outlier_functions():
    """``(psi, dpsi/du)`` as numpy functions of ``(u, gamma)``, from the closed form that
    :func:`width_spike_identities` proves equal to the derived map (``closed_form``)."""
    u, g = sp.symbols("u gamma", positive=True)
    psi = _psi_closed(u, g)
    return sp.lambdify((u, g), psi, "numpy"), sp.lambdify((u, g), sp.diff(psi, u), "numpy")


def width_outlier(u, gamma: float):
    r""":math:`\psi(u) = (u + 1/u)^2(1 + \gamma/u^2)`: the top eigenvalue of
    :math:`X_1^\perp{X_1^\perp}^\top` (module units) for a spike ``u = a/kappa > u_c``
    (item 3; :math:`\psi(u_c) = x^*_1(\gamma)`). Vectorised in ``u``."""
    return _outlier_functions()[0](u, gamma)


def width_excess(s2: float, gamma: float, T: float) -> float:
    r"""Relative lift of the top eigenvalue of :math:`X_1^\perp{X_1^\perp}^\top` by the
    largest entry :math:`a_T` of :math:`\sqrt T A^\perp`:

    .. math:: \frac{\mathbb E\max(x^*, \psi(a_T/\kappa))}{x^*} - 1
              = \frac1{x^*}\int_{\kappa u_c}^\infty \psi'(x/\kappa)\,\kappa^{-1}
                P(a_T > x)\,dx.
    """
    from scipy import integrate

    g = _gamma(gamma)
    kap = spike_edge._kappa(s2)
    uc = width_threshold(g)
    xs = width_outlier(uc, g)  # = x*_1(gamma), item 3
    dpsi = _outlier_functions()[1]
    _, hi = spike_edge._range(s2, spike_edge._check_T(T), 1, "self")
    if hi <= kap * uc:
        return 0.0
    sf = spike_edge.tail_of_max(s2, T)
    val, _ = integrate.quad(lambda x: dpsi(x / kap, g) / kap * sf(x), kap * uc, hi, limit=200,
                            epsabs=1e-12)
    return val / xs


def t_min_width(s2: float, gamma: float,
                threshold: float = spike_edge.DEFAULT_THRESHOLD) -> int:
    r"""The smallest ``T`` (``>= 16``) from which :func:`width_excess` stays at most
    ``threshold`` (default 1%, that of :func:`theory.spike_edge.t_min`): where the check of
    :math:`\mathrm{sr}(X_1^\perp)/T` is judged."""
    _gamma(gamma)
    if not (isinstance(threshold, (int, float)) and 0 < threshold < 1):
        raise ValueError(f"parameter 'threshold' must be in (0, 1), got {threshold!r}")
    return spike_edge.first_size_below(
        lambda T: width_excess(s2, gamma, T) - threshold,
        f"the spike excess of X1perp stays above {threshold} up to T = 2^40 at s2 = {s2}")
