"""tests for theory/markov.py: outliers, the fix.spectrum identity, width limits."""
import math

import numpy as np
import pytest
import sympy as sp

from gapverify.theory.markov import (
    fix_spectrum_identity, outlier_predictions, singular_law_predictions, sr_Aperp_over_T,
    width_standard_predictions,
)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_fix_spectrum_identity_is_proven_symbolically(n):
    assert fix_spectrum_identity(n) == {"factorisation": True, "charpoly": True,
                                        "left_eigenvectors": True}


def test_a_wrong_identity_is_rejected():
    """The same symbolic machinery rejects a wrong statement: replacing 1 by 1/n."""
    n = 3
    a = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"a_{i}{j}"))
    A = a.copy()
    for i in range(n):
        A[i, n - 1] = 1 - sum(a[i, j] for j in range(n - 1))
    x = sp.Symbol("x")
    chi = A.charpoly(x).as_expr()
    chi_perp = (A - sp.ones(n, n) / n).charpoly(x).as_expr()
    assert sp.expand((x - 1) * chi_perp - (x - sp.Rational(1, n)) * chi) != 0


def test_predictions_at_paper_defaults():
    s2 = sp.log(2)
    assert outlier_predictions(s2)["sqrtT_s2"] == 2
    assert outlier_predictions(s2)["sqrtT_lambda2"] == 1
    assert singular_law_predictions(s2) == {"edge": 2, "second_moment": 1}
    assert width_standard_predictions(s2) == {"sr_A": 2, "sr_X1": 2, "sr_Sigma1": 1}
    assert sr_Aperp_over_T() == sp.Rational(1, 4)


def test_predictions_scale_with_kappa():
    s2 = sp.Integer(1)
    k2 = math.e - 1
    assert float(width_standard_predictions(s2)["sr_A"]) == pytest.approx(1 + k2, rel=1e-15)
    assert float(outlier_predictions(s2)["sqrtT_s2"]) == pytest.approx(2 * math.sqrt(k2), rel=1e-15)


def test_fix_spectrum_numerically_to_machine_precision():
    rng = np.random.default_rng([3, 40])
    Z = rng.exponential(size=(40, 40))
    A = Z / Z.sum(axis=1, keepdims=True)
    ev = np.linalg.eigvals(A)
    ev[np.argmin(np.abs(ev - 1))] = 0
    ev_perp = np.linalg.eigvals(A - 1 / 40)
    from scipy.optimize import linear_sum_assignment
    cost = np.abs(ev[:, None] - ev_perp[None, :])
    r, c = linear_sum_assignment(cost)
    assert cost[r, c].max() < 1e-12
