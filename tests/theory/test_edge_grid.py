r"""The right edge :math:`x^*_l(\gamma)` of the fixed-attention law on a grid of float
gamma (0.05..1 step 0.05) x depth 1..4, against two computations that do not use the
engine's edge search:

* the critical point of :math:`\chi(p) = p/((1+p)^{l+1}(1+\gamma p)^l)` typed in as the
  quadratic :math:`2l\gamma p^2 + (l + (l-1)\gamma)p - 1 = 0`, so
  :math:`x^* = (1+p^*)^{l+1}(1+\gamma p^*)^l/p^*` (agreement to 1e-25 relative at
  ``mp.dps`` 30: both are exact up to rounding);
* the exact moments (Lagrange inversion): a law on :math:`[0, x^*]` has
  :math:`m_{k+1}/m_k \le x^*` (rigorous: the edge is not too small), and for a
  square-root edge :math:`r_k = m_{k+1}/m_k = x^*(1 - 3/(2k) + O(k^{-2}))`, so the
  Richardson value :math:`k r_k - (k-1) r_{k-1} = x^*(1 + O(k^{-2}))` at :math:`k = 39`
  lies within 0.5% of :math:`x^*` (measured worst case 0.15% at depth 1, gamma = 0.6;
  the edge is not too large).

Before the bracketing search, 14 of these 80 points raised ``ValueError`` from
``mpmath.findroot`` (e.g. depth 2, gamma = 0.6: the failure of ``causal.depth``).
"""
from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from gapverify.theory.free_support import _SupportEdges
from gapverify.theory.layers import fixed_attention_law, x_star

GRID = [(l, k) for l in (1, 2, 3, 4) for k in range(1, 21)]


def _closed_form_edge(l: int, g: mpmath.mpf) -> mpmath.mpf:
    """x* from the positive root of 2 l g p^2 + (l + (l-1) g) p - 1 (typed in)."""
    a, b = 2 * l * g, l + (l - 1) * g
    p = (-b + mpmath.sqrt(b * b + 4 * a)) / (2 * a)
    return (1 + p) ** (l + 1) * (1 + g * p) ** l / p


@pytest.mark.parametrize("l,k", GRID)
def test_float_gamma_edge_matches_the_closed_form_critical_point(l, k):
    gamma = 0.05 * k
    with mpmath.workdps(30):
        got = x_star(l, gamma)
        want = _closed_form_edge(l, mpmath.mpf(gamma))
        assert isinstance(got, mpmath.mpf)
        assert abs(got - want) <= mpmath.mpf("1e-25") * want


@pytest.mark.parametrize("l", [1, 2, 3, 4])
def test_edge_lies_at_the_moment_growth_rate(l):
    """Rigorous bound m_{k+1}/m_k <= x* and the Richardson estimate within 0.5%."""
    for k in range(1, 21, 3):
        moments = fixed_attention_law(l, sp.Rational(k, 20)).moments(40)
        edge = float(x_star(l, 0.05 * k))
        ratios = [float(moments[j] / moments[j - 1]) for j in range(1, 40)]  # r_1..r_39
        assert max(ratios) <= edge * (1 + 1e-12)
        r39, r38 = ratios[-1], ratios[-2]
        assert 39 * r39 - 38 * r38 == pytest.approx(edge, rel=5e-3)


@pytest.mark.parametrize("gamma", [1e-3, 0.123456789, 0.987654321, 1.0])
def test_edge_search_off_the_grid(gamma):
    for l in (1, 2, 3, 4):
        with mpmath.workdps(30):
            got = x_star(l, gamma)
            want = _closed_form_edge(l, mpmath.mpf(gamma))
            assert abs(got - want) <= mpmath.mpf("1e-25") * want


def test_sign_change_bisection_for_non_rational_coefficients():
    """Coefficients in Q(sqrt 2) take the polyroots + bracket path."""
    g = sp.sqrt(2) / 2
    law = fixed_attention_law(2, g)
    with mpmath.workdps(30):
        pstar = _SupportEdges._positive_critical_numeric(law._N, law._D)
        gm = mpmath.sqrt(2) / 2
        a, b = 4 * gm, 2 + gm
        want = (-b + mpmath.sqrt(b * b + 4 * a)) / (2 * a)
        assert abs(pstar - want) <= mpmath.mpf("1e-25") * want
