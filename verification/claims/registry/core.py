"""The registry as an object: :class:`Registry` holds claims in order, with where each
comes from, and loads claim files and plug-ins when asked.

A claim comes from one of three places, its *source*: :data:`BUILT_IN` (the family modules
of this package), a claim file (its resolved path: ``--claims-from``, ``$GAPVERIFY_CLAIMS``)
or an installed entry point of the group ``gapverify.claims`` (``entry point NAME
(VALUE)``). :meth:`Registry.register` adds one claim; :meth:`Registry.load_files`,
:meth:`Registry.load_plugins` and :meth:`Registry.load_configured` add those of the outside
sources (:mod:`gapverify.verification.claims.loading` reads and checks them). A registry
made with ``autoload=True`` (the package's default one) loads the configured sources
(``$GAPVERIFY_CLAIMS``'s files, then the plug-ins) on its first lookup or listing, never
on import.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from pathlib import Path

from gapverify.verification.claims.errors import UnknownClaimError
from gapverify.verification.claims.loading import (
    LoadedClaims, claim_paths, configured_claims, configured_paths, entry_point_claims,
)
from gapverify.verification.claims.model import Claim
from gapverify.verification.claims.registry.paper_results import annotate

__all__ = ["Registry", "BUILT_IN", "OPT_IN_PREFIXES", "ClaimsView", "SourcesView"]

#: The source of the claims of this package's family modules.
BUILT_IN = "built-in"
#: Claim families run only when named (``gapverify run models.bert``).
OPT_IN_PREFIXES: tuple[str, ...] = ("models.", "training.")
#: The distribution whose plug-ins are this package's own (the peers, ``gapverify.peers``).
PACKAGE = "gapverify"


def _checked(claim: Claim) -> Claim:
    """``claim`` with each check measuring one of its predictions (a programming error
    otherwise: a claim file's are refused earlier, with their line, by the loader)."""
    names = {p.name for p in claim.predictions}
    for check in claim.checks:
        if check.prediction not in names:
            raise AssertionError(f"{claim.id}: check of unknown prediction {check.prediction}")
        if check.relative_to is not None and check.relative_to[0] not in names:
            raise AssertionError(f"{claim.id}: check relative to unknown prediction "
                                 f"{check.relative_to[0]}")
    return claim


class Registry:
    """Claims by id, in registration order, each with its source.

    ``claims``: built-in claims registered at once (source :data:`BUILT_IN`);
    ``autoload``: load the configured sources (:meth:`load_configured`) on the first
    lookup or listing, so that a program that never asks for a claim never runs a
    plug-in."""

    def __init__(self, claims: Iterable[Claim] = (), *, autoload: bool = False):
        self._claims: dict[str, Claim] = {}
        self._sources: dict[str, str] = {}
        self._files: list[str] = []  # the claim files loaded, resolved
        self._own: set[str] = set()  # claims of this package's own plug-ins
        self._autoload = autoload
        self._configured = False
        for claim in claims:
            self.register(claim)

    # --- adding claims ---------------------------------------------------------------

    def register(self, claim: Claim, source: str = BUILT_IN,
                 distribution: str | None = None) -> Claim:
        """Add ``claim`` from ``source`` (``distribution``: the installed package of an
        entry point), with its paper result and derivation from
        :mod:`.paper_results`; returns the claim as registered."""
        if claim.id in self._claims:
            raise ValueError(f"claim id '{claim.id}' is already registered "
                             f"({self._where(claim.id)})")
        registered = annotate(_checked(claim))
        self._claims[claim.id] = registered
        self._sources[claim.id] = source
        if distribution == PACKAGE:
            self._own.add(claim.id)
        return registered

    def _adopt(self, loaded: Iterable[LoadedClaims], files: bool) -> list[str]:
        ids = []
        for item in loaded:
            for claim in item.claims:
                ids.append(self.register(claim, item.source, item.distribution).id)
            if files:
                self._files.append(item.source)
        return ids

    def load_files(self, paths: Iterable[str | os.PathLike]) -> list[str]:
        """Register the claims of the claim files ``paths`` (a file already loaded is not
        loaded again); returns their ids. Raises
        :class:`~gapverify.verification.claims.loading.ClaimFileError`; ``paths`` that is
        neither a path nor an iterable of paths raises
        :class:`~gapverify.verification.claims.errors.ClaimTypeError` naming ``paths``."""
        paths = claim_paths(paths)
        self._ready()
        return self._load_files(paths)

    def _load_files(self, paths: Iterable[str | os.PathLike]) -> list[str]:
        new = [str(Path(p).resolve()) for p in paths]
        new = [p for p in dict.fromkeys(new) if p not in self._files]
        # every file read and checked before any is registered: a bad one adds nothing
        return self._adopt(configured_claims(self.taken(), paths=new, plugins=False),
                           files=True)

    def load_plugins(self) -> list[str]:
        """Register the claims of every installed entry point of the group
        ``gapverify.claims`` (a broken plug-in is left out with one warning line);
        returns their ids."""
        return self._adopt(entry_point_claims(self.taken()), files=False)

    def load_configured(self) -> list[str]:
        """The configured sources, once: the files ``$GAPVERIFY_CLAIMS`` names, then the
        installed plug-ins; returns the ids registered (none after the first call)."""
        if self._configured:
            return []
        self._configured = True  # first: a plug-in that looks a claim up loads nothing twice
        try:
            return self._load_files(configured_paths()) + self.load_plugins()
        except BaseException:
            self._configured = False  # a bad file: the next lookup reports it again
            raise

    def _ready(self) -> None:
        if self._autoload and not self._configured:
            self.load_configured()

    # --- reading ---------------------------------------------------------------------

    def get(self, claim_id: str) -> Claim:
        """The claim ``claim_id``; :class:`UnknownClaimError` names the known ones."""
        self._ready()
        try:
            return self._claims[claim_id]
        except KeyError:
            raise unknown_claim(claim_id, self._claims) from None

    def ids(self) -> tuple[str, ...]:
        """Every claim id, in registration order."""
        self._ready()
        return tuple(self._claims)

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids())

    def __len__(self) -> int:
        return len(self.ids())

    def __repr__(self) -> str:
        return f"Registry({len(self._claims)} claims, configured={self._configured})"

    def __contains__(self, claim_id: object) -> bool:
        self._ready()
        return claim_id in self._claims

    def source(self, claim_id: str) -> str | None:
        """Where ``claim_id`` comes from: :data:`BUILT_IN`, a file's path or an entry point."""
        self._ready()
        return self._sources.get(claim_id)

    def taken(self) -> dict[str, str]:
        """The ids in use, each with the words that name its source (for the loader's
        clash message)."""
        return {c: self._where(c) for c in self._sources}

    def _where(self, claim_id: str) -> str:
        source = self._sources.get(claim_id)
        return "the built-in claim" if source == BUILT_IN else f"the claim of {source}"

    # --- selections (``ids``: the claims to select from, default all) -----------------

    def _among(self, ids: Iterable[str] | None) -> Iterable[str]:
        self._ready()
        return self._claims if ids is None else ids

    def package_ids(self, ids: Iterable[str] | None = None) -> tuple[str, ...]:
        """The claims this package ships: the built-in families and its own plug-ins (the
        peers' results)."""
        return tuple(c for c in self._among(ids)
                     if self._sources.get(c) == BUILT_IN or c in self._own)

    def file_ids(self, ids: Iterable[str] | None = None) -> tuple[str, ...]:
        """The claims of the claim files loaded."""
        return tuple(c for c in self._among(ids) if self._sources.get(c) in self._files)

    def default_ids(self, ids: Iterable[str] | None = None) -> tuple[str, ...]:
        """The claims a run without claim names judges: the built-in ones but the opt-in
        families (:data:`OPT_IN_PREFIXES`), and those of claim files."""
        return tuple(c for c in self._among(ids) if not c.startswith(OPT_IN_PREFIXES)
                     and (self._sources.get(c) == BUILT_IN
                          or self._sources.get(c) in self._files))

    # --- views and state -------------------------------------------------------------

    def claims(self) -> ClaimsView:
        """A live mapping id -> claim over this registry."""
        return ClaimsView(self)

    def sources(self) -> SourcesView:
        """A live read-only mapping id -> source over this registry."""
        return SourcesView(self)

    def state(self) -> tuple:
        """A copy of what this registry holds, for :meth:`restore` (tests, and tools
        that load claims for a while)."""
        return (dict(self._claims), dict(self._sources), list(self._files), set(self._own),
                self._configured)

    def restore(self, state: tuple) -> None:
        """Hold again what :meth:`state` copied."""
        claims, sources, files, own, configured = state
        self._claims, self._sources = dict(claims), dict(sources)
        self._files, self._own, self._configured = list(files), set(own), configured


def unknown_claim(claim_id: str, known: Iterable[str]) -> UnknownClaimError:
    """The error for an unknown id, naming the ``known`` ones."""
    return UnknownClaimError(f"unknown claim '{claim_id}'; known claims: {', '.join(known)}")


class ClaimsView(MutableMapping):
    """The claims of a :class:`Registry` as a mapping (the module-level ``CLAIMS``).
    Setting or deleting an item replaces or removes a claim as it stands, unchecked (a
    test swaps a claim for a broken one); :meth:`Registry.register` adds claims."""

    def __init__(self, registry: Registry):
        self._registry = registry

    def __getitem__(self, claim_id: str) -> Claim:
        self._registry._ready()
        return self._registry._claims[claim_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry.ids())

    def __len__(self) -> int:
        return len(self._registry.ids())

    def __setitem__(self, claim_id: str, claim: Claim) -> None:
        self._registry._claims[claim_id] = claim

    def __delitem__(self, claim_id: str) -> None:
        del self._registry._claims[claim_id]
        self._registry._sources.pop(claim_id, None)

    def __repr__(self) -> str:
        return f"ClaimsView({list(self)!r})"


class SourcesView(Mapping):
    """Where each claim of a :class:`Registry` comes from, as a read-only mapping."""

    def __init__(self, registry: Registry):
        self._registry = registry

    def __getitem__(self, claim_id: str) -> str:
        self._registry._ready()
        return self._registry._sources[claim_id]

    def __iter__(self) -> Iterator[str]:
        self._registry._ready()
        return iter(tuple(self._registry._sources))

    def __len__(self) -> int:
        self._registry._ready()
        return len(self._registry._sources)
