"""tests for theory/elementwise.py: Gaussian moments of ReLU, sigmoid and linear maps."""
import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from gapverify.theory.elementwise import (
    DIGITS, MU, S2, elementwise_predictions, gaussian_moments, moments_float,
    sigmoid_moments_mp,
)

_POINTS = [(0, 1), (sp.Rational(1, 2), sp.Rational(1, 2)), (-1, 2), (sp.Rational(3, 10), sp.log(2))]


def _reference(phi, mu, s2, dps=50):
    # 50-digit mpmath reference: E phi(g), Var phi(g), g ~ N(mu, s2)
    with mpmath.workdps(dps + 10):
        m, s = mpmath.mpf(sp.N(mu, dps + 10)), mpmath.sqrt(mpmath.mpf(sp.N(s2, dps + 10)))
        f = lambda k: mpmath.quad(lambda x: mpmath.npdf(x) * phi(m + s * x) ** k,
                                  [-mpmath.inf, -m / s, mpmath.inf])
        m1 = f(1)
        # as sympy Floats: the mpf's digits, not the default context's 15
        return sp.Float(mpmath.nstr(m1, dps + 5), dps + 5), sp.Float(mpmath.nstr(f(2) - m1**2, dps + 5), dps + 5)


@pytest.mark.parametrize("mu,s2", _POINTS)
def test_relu_closed_form_matches_50_digit_quadrature(mu, s2):
    m1, var = gaussian_moments("relu", mu, s2)
    r1, rv = _reference(lambda x: x if x > 0 else mpmath.mpf(0), mu, s2)
    # both exact up to the reference's 50 digits: compare at 40
    assert abs(sp.N(m1, 45) - r1) < sp.Float("1e-40")
    assert abs(sp.N(var, 45) - rv) < sp.Float("1e-40")


def test_relu_at_zero_mean_is_the_known_formula():
    m1, var = gaussian_moments("relu", sp.Integer(0), S2)
    s = sp.sqrt(S2)
    assert sp.simplify(m1 - s / sp.sqrt(2 * sp.pi)) == 0
    assert sp.simplify(var - S2 * (sp.Rational(1, 2) - 1 / (2 * sp.pi))) == 0


def test_linear_is_the_gaussian_itself():
    m1, var = gaussian_moments("linear")
    assert sp.simplify(m1 - MU) == 0 and sp.simplify(var - S2) == 0


@pytest.mark.parametrize("mu,s2", _POINTS)
def test_sigmoid_quadrature_has_its_stated_digits(mu, s2):
    m1, var = gaussian_moments("sigmoid", mu, s2)
    r1, rv = _reference(lambda x: 1 / (1 + mpmath.exp(-x)), mu, s2)
    tol = sp.Float(10) ** (-(DIGITS - 1))  # DIGITS significant digits, values O(1)
    assert abs(m1 - r1) < tol
    assert abs(var - rv) < tol * 10  # var = m2 - m1^2, values ~0.02-0.2


def test_sigmoid_mean_is_one_half_at_zero_mean_by_symmetry():
    # sigma(x) + sigma(-x) = 1 and g is symmetric: E sigma(g) = 1/2 exactly
    m1, _ = sigmoid_moments_mp(0, 2, dps=DIGITS + 10)
    assert abs(m1 - mpmath.mpf(1) / 2) < mpmath.mpf(10) ** (-DIGITS)


def test_sigmoid_at_symbolic_parameters_is_an_unevaluated_integral():
    m1, _ = gaussian_moments("sigmoid")
    assert m1.has(sp.Integral) and {MU, S2} <= m1.free_symbols


@pytest.mark.parametrize("name", ["relu", "sigmoid", "linear"])
def test_moments_match_monte_carlo(name):
    """10^6 draws: the sample mean and variance within 5 standard errors."""
    mu, s2 = 0.5, 0.5
    g = np.random.default_rng(7).normal(mu, math.sqrt(s2), 10**6)
    y = {"relu": np.maximum(g, 0), "sigmoid": 1 / (1 + np.exp(-g)), "linear": g}[name]
    m1, var = moments_float(name, mu, s2)
    n = y.size
    assert abs(y.mean() - m1) < 5 * y.std() / math.sqrt(n)
    # se of the sample variance: sqrt((m4 - var^2) / n)
    m4 = np.mean((y - y.mean()) ** 4)
    assert abs(y.var() - var) < 5 * math.sqrt((m4 - var**2) / n)


def test_predictions_are_edges_of_the_noise():
    p = elementwise_predictions("linear", {"mu": sp.Rational(1, 2), "s2": sp.Integer(4)})
    assert p == {"outlier": sp.Rational(1, 2), "sqrtT_s2": 4, "sqrtT_lambda2": 2, "sqrtT_s1_fix": 4}


def test_unknown_map_is_rejected():
    with pytest.raises(ValueError, match="relu, sigmoid, linear"):
        gaussian_moments("tanh")


@pytest.mark.parametrize("mu,s2", [(sp.Rational(-1, 2), sp.log(2)), (sp.Rational(3, 10), 2),
                                   (sp.Integer(0), sp.Rational(1, 4))])
def test_relu_named_form_equals_the_sympy_integrals(mu, s2):
    """mu Phi(a) + s phi(a) and its second moment, against sympy's integration (45 digits)."""
    from gapverify.theory.elementwise import named_moments

    for named, integrated in zip(named_moments("relu", mu, s2), gaussian_moments("relu", mu, s2)):
        assert abs(sp.N(named, 45) - sp.N(integrated, 45)) < sp.Float("1e-40")


def test_relu_named_form_is_symbolic_in_phi():
    from gapverify.theory.elementwise import NormalPdf, Phi, named_moments

    m1, _ = named_moments("relu")
    assert m1.has(Phi) and m1.has(NormalPdf)
    assert sp.diff(Phi(MU), MU) == NormalPdf(MU)


@pytest.mark.parametrize("mu,s2", [(sp.Rational(-1, 2), sp.log(2)), (sp.Rational(3, 2), 1)])
def test_sigmoid_named_functions_evaluate_to_the_quadrature(mu, s2):
    from gapverify.theory.elementwise import SigmoidMean, SigmoidVar, named_moments

    m1, var = named_moments("sigmoid", mu, s2)
    assert isinstance(m1, SigmoidMean) and isinstance(var, SigmoidVar)
    q1, qv = gaussian_moments("sigmoid", mu, s2)
    tol = sp.Float(10) ** (-(DIGITS - 1))
    assert abs(sp.N(m1, DIGITS) - q1) < tol and abs(sp.N(var, DIGITS) - qv) < tol
    assert sp.latex(m1).startswith(r"m_\sigma")
