r"""The one registry of claims (ids, statuses and statements; ``docs/claims.md`` is
generated from it).

Every consumer (the command line, the verifier, the tables, the snapshots, the audit and
the tests) reads :data:`CLAIMS`. To add a claim: write its theory in ``theory/``, its
experiment in ``numerics/experiments.py`` and one :class:`~verification.claims.Claim` in
the family module it belongs to (``markov``, ``layers``, ``gradients``, ``variants``,
``causal``, ``heavy_tail``, ``normalization``, ``models``).

Rates. A check's ``rate`` is the exponent :math:`\alpha` in "the mean absolute error
decays at least like :math:`T^{-\alpha}`"; ``rate_status`` says where it comes from
(``derived``: a CLT or exact-algebra argument given in ``rate_note``; ``empirical``: measured
here, no proof). An asserted limit check needs a ``rate`` or a ``rate_range`` (a check that
cannot reject a wrong limit is refused); a recorded one (``asserted=False``) says why in
``record_note``.

Default claims. A run, audit or calibration without claim names takes
:func:`default_claim_ids`: every claim except the opt-in families (``models.*``,
``training.*``: real transformer code and training, which need the ``models`` extra and
minutes of forward passes); name them to run them.
"""
from __future__ import annotations

from gapverify.verification.claims.model import Claim
from gapverify.verification.claims.registry._common import CLAIMS
from gapverify.verification.claims.registry import (
    markov, layers, gradients, variants, causal, heavy_tail, normalization, models,
)

__all__ = ["CLAIMS", "get_claim", "claim_ids", "default_claim_ids", "OPT_IN_PREFIXES",
           "UnknownClaimError"]

#: Claim families run only when named (``gapverify run models.bert``).
OPT_IN_PREFIXES: tuple[str, ...] = ("models.", "training.")


class UnknownClaimError(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0])


def claim_ids() -> tuple[str, ...]:
    return tuple(CLAIMS)


def default_claim_ids() -> tuple[str, ...]:
    """The claims a run without claim names judges: all but the opt-in families."""
    return tuple(c for c in CLAIMS if not c.startswith(OPT_IN_PREFIXES))


def get_claim(claim_id: str) -> Claim:
    try:
        return CLAIMS[claim_id]
    except KeyError:
        raise UnknownClaimError(
            f"unknown claim '{claim_id}'; known claims: {', '.join(CLAIMS)}") from None
