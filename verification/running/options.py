"""A run's options (what ``gapverify run`` and :func:`gapverify.verify` were asked) and its
plan (what :func:`~gapverify.verification.running.suite.plan_run` made of them): plain
data, read by sampling, judging, the time left and the reproduce commands."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from gapverify.verification.claims.model import Claim, Profile
from gapverify.verification.judging.verdict import DEFAULT_LEVEL
from gapverify.verification.running.defaults import DEFAULT_SEED

__all__ = ["RunOptions", "RunPlan"]


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



@dataclass
class RunPlan:
    """What a run judges: claims, their sweep profiles and parameter cases, and per claim
    the number of statistical tests and the Bonferroni quantile ``q`` (shared by ``run``
    and ``audit``). The family of a claim is its own checks across its cases, so its
    verdict does not depend on the other claims in the run."""

    claims: list[Claim]
    profiles: dict[str, Profile]
    cases: dict[str, list[dict]]
    tests: dict[str, int]
    q: dict[str, float]
    #: the entry law (:class:`theory.entry_laws.EntryLaw`) when not softmax's, else None
    law: object = None
    #: what every case's sampling parameters gain for a backend other than numpy/float64
    #: (:func:`numerics.backends.sampling_keys`; empty by default)
    backend: dict = field(default_factory=dict)
