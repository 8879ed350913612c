"""tests for theory/entry_laws.py: kappa of each named law (exact), s2_eff, hypotheses,
and the parse errors."""
import math

import numpy as np
import pytest
import sympy as sp
from scipy import stats

from gapverify.theory.entry_laws import EntryLawError, parse_entry_law, parse_syntax


@pytest.mark.parametrize("spec, kappa2", [
    ("exponential", sp.Integer(1)),
    ("scipy:expon", sp.Integer(1)),
    ("scipy:expon(scale=3)", sp.Integer(1)),
    ("scipy:gamma(2)", sp.Rational(1, 2)),          # gamma(a): kappa = 1/sqrt(a)
    ("scipy:gamma(0.5)", sp.Integer(2)),
    ("scipy:gamma(2, loc=1)", sp.Rational(2, 9)),   # var 2 / mean 3^2
    ("scipy:uniform", sp.Rational(1, 3)),
    ("scipy:pareto(3.5)", sp.Rational(4, 21)),      # 1 / (b (b - 2))
    ("scipy:pareto(5)", sp.Rational(1, 15)),
    ("scipy:beta(2, 3)", sp.Rational(1, 4)),
    ("scipy:chi2(3)", sp.Rational(2, 3)),
    ("scipy:lognorm(0.5)", sp.exp(sp.Rational(1, 4)) - 1),
    ("lognormal(0.5)", sp.exp(sp.Rational(1, 2)) - 1),
    ("gaussian-logits(0.25)", sp.exp(sp.Rational(1, 4)) - 1),
])
def test_kappa_is_exact(spec, kappa2):
    law = parse_entry_law(spec)
    assert sp.simplify((law.kappa2 - kappa2).rewrite(sp.exp)) == 0, (spec, law.kappa2)
    assert law.kappa_method.startswith("exact")


def test_gamma_kappa_is_one_over_sqrt_a():
    law = parse_entry_law("scipy:gamma(2)")
    assert law.kappa == pytest.approx(1 / math.sqrt(2), rel=1e-15)


def test_s2_eff_exponential_is_log_2_the_paper_default():
    law = parse_entry_law("exponential")
    assert sp.simplify((law.s2_eff_exact - sp.log(2)).rewrite(sp.exp)) == 0
    assert law.s2_eff == pytest.approx(math.log(2), rel=1e-15)


def test_s2_eff_of_a_lognormal_law_is_its_s2():
    assert sp.simplify((parse_entry_law("scipy:lognorm(0.5)").s2_eff_exact - sp.Rational(1, 4)).rewrite(sp.exp)) == 0
    assert parse_entry_law("scipy:lognorm(0.5)").lognormal
    assert not parse_entry_law("scipy:lognorm(0.5, loc=1)").lognormal


@pytest.mark.parametrize("spec", ["scipy:gamma(2)", "scipy:pareto(3.5)", "scipy:weibull_min(1.5)",
                                  "scipy:invgamma(5)", "scipy:truncexpon(2)", "scipy:lognorm(0.3)"])
def test_kappa_agrees_with_scipy_moments(spec):
    law = parse_entry_law(spec)
    fam, name, args, kwargs = parse_syntax(spec)
    mean, var = getattr(stats, name)(*args, **dict(kwargs)).stats(moments="mv")
    assert law.kappa ** 2 == pytest.approx(float(var) / float(mean) ** 2, rel=1e-9)


def test_float_fallback_states_its_precision():
    law = parse_entry_law("scipy:invgamma(5)")  # no sympy.stats equivalent here
    assert law.kappa_method.startswith("float64") and law.kappa == pytest.approx(1 / math.sqrt(3))


def test_default_law_has_no_kappa_of_its_own():
    for spec in (None, "gaussian-logits", "lognormal"):
        law = parse_entry_law(spec)
        assert law.default and law.kappa2 is None and law.spec == "gaussian-logits"


@pytest.mark.parametrize("spec, fourth, bounded", [
    ("exponential", True, True),
    ("scipy:gamma(2)", True, True),
    ("scipy:gamma(1)", True, True),
    ("scipy:gamma(0.5)", True, False),      # density ~ x^-1/2 at 0
    ("scipy:beta(2, 0.5)", True, False),    # unbounded at 1
    ("scipy:pareto(3.5)", False, True),     # E Z^4 = oo for b <= 4
    ("scipy:pareto(4)", False, True),
    ("scipy:pareto(4.5)", True, True),
    ("scipy:invgamma(3.5)", False, True),   # float fallback: scipy says E Z^4 is not finite
    ("scipy:poisson(3)", True, False),      # discrete: no density
    ("scipy:uniform", True, True),
])
def test_hypotheses(spec, fourth, bounded):
    law = parse_entry_law(spec)
    assert law.fourth_moment is fourth and law.bounded_density is bounded, law
    if not bounded:
        assert law.why_not("bounded_density")


@pytest.mark.parametrize("spec, fragment", [
    ("cauchy", "unknown entry law"),
    ("Exponential", "unknown entry law"),
    ("gamma(2)", "scipy laws are written scipy:NAME"),
    ("scipy:notalaw", "no distribution named 'notalaw'"),
    ("scipy:gamma", "missing 1 required positional argument: 'a'"),
    ("scipy:gamma(1, 2, 3, 4)", "takes from 2 to 4 positional arguments"),
    ("scipy:gamma(b=3)", "unexpected keyword argument 'b'"),
    ("scipy:gamma(-1)", "outside the domain"),
    ("scipy:gamma(__import__('os').system('true'))", "must be finite numbers"),
    ("scipy:gamma(*[2])", "not *args"),
    ("scipy:gamma(inf)", "must be finite numbers"),
    ("scipy:gamma(2", "cannot read"),
    ("scipy:norm", "nonnegative"),
    ("scipy:uniform(-1, 2)", "nonnegative"),
    ("scipy:pareto(2)", "variance is infinite"),
    ("scipy:halfcauchy", "variance is infinite"),
    ("scipy:bernoulli(0.5)", "P(Z = 0)"),
    ("exponential(2)", "takes no arguments"),
    ("lognormal(-1)", "s2 > 0"),
])
def test_bad_laws_raise_with_the_allowed_values(spec, fragment):
    with pytest.raises(EntryLawError) as err:
        parse_entry_law(spec)
    text = str(err.value)
    assert text.startswith("parameter '--entries'") and fragment in text, text


def test_unknown_names_list_the_named_laws_and_the_scipy_syntax():
    with pytest.raises(EntryLawError) as err:
        parse_entry_law("weibull")
    text = str(err.value)
    for name in ("gaussian-logits", "lognormal", "exponential", "scipy:NAME(ARGS)", "scipy:gamma(2)"):
        assert name in text


def test_sampler_factory_draws_the_law():
    from gapverify.numerics.samplers import (
        ExponentialEntries, LogNormalEntries, ScipyEntries, entry_law,
    )

    assert isinstance(entry_law(None, 0.0, 0.5), LogNormalEntries)
    assert entry_law("gaussian-logits(0.25)", 0.0, 0.5) == LogNormalEntries(mu=0.0, s2=0.25)
    assert isinstance(entry_law("exponential"), ExponentialEntries)
    law = entry_law("scipy:gamma(2)")
    assert isinstance(law, ScipyEntries)
    Z = law.sample(np.random.default_rng(0), (400, 400))
    assert Z.std() / Z.mean() == pytest.approx(1 / math.sqrt(2), rel=0.02)
    A = law.markov(np.random.default_rng(0), 64)
    assert np.allclose(A.sum(axis=1), 1.0)


def test_one_object_holds_the_theory_and_the_sampler():
    from gapverify.theory.entry_laws import FAMILIES, NAMED_LAWS, sampler

    assert set(FAMILIES) == {"gaussian-logits", "exponential", "scipy"}
    assert list(NAMED_LAWS) == ["gaussian-logits", "lognormal", "exponential"]
    law = parse_entry_law("exponential")
    assert law.kappa == 1.0 and law.markov(np.random.default_rng(0), 8).shape == (8, 8)
    fixed = parse_entry_law("gaussian-logits(0.25)")
    assert np.array_equal(fixed.at(0.0, 0.5).markov(np.random.default_rng(1), 8),
                          sampler("gaussian-logits(0.25)", 0.0, 0.5).markov(np.random.default_rng(1), 8))
    assert parse_entry_law(None).s2 is None and parse_entry_law(None).at(0.1, 0.5).s2 == 0.5
