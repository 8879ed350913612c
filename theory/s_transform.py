r"""S-transforms of laws on :math:`[0, \infty)` and their exact moment series, in sympy.

The algebraic core of the free-probability engine. :mod:`theory.free_probability` (the
public facade) assembles :class:`~theory.free_probability.FreeLaw` from the mixin of this
module, :class:`_MomentSeries`, and those of :mod:`theory.free_support` (edges, atom) and
:mod:`theory.free_density` (density, Cauchy transform, quadrature).

A law is represented by its S-transform :math:`S_\mu(z) = \chi_\mu(z)(1+z)/z`,
:math:`\chi_\mu` the inverse of the moment series :math:`\psi_\mu` (definitions in
:mod:`theory.free_probability`), and free multiplicative convolution multiplies
S-transforms [1]_ [2]_. This module holds what is read off the rational function
:math:`S = N/D` (coprime polynomials in :math:`z`) by exact polynomial algebra:

* the module symbols :data:`z`, :data:`u`, :data:`psi`, :data:`G`, :data:`x`;
* the conversions the whole engine shares: :math:`N, D` (:func:`_num_den`), floats as
  exact binary rationals (:func:`_exact_value`), sympy numbers as mpmath numbers at
  ``mp.dps`` + 10 (:func:`_to_mpf`);
* moments, exactly, by Lagrange inversion of :math:`\chi(z) = z S(z)/(1+z)`
  (:func:`_lagrange_moments`, :meth:`_MomentSeries.moments`);
* the algebraic equation of :math:`\psi` (:meth:`_MomentSeries.moment_equation`) and of
  the Cauchy transform :math:`G(x) = \int \rho(t)/(x-t)\,dt = (1 + \psi(1/x))/x`
  (:meth:`_MomentSeries.stieltjes_equation`);
* the binding of parameter values to the symbols of :math:`S` and the cache keys.

Costs: symbolic work is polynomial algebra of degree :math:`\deg N + \deg D + 1`;
moments cost :math:`O(n^3)` coefficient multiplications.

References
----------
.. [1] D. Voiculescu, "Multiplication of certain non-commuting random variables",
   J. Operator Theory 18 (1987) 223-235 (the S-transform).
.. [2] J. A. Mingo, R. Speicher, *Free Probability and Random Matrices*, Fields
   Institute Monographs 35, Springer, 2017.
"""
from __future__ import annotations

from typing import Any

import mpmath
import sympy as sp

__all__ = ["z", "u", "psi", "G", "x"]

#: The variable of S-transforms.
z = sp.Symbol("z")
#: The variable of the moment series :math:`\psi(u)`.
u = sp.Symbol("u")
#: The unknown of :meth:`FreeLaw.moment_equation`.
psi = sp.Symbol("psi")
#: The unknown of :meth:`FreeLaw.stieltjes_equation`.
G = sp.Symbol("G")
#: The real variable of densities.
x = sp.Symbol("x")


def _num_den(S: sp.Expr) -> tuple[sp.Poly, sp.Poly]:
    """Coprime numerator and denominator of ``S`` as polynomials in :data:`z`."""
    num, den = sp.fraction(sp.cancel(sp.together(sp.sympify(S))))
    try:
        N, D = sp.Poly(num, z), sp.Poly(den, z)
    except sp.PolynomialError as exc:  # pragma: no cover - defensive
        raise ValueError(f"S-transform must be rational in z, got {S}") from exc
    if N.is_zero:
        raise ValueError("S-transform must not vanish identically")
    return N, D


def _is_exact(value: sp.Expr) -> bool:
    """True when ``value`` contains no floating-point number."""
    return not any(isinstance(a, sp.Float) for a in sp.preorder_traversal(value))


def _exact_value(value: Any) -> sp.Expr:
    """A float as its exact binary rational; other values sympified unchanged."""
    e = sp.sympify(value)
    return sp.Rational(e) if isinstance(e, sp.Float) else e


def _to_mpf(value: Any) -> Any:
    """A sympy/python number as an mpmath number at the current ``mp.dps`` (+10 guard)."""
    if isinstance(value, (mpmath.mpf, mpmath.mpc)):
        return value
    v = sp.N(sp.sympify(value), mpmath.mp.dps + 10)
    re, im = v.as_real_imag()
    if im != 0:
        return mpmath.mpc(mpmath.mpf(sp.Float(re, mpmath.mp.dps + 10)),
                          mpmath.mpf(sp.Float(im, mpmath.mp.dps + 10)))
    return mpmath.mpf(sp.Float(re, mpmath.mp.dps + 10))


def _lagrange_moments(N: sp.Poly, D: sp.Poly, n: int) -> list[sp.Expr]:
    r"""Moments :math:`m_1..m_n` by Lagrange inversion.

    .. math::

        \chi(z) = \frac{z}{\varphi(z)},\quad \varphi(z) = \frac{(1+z) D(z)}{N(z)}
        \;\Longrightarrow\; m_k = [u^k]\psi = \frac1k [z^{k-1}]\, \varphi(z)^k.

    Cost: :math:`O(n^3)` multiplications of coefficient expressions.
    """
    P = [sp.expand(c) for c in reversed(sp.Poly((1 + z) * D.as_expr(), z).all_coeffs())]
    Q = [sp.expand(c) for c in reversed(N.all_coeffs())]
    if Q[0] == 0:
        raise ValueError("S(0) is infinite: the law has mean 0")
    P += [sp.Integer(0)] * n
    Q += [sp.Integer(0)] * n
    phi: list[sp.Expr] = []
    for k in range(n):  # phi_k = (P_k - sum_{j>=1} Q_j phi_{k-j}) / Q_0
        acc = P[k] - sum((Q[j] * phi[k - j] for j in range(1, k + 1)), sp.Integer(0))
        phi.append(sp.cancel(acc / Q[0]))
    moments = []
    power = [sp.Integer(1)] + [sp.Integer(0)] * (n - 1)  # phi^0 truncated at degree n-1
    for k in range(1, n + 1):
        power = [
            sp.cancel(sum((power[i] * phi[j - i] for i in range(j + 1)), sp.Integer(0)))
            for j in range(n)
        ]  # phi^k truncated
        moments.append(sp.cancel(power[k - 1] / k))
    return moments


class _MomentSeries:
    r"""Exact algebra of :class:`~theory.free_probability.FreeLaw` (mixin).

    Expects the attributes set by ``FreeLaw.__init__``: ``S``, ``name``, ``_N``, ``_D``
    (coprime numerator and denominator of ``S`` in :data:`z`) and ``_moment_cache``.
    """

    @property
    def parameters(self) -> tuple[sp.Symbol, ...]:
        """Free symbols of ``S`` other than :data:`z`, sorted by name."""
        return tuple(sorted(self.S.free_symbols - {z}, key=lambda s: s.name))

    def _bind(self, params: dict[str, Any], *, complete: bool,
              exactify: bool = False) -> dict[sp.Symbol, sp.Expr]:
        """Map parameter names to symbols; ``exactify`` turns floats into their exact
        binary rationals (so that the polynomial algebra stays exact)."""
        by_name = {s.name: s for s in self.parameters}
        unknown = set(params) - set(by_name)
        if unknown:
            raise TypeError(f"{self.name}: unknown parameter(s) {sorted(unknown)}; "
                            f"parameters are {sorted(by_name)}")
        if complete and set(by_name) - set(params):
            missing = sorted(set(by_name) - set(params))
            raise TypeError(f"{self.name}: missing value(s) for {missing}")
        conv = _exact_value if exactify else sp.sympify
        return {by_name[k]: conv(v) for k, v in params.items()}

    def _key(self, params: dict[str, Any]) -> tuple:
        return tuple(sorted((k, sp.srepr(sp.sympify(v))) for k, v in params.items()))

    def _bound_polys(self, params: dict[str, Any]) -> tuple[sp.Poly, sp.Poly]:
        """N, D with the parameters bound; every float made an exact binary rational."""
        sub = self._bind(params, complete=False, exactify=True)
        S = self.S.subs(sub) if sub else self.S
        if not _is_exact(S):
            S = S.xreplace({f: sp.Rational(f) for f in S.atoms(sp.Float)})
        elif not sub:
            return self._N, self._D
        return _num_den(S)

    def mean(self, **params: Any) -> sp.Expr:
        r""":math:`m_1 = 1/S(0)`."""
        return sp.cancel(self._D.as_expr().subs(z, 0) / self._N.as_expr().subs(z, 0)).subs(
            self._bind(params, complete=False))

    def moments(self, n: int, **params: Any) -> list[sp.Expr]:
        r"""Exact moments :math:`m_1, \dots, m_n` (Lagrange inversion; cached).

        .. math:: m_k = \frac1k [z^{k-1}] \Big(\frac{1+z}{S(z)}\Big)^k .
        """
        if n < 1:
            return []
        if len(self._moment_cache) < n:
            self._moment_cache = _lagrange_moments(self._N, self._D, n)
        out = self._moment_cache[:n]
        sub = self._bind(params, complete=False)
        if sub:
            out = [sp.cancel(m.subs(sub)) for m in out]
        return list(out)

    def moment_equation(self) -> sp.Expr:
        r"""Polynomial :math:`P(\psi, u)` with :math:`P(\psi(u), u) = 0`.

        From :math:`u = \chi(\psi) = \psi S(\psi)/(1+\psi)` and :math:`S = N/D`:

        .. math:: P(\psi, u) = u (1+\psi) D(\psi) - \psi N(\psi).
        """
        return sp.expand(u * (1 + psi) * self._D.as_expr().subs(z, psi)
                         - psi * self._N.as_expr().subs(z, psi))

    def stieltjes_equation(self) -> sp.Expr:
        r"""Polynomial :math:`Q(G, x)` satisfied by the Cauchy transform.

        With :math:`G(x) = (1 + \psi(1/x))/x`, i.e. :math:`\psi = xG - 1`, :math:`u = 1/x`
        and :math:`u(1+\psi) = G`:

        .. math:: Q(G, x) = G\, D(xG - 1) - (xG - 1)\, N(xG - 1).
        """
        t = x * G - 1
        return sp.expand(G * self._D.as_expr().subs(z, t) - t * self._N.as_expr().subs(z, t))
