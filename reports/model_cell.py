r"""The finite-size model a check was judged with, decided once for every output: the
terminal's verdict table (:mod:`gapverify.cli.display`) and the report's per-check table
(:mod:`reports.checks_table`, LaTeX and Markdown) print the same :class:`ModelCell`, each
in its own type.

A check is ``recorded`` (shown, never asserted), ``exact`` (within a round-off tolerance
at every size), judged by a ``family`` of finite-size models (named by
:func:`verification.judging.verdict.family_label`), by a ``range`` of rates
(:math:`x_T = L + c\,T^{-r}`, :math:`r` estimated in ``[low, high]``, the theory's
finite-size term subtracted first when ``corrected``), at a stated ``rate``
(:math:`T^{-\alpha}`), or by ``none`` of these.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Mapping

from gapverify.verification.judging.outcomes import Outcome

__all__ = ["ModelKind", "ModelCell", "finite_size_model"]


class ModelKind(Enum):
    """The kinds of model cell (see the module's notes)."""

    RECORDED = "recorded"
    EXACT = "exact"
    FAMILY = "family"
    RANGE = "range"
    RATE = "rate"
    NONE = "none"


@dataclass(frozen=True)
class ModelCell:
    """What the model cell of a check says: its ``kind`` and what that kind needs (the
    family's name; the range's ends; whether the theory's finite-size term was subtracted;
    the stated rate, which may be missing or not finite)."""

    kind: ModelKind
    family: str = ""
    low: float | None = None
    high: float | None = None
    corrected: bool = False
    rate: float | None = None


def _field(check: Any, key: str) -> Any:
    # a check of the results JSON (a mapping) or of the judging (an object)
    return check.get(key) if isinstance(check, Mapping) else getattr(check, key, None)


def finite_size_model(check: Any, recorded: bool = True) -> ModelCell:
    """The model cell of ``check`` (a results-JSON mapping or a judged check object).
    ``recorded=False``: a recorded check shows the model it would be judged with (the
    terminal prints a recorded check's rate and fit)."""
    # a power class "recorded" is spelt as the outcome
    if recorded and (_field(check, "power_class") == Outcome.RECORDED
                     or _field(check, "verdict") == Outcome.RECORDED):
        return ModelCell(ModelKind.RECORDED)
    if _field(check, "kind") in ("exact", "matching") or _field(check, "power_class") == "exact":
        return ModelCell(ModelKind.EXACT)
    corrected = bool(_field(check, "corrected"))
    if _field(check, "models"):
        from gapverify.verification.judging.verdict import family_label

        return ModelCell(ModelKind.FAMILY, family=family_label(_field(check, "models"), corrected),
                         corrected=corrected)
    rr = _field(check, "rate_range")
    if rr:
        return ModelCell(ModelKind.RANGE, low=rr[0], high=rr[1], corrected=corrected)
    rate = _field(check, "rate")
    return ModelCell(ModelKind.NONE) if rate is None else ModelCell(ModelKind.RATE, rate=rate)
