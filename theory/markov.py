r"""Single-layer random Markov matrix theory: outliers, the fix, stable ranks of width.

All predictions are sympy expressions derived from :mod:`theory.laws` (the quarter-circle
law :math:`Q_\kappa` and the disc) and :mod:`theory.softmax` (:math:`\kappa^2 = e^{s^2}-1`).

* ``markov.outliers``: :math:`\lambda_1(A) = 1` (exact), :math:`s_1(A) \to 1`,
  :math:`\sqrt T s_2(A) \to 2\kappa` (the edge of :math:`Q_\kappa`), and
  :math:`\sqrt T|\lambda_2(A)| \to \kappa` (the edge of the disc; conjecture).
* ``fix.spectrum``: :math:`A^\perp = A(I - \mathbf 1\mathbf 1^\top/T)`, whose characteristic
  polynomial is :math:`x\,\chi_A(x)/(x-1)`; proven here symbolically for a generic
  stochastic matrix of small size.
* ``width.stable_rank`` (standard and :math:`A^\perp`): since
  :math:`A = \mathbf 1\mathbf 1^\top/T + A^\perp` with :math:`A^\perp\mathbf 1 = 0`, the
  Frobenius mass splits as :math:`\|A\|_F^2 = 1 + \|A^\perp\|_F^2` and
  :math:`\|A^\perp\|_F^2 \to m_2(Q_\kappa)`; so :math:`\mathrm{sr}(A) \to 1 + m_2(Q_\kappa)`
  and :math:`\mathrm{sr}(A^\perp)/T \to m_2(Q_\kappa)/\mathrm{edge}(Q_\kappa)^2`.

References
----------
.. [1] C. Bordenave, P. Caputo, D. Chafai, PTRF 152 (2012), arXiv:0808.1502.
.. [2] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap", ICML 2025, arXiv:2410.07799.
"""
from __future__ import annotations

from functools import cache

import sympy as sp

from gapverify.theory.laws import KAPPA, disc_modulus_law, quarter_circle_law
from gapverify.theory.softmax import kappa_squared, kappa_squared_at

__all__ = [
    "kappa_of",
    "outlier_predictions",
    "singular_law_predictions",
    "width_standard_predictions",
    "sr_Aperp_over_T",
    "fix_spectrum_identity",
]


def kappa_of(s2: sp.Expr) -> sp.Expr:
    r""":math:`\kappa` at logit variance ``s2`` (exact), from :func:`theory.softmax.kappa_squared`."""
    return sp.sqrt(kappa_squared_at(s2, kappa_squared()))


def singular_law_predictions(s2: sp.Expr) -> dict[str, sp.Expr]:
    r"""``edge`` (:math:`2\kappa`) and ``second_moment`` (:math:`\kappa^2`) of :math:`Q_\kappa`."""
    law, k = quarter_circle_law(), kappa_of(s2)
    return {"edge": law.edge.subs(KAPPA, k), "second_moment": law.moment(2).subs(KAPPA, k)}


def outlier_predictions(s2: sp.Expr) -> dict[str, sp.Expr]:
    r"""Outlier locations: ``lambda1`` = 1 (exact, :math:`A\mathbf 1 = \mathbf 1`), ``s1`` -> 1,
    ``sqrtT_s2`` -> edge of :math:`Q_\kappa`, ``sqrtT_lambda2`` -> edge of the disc."""
    k = kappa_of(s2)
    return {
        "lambda1": sp.Integer(1),
        "s1": sp.Integer(1),
        "sqrtT_s2": quarter_circle_law().edge.subs(KAPPA, k),
        "sqrtT_lambda2": disc_modulus_law().edge.subs(KAPPA, k),
        "sqrtT_s1_Aperp": quarter_circle_law().edge.subs(KAPPA, k),
    }


def width_standard_predictions(s2: sp.Expr) -> dict[str, sp.Expr]:
    r"""Single-layer standard attention: ``sr_A``, ``sr_X1`` -> :math:`1 + \kappa^2`,
    ``sr_Sigma1`` -> 1.

    :math:`X_1 = A X_0 W_1`: the rank-one part :math:`\mathbf 1\mathbf 1^\top X_0 W_1/T`
    carries Frobenius mass :math:`\approx d\sigma_V^2` in one direction, the bulk
    :math:`A^\perp X_0 W_1` mass :math:`\approx m_2(Q_\kappa) d\sigma_V^2` spread over
    :math:`T` directions, so :math:`\mathrm{sr}(X_1) \to 1 + m_2` and
    :math:`\mathrm{sr}(\Sigma_1) = \sum s_i^4 / s_1^4 \to 1` (the bulk contributes
    :math:`O(1/T)`).
    """
    m2 = quarter_circle_law().moment(2).subs(KAPPA, kappa_of(s2))
    return {"sr_A": 1 + m2, "sr_X1": 1 + m2, "sr_Sigma1": sp.Integer(1)}


def sr_Aperp_over_T() -> sp.Expr:
    r""":math:`\mathrm{sr}(A^\perp)/T \to m_2(Q_\kappa)/\mathrm{edge}(Q_\kappa)^2` (= 1/4, free of :math:`\kappa`)."""
    law = quarter_circle_law()
    value = sp.simplify(law.moment(2) / law.edge**2)
    if value.has(KAPPA):
        raise AssertionError(f"sr(Aperp)/T should be free of kappa, got {value}")
    return value


@cache
def fix_spectrum_identity(n: int = 3) -> dict[str, bool]:
    r"""Prove ``fix.spectrum`` symbolically for a generic ``n x n`` stochastic matrix.

    With free entries :math:`a_{ij}` (``j < n``) and :math:`a_{in} = 1 - \sum_{j<n} a_{ij}`:

    * ``factorisation``: :math:`A - \mathbf 1\mathbf 1^\top/n = A(I - \mathbf 1\mathbf 1^\top/n)`;
    * ``charpoly``: :math:`(x - 1)\chi_{A^\perp}(x) = x\,\chi_A(x)` (the eigenvalue 1 is
      replaced by 0, multiplicities kept);
    * ``left_eigenvectors``: for a left eigenvector :math:`v^\top A = \lambda v^\top`,
      :math:`\lambda \ne 1` forces :math:`v^\top\mathbf 1 = 0`, so
      :math:`v^\top A^\perp = v^\top A - (v^\top\mathbf 1)\mathbf 1^\top/n = \lambda v^\top`:
      checked as the polynomial identity
      :math:`v^\top A^\perp - v^\top A = -(v^\top \mathbf 1)\mathbf 1^\top/n`.

    Cost grows like the determinant of an ``n x n`` symbolic matrix: ``n <= 4`` is quick.
    """
    if n < 2:
        raise ValueError(f"parameter 'n' must be an integer >= 2, got {n}")
    a = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"a_{i}{j}"))
    A = a.copy()
    for i in range(n):  # rows sum to one
        A[i, n - 1] = 1 - sum(a[i, j] for j in range(n - 1))
    ones = sp.ones(n, 1)
    J = ones * ones.T / n
    A_perp = A - J
    xs = sp.Symbol("x")
    factorisation = (A_perp - A * (sp.eye(n) - J)).expand() == sp.zeros(n, n)
    chi_A = A.charpoly(xs).as_expr()
    chi_perp = A_perp.charpoly(xs).as_expr()
    charpoly = sp.expand((xs - 1) * chi_perp - xs * chi_A) == 0
    v = sp.Matrix(1, n, lambda i, j: sp.Symbol(f"v_{j}"))
    left = (v * A_perp - v * A + (v * ones)[0, 0] * ones.T / n).expand() == sp.zeros(1, n)
    return {"factorisation": bool(factorisation), "charpoly": bool(charpoly),
            "left_eigenvectors": bool(left)}
