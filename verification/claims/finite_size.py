r"""Finite-size models: how a check's per-size mean approaches its limit when the rate
is not a single power of ``T``, and the ready families a claim names in
``Check(models=...)``. Part of the claim model: a check states its model, the judging
(:func:`gapverify.verification.judging.inference.family_limit`) fits it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["FiniteSizeModel", "UNBIASED", "ONE_OVER_T", "ONE_OVER_T_SERIES", "ONE_OVER_LOG_T"]


@dataclass(frozen=True)
class FiniteSizeModel:
    r"""A finite-size model :math:`\bar x_T = f(T; L, \theta)`: the limit :math:`L` and
    nuisance parameters :math:`\theta`, fitted together. ``curve(T, L, *theta)``;
    ``start`` the nuisances' starting values; ``formula`` as a person reads it."""

    name: str
    formula: str
    curve: Callable[..., np.ndarray]
    start: tuple[float, ...]

    @property
    def parameters(self) -> int:
        return 1 + len(self.start)


#: A statistic whose mean equals its limit at every size (E A = C_T for causal attention;
#: a law symmetric about the limit): no finite-size correction, the sizes pool into one
#: weighted mean, and a drift in T would show as Birge inflation
UNBIASED = (FiniteSizeModel("unbiased at every T", "L", lambda T, L: np.full(np.shape(T), L), ()),)

#: A mean with an expansion in integer powers of 1/T (the delta method around a row
#: normalisation: E f(S/T) = f(mu) + f''(mu) sigma^2/(2T) + O(T^-2)), truncated after
#: the first term, and after the second: the union of the two is the truncation's
#: uncertainty
def _inverse_t_series(T, L, *coefficients):
    # L + c_1/T + c_2/T^2 + ...
    u = 1.0 / np.asarray(T, dtype=float)
    return L + sum(c * u ** (k + 1) for k, c in enumerate(coefficients))


_INVERSE_T = FiniteSizeModel("1/T", "L + c/T", _inverse_t_series, (0.0,))
_INVERSE_T2 = FiniteSizeModel("1/T + 1/T^2", "L + c/T + e/T^2", _inverse_t_series, (0.0, 0.0))
ONE_OVER_T = (_INVERSE_T,)
ONE_OVER_T_SERIES = (_INVERSE_T, _INVERSE_T2)


#: A correction in powers of 1/log T (a quantity carried by the Cesaro matrix's top singular
#: vectors, which spread like j^(-1/2)/sqrt(log T): their weight on any fixed set of rows
#: decays like 1/log T), truncated after the first term
def _inverse_log_t_series(T, L, *coefficients):
    # L + c_1/log T + c_2/log^2 T + ...
    u = 1.0 / np.log(np.asarray(T, dtype=float))
    return L + sum(c * u ** (k + 1) for k, c in enumerate(coefficients))


#: (over T = 64..1024, 1/log T spans a factor 1.67 only: the two-term fit cannot separate
#: c from e, and the one-term model, with its goodness-of-fit test, is what can be judged)
ONE_OVER_LOG_T = (FiniteSizeModel("1/log T", "L + c/log T", _inverse_log_t_series, (0.0,)),)
