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


def test_a_squared_edge_carries_twice_the_relative_offset():
    # (2 + o)^2 / 4 - 1 = o + o^2/4 with o = tracy_widom_offset(1, n): equal to first order
    n = np.array([4096.0, 2.0**20])
    o = eo.tracy_widom_offset(1.0, n)
    exact = (2 + o) ** 2 / 4 - 1
    got = eo.squared_edge_relative_offset(n)
    assert got == pytest.approx(exact, rel=abs(o[0]))  # the o^2/4 term, relative o/4
    assert not np.allclose(got, exact / 2, rtol=0.1)  # not the offset of s_1 itself


def test_the_fixed_jacobian_subtracts_both_factors_offsets():
    """gradient.input_jacobian's jacobian_fix = ||W_1||_2^2 ||Aperp||_2^2, W_1 d x d with
    d = T/gamma: its correction is L 2^(-2/3) E[TW_1] (d^-2/3 + T^-2/3)."""
    from gapverify.verification.claims.registry.gradients import _jacobian_fix_offset

    p = {"s2": 0.35, "sigma_V": 0.7, "gamma": 0.5}
    limit = 16 * 0.7**2 * (math.exp(0.35) - 1) / 0.5
    T = np.array([64, 724])
    c = 2 ** (-2 / 3) * eo.TW1_MEAN
    assert _jacobian_fix_offset(p, T) == pytest.approx(
        limit * c * ((2.0 * T) ** (-2 / 3) + T ** (-2 / 3)), rel=1e-12)
