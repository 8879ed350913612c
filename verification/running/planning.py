"""A run's plan: one :class:`~verification.running.options.Job` per claim and case, worked
out once from the options (:func:`plan_run`), and the statement it judges
(:func:`run_variant`, :func:`perturbations`)."""
from __future__ import annotations

import dataclasses
from typing import Mapping, Sequence

from gapverify.verification.claims.model import Claim, Profile
from gapverify.verification.judging.inference import two_sided_quantile
from gapverify.verification.judging.verdict import Variant, count_tests
from gapverify.verification.running.claim_errors import check_case
from gapverify.verification.running.options import Job, RunOptions, RunPlan, run_claim
from gapverify.verification.running.sampling_inputs import (
    _law_cases, _sampling, backend_keys, case_overrides, entry_law_of, select_entry_claims,
)

__all__ = ["plan_run", "claim_tests", "run_variant", "perturbations"]


def _profile(claim: Claim, opts: RunOptions) -> Profile:
    base = claim.profiles[opts.profile]
    return Profile(tuple(sorted(opts.sizes)) if opts.sizes else base.sizes,
                   opts.replicates or base.replicates, base.power, minimum=base.minimum,
                   budget=base.budget)


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


def perturbations(opts: RunOptions) -> list[str]:
    """The run's perturbations as command-line arguments (``--perturb 0.05``,
    ``--perturb kappa=0.05``, ``--perturb-parameter s1:s2=2``); empty for a plain run."""
    out = [f"--perturb {opts.perturb!r}"] if opts.perturb else []
    out += [f"--perturb {k}={v!r}" for k, v in sorted(opts.perturb_predictions.items())]
    out += [f"--perturb-parameter {k}:{p}={f!r}"
            for k, d in sorted(opts.perturb_parameters.items()) for p, f in sorted(d.items())]
    return out
