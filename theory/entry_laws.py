r"""Entry laws of a random Markov matrix ``A = D^{-1} Z``: parsing, ``kappa`` and hypotheses.

The single-layer theory depends on the law of the i.i.d. nonnegative entries ``Z_ij`` only
through the coefficient of variation :math:`\kappa = \sigma/m` (Bordenave, Caputo, Chafai
2012). A law given on the command line (``gapverify run --entries SPEC``) is one of

* ``gaussian-logits`` (the default; softmax: logits :math:`N(\mu, s^2)`, entries
  :math:`e^M`, :math:`\kappa^2 = e^{s^2} - 1` with ``s2`` from the case or ``--set``);
  ``gaussian-logits(S2)`` or ``lognormal(S2)`` fix ``s2`` (the same as ``--set s2=S2``);
  ``lognormal`` is an alias of ``gaussian-logits``;
* ``exponential``: :math:`Z \sim \mathrm{Exp}(1)`, :math:`\kappa = 1` (rows of ``A`` are
  Dirichlet(1, ..., 1));
* ``scipy:NAME(ARGS)``: any nonnegative ``scipy.stats`` law, ``ARGS`` numbers only
  (positional shape parameters, then ``loc=``, ``scale=``), parsed with :mod:`ast`
  (``ast.literal_eval`` of each argument; nothing is evaluated), e.g. ``scipy:gamma(2)``.
  The syntax and the frozen scipy law are :mod:`theory.entry_law_syntax`.

``kappa`` comes from the law's moments: exactly in sympy (``sympy.stats``) for the laws
with a sympy equivalent (:data:`SYMPY_LAWS`: ``gamma(a)`` gives :math:`\kappa^2 = 1/a`),
otherwise from scipy's float64 moments (``dist.stats(moments="mv")``; the method is
recorded in :attr:`EntryLaw.kappa_method`). With ``Y`` the standardised law and
``X = loc + scale Y``: :math:`\kappa^2 = \mathrm{scale}^2\mathrm{Var}\,Y/(\mathrm{loc} +
\mathrm{scale}\,\mathbb E Y)^2`.

Predictions are evaluated at the *equivalent logit variance*
:math:`s^2_{\mathrm{eff}} = \log(1 + \kappa^2)`, the ``s2`` whose softmax law has the same
``kappa`` (so ``exponential`` gives ``log 2``, the paper's default). For a log-normal law
(``scipy:lognorm(s)``, ``loc = 0``) it is ``s^2`` exactly.

Hypotheses recorded per law (:meth:`EntryLaw.satisfies`):

* ``fourth_moment``: :math:`\mathbb E Z^4 < \infty` (the bulk edge and the ``O(1/T)``
  fluctuation rates);
* ``bounded_density``: a density bounded on the support (BCC 2012's circular law). Exact
  conditions for the sympy laws (``gamma(a)``: ``a >= 1``; ``weibull_min(c)``: ``c >= 1``;
  ``beta(a, b)``: ``a, b >= 1``; ``chi2(df)``: ``df >= 2``); otherwise the pdf is probed
  towards both ends of the support (a singularity inside the support is not looked for);
  a discrete law has no density.

Infinite variance, zero mean or negative support are not laws the theory covers:
:class:`EntryLawError` (exit 2 on the command line).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from functools import lru_cache

import sympy as sp

from gapverify.theory.entry_law_syntax import (
    ALLOWED_TEXT, DEFAULT_ENTRIES, NAMED_LAWS, EntryLawError, canonical_scipy, format_number,
    parse_syntax, scipy_frozen, shape_names,
)
from gapverify.theory.entry_law_syntax import entries_error as _error

__all__ = ["EntryLaw", "EntryLawError", "parse_entry_law", "parse_syntax", "scipy_frozen",
           "DEFAULT_ENTRIES", "NAMED_LAWS", "SYMPY_LAWS", "ALLOWED_TEXT", "HYPOTHESES"]

#: The hypotheses a prediction may need, in words.
HYPOTHESES = {
    "fourth_moment": "a finite fourth moment E Z^4",
    "bounded_density": "a bounded density",
}


@dataclass(frozen=True)
class EntryLaw:
    """A parsed entry law: canonical ``spec``, ``kappa^2`` (exact where possible) and the
    hypotheses it satisfies. ``kappa2`` is ``None`` for ``gaussian-logits`` without ``s2``
    (its ``kappa`` is the case's)."""

    spec: str
    family: str  # "gaussian-logits", "exponential" or "scipy"
    name: str = ""  # scipy name
    args: tuple = ()
    kwargs: tuple = ()
    s2: float | None = None  # gaussian-logits(S2)
    kappa2: sp.Expr | None = None
    kappa_method: str = ""
    fourth_moment: bool = True
    fourth_moment_note: str = ""
    bounded_density: bool = True
    density_note: str = ""
    #: log-normal entries (gaussian-logits, scipy:lognorm with loc 0): the log-normal
    #: light-tail domain of the edge checks applies, at s2 = s2_eff
    lognormal: bool = False
    notes: tuple = field(default=(), compare=False)

    @property
    def default(self) -> bool:
        """The softmax law of the case (sampled as before; store keys unchanged)."""
        return self.family == "gaussian-logits"

    @property
    def kappa(self) -> float:
        return float(sp.sqrt(self.kappa2).evalf(30))

    @property
    def s2_eff_exact(self) -> sp.Expr:
        r""":math:`\log(1 + \kappa^2)`, the logit variance of the softmax law with this ``kappa``."""
        return sp.log(1 + self.kappa2)

    @property
    def s2_eff(self) -> float:
        return float(sp.N(self.s2_eff_exact, 30))

    def satisfies(self, hypothesis: str) -> bool:
        if hypothesis == "fourth_moment":
            return self.fourth_moment
        if hypothesis == "bounded_density":
            return self.bounded_density
        raise KeyError(f"unknown hypothesis {hypothesis!r}; known: {', '.join(HYPOTHESES)}")

    def why_not(self, hypothesis: str) -> str:
        return self.fourth_moment_note if hypothesis == "fourth_moment" else self.density_note

    def summary(self) -> dict:
        """Plain data for results JSON."""
        out = {"spec": self.spec, "family": self.family, "kappa_method": self.kappa_method,
               "fourth_moment_finite": self.fourth_moment,
               "fourth_moment_note": self.fourth_moment_note,
               "bounded_density": self.bounded_density, "density_note": self.density_note}
        if self.kappa2 is not None:
            out.update(kappa=self.kappa, kappa2=str(self.kappa2), s2_eff=self.s2_eff,
                       s2_eff_exact=str(self.s2_eff_exact))
        return out


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


def _scipy_law(spec: str, name: str, args: tuple, kwargs: tuple) -> EntryLaw:
    import numpy as np
    from scipy import stats

    dist = scipy_frozen(name, args, kwargs, spec)
    gen = dist.dist
    lo = float(dist.support()[0])
    if lo < 0:
        raise _error(f"entries must be nonnegative, but scipy.stats.{name} with these "
                     f"parameters has support {tuple(float(x) for x in dist.support())}", spec)
    shapes_n = len(shape_names(gen))
    kw = dict(kwargs)
    shapes = tuple(args[:shapes_n]) + tuple(kw[s] for s in shape_names(gen)[len(args):] if s in kw)
    rest = list(args[shapes_n:])
    loc = float(kw.get("loc", rest[0] if rest else 0.0))
    scale = float(kw.get("scale", rest[1] if len(rest) > 1 else 1.0))
    discrete = isinstance(gen, stats.rv_discrete)
    if discrete:
        p0 = float(dist.pmf(0))
        if p0 >= 0.25:
            raise _error(f"P(Z = 0) = {p0:.3g}: a row of A is all zeros (D not invertible) with "
                         "probability P(Z = 0)^T, which must be negligible (P(Z = 0) < 1/4)", spec)
    moments = None if discrete else _sympy_moments(name, shapes)
    fourth_note = ""
    if moments is not None:
        m1, m2, m4 = moments
        L, S = _exact(loc), _exact(scale)
        mean = L + S * m1
        var = S ** 2 * (m2 - m1 ** 2)
        if not (m2.is_finite and mean.is_finite):
            raise _error("the variance is infinite (kappa = oo): the theory needs a finite "
                         "variance", spec)
        kappa2 = sp.simplify(var / mean ** 2)
        method = f"exact: sympy.stats moments of scipy.stats.{name}"
        fourth = bool(m4.is_finite)
        fourth_note = (f"E Y^4 = {m4} for Y = (Z - loc)/scale (sympy)" if fourth else
                       f"E Z^4 = oo (sympy: the fourth moment of scipy.stats.{name} diverges)")
    else:
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
        mean = var = None
        kappa2 = sp.Float(var_f / mean_f ** 2, 17) if mean_f > 0 else None
        method = (f"float64: scipy.stats.{name}.stats(moments='mv') (no sympy equivalent; "
                  "closed form or numerical integration inside scipy, double precision)")
        fourth = math.isfinite(m4_f)
        fourth_note = (f"E Z^4 = {m4_f:.6g} (scipy, float64)" if fourth else
                       f"E Z^4 not finite according to scipy.stats.{name}.moment(4) = {m4_f}")
        if mean_f <= 0:
            raise _error("the mean is zero: Z = 0 almost surely is not a Markov matrix law", spec)
    if mean is not None and not (mean > 0):
        raise _error("the mean is zero: Z = 0 almost surely is not a Markov matrix law", spec)
    if kappa2 is None or not (kappa2 > 0):
        raise _error("the variance is zero: kappa = 0 (a constant law) has no bulk", spec)
    if discrete:
        bounded, dnote = False, f"scipy.stats.{name} is discrete: no density"
    elif name in _BOUNDED and moments is not None:
        ok, text = _BOUNDED[name]
        bounded, dnote = bool(ok(shapes)), ("" if ok(shapes) else text)
        dnote = dnote or "bounded (exact condition on the shape parameters)"
    else:
        try:
            bounded, dnote = _probe_density(dist)
        except Exception as exc:  # noqa: BLE001 - not established: the hypothesis is not granted
            bounded, dnote = False, f"the pdf could not be probed ({exc}): not established"
    canonical = canonical_scipy(name, args, kwargs)
    return EntryLaw(spec=canonical, family="scipy", name=name, args=args, kwargs=kwargs,
                    kappa2=kappa2, kappa_method=method, fourth_moment=fourth,
                    fourth_moment_note=fourth_note, bounded_density=bounded, density_note=dnote,
                    lognormal=(name == "lognorm" and loc == 0))


@lru_cache(maxsize=64)
def parse_entry_law(text: str | None) -> EntryLaw:
    """Parse an ``--entries`` value (``None``: the default) into an :class:`EntryLaw`, or
    raise :class:`EntryLawError` naming the allowed values."""
    spec = (text or DEFAULT_ENTRIES).strip()
    family, name, args, kwargs = parse_syntax(spec)
    if family == "gaussian-logits":
        if not args:
            return EntryLaw(spec=DEFAULT_ENTRIES, family=family, kappa_method="exact: e^{s2} - 1 "
                            "(theory.softmax)", lognormal=True,
                            fourth_moment_note="log-normal: every moment is finite",
                            density_note="log-normal: bounded density")
        from gapverify.theory.markov import kappa_of
        from gapverify.theory.parameters import exact

        s2 = args[0]
        from gapverify.theory.parameters import PARAMETERS, ParameterError

        try:
            PARAMETERS["s2"].check_judged(PARAMETERS["s2"].validate(s2))
        except ParameterError as exc:
            raise _error(str(exc), spec) from None
        return EntryLaw(spec=f"gaussian-logits({format_number(s2)})", family=family, s2=s2,
                        kappa2=kappa_of(exact("s2", s2)) ** 2,
                        kappa_method="exact: e^{s2} - 1 (theory.softmax)", lognormal=True,
                        fourth_moment_note="log-normal: every moment is finite",
                        density_note="log-normal: bounded density")
    if family == "exponential":
        from sympy.stats import E, Exponential

        Y = Exponential("Y", 1)
        m1, m2 = E(Y), E(Y ** 2)
        return EntryLaw(spec="exponential", family=family, kappa2=sp.simplify((m2 - m1 ** 2) / m1 ** 2),
                        kappa_method="exact: sympy.stats moments of Exp(1)",
                        fourth_moment_note="E Z^4 = 24", density_note="e^-x <= 1: bounded")
    try:
        law = _scipy_law(spec, name, args, kwargs)
    except (OverflowError, ZeroDivisionError, FloatingPointError) as exc:
        raise _error(f"scipy.stats.{name} overflows at these parameters ({exc}); give "
                     "parameters whose moments are finite in double precision", spec) from None
    _check_float64(law, spec)
    return law


#: The smallest kappa whose samples float64 resolves: below it A is constant to round-off
#: (the same bound as ``--set s2 >= 1e-16``, :data:`theory.parameters._S2_LOW`).
KAPPA_LOW = 1e-8


def _check_float64(law: "EntryLaw", spec: str) -> None:
    """A law whose samples float64 cannot hold is refused (a run would judge round-off):
    kappa below :data:`KAPPA_LOW` (the noise below the resolution of the mean: ``loc =
    1e17`` with ``scale = 1``); entries that underflow to 0 with probability above 1e-6
    (below the smallest normal double, 2.2e-308); entries whose square summed over a row
    of ``T = 16384`` overflows (the 1 - 1e-12 quantile above sqrt(DBL_MAX / 16384))."""
    import sys

    if law.kappa < KAPPA_LOW:
        raise _error(f"kappa = {law.kappa:.3g} is below {KAPPA_LOW:g}: the noise of the entries "
                     "is below float64's resolution of their mean (A is constant to round-off); "
                     "give a law with kappa >= 1e-8", spec)
    dist = scipy_frozen(law.name, law.args, law.kwargs, spec)
    tiny, big = sys.float_info.min, math.sqrt(sys.float_info.max / 16384)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        under, over = float(dist.cdf(tiny)), float(dist.isf(1e-12))
    from scipy import stats

    if not isinstance(dist.dist, stats.rv_discrete) and not under < 1e-6:  # a discrete 0 is exact
        raise _error(f"P(Z < {tiny:.3g}) = {under:.3g}: its samples underflow to 0 in float64; "
                     "give parameters whose entries are representable (a larger scale)", spec)
    if not over < big:
        raise _error(f"its 1 - 1e-12 quantile {over:.3g} is above {big:.3g}: row sums of squares "
                     "overflow in float64 up to T = 16384; give a smaller scale", spec)
