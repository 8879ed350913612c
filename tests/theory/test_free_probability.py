"""Tests of theory.free_probability: exact moments and edges, density and its branch.

Every numerical tolerance is stated beside the assertion with its origin. The branch
tests include a deliberately wrong branch to show that the checks can fail.
"""
from __future__ import annotations

import contextlib
import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy import integrate

try:  # one BLAS thread: small products are 10x slower with oversubscribed threads
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    def threadpool_limits(*_args, **_kwargs):
        return contextlib.nullcontext()

from gapverify.theory.free_probability import (
    G, FreeLaw, compress, expand, free_power, fuss_catalan, marchenko_pastur, psi, u, x, z,
)

c_sym = sp.Symbol("c", positive=True)
gamma_sym = sp.Symbol("gamma", positive=True)
HALF = sp.Rational(1, 2)


def narayana_moment(c, k):
    """MP(c) moments: sum_j binom(k, j) binom(k, j+1) c^j / k (Narayana polynomials)."""
    return sum(sp.binomial(k, j) * sp.binomial(k, j + 1) * c**j for j in range(k)) / k


def fc_moment(s, k):
    return sp.binomial((s + 1) * k, k) / (s * k + 1)


def mixed_law():
    """MP(1) x MP(1) x compress(FC_2, 1/2): S = (1+z)^-2 (1+z/2)^-2, gamma < 1."""
    return marchenko_pastur(1) * marchenko_pastur(1) * compress(fuss_catalan(2), HALF)


# ----------------------------------------------------------------- exact algebra
@pytest.mark.parametrize("c", [c_sym, sp.Integer(1), HALF, sp.Integer(3)])
def test_mp_moments_exact(c):
    got = marchenko_pastur(c).moments(6)
    for k, m in enumerate(got, start=1):
        assert sp.expand(m - narayana_moment(c, k)) == 0, (k, m)


@pytest.mark.parametrize("s", [1, 2, 3, 4])
def test_fc_moments_exact(s):
    got = fuss_catalan(s).moments(6)
    assert got == [fc_moment(s, k) for k in range(1, 7)]


def test_fc_equals_free_power_of_mp():
    for s in range(1, 5):
        assert sp.simplify(free_power(marchenko_pastur(1), s).S - fuss_catalan(s).S) == 0


def test_moments_with_symbolic_parameter_product():
    law = marchenko_pastur(c_sym) * compress(fuss_catalan(1), gamma_sym)  # MP(c) x MP(gamma)
    m = law.moments(3)
    assert m[0] == 1
    assert sp.expand(m[1] - (1 + c_sym + gamma_sym)) == 0
    # free cumulant check through the S-transform series: m3 of a product of two MPs
    expect = (1 + 3 * c_sym + c_sym**2 + 3 * gamma_sym + gamma_sym**2
              + 3 * c_sym * gamma_sym)
    assert sp.expand(m[2] - expect) == 0


def test_mean_not_one():
    law = FreeLaw(1 / (2 * (1 + z)), "2 MP(1)")  # the law of 2 X, X ~ MP(1)
    assert law.mean() == 2
    assert law.moments(4) == [2 * sp.catalan(k) * 2 ** (k - 1) for k in range(1, 5)]
    assert law.right_edge() == 8


@pytest.mark.parametrize("c", [sp.Rational(1, 4), HALF, 1, 2, 4])
def test_mp_edge_exact(c):
    assert sp.simplify(marchenko_pastur(c).right_edge() - (1 + sp.sqrt(c)) ** 2) == 0


def test_mp_edge_symbolic():
    expr = marchenko_pastur(c_sym).right_edge_expr()
    assert expr is not None
    assert sp.simplify(expr - (1 + sp.sqrt(c_sym)) ** 2) == 0


@pytest.mark.parametrize("s", [1, 2, 3, 4])
def test_fc_edge_exact(s):
    assert fuss_catalan(s).right_edge() == sp.Integer(s + 1) ** (s + 1) / sp.Integer(s) ** s


def test_edge_is_max_of_chi():
    """x* = 1/max_{p>0} chi(p): compare with a dense grid (relative 1e-6 from grid spacing)."""
    law = mixed_law()
    p = np.linspace(1e-4, 20, 400001)
    chi = p / ((1 + p) ** 3 * (1 + p / 2) ** 2)
    assert float(law.right_edge()) == pytest.approx(1 / chi.max(), rel=1e-8)


def test_right_edge_float_parameters_give_mpf():
    with mpmath.workdps(40):
        got = marchenko_pastur(c_sym).right_edge(c=0.5)
        assert isinstance(got, mpmath.mpf)
        assert abs(got - (1 + mpmath.sqrt(mpmath.mpf(0.5))) ** 2) < mpmath.mpf(10) ** -38


def test_moment_equation_is_satisfied_by_series():
    for law in (fuss_catalan(3), marchenko_pastur(c_sym), mixed_law()):
        n = 6
        series = sum(m * u**k for k, m in enumerate(law.moments(n), start=1))
        residual = sp.expand(law.moment_equation().subs(psi, series))
        low = [sp.simplify(residual.coeff(u, k)) for k in range(0, n + 1)]
        assert low == [0] * (n + 1)


def test_stieltjes_equation_mp1_closed_form():
    Q = marchenko_pastur(1).stieltjes_equation()
    assert sp.expand(Q - (x * G**2 - x * G + 1)) == 0
    # G(x) = (x - sqrt(x^2 - 4x)) / (2x) solves it
    Gx = (x - sp.sqrt(x**2 - 4 * x)) / (2 * x)
    assert sp.simplify(Q.subs(G, Gx)) == 0


def test_stieltjes_equation_is_moment_equation_at_inverse_point():
    """Q(G, x) = P(xG - 1, 1/x) identically: G(x) = (1 + psi(1/x))/x."""
    for law in (fuss_catalan(3), marchenko_pastur(c_sym), mixed_law()):
        P = law.moment_equation()
        Q = law.stieltjes_equation()
        assert sp.expand(Q - P.subs({psi: x * G - 1, u: 1 / x})) == 0


def test_compress_mp1_is_mp_gamma():
    assert sp.simplify(compress(marchenko_pastur(1), gamma_sym).S - 1 / (1 + gamma_sym * z)) == 0


def test_expand_of_compress_is_product_with_projection():
    """d x d picture of PMP: S_M(z) (1+z)/(gamma+z) = S_M S_P, consistency of both maps."""
    M = fuss_catalan(2) * marchenko_pastur(c_sym)
    projection = FreeLaw((1 + z) / (gamma_sym + z), "P")
    lhs = expand(compress(M, gamma_sym), gamma_sym).S
    assert sp.simplify(lhs - (M * projection).S) == 0


def test_expand_moments_and_atom():
    law_T = fuss_catalan(2)
    law_d = expand(law_T, gamma_sym)
    for mT, md in zip(law_T.moments(4), law_d.moments(4)):
        assert sp.simplify(md - gamma_sym * mT) == 0
    assert law_d.atom_at_zero(gamma=HALF) == HALF
    assert marchenko_pastur(2).atom_at_zero() == HALF  # MP(c), c > 1: atom 1 - 1/c


# ----------------------------------------------------------------- density
# Quadrature: scipy.integrate.tanhsinh, atol = rtol = 1e-12 after a smoothing
# substitution; the density itself is accurate to ~1e-15 relative (checked against the
# Haagerup-Moller parametrisation below). Mass tolerance 1e-9.
MASS_TOL = 1e-9


@pytest.mark.parametrize("law,params", [
    (fuss_catalan(1), {}),
    (fuss_catalan(2), {}),
    (fuss_catalan(3), {}),
    (fuss_catalan(4), {}),
    (mixed_law(), {}),
    (marchenko_pastur(c_sym), {"c": 0.25}),     # gap (0, 1/4)
    (marchenko_pastur(c_sym), {"c": 2}),        # atom 1/2 at 0 plus a gap
    (expand(fuss_catalan(2), gamma_sym), {"gamma": 0.5}),  # atom 1/2 at 0
])
def test_total_mass_is_one(law, params):
    _, err = law.quad_moment(0, **params)
    assert err < 1e-10  # tanhsinh error estimate
    assert abs(law.total_mass(**params) - 1) < MASS_TOL
    law.assert_normalised(tol=MASS_TOL, **params)


@pytest.mark.parametrize("law", [fuss_catalan(3), mixed_law()])
def test_quadrature_moments_match_exact(law):
    exact = law.moments(3)
    for k in (1, 2, 3):
        val, err = law.quad_moment(k)
        assert err < 1e-9 * float(exact[k - 1])
        assert val == pytest.approx(float(exact[k - 1]), rel=1e-9), k


def haagerup_moller(s, phi):
    """FC_s density, parametrised by phi in (0, pi/(s+1)) [Haagerup-Moller 2013]."""
    xs = np.sin((s + 1) * phi) ** (s + 1) / (np.sin(phi) * np.sin(s * phi) ** s)
    rho = np.sin(phi) ** 2 * np.sin(s * phi) ** (s - 1) / (np.pi * np.sin((s + 1) * phi) ** s)
    return xs, rho


@pytest.mark.parametrize("s", [2, 3, 4])
def test_pdf_matches_parametrisation(s):
    phi = np.linspace(0.002, np.pi / (s + 1) - 0.002, 400)
    xs, rho = haagerup_moller(s, phi)
    got = fuss_catalan(s).pdf(xs)
    # double precision: the physical root is well conditioned in the bulk (1e-13); at
    # distance delta from the square-root edge two roots are sqrt(delta) apart and the
    # relative error grows like eps/delta (1.4e-11 at delta = 1e-5): rtol 1e-9.
    np.testing.assert_allclose(got, rho, rtol=1e-9, atol=0)
    bulk = (xs > 0.05) & (xs < 0.95 * float(fuss_catalan(s).right_edge()))
    np.testing.assert_allclose(got[bulk], rho[bulk], rtol=1e-12, atol=0)


def test_density_mp_matches_pdf():
    law = fuss_catalan(3)
    for xv in (0.01, 1.0, 5.0, 9.0):
        assert float(law.density(xv)) == pytest.approx(law.pdf([xv])[0], rel=1e-12)


def test_density_near_zero_at_40_digits():
    """FC_3 near 0 (rho ~ x^{-3/4}): phi -> pi/4 in the parametrisation, x ~ 1e-21."""
    mp = mpmath
    with mp.workdps(40):
        phi = mp.pi / 4 - mp.mpf("1e-6")
        x0 = mp.sin(4 * phi) ** 4 / (mp.sin(phi) * mp.sin(3 * phi) ** 3)
        ref = mp.sin(phi) ** 2 * mp.sin(3 * phi) ** 2 / (mp.pi * mp.sin(4 * phi) ** 3)
        assert x0 < 1e-20
        got = fuss_catalan(3).density(x0)
        assert abs(got / ref - 1) < mp.mpf(10) ** -35


def test_cauchy_transform_matches_moment_series_far_away():
    law = mixed_law()
    w = np.array([100j, 80 + 60j, -90 + 40j])  # |w| >= 98: truncation (9.7/98)^21 < 1e-20
    ms = [1.0] + [float(m) for m in law.moments(20)]
    series = sum(m / w ** (k + 1) for k, m in enumerate(ms))
    np.testing.assert_allclose(law.cauchy(w), series, rtol=1e-10)


def test_cdf_mp1_matches_quarter_circle():
    """MP(1) = squares of Q_1: F(x) = (2/pi)(u sqrt(1-u^2) + arcsin u), u = sqrt(x)/2."""
    xs = np.array([1e-10, 1e-4, 0.1, 0.5, 1.0, 2.0, 3.0, 3.9, 3.999999, 4.0, 5.0])
    uu = np.sqrt(np.minimum(xs, 4.0)) / 2
    ref = 2 / np.pi * (uu * np.sqrt(1 - uu**2) + np.arcsin(uu))
    np.testing.assert_allclose(marchenko_pastur(1).cdf(xs), ref, rtol=0, atol=1e-9)


# ----------------------------------------------------------------- histogram and branch
def fc3_sample(n, seed):
    """Squared singular values of a product of three normalised n x n Ginibre matrices."""
    rng = np.random.default_rng(seed)
    with threadpool_limits(1):
        P = rng.standard_normal((n, n)) / np.sqrt(n)
        for _ in range(2):
            P = P @ (rng.standard_normal((n, n)) / np.sqrt(n))
        return np.sort(np.linalg.svd(P, compute_uv=False) ** 2)


def kolmogorov(sorted_sample, F):
    n = len(sorted_sample)
    i = np.arange(1, n + 1)
    return max(np.max(i / n - F), np.max(F - (i - 1) / n))


def wrong_branch_pdf(law, xs):
    """The shortcut used by some tools: the root of Q(G, x) with most negative Im G."""
    Q = sp.Poly(law.stieltjes_equation(), G)
    coeffs = [sp.lambdify(x, c, "numpy") for c in Q.all_coeffs()]
    out = np.empty(len(xs))
    for i, xv in enumerate(xs):
        r = np.roots([complex(cf(xv)) for cf in coeffs])
        out[i] = -r.imag.min() / np.pi
    return out


N_HIST = 500
# Eigenvalues of unitarily invariant ensembles are rigid: the empirical CDF is within
# O(log n / n) of the limit (vs 1.36/sqrt(n) = 0.061 for n i.i.d. points). Measured
# n * KS is about 3 for seeds 0..2 and n in 400..600 (0.0055 for the seed below);
# tolerance log(n)/n = 0.0124. The wrong branch gives KS = 0.97 and mass 2.02.
KS_TOL = math.log(N_HIST) / N_HIST


@pytest.fixture(scope="module")
def fc3_eigenvalues():
    return fc3_sample(N_HIST, seed=20250101)


def test_density_matches_fc3_histogram(fc3_eigenvalues):
    law = fuss_catalan(3)
    F = law.cdf(fc3_eigenvalues)
    assert kolmogorov(fc3_eigenvalues, F) < KS_TOL


def test_wrong_branch_fails_mass_and_histogram(fc3_eigenvalues):
    """The most-negative-Im root is a spurious sheet for FC_3: both checks reject it."""
    law = fuss_catalan(3)
    edge = float(law.right_edge())
    t = np.linspace(0, 1, 4001)
    grid = edge * t[1:] ** 8  # x = edge t^8: integrand ~ t at 0 (rho ~ x^{-3/4})
    jac = 8 * edge * t[1:] ** 7
    wrong = np.concatenate([[0.0], wrong_branch_pdf(law, grid) * jac])
    right = np.concatenate([[0.0], law.pdf(grid) * jac])
    # trapezoid on 4000 panels; the sqrt edge limits it to ~h^1.5 = 4e-6: tolerance 1e-4
    assert abs(integrate.trapezoid(right, t) - 1) < 1e-4
    assert abs(integrate.trapezoid(wrong, t) - 1) > 0.1  # the mass check can fail
    # the histogram check with the wrong branch fails as well
    F_wrong = np.interp((fc3_eigenvalues / edge) ** 0.125, t,
                        integrate.cumulative_trapezoid(wrong, t, initial=0))
    F_right = np.interp((fc3_eigenvalues / edge) ** 0.125, t,
                        integrate.cumulative_trapezoid(right, t, initial=0))
    assert kolmogorov(fc3_eigenvalues, F_right) < KS_TOL
    assert kolmogorov(fc3_eigenvalues, F_wrong) > 10 * KS_TOL


# ----------------------------------------------------------------- 50-digit references
# mpmath code producing the references (dps = 50):
#   edge(s): p = mp.findroot(lambda t: 1/t - (s+1)/(1+t), (mpf('0.01'), mpf(1)),
#                            solver='anderson');  (1+p)**(s+1)/p
#   FC_3 density at x = 2 (Haagerup-Moller parametrisation):
#     phi = mp.findroot(lambda t: mp.sin(4*t)**4/(mp.sin(t)*mp.sin(3*t)**3) - 2,
#                       (mpf('0.1'), mpf('0.7')), solver='anderson')
#     mp.sin(phi)**2 * mp.sin(3*phi)**2 / (mp.pi * mp.sin(4*phi)**3)
FC3_EDGE = "9.4814814814814814814814814814814814814814814814815"
FC4_EDGE = "12.20703125"
FC3_DENSITY_AT_2 = "0.069442309364738156512890914719478347055859154843302"


def _reference_edge(s):
    mp = mpmath
    p = mp.findroot(lambda t: 1 / t - (s + 1) / (1 + t), (mp.mpf("0.01"), mp.mpf(1)),
                    solver="anderson")
    return (1 + p) ** (s + 1) / p


def _reference_fc3_density_at_2():
    mp = mpmath
    phi = mp.findroot(lambda t: mp.sin(4 * t) ** 4 / (mp.sin(t) * mp.sin(3 * t) ** 3) - 2,
                      (mp.mpf("0.1"), mp.mpf("0.7")), solver="anderson")
    return mp.sin(phi) ** 2 * mp.sin(3 * phi) ** 2 / (mp.pi * mp.sin(4 * phi) ** 3)


def test_references_at_50_digits():
    with mpmath.workdps(50):
        tol = mpmath.mpf(10) ** -48
        assert abs(_reference_edge(3) - mpmath.mpf(FC3_EDGE)) < tol
        assert abs(_reference_edge(4) - mpmath.mpf(FC4_EDGE)) < tol
        assert abs(_reference_fc3_density_at_2() - mpmath.mpf(FC3_DENSITY_AT_2)) < tol
        assert abs(sp.N(fuss_catalan(3).right_edge(), 50) - sp.Float(FC3_EDGE, 50)) < 1e-48
        assert abs(sp.N(fuss_catalan(4).right_edge(), 50) - sp.Float(FC4_EDGE, 50)) < 1e-48
        got = fuss_catalan(3).density(2)
        assert isinstance(got, mpmath.mpf)
        assert abs(got - mpmath.mpf(FC3_DENSITY_AT_2)) < tol
