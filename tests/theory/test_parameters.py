"""tests for theory/parameters.py: domains, validation messages, exact values."""
import math

import pytest
import sympy as sp
from hypothesis import given, strategies as st

from gapverify.theory.parameters import PARAMETERS, ParameterError, exact, validate_parameters


@pytest.mark.parametrize("name,value,fragment", [
    ("gamma", 1.5, "(0, 1]"), ("gamma", 0, "(0, 1]"), ("s2", -0.1, "(0, inf)"),
    ("sigma_V", "nan", "finite"), ("s2", "inf", "finite"), ("depth", 2.5, "integer"),
    ("depth", 0, "integers >= 1"), ("mu", "abc", "a number"),
])
def test_bad_values_name_the_parameter_and_range(name, value, fragment):
    with pytest.raises(ParameterError) as info:
        PARAMETERS[name].validate(value)
    assert f"'{name}'" in str(info.value) and fragment in str(info.value)


def test_unknown_parameter():
    with pytest.raises(ParameterError, match="unknown parameter 'beta'"):
        validate_parameters({"beta": 1.0})
    with pytest.raises(ParameterError, match="allowed here: s2, mu"):
        validate_parameters({"gamma": 0.5}, ("s2", "mu"))


def test_exact_keeps_the_paper_defaults_symbolic():
    assert exact("s2", math.log(2)) == sp.log(2)
    assert exact("mu", -math.log(2) / 2) == -sp.log(2) / 2
    assert exact("gamma", 0.5) == sp.Rational(1, 2)
    assert exact("depth", 3) == 3


@given(st.sampled_from(sorted(PARAMETERS)), st.floats(allow_nan=False, allow_infinity=False))
def test_validate_accepts_exactly_the_domain(name, value):
    p = PARAMETERS[name]
    inside = (p.low < value or (not p.low_open and value == p.low)) and \
             (value < p.high or (not p.high_open and value == p.high)) and \
             (not p.integer or value == int(value)) and \
             (p.finite_high is None or value <= p.finite_high)
    if inside:
        assert p.validate(value) == value
    else:
        with pytest.raises(ParameterError):
            p.validate(value)


@given(st.sampled_from(sorted(PARAMETERS)))
def test_defaults_and_typical_ranges_are_valid(name):
    p = PARAMETERS[name]
    p.validate(p.default)
    p.validate(p.typical[0]), p.validate(p.typical[1])


def test_s2_is_refused_where_kappa_overflows_a_double():
    """kappa^2 = e^{s2} - 1 is infinite in double precision above log(DBL_MAX) = 709.78:
    such an s2 is refused with its computable range, not judged against infinity."""
    p = PARAMETERS["s2"]
    assert p.validate(709.78) == 709.78
    with pytest.raises(ParameterError, match=r"'s2'.*\(0, 709\.78\] in double precision"):
        p.validate(1e308)
    with pytest.raises(ParameterError, match=r"'s2'"):
        p.validate(710)


def test_kappa_at_tiny_s2_does_not_cancel():
    """exp(s2) - 1 at s2 = 1e-300 cancels at sympy's default working precision (it gave
    kappa = 3.8e-65); kappa = sqrt(expm1(s2)) ~ sqrt(s2) = 1e-150."""
    from gapverify.theory.markov import kappa_of
    from gapverify.theory.softmax import kappa

    for s2, expected in ((1e-300, 1e-150), (1e-20, 1e-10), (1e-8, math.sqrt(math.expm1(1e-8)))):
        assert float(sp.N(kappa(s2), 17)) == pytest.approx(expected, rel=1e-14)
        assert float(sp.N(kappa_of(exact("s2", s2)), 17)) == pytest.approx(expected, rel=1e-14)
    # at a symbol the statement is unchanged (the snapshots compare it)
    assert str(kappa_of(PARAMETERS["s2"].symbol)) == "sqrt(exp(s2) - 1)"
