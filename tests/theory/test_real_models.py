"""theory.real_models: the first-layer head law of BERT/RoBERTa/GPT-2 and its limits."""
import math

import mpmath as mp
import pytest
import sympy as sp

from gapverify.theory import real_models as rm


def test_frobenius_limit_is_the_chi_square_average_of_kappa_squared():
    """(1 - 2s/k)^(-k/2) - 1 equals E e^{s X} - 1, X ~ chi2_k/k, integrated against the
    chi-square density by mpmath (an independent computation), and tends to
    kappa^2 = e^s - 1 as the head width k grows."""
    s, k = mp.mpf("0.0943"), 64
    density = lambda x: (k / 2) ** (k / 2) / mp.gamma(k / 2) * x ** (k / 2 - 1) * mp.e ** (-k * x / 2)
    quad = mp.quad(lambda x: mp.e ** (s * x) * density(x), [0, 1, 3, mp.inf]) - 1
    value = float(rm.frobenius_limit(sp.Float(str(s), 30), k))
    assert value == pytest.approx(float(quad), rel=1e-12)
    assert value > math.expm1(float(s))  # Jensen: the head's random scale adds
    assert float(rm.frobenius_limit(sp.Float(str(s), 30), 10**6)) == pytest.approx(
        math.expm1(float(s)), rel=1e-6)


def test_bert_values():
    """BERT-base: d = 768, r = 1/50, a shared token-type vector."""
    s2 = rm.layer1_logit_variance(768, sp.Rational(1, 50), shared_vector=True)
    assert float(s2) == pytest.approx((768 / 2500) ** 2 * (1 + 1 / 2500) / (1 + 2 / 2500), rel=1e-15)
    assert rm.layer1_logit_variance(768, sp.Rational(1, 50), shared_vector=False) == sp.Rational(768, 2500) ** 2
    assert float(rm.frobenius_limit(s2, 64)) == pytest.approx(0.0990800, abs=1e-7)


def test_out_of_range_variance_names_the_parameter():
    with pytest.raises(ValueError, match="parameter 's2'"):
        rm.frobenius_limit(40, 64)


def test_the_limit_reads_as_a_formula():
    expr = rm.frobenius_limit(sp.Rational(1, 2), 16)
    assert "**(-8)" in str(expr)  # unevaluated: the power shows
    assert float(expr) == pytest.approx((1 - 1 / 16) ** -8 - 1, rel=1e-15)
