r"""Density, Cauchy transform and quadrature of a free law, by numerical branch tracking.

The density mixin of :class:`~theory.free_probability.FreeLaw` (assembled in the facade
:mod:`theory.free_probability`; the S-transform algebra is in :mod:`theory.s_transform`,
the edges and the atom at 0 in :mod:`theory.free_support`), and the numerical root
tracking it rests on (:func:`_g_polys`, :class:`_Curve`).

The density is :math:`\rho(x) = -\operatorname{Im} G(x + i0)/\pi`, with :math:`G` the
Cauchy transform, a root of the algebraic equation

.. math:: Q(G, x) = G\, D(xG - 1) - (xG - 1)\, N(xG - 1)

(:meth:`~theory.free_probability.FreeLaw.stieltjes_equation`). The physical root is
selected by analytic continuation from :math:`G(w) \sim 1/w` at large :math:`|w|`
(:meth:`_DensityQuadrature.pdf`, :meth:`_DensityQuadrature.cauchy`), in double
precision, and polished at ``mp.dps`` with ``mpmath.polyroots``
(:meth:`_DensityQuadrature.density`). The unknown tracked is
:math:`g = wG(w) = 1 + \psi(1/w)`, shifted by the atom at 0 (see :class:`_Curve`).

Quadrature (:meth:`_DensityQuadrature.quad_moment`, :meth:`_DensityQuadrature.cdf`)
uses a substitution that removes the endpoint singularities of :math:`\rho`.

Costs: one density evaluation tracks :math:`\approx 14` root sets of a polynomial of
degree :math:`\deg N + \deg D + 1` (batched over points).

References
----------
.. [2] J. A. Mingo, R. Speicher, *Free Probability and Random Matrices*, Fields
   Institute Monographs 35, Springer, 2017.
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

from gapverify.theory.s_transform import _to_mpf, z

__all__: list[str] = []

_g = sp.Symbol("g")  # g = w G(w) = 1 + psi(1/w), the numerically tracked unknown

# Tracking constants (see FreeLaw._track): a step is accepted when the predicted value
# is closer to one root than _AMBIGUITY times the distance to the next root.
_AMBIGUITY = 0.3
_ETA_MIN = 1e-6  # relative to the support scale, before the final jump to eta = 0
_STEP = 0.75  # default step eta -> eta (1 - _STEP) along x + i eta


class _DensityQuadrature:
    r"""Density, Cauchy transform and quadrature of
    :class:`~theory.free_probability.FreeLaw` (mixin).

    Expects ``name``, ``_cache`` and the methods of
    :class:`theory.s_transform._MomentSeries` and :class:`theory.free_support._SupportEdges`.
    """

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
        from scipy import integrate as _integrate

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
