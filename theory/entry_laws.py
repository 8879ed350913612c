r"""Entry laws of a random Markov matrix ``A = D^{-1} Z``: one object per law holds its
theory (``kappa``, hypotheses) and its sampler, as ``scipy.stats``' distribution classes do.

The single-layer theory depends on the law of the i.i.d. nonnegative entries ``Z_ij`` only
through the coefficient of variation :math:`\kappa = \sigma/m` (Bordenave, Caputo, Chafai
2012). A law given on the command line (``gapverify run --entries SPEC``) is one of

* ``gaussian-logits`` (the default; softmax: logits :math:`N(\mu, s^2)`, entries
  :math:`e^M`, :math:`\kappa^2 = e^{s^2} - 1` with ``s2`` from the case or ``--set``);
  ``gaussian-logits(S2)`` or ``lognormal(S2)`` fix ``s2`` (the same as ``--set s2=S2``);
  ``lognormal`` is an alias of ``gaussian-logits`` (:class:`GaussianLogits`);
* ``exponential``: :math:`Z \sim \mathrm{Exp}(1)`, :math:`\kappa = 1` (rows of ``A`` are
  Dirichlet(1, ..., 1)) (:class:`Exponential`);
* ``scipy:NAME(ARGS)``: any nonnegative ``scipy.stats`` law, ``ARGS`` numbers only
  (:class:`ScipyLaw`; its theory is :mod:`theory.scipy_entry_law`, the syntax
  :mod:`theory.entry_law_syntax`).

Each family is a class: its ``read`` (a named law's arguments), ``theory`` (the law with
its ``kappa`` and hypotheses: :func:`parse_entry_law`), ``sampler`` (the law at a case's
``(mu, s2)``, syntax only, cheap enough for every task: :func:`sampler`) and ``sample``.
Adding a named law is one class here, decorated with :func:`law_family` (and its entry in
docs/entry-laws.md): the syntax, the error messages and both dispatches read the registry.

Predictions are evaluated at the *equivalent logit variance*
:math:`s^2_{\mathrm{eff}} = \log(1 + \kappa^2)`, the ``s2`` whose softmax law has the same
``kappa`` (so ``exponential`` gives ``log 2``, the paper's default). Hypotheses recorded
per law (:meth:`EntryLaw.satisfies`): ``fourth_moment`` (:math:`\mathbb E Z^4 < \infty`:
the bulk edge and the ``O(1/T)`` fluctuation rates) and ``bounded_density`` (BCC 2012's
circular law). Infinite variance, zero mean or negative support are not laws the theory
covers: :class:`EntryLawError` (exit 2 on the command line).

References
----------
.. [1] C. Bordenave, P. Caputo, D. Chafai, "Circular law theorem for random Markov
   matrices", PTRF 152 (2012), arXiv:0808.1502.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from gapverify.theory.entry_law_syntax import (
    DEFAULT_ENTRIES, NAMED_LAWS, EntryLawError, allowed_text, canonical_scipy, format_number,
    read_spec, scipy_frozen,
)
from gapverify.theory.entry_law_syntax import entries_error as _error
from gapverify.theory.row_blocks import fill_blocks, softmax_rows_inplace
from gapverify.theory.scipy_entry_law import SYMPY_LAWS, check_float64, scipy_law_fields

__all__ = ["EntryLaw", "GaussianLogits", "Exponential", "ScipyLaw", "EntryLawError",
           "parse_entry_law", "parse_syntax", "sampler", "law_family", "scipy_frozen",
           "DEFAULT_ENTRIES", "NAMED_LAWS", "SYMPY_LAWS", "ALLOWED_TEXT", "HYPOTHESES", "FAMILIES"]

#: The hypotheses a prediction may need, in words.
HYPOTHESES = {
    "fourth_moment": "a finite fourth moment E Z^4",
    "bounded_density": "a bounded density",
}


@dataclass(frozen=True, kw_only=True)
class EntryLaw:
    """A law of the i.i.d. nonnegative entries ``Z_ij``: canonical ``spec``, ``kappa^2``
    (exact where possible) and the hypotheses it satisfies (filled by :func:`parse_entry_law`;
    a law made by :func:`sampler` carries its sampling parameters only), and its sampler
    (:meth:`sample`, :meth:`markov`). ``kappa2`` is ``None`` for ``gaussian-logits``
    without ``s2`` (its ``kappa`` is the case's)."""

    #: the family's name (``parse_syntax``'s first item)
    family: ClassVar[str] = ""
    spec: str = ""
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

    # --- the theory --------------------------------------------------------------------

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

    # --- the sampler -------------------------------------------------------------------

    def at(self, mu: float, s2: float) -> "EntryLaw":
        """The law sampled at a case's logit mean and variance (only ``gaussian-logits``
        reads them)."""
        return self

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """An array of ``shape`` of i.i.d. entries of this law."""
        raise NotImplementedError

    def markov(self, rng: np.random.Generator, T: int) -> np.ndarray:
        """``A = D^{-1} Z`` for a ``T x T`` matrix ``Z`` of entries of this law."""
        Z = self.sample(rng, (T, T))
        # A_ij = Z_ij / sum_k Z_ik
        Z /= Z.sum(axis=1, keepdims=True)
        return Z

    # --- the family: its arguments, its theory, its sampler at a case -------------------

    @classmethod
    def read(cls, name: str, args: tuple, kwargs: tuple, spec: str) -> tuple:
        """A named law's arguments, checked: the ``args`` of ``parse_syntax``."""
        return args

    @classmethod
    def theory(cls, spec: str, name: str, args: tuple, kwargs: tuple) -> "EntryLaw":
        raise NotImplementedError

    @classmethod
    def sampler(cls, name: str, args: tuple, kwargs: tuple, mu: float, s2: float) -> "EntryLaw":
        raise NotImplementedError


#: The families by name (``parse_syntax``'s first item): the one place a law is dispatched.
FAMILIES: dict[str, type[EntryLaw]] = {}
#: The named laws (``NAME`` or ``NAME(ARGS)`` on the command line) by name.
_NAMED: dict[str, type[EntryLaw]] = {}


def law_family(**names: str):
    """Class decorator: the class is a family of laws, registered in :data:`FAMILIES` under
    its :attr:`~EntryLaw.family`, and the family of the named laws ``names`` (name -> what
    it is, for the error message; none for ``scipy:NAME``)."""
    def register(cls: type[EntryLaw]) -> type[EntryLaw]:
        FAMILIES[cls.family] = cls
        for name, text in names.items():
            NAMED_LAWS[name] = text
            _NAMED[name] = cls
        return cls

    return register


@law_family(**{"gaussian-logits": "default: softmax, logits N(mu, s2), entries e^M; s2 from "
                                 "the case or --set s2=, or gaussian-logits(S2)",
              "lognormal": "alias of gaussian-logits (the same law named by its entries); "
                           "lognormal(S2)"})
@dataclass(frozen=True, kw_only=True)
class GaussianLogits(EntryLaw):
    r"""``Z = exp(M)``, ``M ~ N(mu, s2)``: the softmax Markov matrix, sampled as
    ``softmax_rows(M)`` (never overflows); :math:`\kappa^2 = e^{s^2} - 1` (``theory.softmax``).
    ``s2``: the ``S2`` of ``gaussian-logits(S2)``; ``None`` (``gaussian-logits``): the
    case's, given by :meth:`at` before sampling."""

    family: ClassVar[str] = "gaussian-logits"
    spec: str = DEFAULT_ENTRIES
    kappa_method: str = "exact: e^{s2} - 1 (theory.softmax)"
    fourth_moment_note: str = "log-normal: every moment is finite"
    density_note: str = "log-normal: bounded density"
    lognormal: bool = True
    mu: float = -math.log(2.0) / 2
    s2: float | None = math.log(2.0)

    @classmethod
    def read(cls, name: str, args: tuple, kwargs: tuple, spec: str) -> tuple:
        """At most the logit variance ``s2 > 0``, positional or ``s2=``."""
        if kwargs and (len(kwargs) > 1 or kwargs[0][0] != "s2" or args):
            raise _error(f"{name} takes one argument, the logit variance s2 > 0", spec)
        values = args + tuple(v for _, v in kwargs)
        if len(values) > 1 or (values and not values[0] > 0):
            raise _error(f"{name} takes one argument, the logit variance s2 > 0", spec)
        return values

    @classmethod
    def theory(cls, spec: str, name: str, args: tuple, kwargs: tuple) -> "GaussianLogits":
        if not args:
            return cls(s2=None)
        from gapverify.theory.markov import kappa_of
        from gapverify.theory.parameters import PARAMETERS, ParameterError, exact

        s2 = args[0]
        try:
            PARAMETERS["s2"].check_judged(PARAMETERS["s2"].validate(s2))
        except ParameterError as exc:
            raise _error(str(exc), spec) from None
        return cls(spec=f"gaussian-logits({format_number(s2)})", s2=s2,
                   kappa2=kappa_of(exact("s2", s2)) ** 2)

    @classmethod
    def sampler(cls, name: str, args: tuple, kwargs: tuple, mu: float, s2: float) -> "GaussianLogits":
        return cls(mu=mu, s2=args[0] if args else s2)

    def at(self, mu: float, s2: float) -> "GaussianLogits":
        return dataclasses.replace(self, mu=mu, s2=s2 if self.s2 is None else self.s2)

    def _fill_logits(self, g: np.random.Generator, block: np.ndarray) -> None:
        # M_ij = mu + sqrt(s2) N(0, 1), in place
        g.standard_normal(out=block)
        block *= math.sqrt(self.s2)
        block += self.mu

    def logits(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """``M_ij ~ N(mu, s2)``, sampled in threaded blocks (:func:`theory.row_blocks.fill_blocks`)."""
        return fill_blocks(rng, shape, self._fill_logits)

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return np.exp(self.logits(rng, shape))

    def markov(self, rng: np.random.Generator, T: int) -> np.ndarray:
        """``softmax_rows(M)``: each block of rows is drawn and normalised in its own
        thread (rows are independent), ``O(T^2)`` split over the threads."""
        def fill(g: np.random.Generator, block: np.ndarray) -> None:
            self._fill_logits(g, block)
            softmax_rows_inplace(block)

        return fill_blocks(rng, (T, T), fill)


@law_family(exponential="Z ~ Exp(1), kappa = 1 exactly")
@dataclass(frozen=True, kw_only=True)
class Exponential(EntryLaw):
    """``Z ~ Exp(1)``: each row of ``A`` is Dirichlet(1, ..., 1); ``kappa = 1``."""

    family: ClassVar[str] = "exponential"
    spec: str = "exponential"
    kappa_method: str = "exact: sympy.stats moments of Exp(1)"
    fourth_moment_note: str = "E Z^4 = 24"
    density_note: str = "e^-x <= 1: bounded"

    @classmethod
    def read(cls, name: str, args: tuple, kwargs: tuple, spec: str) -> tuple:
        if args or kwargs:
            raise _error("exponential takes no arguments (it is Exp(1); for another scale "
                         "use scipy:expon(scale=...), kappa is 1 for every scale)", spec)
        return ()

    @classmethod
    def theory(cls, spec: str, name: str, args: tuple, kwargs: tuple) -> "Exponential":
        from sympy.stats import E, Exponential as Exp

        Y = Exp("Y", 1)
        m1, m2 = E(Y), E(Y ** 2)
        return cls(kappa2=sp.simplify((m2 - m1 ** 2) / m1 ** 2))

    @classmethod
    def sampler(cls, name: str, args: tuple, kwargs: tuple, mu: float, s2: float) -> "Exponential":
        return cls()

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return fill_blocks(rng, shape, lambda g, block: g.standard_exponential(out=block))


@law_family()
@dataclass(frozen=True, kw_only=True)
class ScipyLaw(EntryLaw):
    """Entries from any nonnegative ``scipy.stats`` frozen distribution ``dist``
    (``scipy:NAME(ARGS)``; ``ScipyLaw(dist)`` samples one directly). Its theory is
    :func:`theory.scipy_entry_law.scipy_law_fields`."""

    family: ClassVar[str] = "scipy"
    dist: Any = field(default=None, kw_only=False)
    name: str = ""
    args: tuple = ()
    kwargs: tuple = ()

    def __post_init__(self) -> None:
        if self.dist is None or not hasattr(self.dist, "rvs"):
            raise ValueError("parameter 'dist' must be a frozen scipy.stats distribution")
        if self.dist.support()[0] < 0:
            raise ValueError(
                f"parameter 'dist' must be supported on [0, inf), got support {self.dist.support()}"
            )

    @classmethod
    def theory(cls, spec: str, name: str, args: tuple, kwargs: tuple) -> "ScipyLaw":
        try:
            fields = scipy_law_fields(spec, name, args, kwargs)
        except (OverflowError, ZeroDivisionError, FloatingPointError) as exc:
            raise _error(f"scipy.stats.{name} overflows at these parameters ({exc}); give "
                         "parameters whose moments are finite in double precision", spec) from None
        dist = scipy_frozen(name, args, kwargs, spec)
        law = cls(dist, spec=canonical_scipy(name, args, kwargs), name=name, args=args,
                  kwargs=kwargs, **fields)
        check_float64(law.kappa, dist, spec)
        return law

    @classmethod
    def sampler(cls, name: str, args: tuple, kwargs: tuple, mu: float, s2: float) -> "ScipyLaw":
        # a frozen law of its own (not the cached one): threads of one process never share it
        return cls(scipy_frozen.__wrapped__(name, args, kwargs), spec=canonical_scipy(name, args, kwargs),
                   name=name, args=args, kwargs=kwargs)

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return np.asarray(self.dist.rvs(size=shape, random_state=rng), dtype=float)


#: What ``--entries`` allows (the error messages' list).
ALLOWED_TEXT = allowed_text()


def parse_syntax(text: str | None) -> tuple[str, str, tuple, tuple]:
    """``(family, scipy name, args, kwargs)`` of an ``--entries`` value, syntax only."""
    spec = (text or DEFAULT_ENTRIES).strip()
    is_scipy, name, args, kwargs = read_spec(spec)
    if is_scipy:
        return "scipy", name, args, kwargs
    cls = _NAMED[name]
    return cls.family, "", cls.read(name, args, kwargs, spec), ()


@lru_cache(maxsize=64)
def parse_entry_law(text: str | None) -> EntryLaw:
    """Parse an ``--entries`` value (``None``: the default) into its :class:`EntryLaw` with
    its theory, or raise :class:`EntryLawError` naming the allowed values."""
    spec = (text or DEFAULT_ENTRIES).strip()
    family, name, args, kwargs = parse_syntax(spec)
    return FAMILIES[family].theory(spec, name, args, kwargs)


def sampler(spec: str | None = None, mu: float = -math.log(2.0) / 2,
            s2: float = math.log(2.0)) -> EntryLaw:
    """The law of an ``--entries`` value at a case's ``(mu, s2)``, to sample (``None``: the
    softmax law at ``(mu, s2)``; ``gaussian-logits(S2)`` fixes ``s2``). Only the syntax and
    the scipy parameters are checked (no moments computed): cheap enough for every task."""
    family, name, args, kwargs = parse_syntax(spec or DEFAULT_ENTRIES)
    return FAMILIES[family].sampler(name, args, kwargs, mu, s2)
