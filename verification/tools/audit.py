r"""``gapverify audit``: can the samples tell each prediction from a wrong version of it?

A verification that passes every statement proves nothing. For each case of each claim
the audit samples once, through the same machinery and store as ``gapverify run`` (same
sizes, replicates, parameters and root seed give the same stored samples), judges the
statement as stated (it must be verified: pass, with power) and then makes *each
prediction wrong on its own*, everything else unchanged, and judges the same
measurements again (:func:`verification.judging.verdict.judge_claim`, no resampling):

``NAME x(1+e)``, ``NAME x(1-e)``
    the predicted limit (a law's scale, an exact value) off by the profile's power target
    ``e`` (5% quick, 3% standard; :data:`verification.claims.POWER_TARGETS`); for a
    prediction equal to 0, ``+-e`` times its check's ``zero_scale``;
``NAME @ PARAM x1.25``, ``NAME @ PARAM x0.8``
    the prediction evaluated at a wrong value of one parameter of the claim (integers
    rounded, moved at least by one; a value outside the parameter's domain is skipped).
    A wrong value that leaves the prediction unchanged is *not applicable*: the
    prediction does not depend on that parameter (kappa is free of ``mu``; stable ranks
    are free of ``sigma_V``);
``NAME rate +0.5``
    the stated rate of the prediction's rated checks 0.5 faster. A stated rate is a lower
    bound ("decays at least like"), so this variant is wrong only if the error really
    decays slower than stated + 0.5; not rejecting it means the rate assertion has no
    power against a slowdown of 0.5 (a sharper rate, or more sizes, is the fix).

Outcome. A variant is *rejected* when a check of that prediction fails on it (a check
that fails as stated does not count). The audit fails (exit 1) when the statement as
stated is not verified, or when a theorem, derived or conjecture prediction does not
reject one of its applicable variants, at any case where its checks are judged. A
prediction whose checks are outside their domain at a case (the edge at heavy tails) is
audited at the cases that judge it; one that no case judges fails the audit. Empirical
predictions are audited and reported, and never fail it.

It also prints each check's *power* per case: the smallest relative error of its
prediction that the samples reject on both sides, measured by bisection on the judging
(:func:`verification.judging.verdict.measure_power`).

Every variant is judged with the claim's quantile ``q`` (the Bonferroni split of the
false-alarm level over that claim's tests, as ``gapverify run`` uses).

Output (:mod:`gapverify.cli.audit`): a table per claim and case (prediction,
status, checks and their power, the limit, parameter and rate variants, outcome), a
summary; ``--json PATH`` writes the same as data. Exit 0 when every claim passes, 1 otherwise, 2 on bad input.
"""
from __future__ import annotations

import dataclasses

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from gapverify.verification.claims.model import POWER_TARGETS, Claim
from gapverify.verification.judging.outcomes import Outcome
from gapverify.verification.judging.resolution import widened_interval
from gapverify.verification.running.defaults import DEFAULT_SEED
from gapverify.verification.judging.verdict import (
    DEFAULT_LEVEL, VERIFYING_STATUSES, ClaimResult, Variant, judge_claim, PARAMETER_FACTORS,
    RATE_SHIFT, wrong_values,
)

__all__ = ["PARAMETER_FACTORS", "RATE_SHIFT", "AuditOptions", "Probe", "VariantOutcome",
           "PredictionAudit", "ClaimAudit", "AuditReport", "probes", "audit_claim", "audit",
           "plan", "wrong_values"]


@dataclass
class AuditOptions:
    claims: Sequence[str]
    profile: str = "quick"
    sizes: Sequence[int] | None = None
    replicates: int | None = None
    seed: int = DEFAULT_SEED
    workers: int = 1
    level: float = DEFAULT_LEVEL
    entries: str | None = None  # --entries: the law of the Markov entries
    scheduler: str | None = None  # --scheduler: a Dask cluster


@dataclass(frozen=True)
class Probe:
    """A wrong version of one prediction: ``role`` is ``limit``, ``parameter`` or ``rate``."""

    variant: Variant
    role: str
    prediction: str
    description: str
    parameter: str = ""  # parameter variants: which parameter, and "up" or "down"
    direction: str = ""


@dataclass
class VariantOutcome:
    variant: str
    role: str
    description: str
    outcome: str  # rejected / rejected at another case / NOT REJECTED / not applicable
    ok: bool
    rejected_by: list[str] = field(default_factory=list)  # "label (how)"
    note: str = ""
    parameter: str = ""
    direction: str = ""


@dataclass
class PredictionAudit:
    prediction: str
    status: str
    judged: bool  # some check of it is judged at this case
    powers: dict[str, float | None]  # check label -> power (relative error rejected)
    outcomes: list[VariantOutcome]
    note: str = ""

    @property
    def required(self) -> bool:
        return self.status in VERIFYING_STATUSES

    @property
    def ok(self) -> bool:
        return not self.required or all(o.ok for o in self.outcomes)


@dataclass
class ClaimAudit:
    claim: str
    status: str
    sizes: list[int]
    replicates: int
    perturbation: float
    truth: Outcome  # the verdict as stated
    truth_note: str
    predictions: list[PredictionAudit]
    case: dict = field(default_factory=dict)  # the parameters telling this case apart
    parameters: dict = field(default_factory=dict)
    q: float = 0.0
    #: not verified here only because a prediction is outside its checks' domain
    truth_unjudged_only: bool = False

    @property
    def name(self) -> str:
        case = ", ".join(f"{k}={v:g}" for k, v in self.case.items())
        return f"{self.claim} [{case}]" if case else self.claim

    @property
    def truth_ok(self) -> bool:
        """The statement as stated holds at this case: nothing judged here failed or lacks
        power (a prediction outside its checks' domain here is audited at other cases; a
        claim that asserts nothing is recorded, and has nothing to audit)."""
        return self.truth in (Outcome.PASS, Outcome.RECORDED) or self.truth_unjudged_only

    @property
    def ok(self) -> bool:
        return self.truth_ok and all(p.ok for p in self.predictions)

    @property
    def verdict(self) -> str:
        return "powered" if self.ok else "FAILED"


@dataclass
class AuditReport:
    claims: list[ClaimAudit]
    level: float
    seed: int
    profile: str
    perturbation: float
    unjudged: list[str] = field(default_factory=list)  # "claim: prediction" judged at no case

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.claims) and not self.unjudged


# --- the variants -------------------------------------------------------------------------

def probes(claim: Claim, params: Mapping[str, float], eps: float) -> list[Probe]:
    """Every wrong version of every prediction that the audit judges (one at a time)."""
    out = []
    values = claim.predict_numbers(params)
    for pred in claim.predictions:
        if not pred.asserted:
            continue
        name = pred.name
        zero = [c.zero_scale(params) for c in claim.checks
                if c.prediction == name and c.zero_scale is not None]
        if values[name] == 0.0 and zero:
            # a prediction equal to 0: moved by +-e times its check's stated scale
            for sign in (1, -1):
                off = sign * eps * zero[0]
                out.append(Probe(Variant(name=f"{name} {off:+g}", offsets={name: off}), "limit",
                                 name, f"{name} = {off:+g} ({eps:g} x the scale {zero[0]:g})"))
        else:
            for s in (1 + eps, 1 - eps):
                out.append(Probe(Variant(name=f"{name} x{s:g}", scales={name: s}), "limit", name,
                                 f"{name} times {s:g}"))
        for par in claim.parameters:
            if par in claim.fixed_parameters:
                continue
            for wrong in wrong_values(par, params[par]):
                factor = wrong / params[par] if params[par] else None
                label = f"{par} x{factor:.3g}" if factor else f"{par} = {wrong:g}"
                out.append(Probe(Variant(name=f"{name} @ {label}",
                                         prediction_parameters={name: {par: wrong}}),
                                 "parameter", name, f"{name} at {par}={wrong:g} (sampled at {params[par]:g})",
                                 par, "up" if wrong > params[par] else "down"))
        if any(c.prediction == name and c.rate is not None and c.asserted and c.applies(params)
               and c.kind in ("limit", "distance") for c in claim.checks):
            out.append(Probe(Variant(name=f"{name} rate +{RATE_SHIFT:g}", rate_shifts={name: RATE_SHIFT}),
                             "rate", name, f"the stated rate of {name} {RATE_SHIFT:g} faster"))
    return out


def _changes(claim: Claim, params: Mapping[str, float], probe: Probe,
             truth_values: Mapping[str, float]) -> bool:
    """Whether ``probe`` changes what a check of its prediction is judged against
    (``truth_values``: the claim's predictions at ``params``)."""
    if probe.role != "parameter":
        return True
    name = probe.prediction
    truth = truth_values[name]
    wrong_params = probe.variant.theory_parameters(name, params)
    wrong = claim.predict_numbers(wrong_params)[name]
    rates = [(c.rate_at(params), c.rate_at(wrong_params))
             for c in claim.checks if c.prediction == name and c.rate is not None]
    # a stated rate is a lower bound: a wrong parameter that only makes it slower states
    # something weaker, not something false
    return (not math.isclose(truth, wrong, rel_tol=1e-12, abs_tol=1e-300)
            or any(b > a and not math.isclose(a, b) for a, b in rates))


# --- judging ------------------------------------------------------------------------------

def _how(check_result, q: float) -> str:
    """Which test of a failed check rejected: tolerance, interval, limit and/or rate."""
    c = check_result
    if c.kind in ("exact", "matching") or c.power_class == "exact":
        return "tolerance"
    if c.limit_interval is not None:
        return "interval"
    parts = []
    if c.limit_hat is not None and c.limit_se is not None:
        target = 0.0 if c.kind == "distance" else c.predicted
        miss = (c.limit_hat > q * c.limit_se if c.kind == "distance"
                else abs(c.limit_hat - target) > max(q * c.limit_se, c.resolution or 0.0))
        if miss:
            parts.append("limit")
    if c.beta is not None and c.rate is not None and c.beta + q * c.beta_se < c.rate:
        parts.append("rate")
    return "+".join(parts) or "fit"


def _evidence(result: ClaimResult, labels: set[str]) -> str:
    """Why the checks passed a wrong variant: their fits against its values."""
    parts = []
    for c in result.checks:
        if c.label not in labels:
            continue
        if c.limit_interval is not None:
            low, high = widened_interval(*c.limit_interval, c.limit_hat, c.resolution)
            parts.append(f"{c.label}: {c.predicted:.4g} inside [{low:.4g}, {high:.4g}]")
        elif c.beta is not None and c.limit_hat is not None:
            parts.append(f"{c.label}: fitted rate {c.beta:.2f}±{c.beta_se:.2f} (q se = "
                         f"{result.q * c.beta_se:.2f}) vs stated {c.rate:.3g}; limit "
                         f"{c.limit_hat:.4g}±{c.limit_se:.2g} vs {c.predicted:.4g}")
        else:
            parts.append(f"{c.label}: {c.verdict}")
    return "; ".join(parts)


def audit_claim(claim: Claim, data, params: Mapping[str, float], *, q: float, root_seed: int,
                eps: float, power_target: float | None = None) -> ClaimAudit:
    """Judge ``data`` as stated (with power) and against each prediction's wrong variants."""
    predictions: dict = {}  # predicted values, shared by the truth and every probe
    truth = judge_claim(claim, data, params, q=q, root_seed=root_seed,
                        power_target=eps if power_target is None else power_target, measure=True,
                        # wrong parameters: the parameter variants below, over all cases
                        parameter_coverage=False, predictions=predictions)
    failing = {c.label for c in truth.failed}
    by_prediction: dict[str, list] = {}
    for c in truth.checks:
        by_prediction.setdefault(c.prediction, []).append(c)
    all_probes = probes(claim, params, eps)
    truth_values = claim.predict_numbers(params)
    audits = []
    for pred in claim.predictions:
        if not pred.asserted:
            continue
        mine = by_prediction.get(pred.name, [])
        judged = [c for c in mine if c.verdict not in (Outcome.OUTSIDE_DOMAIN, Outcome.RECORDED)]
        # a prediction with checks on complementary domains: the powers of those judged here
        powers = {c.label: c.power for c in (judged or mine)}
        if not judged:
            why = "; ".join(sorted({c.reason for c in mine})) or "no check measures it"
            audits.append(PredictionAudit(pred.name, pred.status, False, powers, [],
                                          note=f"not judged at this case: {why}"))
            continue
        labels = {c.label for c in judged}
        exact_here = all(c.power_class == "exact" for c in judged)
        outcomes = []
        for probe in (p for p in all_probes if p.prediction == pred.name):
            base = dict(variant=probe.variant.name, role=probe.role, description=probe.description,
                        parameter=probe.parameter, direction=probe.direction)
            if probe.role == "rate" and exact_here:
                outcomes.append(VariantOutcome(**base, outcome="not applicable", ok=True,
                                               note=f"{pred.name} is exact here (round-off): no rate"))
                continue
            if not _changes(claim, params, probe, truth_values):
                outcomes.append(VariantOutcome(**base, outcome="not applicable", ok=True,
                                               note=f"{pred.name} does not depend on it"))
                continue
            # judged by the truth's rule: at the same resolution (power_target), no power
            res = judge_claim(claim, data, params, q=q, root_seed=root_seed,
                              variant=probe.variant, measure=False, only=(pred.name,),
                              predictions=predictions,
                              power_target=eps if power_target is None else power_target)
            rejected = [f"{c.label} ({_how(c, q)})" for c in res.failed
                        if c.label in labels and c.label not in failing]
            if rejected:
                outcomes.append(VariantOutcome(**base, outcome="rejected", ok=True,
                                               rejected_by=rejected))
            else:
                outcomes.append(VariantOutcome(**base, outcome="NOT REJECTED",
                                               ok=pred.status not in VERIFYING_STATUSES,
                                               note=_evidence(res, labels)))
        audits.append(PredictionAudit(pred.name, pred.status, True, powers, outcomes))
    notes = [f"{c.label}: {c.reason}" for c in truth.checks
             if c.verdict in (Outcome.FAIL, Outcome.LACKS_POWER)]
    notes += truth.unverified
    unjudged_only = truth.verdict == Outcome.NOT_VERIFIED and not any(
        c.verdict in (Outcome.FAIL, Outcome.LACKS_POWER, Outcome.NOT_ASSESSED)
        for c in truth.checks)
    return ClaimAudit(claim=claim.id, status=claim.status, sizes=sorted(data),
                      replicates=min(len(v) for v in data.values()), perturbation=eps,
                      truth=truth.verdict, truth_note="; ".join(dict.fromkeys(notes)),
                      predictions=audits, parameters=dict(params), q=q,
                      truth_unjudged_only=unjudged_only)


def _parameters_over_cases(cases: list[ClaimAudit]) -> None:
    """A wrong parameter value is a wrong statement of the claim, judged at every case: it
    is rejected when some case rejects it. A prediction flat in ``mu`` at ``mu = 0`` and
    steep at ``mu = 1.5`` cannot see ``mu = 0.25`` at the first case; the wrong statement
    still fails, at the second. Marks such outcomes ok, naming the case that rejects."""
    rejecting: dict[tuple, str] = {}
    for a in cases:
        for p in a.predictions:
            for o in p.outcomes:
                if o.role == "parameter" and o.outcome == "rejected":
                    rejecting.setdefault((p.prediction, o.parameter, o.direction), a.name)
    for a in cases:
        for p in a.predictions:
            for o in p.outcomes:
                where = rejecting.get((p.prediction, o.parameter, o.direction))
                if o.role == "parameter" and o.outcome == "NOT REJECTED" and where:
                    o.outcome, o.ok = "rejected at another case", True
                    o.note = f"the same wrong {o.parameter} ({o.direction}) is rejected at {where}; " + o.note


def _varying(claim: Claim, cases: list[dict]) -> list[str]:
    return [k for k in claim.parameters if len({str(c[k]) for c in cases}) > 1]


def plan(opts: AuditOptions):
    """Claims, profiles, cases, tests and quantiles: the plan of the equivalent run
    (:func:`verification.running.suite.plan_run`), so the audit reports the power of that run."""
    from gapverify.verification.running.suite import RunOptions, plan_run

    return plan_run(RunOptions(claims=list(opts.claims), profile=opts.profile,
                               sizes=opts.sizes, replicates=opts.replicates, seed=opts.seed,
                               workers=opts.workers, level=opts.level, entries=opts.entries))


def audit(opts: AuditOptions, store, executor=None, progress=None) -> AuditReport:
    """Sample (or reuse) every case of every selected claim once, in one sweep
    (:func:`verification.running.suite.sample_sized`: the rounds of the run, so the audit
    judges the draws the run judges), and audit it."""
    from gapverify.verification.running.executors import make_engine
    from gapverify.verification.running.suite import _engine, sample, sample_sized

    run = plan(opts)
    eps = POWER_TARGETS.get(opts.profile, POWER_TARGETS["quick"])
    own = executor is None
    engine = make_engine(opts.workers, opts.scheduler) if own else _engine(executor)
    audits, unjudged = [], []
    aborted = True
    try:
        run = sample_sized(store, run, engine, progress)[0]  # the run's own draws
        for claim in run.claims:
            varying = _varying(claim, run.cases[claim.id])
            mine = []
            for job in run.jobs_of(claim.id):
                params = job.values
                data = sample(store, claim, params, job.profile, opts.seed, engine)
                result = audit_claim(claim, data, params, q=run.q[claim.id], root_seed=opts.seed,
                                     eps=eps, power_target=run.profiles[claim.id].power)
                result.case = {k: params[k] for k in varying}
                mine.append(result)
            _parameters_over_cases(mine)
            audits += mine
            for pred in claim.predictions:
                if pred.asserted and pred.status in VERIFYING_STATUSES and not any(
                        p.judged for a in mine for p in a.predictions if p.prediction == pred.name):
                    unjudged.append(f"{claim.id}: {pred.name}")
        aborted = False
    finally:
        if own:
            engine.close(abort=aborted)
    return AuditReport(audits, opts.level, opts.seed, opts.profile, eps, unjudged)




def report_json(report: AuditReport) -> dict:
    return {"level": report.level, "level_is_per_claim": True, "root_seed": report.seed,
            "profile": report.profile, "perturbation": report.perturbation,
            "parameter_factors": list(PARAMETER_FACTORS), "rate_shift": RATE_SHIFT,
            "ok": report.ok, "unjudged": report.unjudged,
            "claims": [dict(dataclasses.asdict(a), name=a.name, verdict=a.verdict)
                       for a in report.claims]}
