"""tests for theory/laws.py: the quarter-circle and disc laws, symbolic and numeric."""
import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy import integrate

from gapverify.theory.laws import KAPPA, disc_modulus_law, quarter_circle, quarter_circle_law, x


def test_density_integrates_to_one():
    law = quarter_circle_law()
    assert sp.simplify(sp.integrate(law.density.subs(KAPPA, 1), (x, 0, 2))) == 1


def test_cdf_derivative_is_density():
    law = quarter_circle_law()
    assert sp.simplify(sp.diff(law.cdf, x) - law.density) == 0
    assert sp.simplify(law.cdf.subs(x, law.edge)) == 1
    assert law.cdf.subs(x, 0) == 0


@pytest.mark.parametrize("k", range(1, 7))
def test_even_moments_are_catalan_times_kappa_powers(k):
    law = quarter_circle_law()
    assert sp.simplify(law.moment(2 * k) - KAPPA ** (2 * k) * sp.catalan(k)) == 0


def test_odd_moments_against_quadrature():
    law = quarter_circle_law()
    f = sp.lambdify(x, law.density.subs(KAPPA, 1), "mpmath")
    mpmath.mp.dps = 50
    for k in (1, 3, 5):
        numeric = mpmath.quad(lambda t: t**k * f(t), [0, 2])
        exact = sp.N(law.moment(k).subs(KAPPA, 1), 50)
        assert abs(numeric - mpmath.mpf(str(exact))) < mpmath.mpf(10) ** -40


# mpmath reference values at 50 digits, made by:
#   mpmath.mp.dps = 50
#   u = mpmath.mpf(x) / 2
#   (2 / mpmath.pi) * (u * mpmath.sqrt(1 - u**2) + mpmath.asin(u))
REFERENCE_CDF = {
    "0.5": "0.31496235752570743893314266024283789741841974768269",
    "1": "0.60899778104422935808899658248981805403202657351665",
    "1.9": "0.98667998898985875652194192037063941131806994089547",
}


@pytest.mark.parametrize("point", sorted(REFERENCE_CDF))
def test_cdf_reference_values_high_precision(point):
    mpmath.mp.dps = 50
    law = quarter_circle_law()
    value = sp.N(law.cdf.subs({KAPPA: 1, x: sp.Rational(point)}), 50)
    assert abs(mpmath.mpf(str(value)) - mpmath.mpf(REFERENCE_CDF[point])) < mpmath.mpf(10) ** -45
    # the compiled scipy distribution agrees to double precision
    assert quarter_circle.cdf(float(point)) == pytest.approx(float(REFERENCE_CDF[point]), rel=1e-14)


def test_scipy_distribution_is_consistent():
    for kappa in (0.5, 1.0, 1.7):
        dist = quarter_circle(scale=kappa)
        total, err = integrate.quad(dist.pdf, 0, 2 * kappa)
        assert total == pytest.approx(1.0, abs=10 * err + 1e-12)
        assert dist.moment(2) == pytest.approx(kappa**2, rel=1e-12)
        assert dist.moment(4) == pytest.approx(2 * kappa**4, rel=1e-12)
        q = np.linspace(0.01, 0.99, 7)
        np.testing.assert_allclose(dist.cdf(dist.ppf(q)), q, atol=1e-10)
    assert quarter_circle.cdf(-1.0) == 0.0 and quarter_circle.cdf(3.0) == 1.0


def test_disc_modulus_law():
    law = disc_modulus_law()
    r = sp.Symbol("r", positive=True)
    assert sp.simplify(law.cdf - r**2 / KAPPA**2) == 0
    frozen = law.frozen(1.3)
    np.testing.assert_allclose(frozen.cdf([0.0, 0.65, 1.3]), [0.0, 0.25, 1.0], atol=1e-15)


def test_wrong_law_is_told_apart():
    """The check can fail: a 3 percent wider law gives a visibly different CDF."""
    grid = np.linspace(0, 2, 201)
    gap = np.max(np.abs(quarter_circle.cdf(grid) - quarter_circle(scale=1.03).cdf(grid)))
    assert gap > 0.01
