r"""The one registry of claims (ids, statuses and statements from ``THEORY.md``).

Every consumer (the command line, the verifier, the tables, the snapshots, the audit and
the tests) reads :data:`CLAIMS`. To add a claim: write its theory in ``theory/``, its
experiment in ``numerics/experiments.py`` and one :class:`~verification.claims.Claim` in
the family module it belongs to (``markov``, ``layers``, ``gradients``, ``variants``,
``causal``, ``heavy_tail``, ``normalization``, ``models``).

Rates. A check's ``rate`` is the exponent :math:`\alpha` in "the mean absolute error
decays at least like :math:`T^{-\alpha}`"; ``rate_status`` says where it comes from
(``derived``: a CLT or exact-algebra argument given in ``rate_note``; ``empirical``: measured
here or in THEORY.md, no proof). ``rate=None`` asserts no rate and the check is a
consistency check only (the reason is in ``rate_note``).
"""
from __future__ import annotations

from verification.claims import Claim
from verification.registry._common import CLAIMS
from verification.registry import (  # noqa: F401  (they register)
    markov, layers, gradients, variants, causal, heavy_tail, normalization, models,
)

__all__ = ["CLAIMS", "get_claim", "claim_ids", "UnknownClaimError"]


class UnknownClaimError(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0])


def claim_ids() -> tuple[str, ...]:
    return tuple(CLAIMS)


def get_claim(claim_id: str) -> Claim:
    try:
        return CLAIMS[claim_id]
    except KeyError:
        raise UnknownClaimError(
            f"unknown claim '{claim_id}'; known claims: {', '.join(CLAIMS)}") from None
