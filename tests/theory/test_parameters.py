"""tests for theory/parameters.py: domains, validation messages, exact values."""
import math

import pytest
import sympy as sp
from hypothesis import given, strategies as st

from theory.parameters import PARAMETERS, ParameterError, exact, validate_parameters


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
             (not p.integer or value == int(value))
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
