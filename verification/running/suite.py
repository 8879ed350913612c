"""Verify claims end to end: plan, sample (resumably), judge, replay failures once.

A failure is replayed once on a fresh root seed derived from the recorded one; a failure
that does not recur is reported as ``flaky`` (a statistical false alarm), one that recurs
stays ``fail`` (as hypothesis does with ``FlakyFailure``).
"""
from __future__ import annotations

import dataclasses
import math
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Mapping, Sequence

from gapverify.verification.claims.model import Claim, Profile
from gapverify.verification.claims.registry import get_claim
from gapverify.verification.running.executors import Engine, make_engine
from gapverify.verification.running.options import Job, RunOptions, RunPlan, run_claim
from gapverify.verification.running.claim_errors import (
    ClaimError, case_predictions, check_case, check_data, check_statistics, from_judging,
    user_claim,
)
from gapverify.verification.running.runner import (
    LEASE_SECONDS, Task, abandon, lease_owner, params_key, plan, replay_seed, run_task, sweep,
)
from gapverify.verification.running.sampling_inputs import (  # noqa: F401 - the suite's API
    backend_keys, entry_law_lines, entry_law_of, select_entry_claims,
)
from gapverify.verification.running.commands import (  # noqa: F401 - the suite's API
    claim_files_arguments, reproduce_command, reproduce_sizes, require_stored,
)
from gapverify.verification.running.planning import (  # noqa: F401 - the suite's API
    claim_tests, perturbations, plan_run, run_variant,
)
from gapverify.verification.running.store import Store, code_version, decode
from gapverify.verification.judging.outcomes import Outcome
from gapverify.verification.judging.verdict import (
    RULES, ClaimResult, claim_reason, claim_verdict, judge_claim,
)

__all__ = ["RunOptions", "RunPlan", "Job", "plan_run", "claim_tests", "run_variant", "sample",
           "verify", "results_json", "reproduce_command", "entry_law_of", "select_entry_claims",
           "entry_law_lines", "backend_keys", "run_claim", "probe", "check_cases",
           "claim_files_arguments", "ClaimError", "sample_sized"]


def _engine(executor: Executor | Engine) -> Engine:
    return executor if isinstance(executor, Engine) else \
        Engine(executor, getattr(executor, "_max_workers", 1), 1, "given")


def probe(store: Store, cases: Sequence[tuple[Claim, Mapping[str, float], Sequence[Task]]],
          engine: Engine, progress=None) -> set[Task]:
    """Run the first task of each case of a claim of a file or plug-in (its smallest size,
    its first replicate missing) before the sweep, all together on ``engine``, and check
    it: an exception, a result that is not a dict of numbers, a statistic a check reads
    missing or not finite is a :class:`ClaimError` in seconds, not after the whole
    sampling. ``cases``: (claim, parameters, the case's missing tasks). A good result is
    stored (the sweep does not draw it again); returns the tasks run. Built-in claims are
    not probed: their experiments are the package's own."""
    firsts: dict[Task, list[tuple[Claim, Mapping[str, float]]]] = {}
    for claim, values, tasks in cases:
        if tasks and user_claim(claim):
            firsts.setdefault(min(tasks, key=lambda t: (t.T, t.replicate)), []).append(
                (claim, values))
    if not firsts:
        return set()
    owner, futures = lease_owner(), {}
    try:
        for task in firsts:
            if store.claim(task.key, owner, LEASE_SECONDS) in ("mine", "taken"):
                futures[task] = engine.executor.submit(run_task, task, engine.threads)
        for task, future in futures.items():
            claim, values = firsts[task][0]
            try:
                _, payload, seconds = future.result()
            except ClaimError as exc:  # named by the claim's case, not the sampling keys
                raise ClaimError(exc.message, exc.where, claim.id, dict(values), exc.T,
                                 exc.replicate) from None
            measurement = decode(payload)
            for claim, values in firsts[task]:
                check_statistics(claim, values, task.T, task.replicate, measurement)
            store.put(*task.key[:2], task.T, task.replicate, task.root_seed, task.version,
                      payload, seconds)
            if progress:
                progress.advance(task, seconds)
    except BaseException:
        abandon(futures.values(), store, owner)
        raise
    return set(futures)


def sample(store: Store, claim: Claim, params, profile: Profile, seed: int,
           executor: Executor | Engine, progress=None,
           values: Mapping[str, float] | None = None) -> dict:
    """Sample what the store lacks for one case of ``claim`` and load all of it
    (size -> replicate measurements); ``values``: the case's parameters (default
    ``params``, the sampling keys), which a claim error names. The first task of a claim
    of a file or plug-in is run and checked first (:func:`probe`)."""
    version = code_version()
    engine = _engine(executor)
    tasks = plan(store, claim.experiment, params, profile.sizes, profile.per_size(), seed, version)
    if progress and tasks:
        progress.start(claim.id, len(tasks), sum(profile.per_size().values()), tasks=tasks)
    engine.check_memory(tasks)
    probed = probe(store, [(claim, values or params, tasks)], engine, progress)
    tasks = [t for t in tasks if t not in probed]
    sweep(store, tasks, engine.executor, on_done=(progress.advance if progress and tasks else None),
          in_flight=engine.in_flight, threads=engine.threads)
    return store.load(claim.experiment, params_key(params), seed, version, profile.sizes,
                      profile.per_size())


def _case_label(claim: Claim, values: Mapping[str, float], varying: set[str]) -> str:
    return ", ".join(f"{k}={values[k]:g}" for k in claim.parameters if k in varying)


def _merge(claim: Claim, parts: list[tuple[dict, ClaimResult]]) -> ClaimResult:
    """One result per claim: the checks of every case, labelled with the case's parameters;
    a prediction is verified when its checks pass with power wherever they are judged
    and at least one case judges it (:func:`verification.judging.verdict.claim_verdict`)."""
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
    verdict, unverified, summary = claim_verdict(claim, checks, max(first.sizes))
    if verdict == Outcome.FAIL and Outcome.FAIL not in verdicts:
        verdict = Outcome.FLAKY.value  # every failing case was replayed and did not recur
    replays = [r.replay for _, r in parts if r.replay]
    merged = dataclasses.replace(first, checks=checks, verdict=verdict, unverified=unverified,
                                 reason=claim_reason(verdict, unverified),
                                 power_summary=summary, replay=replays[0] if replays else None)
    merged.cases = [dict(v) for v, _ in parts]
    return merged


def judge_stored(store_path: str, job: Job, version: str,
                 predictions: dict | None = None, planning: bool = False) -> ClaimResult:
    """Judge one job on what the store holds for it (nothing is sampled): a pool worker
    runs this for the run's jobs in parallel, opening the store read-only; the job's
    claim is rebuilt there by :func:`run_claim` (:class:`~verification.running.options.Job`
    pickles as its recipe). ``predictions``: the predicted values worked out already."""
    store = Store(store_path, readonly=True)
    try:
        data = store.load(job.claim.experiment, params_key(job.sampling), job.seed, version,
                          job.profile.sizes, job.profile.per_size())
    finally:
        store.close()
    return _judged(job, data, job.seed, predictions, measure=True, planning=planning)


def _judged(job: Job, data: dict, seed: int, predictions: dict | None,
            measure: bool, planning: bool = False) -> ClaimResult:
    """:func:`judge_claim` of ``job`` on ``data`` sampled from root ``seed``. A claim of a
    file or plug-in has every replicate checked first (:func:`check_data`: a statistic
    missing or not finite names its size and replicate), and an exception its own code
    raises while judged is a :class:`ClaimError`."""
    user = user_claim(job.claim)
    try:
        if user:
            check_data(job.claim, job.values, data)
        return judge_claim(job.claim, data, job.values, q=job.q, root_seed=seed,
                           variant=job.variant, power_target=job.profile.power, measure=measure,
                           predictions=predictions, planning=planning)
    except Exception as exc:  # noqa: BLE001 - the claim's own code: one line, else as it is
        error = from_judging(exc, job.claim, job.values) if user or isinstance(
            exc, ClaimError) else None
        if error is None:
            raise
        raise error from None


def _judge_case(job: Job, store: Store, engine: Engine, progress, predictions: dict,
                judged: ClaimResult | None = None) -> ClaimResult:
    """Judge one job (``judged``: its judgement made already, by :func:`judge_stored` in a
    worker), replay a failure on a fresh root seed and name the command that reproduces
    it. ``predictions``: the predicted values, shared by every job of the run."""
    if judged is None:
        data = sample(store, job.claim, job.sampling, job.profile, job.seed, engine, progress,
                      values=job.values)
        judged = _judged(job, data, job.seed, predictions, measure=True)
    result = judged
    if result.verdict == Outcome.FAIL and job.replay:
        _replay(job, result, store, engine, progress, predictions)
    for check in result.failed:
        check.reproduce = reproduce_command(
            job, reproduce_sizes(job.claim, check, job.profile.sizes), store.path)
        check.reason += "; reproduce: " + check.reproduce
    return result


def _replay(job: Job, result: ClaimResult, store: Store, engine: Engine, progress,
            predictions: dict) -> None:
    """Judge a failing job again on a fresh root seed (:func:`replay_seed`), recorded in
    ``result.replay``: a failure that does not recur makes the job ``flaky``."""
    again_seed = replay_seed(job.seed)
    again = sample(store, job.claim, job.sampling, job.profile, again_seed, engine, progress,
                   values=job.values)
    replay = _judged(job, again, again_seed, predictions, measure=False)
    result.replay = {"root_seed": again_seed, "verdict": replay.verdict,
                     "failed": [c.label for c in replay.failed]}
    if replay.verdict != Outcome.FAIL:
        result.verdict = Outcome.FLAKY.value


def sample_all(store: Store, run: RunPlan, seed: int, engine: Engine, progress=None,
               on_drained=None) -> int:
    """Sample what the store lacks for every job of ``run`` in one sweep, so the workers
    stay busy across claims (largest tasks first, :func:`sweep`; ``on_drained`` as
    there); the memory estimate is checked before anything is sampled. Returns the tasks
    computed."""
    version = code_version()
    tasks, total, cases = [], 0, []
    for job in run.jobs:
        prof = job.profile
        mine = plan(store, job.claim.experiment, job.sampling, prof.sizes, prof.per_size(),
                    seed, version)
        cases.append((job.claim, job.values, mine))
        tasks += mine
        total += sum(prof.per_size().values())
    stored = total - len(tasks)  # found in the store (before claims share tasks)
    tasks = list(dict.fromkeys(tasks))  # claims sharing an experiment share its tasks
    total = len(tasks) + stored  # a task two claims share is one task, not one reused
    engine.check_memory(tasks)
    if progress and (tasks or total):  # everything stored: the output says so
        progress.start(f"{len(run.claims)} claim(s)", len(tasks), total, tasks=tasks)
    # the first replicate of each case of a claim file's claim, run and checked first
    probed = probe(store, cases, engine, progress)
    tasks = [t for t in tasks if t not in probed]
    try:
        return len(probed) + sweep(store, tasks, engine.executor, in_flight=engine.in_flight,
                                   threads=engine.threads,
                                   on_done=(progress.advance if progress and tasks else None),
                                   on_drained=on_drained)
    except ClaimError as exc:  # a later replicate's: named by its claim's case
        raise _in_run(exc, run) from None


def _in_run(exc: ClaimError, run: RunPlan) -> ClaimError:
    """``exc`` (raised by a task of the sweep, naming its sampling parameters) named by the
    parameters of the run's case it belongs to, when one matches."""
    for job in run.jobs:
        numbers = {k: float(v) for k, v in job.sampling.items() if not isinstance(v, str)}
        if job.claim_id == exc.claim and exc.case == numbers:
            return ClaimError(exc.message, exc.where, exc.claim, dict(job.values), exc.T,
                              exc.replicate)
    return exc


def _judge_in_pool(store: Store, run: RunPlan, engine: Engine, predictions: dict,
                   planning: bool = False) -> dict[tuple[str, int], ClaimResult]:
    """Judge every job of the run in the local process pool's workers, each opening the
    store read-only (:func:`judge_stored`): the sympy, quadrature and fitting work of
    judging runs on every core instead of after the sweep on one. ``{}`` (judge here, one
    job after another) with one worker, a Dask cluster (whose workers may not see this
    store) or an in-memory store. Keyed by claim and case."""
    if not _pool_judges(store, engine):
        return {}
    version = code_version()
    futures = {(job.claim_id, job.case): engine.executor.submit(
        judge_stored, store.path, job, version, _memo_of(job, predictions), planning)
        for job in run.jobs}
    return {key: f.result() for key, f in futures.items()}


def _pool_judges(store: Store, engine: Engine) -> bool:
    """Whether jobs are judged in ``engine``'s workers (:func:`_judge_in_pool`)."""
    return (isinstance(engine.executor, ProcessPoolExecutor) and store.path != ":memory:"
            and engine.slots >= 2)


class _Finals:
    """The final judgements (:func:`judge_stored`, as :func:`_judge_in_pool` makes them)
    of the jobs whose sampling has ended, submitted to the pool when the next round's
    sweep has submitted its last task: they run on the workers that the sweep's last,
    longest tasks leave idle, instead of after every round. The same jobs on the same
    stored draws: the same judgements."""

    def __init__(self, store: Store, engine: Engine, predictions: dict) -> None:
        self.store, self.engine, self.predictions = store, engine, predictions
        self.ready: list[Job] = []
        self.futures: dict = {}

    def stopped(self, jobs: list[Job]) -> None:
        self.ready += jobs

    def submit(self) -> None:
        version = code_version()
        for job in self.ready:
            self.futures[(job.claim_id, job.case)] = self.engine.executor.submit(
                judge_stored, self.store.path, job, version, _memo_of(job, self.predictions))
        self.ready = []

    def collect(self) -> dict:
        return {key: f.result() for key, f in self.futures.items()}


def _memo_key(job: Job) -> tuple:
    """The key of ``job``'s predicted values in the judging's memo (``verdict._Predicted``:
    the claim id and the parameters the theory is valued at)."""
    return (job.claim.id, tuple(sorted(job.values.items())))


def _memo_of(job: Job, predictions: dict) -> dict:
    key = _memo_key(job)
    return {key: predictions[key]} if key in predictions else {}


def check_cases(run: RunPlan) -> dict:
    """Before anything is sampled: every check's domain, smallest size and rate, and every
    prediction, evaluated at every case of the run (:func:`check_case`,
    :func:`case_predictions`); a :class:`ClaimError` names the one at fault. Returns the
    predicted values as the judging's memo (``judge_claim(predictions=...)``), so that
    they are worked out once."""
    memo: dict = {}
    for job in run.jobs:
        key = _memo_key(job)
        if key not in memo:
            check_case(job.claim, job.values)
            memo[key] = case_predictions(job.claim, job.values)
    return memo


def _judge_all(store: Store, run: RunPlan, engine: Engine, progress,
               predictions: dict | None = None, judged: dict | None = None) -> list[ClaimResult]:
    """Judge every job of ``run`` (in the pool when it can, :func:`_judge_in_pool`) and
    merge each claim's cases into one result (:func:`_merge`). ``predictions``: the
    predicted values worked out already (:func:`check_cases`), shared by every case and
    claim of the run; ``judged``: the jobs' judgements made already (:class:`_Finals`),
    the others judged here."""
    predictions = {} if predictions is None else predictions
    judged = dict(judged or {})
    rest = tuple(job for job in run.jobs if (job.claim_id, job.case) not in judged)
    if rest:
        judged.update(_judge_in_pool(store, dataclasses.replace(run, jobs=rest), engine,
                                     predictions))
    results = []
    judging = getattr(progress, "judging", None) or (lambda done, total, claim="": None)
    judging(0, len(run.claims))
    for claim in run.claims:
        jobs = run.jobs_of(claim.id)
        parts = [(job.values, _judge_case(job, store, engine, progress, predictions,
                                          judged.get((job.claim_id, job.case))))
                 for job in jobs]
        merged = _merge(claim, parts)
        merged.level, merged.tests = jobs[0].options.level, run.tests[claim.id]
        merged.experiment = _experiment(claim, run)
        results.append(merged)
        judging(len(results), len(run.claims), claim.id)
    return results


def _experiment(claim: Claim, run: RunPlan) -> str:
    """The experiment a result names: readers of results (reports) look measurements up by
    experiment and parameters, so an entry law and a backend are named in it (they never
    take softmax's samples at s2 = s2_eff for a law's, nor numpy's for torch's: the store
    keys those with "entries" and the backend keys)."""
    if run.backend:
        return f"{claim.experiment}[" + ",".join(f"{k}={v}" for k, v in run.backend.items()) + "]"
    if run.law is not None:
        return f"{claim.experiment}[entries={run.law.spec}]"
    return claim.experiment


def verify(opts: RunOptions, store: Store, executor: Executor | None = None,
           progress=None) -> list[ClaimResult]:
    """Run and judge every claim in ``opts.claims`` (every case of each); one result per
    claim. Every job is sampled in rounds (:func:`~verification.running.rounds.sample_in_rounds`:
    a pilot, then as many draws per size as the power target needs), each round one sweep
    across claims (:func:`sample_all`), then judged. A perturbed run samples nothing: a
    wrong statement is judged on the stored samples of the right one, drawn by the same
    rounds (:func:`require_stored`), and never replayed."""
    run = plan_run(opts)  # bad input (a wrong parameter outside its domain too): here
    predictions = check_cases(run)  # a claim's code that fails at a case: here too
    perturbed = bool(perturbations(opts))
    if perturbed:
        require_stored(store, run)
    own = executor is None
    engine = make_engine(opts.workers, opts.scheduler) if own else _engine(executor)
    aborted = True
    try:
        finals = (_Finals(store, engine, predictions)
                  if not perturbed and _pool_judges(store, engine) else None)
        run, judged, sizing = sample_sized(store, run, engine, progress, predictions,
                                           stored_only=perturbed, finals=finals)
        results = _judge_all(store, run, engine, progress, predictions,
                             judged=finals.collect() if finals else None)
        for result in results:
            _with_sizing(result, [sizing[(result.claim, job.case)]
                                  for job in run.jobs_of(result.claim)])
        aborted = False
    finally:
        if own:
            engine.close(abort=aborted)
    return results


def sample_sized(store: Store, run: RunPlan, engine: Engine, progress=None,
                 predictions: dict | None = None, stored_only: bool = False,
                 finals: _Finals | None = None):
    """Sample every job of ``run`` in rounds until its power target is met
    (:func:`~verification.running.rounds.sample_in_rounds`), each round one sweep
    (:func:`sample_all`); ``stored_only``: sample nothing, refuse what the store lacks
    (:func:`require_stored`); ``finals``: given the jobs that stop before the last round,
    judged at the end of the next round's sweep. Returns the plan with each job's draws,
    the last judgement of each job as stated and each job's sizing, keyed by claim and
    case."""
    from gapverify.verification.running.rounds import sample_in_rounds

    predictions = {} if predictions is None else predictions

    def draw(plan: RunPlan) -> None:
        if stored_only:
            require_stored(store, plan)
        else:
            sample_all(store, plan, plan.jobs[0].seed if plan.jobs else 0, engine, progress,
                       on_drained=finals.submit if finals else None)

    return sample_in_rounds(run, draw, lambda plan: _judge_jobs(store, plan, engine, predictions),
                            stopped=finals.stopped if finals else None)


def _with_sizing(result: ClaimResult, sizings: list) -> None:
    """Record how each case was sized; a claim short of power whose sampling the budget
    (or the rounds) stopped says what would reach the target."""
    result.sizing = [s.to_dict() for s in sizings]
    short = [s for s in sizings if s.needed]
    if result.verdict == Outcome.NOT_VERIFIED and short:
        more = max(short, key=lambda s: s.needed_seconds or 0.0)
        sizes = ", ".join(f"T={T}: +{n}" for T, n in sorted(more.needed.items()))
        minutes = (more.needed_seconds or 0.0) / 60
        result.unverified.append(
            f"sampling stopped ({more.stopped}): {sizes} more draws would reach the power "
            f"target, about {minutes:.2g} min of one core on the reference machine")


def _judge_jobs(store: Store, run: RunPlan, engine: Engine,
                predictions: dict) -> dict[tuple[str, int], ClaimResult]:
    """Judge every job of ``run`` on what the store holds (in the pool when it can) for
    the plan of the next round only (``judge_claim(planning=True)``), keyed by claim and
    case; nothing is replayed."""
    judged = _judge_in_pool(store, run, engine, predictions, planning=True)
    if judged or not run.jobs:
        return judged
    version = code_version()
    return {(job.claim_id, job.case): _judged(
        job, store.load(job.claim.experiment, params_key(job.sampling), job.seed, version,
                        job.profile.sizes, job.profile.per_size()),
        job.seed, predictions, measure=True, planning=True) for job in run.jobs}


def results_json(results: Sequence[ClaimResult], opts: RunOptions, q: float | None = None) -> dict:
    """The run as plain data (what ``--json`` writes and the store keeps): with its
    provenance, and the table's verdict words (:mod:`verification.running.output`)."""
    from gapverify.verification.running.output import RESULTS_SCHEMA, provenance, with_words

    return {
        "schema": RESULTS_SCHEMA,
        "provenance": provenance(),
        "root_seed": opts.seed,
        "profile": opts.profile,
        "perturb": opts.perturb,
        "perturb_predictions": dict(opts.perturb_predictions),
        "perturb_parameters": {k: dict(v) for k, v in opts.perturb_parameters.items()},
        "level": opts.level,
        "level_is_per_claim": True,
        "code_version": code_version(),
        "rules": list(RULES),
        "claims": [json_safe(with_words(dataclasses.asdict(r))) for r in results],
        "entries": _entries_json(opts, results),
    }


def _entries_json(opts: RunOptions, results: Sequence[ClaimResult]) -> dict:
    """The entry law of the run: its spec, kappa (exact text and float), how kappa was
    computed, s2_eff, its hypotheses, and per claim the predictions whose status dropped."""
    from gapverify.verification.claims.registry.markov import (
        ENTRY_LAW_HYPOTHESES, entry_law_drops,
    )

    law = entry_law_of(opts.entries)
    if law is None:
        return {"spec": opts.entries or "gaussian-logits", "default": True}
    out = {**law.summary(), "default": False, "dropped": {}}
    for r in results:
        if r.claim in ENTRY_LAW_HYPOTHESES:
            out["dropped"][r.claim] = entry_law_drops(get_claim(r.claim), law)
    return out


def json_safe(obj):
    """JSON has no infinity or NaN: an infinite power (no error rejected) is written as the
    string ``"inf"``, an undefined one as ``null``."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "inf" if math.isinf(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj
