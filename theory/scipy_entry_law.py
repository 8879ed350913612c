r"""The theory of a ``scipy:NAME(ARGS)`` entry law (:mod:`theory.entry_laws`): ``kappa``,
the hypotheses, and whether float64 can hold its samples.

``kappa`` comes from the law's moments: exactly in sympy (``sympy.stats``) for the laws
with a sympy equivalent (:data:`SYMPY_LAWS`: ``gamma(a)`` gives :math:`\kappa^2 = 1/a`),
otherwise from scipy's float64 moments (``dist.stats(moments="mv")``). With ``Y`` the
standardised law and ``X = loc + scale Y``: :math:`\kappa^2 = \mathrm{scale}^2
\mathrm{Var}\,Y/(\mathrm{loc} + \mathrm{scale}\,\mathbb E Y)^2`.

``bounded_density``: exact conditions for the sympy laws (:data:`_BOUNDED`); otherwise the
pdf is probed towards both ends of the support (a singularity inside the support is not
looked for); a discrete law has no density. scipy.stats is imported on first use.

References
----------
.. [1] C. Bordenave, P. Caputo, D. Chafai, "Circular law theorem for random Markov
   matrices", PTRF 152 (2012), arXiv:0808.1502.
"""
from __future__ import annotations

import math
import sys
import warnings

import sympy as sp

from gapverify.theory.entry_law_syntax import entries_error as _error
from gapverify.theory.entry_law_syntax import scipy_frozen, shape_names

__all__ = ["SYMPY_LAWS", "KAPPA_LOW", "scipy_law_fields", "check_float64"]


def _exact(x: float) -> sp.Expr:
    return sp.Integer(int(x)) if float(x).is_integer() else sp.Rational(repr(float(x)))


def _sympy_standard(name: str, shapes: tuple[sp.Expr, ...]):
    """The standardised (loc 0, scale 1) law as a sympy random expression, or ``None``."""
    from sympy import stats as ss

    n = len(shapes)
    table = {
        ("expon", 0): lambda: ss.Exponential("Y", 1),
        ("gamma", 1): lambda: ss.Gamma("Y", shapes[0], 1),
        ("lognorm", 1): lambda: sp.exp(ss.Normal("G", 0, shapes[0])),
        ("uniform", 0): lambda: ss.Uniform("Y", 0, 1),
        ("pareto", 1): lambda: ss.Pareto("Y", 1, shapes[0]),
        ("weibull_min", 1): lambda: ss.Weibull("Y", 1, shapes[0]),
        ("beta", 2): lambda: ss.Beta("Y", shapes[0], shapes[1]),
        ("chi2", 1): lambda: ss.ChiSquared("Y", shapes[0]),
        ("chi", 1): lambda: ss.Chi("Y", shapes[0]),
        ("halfnorm", 0): lambda: ss.Chi("Y", 1),
        ("rayleigh", 0): lambda: ss.Rayleigh("Y", 1),
        ("maxwell", 0): lambda: ss.Maxwell("Y", 1),
    }
    make = table.get((name, n))
    return None if make is None else make()


#: scipy laws whose moments are computed exactly in sympy (``sympy.stats``).
SYMPY_LAWS = ("expon", "gamma", "lognorm", "uniform", "pareto", "weibull_min", "beta", "chi2",
              "chi", "halfnorm", "rayleigh", "maxwell")

#: Exact bounded-density conditions of the sympy laws (shape parameters -> bounded).
_BOUNDED = {
    "gamma": (lambda s: s[0] >= 1, "the gamma(a) density ~ x^(a-1) is unbounded at 0 for a < 1"),
    "weibull_min": (lambda s: s[0] >= 1, "the weibull_min(c) density ~ x^(c-1) is unbounded at 0 for c < 1"),
    "beta": (lambda s: s[0] >= 1 and s[1] >= 1,
             "the beta(a, b) density is unbounded at 0 (a < 1) or at 1 (b < 1)"),
    "chi2": (lambda s: s[0] >= 2, "the chi2(df) density ~ x^(df/2-1) is unbounded at 0 for df < 2"),
    "chi": (lambda s: s[0] >= 1, "the chi(df) density ~ x^(df-1) is unbounded at 0 for df < 1"),
}


def _sympy_moments(name: str, shapes: tuple[float, ...]):
    """``(E Y, E Y^2, E Y^4)`` exactly, or ``None`` when sympy has no equivalent or fails."""
    if name not in SYMPY_LAWS:
        return None
    from sympy.stats import E

    try:
        Y = _sympy_standard(name, tuple(_exact(s) for s in shapes))
        if Y is None:
            return None
        # sympy writes Gaussian expectations with erf and erfc: erfc = 1 - erf
        moments = tuple(sp.simplify(sp.simplify(E(Y ** k)).rewrite(sp.erf)) for k in (1, 2, 4))
    except Exception:  # noqa: BLE001 - sympy cannot do it: the float fallback says so
        return None
    if any(m.is_finite is None or m.has(sp.Integral, sp.Piecewise) for m in moments):
        return None  # sympy could not decide: the float fallback says so
    return moments


def _probe_density(dist) -> tuple[bool, str]:
    """Whether the pdf stays bounded towards both ends of the support (probed at 13
    points per end, ``10^-k`` of the way to the 1% quantile, ``k = 0..12``)."""
    import numpy as np

    lo, hi = (float(x) for x in dist.support())
    ends = [(lo, float(dist.ppf(0.01)))]
    if math.isfinite(hi):
        ends.append((hi, float(dist.ppf(0.99))))
    for end, q in ends:
        xs = end + (q - end) * 10.0 ** -np.arange(13)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = np.asarray(dist.pdf(xs), dtype=float)
        if not np.all(np.isfinite(f)) or f[-1] > 10 * max(f[6], 1e-300) and f[-1] > f[0]:
            return False, (f"the density grows without bound towards {end:g} (pdf {f[6]:.3g} at "
                           f"distance 1e-6, {f[-1]:.3g} at 1e-12 of the 1% quantile's distance)")
    return True, "pdf probed towards the ends of the support: bounded"


def _exact_moments(name: str, moments, loc: float, scale: float, spec: str) -> dict:
    r"""``kappa^2`` and the fourth moment from sympy's exact ``(E Y, E Y^2, E Y^4)``."""
    m1, m2, m4 = moments
    L, S = _exact(loc), _exact(scale)
    mean = L + S * m1
    var = S ** 2 * (m2 - m1 ** 2)
    if not (m2.is_finite and mean.is_finite):
        raise _error("the variance is infinite (kappa = oo): the theory needs a finite "
                     "variance", spec)
    if not (mean > 0):
        raise _error("the mean is zero: Z = 0 almost surely is not a Markov matrix law", spec)
    fourth = bool(m4.is_finite)
    return {"kappa2": sp.simplify(var / mean ** 2),
            "kappa_method": f"exact: sympy.stats moments of scipy.stats.{name}",
            "fourth_moment": fourth,
            "fourth_moment_note": (f"E Y^4 = {m4} for Y = (Z - loc)/scale (sympy)" if fourth else
                                   f"E Z^4 = oo (sympy: the fourth moment of scipy.stats.{name} diverges)")}


def _float_moments(name: str, dist, spec: str) -> dict:
    """``kappa^2`` and the fourth moment from scipy's float64 moments (no sympy equivalent)."""
    import numpy as np

    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mean_f, var_f = (float(x) for x in dist.stats(moments="mv"))
            m4_f = float(dist.moment(4))
    except Exception as exc:  # noqa: BLE001 - scipy's message, exit 2
        raise _error(f"scipy.stats.{name} cannot compute its moments ({exc})", spec) from None
    if not math.isfinite(var_f) or not math.isfinite(mean_f):
        raise _error("the variance is infinite or undefined (kappa = oo; scipy gives mean "
                     f"{mean_f}, variance {var_f}): the theory needs a finite variance", spec)
    fourth = math.isfinite(m4_f)
    if mean_f <= 0:
        raise _error("the mean is zero: Z = 0 almost surely is not a Markov matrix law", spec)
    return {"kappa2": sp.Float(var_f / mean_f ** 2, 17),
            "kappa_method": (f"float64: scipy.stats.{name}.stats(moments='mv') (no sympy "
                             "equivalent; closed form or numerical integration inside scipy, "
                             "double precision)"),
            "fourth_moment": fourth,
            "fourth_moment_note": (f"E Z^4 = {m4_f:.6g} (scipy, float64)" if fourth else
                                   f"E Z^4 not finite according to scipy.stats.{name}.moment(4) = {m4_f}")}


def _density(name: str, dist, shapes: tuple, exact: bool, discrete: bool) -> dict:
    """``bounded_density`` and why (see the module docstring)."""
    if discrete:
        bounded, note = False, f"scipy.stats.{name} is discrete: no density"
    elif name in _BOUNDED and exact:
        ok, text = _BOUNDED[name]
        bounded, note = bool(ok(shapes)), ("" if ok(shapes) else text)
        note = note or "bounded (exact condition on the shape parameters)"
    else:
        try:
            bounded, note = _probe_density(dist)
        except Exception as exc:  # noqa: BLE001 - not established: the hypothesis is not granted
            bounded, note = False, f"the pdf could not be probed ({exc}): not established"
    return {"bounded_density": bounded, "density_note": note}


def scipy_law_fields(spec: str, name: str, args: tuple, kwargs: tuple) -> dict:
    """The theory of ``scipy:NAME(ARGS)``: ``kappa2``, ``kappa_method``, the hypotheses and
    their notes, ``lognormal``, as :class:`~theory.entry_laws.EntryLaw` fields; raises
    :class:`~theory.entry_law_syntax.EntryLawError` for a law outside the theory."""
    from scipy import stats

    dist = scipy_frozen(name, args, kwargs, spec)
    gen = dist.dist
    if float(dist.support()[0]) < 0:
        raise _error(f"entries must be nonnegative, but scipy.stats.{name} with these "
                     f"parameters has support {tuple(float(x) for x in dist.support())}", spec)
    names, kw = shape_names(gen), dict(kwargs)
    shapes = tuple(args[:len(names)]) + tuple(kw[s] for s in names[len(args):] if s in kw)
    rest = list(args[len(names):])
    loc = float(kw.get("loc", rest[0] if rest else 0.0))
    scale = float(kw.get("scale", rest[1] if len(rest) > 1 else 1.0))
    discrete = isinstance(gen, stats.rv_discrete)
    if discrete and float(dist.pmf(0)) >= 0.25:
        raise _error(f"P(Z = 0) = {float(dist.pmf(0)):.3g}: a row of A is all zeros (D not "
                     "invertible) with probability P(Z = 0)^T, which must be negligible "
                     "(P(Z = 0) < 1/4)", spec)
    moments = None if discrete else _sympy_moments(name, shapes)
    fields = (_exact_moments(name, moments, loc, scale, spec) if moments is not None
              else _float_moments(name, dist, spec))
    if not (fields["kappa2"] > 0):
        raise _error("the variance is zero: kappa = 0 (a constant law) has no bulk", spec)
    return {**fields, **_density(name, dist, shapes, moments is not None, discrete),
            "lognormal": name == "lognorm" and loc == 0}


#: The smallest kappa whose samples float64 resolves: below it A is constant to round-off
#: (the same bound as ``--set s2 >= 1e-16``, :data:`theory.parameters._S2_LOW`).
KAPPA_LOW = 1e-8


def check_float64(kappa: float, dist, spec: str) -> None:
    """A law whose samples float64 cannot hold is refused (a run would judge round-off):
    kappa below :data:`KAPPA_LOW` (the noise below the resolution of the mean: ``loc =
    1e17`` with ``scale = 1``); entries that underflow to 0 with probability above 1e-6
    (below the smallest normal double, 2.2e-308); entries whose square summed over a row
    of ``T = 16384`` overflows (the 1 - 1e-12 quantile above sqrt(DBL_MAX / 16384))."""
    from scipy import stats

    if kappa < KAPPA_LOW:
        raise _error(f"kappa = {kappa:.3g} is below {KAPPA_LOW:g}: the noise of the entries "
                     "is below float64's resolution of their mean (A is constant to round-off); "
                     "give a law with kappa >= 1e-8", spec)
    tiny, big = sys.float_info.min, math.sqrt(sys.float_info.max / 16384)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        under, over = float(dist.cdf(tiny)), float(dist.isf(1e-12))
    if not isinstance(dist.dist, stats.rv_discrete) and not under < 1e-6:  # a discrete 0 is exact
        raise _error(f"P(Z < {tiny:.3g}) = {under:.3g}: its samples underflow to 0 in float64; "
                     "give parameters whose entries are representable (a larger scale)", spec)
    if not over < big:
        raise _error(f"its 1 - 1e-12 quantile {over:.3g} is above {big:.3g}: row sums of squares "
                     "overflow in float64 up to T = 16384; give a smaller scale", spec)
