"""A claim's sweep profiles: the sizes a profile samples, the power it must reach, its
pilot and its budget; the draws per size are the run's to size
(:mod:`verification.running.rounds`), never the claim's."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping

__all__ = ["POWER_TARGETS", "PROFILES", "MIN_REPLICATES", "PILOTS", "BUDGETS", "Profile"]


#: The power a check must reach at each profile: the largest relative error of its
#: prediction it may fail to reject (issue "verified must mean a wrong statement fails").
POWER_TARGETS = {"quick": 0.05, "standard": 0.03, "large": 0.03, "long": 0.03, "gpu": 0.03}
#: Every profile name, as the command line offers them (verification.claims.inputs.PROFILES,
#: kept import-light for the command line's start-up; a test asserts the two agree).
PROFILES: tuple[str, ...] = tuple(POWER_TARGETS)


#: The pilot: replicates drawn at every size before anything is judged (the Student-t
#: quantiles and the goodness-of-fit tests need a spread from each size), unless a
#: profile states another minimum.
MIN_REPLICATES = 12
#: The pilot of the profiles whose sizes reach 16384 and beyond, where one draw costs
#: minutes: fewer, as their fixed counts were (6 to 8, and 4 on a GPU).
PILOTS = {"large": 6, "gpu": 4}
#: What one claim-case may spend, in seconds of the reference machine (the experiments'
#: cost records, :mod:`numerics.experiment_record`), per profile: a claim whose target
#: needs more reads "not verified: lacks power" and says what would reach it.
BUDGETS = {"quick": 120.0, "standard": 1200.0, "large": 3600.0, "long": 7200.0, "gpu": 3600.0}


@dataclass(frozen=True)
class Profile:
    """A sweep: sizes (geometric) and the power it must reach: every asserted check
    rejects its prediction made ``power`` wrong (relative) on the samples of this
    profile, or the claim is not verified.

    The number of draws is not stated: a run samples ``minimum`` replicates at every
    size, then as many more per size as the power target needs at least cost, in rounds,
    within ``budget`` reference seconds per claim-case (:mod:`verification.running.rounds`;
    ``None``: the profile's :data:`BUDGETS`). ``replicates`` fixes the draws instead (an
    explicit override, ``--replicates``); ``drawn`` is what a run's rounds drew, per size
    in the order of ``sizes`` (set by the run, never by a claim).

    A profile may judge part of its claim from an experiment of its own (the ``long``
    profile of the edge claims: one cheap ``O(T^2)`` experiment shared by three claims):
    ``experiment`` names it, ``parameters`` are the ones it samples at (claims whose
    profiles name the same experiment and parameters share its tasks) and
    ``predictions`` the predictions judged (their checks only); empty: the claim's own."""

    sizes: tuple[int, ...]
    replicates: int | None = None
    power: float = 0.05
    experiment: str = ""
    parameters: tuple[str, ...] = ()
    predictions: tuple[str, ...] = ()
    minimum: int = MIN_REPLICATES
    budget: float | None = None
    drawn: tuple[int, ...] = ()

    @property
    def self_sizing(self) -> bool:
        """Whether a run sizes the draws itself (no fixed ``replicates``)."""
        return self.replicates is None

    def per_size(self) -> dict[int, int]:
        """Replicates per size: what was drawn, else the fixed count, else the pilot."""
        if self.drawn:
            return dict(zip(self.sizes, self.drawn))
        n = self.replicates if self.replicates is not None else self.minimum
        return {T: n for T in self.sizes}

    def with_drawn(self, drawn: Mapping[int, int]) -> "Profile":
        """This profile with ``drawn`` replicates per size."""
        return dataclasses.replace(self, drawn=tuple(int(drawn[T]) for T in self.sizes))

    def budget_for(self, name: str) -> float:
        """The budget in reference seconds per claim-case at profile ``name``."""
        return self.budget if self.budget is not None else BUDGETS.get(name, BUDGETS["standard"])

    def narrows(self) -> bool:
        """Whether this profile judges its claim through an experiment or a subset of its own."""
        return bool(self.experiment or self.parameters or self.predictions)
