r"""Free multiplicative convolution of laws on :math:`[0, \infty)`, exactly, in sympy.

A compactly supported probability law :math:`\mu` on :math:`[0, \infty)` (mean not
necessarily 1) is represented by its S-transform, a rational function of the module
symbol :data:`z` whose coefficients may contain symbolic parameters (``gamma``, ``c``):

.. math::

    \psi_\mu(u) = \sum_{k\ge1} m_k u^k = \int \frac{u t}{1 - u t}\, d\mu(t),\qquad
    \chi_\mu = \psi_\mu^{-1},\qquad
    S_\mu(z) = \chi_\mu(z)\,\frac{1+z}{z},

and free multiplicative convolution multiplies S-transforms [1]_ [2]_:

.. math::

    S_{\mu \boxtimes \nu}(z) = S_\mu(z)\, S_\nu(z).

Everything else is read off the rational function :math:`S = N/D` (coprime polynomials
in :math:`z`):

* moments, exactly, by Lagrange inversion of :math:`\chi(z) = z S(z)/(1+z)`
  (:meth:`FreeLaw.moments`);
* the algebraic equation of :math:`\psi` (:meth:`FreeLaw.moment_equation`) and of the
  Cauchy transform :math:`G(x) = \int \rho(t)/(x-t)\,dt = (1 + \psi(1/x))/x`
  (:meth:`FreeLaw.stieltjes_equation`);
* the right edge of the support, :math:`1/u^*` with :math:`u^* = \chi(p^*)` at the
  first positive critical point :math:`p^*` of :math:`\chi` (:meth:`FreeLaw.right_edge`);
* the density :math:`\rho(x) = -\operatorname{Im} G(x + i0)/\pi`, the physical root of
  the algebraic equation being selected by analytic continuation from
  :math:`G(w) \sim 1/w` at large :math:`|w|` (:meth:`FreeLaw.pdf`, :meth:`FreeLaw.density`).

Reference laws: Marchenko-Pastur :math:`MP(c)`, :math:`S = 1/(1 + c z)`, and
Fuss-Catalan :math:`FC_s = MP(1)^{\boxtimes s}`, :math:`S = (1+z)^{-s}`, the law of the
squared singular values of a product of :math:`s` normalised square Ginibre matrices [3]_.

Rectangular pictures (:func:`compress`, :func:`expand`). Let :math:`P` be a projection of
rank :math:`T` in dimension :math:`d`, free from :math:`M`, :math:`\gamma = T/d`. Its law
:math:`(1-\gamma)\delta_0 + \gamma\delta_1` has :math:`\psi_P(u) = \gamma u/(1-u)`, hence
:math:`S_P(z) = (1+z)/(\gamma+z)`. A law :math:`\mu_T` seen in dimension :math:`d` is
:math:`\mu_d = (1-\gamma)\delta_0 + \gamma\mu_T`, so :math:`\psi_d = \gamma\psi_T`,
:math:`\chi_d(z) = \chi_T(z/\gamma)` and

.. math::

    S_d(z) = S_T(z/\gamma)\,\frac{1+z}{\gamma+z}.

The :math:`T \times T` block of :math:`PMP` has :math:`S_{PMP,d} = S_M S_P`; undoing the
previous display,

.. math::

    S_T(w) = S_M(\gamma w).

Check: compressing :math:`MP(1)` (:math:`d \times d`) gives :math:`1/(1+\gamma w)`, i.e.
:math:`MP(\gamma)`, the law of :math:`(1/d) G G^\top` for a :math:`T \times d` Gaussian
:math:`G`.

Costs: symbolic work is polynomial algebra of degree :math:`\deg N + \deg D + 1`;
moments cost :math:`O(n^3)` coefficient multiplications; one density evaluation tracks
:math:`\approx 14` root sets of a polynomial of that degree (batched over points).

References
----------
.. [1] D. Voiculescu, "Multiplication of certain non-commuting random variables",
   J. Operator Theory 18 (1987) 223-235 (the S-transform).
.. [2] J. A. Mingo, R. Speicher, *Free Probability and Random Matrices*, Fields
   Institute Monographs 35, Springer, 2017.
.. [3] K. A. Penson, K. Zyczkowski, "Product of Ginibre matrices: Fuss-Catalan and
   Raney distributions", Phys. Rev. E 83 (2011) 061118, arXiv:1103.3453.
.. [4] U. Haagerup, S. Moller, "The law of large numbers for the free multiplicative
   convolution", in *Operator Algebra and Dynamics*, Springer 2013, arXiv:1211.4457
   (parametrisation of the Fuss-Catalan densities used as an independent reference).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import mpmath
import numpy as np
import sympy as sp
from scipy import integrate as _integrate

__all__ = [
    "z",
    "u",
    "psi",
    "G",
    "x",
    "FreeLaw",
    "marchenko_pastur",
    "fuss_catalan",
    "free_power",
    "compress",
    "expand",
]

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
_p = sp.Symbol("p")  # variable of chi in critical-point computations
_g = sp.Symbol("g")  # g = w G(w) = 1 + psi(1/w), the numerically tracked unknown

# Tracking constants (see FreeLaw._track): a step is accepted when the predicted value
# is closer to one root than _AMBIGUITY times the distance to the next root.
_AMBIGUITY = 0.3
_ETA_MIN = 1e-6  # relative to the support scale, before the final jump to eta = 0
_STEP = 0.75  # default step eta -> eta (1 - _STEP) along x + i eta
# Sample parameter values used to choose the branch of a symbolic critical point.
_SAMPLES = (sp.Rational(1, 5), sp.Rational(1, 2), sp.Rational(9, 10))


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


class FreeLaw:
    r"""A probability law on :math:`[0, \infty)` given by its S-transform.

    Parameters
    ----------
    S : sympy expression
        Rational function of :data:`z` (parameters allowed), with :math:`S(0)` finite
        and non-zero (:math:`S(0) = 1/m_1`).
    name : str
        Plain-text name, e.g. ``"MP(1)"``.
    latex : str, optional
        LaTeX name; defaults to ``name``.

    Numerical methods take the values of the free parameters as keyword arguments named
    after their symbols, e.g. ``law.pdf(xs, gamma=0.5)``. Exact inputs (integers,
    rationals, sympy numbers) give exact outputs where possible; floats give floats or
    mpmath numbers at the current ``mpmath.mp.dps``.
    """

    def __init__(self, S: Any, name: str, latex: str | None = None) -> None:
        self.S = sp.sympify(S)
        self.name = name
        self.latex = latex if latex is not None else name
        self._N, self._D = _num_den(self.S)
        if self._D.as_expr().subs(z, 0) == 0:
            raise ValueError("S(0) = 0: not the S-transform of a law with finite mean")
        self._moment_cache: list[sp.Expr] = []
        self._cache: dict[Any, Any] = {}

    # ------------------------------------------------------------------ algebra
    def __mul__(self, other: "FreeLaw") -> "FreeLaw":
        r"""Free multiplicative convolution: :math:`S_{a \boxtimes b} = S_a S_b`."""
        if not isinstance(other, FreeLaw):
            return NotImplemented
        return FreeLaw(
            self.S * other.S,
            f"{self.name} ⊠ {other.name}",
            rf"{self.latex} \boxtimes {other.latex}",
        )

    def __repr__(self) -> str:
        return f"FreeLaw(S={self.S}, name={self.name!r})"

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

    # ------------------------------------------------------------------ edges
    @staticmethod
    def _chi(N: sp.Poly, D: sp.Poly) -> tuple[sp.Expr, sp.Expr]:
        """chi(p) = p N(p) / ((1+p) D(p)) as (numerator, denominator) in ``_p``."""
        return _p * N.as_expr().subs(z, _p), (1 + _p) * D.as_expr().subs(z, _p)

    @staticmethod
    def _critical_poly(N: sp.Poly, D: sp.Poly) -> sp.Poly:
        r"""Square-free numerator of :math:`\chi'(p)`: :math:`f'g - fg'`, :math:`\chi = f/g`."""
        f, g = FreeLaw._chi(N, D)
        crit = sp.Poly(sp.expand(sp.diff(f, _p) * g - f * sp.diff(g, _p)), _p)
        return crit.sqf_part() if not crit.is_zero else crit

    @staticmethod
    def _positive_critical_numeric(N: sp.Poly, D: sp.Poly) -> Any:
        """Smallest positive root of chi' as an mpf, or None (current mp.dps)."""
        crit = FreeLaw._critical_poly(N, D)
        if crit.degree() < 1:
            return None
        coeffs = [_to_mpf(c) for c in crit.all_coeffs()]
        with mpmath.workdps(mpmath.mp.dps + 20):
            try:
                roots = mpmath.polyroots(coeffs, maxsteps=400, extraprec=4 * mpmath.mp.dps)
            except mpmath.libmp.NoConvergence:  # pragma: no cover - defensive
                roots = mpmath.polyroots(coeffs, maxsteps=2000, extraprec=8 * mpmath.mp.dps,
                                         error=False)
            tol = mpmath.mpf(10) ** (-(mpmath.mp.dps // 2))
            cands = sorted(mpmath.re(r) for r in roots
                           if abs(mpmath.im(r)) <= tol * (1 + abs(r)) and mpmath.re(r) > 0)
            if not cands:
                return None
            poly = lambda t: mpmath.polyval(coeffs, t)  # noqa: E731
            root = mpmath.findroot(poly, cands[0])  # Newton polish of a simple root
        return +root

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
        f, g = FreeLaw._chi(N, D)
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
        inside = [(c, m) for c, m in FreeLaw._real_poles(N, D) if -1 - 1e-12 <= c < 0]
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
        f, g = FreeLaw._chi(N, D)
        den = sp.Poly(sp.fraction(sp.cancel(f / g))[1], _p)
        z0, _ = FreeLaw._zero_pole(N, D)
        if z0 <= -1 + 1e-12:
            return sp.Integer(0)
        for factor, _m in sp.factor_list(den.as_expr(), _p)[1]:
            if sp.degree(factor, _p) <= 2:
                for r in sp.roots(sp.Poly(factor, _p)):
                    if abs(complex(sp.N(r)) - z0) < 1e-9:
                        return sp.simplify(1 + r)
        return sp.Float(1 + z0)

    # ------------------------------------------------------------------ density
    def _curve(self, params: dict[str, Any]) -> "_Curve":
        key = ("curve", self._key(params))
        if key not in self._cache:
            self._bind(params, complete=True)
            N, D = self._bound_polys(params)
            with mpmath.workdps(20):
                edge = float(self._edge_numeric(N, D))
            left = self._left_edge_numeric(N, D)
            _, order = self._zero_pole(N, D)
            self._cache[key] = _Curve(N, D, edge=edge, left=left, pole_order=order,
                                      atom=self._atom(N, D))
        return self._cache[key]

    def pdf(self, xs: Any, **params: Any) -> np.ndarray:
        r"""Density :math:`\rho(x) = -\operatorname{Im} G(x + i0)/\pi` at real points (float64).

        Vectorised: all points are tracked together from :math:`x + iH` (where
        :math:`G \approx 1/w`) down to :math:`x + i0`. Points :math:`\le 0` get 0 (an atom
        at 0 is not part of the density; see :meth:`atom_at_zero`). Cost: about 14
        batched eigenvalue problems of the degree of :meth:`stieltjes_equation`.
        """
        xs = np.asarray(xs, dtype=float)
        flat = xs.ravel()
        out = np.zeros_like(flat)
        pos = flat > 0
        if pos.any():
            curve = self._curve(params)
            h = curve.track(flat[pos])  # g = x G = atom + h
            out[pos] = -h.imag / (math.pi * flat[pos])  # rho = -Im(g/x)/pi
        return out.reshape(xs.shape)

    def cauchy(self, ws: Any, **params: Any) -> np.ndarray:
        r"""Cauchy transform :math:`G(w)` at points of the upper half-plane (complex128)."""
        ws = np.asarray(ws, dtype=complex)
        curve = self._curve(params)
        flat = ws.ravel()
        if np.any(flat.imag <= 0):
            raise ValueError("cauchy: points must lie in the open upper half-plane")
        g = curve.shift + curve.track(flat.real, stop=flat.imag)
        return (g / flat).reshape(ws.shape)

    def density(self, x0: Any, **params: Any) -> Any:
        r"""Density at one real point as an ``mpmath.mpf`` at the current ``mp.dps``.

        The branch is tracked in double precision (:meth:`pdf`), then the root of
        :math:`x\,Q(g/x, x)` nearest to it is recomputed with ``mpmath.polyroots`` at
        ``mp.dps``; a ``ValueError`` is raised unless that root is within
        :math:`10^{-10}|h|` of the double-precision value and the next root is
        :math:`10^6` times farther (it fails within about :math:`10^{-8}` of an edge,
        where two roots merge). Cost: one double-precision track plus one
        ``polyroots`` at ``mp.dps``.
        """
        xv = mpmath.mpf(x0) if not isinstance(x0, (sp.Basic,)) else _to_mpf(x0)
        if xv <= 0:
            return mpmath.mpf(0)
        curve = self._curve(params)
        gd = complex(curve.track(np.array([float(xv)]))[0])  # h = g - atom
        self._bind(params, complete=True)
        N, D = self._bound_polys(params)
        A, B = _g_polys(N, D, curve.shift_exact)
        with mpmath.workdps(mpmath.mp.dps + 20):
            a = [_to_mpf(c) for c in A]
            b = [_to_mpf(c) for c in B]
            coeffs = [ai + xv * bi for ai, bi in zip(a, b)]
            while coeffs and coeffs[0] == 0:
                coeffs.pop(0)
            roots = mpmath.polyroots(coeffs, maxsteps=500, extraprec=4 * mpmath.mp.dps)
            dist = sorted((abs(r - mpmath.mpc(gd)), i) for i, r in enumerate(roots))
            tol = 1e-10 * abs(gd)  # relative accuracy of the polished double-precision h
            if not dist[0][0] < tol or (len(dist) > 1 and not dist[1][0] > 1e6 * tol):
                raise ValueError(f"density({x0}): physical root not separated at double "
                                 "precision (too close to an edge)")
            root = roots[dist[0][1]]
            val = -mpmath.im(root) / (mpmath.pi * xv)
        return +val

    # ------------------------------------------------------------------ quadrature
    def _substitution(self, params: dict[str, Any]) -> tuple[Callable, "_Curve"]:
        r"""Map :math:`v \in [0,1] \mapsto x` removing endpoint singularities; returns dx/dv too.

        Support reaching 0 with :math:`\rho \asymp x^{-(n-1)/n}`:
        :math:`x = b\, t^{n}`, :math:`t = 1 - (1-v)^2`; gap :math:`(0, a)`:
        :math:`x = a + (b - a) \sin^2(\pi v / 2)`. Both make square-root edges smooth.
        """
        curve = self._curve(params)
        a, b, n = curve.left, curve.edge, max(curve.pole_order, 1)
        if a > 0:
            def mapping(v):
                s = np.sin(0.5 * np.pi * v)
                return a + (b - a) * s * s, (b - a) * np.pi * s * np.cos(0.5 * np.pi * v)
        else:
            def mapping(v):
                t = 1 - (1 - v) ** 2
                return b * t ** n, b * n * t ** (n - 1) * 2 * (1 - v)
        return mapping, curve

    def quad_moment(self, k: int, **params: Any) -> tuple[float, float]:
        r""":math:`\int_{(0, x^*]} x^k \rho(x)\,dx` and its error estimate (continuous part).

        ``scipy.integrate.tanhsinh`` on the smoothing substitution of
        :meth:`_substitution`, ``atol = rtol = 1e-12`` (the error estimate is
        returned; double precision limits it to about :math:`10^{-13}`).
        """
        mapping, _ = self._substitution(params)

        def integrand(v):
            xv, jac = mapping(v)
            return xv ** k * self.pdf(xv, **params) * jac

        res = _integrate.tanhsinh(integrand, 0.0, 1.0, atol=1e-12, rtol=1e-12, maxlevel=10)
        return float(res.integral), float(res.error)

    def total_mass(self, **params: Any) -> float:
        r"""Atom at 0 plus :math:`\int_0^{x^*} \rho` (should be 1; see :meth:`quad_moment`)."""
        curve = self._curve(params)
        return float(curve.atom) + self.quad_moment(0, **params)[0]

    def assert_normalised(self, tol: float = 1e-8, **params: Any) -> float:
        """Raise ``AssertionError`` unless :meth:`total_mass` is 1 within ``tol``; return it."""
        mass = self.total_mass(**params)
        if not abs(mass - 1) <= tol:
            raise AssertionError(f"{self.name}: total mass {mass!r} != 1 (tol {tol})")
        return mass

    def cdf(self, xs: Any, **params: Any) -> np.ndarray:
        r"""Distribution function :math:`F(x) = \mu([0, x])` (atom included), vectorised.

        Composite 8-point Gauss-Legendre in the smoothing variable :math:`v` of
        :meth:`_substitution`, on panels bounded by the sorted points and a uniform grid of
        256 panels; absolute error about :math:`10^{-9}` or better for the laws of this
        project (checked against the closed-form MP(1) distribution function).
        """
        xs = np.asarray(xs, dtype=float)
        flat = xs.ravel()
        mapping, curve = self._substitution(params)
        a, b, n = curve.left, curve.edge, max(curve.pole_order, 1)
        clipped = np.clip(flat, a, b)
        if a > 0:  # invert x = a + (b-a) sin^2(pi v/2)
            v = 2 / np.pi * np.arcsin(np.sqrt(np.clip((clipped - a) / (b - a), 0, 1)))
        else:  # invert x = b t^n, t = 1 - (1-v)^2
            t = (clipped / b) ** (1.0 / n)
            v = 1 - np.sqrt(np.clip(1 - t, 0, 1))
        knots = np.unique(np.concatenate([np.linspace(0, 1, 257), v]))
        nodes, weights = np.polynomial.legendre.leggauss(8)
        lo, hi = knots[:-1], knots[1:]
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        vv = (mid[:, None] + half[:, None] * nodes[None, :]).ravel()
        xv, jac = mapping(vv)
        vals = (self.pdf(xv, **params) * jac).reshape(len(lo), 8)
        panel = (vals * weights[None, :]).sum(axis=1) * half
        cum = np.concatenate([[0.0], np.cumsum(panel)])
        F = float(curve.atom) + np.interp(v, knots, cum)
        F = np.where(flat < 0, 0.0, np.where(flat >= b, 1.0, F))
        return F.reshape(xs.shape)


def _g_polys(N: sp.Poly, D: sp.Poly, shift: sp.Expr = sp.Integer(0)
             ) -> tuple[list[sp.Expr], list[sp.Expr]]:
    r"""Coefficients (high to low, in :math:`h = g - c`, :math:`c` = ``shift``) of
    :math:`A, B` with :math:`x\,Q(g/x, x) = A(g) + x B(g)`.

    .. math:: A(g) = g\, D(g-1),\qquad B(g) = -(g-1)\, N(g-1).

    The shift by the atom :math:`c` at 0 centres the root cluster of :math:`A` (a root
    of multiplicity :math:`n`, the order of the pole :math:`z_0 = c - 1` of
    :math:`\chi`) at :math:`h = 0`, where the scaled root finder resolves it.
    """
    gg = shift + _g  # _g plays h
    A = sp.Poly(sp.expand(gg * D.as_expr().subs(z, gg - 1)), _g).all_coeffs()
    B = sp.Poly(sp.expand(-(gg - 1) * N.as_expr().subs(z, gg - 1)), _g).all_coeffs()
    n = max(len(A), len(B))
    A = [sp.Integer(0)] * (n - len(A)) + list(A)
    B = [sp.Integer(0)] * (n - len(B)) + list(B)
    return A, B


class _Curve:
    r"""Numerical branch tracking for :math:`R(g, w) = A(g) + w B(g) = 0`, :math:`g = wG(w)`.

    Working with :math:`g = 1 + \psi(1/w)` instead of :math:`G` keeps the coefficients
    of order one both for large :math:`|w|` (:math:`g \to 1`) and near 0
    (:math:`g \to c`, the atom at 0), and makes them linear in :math:`w`. The unknown
    actually tracked is :math:`h = g - c` (see :func:`_g_polys`), so that
    :math:`\operatorname{Im} h = -\pi x \rho(x)` keeps full relative precision as
    :math:`x \to 0`.

    Branch choice by continuation: the physical :math:`G` is analytic in the open upper
    half-plane and :math:`\sim 1/w` at infinity, so it is the unique root with
    :math:`g \approx 1` at :math:`w = x + iH`, :math:`H` large, and stays on one sheet
    along :math:`w = x + i\eta`, :math:`\eta \downarrow 0` (the physical sheet has no
    branch point in the open half-plane; the other sheets may meet each other there).
    Steps divide :math:`\eta` by 4 (the step :math:`3\eta/4` stays inside the disc of
    radius :math:`\eta` about :math:`w`, where :math:`g` is analytic, so a first-order
    predictor is accurate) and are split further when the predicted value is not
    clearly nearest to one root; a last step goes to :math:`\eta = 0`. Never chosen by
    the sign or size of the imaginary part: for :math:`FC_3` the spurious complex pair
    has the larger :math:`|\operatorname{Im} G|` everywhere on the support.
    """

    def __init__(self, N: sp.Poly, D: sp.Poly, *, edge: float, left: float,
                 pole_order: int, atom: sp.Expr) -> None:
        A, B = _g_polys(N, D, atom)
        self.shift_exact = atom
        self.shift = float(atom)
        self.A = np.array([complex(sp.N(c, 20)) for c in A])
        self.B = np.array([complex(sp.N(c, 20)) for c in B])
        self.dA = np.polyder(self.A) if len(self.A) > 1 else np.zeros(1)
        self.dB = np.polyder(self.B) if len(self.B) > 1 else np.zeros(1)
        self.edge, self.left, self.pole_order, self.atom = edge, left, pole_order, float(atom)

    def roots(self, w: np.ndarray) -> np.ndarray:
        """All roots h of A(c + h) + w B(c + h), batched over w (shape (len(w), degree))."""
        c = self.A[None, :] + w[:, None] * self.B[None, :]
        n = c.shape[1] - 1
        if n == 1:
            return (-c[:, 1] / c[:, 0])[:, None]
        lead = c[:, :1]
        k = np.arange(1, n + 1)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ratio = np.abs(c[:, 1:] / lead) ** (1.0 / k)  # Fujiwara bound 2 max |c_k/c_0|^{1/k}
            s = 2 * np.max(ratio, axis=1)
            s = np.where(np.isfinite(s) & (s > 0), s, 1.0)
            scaled = c[:, 1:] / (lead * s[:, None] ** k)  # polynomial in h = g / s
        comp = np.zeros((len(w), n, n), dtype=complex)
        comp[:, 0, :] = -scaled
        comp[:, np.arange(1, n), np.arange(n - 1)] = 1.0
        return np.linalg.eigvals(comp) * s[:, None]

    def _derivative(self, g: np.ndarray, w: np.ndarray) -> np.ndarray:
        # implicit differentiation: dg/dw = -R_w / R_g = -B(g) / (A'(g) + w B'(g))
        with np.errstate(divide="ignore", invalid="ignore"):
            d = -np.polyval(self.B, g) / (np.polyval(self.dA, g) + w * np.polyval(self.dB, g))
        return np.where(np.isfinite(d), d, 0)

    def track(self, xs: np.ndarray, stop: np.ndarray | float = 0.0) -> np.ndarray:
        """The physical h = g - c at w = xs + i*stop (stop = 0: boundary value from above).

        Per-point adaptive steps eta -> eta (1 - f): f = 3/4, f = 1 (straight to the
        target) once eta/4 is below the target or _ETA_MIN times the support scale.
        A rejected step (predicted value not clearly nearest to one root) halves f, an
        accepted one doubles it back; a point whose f falls below 1e-6, or still rejected
        at eta < 1e-12 times the scale (possible only at a branch point, i.e. exactly at
        an edge, where the roots coincide) jumps to the target and takes the nearest
        root. Cost: about log4(H / eta_min) + 1 = 14
        batched eigenvalue problems (about 0.1 ms per point for degree 4).
        """
        xs = np.asarray(xs, dtype=float)
        target = np.broadcast_to(np.asarray(stop, dtype=float), xs.shape).copy()
        scale = max(self.edge, 1e-300)
        H = 4.0 * (scale + float(np.max(np.abs(xs), initial=0.0))) + 1.0
        H = max(H, 2.0 * float(np.max(target, initial=0.0)))
        eta = np.full(xs.shape, H)
        r = self.roots(xs + 1j * H)
        dist = np.abs(r - (1.0 - self.shift))  # g = wG(w) -> 1 at infinity, h = g - shift
        order = np.argsort(dist, axis=1)
        rows = np.arange(len(xs))
        g = r[rows, order[:, 0]]
        if r.shape[1] > 1 and not np.all(dist[rows, order[:, 0]] < 0.25 * dist[rows, order[:, 1]]):
            raise RuntimeError("branch start ambiguous at x + iH")  # pragma: no cover
        frac = np.full(xs.shape, _STEP)
        forced = np.zeros(xs.shape, dtype=bool)
        floor = _ETA_MIN * scale
        active = eta > target
        while active.any():
            idx = np.nonzero(active)[0]
            ea, tg = eta[idx], target[idx]
            fmax = np.where(ea * (1 - _STEP) <= np.maximum(tg, floor), 1.0, _STEP)
            f = np.minimum(frac[idx], fmax)
            eb = np.where((f >= 1.0) | forced[idx], tg, np.maximum(ea * (1 - f), tg))
            wa, wb = xs[idx] + 1j * ea, xs[idx] + 1j * eb
            pred = g[idx] + self._derivative(g[idx], wa) * (wb - wa)  # first-order predictor
            rr = self.roots(wb)
            dd = np.abs(rr - pred[:, None])
            oo = np.argsort(dd, axis=1)
            sub = np.arange(len(idx))
            new = rr[sub, oo[:, 0]]
            if rr.shape[1] > 1:
                ok = dd[sub, oo[:, 0]] <= _AMBIGUITY * dd[sub, oo[:, 1]]
            else:
                ok = np.ones(len(idx), dtype=bool)
            take = ok | forced[idx]
            g[idx[take]] = new[take]
            eta[idx[take]] = eb[take]
            frac[idx] = np.where(take, np.minimum(2 * f, 1.0), f / 2)
            # at a branch point (exactly at an edge) the roots coincide at the target:
            # after 20 halvings of f, or within 1e-6 of the final jump, take the nearest
            forced[idx] = ~take & ((f < 1e-6) | (ea < 1e-6 * floor))
            active = eta > target
        return self._polish(xs + 1j * target, g)

    def _polish(self, w: np.ndarray, g: np.ndarray) -> np.ndarray:
        # two Newton steps on R(g, w) = A(g) + w B(g); kept only if they move g a little
        out = g.copy()
        for _ in range(2):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                R = np.polyval(self.A, out) + w * np.polyval(self.B, out)
                dR = np.polyval(self.dA, out) + w * np.polyval(self.dB, out)
                step = R / dR
            ok = np.isfinite(step) & (np.abs(step) < 1e-6 * (1 + np.abs(out)))
            out = np.where(ok, out - step, out)
        return out


# ---------------------------------------------------------------------- constructors
def marchenko_pastur(c: Any = 1) -> FreeLaw:
    r"""Marchenko-Pastur :math:`MP(c)`: :math:`S(z) = 1/(1 + cz)`.

    Mean 1, second moment :math:`1+c`, right edge :math:`(1+\sqrt c)^2`; the law of
    :math:`(1/n) G G^\top` for a :math:`p\times n` standard Gaussian :math:`G`,
    :math:`c = p/n` [2]_.
    """
    c = sp.sympify(c)
    return FreeLaw(1 / (1 + c * z), f"MP({c})", rf"\mathrm{{MP}}({sp.latex(c)})")


def fuss_catalan(s: int) -> FreeLaw:
    r"""Fuss-Catalan :math:`FC_s`: :math:`S(z) = (1+z)^{-s}`, :math:`s \ge 0` integer.

    .. math:: m_k = \frac{1}{sk+1}\binom{(s+1)k}{k},\qquad x^* = \frac{(s+1)^{s+1}}{s^s}.

    The law of the squared singular values of a product of :math:`s` normalised square
    Ginibre matrices [3]_.
    """
    if int(s) != s or s < 0:
        raise ValueError("fuss_catalan(s): s must be a non-negative integer")
    s = int(s)
    return FreeLaw((1 + z) ** (-s), f"FC_{s}", rf"\mathrm{{FC}}_{{{s}}}")


def free_power(law: FreeLaw, n: int) -> FreeLaw:
    r""":math:`\mu^{\boxtimes n}`: :math:`S = S_\mu^n` (:math:`n \ge 1`)."""
    if int(n) != n or n < 1:
        raise ValueError("free_power(law, n): n must be an integer >= 1")
    n = int(n)
    if n == 1:
        return law
    return FreeLaw(law.S ** n, f"({law.name})^⊠{n}",
                   rf"\left({law.latex}\right)^{{\boxtimes {n}}}")


def compress(law_d: FreeLaw, gamma: Any) -> FreeLaw:
    r"""The :math:`T\times T` picture of :math:`PMP`: :math:`S_T(w) = S_M(\gamma w)`.

    :math:`M \sim` ``law_d`` in dimension :math:`d`, :math:`P` a free projection of rank
    :math:`T`, :math:`\gamma = T/d \in (0, 1]` (derivation in the module docstring).
    """
    gamma = sp.sympify(gamma)
    return FreeLaw(law_d.S.subs(z, gamma * z), f"compress({law_d.name}, {gamma})",
                   rf"\mathcal{{C}}_{{{sp.latex(gamma)}}}\left({law_d.latex}\right)")


def expand(law_T: FreeLaw, gamma: Any) -> FreeLaw:
    r"""The :math:`d\times d` picture :math:`(1-\gamma)\delta_0 + \gamma\mu_T`.

    .. math:: S_d(z) = S_T(z/\gamma)\,\frac{1+z}{\gamma+z}.
    """
    gamma = sp.sympify(gamma)
    return FreeLaw(law_T.S.subs(z, z / gamma) * (1 + z) / (gamma + z),
                   f"expand({law_T.name}, {gamma})",
                   rf"\mathcal{{E}}_{{{sp.latex(gamma)}}}\left({law_T.latex}\right)")
