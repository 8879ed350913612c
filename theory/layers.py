r"""Predictions for attention layers, derived through the free-probability engine.

Model (the paper's notation): ``T`` tokens, width ``d``, :math:`\gamma = T/d
\in (0, 1]`, isometric input :math:`X_0 X_0^\top = I_T`, i.i.d. Markov matrices
:math:`A_l = \mathbf{1}\mathbf{1}^\top/T + A_l^\perp` with :math:`\kappa = \sigma/m`,
value matrices :math:`W_l` with i.i.d. :math:`N(0, \sigma_V^2)` entries, and the Markov
surrogate network :math:`X_l = A_l \cdots A_1 X_0 W_1 \cdots W_l`.

Free-probability input (status ``derived``: asymptotic freeness and Gaussian
universality): :math:`\sqrt T A^\perp/\kappa` has the squared-singular-value law
:math:`MP(1)` and is asymptotically a Ginibre matrix free from the rest; the Gram matrix
of :math:`W_1\cdots W_l/(\sigma_V^l d^{l/2})` has law :math:`FC_l`, seen through the
rank-:math:`T` projection :math:`X_0^\top X_0`.

Every function returns an exact sympy expression when its inputs are exact and one
exists; with float inputs the edges are ``mpmath.mpf`` at ``mp.dps``.

References
----------
.. [1] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap: a Spectral Analysis of Rank
   Collapse and Signal Propagation in Attention Layers", ICML 2025, arXiv:2410.07799.
.. [2] C. Bordenave, P. Caputo, D. Chafai, "Circular law theorem for random Markov
   matrices", PTRF 152 (2012), arXiv:0808.1502.
.. [3] J. A. Mingo, R. Speicher, *Free Probability and Random Matrices*, Springer 2017.
.. [4] K. A. Penson, K. Zyczkowski, "Product of Ginibre matrices: Fuss-Catalan and
   Raney distributions", PRE 83 (2011) 061118, arXiv:1103.3453.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import mpmath
import sympy as sp

from gapverify.theory.edge_offset import johnstone_square
from gapverify.theory.free_probability import (
    FreeLaw, compress, free_power, fuss_catalan, marchenko_pastur,
)

__all__ = [
    "T_sym",
    "gamma_sym",
    "kappa2_sym",
    "fixed_attention_law",
    "x_star",
    "x_star_depth1_formula",
    "second_moment",
    "sr_Xperp_over_T",
    "sr_Sigmaperp_over_T",
    "sr_Aperp_over_T",
    "frob_A",
    "sr_X",
    "sr_Sigma",
    "frob_Aperp_scaled",
    "value_gradient_expectation",
    "value_gradient_growth_exponent",
    "input_jacobian_sq_norm",
    "input_jacobian_rate",
]

#: Context length, as a symbol for limits ``T -> oo``.
T_sym = sp.Symbol("T", positive=True)
#: :math:`\gamma = T/d`.
gamma_sym = sp.Symbol("gamma", positive=True)
#: :math:`\kappa^2 = \sigma^2/m^2`.
kappa2_sym = sp.Symbol("kappa2", positive=True)


def _depth(depth: Any) -> int:
    if int(depth) != depth or depth < 1:
        raise ValueError(f"depth must be an integer >= 1, got {depth!r}")
    return int(depth)


def _gamma(gamma: Any) -> sp.Expr:
    g = sp.sympify(gamma)
    if g.is_number and not (0 < g <= 1):
        raise ValueError(f"gamma must lie in (0, 1], got {gamma!r}")
    return g


@lru_cache(maxsize=None)
def _mp1() -> FreeLaw:
    return marchenko_pastur(1)


@lru_cache(maxsize=None)
def fixed_attention_law(depth: int, gamma: Any = gamma_sym) -> FreeLaw:
    r"""Law of the squared singular values of :math:`X_l^\perp` over
    :math:`\kappa^{2l} (d/T)^l \sigma_V^{2l}`, built by composition.

    .. math::

        X_l^\perp = A_l^\perp\cdots A_1^\perp\, Y,\qquad Y = X_0 W_1\cdots W_l .

    * :math:`W_1\cdots W_l/(\sigma_V^l d^{l/2})` has Gram law :math:`FC_l`
      (:math:`d \times d`); :math:`X_0^\top X_0` is a free rank-:math:`T` projection, so
      :math:`Y Y^\top/(\sigma_V^{2l} d^l)` has law ``compress(FC_l, gamma)``,
      :math:`S = (1+\gamma z)^{-l}`.
    * :math:`B = A_l^\perp\cdots A_1^\perp`: :math:`T^l B^\top B/\kappa^{2l}` has law
      :math:`MP(1)^{\boxtimes l}`, free from :math:`Y Y^\top`.
    * The non-zero eigenvalues of :math:`B Y Y^\top B^\top` are those of
      :math:`(Y Y^\top)(B^\top B)`: free product.

    .. math:: S(z) = (1+z)^{-l} (1+\gamma z)^{-l}.

    At :math:`\gamma = 1` this is :math:`FC_{2l}`.
    """
    l = _depth(depth)
    g = _gamma(gamma)
    value_gram = compress(fuss_catalan(l), g)
    markov = free_power(_mp1(), l)
    law = value_gram * markov
    law.name = f"fixed-attention(l={l}, gamma={g})"
    law.latex = rf"\mathcal{{L}}_{{{l}}}({sp.latex(g)})"
    return law


def x_star(depth: int, gamma: Any = gamma_sym) -> Any:
    r"""Right edge :math:`x^*_l(\gamma)` of :func:`fixed_attention_law`.

    .. math:: x^*_l = 1/u^*,\qquad u^* = \max_{p>0} \frac{p}{(1+p)^{l+1}(1+\gamma p)^l}.

    Exact (radicals: the critical-point polynomial is the quadratic
    :math:`2l\gamma p^2 + (l + (l-1)\gamma)p - 1`) for exact or symbolic ``gamma``,
    ``mpmath.mpf`` for float ``gamma``.
    """
    return fixed_attention_law(depth, _gamma(gamma)).right_edge()


def x_star_depth1_formula(gamma: Any) -> sp.Expr:
    r"""The closed form at depth 1 (typed in, for comparison with :func:`x_star`).

    .. math:: x^* = \frac{(1+p)^2 (1+\gamma p)}{p},\qquad
              p = \frac{\sqrt{1+8\gamma} - 1}{4\gamma}.
    """
    g = sp.sympify(gamma)
    p = (sp.sqrt(1 + 8 * g) - 1) / (4 * g)
    return (1 + p) ** 2 * (1 + g * p) / p


@lru_cache(maxsize=None)
def _moments(depth: int, gamma: Any, n: int) -> tuple:
    return tuple(fixed_attention_law(depth, gamma).moments(n))


def second_moment(depth: int, gamma: Any = gamma_sym) -> sp.Expr:
    r""":math:`m_2 = 1 + l(1+\gamma)` of :func:`fixed_attention_law`, from the engine."""
    return sp.expand(_moments(_depth(depth), _gamma(gamma), 2)[1])


def _ratio(num: sp.Expr, den: Any) -> Any:
    if isinstance(den, (mpmath.mpf, mpmath.mpc)):
        return mpmath.mpf(sp.N(num, mpmath.mp.dps + 10)) / den
    return sp.radsimp(sp.nsimplify(num) / den) if sp.sympify(den).is_number else num / den


def sr_Xperp_over_T(depth: int, gamma: Any = gamma_sym) -> Any:
    r"""Limit of :math:`\mathrm{sr}(X_l^\perp)/T = m_1 / x^*_l`.

    :math:`\|X\|_F^2 = \sum_i s_i^2 \approx T\, c\, m_1` and
    :math:`\|X\|_2^2 \approx c\, x^*` with :math:`c = \kappa^{2l}(d/T)^l\sigma_V^{2l}`;
    :math:`\kappa, \sigma_V` cancel. At :math:`\gamma = 1`:
    :math:`s^s/(s+1)^{s+1}`, :math:`s = 2l` (4/27 at depth 1).
    """
    l, g = _depth(depth), _gamma(gamma)
    m1 = _moments(l, g, 1)[0]
    return _ratio(m1, x_star(l, g))


def sr_Sigmaperp_over_T(depth: int, gamma: Any = gamma_sym) -> Any:
    r"""Limit of :math:`\mathrm{sr}(\Sigma_l^\perp)/T = m_2 / x^{*2}_l`.

    :math:`\mathrm{sr}(\Sigma) = \sum_i s_i^4 / s_1^4`; :math:`\sum_i s_i^4 \approx T c^2
    m_2`. At :math:`\gamma = 1`: :math:`s^{2s}/(s+1)^{2s+1}` (16/243 at depth 1).
    """
    l, g = _depth(depth), _gamma(gamma)
    m2 = _moments(l, g, 2)[1]
    xs = x_star(l, g)
    return _ratio(m2, xs ** 2)


def sr_Aperp_over_T() -> sp.Expr:
    r"""Limit of :math:`\mathrm{sr}(A^\perp)/T = m_1(MP(1))/x^*(MP(1)) = 1/4`.

    The squared singular values of :math:`\sqrt T A^\perp/\kappa` follow :math:`MP(1)`
    (quarter-circle singular values, [2]_): :math:`\|A^\perp\|_F^2 \approx \kappa^2 m_1`,
    :math:`\|A^\perp\|_2^2 \approx \kappa^2 x^*/T`, with :math:`x^* = 4` from the engine.
    """
    law = _mp1()
    return sp.nsimplify(law.moments(1)[0] / law.right_edge())


def frob_A(depth: int, kappa2: Any = kappa2_sym) -> sp.Expr:
    r"""Limit of :math:`\|A_l\cdots A_1\|_F^2`: :math:`1+\kappa^2` at :math:`l=1`, 1 after.

    Write :math:`A = J + A^\perp`, :math:`J = \mathbf 1\mathbf 1^\top/T`. Since
    :math:`A^\perp\mathbf 1 = 0` and :math:`\mathbf 1^\top A \mathbf 1 = T`,
    :math:`\|A\|_F^2 = \|J\|_F^2 + \|A^\perp\|_F^2 = 1 + \kappa^2 m_1(MP(1)) + o(1)`
    exactly up to the bulk limit: the rank-one part carries Frobenius mass 1 and the bulk
    :math:`\kappa^2`. For :math:`l \ge 2`, :math:`A^\perp_{k} J = 0` gives
    :math:`A_l\cdots A_1 = J + J A^\perp_1\cdots + A^\perp_l\cdots A^\perp_1`; the cross
    terms have column-sum fluctuations :math:`O(\kappa^2/T)` and the bulk has
    :math:`\|A^\perp_l\cdots A^\perp_1\|_F^2 = \kappa^{2l} m_1(FC_l)/T^{l-1}`
    (:func:`frob_Aperp_scaled`), so the limit is 1. Computed as
    :math:`\lim_{T\to\infty} 1 + \kappa^{2l} m_1(MP(1)^{\boxtimes l}) / T^{l-1}`.
    """
    l = _depth(depth)
    k2 = sp.sympify(kappa2)
    m1 = free_power(_mp1(), l).moments(1)[0]
    return sp.limit(1 + k2 ** l * m1 / T_sym ** (l - 1), T_sym, sp.oo)


def sr_X(depth: int, kappa2: Any = kappa2_sym) -> sp.Expr:
    r"""Limit of :math:`\mathrm{sr}(X_l)` for standard attention: :func:`frob_A`.

    :math:`X_l = (A_l\cdots A_1) Y`, :math:`Y = X_0W_1\cdots W_l`, :math:`c = d^l\sigma_V^{2l}`.
    :math:`\|X_l\|_F^2 \approx c\,m_1\,\|A_l\cdots A_1\|_F^2` (:math:`YY^\top/c` has mean
    1 and is free from the :math:`A`'s). The top singular value comes from the rank-one
    part: :math:`\|J Y\|_2^2 = \mathbf 1^\top Y Y^\top\mathbf 1/T \approx c\,m_1`, while
    the bulk is :math:`O(c/T)`. Hence :math:`\mathrm{sr}(X_l) \to 1+\kappa^2` at
    :math:`l = 1` and 1 for :math:`l\ge2`.
    """
    return frob_A(depth, kappa2)


def sr_Sigma(depth: int) -> sp.Expr:
    r"""Limit of :math:`\mathrm{sr}(\Sigma_l) = \sum s_i^4/s_1^4` for standard attention: 1.

    :math:`s_1^4 \approx c^2` (rank-one part, :math:`c = d^l\sigma_V^{2l}`); the bulk
    contributes :math:`\sum_{i\ge2} s_i^4 \approx T (c\kappa^{2l}/T^l)^2 m_2 =
    c^2\kappa^{4l} m_2/T^{2l-1}`, :math:`m_2` of :func:`fixed_attention_law`, which
    vanishes relative to :math:`s_1^4` at every depth: computed as
    :math:`\lim_{T\to\infty} 1 + \kappa^{4l} m_2/T^{2l-1}`.
    """
    l = _depth(depth)
    # m_2 = 1 + l(1 + gamma), the engine's second moment (second_moment, which
    # tests/theory/test_layers.py checks against this form): the engine's own symbolic
    # value costs seconds a layer at depth 20 and minutes at 64 (paper-figure --depth 64),
    # the closed form nothing, and the limit is the same
    m2 = 1 + l * (1 + gamma_sym)
    return sp.limit(1 + kappa2_sym ** (2 * l) * m2 / T_sym ** (2 * l - 1), T_sym, sp.oo)


def frob_Aperp_scaled(depth: int, kappa2: Any = kappa2_sym) -> sp.Expr:
    r"""Limit of :math:`T^{l-1}\|A^\perp_l\cdots A^\perp_1\|_F^2 = \kappa^{2l}`.

    :math:`\|B\|_F^2 = \operatorname{tr} B^\top B` and :math:`T^l B^\top B/\kappa^{2l}` has
    law :math:`MP(1)^{\boxtimes l} = FC_l`: :math:`\|B\|_F^2 \approx T\cdot
    \kappa^{2l} m_1(FC_l)/T^l`, with :math:`m_1 = 1` from the engine.
    """
    l = _depth(depth)
    return sp.sympify(kappa2) ** l * free_power(_mp1(), l).moments(1)[0]


def value_gradient_expectation(depth_L: int, d: Any, sigma_V: Any, frob_product: Any) -> sp.Expr:
    r""":math:`\mathbb E_W\|\partial X_L/\partial W_l\|_F^2 = \sigma_V^{2(L-1)} d^L
    \|A_L\cdots A_1\|_F^2` (claim gradient.value_frobenius).

    :math:`\partial\,\mathrm{vec}X_L/\partial\,\mathrm{vec}W_l = (W_{l+1}\cdots W_L)^\top
    \otimes (A_L\cdots A_l X_{l-1})`; the two Frobenius norms factor,
    :math:`\mathbb E\|W_{l+1}\cdots W_L\|_F^2 = d^{L-l+1}\sigma_V^{2(L-l)}` and
    :math:`\mathbb E\|A_L\cdots A_1 X_0 W_1\cdots W_{l-1}\|_F^2 = d^{l-1}\sigma_V^{2(l-1)}
    \|A_L\cdots A_1\|_F^2` (using :math:`X_0X_0^\top = I`).
    """
    L = _depth(depth_L)
    return sp.sympify(sigma_V) ** (2 * (L - 1)) * sp.sympify(d) ** L * sp.sympify(frob_product)


def value_gradient_growth_exponent(depth_L: int, fixed: bool) -> sp.Expr:
    r"""Exponent :math:`e` with :math:`\mathbb E\|\partial X_L/\partial W_l\|_F^2 \asymp T^e`,
    exact (a sympy number, not rounded).

    With :math:`d = T/\gamma`: standard attention has :math:`\|A_L\cdots A_1\|_F^2 \to`
    :func:`frob_A` (order 1), so :math:`e = L`; with the fix
    :math:`\|A^\perp_L\cdots A^\perp_1\|_F^2 \approx \kappa^{2L}/T^{L-1}`
    (:func:`frob_Aperp_scaled`), so :math:`e = 1`. Claim ``gradient.value_frobenius`` reads
    it when it judges (its growth checks' ``correction``): the statistics divide the norm by
    a power of ``T`` typed in the sampler, and the theory's mean of that quotient is
    :math:`C\,T^{e-p}`, so an exponent other than the sampler's ``p`` fails the run.
    """
    L = _depth(depth_L)
    frob = frob_Aperp_scaled(L) / T_sym ** (L - 1) if fixed else frob_A(L)
    sigma_V = sp.Symbol("sigma_V", positive=True)
    expr = sp.powsimp(value_gradient_expectation(L, T_sym / gamma_sym, sigma_V, frob))
    coefficient, exponent = expr.as_coeff_exponent(T_sym)
    if exponent.free_symbols or coefficient.has(T_sym):
        raise AssertionError(f"E||dX_L/dW_l||_F^2 should be C T^e, got {expr}")
    return exponent


def input_jacobian_sq_norm(d: Any, sigma_V: Any, kappa2: Any = kappa2_sym, gamma: Any = None,
                           fixed: bool = False, T: Any = None) -> sp.Expr:
    r"""Limit of :math:`\|\partial\,\mathrm{vec}X_1/\partial\,\mathrm{vec}X_0\|_2^2 =
    \|W_1\|_2^2\|A\|_2^2` (claim gradient.input_jacobian).

    :math:`W_1W_1^\top/(\sigma_V^2 d)` has law :math:`MP(1)`, edge :math:`x^* = 4` from
    the engine: :math:`\|W_1\|_2^2 \approx 4\sigma_V^2 d`. Standard: :math:`\|A\|_2 \to 1`
    (the outlier, [2]_): about :math:`4\sigma_V^2 d`. Fix:
    :math:`\|A^\perp\|_2^2 \approx \kappa^2 x^*/T = 4\kappa^2/T`, so about
    :math:`16\sigma_V^2\kappa^2 d/T = 16\sigma_V^2\kappa^2/\gamma`. ``T`` defaults to
    :math:`\gamma d`.
    """
    edge = _mp1().right_edge()
    w_sq = sp.sympify(sigma_V) ** 2 * sp.sympify(d) * edge
    if not fixed:
        return w_sq
    if T is None:
        if gamma is None:
            raise ValueError("input_jacobian_sq_norm(fixed=True) needs T or gamma")
        T = sp.sympify(gamma) * sp.sympify(d)
    return sp.simplify(w_sq * sp.sympify(kappa2) * edge / sp.sympify(T))


@lru_cache(maxsize=None)
def input_jacobian_rate() -> sp.Rational:
    r"""Rate of :math:`\|W_1\|_2^2\|A\|_2^2/d \to 4\sigma_V^2`: :math:`2/3` (in ``d``, so in
    :math:`T = \gamma d`).

    The largest eigenvalue of :math:`W_1W_1^\top/\sigma_V^2` (``n = p = d``) is
    :math:`\mu_d + \sigma_d\,\mathrm{TW}_1` to leading order, Johnstone [5]_:
    :math:`\mu_d = (\sqrt{n-1/2}+\sqrt{p-1/2})^2`,
    :math:`\sigma_d = (\sqrt{n-1/2}+\sqrt{p-1/2})(1/\sqrt{n-1/2}+1/\sqrt{p-1/2})^{1/3}`, so

    .. math:: \mathbb E\|W_1\|_2^2/(\sigma_V^2 d) = 4 + 2^{4/3}\,\mathbb E\,\mathrm{TW}_1\,
              d^{-2/3} - 2/d + o(d^{-2/3}),

    the Tracy-Widom offset (:math:`\sigma_d/\mu_d \sim 2^{-2/3} d^{-2/3}`, derived here in
    sympy) leading the centring's :math:`\mu_d/d - 4 = O(1/d)`. The other factor
    :math:`\|A\|_2^2 = 1 + O(1/T)`: :math:`\|A^\top\mathbf 1\|^2/T = 1 +
    \sum_j (c_j - 1)^2/T` with column sums of variance :math:`\kappa^2/T`. The slowest of
    the three corrections is the rate.

    .. [5] I. M. Johnstone, "On the distribution of the largest eigenvalue in principal
       components analysis", Ann. Statist. 29 (2001).
    """
    d = sp.Symbol("d", positive=True)
    mu, sigma = johnstone_square(d)  # n = p = d

    def exponent(expr: sp.Expr) -> sp.Expr:
        # -lim log|expr| / log d: the power of d^-1 at which expr vanishes
        return -sp.limit(sp.log(sp.Abs(expr)) / sp.log(d), d, sp.oo)

    tracy_widom = exponent(sigma / mu)     # sigma_d / mu_d: the TW offset, relative
    centring = exponent(mu / d - 4)        # mu_d / d - 4 = -2/d
    column_sums = sp.Integer(1)            # ||A||_2^2 - 1 = O(kappa^2 / T)
    return sp.Min(tracy_widom, centring, column_sums)
