"""Verify claims end to end: plan, sample (resumably), judge, replay failures once.

A failure is replayed once on a fresh root seed derived from the recorded one; a failure
that does not recur is reported as ``flaky`` (a statistical false alarm), one that recurs
stays ``fail`` (as hypothesis does with ``FlakyFailure``).
"""
from __future__ import annotations

import dataclasses
import shlex
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from verification.claims import Claim, Profile
from verification.registry import get_claim
from verification.executors import Engine, make_engine
from verification.runner import DEFAULT_SEED, plan, replay_seed, sweep
from verification.store import Store, code_version, parameters_key
from verification.inference import two_sided_quantile
from verification.verdict import (
    DEFAULT_LEVEL,
    RULES,
    ClaimResult,
    Variant,
    count_tests,
    judge_claim,
)

__all__ = ["RunOptions", "RunPlan", "plan_run", "sample", "verify", "results_json",
           "reproduce_command"]


@dataclass
class RunOptions:
    claims: Sequence[str]
    profile: str = "standard"
    sizes: Sequence[int] | None = None
    replicates: int | None = None
    seed: int = DEFAULT_SEED
    overrides: Mapping[str, float] = field(default_factory=dict)
    perturb: float = 0.0
    workers: int = 1
    level: float = DEFAULT_LEVEL
    replay: bool = True
    scheduler: str | None = None


def _profile(claim: Claim, opts: RunOptions) -> Profile:
    base = claim.profiles[opts.profile]
    return Profile(tuple(sorted(opts.sizes)) if opts.sizes else base.sizes,
                   opts.replicates or base.replicates)


@dataclass
class RunPlan:
    """What a run judges: claims, their sweep profiles and parameter cases, the number of
    statistical tests and the Bonferroni quantile ``q`` (shared by ``run`` and ``audit``)."""

    claims: list[Claim]
    profiles: dict[str, Profile]
    cases: dict[str, list[dict]]
    tests: int
    q: float


def plan_run(opts: RunOptions) -> RunPlan:
    """``count_tests`` per claim times its number of cases; ``q`` at ``opts.level``."""
    claims = [get_claim(c) for c in opts.claims]
    profiles = {c.id: _profile(c, opts) for c in claims}
    cases = {c.id: c.cases_for(opts.profile, opts.overrides) for c in claims}
    tests = sum(len(cases[c.id]) * count_tests([c], {c.id: len(profiles[c.id].sizes)})
                for c in claims)
    return RunPlan(claims, profiles, cases, tests, two_sided_quantile(opts.level, tests))


def reproduce_command(claim: str, sizes: Sequence[int], replicates: int, seed: int,
                      overrides: Mapping[str, float], perturb: float) -> str:
    parts = ["gapverify", "run", claim, "--sizes", ",".join(map(str, sizes)),
             "--replicates", str(replicates), "--seed", str(seed)]
    for k, v in sorted(overrides.items()):
        parts += ["--set", f"{k}={v!r}"]
    if perturb:
        parts += ["--perturb", repr(perturb)]
    return shlex.join(parts)


def _engine(executor: Executor | Engine) -> Engine:
    return executor if isinstance(executor, Engine) else \
        Engine(executor, getattr(executor, "_max_workers", 1), 1, "given")


def sample(store: Store, claim: Claim, params, profile: Profile, seed: int,
           executor: Executor | Engine, progress=None) -> dict:
    """Sample what the store lacks for one case of ``claim`` and load all of it
    (size -> replicate measurements)."""
    version = code_version()
    engine = _engine(executor)
    tasks = plan(store, claim.experiment, params, profile.sizes, profile.replicates, seed, version)
    if progress and tasks:
        progress.start(claim.id, len(tasks), profile.replicates * len(profile.sizes))
    engine.check_memory(tasks)
    sweep(store, tasks, engine.executor, on_done=(progress.advance if progress and tasks else None),
          in_flight=engine.in_flight, threads=engine.threads)
    return store.load(claim.experiment, parameters_key(params), seed, version, profile.sizes,
                      profile.replicates)


def _case_label(claim: Claim, values: Mapping[str, float], varying: set[str]) -> str:
    return ", ".join(f"{k}={values[k]:g}" for k in claim.parameters if k in varying)


def _merge(claim: Claim, parts: list[tuple[dict, ClaimResult]]) -> ClaimResult:
    """One result per claim: the checks of every case, labelled with the case's parameters."""
    if len(parts) == 1:
        return parts[0][1]
    varying = {k for k in claim.parameters if len({str(v[k]) for v, _ in parts}) > 1}
    first = parts[0][1]
    checks = []
    for values, res in parts:
        for c in res.checks:
            c.label = f"{c.label} @ {_case_label(claim, values, varying)}"
            checks.append(c)
    verdicts = {res.verdict for _, res in parts}
    verdict = next((v for v in ("fail", "flaky", "pass") if v in verdicts), first.verdict)
    replays = [r.replay for _, r in parts if r.replay]
    merged = dataclasses.replace(first, checks=checks, verdict=verdict,
                                 replay=replays[0] if replays else None)
    merged.cases = [dict(v) for v, _ in parts]
    return merged


def _judge_case(claim: Claim, values, prof: Profile, opts: RunOptions, q: float, variant: Variant,
                store: Store, executor: Executor, progress) -> ClaimResult:
    data = sample(store, claim, values, prof, opts.seed, executor, progress)
    result = judge_claim(claim, data, values, q=q, root_seed=opts.seed, variant=variant)
    if result.verdict == "fail" and opts.replay:
        again_seed = replay_seed(opts.seed)
        again = sample(store, claim, values, prof, again_seed, executor, progress)
        replay = judge_claim(claim, again, values, q=q, root_seed=again_seed, variant=variant)
        result.replay = {"root_seed": again_seed, "verdict": replay.verdict,
                         "failed": [c.label for c in replay.failed]}
        if replay.verdict != "fail":
            result.verdict = "flaky"
    for check in result.failed:
        T = check.failing_size or prof.sizes[-1]
        sizes = [s for s in prof.sizes if s <= T]
        check.reproduce = reproduce_command(
            claim.id, sizes, prof.replicates, opts.seed,
            {k: values[k] for k in claim.parameters if k in values}, opts.perturb)
        check.reason += "; reproduce: " + check.reproduce
    return result


def sample_all(store: Store, run: RunPlan, seed: int, engine: Engine, progress=None) -> int:
    """Sample what the store lacks for every claim and case of ``run`` in one sweep, so
    the workers stay busy across claims (largest tasks first, :func:`sweep`); the memory
    estimate is checked before anything is sampled. Returns the tasks computed."""
    version = code_version()
    tasks, total = [], 0
    for claim in run.claims:
        prof = run.profiles[claim.id]
        for values in run.cases[claim.id]:
            tasks += plan(store, claim.experiment, values, prof.sizes, prof.replicates, seed, version)
            total += prof.replicates * len(prof.sizes)
    tasks = list(dict.fromkeys(tasks))  # claims sharing an experiment share its tasks
    engine.check_memory(tasks)
    if progress and tasks:
        progress.start(f"{len(run.claims)} claim(s)", len(tasks), total)
    return sweep(store, tasks, engine.executor, in_flight=engine.in_flight, threads=engine.threads,
                 on_done=(progress.advance if progress and tasks else None))


def verify(opts: RunOptions, store: Store, executor: Executor | None = None,
           progress=None) -> list[ClaimResult]:
    """Run and judge every claim in ``opts.claims`` (every case of each); one result per
    claim. Everything is sampled first, in one sweep (:func:`sample_all`), then judged."""
    run = plan_run(opts)
    variant = Variant(name="as stated" if not opts.perturb else f"perturbed by {opts.perturb:+g}",
                      scale=1.0 + opts.perturb)
    own = executor is None
    executor = make_engine(opts.workers, opts.scheduler) if own else _engine(executor)
    results = []
    aborted = True
    try:
        sample_all(store, run, opts.seed, executor, progress)
        for claim in run.claims:
            parts = [(values, _judge_case(claim, values, run.profiles[claim.id], opts, run.q,
                                          variant, store, executor, progress))
                     for values in run.cases[claim.id]]
            results.append(_merge(claim, parts))
        aborted = False
    finally:
        if own:
            executor.close(abort=aborted)
    return results


def results_json(results: Sequence[ClaimResult], opts: RunOptions, q: float | None = None) -> dict:
    """The run as plain data (what ``--json`` writes and the store keeps)."""
    return {
        "root_seed": opts.seed,
        "profile": opts.profile,
        "perturb": opts.perturb,
        "level": opts.level,
        "code_version": code_version(),
        "rules": list(RULES),
        "claims": [dataclasses.asdict(r) for r in results],
    }
