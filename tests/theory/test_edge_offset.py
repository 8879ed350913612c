"""tests for theory/edge_offset.py: the Tracy-Widom offset of the edge, derived and sampled."""
import math

import numpy as np
import pytest
import sympy as sp

from gapverify.theory import edge_offset as eo


def test_the_expansion_of_johnstones_centring_and_scale():
    T, k, z = eo.T_SYM, eo.KAPPA_SYM, eo.ZETA_SYM
    expected = 2 * k + k * 2 ** sp.Rational(-2, 3) * z * T ** sp.Rational(-2, 3) - k / (2 * T)
    assert sp.simplify(eo.edge_mean_expansion() - expected) == 0
    assert sp.simplify(eo.tracy_widom_coefficient() - 2 ** sp.Rational(-2, 3)) == 0


def test_the_offset_scales_with_kappa_and_decays_like_T_to_the_minus_two_thirds():
    off = eo.tracy_widom_offset(0.5, np.array([64.0, 512.0]))
    assert np.all(off < 0)
    assert off[0] / off[1] == pytest.approx(8 ** (2 / 3), rel=1e-12)
    assert eo.tracy_widom_offset(1.0, 64.0) == pytest.approx(2 * float(eo.tracy_widom_offset(0.5, 64.0)))
    with pytest.raises(ValueError, match="'T'"):
        eo.tracy_widom_offset(1.0, 2.0)


@pytest.mark.parametrize("T", [96, 192])
def test_a_gaussian_matrix_has_its_edge_where_the_expansion_puts_it(T):
    """Mean of s_1(G), G T x T with i.i.d. N(0, 1/T), against 2 + offset - 1/(2T) within
    4 standard errors plus the O(T^-4/3) remainder (taken as |offset| T^-2/3); the plain
    edge 2, the offset at T^-1/2, and the offset 25% smaller are each rejected by the same
    draws (measured: the expansion -0.2 and 0.1 se away; the wrong ones 26-27, 30-39 and
    6.7-6.8 se, against a tolerance of 4.8-5.3 se)."""
    rng = np.random.default_rng(20261202 + T)
    n = 800
    s1 = np.array([np.linalg.norm(rng.standard_normal((T, T)) / math.sqrt(T), 2) for _ in range(n)])
    mean, se = float(s1.mean()), float(s1.std(ddof=1) / math.sqrt(n))
    off = float(eo.tracy_widom_offset(1.0, T))
    tol = 4 * se + abs(off) * T ** (-2 / 3)

    def predicted(offset):
        return 2 + offset - 1 / (2 * T)

    assert abs(mean - predicted(off)) <= tol, (mean, predicted(off), tol)
    wrong = {"no offset": predicted(0.0),
             "T^-1/2": predicted(off * T ** (2 / 3) * T ** -0.5),
             "25% smaller": predicted(0.75 * off)}
    for name, value in wrong.items():
        assert abs(mean - value) > tol, name
