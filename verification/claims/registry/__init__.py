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
:func:`default_claim_ids`: every built-in claim except the opt-in families (``models.*``,
``training.*``: real transformer code and training, which need the ``models`` extra and
minutes of forward passes), and the claims of claim files; name the others to run them.

Claims from outside. After the built-in families, the registry registers the claims of
the files in ``$GAPVERIFY_CLAIMS`` and of every installed entry point of the group
``gapverify.claims`` (the peers' results in ``gapverify.peers`` are such plug-ins of this
package itself); :func:`load_claim_files` adds files later (``--claims-from``).
:data:`SOURCES` says where each claim comes from (:mod:`..loading`).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from gapverify.verification.claims.loading import LoadedClaims, configured_claims, configured_paths
from gapverify.verification.claims.model import Claim
from gapverify.verification.claims.registry._common import CLAIMS, _register
from gapverify.verification.claims.registry import (
    markov, layers, gradients, variants, causal, heavy_tail, normalization, models,
)

__all__ = ["CLAIMS", "get_claim", "claim_ids", "default_claim_ids", "OPT_IN_PREFIXES",
           "UnknownClaimError", "SOURCES", "BUILT_IN", "load_claim_files",
           "package_claim_ids", "documented_claim_ids", "file_claim_ids"]

#: Claim families run only when named (``gapverify run models.bert``).
OPT_IN_PREFIXES: tuple[str, ...] = ("models.", "training.")


class UnknownClaimError(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0])


def claim_ids() -> tuple[str, ...]:
    return tuple(CLAIMS)


def default_claim_ids() -> tuple[str, ...]:
    """The claims a run without claim names judges: the built-in ones but the opt-in
    families, and those of claim files (installed plug-ins run when named)."""
    return tuple(c for c in CLAIMS if not c.startswith(OPT_IN_PREFIXES)
                 and (SOURCES.get(c) == BUILT_IN or SOURCES.get(c) in _FILES))


def get_claim(claim_id: str) -> Claim:
    try:
        return CLAIMS[claim_id]
    except KeyError:
        raise UnknownClaimError(
            f"unknown claim '{claim_id}'; known claims: {', '.join(CLAIMS)}") from None


#: Where a claim comes from: :data:`BUILT_IN`, a claim file's path, or an entry point.
BUILT_IN = "built-in"
SOURCES: dict[str, str] = {c: BUILT_IN for c in CLAIMS}
_FILES: list[str] = []  # the claim files loaded, resolved
_PACKAGE = "gapverify"
_OWN_PLUGINS: set[str] = set()  # claims of this package's own entry points (gapverify.peers)


def package_claim_ids() -> tuple[str, ...]:
    """The claims this package ships: the built-in families and its own plug-ins (the
    peers' results); their statements are recorded in ``verification/snapshots/``."""
    return tuple(c for c in CLAIMS if SOURCES.get(c) == BUILT_IN or c in _OWN_PLUGINS)


def file_claim_ids() -> tuple[str, ...]:
    """The claims of the claim files loaded (``--claims-from``, ``$GAPVERIFY_CLAIMS``)."""
    return tuple(c for c in CLAIMS if SOURCES.get(c) in _FILES)


def documented_claim_ids() -> tuple[str, ...]:
    """What ``gapverify docs`` documents: the package's claims and those of claim files
    (another installed plug-in documents its own claims)."""
    return package_claim_ids() + file_claim_ids()


def _taken() -> dict[str, str]:
    return {c: "the built-in claim" if s == BUILT_IN else f"the claim of {s}"
            for c, s in SOURCES.items()}


def _adopt(loaded: Iterable[LoadedClaims], files: bool) -> list[str]:
    ids = []
    for item in loaded:
        for claim in item.claims:
            _register(claim)
            SOURCES[claim.id] = item.source
            if item.distribution == _PACKAGE:
                _OWN_PLUGINS.add(claim.id)
            ids.append(claim.id)
        if files:
            _FILES.append(item.source)
    return ids


def load_claim_files(paths: Iterable[str | os.PathLike]) -> list[str]:
    """Register the claims of the files ``paths`` (a file already loaded is not loaded
    again); returns their ids. Raises :class:`..loading.ClaimFileError`."""
    new = [str(Path(p).resolve()) for p in paths]
    new = [p for p in dict.fromkeys(new) if p not in _FILES]
    return _adopt(configured_claims(_taken(), paths=new, plugins=False), files=True)


# $GAPVERIFY_CLAIMS's files, then the installed plug-ins
load_claim_files(configured_paths())
_adopt(configured_claims(_taken(), paths=[]), files=False)
