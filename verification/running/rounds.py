r"""Sampling in rounds: as many draws per size as each claim-case's power target needs.

A self-sizing profile (no fixed ``replicates``, :class:`~verification.claims.model.Profile`)
is sampled so:

1. **pilot**: ``profile.minimum`` replicates at every size, for every job of the run, in
   one sweep;
2. **judge** every job as stated, and ask each asserted check what it needs
   (:func:`verification.running.allocation.check_demand`: the replicates per size that
   bring its planned power to the target at least reference-machine cost);
3. **extend**: a job's next draws are the largest any of its checks asks for at each
   size (never fewer than drawn); sample the difference for every job in one sweep and
   go to 2, until each job stops:

   * ``target``: every asserted check's planned power meets the target;
   * ``budget``: the profile's budget per claim-case (reference seconds) is spent. A
     plan that costs more than is left is drawn in part, every size's increment scaled
     down alike (:func:`within_budget`), and planned again on the larger sample; once
     no draw fits (or the rounds are used up), the result says how many draws at which
     sizes, and about how many minutes, would reach the target;
   * ``rounds``: :data:`MAX_ROUNDS` rounds were drawn;
   * ``stalled``: two rounds in a row did not bring the worst planned power closer to
     the target by :data:`PROGRESS` of what their draws should buy (the same report of
     the draws that would reach it);
   * ``fixed``: the profile or ``--replicates`` fixes the draws (one round).

The stopping rule reads standard errors, interval widths and costs, never where an
estimate sits relative to its prediction (Chow & Robbins 1965), so the intervals keep
their coverage (``docs/power.md`` measures it). It is deterministic: replicate ``r`` at
size ``T`` has the same seed whatever the rounds (:func:`verification.running.runner.stream`),
the allocation reads only the samples and the cost records, so ``--workers``,
``--scheduler`` and an interrupted run give the same draws and verdicts; a rerun finds
every round's samples in the store and repeats the same rounds without sampling. A
perturbed run repeats the rounds of the statement as stated (its draws are a property of
the design, not of the statement judged) and samples nothing; a limit's plan is relative
to a scale read from the samples (:func:`~verification.judging.resolution.estimate_scale`),
so a statement changed in the theory is planned on the same scale as the one it replaced
(a rated check's fitted exponent, measured from the prediction, and a law's measured
power still read the statement: ``docs/judging.md``).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable, Mapping

from gapverify.verification.judging.checks import CheckResult, ClaimResult
from gapverify.verification.judging.verdict import Variant
from gapverify.verification.running.allocation import Demand, check_demand
from gapverify.verification.running.options import Job, RunPlan

__all__ = ["MAX_ROUNDS", "TASK_OVERHEAD", "Sizing", "STOPPED", "sample_in_rounds", "job_costs",
           "next_draws", "within_budget"]

#: Rounds after the pilot at most (each one re-judges every job still short of its target).
MAX_ROUNDS = 5

#: Why a job's sampling stopped, as the results say it.
STOPPED = {
    "target": "every asserted check reached its power target",
    "budget": "the profile's budget was spent short of the target",
    "rounds": f"{MAX_ROUNDS} rounds drawn",
    "fixed": "replicates fixed by the profile or --replicates",
    "none": "no check that more draws can help",
    "stalled": "two rounds of draws did not narrow the worst check's interval",
}
#: A round must bring the worst planned power down by at least this share of what its
#: draws would buy at one over the square root of their number, or sampling stops: an
#: interval whose width comes from a fitted rate or model no longer narrows with draws.
PROGRESS = 0.25


@dataclass
class Sizing:
    """How one claim-case was sized: the replicates drawn per size, the rounds, why it
    stopped, each asserted check's per-replicate spread at the pilot, and, when the
    budget stopped it, the draws per size that would reach the target and their cost."""

    drawn: dict[int, int]
    rounds: int = 0
    stopped: str = ""
    pilot_sd: dict[str, dict[int, float]] = field(default_factory=dict)
    planned: dict[str, float] = field(default_factory=dict)
    #: (replicates drawn in all, worst planned power over its target) after each round
    history: list[tuple[int, float]] = field(default_factory=list, repr=False)
    needed: dict[int, int] | None = None
    needed_seconds: float | None = None

    def to_dict(self) -> dict:
        return {"drawn": {str(T): n for T, n in self.drawn.items()}, "rounds": self.rounds,
                "stopped": self.stopped, "why": STOPPED.get(self.stopped, ""),
                "pilot_sd": {k: {str(T): s for T, s in v.items()} for k, v in self.pilot_sd.items()},
                "planned_power": dict(self.planned),
                "needed": None if self.needed is None else {str(T): n for T, n in self.needed.items()},
                "needed_seconds": self.needed_seconds}


#: Seconds a task costs the run beyond its experiment (its lease, its stored row, its
#: result's checks and decoding): 2.1 ms measured on the reference machine (the runner's
#: time per task less the experiment's, softmax.kappa's quick profile, 1633 tasks). Added
#: to an experiment without a cost record (a claim file's, costed 1e-9 T^3), whose cheap
#: draws otherwise look free: one drew thousands of replicates at its smallest sizes. A
#: recorded experiment's constant term already carries its own: added there too, it made
#: the judging tests' 8 quick claims 159.5 s against 146.0 s (one run each).
TASK_OVERHEAD = 2e-3


def job_costs(job: Job) -> dict[int, float]:
    """Seconds of one draw at each size on the reference machine: the experiment's cost
    record, or for an experiment without one ``1e-9 T^3`` plus :data:`TASK_OVERHEAD`."""
    from gapverify.verification.running.time_left import _record

    record = _record(job.claim.experiment)
    extra = TASK_OVERHEAD if record.seconds is None else 0.0
    return {T: max(record.reference_seconds(T), 1e-9) + extra for T in job.profile.sizes}


def _fit_rate(check: CheckResult) -> tuple[float, bool]:
    """The exponent the check's limit is planned at, and whether it states a rate: its
    stated rate (the one a wrong prediction is extrapolated at, whose errors stop
    decaying); a rate range's slowest accepted rate; 1/2 for a model family."""
    if check.rate_range is not None:
        return float(check.rate_range[0]), False
    if check.models:
        return 0.5, False
    if check.rate is None:
        return 0.5, False
    return float(check.rate), True


def next_draws(job: Job, result: ClaimResult, tests: int,
               costs: Mapping[int, float]) -> tuple[dict[int, int], list[Demand]]:
    """The replicates per size that every asserted check of ``job`` asks for (the largest
    at each size, never fewer than drawn), and the checks' demands."""
    drawn = job.profile.per_size()
    need = dict(drawn)
    demands = []
    for check in result.checks:
        rate, rated = _fit_rate(check)
        demand = check_demand(check, costs, tests, job.q, rate, rated)
        if demand is None:
            continue
        demands.append(demand)
        for T, n in (demand.replicates or {}).items():
            need[T] = max(need[T], n)
    return need, demands


def _cost(draws: Mapping[int, int], costs: Mapping[int, float]) -> float:
    return float(sum(n * costs[T] for T, n in draws.items()))


def within_budget(drawn: Mapping[int, int], need: Mapping[int, int],
                  costs: Mapping[int, float], budget: float) -> dict[int, int]:
    r"""The draws toward ``need`` that the rest of the budget buys: every size's increment
    scaled by the same factor :math:`f = (B - \sum_T n_T c_T) / \sum_T (m_T - n_T) c_T`
    (``n`` drawn, ``m`` needed, ``c`` the cost of one draw, ``B`` the budget), rounded down,
    so the draws never cost more than ``B``. A plan made on a 12-replicate pilot can ask
    ten times what the target needs (a fitted exponent two standard errors high leaves the
    faster rate little room); drawing part of it and planning again on more samples, until
    the budget is spent, is what the budget is for."""
    extra = _cost({T: need[T] - drawn[T] for T in drawn}, costs)
    share = max(budget - _cost(drawn, costs), 0.0) / extra if extra > 0 else 0.0
    return {T: n + int(math.floor(min(share, 1.0) * (need[T] - n))) for T, n in drawn.items()}


def _pilot_spread(result: ClaimResult) -> dict[str, dict[int, float]]:
    """Each statistical check's per-replicate standard deviation per size (``se sqrt(n)``)."""
    return {c.label: {r.T: float(r.se * math.sqrt(r.n)) for r in c.rows if r.n >= 2}
            for c in result.checks if c.kind not in ("exact", "matching") and c.rows}


def _advance(job: Job, result: ClaimResult, sizing: Sizing, tests: int, last: bool) -> Job | None:
    """Record this round's judgement of ``job`` in ``sizing``; the job with its next
    draws, or ``None`` when it stops here."""
    costs = job_costs(job)
    need, demands = next_draws(job, result, tests, costs)
    sizing.planned = {d.label: d.planned for d in demands}
    drawn = job.profile.per_size()
    stalled = _stalled(sizing, sum(drawn.values()),
                       max((d.planned / d.target for d in demands), default=0.0))
    budget = job.profile.budget_for(job.options.profile)
    step = need if _cost(need, costs) <= budget else within_budget(drawn, need, costs, budget)
    if not demands:
        sizing.stopped = "none"
    elif need == drawn:
        sizing.stopped = "target"
    elif step == drawn or last or stalled:
        sizing.stopped = "budget" if step == drawn else "rounds" if last else "stalled"
        sizing.needed = {T: n - drawn[T] for T, n in need.items() if n > drawn[T]}
        sizing.needed_seconds = _cost(need, costs) - _cost(drawn, costs)
    else:
        return dataclasses.replace(job, profile=job.profile.with_drawn(step))
    return None


def _stalled(sizing: Sizing, total: int, worst: float) -> bool:
    """Whether the last two rounds each brought the worst planned power down by less
    than :data:`PROGRESS` of the fall their draws should buy (``sqrt(before / now)``)."""
    slow = []
    for (before_total, before), (after_total, after) in zip(
            sizing.history, sizing.history[1:] + [(total, worst)]):
        expected = before * math.sqrt(before_total / max(after_total, 1))
        slow.append((before - after) < PROGRESS * (before - expected))
    sizing.history.append((total, worst))
    return len(slow) >= 2 and slow[-1] and slow[-2]  # one noisy round is not a stall


def sample_in_rounds(run: RunPlan, sample: Callable[[RunPlan], object],
                     judge: Callable[[RunPlan], dict],
                     stopped: Callable[[list[Job]], None] | None = None,
                     ) -> tuple[RunPlan, dict, dict]:
    """Sample ``run`` in rounds (module docstring). ``sample(plan)`` draws what the store
    lacks for a plan's jobs (or refuses, for a perturbed run); ``judge(plan)`` judges a
    plan's jobs as stated, keyed by ``(claim id, case)``; ``stopped(jobs)`` is told, after
    each round that another round follows, the jobs whose sampling ended in it (their
    draws are final: the run may judge them while the others sample). Returns the plan
    with every job's draws, the last judgement of each job (as stated) and each job's
    :class:`Sizing`, keyed alike."""
    jobs = {(j.claim_id, j.case): j for j in run.jobs}
    jobs = {k: dataclasses.replace(j, profile=j.profile.with_drawn(j.profile.per_size()))
            for k, j in jobs.items()}
    sizing = {k: Sizing(j.profile.per_size()) for k, j in jobs.items()}
    active = {k for k, j in jobs.items() if j.profile.self_sizing}
    for k in set(jobs) - active:
        sizing[k].stopped, sizing[k].rounds = "fixed", 1
    judged: dict = {}
    told: set = set()  # the jobs ``stopped`` was told of
    for round_ in range(1, MAX_ROUNDS + 2):
        current = dataclasses.replace(run, jobs=tuple(jobs.values()))
        sample(current)
        as_stated = dataclasses.replace(current, jobs=tuple(
            dataclasses.replace(j, variant=Variant()) for j in jobs.values()))
        judged.update(judge(dataclasses.replace(as_stated, jobs=tuple(
            j for j in as_stated.jobs if (j.claim_id, j.case) in active or round_ == 1))))
        for k in sorted(active):
            sizing[k].rounds = round_
            if round_ == 1:
                sizing[k].pilot_sd = _pilot_spread(judged[k])
            nxt = _advance(jobs[k], judged[k], sizing[k], run.tests[k[0]], round_ > MAX_ROUNDS)
            if nxt is None:
                active.discard(k)
            else:
                jobs[k] = nxt
                sizing[k].drawn = nxt.profile.per_size()
        if not active:
            break
        if stopped is not None:
            ended = [jobs[k] for k in jobs if k not in active and k not in told]
            told.update((j.claim_id, j.case) for j in ended)
            if ended:
                stopped(ended)
    final = dataclasses.replace(run, jobs=tuple(jobs.values()))
    return final, judged, sizing
