r"""The data types of the claim registry: a claim is data.

A :class:`Claim` has a stable id (``docs/claims.md``), a status, named :class:`Prediction` s
(exact sympy expressions of the parameters, each with its own status), the
:class:`Check` s that measure them on sampled matrices with a stated rate, references,
the experiment that samples it and its sweep profiles. :mod:`verification.claims.registry` lists
every claim; the command line, the verifier, the tables, the snapshots, the audit and the
tests all read that one registry.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable, Literal, Mapping

import numpy as np
import sympy as sp

from gapverify.theory.parameters import PARAMETERS, defaults, exact, validate_parameters
from gapverify.verification.claims.errors import ClaimDefinitionError, ClaimTypeError
from gapverify.verification.claims.profile import (  # noqa: F401 - re-exported: a claim's data types
    BUDGETS, MIN_REPLICATES, PILOTS, POWER_TARGETS, PROFILES, Profile,
)

__all__ = ["STATUSES", "Prediction", "Check", "RateRule", "Profile", "Claim", "weakest_status",
           "T_SYMBOL", "POWER_TARGETS", "PROFILES"]

Status = Literal["theorem", "derived", "conjecture", "empirical"]
#: Strongest first. A claim mixing statuses reports the weakest of them.
STATUSES: tuple[str, ...] = ("theorem", "derived", "empirical", "conjecture")
T_SYMBOL = sp.Symbol("T", positive=True, integer=True)


def weakest_status(statuses) -> str:
    return max(statuses, key=STATUSES.index)


# --- field checks: each names the field, its owner and the allowed values ------------------

PREDICTION_KINDS: tuple[str, ...] = ("limit", "exact", "law", "reference")
CHECK_KINDS: tuple[str, ...] = ("limit", "distance", "exact", "matching")


def _text(value: object, field_name: str, owner: str, *, empty: bool = False) -> None:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise ClaimTypeError(f"parameter '{field_name}' of {owner} must be a "
                             f"{'' if empty else 'non-empty '}string, got {value!r}")


def _one_of(value: object, field_name: str, owner: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ClaimDefinitionError(f"parameter '{field_name}' of {owner} must be one of "
                                   f"{', '.join(allowed)}; got {value!r}")


def _function(value: object, field_name: str, owner: str, signature: str,
              optional: bool = True) -> None:
    if (value is None and optional) or callable(value):
        return
    raise ClaimTypeError(f"parameter '{field_name}' of {owner} must be a function "
                         f"{signature}{' or None' if optional else ''}, got {value!r}")


def _real(value: object) -> float | None:
    """``value`` as a float if it is a real number (not a bool), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def _positive_rate(value: object, field_name: str, owner: str) -> None:
    number = _real(value)
    if number is None:
        raise ClaimTypeError(f"parameter '{field_name}' of {owner} must be a finite number "
                             f"> 0 (the error decays like T^-rate) or a RateRule, got {value!r}")
    if not (math.isfinite(number) and number > 0):
        raise ClaimDefinitionError(f"parameter '{field_name}' of {owner} must be a finite "
                                   f"number > 0 (the error decays like T^-rate), got {value!r}")


def _rate_range(value: object, owner: str) -> tuple[float, float]:
    bounds = tuple(value) if isinstance(value, Sequence) and not isinstance(value, str) else None
    numbers_ = None if bounds is None or len(bounds) != 2 else [_real(b) for b in bounds]
    if numbers_ is None or None in numbers_:
        raise ClaimTypeError(f"parameter 'rate_range' of {owner} must be a pair of numbers "
                             f"(r_lo, r_hi) with 0 < r_lo < r_hi < inf, got {value!r}")
    lo, hi = numbers_
    if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo < hi):
        raise ClaimDefinitionError(f"parameter 'rate_range' of {owner} must be ordered and "
                                   f"finite, 0 < r_lo < r_hi < inf, got {value!r}")
    return bounds


@dataclass(frozen=True)
class ConstantTolerance:
    """A tolerance given as a number: ``|x - L| <= value`` at every size."""

    value: float

    def __call__(self, T: int, measurement: Mapping[str, object]) -> float:
        return self.value


def _tolerance(value: object, owner: str):
    """``value`` as a tolerance function: a function ``(T, measurement) -> float`` as
    given, a finite number >= 0 as :class:`ConstantTolerance`."""
    if value is None or callable(value):
        return value
    number = _real(value)
    if number is None:
        raise ClaimTypeError(f"parameter 'tolerance' of {owner} must be a finite number >= 0 "
                             f"or a function (T, measurement) -> float, got {value!r}")
    if not (math.isfinite(number) and number >= 0):
        raise ClaimDefinitionError(f"parameter 'tolerance' of {owner} must be finite and "
                                   f">= 0, got {value!r}")
    return ConstantTolerance(number)


def _items(value: object, field_name: str, owner: str, kind: type | tuple, what: str,
           ) -> tuple:
    """``value`` as a tuple of ``kind``: a sequence of them (a single one, or a single
    string for names, is taken as one)."""
    if isinstance(value, kind):
        return (value,)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        out = tuple(value)
        for item in out:
            if not isinstance(item, kind):
                raise ClaimTypeError(f"parameter '{field_name}' of {owner} must list {what}, "
                                     f"got an item {item!r}")
        return out
    raise ClaimTypeError(f"parameter '{field_name}' of {owner} must be a list or tuple of "
                         f"{what}, got {type(value).__name__} {value!r}")


@dataclass(frozen=True)
class Prediction:
    """A named prediction: ``formula(params) -> sympy`` with ``params`` exact sympy numbers.

    ``kind`` is ``"limit"`` (the value as ``T -> oo``), ``"exact"`` (at every ``T``),
    ``"law"`` (a limiting distribution; ``formula`` returns its scale, e.g. the edge) or
    ``"reference"``: a value in *another* limit (``reference_limit``, e.g. ``d_qk -> oo``)
    that a ``T``-sweep at fixed parameters cannot test. Its checks are recorded, never
    asserted, and it does not count among the predictions a verdict needs.
    """

    name: str
    status: Status
    formula: Callable[[Mapping[str, sp.Expr]], sp.Expr]
    quantity: str  # LaTeX of the measured quantity
    kind: Literal["limit", "exact", "law", "reference"] = "limit"
    note: str = ""
    reference_limit: str = ""  # for kind "reference": the parameter that tends to infinity
    #: for kind "law": ``law(params) -> sympy`` the limiting law itself (a named sympy
    #: function of its scale, e.g. ``QuarterCircle(kappa)``); the statement reads
    #: ``ESD -> law`` while ``formula`` gives its edge, the number the checks scale
    law: Callable[[Mapping[str, sp.Expr]], sp.Expr] | None = None
    #: for status "derived": where the derivation is written (the claim's ``derived_in``
    #: when empty)
    derived_in: str = ""

    def __post_init__(self) -> None:
        _text(self.name, "name", "Prediction")
        owner = f"Prediction {self.name!r}"
        _one_of(self.status, "status", owner, ("theorem", "derived", "conjecture", "empirical"))
        _function(self.formula, "formula", owner, "(params) -> sympy expression", optional=False)
        _text(self.quantity, "quantity", owner, empty=True)
        _one_of(self.kind, "kind", owner, PREDICTION_KINDS)
        _function(self.law, "law", owner, "(params) -> sympy expression")
        if self.kind == "reference":
            _text(self.reference_limit, "reference_limit", owner)

    @property
    def asserted(self) -> bool:
        """Whether a verdict needs this prediction verified (references are only shown)."""
        return self.kind != "reference"

    def statement(self, params: Mapping[str, sp.Expr]) -> sp.Expr:
        """The sympy statement, e.g. ``Eq(Limit(sqrtT_s2, T, oo), 2*kappa)``."""
        q = sp.Symbol(self.name)
        value = self.formula(params)
        if self.kind == "exact":
            return sp.Eq(q, value, evaluate=False)
        if self.kind == "law" and self.law is not None:
            return sp.Eq(sp.Limit(q, T_SYMBOL, sp.oo), self.law(params), evaluate=False)
        if self.kind == "reference":
            var = sp.Symbol(self.reference_limit, positive=True)
            return sp.Eq(sp.Limit(q, var, sp.oo), value, evaluate=False)
        return sp.Eq(sp.Limit(q, T_SYMBOL, sp.oo), value, evaluate=False)


@dataclass(frozen=True)
class RateRule:
    """A stated rate that depends on the parameters, e.g. ``2 l - 1`` at depth ``l``."""

    text: str
    fn: Callable[[Mapping[str, float]], float]

    def __call__(self, params: Mapping[str, float]) -> float:
        return float(self.fn(params))

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Check:
    """How one prediction is measured.

    ``kind``:
      * ``"limit"``: scalar statistic ``statistic`` tends to the prediction, judged by one
        of two finite-size models: a stated ``rate`` (the error ``|x - L|`` decays at least
        like ``T^-rate``; fitted exponent and extrapolation at that rate), or a
        ``rate_range`` ``(r_lo, r_hi)``: ``x_T = L + c T^-r`` with ``r`` estimated in that
        range, the rate's uncertainty carried into the limit's interval (profile
        likelihood; :func:`verification.judging.inference.profile_limit`). One of the two is
        required for an asserted check: a check that cannot reject a wrong limit is not a
        check.
        A third model, ``models``: a family of finite-size models of known form
        (:class:`verification.judging.inference.FiniteSizeModel`), for a correction that is not a
        power of ``T`` (``1/log^2 T``); the limit's interval is the union of the members'
        (:func:`verification.judging.inference.family_limit`).
      * ``"distance"``: Kolmogorov distance between the sample array ``statistic`` and the
        law ``cdf(params, scale)``; tends to 0 like ``T^-rate``.
      * ``"exact"``: ``|x - L| <= tolerance(T, m)`` for every replicate (round-off bound).
      * ``"matching"``: the spectrum ``statistic`` equals ``predicted_spectrum(m, scale)`` up
        to ``tolerance(T, m)`` after an optimal matching.
    """

    prediction: str
    statistic: str
    kind: Literal["limit", "distance", "exact", "matching"]
    rate: "float | RateRule | None" = None
    rate_status: str = ""
    rate_note: str = ""
    cdf: Callable[[Mapping[str, float], float], Callable[[np.ndarray], np.ndarray]] | None = None
    tolerance: Callable[[int, Mapping[str, object]], float] | None = None
    tolerance_note: str = ""
    predicted_spectrum: Callable[[Mapping[str, object], float], np.ndarray] | None = None
    asserted: bool = True  # False: recorded and shown, never counted as pass or fail
    record_note: str = ""
    #: finite-size model ``L + c T^-r`` with ``r`` estimated in this range (instead of ``rate``)
    rate_range: tuple[float, float] | None = None
    #: where the check is judged (``None``: everywhere); outside it the check is shown as
    #: "outside its domain" with ``domain_note`` and does not count for the prediction
    domain: Callable[[Mapping[str, float]], bool] | None = None
    domain_note: str = ""
    #: where the check's finite-size model holds in ``T``: the smallest size judged at
    #: ``params`` (``None``: every size); sizes below it are shown but not judged, and a
    #: case left with fewer than :attr:`minimum_sizes` sizes is outside the domain, with
    #: ``min_size_note`` (a domain in ``(params, T)``, not a cut in the parameters)
    min_size: Callable[[Mapping[str, float]], int] | None = None
    min_size_note: str = ""
    #: the size a deviation of a prediction equal to 0 is measured against (power of a
    #: zero limit is reported relative to it), e.g. the value in the nearest wrong model
    zero_scale: Callable[[Mapping[str, float]], float] | None = None
    #: a family of finite-size models of known form (instead of ``rate``/``rate_range``)
    models: tuple = ()
    #: with ``models`` or ``rate_range``: the theory's finite-size correction ``E x_T - L``
    #: at parameters and sizes (a term whose form and constant are derived), subtracted
    #: from the means before the family or ``L + c T^-r`` is fitted
    correction: Callable[[Mapping[str, float], np.ndarray], np.ndarray] | None = None
    #: ``(other, k)``: the statistic measures this prediction divided by the ``k``-th power
    #: of the claim's prediction ``other`` (``sr(Sigma)/T`` over ``(sr(X)/T)^2``, a moment
    #: ratio with no edge in it). Judged against ``P / P_other^k``: this prediction made
    #: wrong on its own moves that by as much; ``other`` has checks of its own
    relative_to: tuple[str, int] | None = None

    def __post_init__(self) -> None:
        self._check_fields()
        if self.kind in ("limit", "distance") and self.asserted:
            given = (self.rate is not None) + (self.rate_range is not None) + bool(self.models)
            if given != 1:
                raise ClaimDefinitionError(
                    f"check {self.prediction}:{self.statistic}: an asserted {self.kind} check needs "
                    "exactly one finite-size model, a stated 'rate', a 'rate_range' or 'models' "
                    "(consistency-only checks cannot reject a wrong limit)")
        if self.correction is not None and not (self.models or self.rate_range):
            raise ClaimDefinitionError(f"check {self.prediction}: a 'correction' needs "
                                       "'models' or a 'rate_range'")
        if self.relative_to is not None and (
                self.kind != "limit" or len(self.relative_to) != 2
                or self.relative_to[0] == self.prediction
                or isinstance(self.relative_to[1], bool) or not isinstance(self.relative_to[1], int)
                or self.relative_to[1] < 1):
            raise ClaimDefinitionError(f"check {self.prediction}: relative_to must be (another "
                                       "prediction, a power >= 1) on a limit check, got "
                                       f"{self.relative_to!r}")

    def _check_fields(self) -> None:
        """Each field's type and range (a rate finite and positive, a rate range ordered,
        a tolerance finite and non-negative), named in the error."""
        _text(self.prediction, "prediction", "Check")
        _text(self.statistic, "statistic", f"Check {self.prediction!r}")
        owner = f"Check {self.prediction}:{self.statistic}"
        _one_of(self.kind, "kind", owner, CHECK_KINDS)
        if self.rate is not None and not isinstance(self.rate, RateRule):
            _positive_rate(self.rate, "rate", owner)
        if self.rate_range is not None:
            object.__setattr__(self, "rate_range", _rate_range(self.rate_range, owner))
        object.__setattr__(self, "tolerance", _tolerance(self.tolerance, owner))
        if self.kind in ("exact", "matching") and self.tolerance is None:
            raise ClaimDefinitionError(f"parameter 'tolerance' of {owner}: an {self.kind} check "
                                       "needs one, a finite number >= 0 or a function "
                                       "(T, measurement) -> float")
        if not isinstance(self.asserted, bool):
            raise ClaimTypeError(f"parameter 'asserted' of {owner} must be True or False, "
                                 f"got {self.asserted!r}")
        for name in ("cdf", "predicted_spectrum", "domain", "min_size", "zero_scale",
                     "correction"):
            _function(getattr(self, name), name, owner, "of the parameters")
        for name in ("rate_status", "rate_note", "tolerance_note", "record_note",
                     "domain_note", "min_size_note"):
            _text(getattr(self, name), name, owner, empty=True)

    def applies(self, params: Mapping[str, float]) -> bool:
        """Whether this check is judged at ``params`` (its ``domain``)."""
        return self.domain is None or bool(self.domain(params))

    def floor(self, params: Mapping[str, float], sampled_from: int = 0) -> int:
        """The smallest size this check is judged at, at ``params``: its :attr:`min_size`,
        and for a statistical check (one with a finite-size model or a law) at least
        ``sampled_from``, the smallest size its claim's profiles sample
        (:attr:`Claim.sampled_from`): below the sizes where a claim was calibrated its
        finite-size models are not shown to hold. Exact checks judge at every size."""
        own = int(self.min_size(params)) if self.min_size is not None else 0
        return own if self.kind in ("exact", "matching") else max(own, int(sampled_from))

    def judged_sizes(self, params: Mapping[str, float], sizes,
                     sampled_from: int = 0) -> list[int]:
        """The sizes of a sweep at which this check is judged at ``params``: inside its
        ``domain``, those from :meth:`floor` on; none outside (the judging rules: a
        check outside its domain is shown as such and does not count)."""
        if not self.applies(params):
            return []
        floor = self.floor(params, sampled_from)
        return sorted(int(T) for T in sizes if int(T) >= floor)

    @property
    def minimum_sizes(self) -> int:
        """Sizes an asserted check needs to be judged: 3 for a stated rate (2 parameters and
        a degree of freedom), 4 for a rate range, one more than a model family's largest
        member has parameters; 1 for exact and recorded checks."""
        if not self.asserted or self.kind not in ("limit", "distance"):
            return 1
        if self.models:
            return 1 + max(m.parameters for m in self.models)
        return 4 if self.rate_range is not None else 3

    def rate_at(self, params: Mapping[str, float]) -> float | None:
        """The stated rate at ``params`` (``None``: no rate asserted)."""
        return self.rate(params) if isinstance(self.rate, RateRule) else self.rate

    @property
    def label(self) -> str:
        distinct = self.kind == "distance" or self.relative_to is not None
        return f"{self.prediction}:{self.statistic}" if distinct else self.prediction

    def relative_value(self, value: float, predicted: Callable[[str], float]) -> float:
        """What the statistic is judged against: ``value`` (this prediction's), divided by
        ``predicted(other)**k`` for a check ``relative_to=(other, k)``."""
        if self.relative_to is None:
            return value
        other, k = self.relative_to
        return value / predicted(other) ** k


@dataclass(frozen=True)
class Claim:
    id: str
    title: str
    predictions: tuple[Prediction, ...]
    checks: tuple[Check, ...]
    parameters: tuple[str, ...]
    experiment: str
    references: tuple[str, ...]
    profiles: Mapping[str, Profile]
    fixed_parameters: Mapping[str, float] = field(default_factory=dict)
    #: parameter points swept by each profile, e.g. several (depth, gamma) pairs; each
    #: case is judged on its own samples and reported with its parameters
    cases: Mapping[str, tuple[Mapping[str, float], ...]] = field(default_factory=dict)
    #: the numbered result of the paper ("Mind the Gap", arXiv:2410.07799, or Bordenave,
    #: Caputo, Chafai 2012 for the Markov laws) the claim checks, or "beyond the paper"
    #: for this project's extensions (filled from ``registry.paper_results``)
    paper_result: str = ""
    #: where this claim's derived predictions are derived (a prediction may say otherwise)
    derived_in: str = ""

    def __post_init__(self) -> None:
        _text(self.id, "id", "Claim")
        owner = f"Claim {self.id!r}"
        _text(self.title, "title", owner, empty=True)
        fields = {"predictions": (Prediction, "Prediction objects"),
                  "checks": (Check, "Check objects"),
                  "parameters": (str, "parameter names"),
                  "references": (str, "references (strings)")}
        for name, (kind, what) in fields.items():
            object.__setattr__(self, name, _items(getattr(self, name), name, owner, kind, what))
        if not self.predictions:
            raise ClaimDefinitionError(f"parameter 'predictions' of {owner} must list at "
                                       "least one Prediction, got none")
        if not (isinstance(self.experiment, str) or callable(self.experiment)):
            raise ClaimTypeError(f"parameter 'experiment' of {owner} must be a function "
                                 f"f(rng, T, params) -> dict or the name of a built-in "
                                 f"experiment, got {self.experiment!r}")
        if not isinstance(self.profiles, Mapping) or not all(
                isinstance(k, str) and isinstance(v, Profile) for k, v in self.profiles.items()):
            raise ClaimTypeError(f"parameter 'profiles' of {owner} must map profile names to "
                                 f"Profile objects (gapverify.profiles(quick=(low, high, "
                                 f"replicates))), got {self.profiles!r}")
        for name in ("fixed_parameters", "cases"):
            if not isinstance(getattr(self, name), Mapping):
                raise ClaimTypeError(f"parameter '{name}' of {owner} must be a mapping, got "
                                     f"{getattr(self, name)!r}")

    def derivation(self, prediction: str) -> str:
        """Where a derived prediction is derived ("" for any other status)."""
        p = self.prediction(prediction)
        return (p.derived_in or self.derived_in) if p.status == "derived" else ""

    def for_profile(self, profile: str) -> "Claim":
        """The claim as ``profile`` judges it: itself, or, for a profile that names its own
        experiment, parameters or predictions (:class:`Profile`), the claim with those and
        only the checks (and predictions) of the named predictions."""
        prof = self.profiles.get(profile)
        if prof is None or not prof.narrows():
            return self
        keep = set(prof.predictions or (p.name for p in self.predictions))
        return dataclasses.replace(
            self, experiment=prof.experiment or self.experiment,
            parameters=prof.parameters or self.parameters,
            fixed_parameters={k: v for k, v in self.fixed_parameters.items()
                              if k in (prof.parameters or self.parameters)},
            predictions=tuple(p for p in self.predictions if p.name in keep),
            checks=tuple(c for c in self.checks if c.prediction in keep))

    def cases_for(self, profile: str, overrides: Mapping[str, object] | None = None
                  ) -> list[dict[str, float | int]]:
        """Resolved parameters of every case of ``profile``; user overrides win and
        collapse cases that become identical."""
        overrides = {k: v for k, v in (overrides or {}).items() if k in self.parameters}
        out: list[dict[str, float | int]] = []
        for case in self.cases.get(profile, ({},)):
            values = self.resolve({**case, **overrides})
            if values not in out:
                out.append(values)
        return out

    @property
    def sampled_from(self) -> int:
        """The smallest size any of this claim's profiles samples: its statistical checks'
        finite-size models are calibrated from there on, and are not judged below it
        (:meth:`Check.floor`; a smaller ``--sizes`` reads "outside domain" there)."""
        return min((min(p.sizes) for p in self.profiles.values() if p.sizes), default=0)

    @property
    def status(self) -> str:
        return weakest_status(p.status for p in self.predictions)

    def prediction(self, name: str) -> Prediction:
        for p in self.predictions:
            if p.name == name:
                return p
        raise KeyError(f"claim {self.id} has no prediction {name!r}")

    def resolve(self, overrides: Mapping[str, object] | None = None) -> dict[str, float | int]:
        """Defaults for this claim's parameters, updated by validated ``overrides``."""
        values = {name: defaults()[name] for name in self.parameters}
        values.update(self.fixed_parameters)
        values.update(validate_parameters(overrides or {}, self.parameters))
        return values

    def exact_parameters(self, values: Mapping[str, float | int]) -> dict[str, sp.Expr]:
        return {name: exact(name, v) for name, v in values.items() if name in PARAMETERS}

    def predict(self, values: Mapping[str, float | int]) -> dict[str, sp.Expr]:
        """Every prediction as an exact sympy expression at ``values``."""
        ex = self.exact_parameters(values)
        return {p.name: p.formula(ex) for p in self.predictions}

    def predict_numbers(self, values: Mapping[str, float | int], digits: int = 17) -> dict[str, float]:
        return {k: float(sp.N(v, digits)) for k, v in self.predict(values).items()}

    def statement(self, values: Mapping[str, float | int] | None = None) -> sp.Tuple:
        """All predictions as one sympy tuple of equations, at symbolic parameters by default."""
        if values is None:
            params = {name: PARAMETERS[name].symbol for name in self.parameters}
        else:
            params = self.exact_parameters(values)
        return sp.Tuple(*(p.statement(params) for p in self.predictions))

    def statement_latex(self, values: Mapping[str, float | int] | None = None) -> str:
        names = {sp.Symbol(p.name): p.quantity for p in self.predictions}
        names.update({PARAMETERS[n].symbol: PARAMETERS[n].latex for n in self.parameters})
        return r",\quad ".join(sp.latex(eq, symbol_names=names) for eq in self.statement(values))

