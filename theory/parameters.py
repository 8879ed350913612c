r"""Model parameters: name, LaTeX symbol, domain, typical range and default.

A :class:`Parameter` is the single description of a model parameter used by the
theory (as a sympy symbol), the command line (validation of ``--set NAME=VALUE``),
the LaTeX tables (its symbol) and the property tests (its typical range). Modelled on
``_RealParameter`` in ``scipy/stats/_new_distributions.py``.

The defaults are the parameter set of the paper's official code: logits
:math:`N(-\log 2 / 2, \log 2)`, so that the entries :math:`Z = e^M` have mean 1 and
variance 1, :math:`\kappa = 1` [1]_.

References
----------
.. [1] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap: a Spectral Analysis of Rank
   Collapse and Signal Propagation in Attention Layers", ICML 2025, arXiv:2410.07799.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import Mapping

import sympy as sp

__all__ = ["Parameter", "ParameterError", "PARAMETERS", "validate_parameters", "defaults", "exact"]


class ParameterError(ValueError):
    """A parameter value outside its domain, of the wrong type, or unknown."""


@dataclass(frozen=True)
class Parameter:
    """One real (or integer) model parameter.

    ``low``/``high`` bound the domain; ``low_open``/``high_open`` say whether the bound
    itself is excluded. ``typical`` is the range property tests draw from.
    """

    name: str
    latex: str
    description: str
    default: float
    low: float
    high: float
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    typical: tuple[float, float] = (0.0, 1.0)
    #: largest value at which the theory is finite in double precision (``None``: the
    #: domain's own bound), with the reason; above it a value is refused, not computed
    finite_high: float | None = None
    finite_note: str = ""
    #: smallest value whose samples float64 can judge (``None``: the domain's own bound),
    #: with the reason: a run refuses a value below it (:meth:`check_judged`); the theory
    #: still predicts there (exactly)
    judged_low: float | None = None
    judged_low_note: str = ""
    symbol: sp.Symbol = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        assumptions = {"positive": True} if self.low >= 0 and self.low_open else {"real": True}
        if self.integer:
            assumptions = {"integer": True, "positive": True}
        object.__setattr__(self, "symbol", sp.Symbol(self.name, **assumptions))

    def domain_text(self) -> str:
        """The allowed range in interval notation, e.g. ``(0, 1]`` or ``integers >= 1``."""
        if self.integer:
            top = "" if math.isinf(self.high) else f" and <= {self.high:g}"
            return f"integers >= {self.low:g}{top}"
        left = "(" if self.low_open or math.isinf(self.low) else "["
        right = ")" if self.high_open or math.isinf(self.high) else "]"
        hi = "inf" if math.isinf(self.high) else f"{self.high:g}"
        lo = "-inf" if math.isinf(self.low) else f"{self.low:g}"
        return f"{left}{lo}, {hi}{right}"

    def validate(self, value: object) -> float | int:
        """Return ``value`` as a number in the domain, or raise :class:`ParameterError`."""
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ParameterError(
                f"parameter '{self.name}' must be a number in {self.domain_text()}, got {value!r}"
            ) from None
        if not math.isfinite(number):
            raise ParameterError(
                f"parameter '{self.name}' must be finite, in {self.domain_text()}, got {value!r}"
            )
        if self.integer:
            if number != int(number):
                raise ParameterError(
                    f"parameter '{self.name}' must be an integer ({self.domain_text()}), got {value!r}"
                )
            number = int(number)
        below = number < self.low or (self.low_open and number == self.low)
        above = number > self.high or (self.high_open and number == self.high)
        if below or above:
            raise ParameterError(
                f"parameter '{self.name}' ({self.description}) must be in {self.domain_text()}, "
                f"got {value!r}"
            )
        if self.finite_high is not None and number > self.finite_high:
            raise ParameterError(
                f"parameter '{self.name}' ({self.description}) must be in "
                f"{self.numeric_domain_text()} in double precision ({self.finite_note}), "
                f"got {value!r}"
            )
        return number

    def numeric_domain_text(self) -> str:
        """The range the suite computes: the domain cut at :attr:`finite_high`."""
        if self.finite_high is None:
            return self.domain_text()
        left = "(" if self.low_open or math.isinf(self.low) else "["
        lo = "-inf" if math.isinf(self.low) else f"{self.low:g}"
        return f"{left}{lo}, {self.finite_high:.6g}]"

    def judged_domain_text(self) -> str:
        """The range a run samples and judges: :meth:`numeric_domain_text` cut at
        :attr:`judged_low`."""
        text = self.numeric_domain_text()
        if self.judged_low is None:
            return text
        return f"[{self.judged_low:g}, " + text.split(", ", 1)[1]

    def check_judged(self, value: float) -> float:
        """``value`` (valid) if a run can judge its samples in float64, else a
        :class:`ParameterError` naming the range that can (:attr:`judged_low`)."""
        if self.judged_low is not None and value < self.judged_low:
            raise ParameterError(
                f"parameter '{self.name}' ({self.description}) of a run must be in "
                f"{self.judged_domain_text()} ({self.judged_low_note}), got {value!r}")
        return value


_LOG2 = math.log(2.0)
#: log of the largest double: exp(s2) (hence kappa^2 = e^{s2} - 1) overflows above it
_LOG_DBL_MAX = math.log(sys.float_info.max)

#: Smallest logit variance judged: below it A = softmax(M) is constant to float64
#: round-off (its bulk, of size kappa / sqrt(T) with kappa ~ sqrt(s2), drowns in the
#: rounding of its entries). Measured (markov.outliers, 3 replicates): sqrt(T) s_2 / 2 kappa
#: reads 0.99628 at s2 = 1e-16 and 1e-22 but 9e12 at s2 = 1e-24 for T = 1024, and breaks
#: between 1e-26 and 1e-24 at T = 256: the threshold grows with T, so 1e-16 (kappa = 1e-8)
#: keeps a factor of about 100 in kappa up to T = 16384.
_S2_LOW = 1e-16
_S2_LOW_NOTE = ("below s2 = 1e-16, kappa = 1e-8, the samples of A are constant to float64 "
                "round-off: sqrt(T) s_2 broke down at s2 = 1e-24 for T = 1024; gapverify "
                "predict still evaluates the theory there")

#: Every parameter a claim may take, by the name used on the command line.
PARAMETERS: dict[str, Parameter] = {
    p.name: p
    for p in (
        Parameter("s2", r"s^2", "variance of the attention logits", _LOG2, 0.0, math.inf,
                  low_open=True, typical=(0.1, 1.0), finite_high=math.floor(_LOG_DBL_MAX * 100) / 100,
                  finite_note="kappa^2 = e^{s2} - 1 overflows a double above log(DBL_MAX) = 709.78",
                  judged_low=_S2_LOW, judged_low_note=_S2_LOW_NOTE),
        Parameter("mu", r"\mu", "mean of the attention logits", -_LOG2 / 2, -math.inf, math.inf,
                  typical=(-2.0, 2.0)),
        Parameter("gamma", r"\gamma", "ratio T/d of tokens to width", 1.0, 0.0, 1.0,
                  low_open=True, typical=(0.2, 1.0)),
        Parameter("depth", r"\ell", "number of attention layers", 1, 1, 64,
                  integer=True, typical=(1, 4)),
        Parameter("sigma_V", r"\sigma_V", "standard deviation of the value weights", 1.0, 0.0,
                  math.inf, low_open=True, typical=(0.5, 2.0)),
        Parameter("d_qk", r"d_{qk}", "width of the query and key heads", 64, 1, 1 << 16,
                  integer=True, typical=(8, 512)),
    )
}


def defaults() -> dict[str, float | int]:
    """The default value of every parameter."""
    return {name: p.default for name, p in PARAMETERS.items()}


_EXACT_DEFAULTS = {"s2": sp.log(2), "mu": -sp.log(2) / 2}


def exact(name: str, value: float | int) -> sp.Expr:
    """``value`` of parameter ``name`` as an exact sympy number.

    The paper's defaults stay symbolic (``log 2``, ``-log(2)/2``); any other float becomes
    the rational with the same decimal representation, so that predictions are exact
    functions of what the user typed.
    """
    default = _EXACT_DEFAULTS.get(name)
    if default is not None and float(value) == float(default):
        return default
    if PARAMETERS[name].integer:
        return sp.Integer(int(value))
    return sp.Rational(repr(float(value)))


def validate_parameters(values: Mapping[str, object], allowed: tuple[str, ...] | None = None
                        ) -> dict[str, float | int]:
    """Validate ``values`` by name; unknown names (or names outside ``allowed``) raise.

    Returns a new dict of validated numbers.
    """
    names = tuple(PARAMETERS) if allowed is None else allowed
    out: dict[str, float | int] = {}
    for name, value in values.items():
        if name not in PARAMETERS or name not in names:
            raise ParameterError(
                f"unknown parameter '{name}'; allowed here: {', '.join(names) or '(none)'}"
            )
        out[name] = PARAMETERS[name].validate(value)
    return out
