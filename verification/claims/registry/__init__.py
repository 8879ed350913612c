r"""The one registry of claims (ids, statuses and statements; ``docs/claims.md`` is
generated from it).

Every consumer (the command line, the verifier, the tables, the snapshots, the audit and
the tests) reads :data:`REGISTRY`, a :class:`~.core.Registry`, directly or through its
views :data:`CLAIMS` (id -> claim) and :data:`SOURCES` (id -> where it comes from) and the
functions below. To add a claim: write its theory in ``theory/``, its experiment in
``numerics/experiments.py`` and one :class:`~verification.claims.Claim` in the ``CLAIMS``
list of the family module it belongs to (``markov``, ``layers``, ``gradients``,
``variants``, ``causal``, ``heavy_tail``, ``normalization``, ``models``), written with the
public authoring API (:mod:`..authoring`: ``Claim``, ``Prediction``, ``Check``,
``profiles``), as a claim file or a plug-in is.

Rates. A check's ``rate`` is the exponent :math:`\alpha` in "the mean absolute error
decays at least like :math:`T^{-\alpha}`"; ``rate_status`` says where it comes from
(``derived``: a CLT or exact-algebra argument given in ``rate_note``; ``empirical``: measured
here, no proof). An asserted limit check needs a ``rate`` or a ``rate_range`` (a check that
cannot reject a wrong limit is refused); a recorded one (``asserted=False``) says why in
``record_note``.

Default claims. A run, audit or calibration without claim names takes
:func:`default_claim_ids`: every built-in claim except the opt-in families (``models.*``,
``training.*``: real transformer code and training, which need the ``models`` extra and
minutes of forward passes), and the claims of claim files; name the others to run them.

Claims from outside. After the built-in families, :data:`REGISTRY` registers, on its first
lookup or listing (not on import), the claims of the files in ``$GAPVERIFY_CLAIMS`` and
of every installed entry point of the group ``gapverify.claims`` (the peers' results in
``gapverify.peers`` are such plug-ins of this package itself):
:meth:`~.core.Registry.load_configured`; :func:`load_claim_files` adds files later
(``--claims-from``). :data:`SOURCES` says where each claim comes from (:mod:`..loading`).

The functions read the claims through the module's :data:`CLAIMS` (a test may replace it
with a cut-down mapping) and their sources through :data:`REGISTRY`.
"""
from __future__ import annotations

import os
from typing import Iterable

from gapverify.verification.claims.errors import UnknownClaimError
from gapverify.verification.claims.model import Claim
from gapverify.verification.claims.registry import (
    markov, layers, gradients, variants, causal, heavy_tail, normalization, models,
)
from gapverify.verification.claims.registry.core import (
    BUILT_IN, OPT_IN_PREFIXES, Registry, unknown_claim,
)

__all__ = ["REGISTRY", "Registry", "FAMILIES", "CLAIMS", "get_claim", "claim_ids",
           "default_claim_ids", "OPT_IN_PREFIXES", "UnknownClaimError", "SOURCES", "BUILT_IN",
           "load_claim_files", "package_claim_ids", "documented_claim_ids", "file_claim_ids"]

#: The built-in claim families, in the order of the listings: each lists its claims in
#: ``CLAIMS``.
FAMILIES = (markov, layers, gradients, variants, causal, heavy_tail, normalization, models)

#: The package's registry: the built-in claims, then (on first use) the configured ones.
REGISTRY = Registry((claim for family in FAMILIES for claim in family.CLAIMS), autoload=True)
#: Every claim by id, in order (a live view of :data:`REGISTRY`).
CLAIMS = REGISTRY.claims()
#: Where a claim comes from: :data:`BUILT_IN`, a claim file's path, or an entry point.
SOURCES = REGISTRY.sources()


def claim_ids() -> tuple[str, ...]:
    return tuple(CLAIMS)


def get_claim(claim_id: str) -> Claim:
    """The claim ``claim_id``; :class:`UnknownClaimError` names the known ones."""
    try:
        return CLAIMS[claim_id]
    except KeyError:
        raise unknown_claim(claim_id, CLAIMS) from None


def default_claim_ids() -> tuple[str, ...]:
    """The claims a run without claim names judges: the built-in ones but the opt-in
    families, and those of claim files (installed plug-ins run when named)."""
    return REGISTRY.default_ids(CLAIMS)


def package_claim_ids() -> tuple[str, ...]:
    """The claims this package ships: the built-in families and its own plug-ins (the
    peers' results); their statements are recorded in ``verification/snapshots/``."""
    return REGISTRY.package_ids(CLAIMS)


def file_claim_ids() -> tuple[str, ...]:
    """The claims of the claim files loaded (``--claims-from``, ``$GAPVERIFY_CLAIMS``)."""
    return REGISTRY.file_ids(CLAIMS)


def documented_claim_ids() -> tuple[str, ...]:
    """What ``gapverify docs`` documents: the package's claims and those of claim files
    (another installed plug-in documents its own claims)."""
    return package_claim_ids() + file_claim_ids()


def load_claim_files(paths: Iterable[str | os.PathLike]) -> list[str]:
    """Register the claims of the files ``paths`` in :data:`REGISTRY` (a file already
    loaded is not loaded again); returns their ids. Raises :class:`..loading.ClaimFileError`."""
    return REGISTRY.load_files(paths)
