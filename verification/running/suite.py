"""Verify claims end to end: plan, sample (resumably), judge, replay failures once.

A failure is replayed once on a fresh root seed derived from the recorded one; a failure
that does not recur is reported as ``flaky`` (a statistical false alarm), one that recurs
stays ``fail`` (as hypothesis does with ``FlakyFailure``).
"""
from __future__ import annotations

import dataclasses
import math
import shlex
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
    LEASE_SECONDS, Task, lease_owner, params_key, plan, replay_seed, run_task, sweep,
)
from gapverify.verification.running.sampling_inputs import (
    _law_cases, _sampling, backend_keys, case_overrides, entry_law_lines,
    entry_law_of, select_entry_claims,
)
from gapverify.verification.running.store import Store, code_version, decode
from gapverify.verification.judging.inference import two_sided_quantile
from gapverify.verification.judging.outcomes import Outcome
from gapverify.verification.judging.verdict import (
    DEFAULT_LEVEL, RULES, ClaimResult, Variant, claim_reason, claim_verdict, count_tests,
    judge_claim,
)

__all__ = ["RunOptions", "RunPlan", "Job", "plan_run", "claim_tests", "run_variant", "sample",
           "verify", "results_json", "reproduce_command", "entry_law_of", "select_entry_claims",
           "entry_law_lines", "backend_keys", "run_claim", "probe", "check_cases",
           "claim_files_arguments", "ClaimError"]


def _profile(claim: Claim, opts: RunOptions) -> Profile:
    base = claim.profiles[opts.profile]
    return Profile(tuple(sorted(opts.sizes)) if opts.sizes else base.sizes,
                   opts.replicates or base.replicates, base.power)


def claim_tests(claim: Claim, profile: Profile, cases: Sequence[Mapping[str, float]]) -> int:
    """Statistical tests of one claim over its cases (the Bonferroni divisor of its family)."""
    return sum(count_tests([claim], {claim.id: len(profile.sizes)}, {claim.id: case})
               for case in cases)


def plan_run(opts: RunOptions) -> RunPlan:
    """One :class:`~verification.running.options.Job` per selected claim and case, each
    with its claim, parameters, store key, profile, entry law, backend, ``q`` (at
    ``opts.level``) and statement: the run's options checked and worked out once (bad
    input raises a ``ValueError``, exit 2, before anything is sampled)."""
    law = entry_law_of(opts.entries)
    backend = backend_keys(opts)
    if law is not None:
        select_entry_claims(list(opts.claims), opts.entries, named=True)
    claims = [run_claim(c, None if law is None else law.spec, opts.profile) for c in opts.claims]
    profiles = {c.id: _profile(c, opts) for c in claims}
    overrides = case_overrides(opts, law)
    cases = {c.id: (c.cases_for(opts.profile, overrides) if law is None
                    else _law_cases(c, opts.profile, overrides, law)) for c in claims}
    for c in claims:  # a domain that raises: a claim error, before the tests are counted
        for values in cases[c.id]:
            check_case(c, values)
    tests = {c.id: claim_tests(c, profiles[c.id], cases[c.id]) for c in claims}
    q = {c.id: two_sided_quantile(opts.level, tests[c.id]) for c in claims}
    variant = run_variant(opts)
    # a perturbed run judges stored samples: it never replays (that would sample)
    replay = opts.replay and not perturbations(opts)
    jobs = tuple(Job(claim=c, case=i, values=values, sampling=_sampling(values, law, backend),
                     profile=profiles[c.id], law=law, backend=backend, q=q[c.id],
                     variant=_variant_at(variant, opts, c, values), replay=replay, options=opts)
                 for c in claims for i, values in enumerate(cases[c.id]))
    return RunPlan(claims, jobs, tests, law, backend)


def run_variant(opts: RunOptions) -> Variant:
    """The statement a run judges: as stated, or perturbed (globally or per prediction)."""
    parts = []
    if opts.perturb:
        parts.append(f"every limit {opts.perturb:+g}")
    parts += [f"{k} {v:+g}" for k, v in sorted(opts.perturb_predictions.items())]
    parts += [f"{k} at {p} x{f:g}" for k, d in sorted(opts.perturb_parameters.items())
              for p, f in sorted(d.items())]
    name = "as stated" if not parts else "perturbed: " + ", ".join(parts)
    return Variant(name=name, scale=1.0 + opts.perturb,
                   scales={k: 1.0 + v for k, v in opts.perturb_predictions.items()})


def _variant_at(variant: Variant, opts: RunOptions, claim: Claim,
                values: Mapping[str, float]) -> Variant:
    """Per-prediction wrong parameters are factors: resolve them at this case's values
    (a value outside the parameter's domain, or a parameter the claim does not take, is
    a :class:`~theory.parameters.ParameterError`)."""
    from gapverify.theory.parameters import PARAMETERS, ParameterError

    mine = {p.name for p in claim.predictions}
    if not mine & set(opts.perturb_parameters):
        return variant
    wrong = {}
    for name, d in opts.perturb_parameters.items():
        if name not in mine:
            continue
        for p, f in d.items():
            if p not in values:
                raise ParameterError(f"--perturb-parameter {name}:{p}: the claim of {name} "
                                     f"takes no parameter '{p}'")
            value = values[p] * f
            if PARAMETERS[p].integer:
                value = int(round(value))
            wrong.setdefault(name, {})[p] = PARAMETERS[p].validate(value)
    return dataclasses.replace(variant, prediction_parameters=wrong)


def reproduce_command(job: Job, sizes: Sequence[int], store: str | None = None) -> str:
    """The command that reproduces a failure of ``job``'s claim: the claim alone (its
    verdict does not depend on the other claims: its family is its own checks) at
    ``sizes`` and the job's replicates, with the run's profile, root seed, ``--set``,
    ``--entries``, perturbations, level and backend, ``--store`` when not the default,
    and ``--no-replay`` (the failure itself, not its replay)."""
    return _run_command(job.options, [job.claim_id],
                        Profile(tuple(sizes), job.profile.replicates, 0.0), job.backend, store,
                        no_replay=True)


def reproduce_sizes(claim: Claim, check, sizes: Sequence[int]) -> list[int]:
    """The sizes a reproduction needs: all of the run's for a fitted check (its fit and
    Bonferroni divisor depend on every size); for an exact check, which fails on one
    replicate, those up to the failing size, but never fewer than the claim needs to run
    (:attr:`Check.minimum_sizes` of its asserted checks: the command line's minimum)."""
    sizes = sorted(sizes)
    if check.kind not in ("exact", "matching") or check.failing_size is None:
        return sizes
    need = min([c.minimum_sizes for c in claim.checks if c.asserted], default=1)
    upto = [s for s in sizes if s <= check.failing_size]
    return sizes[:max(len(upto), need)]


def perturbations(opts: RunOptions) -> list[str]:
    """The run's perturbations as command-line arguments (``--perturb 0.05``,
    ``--perturb kappa=0.05``, ``--perturb-parameter s1:s2=2``); empty for a plain run."""
    out = [f"--perturb {opts.perturb!r}"] if opts.perturb else []
    out += [f"--perturb {k}={v!r}" for k, v in sorted(opts.perturb_predictions.items())]
    out += [f"--perturb-parameter {k}:{p}={f!r}"
            for k, d in sorted(opts.perturb_parameters.items()) for p, f in sorted(d.items())]
    return out


def require_stored(store: Store, run: RunPlan) -> None:
    """A perturbed run judges stored samples only: every job of the run must be in the
    store, else a :class:`~verification.claims.inputs.UsageError` naming ``--perturb``,
    the claim and sizes missing and the command that samples them (exit 2)."""
    from gapverify.verification.claims.inputs import UsageError

    version = code_version()
    lacking = []
    for claim in run.claims:
        jobs = run.jobs_of(claim.id)
        prof = run.profiles[claim.id]
        missing = [t for job in jobs
                   for t in plan(store, claim.experiment, job.sampling, prof.sizes,
                                 prof.replicates, job.seed, version)]
        if missing:
            total = prof.replicates * len(prof.sizes) * len(jobs)
            lacking.append(f"{len(missing)} of {total} sample(s) of {claim.id} (T = "
                           f"{', '.join(map(str, sorted({t.T for t in missing})))})")
    if lacking:
        opts = run.jobs[0].options
        raise UsageError(
            f"parameter '{perturbations(opts)[0].split(' ')[0]}': a perturbed run judges the "
            f"stored samples of the statement as stated and samples nothing, but {store.path} "
            f"lacks {'; '.join(lacking)} (root seed {opts.seed}, code version {version}); "
            f"sample them first: {_sample_command(run, store.path)}")


def _sample_command(run: RunPlan, store: str) -> str:
    """The command that samples what a perturbed run lacks: the run as stated."""
    opts = dataclasses.replace(run.jobs[0].options, perturb=0.0, perturb_predictions={},
                               perturb_parameters={})
    ids = [c.id for c in run.claims]
    if len({(p.sizes, p.replicates) for p in run.profiles.values()}) > 1:
        return _run_command(opts, ids, None, run.backend, store)
    return _run_command(opts, ids, run.profiles[ids[0]], run.backend, store)


def _run_command(opts: RunOptions, claims: Sequence[str], prof: Profile | None, backend: dict,
                 store: str | None, no_replay: bool = False) -> str:
    """The ``gapverify run`` command of ``opts`` for ``claims`` at ``prof``'s sizes and
    replicates (``None``: the run's ``--sizes`` and ``--replicates``, if given), with the
    ``backend`` keys of its plan."""
    from gapverify.verification.running.defaults import default_store

    parts = ["gapverify", "run", *claims, *claim_files_arguments(claims), "--profile",
             opts.profile]
    if prof is not None:
        parts += ["--sizes", ",".join(map(str, prof.sizes)), "--replicates", str(prof.replicates)]
    parts += ["--seed", str(opts.seed)]
    if prof is None:
        parts += (["--sizes", ",".join(map(str, opts.sizes))] if opts.sizes else []) + \
            (["--replicates", str(opts.replicates)] if opts.replicates else [])
    if opts.entries is not None:
        parts += ["--entries", opts.entries]
    for k, v in sorted(opts.overrides.items()):
        parts += ["--set", f"{k}={v!r}"]
    for arg in perturbations(opts):
        parts += arg.split(" ", 1)
    if opts.level != DEFAULT_LEVEL:
        parts += ["--level", repr(opts.level)]
    for k, v in backend.items():
        parts += [f"--{k}", str(v)]
    if store and store != ":memory:" and store != default_store():
        parts += ["--store", store]
    if no_replay:
        parts.append("--no-replay")
    return shlex.join(parts)


def claim_files_arguments(claims: Sequence[str]) -> list[str]:
    """``--claims-from PATH`` for each claim file that ``claims`` come from (once each,
    in order): a command naming a claim file's claim must load it, whether the run had it
    from ``--claims-from`` or from ``$GAPVERIFY_CLAIMS`` (a file named by both is loaded
    once). Built-in claims and installed plug-ins' need none."""
    from gapverify.verification.claims.registry import REGISTRY

    files = dict.fromkeys(REGISTRY.source(c) for c in REGISTRY.file_ids(claims))
    return [arg for path in files for arg in ("--claims-from", path)]


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
        for future in futures.values():
            future.cancel()
        try:
            store.release(owner)
        except Exception:  # noqa: BLE001 - the store may be what failed; leases then expire
            pass
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
    tasks = plan(store, claim.experiment, params, profile.sizes, profile.replicates, seed, version)
    if progress and tasks:
        progress.start(claim.id, len(tasks), profile.replicates * len(profile.sizes), tasks=tasks)
    engine.check_memory(tasks)
    probed = probe(store, [(claim, values or params, tasks)], engine, progress)
    tasks = [t for t in tasks if t not in probed]
    sweep(store, tasks, engine.executor, on_done=(progress.advance if progress and tasks else None),
          in_flight=engine.in_flight, threads=engine.threads)
    return store.load(claim.experiment, params_key(params), seed, version, profile.sizes,
                      profile.replicates)


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
                 predictions: dict | None = None) -> ClaimResult:
    """Judge one job on what the store holds for it (nothing is sampled): a pool worker
    runs this for the run's jobs in parallel, opening the store read-only; the job's
    claim is rebuilt there by :func:`run_claim` (:class:`~verification.running.options.Job`
    pickles as its recipe). ``predictions``: the predicted values worked out already."""
    store = Store(store_path, readonly=True)
    try:
        data = store.load(job.claim.experiment, params_key(job.sampling), job.seed, version,
                          job.profile.sizes, job.profile.replicates)
    finally:
        store.close()
    return _judged(job, data, job.seed, predictions, measure=True)


def _judged(job: Job, data: dict, seed: int, predictions: dict | None,
            measure: bool) -> ClaimResult:
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
                           predictions=predictions)
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


def sample_all(store: Store, run: RunPlan, seed: int, engine: Engine, progress=None) -> int:
    """Sample what the store lacks for every job of ``run`` in one sweep, so the workers
    stay busy across claims (largest tasks first, :func:`sweep`); the memory estimate is
    checked before anything is sampled. Returns the tasks computed."""
    version = code_version()
    tasks, total, cases = [], 0, []
    for job in run.jobs:
        prof = job.profile
        mine = plan(store, job.claim.experiment, job.sampling, prof.sizes, prof.replicates,
                    seed, version)
        cases.append((job.claim, job.values, mine))
        tasks += mine
        total += prof.replicates * len(prof.sizes)
    stored = total - len(tasks)  # found in the store (before claims share tasks)
    tasks = list(dict.fromkeys(tasks))  # claims sharing an experiment share its tasks
    total = len(tasks) + stored  # a task two claims share is one task, not one reused
    engine.check_memory(tasks)
    if progress and tasks:
        progress.start(f"{len(run.claims)} claim(s)", len(tasks), total, tasks=tasks)
    # the first replicate of each case of a claim file's claim, run and checked first
    probed = probe(store, cases, engine, progress)
    tasks = [t for t in tasks if t not in probed]
    try:
        return len(probed) + sweep(store, tasks, engine.executor, in_flight=engine.in_flight,
                                   threads=engine.threads,
                                   on_done=(progress.advance if progress and tasks else None))
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


def _judge_in_pool(store: Store, run: RunPlan, engine: Engine,
                   predictions: dict) -> dict[tuple[str, int], ClaimResult]:
    """Judge every job of the run in the local process pool's workers, each opening the
    store read-only (:func:`judge_stored`): the sympy, quadrature and fitting work of
    judging runs on every core instead of after the sweep on one. ``{}`` (judge here, one
    job after another) with one worker, a Dask cluster (whose workers may not see this
    store) or an in-memory store. Keyed by claim and case."""
    if (not isinstance(engine.executor, ProcessPoolExecutor) or store.path == ":memory:"
            or engine.slots < 2):
        return {}
    version = code_version()
    futures = {(job.claim_id, job.case): engine.executor.submit(
        judge_stored, store.path, job, version, _memo_of(job, predictions)) for job in run.jobs}
    return {key: f.result() for key, f in futures.items()}


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
               predictions: dict | None = None) -> list[ClaimResult]:
    """Judge every job of ``run`` (in the pool when it can, :func:`_judge_in_pool`) and
    merge each claim's cases into one result (:func:`_merge`). ``predictions``: the
    predicted values worked out already (:func:`check_cases`), shared by every case and
    claim of the run."""
    predictions = {} if predictions is None else predictions
    judged = _judge_in_pool(store, run, engine, predictions)
    results = []
    for claim in run.claims:
        jobs = run.jobs_of(claim.id)
        parts = [(job.values, _judge_case(job, store, engine, progress, predictions,
                                          judged.get((job.claim_id, job.case))))
                 for job in jobs]
        merged = _merge(claim, parts)
        merged.level, merged.tests = jobs[0].options.level, run.tests[claim.id]
        merged.experiment = _experiment(claim, run)
        results.append(merged)
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
    claim. Everything is sampled first, in one sweep (:func:`sample_all`), then judged.
    A perturbed run samples nothing: a wrong statement is judged on the stored samples of
    the right one (:func:`require_stored`), and never replayed."""
    run = plan_run(opts)  # bad input (a wrong parameter outside its domain too): here
    predictions = check_cases(run)  # a claim's code that fails at a case: here too
    if perturbations(opts):
        require_stored(store, run)
    own = executor is None
    engine = make_engine(opts.workers, opts.scheduler) if own else _engine(executor)
    aborted = True
    try:
        sample_all(store, run, opts.seed, engine, progress)
        results = _judge_all(store, run, engine, progress, predictions)
        aborted = False
    finally:
        if own:
            engine.close(abort=aborted)
    return results


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
