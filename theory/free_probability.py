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

Layout: this module is the public facade. It assembles :class:`FreeLaw` from three
mixins and holds the constructors of the reference laws and rectangular pictures
(:func:`marchenko_pastur`, :func:`fuss_catalan`, :func:`free_power`, :func:`compress`,
:func:`expand`); the mathematics lives in

* :mod:`theory.s_transform`: the module symbols, S-transform algebra, exact moments by
  Lagrange inversion, the moment and Stieltjes equations;
* :mod:`theory.free_support`: right edge (exact, closed form, mpmath root finding), left
  edge of a gap, poles of :math:`\chi` and the atom at 0;
* :mod:`theory.free_density`: density, Cauchy transform and quadrature by numerical
  branch tracking (:class:`theory.free_density._Curve`) and mpmath polishing.

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

from typing import Any

import sympy as sp

from gapverify.theory.free_density import _DensityQuadrature
from gapverify.theory.free_support import _SupportEdges
from gapverify.theory.s_transform import G, _MomentSeries, _num_den, psi, u, x, z

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


class FreeLaw(_MomentSeries, _SupportEdges, _DensityQuadrature):
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
