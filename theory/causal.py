r"""``causal.cesaro``: causal (decoder) softmax attention and the Cesaro matrix.

Row :math:`i` of causal attention is a softmax over its first :math:`i` logits:
:math:`A_{ij} = Z_{ij}/\sum_{k\le i} Z_{ik}` for :math:`j \le i`, 0 above the diagonal,
:math:`Z = e^M`, :math:`M_{ij}` i.i.d. :math:`N(\mu, s^2)`.

* (theorem) the :math:`i` entries of row :math:`i` are exchangeable and sum to 1, so
  :math:`\mathbb E A = C_T`, the Cesaro matrix :math:`(C_T)_{ij} = 1/i` for
  :math:`j \le i`; and :math:`\|C_T\|_F^2 = \sum_i i\cdot i^{-2} = H_T` exactly
  (:func:`cesaro_frobenius_sq`, by sympy summation).
* (theorem) :math:`s_1(C_T) \uparrow 2`: the norm of the Cesaro operator on
  :math:`\ell^2` is Hardy's constant :math:`p/(p-1)` at :math:`p = 2`
  (:func:`hardy_constant`), and finite sections of a bounded operator converge strongly.
  The approach is slow, like :math:`1/\log^2 T` (Wilf [2]_): :math:`C_TC_T^\top =
  (1/\max(i,j))` acts on the Mellin line :math:`x^{-1/2+it}` by the symbol
  :math:`\lambda(t) = 4/(1+4t^2)` (:func:`cesaro_symbol`, whose maximum 4 is Hardy's
  constant squared), and a section of log-length :math:`\log T` quantizes the frequency
  at about :math:`t = \pi/(\log T + b)`, so that
  :math:`s_1(C_T) \approx 2\,(1 + 4\pi^2/(\log T + b)^2)^{-1/2}`
  (:func:`cesaro_section_factor`), :math:`b` a boundary phase fitted to the data
  (derived, heuristic: a continuum limit, not a proof).
* (derived) the noise: row :math:`i` contributes
  :math:`f_i = \mathbb E\sum_{j\le i}(A_{ij} - 1/i)^2 = i\,\mathbb E A_{i1}^2 - 1/i
  = \kappa^2/i + O(i^{-2})`, and with
  :math:`S^{-2} = \int_0^\infty t e^{-tS}dt`,

  .. math::

      \mathbb E A_{i1}^2 = \int_0^\infty t\,L_2(t)\,L_0(t)^{i-1}\,dt,\qquad
      L_k(t) = \mathbb E\bigl[Z^k e^{-tZ}\bigr],

  so that, summing the geometric series :math:`\sum_{i\le T} i x^{i-1}`,

  .. math::

      \mathbb E\|A - C_T\|_F^2 = \int_0^\infty t\,L_2(t)\,
      \frac{1 - (T+1)L_0^T + T L_0^{T+1}}{(1 - L_0)^2}\,dt \;-\; H_T
      = \kappa^2 H_T - c + o(1)

  (:func:`expected_noise_frobenius`): :math:`\|A - C_T\|_F^2/H_T \to \kappa^2` with a
  :math:`1/H_T` correction. For exponential entries (Dirichlet rows)
  :math:`f_i = (i-1)/(i(i+1))` and the sum is exact: :math:`H_T - 2 + 2/(T+1)`
  (:func:`dirichlet_noise_frobenius`). The rows :math:`T/2 < i \le T` alone carry
  :math:`\kappa^2 (H_T - H_{\lfloor T/2\rfloor}) + O(1/T)`.

References
----------
.. [1] G. H. Hardy, J. E. Littlewood, G. Polya, "Inequalities", 2nd ed., CUP 1952,
   Thm. 326 (Hardy's inequality, sharp constant p/(p-1)).
.. [2] H. S. Wilf, "Finite sections of some classical inequalities", Springer 1970.
.. [3] C. Bordenave, P. Caputo, D. Chafai, PTRF 152 (2012), arXiv:0808.1502.
.. [4] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap", ICML 2025, arXiv:2410.07799.
"""
from __future__ import annotations

from functools import cache

import math

import mpmath
import numpy as np
import sympy as sp
from scipy import integrate

__all__ = ["cesaro_matrix", "cesaro_frobenius_sq", "harmonic", "hardy_constant",
           "cesaro_symbol", "cesaro_section_factor",
           "noise_row_laplace", "expected_noise_frobenius", "dirichlet_noise_frobenius"]

_T = sp.Symbol("T", positive=True, integer=True)
_I = sp.Symbol("i", positive=True, integer=True)


def cesaro_matrix(T: int) -> sp.Matrix:
    r"""The exact ``T x T`` Cesaro matrix :math:`(C_T)_{ij} = 1/i` for :math:`j \le i`."""
    return sp.Matrix(T, T, lambda i, j: sp.Rational(1, i + 1) if j <= i else 0)


@cache
def cesaro_frobenius_sq() -> sp.Expr:
    r""":math:`\|C_T\|_F^2 = \sum_{i=1}^T i\cdot(1/i)^2` summed by sympy, as an expression in
    the symbol ``T`` (it is ``harmonic(T)``)."""
    return sp.simplify(sp.summation(_I * (1 / _I) ** 2, (_I, 1, _T)))


def harmonic(T: int) -> sp.Rational:
    r""":math:`H_T = \sum_{i\le T} 1/i`, exact."""
    return sp.harmonic(T)


@cache
def hardy_constant(p: int = 2) -> sp.Expr:
    r"""Sharp constant of Hardy's inequality :math:`\|C x\|_p \le \frac{p}{p-1}\|x\|_p`:
    the norm of the Cesaro operator on :math:`\ell^p` (= 2 at ``p = 2``), the limit of
    :math:`s_1(C_T)`."""
    q = sp.Symbol("p", positive=True)
    return (q / (q - 1)).subs(q, p)


_t = sp.Symbol("t", real=True)
_ell = sp.Symbol("ell", positive=True)  # log T
_b = sp.Symbol("b", real=True)  # the section's boundary phase (a length in log T)


@cache
def cesaro_symbol() -> sp.Expr:
    r"""The symbol :math:`\lambda(t)` of :math:`C C^\top = (1/\max(i,j))_{i,j\ge1}` on the
    Mellin line :math:`f(y) = y^{-1/2+it}`, by sympy integration of the continuum kernel:

    .. math::

        \int_0^\infty \frac{y^{-1/2+it}}{\max(x,y)}\,dy
        = x^{-1/2+it}\Bigl[\int_0^1 u^{w-1}du + \int_1^\infty u^{-v-1}du\Bigr]
        = x^{-1/2+it}\Bigl(\frac1w + \frac1v\Bigr),\quad w = \tfrac12 + it,\ v = \bar w,

    i.e. :math:`\lambda(t) = 4/(1+4t^2)`: its maximum :math:`\lambda(0) = 4` is Hardy's
    constant squared, and its curvature at 0 sets the finite-section correction
    (:func:`cesaro_section_factor`)."""
    u = sp.Symbol("u", positive=True)
    w, v = sp.symbols("w v", positive=True)  # Re w, Re v > 0: both integrals converge
    inner = sp.integrate(u ** (w - 1), (u, 0, 1))  # 1/w
    outer = sp.integrate(u ** (-v - 1), (u, 1, sp.oo))  # 1/v
    return sp.simplify(sp.expand_complex(
        (inner + outer).subs({w: sp.Rational(1, 2) + sp.I * _t, v: sp.Rational(1, 2) - sp.I * _t})))


@cache
def cesaro_section_factor() -> sp.Expr:
    r""":math:`s_1(C_T)/\|C\| \approx \sqrt{\lambda(t_T)/\lambda(0)}` at the lowest
    frequency a section of log-length :math:`\ell = \log T` admits,
    :math:`t_T = \pi/(\ell + b)` (a half wave on :math:`[0, \ell + b]`, :math:`b` the
    boundary phase): :math:`(1 + 4\pi^2/(\ell+b)^2)^{-1/2}`, an expression in the symbols
    ``ell`` and ``b``. Expanded, :math:`s_1(C_T)^2 = 4 - 16\pi^2/\log^2 T + O(\log^{-3} T)`,
    Wilf's rate [2]_."""
    lam = cesaro_symbol()
    return sp.sqrt(sp.simplify(lam / lam.subs(_t, 0))).subs(_t, sp.pi / (_ell + _b))


def noise_row_laplace(s2: float, mu: float = 0.0, nodes: int = 160):
    r"""The pair :math:`(1 - L_0(t), L_2(t))` for :math:`Z = e^{N(\mu, s^2)}` as vectorised
    functions of ``t``, by Gauss-Hermite quadrature with ``nodes`` nodes (the integrands
    :math:`e^{-t e^{\mu + s x}}` are entire in ``x``; 160 nodes give about 12 digits for
    :math:`s^2 \le 2`). :math:`1 - L_0 = \mathbb E[-\mathrm{expm1}(-tZ)]` has no
    cancellation at small ``t``."""
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / math.sqrt(2 * math.pi)  # weights of the standard normal law
    z = np.exp(mu + math.sqrt(s2) * x)

    def one_minus_L0(t):
        t = np.asarray(t, dtype=float)[..., None]
        return -(np.expm1(-t * z) @ w)  # E[1 - exp(-t Z)]

    def L2(t):
        t = np.asarray(t, dtype=float)[..., None]
        return (z * z * np.exp(-t * z)) @ w  # E[Z^2 exp(-t Z)]

    return one_minus_L0, L2


def _geometric(T: int, y: np.ndarray) -> np.ndarray:
    # sum_{i<=T} i x^(i-1), x = 1 - y, = ((1 - x^T) - T y x^T) / y^2; for T y < 1e-3 the
    # difference cancels, and the series T(T+1)/2 - (T-1)T(T+1) y/3 is exact to O((Ty)^2)
    with np.errstate(divide="ignore"):  # y = 1 (t = oo): x^T = 0
        logx_T = T * np.log1p(-y)
    closed = (-np.expm1(logx_T) - T * y * np.exp(logx_T)) / np.maximum(y, 1e-300) ** 2
    series = T * (T + 1) / 2 - (T - 1) * T * (T + 1) * y / 3 + (T - 2) * (T - 1) * T * (T + 1) * y**2 / 8
    return np.where(T * y < 1e-3, series, closed)


def expected_noise_frobenius(T: int, s2: float, mu: float = 0.0, laplace=None) -> float:
    r""":math:`\mathbb E\|A - C_T\|_F^2` for causal softmax attention, by the Laplace
    representation in the module docstring: :math:`t = e^u`, adaptive quadrature in ``u``
    (``scipy.integrate.quad``, relative tolerance 1e-11) of Gauss-Hermite quadratures.
    ``laplace`` replaces the log-normal :math:`(1 - L_0, L_2)` by another entry law's."""
    Y0, L2 = laplace or noise_row_laplace(s2, mu)

    def integrand(u: float) -> float:
        t = math.exp(u)  # dt = t du
        return float(t * t * L2(t) * _geometric(T, np.asarray(Y0(t))))

    # [0, e^-30] contributes at most e^-60 E Z^2 T^2 / 4, far below the tolerance
    total = sum(integrate.quad(integrand, a, b, epsrel=1e-11, epsabs=0, limit=200)[0]
                for a, b in ((-30, -8), (-8, 0), (0, 8), (8, 40)))
    return total - float(mpmath.harmonic(T))


@cache
def dirichlet_noise_frobenius() -> sp.Expr:
    r"""Exponential entries (rows Dirichlet(1, ..., 1)): :math:`\operatorname{Var}A_{ij} =
    (i-1)/(i^2(i+1))`, so :math:`\mathbb E\|A - C_T\|_F^2 = \sum_{i\le T}(i-1)/(i(i+1))`,
    summed by sympy (:math:`= H_T - 2 + 2/(T+1)`), as an expression in ``T``."""
    var = (_I - 1) / (_I**2 * (_I + 1))  # Dirichlet(1^i) marginal variance
    # partial fractions 2/(i+1) - 1/i, then the sums are harmonic numbers
    terms = sp.apart(sp.cancel(_I * var), _I)
    return sp.simplify(sum(sp.summation(term, (_I, 1, _T)) for term in sp.Add.make_args(terms)))
