"""tests for theory/softmax.py: kappa derived from the log-normal moments."""
import math

import pytest
import sympy as sp
from scipy import stats

from gapverify.theory.softmax import MU, S2, entry_moments, kappa, kappa_squared


def test_kappa_squared_is_exp_s2_minus_one_and_free_of_mu():
    assert sp.simplify(kappa_squared() - (sp.exp(S2) - 1)) == 0
    assert MU not in kappa_squared().free_symbols


def test_paper_defaults_give_unit_mean_variance_and_kappa():
    m, var = entry_moments()
    point = {MU: -sp.log(2) / 2, S2: sp.log(2)}
    assert sp.simplify(m.subs(point)) == 1
    assert sp.simplify(var.subs(point)) == 1
    assert kappa(math.log(2)) == 1


@pytest.mark.parametrize("mu,s2", [(0.0, 0.3), (-1.2, 1.0), (0.7, 2.0)])
def test_moments_match_scipy_lognormal(mu, s2):
    m, var = entry_moments()
    dist = stats.lognorm(s=math.sqrt(s2), scale=math.exp(mu))
    assert float(m.subs({MU: mu, S2: s2})) == pytest.approx(dist.mean(), rel=1e-12)
    assert float(var.subs({MU: mu, S2: s2})) == pytest.approx(dist.var(), rel=1e-12)
    assert float(kappa(s2)) == pytest.approx(dist.std() / dist.mean(), rel=1e-12)
