r"""Limiting spectral laws of random Markov matrices, derived in sympy.

Quarter-circle law :math:`Q_\kappa` (``markov.singular_law``): the push-forward of the
Marchenko-Pastur law :math:`\mathrm{MP}(1)` by :math:`t \mapsto \kappa\sqrt t`,

.. math::

    q_\kappa(x) = \frac{\sqrt{4\kappa^2 - x^2}}{\pi\kappa^2},\quad 0 \le x \le 2\kappa,
    \qquad G(u) = \tfrac{2}{\pi}\bigl(u\sqrt{1-u^2} + \arcsin u\bigr),\ u = \tfrac{x}{2\kappa},

with even moments :math:`\kappa^{2k}\,\mathrm{Cat}(k)`. Uniform law on the disc of radius
:math:`\kappa` (``markov.circular_law``): the modulus has CDF :math:`(r/\kappa)^2`.

Both are exposed as ``scipy.stats`` distributions (``quarter_circle`` with ``scale=kappa``;
the disc modulus is ``beta(2, 1, scale=kappa)``), their pdf and cdf being the sympy
expressions compiled with :func:`sympy.lambdify`. scipy.stats (about 0.4 s) is imported on
first use of one of them (:class:`LazyDistribution`), not with this module: the claim
registry imports it, and ``gapverify claims`` samples nothing.

References
----------
.. [1] C. Bordenave, P. Caputo, D. Chafai, "Circular law theorem for random Markov
   matrices", PTRF 152 (2012), Thm 1.1 and 1.3, arXiv:0808.1502.
.. [2] V. A. Marchenko, L. A. Pastur, "Distribution of eigenvalues for some sets of
   random matrices", Mat. Sb. 72 (1967).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
from typing import Callable

import numpy as np
import sympy as sp

__all__ = [
    "QuarterCircleLaw",
    "quarter_circle",
    "quarter_circle_law",
    "DiscModulusLaw",
    "disc_modulus_law",
    "marchenko_pastur_density",
    "QuarterCircle",
    "UniformDisc",
    "LazyDistribution",
]

x = sp.Symbol("x", positive=True)
t = sp.Symbol("t", positive=True)
r = sp.Symbol("r", positive=True)
KAPPA = sp.Symbol("kappa", positive=True)


def marchenko_pastur_density(c: sp.Expr = sp.Integer(1)) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    r"""Density of :math:`\mathrm{MP}(c)` for :math:`c \le 1` and its support ``(a, b)``.

    .. math:: p_c(t) = \frac{\sqrt{(b - t)(t - a)}}{2\pi c\, t},\quad a, b = (1 \mp \sqrt c)^2.
    """
    a, b = (1 - sp.sqrt(c)) ** 2, (1 + sp.sqrt(c)) ** 2
    return sp.sqrt((b - t) * (t - a)) / (2 * sp.pi * c * t), a, b


@dataclass(frozen=True)
class QuarterCircleLaw:
    """The quarter-circle law as sympy expressions in ``x`` and ``kappa``."""

    density: sp.Expr
    cdf: sp.Expr
    edge: sp.Expr

    def moment(self, k: int) -> sp.Expr:
        r"""``E X^k``: with :math:`x = 2\kappa\sqrt w` the integral is an Euler Beta integral,

        .. math:: \mathbb E X^k = (2\kappa)^k \tfrac{2}{\pi} B\bigl(\tfrac{k+1}{2}, \tfrac32\bigr);

        the substitution is carried out on :attr:`density` by sympy and checked to
        leave :math:`c\, w^{(k-1)/2}\sqrt{1 - w}`.
        """
        w = sp.Symbol("w", positive=True)
        xw = 2 * KAPPA * sp.sqrt(w)
        integrand = sp.simplify(xw**k * self.density.subs(x, xw) * sp.diff(xw, w))
        coefficient = sp.simplify(integrand / (w ** sp.Rational(k - 1, 2) * sp.sqrt(1 - w)))
        if coefficient.has(w):
            raise AssertionError(f"unexpected integrand {integrand}")
        # int_0^1 w^{a-1} (1 - w)^{b-1} dw = B(a, b)
        return sp.simplify(coefficient * sp.gamma(sp.Rational(k + 1, 2)) * sp.gamma(sp.Rational(3, 2))
                           / sp.gamma(sp.Rational(k + 1, 2) + sp.Rational(3, 2)))


@cache
def quarter_circle_law() -> QuarterCircleLaw:
    r"""Derive :math:`Q_\kappa` from :math:`\mathrm{MP}(1)` by the change of variables
    :math:`x = \kappa\sqrt t` (density :math:`p_1(x^2/\kappa^2)\, 2x/\kappa^2`) and integrate
    it for the CDF."""
    p1, _, b = marchenko_pastur_density(sp.Integer(1))
    # q(x) = p_1(t(x)) dt/dx with t = x^2 / kappa^2
    density = sp.simplify(p1.subs(t, x**2 / KAPPA**2) * sp.diff(x**2 / KAPPA**2, x))
    edge = sp.simplify(KAPPA * sp.sqrt(b))
    # G(x) = int_0^{x/(2 kappa)} q(2 kappa v) 2 kappa dv: the scaled integrand is free of kappa
    u, v = sp.symbols("u v", positive=True)
    scaled = sp.simplify(density.subs(x, 2 * KAPPA * v) * 2 * KAPPA)
    cdf = sp.integrate(scaled, (v, 0, u)).subs(u, x / (2 * KAPPA))
    return QuarterCircleLaw(density=density, cdf=sp.simplify(cdf), edge=edge)


@cache
def _standard_callables():
    law = quarter_circle_law()
    pdf = sp.lambdify(x, law.density.subs(KAPPA, 1), "numpy")
    cdf = sp.lambdify(x, law.cdf.subs(KAPPA, 1), "numpy")
    return pdf, cdf


class LazyDistribution:
    """A ``scipy.stats`` distribution made by ``make()`` on first use: calling it freezes
    it (``quarter_circle(scale=kappa)``), any other attribute is the distribution's own
    (``quarter_circle.cdf``). Importing the module that holds it imports no scipy.stats."""

    def __init__(self, make: Callable[[], object]) -> None:
        self._make = make

    @cached_property
    def dist(self):
        """The ``scipy.stats`` distribution itself."""
        return self._make()

    def __call__(self, *args, **kwargs):
        return self.dist(*args, **kwargs)

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_make":  # pickling, copying: not the law's
            raise AttributeError(name)
        return getattr(self.dist, name)


@cache
def _quarter_circle_gen() -> type:
    """The ``scipy.stats.rv_continuous`` subclass of :math:`Q_1` (scipy imported here)."""
    from scipy import special, stats

    class quarter_circle_gen(stats.rv_continuous):
        r"""The quarter-circle law :math:`Q_1` on ``[0, 2]``; use ``scale=kappa`` for
        :math:`Q_\kappa`.

        .. math:: f(x) = \frac{\sqrt{4 - x^2}}{\pi},\qquad 0 \le x \le 2.

        The density and CDF are the sympy derivation of :func:`quarter_circle_law`,
        compiled; ``_munp`` gives the moments :math:`2^n\Gamma(\frac{n+1}2)/(\sqrt\pi\,
        \Gamma(\frac n2 + 2))`.
        """

        def _pdf(self, xs):
            pdf, _ = _standard_callables()
            return pdf(np.clip(xs, 0.0, 2.0))

        def _cdf(self, xs):
            _, cdf = _standard_callables()
            return np.clip(cdf(np.clip(xs, 0.0, 2.0)), 0.0, 1.0)

        def _munp(self, n):
            # E X^n = 2^n Gamma((n+1)/2) / (sqrt(pi) Gamma(n/2 + 2))  (QuarterCircleLaw.moment at kappa=1)
            return 2.0**n * special.gamma((n + 1) / 2) / (np.sqrt(np.pi) * special.gamma(n / 2 + 2))

    # pickled by reference, found by this module's __getattr__
    quarter_circle_gen.__module__, quarter_circle_gen.__qualname__ = __name__, "quarter_circle_gen"
    return quarter_circle_gen


def __getattr__(name: str):
    # the distribution's class, made on first use (PEP 562; pickle finds it here)
    if name == "quarter_circle_gen":
        return _quarter_circle_gen()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: ``scipy.stats`` distribution of :math:`Q_1`; ``quarter_circle(scale=kappa)`` is :math:`Q_\kappa`
#: (made on first use, :class:`LazyDistribution`).
quarter_circle = LazyDistribution(lambda: _quarter_circle_gen()(a=0.0, b=2.0, name="quarter_circle"))


@dataclass(frozen=True)
class DiscModulusLaw:
    """Modulus of a uniform point on the disc of radius ``kappa``, derived in sympy."""

    density_2d: sp.Expr
    cdf: sp.Expr
    edge: sp.Expr

    def frozen(self, kappa: float):
        """``scipy.stats.beta(2, 1, scale=kappa)``: the same CDF :math:`(r/\\kappa)^2`."""
        from scipy import stats

        return stats.beta(2, 1, scale=float(kappa))


@cache
def disc_modulus_law() -> DiscModulusLaw:
    r"""Integrate the uniform density :math:`1/(\pi\kappa^2)` over :math:`|z| \le r` in polar
    coordinates: :math:`P(|\lambda| \le r) = \int_0^r\!\int_0^{2\pi} \rho/(\pi\kappa^2)\,d\theta\,d\rho`."""
    rho, theta = sp.symbols("rho theta", positive=True)
    density = 1 / (sp.pi * KAPPA**2)
    cdf = sp.integrate(sp.integrate(density * rho, (theta, 0, 2 * sp.pi)), (rho, 0, r))
    return DiscModulusLaw(density_2d=density, cdf=sp.simplify(cdf), edge=KAPPA)


class QuarterCircle(sp.Function):
    r"""The quarter-circle law :math:`Q_\kappa` as a sympy object of its scale ``kappa``
    (density :math:`\sqrt{4\kappa^2 - x^2}/(\pi\kappa^2)` on :math:`[0, 2\kappa]`), for
    statements ``ESD -> Q_kappa``; :attr:`edge` is :math:`2\kappa`."""

    nargs = 1

    @property
    def edge(self) -> sp.Expr:
        return quarter_circle_law().edge.subs(KAPPA, self.args[0])

    def _latex(self, printer, exp=None):
        k = printer._print(self.args[0])
        return (rf"Q_{{{k}}}\ (\text{{quarter circle on }}[0,\,{printer._print(self.edge)}])"
                if exp is None else rf"Q_{{{k}}}^{{{exp}}}")

    def _sympystr(self, printer):
        return f"QuarterCircle({printer._print(self.args[0])})"


class UniformDisc(sp.Function):
    r"""The uniform law on the disc of radius ``kappa`` as a sympy object, for statements
    ``ESD -> U(D_kappa)``; :attr:`edge` is :math:`\kappa` (the modulus CDF is
    :math:`(r/\kappa)^2`)."""

    nargs = 1

    @property
    def edge(self) -> sp.Expr:
        return disc_modulus_law().edge.subs(KAPPA, self.args[0])

    def _latex(self, printer, exp=None):
        k = printer._print(self.args[0])
        return rf"\mathcal{{U}}\bigl(\{{|z| \le {k}\}}\bigr)"

    def _sympystr(self, printer):
        return f"UniformDisc({printer._print(self.args[0])})"
