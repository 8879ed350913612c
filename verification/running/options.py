"""A run's options (what ``gapverify run`` and :func:`gapverify.verify` were asked) and its
plan (what :func:`~gapverify.verification.running.suite.plan_run` made of them): plain
data. The plan is one :class:`Job` per claim and case, worked out once; sampling, judging,
the time left and the reproduce commands read the jobs and derive nothing again."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from gapverify.verification.claims.model import Claim, Profile
from gapverify.verification.judging.verdict import DEFAULT_LEVEL, Variant
from gapverify.verification.running.defaults import DEFAULT_SEED

__all__ = ["RunOptions", "RunPlan", "Job", "run_claim", "entry_law_of"]


@dataclass
class RunOptions:
    claims: Sequence[str]
    profile: str = "standard"
    sizes: Sequence[int] | None = None
    replicates: int | None = None
    seed: int = DEFAULT_SEED
    overrides: Mapping[str, float] = field(default_factory=dict)
    perturb: float = 0.0
    #: one prediction made wrong on its own: name -> relative error (``--perturb NAME=EPS``)
    perturb_predictions: Mapping[str, float] = field(default_factory=dict)
    #: one prediction evaluated at a wrong parameter: name -> {parameter: factor}
    #: (``--perturb-parameter NAME:PARAM=FACTOR``)
    perturb_parameters: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    workers: int = 1
    level: float = DEFAULT_LEVEL
    replay: bool = True
    scheduler: str | None = None
    #: law of the entries of Z (``--entries``, :mod:`theory.entry_laws`); ``None``: softmax
    entries: str | None = None
    #: array library, device and dtype of the sampling (``--backend``, ``--device``,
    #: ``--dtype``; :mod:`numerics.backends`); numpy/cpu/float64 samples as before
    backend: str = "numpy"
    device: str = "cpu"
    dtype: str = "float64"


@dataclass(frozen=True)
class Job:
    """One claim at one parameter case, as the run judges it: what sampling, judging,
    replaying and the reproduce command need, worked out once by ``plan_run``.

    A job pickles (for a pool worker, :func:`~verification.running.suite.judge_stored`)
    as the recipe of its claim, not the claim, whose formulas are lambdas: the worker
    rebuilds it with :func:`run_claim`, the recipe the coordinator used."""

    #: the claim as this run judges it (its profile's, under the entry law if any)
    claim: Claim = field(compare=False, repr=False)
    #: this case's index among the claim's cases
    case: int
    #: the case's parameter values (what the predictions are evaluated at)
    values: dict
    #: what the experiment is given and the store keyed by: the values, the entry law's
    #: spec and the backend keys (:func:`~verification.running.sampling_inputs._sampling`)
    sampling: dict
    #: sizes, replicates and power target of the claim at this run
    profile: Profile
    #: the entry law (:class:`theory.entry_laws.EntryLaw`) when not softmax's, else None
    law: object
    #: the backend's sampling keys (:func:`numerics.backends.sampling_keys`; empty for
    #: numpy in float64)
    backend: dict
    #: the Bonferroni quantile of the claim's family (its tests over its cases)
    q: float
    #: the statement judged at this case (perturbations resolved at its values)
    variant: Variant
    #: whether a failure is replayed on a fresh root seed (never for a perturbed run)
    replay: bool
    #: the options the run was given: the reproduce command restates them
    options: RunOptions = field(repr=False)

    @property
    def claim_id(self) -> str:
        return self.claim.id

    @property
    def seed(self) -> int:
        """The run's root seed."""
        return self.options.seed

    def __reduce__(self):
        state = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                 if f.name != "claim"}
        return _job_in_worker, (self.claim.id, state)


def _job_in_worker(claim_id: str, state: dict) -> Job:
    """A pickled :class:`Job` unpickled: its claim rebuilt from the recipe."""
    law = state["law"]
    claim = run_claim(claim_id, None if law is None else law.spec, state["options"].profile)
    return Job(claim=claim, **state)


def entry_law_of(entries: str | None):
    """The parsed ``--entries`` law, or ``None`` for softmax's (``gaussian-logits``, with or
    without ``s2``: sampled and keyed as before). Bad values raise
    :class:`theory.entry_laws.EntryLawError` (exit 2)."""
    from gapverify.theory.entry_laws import parse_entry_law

    law = parse_entry_law(entries)
    return None if law.default else law


def run_claim(claim_id: str, entries: str | None, profile: str | None = None) -> Claim:
    """The claim a run judges: the registry's as ``profile`` judges it
    (:meth:`~verification.claims.model.Claim.for_profile`: a profile's own experiment and
    predictions), or under an entry law (``--entries``) the one
    :func:`~verification.claims.registry.markov.with_entry_law` makes of it (statuses
    dropped, light-tail domains lifted). The one recipe for the coordinator and for a
    pool worker, so that a verdict does not depend on where it is judged."""
    from gapverify.verification.claims.registry import get_claim

    claim = get_claim(claim_id)
    if profile is not None:
        claim = claim.for_profile(profile)
    law = entry_law_of(entries)
    if law is None:
        return claim
    from gapverify.verification.claims.registry.markov import with_entry_law

    return with_entry_law(claim, law)


@dataclass(frozen=True)
class RunPlan:
    """What a run judges: its claims and one :class:`Job` per claim and case, and per
    claim the number of statistical tests (shared by ``run`` and ``audit``). The family
    of a claim is its own checks across its cases, so its verdict does not depend on the
    other claims in the run. ``profiles``, ``cases`` and ``q`` are read off the jobs."""

    claims: list[Claim]
    jobs: tuple[Job, ...]
    tests: dict[str, int]
    #: the entry law (:class:`theory.entry_laws.EntryLaw`) when not softmax's, else None
    law: object = None
    #: what every case's sampling parameters gain for a backend other than numpy/float64
    #: (:func:`numerics.backends.sampling_keys`; empty by default)
    backend: dict = field(default_factory=dict)

    def jobs_of(self, claim_id: str) -> list[Job]:
        """The jobs of one claim, in the order of its cases."""
        return [job for job in self.jobs if job.claim_id == claim_id]

    @property
    def profiles(self) -> dict[str, Profile]:
        """Sizes, replicates and power target per claim."""
        return {job.claim_id: job.profile for job in self.jobs}

    @property
    def cases(self) -> dict[str, list[dict]]:
        """The parameter values of every case, per claim."""
        return {c.id: [job.values for job in self.jobs_of(c.id)] for c in self.claims}

    @property
    def q(self) -> dict[str, float]:
        """The Bonferroni quantile per claim."""
        return {job.claim_id: job.q for job in self.jobs}
