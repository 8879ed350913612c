r"""Support of a free law on :math:`[0, \infty)`: right edge, left edge, atom at 0.

The edge mixin of :class:`~theory.free_probability.FreeLaw` (assembled in the facade
:mod:`theory.free_probability`; the S-transform algebra is in :mod:`theory.s_transform`).
Everything is read off the inverse of the moment series,

.. math::

    \chi(p) = \frac{p\, S(p)}{1+p} = \frac{p\, N(p)}{(1+p)\, D(p)},

through its critical points and poles:

* the right edge of the support, :math:`1/u^*` with :math:`u^* = \chi(p^*)` at the
  first positive critical point :math:`p^*` of :math:`\chi`
  (:meth:`_SupportEdges.right_edge`): exactly by ``sympy.roots`` (or ``real_roots``),
  as a closed form in the symbolic parameters (:meth:`_SupportEdges.right_edge_expr`;
  the branch is chosen at the sample parameter values :data:`_SAMPLES`), or numerically
  by exact real-root isolation and bisection (rational coefficients), else
  ``mpmath.polyroots`` candidates confirmed and refined by bisection on a sign change
  (:meth:`_SupportEdges._positive_critical_numeric`);
* the left edge :math:`a` of the continuous part, where :math:`\chi` has a positive
  local minimum between its pole :math:`z_0` and the next real pole below it
  (:meth:`_SupportEdges._left_edge_numeric`);
* the atom at 0, of mass :math:`1 + z_0`, :math:`z_0 = \lim_{u\to-\infty}\psi(u)` the
  largest pole of :math:`\chi` in :math:`[-1, 0)`; a pole of order :math:`n \ge 2`
  gives :math:`\rho(x) \asymp x^{-(n-1)/n}` near 0 (:meth:`_SupportEdges.atom_at_zero`).

For Fuss-Catalan :math:`FC_s`, :math:`S = (1+z)^{-s}`, the right edge is
:math:`(s+1)^{s+1}/s^s` [3]_.

References
----------
.. [2] J. A. Mingo, R. Speicher, *Free Probability and Random Matrices*, Fields
   Institute Monographs 35, Springer, 2017.
.. [3] K. A. Penson, K. Zyczkowski, "Product of Ginibre matrices: Fuss-Catalan and
   Raney distributions", Phys. Rev. E 83 (2011) 061118, arXiv:1103.3453.
"""
from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from gapverify.theory.s_transform import _is_exact, _num_den, _to_mpf, z

__all__: list[str] = []

_p = sp.Symbol("p")  # variable of chi in critical-point computations
# Sample parameter values used to choose the branch of a symbolic critical point.
_SAMPLES = (sp.Rational(1, 5), sp.Rational(1, 2), sp.Rational(9, 10))


class _SupportEdges:
    r"""Edges and atom of :class:`~theory.free_probability.FreeLaw` (mixin).

    Expects ``S``, ``name``, ``_N``, ``_D``, ``_cache`` and the methods ``parameters``,
    ``_bind``, ``_key``, ``_bound_polys`` of :class:`theory.s_transform._MomentSeries`.
    """

    # ------------------------------------------------------------------ edges
    @staticmethod
    def _chi(N: sp.Poly, D: sp.Poly) -> tuple[sp.Expr, sp.Expr]:
        """chi(p) = p N(p) / ((1+p) D(p)) as (numerator, denominator) in ``_p``."""
        return _p * N.as_expr().subs(z, _p), (1 + _p) * D.as_expr().subs(z, _p)

    @staticmethod
    def _critical_poly(N: sp.Poly, D: sp.Poly) -> sp.Poly:
        r"""Square-free numerator of :math:`\chi'(p)`: :math:`f'g - fg'`, :math:`\chi = f/g`."""
        f, g = _SupportEdges._chi(N, D)
        crit = sp.Poly(sp.expand(sp.diff(f, _p) * g - f * sp.diff(g, _p)), _p)
        return crit.sqf_part() if not crit.is_zero else crit

    @staticmethod
    def _positive_critical_numeric(N: sp.Poly, D: sp.Poly) -> Any:
        r"""Smallest positive root of :math:`\chi'` as an mpf, or None (current mp.dps).

        Rational coefficients (every float is bound as its exact binary rational): exact
        real-root isolation (``Poly.intervals``, Descartes/continued fractions) and exact
        bisection of the first positive isolating interval down to width
        :math:`10^{-(\mathrm{dps}+10)}` (``Poly.refine_root``). Other coefficients:
        candidates from ``mpmath.polyroots`` at ``mp.dps`` + 20, each confirmed by a sign
        change of :math:`\chi'` on a bracket around it and refined by bisection
        (:meth:`_bisect_sign_change`). No Newton step without a bracket: the float
        polish (``findroot``'s residual test) fails at e.g. depth 2, gamma = 0.6.
        """
        crit = _SupportEdges._critical_poly(N, D)
        if crit.degree() < 1:
            return None
        if crit.get_domain().is_ZZ or crit.get_domain().is_QQ:
            pos = [iv for iv, _m in crit.intervals(inf=0) if iv[1] > 0]  # a >= 0
            if not pos:
                return None
            a, b = min(pos, key=lambda iv: iv[0])
            if a == b:
                return _to_mpf(a)
            eps = sp.Rational(1, 10 ** (mpmath.mp.dps + 10))
            a, b = crit.refine_root(a, b, eps=eps)
            return _to_mpf((a + b) / 2)
        coeffs = [_to_mpf(c) for c in crit.all_coeffs()]
        with mpmath.workdps(mpmath.mp.dps + 20):
            roots = mpmath.polyroots(coeffs, maxsteps=2000, extraprec=8 * mpmath.mp.dps,
                                     error=False)
            tol = mpmath.mpf(10) ** (-(mpmath.mp.dps // 4))
            cands = sorted(mpmath.re(r) for r in roots
                           if abs(mpmath.im(r)) <= tol * (1 + abs(r)) and mpmath.re(r) > 0)
            for c in cands:
                root = _SupportEdges._bisect_sign_change(coeffs, c)
                if root is not None:
                    return +root
        return None

    @staticmethod
    def _bisect_sign_change(coeffs: list, c: Any) -> Any:
        r"""Root of the polynomial ``coeffs`` bracketed around ``c`` by a sign change.

        Widens :math:`[c(1-h), c(1+h)]`, :math:`h = 10^{-\mathrm{dps}/2}\cdot 4^k`, until
        the signs at the ends differ (at most :math:`h = 1/4`), then bisects to relative
        width :math:`2^{-\mathrm{prec}}`; None when no bracket is found (an even-order
        root, which is not a maximum of :math:`\chi`).
        """
        f = lambda t: mpmath.polyval(coeffs, t)  # noqa: E731
        h = mpmath.mpf(10) ** (-(mpmath.mp.dps // 2))
        while h <= 0.25:
            lo, hi = c * (1 - h), c * (1 + h)
            flo, fhi = f(lo), f(hi)
            if flo == 0:
                return lo
            if fhi == 0:
                return hi
            if (flo < 0) != (fhi < 0):
                break
            h *= 4
        else:
            return None
        for _ in range(mpmath.mp.prec + 8):  # bisection: halves the bracket each step
            mid = (lo + hi) / 2
            fm = f(mid)
            if fm == 0 or hi - lo <= abs(mid) * mpmath.eps:
                return mid
            if (fm < 0) == (flo < 0):
                lo, flo = mid, fm
            else:
                hi = mid
        return (lo + hi) / 2

    def _edge_numeric(self, N: sp.Poly, D: sp.Poly) -> Any:
        r"""Right edge :math:`1/\chi(p^*)` as an mpf (critical point, else :math:`p\to\infty`)."""
        f, g = self._chi(N, D)
        pstar = self._positive_critical_numeric(N, D)
        if pstar is None:  # chi increases to its limit at infinity (an atom at the edge)
            lim = sp.limit(f / g, _p, sp.oo)
            if not (lim.is_positive and lim.is_finite):
                raise ValueError(f"{self.name}: no right edge (chi has no positive maximum)")
            return 1 / _to_mpf(lim)
        fv = mpmath.polyval([_to_mpf(c) for c in sp.Poly(f, _p).all_coeffs()], pstar)
        gv = mpmath.polyval([_to_mpf(c) for c in sp.Poly(g, _p).all_coeffs()], pstar)
        return gv / fv

    def _edge_exact(self, N: sp.Poly, D: sp.Poly) -> sp.Expr | None:
        """Exact right edge for exact numeric coefficients, or None if sympy cannot."""
        crit = self._critical_poly(N, D)
        f, g = self._chi(N, D)
        if crit.degree() < 1:
            return None
        roots = sp.roots(crit)
        if sum(roots.values()) != crit.degree():
            if crit.get_domain().is_QQ or crit.get_domain().is_ZZ:
                roots = {r: 1 for r in crit.real_roots()}
            else:
                return None
        pos = []
        for r in roots:
            v = sp.N(r, 40)
            re, im = v.as_real_imag()
            if abs(im) <= sp.Float(10) ** -30 * (1 + abs(v)) and re > 0:
                pos.append((re, r))
        if not pos:
            return None
        pstar = min(pos, key=lambda t: t[0])[1]
        if sp.im(pstar) != 0 and not pstar.is_real:
            pstar = sp.re(pstar)  # Cardano real root written with I
        edge = sp.radsimp(sp.cancel(g.subs(_p, pstar) / f.subs(_p, pstar)))
        if sp.count_ops(edge) < 60:
            edge = sp.simplify(edge)
        return edge

    def right_edge_expr(self) -> sp.Expr | None:
        r"""Closed form of the right edge in the symbolic parameters, or None.

        Solves the critical-point polynomial of :math:`\chi(p) = pS(p)/(1+p)` with
        ``sympy.roots`` and keeps the root that equals the smallest positive critical
        point at the sample parameter values 1/5, 1/2, 9/10 (all parameters); the
        expression is the edge on the parameter range where that branch stays the
        physical one (for the laws of this project: all of :math:`(0, 1]`).
        """
        if "edge_expr" in self._cache:
            return self._cache["edge_expr"]
        params = self.parameters
        if not params:
            result = self._edge_exact(self._N, self._D)
            self._cache["edge_expr"] = result
            return result
        crit = self._critical_poly(self._N, self._D)
        f, g = self._chi(self._N, self._D)
        roots = sp.roots(crit) if crit.degree() >= 1 else {}
        result = None
        for r in roots:
            ok = True
            for val in _SAMPLES:
                sub = {s: val for s in params}
                Ns, Ds = _num_den(self.S.subs(sub))
                with mpmath.workdps(30):
                    ref = self._positive_critical_numeric(Ns, Ds)
                    if ref is None:
                        ok = False
                        break
                    rv = complex(sp.N(r.subs(sub), 30))
                    if abs(rv - complex(ref)) > 1e-20 * (1 + abs(complex(ref))):
                        ok = False
                        break
            if ok:
                edge = sp.cancel(g.subs(_p, r) / f.subs(_p, r))
                edge = sp.radsimp(edge)
                if sp.count_ops(edge) < 80:
                    edge = sp.simplify(edge)
                result = edge
                break
        self._cache["edge_expr"] = result
        return result

    def right_edge(self, **params: Any) -> Any:
        r"""Right edge of the support, :math:`1/\max_{p>0} \chi(p)`.

        .. math:: \chi(p) = \frac{p\, S(p)}{1+p},\qquad x^* = 1/\chi(p^*),\quad
                  \chi'(p^*) = 0,

        :math:`p^*` the first positive critical point (where the increasing branch
        :math:`\psi` on :math:`(0, 1/x^*)` ends with a square-root singularity; for the
        laws of this project it is the only positive critical point, so it is also the
        maximum of :math:`\chi` on :math:`p > 0`). Without a
        positive critical point the edge is :math:`1/\lim_{p\to\infty}\chi(p)` (an atom
        at the edge). Exact sympy number when all parameters are exact and sympy solves
        the polynomial; a closed form in the remaining symbols when some are left
        unbound; otherwise an ``mpmath.mpf`` at ``mp.dps``.
        """
        sub = self._bind(params, complete=False)
        S = self.S.subs(sub) if sub else self.S
        floats = not _is_exact(S)
        free = S.free_symbols - {z}
        if free:
            expr = self.right_edge_expr()
            if expr is None:
                raise ValueError(f"{self.name}: no closed-form edge; bind all parameters")
            return expr.subs(sub)
        N, D = self._bound_polys(params)
        if not floats:
            key = ("edge_exact", self._key(params))
            if key not in self._cache:
                self._cache[key] = self._edge_exact(N, D)
            if self._cache[key] is not None:
                return self._cache[key]
        return self._edge_numeric(N, D)

    def _left_edge_numeric(self, N: sp.Poly, D: sp.Poly) -> float:
        r"""Left edge :math:`a` of the continuous part (0 when the support reaches 0).

        For :math:`x < a` the real branch of :math:`\psi(1/x)` lies between the pole
        :math:`z_0` of :math:`\chi` and the next real pole below it, where :math:`\chi`
        has a positive local minimum :math:`\chi(p_-) = 1/a`. This happens only for a
        simple pole :math:`z_0` (a pole of order :math:`n \ge 2` means
        :math:`\rho \asymp x^{-(n-1)/n}` at 0: no gap).
        """
        poles = self._real_poles(N, D)
        z0, order = self._zero_pole(N, D)
        if order != 1:
            return 0.0
        crit = self._critical_poly(N, D)
        if crit.degree() < 1:
            return 0.0
        lower = max((c for c, _ in poles if c < z0 - 1e-12), default=-math.inf)
        f, g = self._chi(N, D)
        rts = np.roots([complex(c) for c in crit.all_coeffs()])
        between = sorted((r.real for r in rts if abs(r.imag) < 1e-9 * (1 + abs(r))
                          and lower + 1e-12 < r.real < z0 - 1e-12), reverse=True)
        if not between:
            return 0.0
        val = complex(sp.N((f / g).subs(_p, between[0])))
        return 1.0 / val.real if val.real > 0 else 0.0

    @staticmethod
    def _real_poles(N: sp.Poly, D: sp.Poly) -> list[tuple[float, int]]:
        """Real poles of chi(p) = p N(p) / ((1+p) D(p)) with their orders."""
        f, g = _SupportEdges._chi(N, D)
        den = sp.Poly(sp.fraction(sp.cancel(f / g))[1], _p)
        out: list[tuple[float, int]] = []
        # exact factorisation gives the multiplicities; each factor has simple roots
        for factor, mult in sp.factor_list(den.as_expr(), _p)[1]:
            coeffs = [complex(sp.N(c, 30)) for c in sp.Poly(factor, _p).all_coeffs()]
            if len(coeffs) < 2:
                continue
            for r in np.roots(coeffs):
                if abs(r.imag) < 1e-9 * (1 + abs(r)):
                    out.append((float(r.real), int(mult)))
        return out

    @staticmethod
    def _zero_pole(N: sp.Poly, D: sp.Poly) -> tuple[float, int]:
        r"""Largest pole :math:`z_0 \in [-1, 0)` of :math:`\chi` and its order :math:`n`.

        :math:`\psi(u) \to z_0` as :math:`u \to -\infty`, so the atom at 0 has mass
        :math:`1 + z_0`; a pole of order :math:`n \ge 2` gives the density
        :math:`\rho(x) \asymp x^{-(n-1)/n}` near 0.
        """
        inside = [(c, m) for c, m in _SupportEdges._real_poles(N, D) if -1 - 1e-12 <= c < 0]
        if not inside:
            raise ValueError("chi has no pole in [-1, 0): not a law on [0, inf)")
        return max(inside)

    def atom_at_zero(self, **params: Any) -> Any:
        r"""Mass of the atom at 0: :math:`1 + z_0`, :math:`z_0 = \lim_{u\to-\infty}\psi(u)`."""
        N, D = self._bound_polys(params)
        atom = self._atom(N, D)
        if all(_is_exact(sp.sympify(v)) for v in params.values()):
            return atom
        return float(atom)

    @staticmethod
    def _atom(N: sp.Poly, D: sp.Poly) -> sp.Expr:
        """1 + z0, exact when z0 is a root of a factor of degree <= 2, else a Float."""
        f, g = _SupportEdges._chi(N, D)
        den = sp.Poly(sp.fraction(sp.cancel(f / g))[1], _p)
        z0, _ = _SupportEdges._zero_pole(N, D)
        if z0 <= -1 + 1e-12:
            return sp.Integer(0)
        for factor, _m in sp.factor_list(den.as_expr(), _p)[1]:
            if sp.degree(factor, _p) <= 2:
                for r in sp.roots(sp.Poly(factor, _p)):
                    if abs(complex(sp.N(r)) - z0) < 1e-9:
                        return sp.simplify(1 + r)
        return sp.Float(1 + z0)
