"""The commands a run prints: the one that reproduces a failure (:func:`reproduce_command`)
and the one that samples what a perturbed run lacks (:func:`require_stored`), with the
claim files a command must load (:func:`claim_files_arguments`)."""
from __future__ import annotations

import dataclasses
import shlex
from typing import Sequence

from gapverify.verification.claims.model import Claim, Profile
from gapverify.verification.judging.verdict import DEFAULT_LEVEL
from gapverify.verification.running.options import Job, RunOptions, RunPlan
from gapverify.verification.running.planning import perturbations
from gapverify.verification.running.runner import plan
from gapverify.verification.running.store import Store, code_version

__all__ = ["reproduce_command", "reproduce_sizes", "require_stored", "claim_files_arguments"]


def reproduce_command(job: Job, sizes: Sequence[int], store: str | None = None) -> str:
    """The command that reproduces a failure of ``job``'s claim: the claim alone (its
    verdict does not depend on the other claims: its family is its own checks) at
    ``sizes`` and the job's replicates, with the run's profile, root seed, ``--set``,
    ``--entries``, perturbations, level and backend, ``--store`` when not the default,
    and ``--no-replay`` (the failure itself, not its replay)."""
    prof = job.profile
    if prof.self_sizing and tuple(sizes) == tuple(prof.sizes):
        # the same profile, sizes and seed repeat the same rounds (verification.running.rounds)
        return _run_command(job.options, [job.claim_id], Profile(tuple(sizes), None, 0.0),
                            job.backend, store, no_replay=True)
    if prof.self_sizing:  # fewer sizes: the most replicates drawn at them, fixed
        drawn = prof.per_size()
        fixed = max(drawn.get(T, prof.minimum) for T in sizes)
    else:
        fixed = prof.replicates
    return _run_command(job.options, [job.claim_id], Profile(tuple(sizes), fixed, 0.0),
                        job.backend, store, no_replay=True)


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


def require_stored(store: Store, run: RunPlan) -> None:
    """A perturbed run judges stored samples only: every job of the run must be in the
    store, else a :class:`~verification.claims.inputs.UsageError` naming ``--perturb``,
    the claim and sizes missing and the command that samples them (exit 2)."""
    from gapverify.verification.claims.inputs import UsageError

    version = code_version()
    lacking = []
    for claim in run.claims:
        jobs = run.jobs_of(claim.id)
        missing = [t for job in jobs
                   for t in plan(store, claim.experiment, job.sampling, job.profile.sizes,
                                 job.profile.per_size(), job.seed, version)]
        if missing:
            total = sum(sum(job.profile.per_size().values()) for job in jobs)
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
    if len({(p.sizes, p.replicates) for p in run.profiles.values()}) > 1 or any(
            p.self_sizing for p in run.profiles.values()):
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
        parts += ["--sizes", ",".join(map(str, prof.sizes))]
        if prof.replicates is not None:
            parts += ["--replicates", str(prof.replicates)]
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
