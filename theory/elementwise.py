r"""``variants.elementwise``: attention by an elementwise map, without row normalisation.

Attention :math:`A = \varphi(M)/T` with :math:`M_{ij}` i.i.d. :math:`N(\mu, s^2)` is a
rank-one mean plus an i.i.d. noise matrix:

.. math::

    A = \frac{\mu_\varphi}{T}\mathbf 1\mathbf 1^\top + \frac{1}{\sqrt T}\,\frac{Y}{\sqrt T},
    \qquad \mu_\varphi = \mathbb E\,\varphi(g),\quad
    v_\varphi = \operatorname{Var}\varphi(g),\quad g \sim N(\mu, s^2),

:math:`Y_{ij}` i.i.d., mean 0, variance :math:`v_\varphi`. Hence (derived: Bai-Yin for
the singular edge, the circular law and the spectral radius of i.i.d. matrices,
carried over the rank-one mean by interlacing and the outlier theory of deformed i.i.d.
matrices):

* the outlier eigenvalue of :math:`A` tends to :math:`\mu_\varphi` (``outlier``);
* :math:`\sqrt T s_2(A) \to 2\sqrt{v_\varphi}` (``sqrtT_s2``), the quarter-circle edge;
* :math:`\sqrt T|\lambda_2(A)| \to \sqrt{v_\varphi}` (``sqrtT_lambda2``), the disc's edge;
* the fix :math:`A - \mu_\varphi\mathbf 1\mathbf 1^\top/T` has no outlier:
  :math:`\sqrt T s_1 \to 2\sqrt{v_\varphi}` (``sqrtT_s1_fix``).

Linear attention (:math:`\varphi(x) = x`) has :math:`\mu_\varphi = \mu`: no outlier, hence
no gap, at :math:`\mu = 0`.

:math:`\mu_\varphi, v_\varphi` are derived by sympy integration against the Gaussian
density where a closed form exists (ReLU, linear); the sigmoid has none and is integrated
by mpmath quadrature at :data:`DIGITS` significant digits (working precision
``DIGITS + 10``).

References
----------
.. [1] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap", ICML 2025, arXiv:2410.07799
   (rebuttal, Figures 1c and 9: ReLU, sigmoid and linear attention).
.. [2] Z. D. Bai, Y. Q. Yin, "Limit of the smallest eigenvalue of a large dimensional
   sample covariance matrix", Ann. Probab. 21 (1993) (edge of i.i.d. singular values).
.. [3] T. Tao, V. Vu, "Random matrices: universality of ESDs and the circular law",
   Ann. Probab. 38 (2010), arXiv:0807.4898.
.. [4] T. Tao, "Outliers in the spectrum of iid matrices with bounded rank
   perturbations", PTRF 155 (2013), arXiv:1012.4818.
.. [5] C. Bordenave, P. Caputo, D. Chafai, K. Tikhomirov, "On the spectral radius of a
   random matrix", PTRF 170 (2018), arXiv:1607.05484.
"""
from __future__ import annotations

from functools import cache, lru_cache
from typing import Mapping

import mpmath
import sympy as sp
from mpmath.libmp import prec_to_dps

from gapverify.theory.parameters import PARAMETERS

__all__ = ["MAPS", "CLOSED_FORM", "DIGITS", "gaussian_moments", "moments_float",
           "elementwise_predictions", "sigmoid_moments_mp", "Phi", "NormalPdf", "SigmoidMean",
           "SigmoidVar", "named_moments"]

MU = PARAMETERS["mu"].symbol
S2 = PARAMETERS["s2"].symbol
_X = sp.Symbol("x", real=True)

#: The maps, as sympy functions of one real variable.
MAPS: dict[str, sp.Lambda] = {
    "relu": sp.Lambda(_X, sp.Max(_X, 0)),
    "sigmoid": sp.Lambda(_X, 1 / (1 + sp.exp(-_X))),
    "linear": sp.Lambda(_X, _X),
}
#: Maps whose Gaussian moments sympy integrates in closed form.
CLOSED_FORM: tuple[str, ...] = ("relu", "linear")
#: Significant digits of the mpmath quadrature (sigmoid).
DIGITS = 30


def _check_map(name: str) -> None:
    if name not in MAPS:
        raise ValueError(f"parameter 'name' must be one of {', '.join(MAPS)}, got {name!r}")


def _gaussian_expectation(f: sp.Expr, lower: sp.Expr) -> sp.Expr:
    r""":math:`\int_{lower}^\infty f(x)\,\phi(x)\,dx`, :math:`\phi` the standard normal density."""
    pdf = sp.exp(-_X**2 / 2) / sp.sqrt(2 * sp.pi)
    return sp.simplify(sp.integrate(f * pdf, (_X, lower, sp.oo)).rewrite(sp.erf))


@cache
def _closed_moments(name: str) -> tuple[sp.Expr, sp.Expr]:
    r"""``(mu_phi, v_phi)`` at symbolic ``mu``, ``s2`` by integration against the density.

    With :math:`g = \mu + s x`: ReLU integrates :math:`g` and :math:`g^2` over
    :math:`x > -\mu/s` (where :math:`g > 0`); linear over the whole line.
    """
    g = MU + sp.sqrt(S2) * _X
    lower = -MU / sp.sqrt(S2) if name == "relu" else -sp.oo
    m1 = _gaussian_expectation(g, lower)  # E phi(g)
    m2 = _gaussian_expectation(g**2, lower)  # E phi(g)^2
    return m1, sp.simplify(m2 - m1**2)


@lru_cache(maxsize=1024)
def sigmoid_moments_mp(mu, s2, dps: int = DIGITS + 10) -> tuple[mpmath.mpf, mpmath.mpf]:
    r""":math:`(\mathbb E\sigma(g), \operatorname{Var}\sigma(g))`, :math:`g\sim N(\mu, s^2)`,
    by tanh-sinh quadrature at ``dps`` decimal digits; memoized (a run judges the same
    parameters at every case, variant and power step).

    .. math:: \mathbb E\,\sigma(g)^k = \int_{-\infty}^\infty
              \frac{e^{-x^2/2}}{\sqrt{2\pi}}\,\bigl(1 + e^{-\mu - s x}\bigr)^{-k}\,dx .
    """
    with mpmath.workdps(dps):
        m, s = mpmath.mpf(mu), mpmath.sqrt(mpmath.mpf(s2))
        # standard normal density times sigma(mu + s x)^k
        def moment(k):
            f = lambda x: mpmath.npdf(x) / (1 + mpmath.exp(-m - s * x)) ** k
            return mpmath.quad(f, [-mpmath.inf, -m / s, mpmath.inf])
        m1 = moment(1)
        return +m1, moment(2) - m1**2


def _numeric(value: sp.Expr) -> bool:
    return bool(getattr(value, "is_number", False))


def gaussian_moments(name: str, mu: sp.Expr = MU, s2: sp.Expr = S2) -> tuple[sp.Expr, sp.Expr]:
    r""":math:`(\mu_\varphi, v_\varphi)` for the map ``name`` at logits :math:`N(\mu, s^2)`.

    Closed forms (ReLU, linear) are exact sympy expressions. The sigmoid's are sympy
    ``Float`` s with :data:`DIGITS` correct digits at numeric parameters (mpmath
    quadrature) and unevaluated integrals at symbolic ones.
    """
    _check_map(name)
    mu, s2 = sp.sympify(mu), sp.sympify(s2)
    if name in CLOSED_FORM:
        m1, var = _closed_moments(name)
        subs = {MU: mu, S2: s2}
        return m1.subs(subs), var.subs(subs)
    if _numeric(mu) and _numeric(s2):
        m1, var = sigmoid_moments_mp(sp.N(mu, DIGITS + 10), sp.N(s2, DIGITS + 10))
        return sp.Float(m1, DIGITS), sp.Float(var, DIGITS)
    phi = MAPS[name]
    pdf = sp.exp(-_X**2 / 2) / sp.sqrt(2 * sp.pi)
    g = mu + sp.sqrt(s2) * _X
    m1 = sp.Integral(phi(g) * pdf, (_X, -sp.oo, sp.oo))
    m2 = sp.Integral(phi(g) ** 2 * pdf, (_X, -sp.oo, sp.oo))
    return m1, m2 - m1**2


@lru_cache(maxsize=256)
def moments_float(name: str, mu: float, s2: float) -> tuple[float, float]:
    """``(mu_phi, v_phi)`` as floats (what an experiment needs to apply the fix), by
    mpmath quadrature at 20 digits for every map: no symbolic integration in a sampling
    worker (the tests check it against the closed forms). Cached per ``(name, mu, s2)``:
    the quadrature takes 60-120 ms, and every draw of a case asks for the same values."""
    _check_map(name)
    phi = {"relu": lambda x: x if x > 0 else mpmath.mpf(0),
           "sigmoid": lambda x: 1 / (1 + mpmath.exp(-x)), "linear": lambda x: x}[name]
    with mpmath.workdps(20):
        m, s = mpmath.mpf(mu), mpmath.sqrt(mpmath.mpf(s2))
        # E phi(mu + s x)^k, x ~ N(0, 1), split at the kink x = -mu/s
        f = lambda k: mpmath.quad(lambda x: mpmath.npdf(x) * phi(m + s * x) ** k,
                                  [-mpmath.inf, -m / s, mpmath.inf])
        m1 = f(1)
        return float(m1), float(f(2) - m1**2)


# --- the moments as named functions (the statements) -------------------------------------

class Phi(sp.Function):
    r"""The standard normal CDF :math:`\Phi(x) = (1 + \operatorname{erf}(x/\sqrt2))/2`."""

    nargs = 1

    @classmethod
    def eval(cls, x):
        if x.is_zero:
            return sp.S.Half
        if x is sp.S.Infinity:
            return sp.S.One
        if x is sp.S.NegativeInfinity:
            return sp.S.Zero
        return None

    def fdiff(self, argindex=1):
        return NormalPdf(self.args[0])

    def _eval_rewrite_as_erf(self, x, **kwargs):
        return (1 + sp.erf(x / sp.sqrt(2))) / 2

    def _eval_evalf(self, prec):
        return self.rewrite(sp.erf).evalf(prec_to_dps(prec))

    def _latex(self, printer, exp=None):
        base = rf"\Phi\left({printer._print(self.args[0])}\right)"
        return base if exp is None else rf"{base}^{{{exp}}}"


class NormalPdf(sp.Function):
    r"""The standard normal density :math:`\phi(x) = e^{-x^2/2}/\sqrt{2\pi}`."""

    nargs = 1

    def fdiff(self, argindex=1):
        return -self.args[0] * self

    def _eval_rewrite_as_exp(self, x, **kwargs):
        return sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)

    def _eval_evalf(self, prec):
        return self.rewrite(sp.exp).evalf(prec_to_dps(prec))

    def _latex(self, printer, exp=None):
        base = rf"\phi\left({printer._print(self.args[0])}\right)"
        return base if exp is None else rf"{base}^{{{exp}}}"


class _SigmoidMoment(sp.Function):
    """A moment of the sigmoid of ``g ~ N(mu, s2)``, evaluated by quadrature."""

    nargs = 2
    _index = 0
    _symbol = ""

    def _eval_evalf(self, prec):
        dps = max(prec_to_dps(prec) + 10, DIGITS + 10)
        mu, s2 = (sp.N(a, dps) for a in self.args)
        if not (mu.is_number and s2.is_number):
            return None
        with mpmath.workdps(dps):  # the parameters' digits, not the default context's 15
            mu, s2 = mpmath.mpf(str(mu)), mpmath.mpf(str(s2))
        value = sigmoid_moments_mp(mu, s2, dps)[self._index]
        return sp.Float(mpmath.nstr(value, dps), prec_to_dps(prec))

    def _latex(self, printer, exp=None):
        args = ", ".join(printer._print(a) for a in self.args)
        base = rf"{self._symbol}\left({args}\right)"
        return base if exp is None else rf"{base}^{{{exp}}}"


class SigmoidMean(_SigmoidMoment):
    r""":math:`m_\sigma(\mu, s^2) = \mathbb E\,\sigma(g) = \int \phi(x)\,
    (1 + e^{-\mu - s x})^{-1}\,dx`, :math:`g \sim N(\mu, s^2)` (tanh-sinh quadrature,
    :func:`sigmoid_moments_mp`; no closed form)."""

    _index = 0
    _symbol = r"m_\sigma"


class SigmoidVar(_SigmoidMoment):
    r""":math:`v_\sigma(\mu, s^2) = \operatorname{Var}\sigma(g)
    = \int \phi(x)(1 + e^{-\mu - s x})^{-2}dx - m_\sigma^2` (quadrature)."""

    _index = 1
    _symbol = r"v_\sigma"


def named_moments(name: str, mu: sp.Expr = MU, s2: sp.Expr = S2) -> tuple[sp.Expr, sp.Expr]:
    r""":math:`(\mu_\varphi, v_\varphi)` written with named functions, for statements.

    ReLU, with :math:`a = \mu/s`: :math:`\mu_\varphi = \mu\Phi(a) + s\phi(a)`,
    :math:`\mathbb E\varphi(g)^2 = (\mu^2 + s^2)\Phi(a) + \mu s\phi(a)` (equal to the
    sympy integrals of :func:`gaussian_moments`, checked in the tests); sigmoid:
    :class:`SigmoidMean`, :class:`SigmoidVar` (quadrature); linear: :math:`(\mu, s^2)`.
    """
    _check_map(name)
    mu, s2 = sp.sympify(mu), sp.sympify(s2)
    if name == "relu":
        s = sp.sqrt(s2)
        a = mu / s
        m1 = mu * Phi(a) + s * NormalPdf(a)
        m2 = (mu**2 + s2) * Phi(a) + mu * s * NormalPdf(a)
        return m1, m2 - m1**2
    if name == "sigmoid":
        return SigmoidMean(mu, s2), SigmoidVar(mu, s2)
    return gaussian_moments(name, mu, s2)


def elementwise_predictions(name: str, p: Mapping[str, sp.Expr]) -> dict[str, sp.Expr]:
    r"""Predictions of ``variants.<name>`` at parameters ``p`` (``mu``, ``s2``):
    ``outlier`` :math:`\mu_\varphi`, ``sqrtT_s2`` :math:`2\sqrt{v_\varphi}`,
    ``sqrtT_lambda2`` :math:`\sqrt{v_\varphi}`, ``sqrtT_s1_fix`` :math:`2\sqrt{v_\varphi}`,
    in the named forms of :func:`named_moments`."""
    m1, var = named_moments(name, p.get("mu", MU), p.get("s2", S2))
    return {"outlier": m1, "sqrtT_s2": 2 * sp.sqrt(var), "sqrtT_lambda2": sp.sqrt(var),
            "sqrtT_s1_fix": 2 * sp.sqrt(var)}
