r"""``gapverify audit``: can the suite tell a claim from a wrong version of it?

A verification that passes every statement proves nothing. For each claim the audit
samples once, through the same machinery and store as ``gapverify run`` (same sizes,
replicates, parameters and root seed give the same stored samples), and judges those
measurements (:func:`verification.verdict.judge_claim`, no resampling) against:

``as stated``
    the claim itself. It must pass: an audit that rejects the truth shows nothing.
``limit x1.03``, ``limit x0.97``
    every predicted limit (a law's scale, an exact value, a predicted spectrum) off by
    3 percent in each direction (:data:`PERTURBATION`). Three percent: small against
    what a wrong formula does (a factor 2, a missing ``1 +``, ``e`` for ``e - 1``), large
    against the extrapolation error of a rated check at the quick profile. All limits
    move together, so one check rejecting suffices; the checks that never reject are
    listed (below).
``<p> x1.25``
    the theory evaluated at a wrong value of one parameter the claim takes (``s2 x1.25``;
    ``x0.8`` when ``x1.25`` leaves the domain, e.g. ``gamma = 1``; integers ``x1.25``
    rounded, at least ``+1``). A variant that changes no value any check is judged
    against (``mu``: kappa is free of it; ``sigma_V``: stable ranks are scale-free) is
    *not applicable* and skipped.
``rate +0.5``
    every stated rate 0.5 faster (claims with rated checks only). A stated rate is a
    lower bound ("decays at least like"), so this variant is wrong only if the error
    really decays slower than stated + 0.5. Not rejecting it means either the fit is too
    noisy at this profile (the rate is not measured) or the stated rate is conservative by
    more than 0.5 (the check would miss a real slowdown of that size); the report tells
    which from the fitted exponent. Either way the rate assertion has no power against
    the shift, and the audit fails (the fix is in the registry: a sharper rate, or more
    sizes and replicates).

A claim that sweeps several parameter cases (``Claim.cases``) is audited per case, on
that case's samples, with the wrong parameter values taken relative to the case.

Every variant is judged with the run's quantile: the Bonferroni split of the family-wise
false-alarm level over the statistical tests of the selected claims
(:func:`~verification.verdict.count_tests`, :func:`~verification.inference.two_sided_quantile`).
The variants are not extra tests of a true statement (only ``as stated`` can be a false
alarm); judging them with the run's ``q`` makes the audit report the power *of the run*.
A failing ``as stated`` is not replayed (``run`` replays once): the audit reports it.

No power (the decision)
-----------------------
Each check judged against a changed value is classed by what it can detect:

* *exact* (``exact``, ``matching``): a round-off tolerance; detects any real change;
* *rated* (``limit``/``distance`` with a rate): extrapolated limit and fitted rate;
* *consistency* (no rate): only "the error at the largest size is not significantly
  larger than at the smallest". It detects a wrong limit only on the far side of the
  pre-asymptotic approach and only when the error exceeds the finite-size bias left at
  the smallest size: by design it has little power against a few percent;
* *recorded* (``asserted=False``): shown, never judged; no power at all.

A variant not rejected is then

* ``NOT REJECTED`` (the audit fails) if it is ``limit x1.03``/``x0.97`` or ``rate +0.5``,
  whatever the checks: a claim that cannot tell its limits from ones 3 percent off, or
  its rate from a faster one, verifies nothing quantitative, be it because its checks
  are recorded only, consistency only, or have too few sizes to fit a rate;
* ``NOT REJECTED`` (fails) if it is a parameter variant that moves the value of an
  *exact* or *rated* check: those assert the value, and missed it;
* ``no power`` (reported, does not fail unless ``--strict``) if it is a parameter variant
  that only moves *consistency* or *recorded* checks. The registry declared those checks
  consistency-only and says why (``rate_note``, e.g. the slow log-normal edge); the
  audit makes the gap visible ("the gamma-dependence of sr(X1perp)/T is not verified to
  25 percent") instead of failing a documented choice.

Every claim also lists its asserted checks that rejected no variant at all (typically the
consistency-only edges): their values are not verified to within 3 percent. A check that
fails as stated is not counted as rejecting a variant.

Output: a rich table per claim (variant, what it changes, outcome, the rejecting checks
with the test that rejected: ``limit``, ``rate``, ``tolerance`` or ``consistency``; or the
fits that let a wrong variant pass), a summary per claim, the family-wise level and ``q``;
``--json PATH`` writes the same as data. Exit 0 when every claim passes, 1 otherwise,
2 on bad input.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from verification.claims import Check, Claim
from verification.verdict import DEFAULT_LEVEL, ClaimResult, Variant, judge_claim
from verification.runner import DEFAULT_SEED

__all__ = ["PERTURBATION", "PARAMETER_FACTOR", "RATE_SHIFT", "AuditOptions", "Probe",
           "VariantOutcome", "ClaimAudit", "AuditReport", "probes", "audit_claim", "audit", "plan",
           "power_class", "register", "COMMANDS"]

PERTURBATION = 0.03
PARAMETER_FACTOR = 1.25
RATE_SHIFT = 0.5


@dataclass
class AuditOptions:
    claims: Sequence[str]
    profile: str = "quick"
    sizes: Sequence[int] | None = None
    replicates: int | None = None
    seed: int = DEFAULT_SEED
    workers: int = 1
    level: float = DEFAULT_LEVEL
    strict: bool = False  # "no power" fails the audit too


@dataclass(frozen=True)
class Probe:
    """A variant and its role: ``truth``, ``limit``, ``parameter`` or ``rate``."""

    variant: Variant
    role: str
    description: str


@dataclass
class VariantOutcome:
    variant: str
    role: str
    description: str
    outcome: str  # passes / REJECTED / not assessed (truth); rejected / NOT REJECTED / no power / not applicable
    ok: bool
    exposed: list[str] = field(default_factory=list)  # checks judged against a changed value
    rejected_by: list[str] = field(default_factory=list)  # "label (how)"
    note: str = ""


@dataclass
class ClaimAudit:
    claim: str
    status: str
    sizes: list[int]
    replicates: int
    outcomes: list[VariantOutcome]
    silent_checks: list[str]  # asserted checks that rejected no variant
    unmeasured: list[str]  # predictions no check measures
    case: dict = field(default_factory=dict)  # the parameters telling this case apart

    @property
    def name(self) -> str:
        case = ", ".join(f"{k}={v:g}" for k, v in self.case.items())
        return f"{self.claim} [{case}]" if case else self.claim

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outcomes)

    @property
    def verdict(self) -> str:
        if not self.ok:
            return "FAILED"
        gaps = any(o.outcome == "no power" for o in self.outcomes)
        return "powered, with gaps" if gaps else "powered"


@dataclass
class AuditReport:
    claims: list[ClaimAudit]
    level: float
    tests: int
    q: float
    seed: int
    profile: str
    strict: bool

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.claims)


# --- the variants -------------------------------------------------------------------------

def power_class(check: Check) -> str:
    """``exact``, ``rated``, ``consistency`` or ``recorded`` (module docstring)."""
    if not check.asserted:
        return "recorded"
    if check.kind in ("exact", "matching"):
        return "exact"
    return "consistency" if check.rate is None else "rated"


def _rated(check: Check) -> bool:
    return check.rate is not None and check.kind in ("limit", "distance")


def wrong_value(name: str, value: float | int) -> float | int:
    """``value`` moved by :data:`PARAMETER_FACTOR` (or its inverse, to stay in the domain)."""
    from theory.parameters import PARAMETERS, ParameterError

    p = PARAMETERS[name]
    if p.integer:
        up = max(int(round(value * PARAMETER_FACTOR)), int(value) + 1)
        candidates = (up, int(value) - 1)
    else:
        candidates = ((value * PARAMETER_FACTOR, value / PARAMETER_FACTOR) if value
                      else (PARAMETER_FACTOR - 1, 1 - PARAMETER_FACTOR))
    for c in candidates:
        try:
            return p.validate(c)
        except ParameterError:
            continue
    raise ValueError(f"parameter '{name}': no wrong value near {value} in its domain")


def _parameter_probe(claim: Claim, name: str, value: float | int) -> Probe:
    wrong = wrong_value(name, value)
    factor = wrong / value if value else None
    label = f"{name} x{factor:.3g}" if factor else f"{name} = {wrong:g}"
    return Probe(Variant(name=label, parameters={name: wrong}), "parameter",
                 f"theory at {name}={wrong:g} (sampled at {value:g})")


def probes(claim: Claim, params: Mapping[str, float]) -> list[Probe]:
    """The statement as stated, then every wrong variant of it the audit judges."""
    out = [Probe(Variant(), "truth", "the claim as stated")]
    for s in (1 + PERTURBATION, 1 - PERTURBATION):
        out.append(Probe(Variant(name=f"limit x{s:g}", scale=s), "limit",
                         f"every predicted limit times {s:g}"))
    for name in claim.parameters:
        if name not in claim.fixed_parameters:
            out.append(_parameter_probe(claim, name, params[name]))
    if any(_rated(c) for c in claim.checks):
        out.append(Probe(Variant(name=f"rate +{RATE_SHIFT:g}", rate_shift=RATE_SHIFT), "rate",
                         f"every stated rate {RATE_SHIFT:g} faster"))
    return out


def _target(check: Check, predicted: Mapping[str, float], variant: Variant,
            params: Mapping[str, float]) -> tuple:
    """What ``check`` is judged against under ``variant`` (a law's value is its scale)."""
    if check.kind == "matching":
        return (variant.scale,)
    rate = check.rate_at(params) + variant.rate_shift if _rated(check) else None
    return (predicted[check.prediction] * variant.scale, rate)


def _differs(a: tuple, b: tuple) -> bool:
    return any((x is None) != (y is None) or (x is not None and not math.isclose(x, y, rel_tol=1e-12))
               for x, y in zip(a, b))


def exposed_checks(claim: Claim, params: Mapping[str, float], variant: Variant) -> list[Check]:
    """The checks judged against a different value (or rate) under ``variant``."""
    truth = claim.predict_numbers(params)
    theory = dict(params)
    theory.update(variant.parameters)
    changed = claim.predict_numbers(theory) if variant.parameters else truth
    return [c for c in claim.checks
            if _differs(_target(c, truth, Variant(), params), _target(c, changed, variant, theory))]


# --- judging ------------------------------------------------------------------------------

def _how(check_result, q: float) -> str:
    """Which test of a failed check rejected: tolerance, consistency, limit and/or rate."""
    c = check_result
    if c.kind in ("exact", "matching"):
        return "tolerance"
    if c.rate is None or c.beta is None:
        return "consistency"
    parts = []
    if c.limit_hat is not None:
        target = 0.0 if c.kind == "distance" else c.predicted
        miss = (c.limit_hat > q * c.limit_se if c.kind == "distance"
                else abs(c.limit_hat - target) > q * c.limit_se)
        if miss:
            parts.append("limit")
    if c.beta + q * c.beta_se < c.rate:
        parts.append("rate")
    return "+".join(parts) or "fit"


def _evidence(result: ClaimResult, labels: list[str], role: str) -> str:
    """Why the exposed checks passed a wrong variant: their fits against its values."""
    parts = []
    for c in result.checks:
        if c.label not in labels:
            continue
        if c.verdict != "pass":
            parts.append(f"{c.label}: {c.verdict}")
        elif role == "rate" and c.beta is not None:
            sharp = c.beta - result.q * c.beta_se >= c.rate
            why = (f"significantly above {c.rate:.3g} (the stated rate is conservative)" if sharp
                   else f"not significantly below {c.rate:.3g}")
            parts.append(f"{c.label}: fitted rate {c.beta:.2f}±{c.beta_se:.2f}, {why}")
        elif c.limit_hat is not None:
            parts.append(f"{c.label}: limit {c.limit_hat:.4g}±{c.limit_se:.2g} vs {c.predicted:.4g}")
        else:
            parts.append(f"{c.label}: {c.kind} check passed")
    return "; ".join(parts)


def _truth_outcome(probe: Probe, result: ClaimResult) -> VariantOutcome:
    word = {"pass": "passes", "fail": "REJECTED"}.get(result.verdict, result.verdict)
    failed = [f"{c.label}: {c.reason}" for c in result.failed]
    note = ("; ".join(failed) if failed else
            "" if result.verdict == "pass" else "no asserted check was judged")
    return VariantOutcome(probe.variant.name, probe.role, probe.description, word,
                          ok=result.verdict == "pass", note=note)


def _variant_outcome(probe: Probe, result: ClaimResult, exposed: list[Check], q: float,
                     strict: bool, failing_as_stated: set[str] = frozenset()) -> VariantOutcome:
    labels = [c.label for c in exposed]
    base = dict(variant=probe.variant.name, role=probe.role, description=probe.description,
                exposed=labels)
    if not exposed:
        return VariantOutcome(**base, outcome="not applicable", ok=True,
                              note="changes no value any check is judged against")
    rejected_by = [f"{c.label} ({_how(c, q)})" for c in result.failed
                   if c.label not in failing_as_stated]
    if rejected_by:
        return VariantOutcome(**base, outcome="rejected", ok=True, rejected_by=rejected_by)
    classes = sorted({power_class(c) for c in exposed})
    required = probe.role in ("limit", "rate") or any(k in ("exact", "rated") for k in classes)
    if required:
        return VariantOutcome(**base, outcome="NOT REJECTED", ok=False,
                              note=_evidence(result, labels, probe.role))
    return VariantOutcome(**base, outcome="no power", ok=not strict,
                          note=f"only {' and '.join(classes)} checks see it: {', '.join(labels)}")


def _silent_checks(claim: Claim, outcomes: list[VariantOutcome]) -> list[str]:
    rejecting = {r.split(" (")[0] for o in outcomes if o.role != "truth" for r in o.rejected_by}
    return [f"{c.label} ({power_class(c)})" for c in claim.checks
            if c.asserted and c.label not in rejecting]


def audit_claim(claim: Claim, data, params: Mapping[str, float], *, q: float, root_seed: int,
                strict: bool = False) -> ClaimAudit:
    """Judge ``data`` against the claim and each of its wrong variants."""
    outcomes, failing = [], set()
    for probe in probes(claim, params):
        result = judge_claim(claim, data, params, q=q, root_seed=root_seed, variant=probe.variant)
        if probe.role == "truth":
            outcomes.append(_truth_outcome(probe, result))
            failing = {c.label for c in result.failed}
            continue
        exposed = exposed_checks(claim, params, probe.variant)
        outcomes.append(_variant_outcome(probe, result, exposed, q, strict, failing))
    measured = {c.prediction for c in claim.checks}
    return ClaimAudit(claim=claim.id, status=claim.status, sizes=sorted(data),
                      replicates=min(len(v) for v in data.values()), outcomes=outcomes,
                      silent_checks=_silent_checks(claim, outcomes),
                      unmeasured=[p.name for p in claim.predictions if p.name not in measured])


def _varying(claim: Claim, cases: list[dict]) -> list[str]:
    return [k for k in claim.parameters if len({str(c[k]) for c in cases}) > 1]


def plan(opts: AuditOptions):
    """Claims, profiles, cases, test count and quantile: the plan of the equivalent run
    (:func:`verification.suite.plan_run`), so the audit reports the power of that run."""
    from verification.suite import RunOptions, plan_run

    run = plan_run(RunOptions(claims=list(opts.claims), profile=opts.profile,
                              sizes=opts.sizes, replicates=opts.replicates, seed=opts.seed,
                              workers=opts.workers, level=opts.level))
    return run.claims, run.profiles, run.cases, run.tests, run.q


def audit(opts: AuditOptions, store, executor=None, progress=None) -> AuditReport:
    """Sample (or reuse) every case of every selected claim once and audit it."""
    from verification.runner import default_executor
    from verification.suite import sample

    claims, profiles, cases, tests, q = plan(opts)
    own = executor is None
    executor = executor or default_executor(opts.workers)
    audits = []
    try:
        for claim in claims:
            varying = _varying(claim, cases[claim.id])
            for params in cases[claim.id]:
                data = sample(store, claim, params, profiles[claim.id], opts.seed, executor,
                              progress)
                result = audit_claim(claim, data, params, q=q, root_seed=opts.seed,
                                     strict=opts.strict)
                result.case = {k: params[k] for k in varying}
                audits.append(result)
    finally:
        if own:
            executor.shutdown(cancel_futures=True)
    return AuditReport(audits, opts.level, tests, q, opts.seed, opts.profile, opts.strict)


# --- output -------------------------------------------------------------------------------

def escape(text: str) -> str:
    from rich.markup import escape as _escape

    return _escape(text)


_STYLE = {"passes": "green", "rejected": "green", "not applicable": "dim",
          "no power": "yellow", "REJECTED": "bold red", "NOT REJECTED": "bold red"}


def _claim_table(a: ClaimAudit):
    from rich import box
    from rich.table import Table

    sizes = ", ".join(map(str, a.sizes))
    title = f"{a.name} ({a.status}): T = {sizes}; {a.replicates} replicates"
    t = Table(title=escape(title), box=box.SIMPLE_HEAVY, title_justify="left")
    for col in ("variant", "judged against", "outcome", "by / why"):
        t.add_column(col)
    for o in a.outcomes:
        why = ", ".join(o.rejected_by) if o.rejected_by else o.note
        style = _STYLE.get(o.outcome, "yellow")
        t.add_row(escape(o.variant), escape(o.description), f"[{style}]{o.outcome}[/]",
                  escape(why))
    return t


def _claim_summary(a: ClaimAudit) -> list[str]:
    style = {"FAILED": "bold red", "powered": "green"}.get(a.verdict, "yellow")
    lines = [f"{escape(a.name)}: [{style}]{a.verdict}[/]"]
    for o in a.outcomes:
        if not o.ok:
            lines.append(escape(f"  - {o.variant}: {o.outcome}" + (f" ({o.note})" if o.note else "")))
        elif o.outcome == "no power":
            lines.append(escape(f"  - no power for {o.variant}: {o.note}"))
    if a.silent_checks:
        lines.append(escape("  - checks that rejected no variant (values not verified to "
                            f"{PERTURBATION:.0%}): {', '.join(a.silent_checks)}"))
    if a.unmeasured:
        lines.append(escape(f"  - predictions no check measures: {', '.join(a.unmeasured)}"))
    return lines


def print_report(report: AuditReport) -> None:
    from verification.display import console

    for a in report.claims:
        console.print(_claim_table(a))
    for a in report.claims:
        for line in _claim_summary(a):
            console.print(line, highlight=False)
    console.print(
        f"Family-wise false-alarm level {report.level:g} over {report.tests} statistical tests "
        f"(Bonferroni): q = {report.q:.3f}, the quantile of `gapverify run` on these claims. "
        f"Every variant is judged with this q on the same measurements (root seed "
        f"{report.seed}, profile {report.profile}).", style="dim", highlight=False)
    word = "[green]PASSED[/]" if report.ok else "[bold red]FAILED[/]"
    console.print(f"audit {word}: the statement as stated passes and every applicable wrong "
                  "variant is rejected" if report.ok else
                  f"audit {word}: see the claims above", highlight=False)


def report_json(report: AuditReport) -> dict:
    return {"level": report.level, "tests": report.tests, "q": report.q,
            "root_seed": report.seed, "profile": report.profile, "strict": report.strict,
            "perturbation": PERTURBATION, "parameter_factor": PARAMETER_FACTOR,
            "rate_shift": RATE_SHIFT, "ok": report.ok,
            "claims": [dict(dataclasses.asdict(a), name=a.name, verdict=a.verdict)
                       for a in report.claims]}


# --- command line -------------------------------------------------------------------------

def _cmd_audit(args) -> int:
    from verification import display
    from verification.cli import _claims_arg
    from verification.store import Store

    claims = _claims_arg(args.claims)
    workers = args.workers or max(1, min(2, os.cpu_count() or 1))
    opts = AuditOptions(claims=claims, profile=args.profile, sizes=args.sizes,
                        replicates=args.replicates, seed=args.seed, workers=workers,
                        level=args.level, strict=args.strict)
    store = Store(args.store)
    progress = None if args.quiet else display.Progress()
    try:
        with (progress or display.nullcontext()):
            report = audit(opts, store, progress=progress)
    except KeyboardInterrupt:
        print(f"\ninterrupted: {store.count()} measurements are kept in {args.store}",
              file=sys.stderr)
        return 130
    print_report(report)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report_json(report), indent=2, sort_keys=True))
    return 0 if report.ok else 1


def register(subparsers) -> None:
    from verification.cli import DEFAULT_STORE, _int_in, parse_float, parse_sizes

    a = subparsers.add_parser("audit", help="power audit: judge the same samples against "
                                            "wrong variants of each claim")
    a.add_argument("claims", nargs="*", metavar="CLAIM")
    a.add_argument("--profile", choices=("quick", "standard"), default="quick")
    a.add_argument("--sizes", type=parse_sizes)
    a.add_argument("--replicates", type=_int_in("--replicates", 2, 10000))
    a.add_argument("--seed", type=_int_in("--seed", 0, 2**63 - 1), default=DEFAULT_SEED)
    a.add_argument("--workers", type=_int_in("--workers", 1, 64), default=None)
    a.add_argument("--level", type=parse_float("--level", 0.0, 0.5), default=DEFAULT_LEVEL,
                   help="family-wise false-alarm level (default 0.01, as run)")
    a.add_argument("--store", default=DEFAULT_STORE)
    a.add_argument("--json", metavar="PATH")
    a.add_argument("--strict", action="store_true",
                   help="'no power' for a parameter variant fails the audit too")
    a.add_argument("--quiet", action="store_true", help="no progress display")


COMMANDS = {"audit": _cmd_audit}
