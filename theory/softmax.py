r"""``softmax.kappa``: the coefficient of variation of softmax attention entries.

For :math:`Z = e^{M}`, :math:`M \sim N(\mu, s^2)`, the moments are computed by sympy from
the Gaussian law (not typed in):

.. math::

    m = \mathbb E Z = e^{\mu + s^2/2},\qquad
    \sigma^2 = \operatorname{Var} Z = (e^{s^2} - 1)\, e^{2\mu + s^2},\qquad
    \kappa^2 = \sigma^2 / m^2 = e^{s^2} - 1,

free of :math:`\mu` (softmax is invariant to a shift of the logits).

References
----------
.. [1] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap", ICML 2025, arXiv:2410.07799.
.. [2] C. Bordenave, P. Caputo, D. Chafai, PTRF 152 (2012), arXiv:0808.1502.
"""
from __future__ import annotations

from functools import cache

import sympy as sp
from sympy.codegen.cfunctions import expm1
from sympy.stats import Normal, moment_generating_function

from gapverify.theory.parameters import PARAMETERS, exact

__all__ = ["entry_moments", "kappa_squared", "kappa_squared_at", "kappa"]

MU = PARAMETERS["mu"].symbol
S2 = PARAMETERS["s2"].symbol


def _closed(expr: sp.Expr) -> sp.Expr:
    # sympy returns erf/erfc combinations for a Gaussian expectation; erfc = 1 - erf
    return sp.simplify(expr.rewrite(sp.erf))


@cache
def entry_moments() -> tuple[sp.Expr, sp.Expr]:
    """``(m, sigma^2)`` of ``exp(N(mu, s2))`` as sympy expressions in ``mu``, ``s2``."""
    M = Normal("M", MU, sp.sqrt(S2))
    # E e^{kM} is the law's moment generating function at k (sympy's, from the density):
    # the same value as E(exp(k M)) by integration, which took 17 s per process
    mgf = moment_generating_function(M)
    m = _closed(mgf(1))
    second = _closed(mgf(2))
    return m, sp.simplify(second - m**2)


@cache
def kappa_squared() -> sp.Expr:
    r""":math:`\kappa^2 = \sigma^2/m^2` as a sympy expression in ``s2`` (``mu`` cancels)."""
    m, var = entry_moments()
    k2 = sp.simplify(var / m**2)
    if MU in k2.free_symbols:  # the derivation must eliminate the logit mean
        raise AssertionError(f"kappa^2 should not depend on mu, got {k2}")
    return k2


def kappa_squared_at(s2: sp.Expr, k2: sp.Expr | None = None) -> sp.Expr:
    r""":math:`\kappa^2` at ``s2``: the symbolic :func:`kappa_squared` at a symbol; at a
    number, ``e^{s2} - 1`` is written ``expm1(s2)`` (still exact), so that evaluating it
    to 17 digits does not cancel: ``exp(1e-300) - 1`` evaluated by sympy's default working
    precision gave ``1.4e-129`` instead of ``1e-300`` (``kappa`` 3.8e-65 for 1e-150).
    ``k2`` is the expression in ``s2`` to use (default :func:`kappa_squared`)."""
    k2 = kappa_squared() if k2 is None else k2
    if getattr(s2, "is_number", False):
        k2 = k2.subs(sp.exp(S2) - 1, expm1(S2))
    return k2.subs(S2, s2)


def kappa(s2: float | sp.Expr) -> sp.Expr:
    """``kappa`` at logit variance ``s2`` (exact sympy expression)."""
    value = exact("s2", s2) if isinstance(s2, (int, float)) else s2
    return sp.sqrt(kappa_squared_at(value))
