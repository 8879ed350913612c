r"""The data types of the claim registry: a claim is data.

A :class:`Claim` has a stable id (THEORY.md), a status, named :class:`Prediction` s
(exact sympy expressions of the parameters, each with its own status), the
:class:`Check` s that measure them on sampled matrices with a stated rate, references,
the experiment that samples it and its sweep profiles. :mod:`verification.registry` lists
every claim; the command line, the verifier, the tables, the snapshots, the audit and the
tests all read that one registry.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Literal, Mapping

import numpy as np
import sympy as sp

from theory.parameters import PARAMETERS, defaults, exact, validate_parameters

__all__ = ["STATUSES", "Prediction", "Check", "RateRule", "Profile", "Claim", "weakest_status",
           "T_SYMBOL"]

Status = Literal["theorem", "derived", "conjecture", "empirical"]
#: Strongest first. A claim mixing statuses reports the weakest of them.
STATUSES: tuple[str, ...] = ("theorem", "derived", "empirical", "conjecture")
T_SYMBOL = sp.Symbol("T", positive=True, integer=True)


def weakest_status(statuses) -> str:
    return max(statuses, key=STATUSES.index)


@dataclass(frozen=True)
class Prediction:
    """A named prediction: ``formula(params) -> sympy`` with ``params`` exact sympy numbers.

    ``kind`` is ``"limit"`` (the value as ``T -> oo``), ``"exact"`` (at every ``T``) or
    ``"law"`` (a limiting distribution; ``formula`` returns its scale, e.g. the edge).
    """

    name: str
    status: Status
    formula: Callable[[Mapping[str, sp.Expr]], sp.Expr]
    quantity: str  # LaTeX of the measured quantity
    kind: Literal["limit", "exact", "law"] = "limit"
    note: str = ""

    def statement(self, params: Mapping[str, sp.Expr]) -> sp.Expr:
        """The sympy statement, e.g. ``Eq(Limit(sqrtT_s2, T, oo), 2*kappa)``."""
        q = sp.Symbol(self.name)
        value = self.formula(params)
        if self.kind == "exact":
            return sp.Eq(q, value, evaluate=False)
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
      * ``"limit"``: scalar statistic ``statistic`` tends to the prediction; error
        ``|x - L|`` decays like ``T^-rate`` (``rate=None``: consistency only).
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

    def rate_at(self, params: Mapping[str, float]) -> float | None:
        """The stated rate at ``params`` (``None``: no rate asserted)."""
        return self.rate(params) if isinstance(self.rate, RateRule) else self.rate

    @property
    def label(self) -> str:
        return f"{self.prediction}:{self.statistic}" if self.kind == "distance" else self.prediction


@dataclass(frozen=True)
class Profile:
    """A sweep: sizes (geometric) and replicates per size."""

    sizes: tuple[int, ...]
    replicates: int


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

