"""``gapverify audit`` (:mod:`gapverify.verification.tools.audit`) on a terminal: a table per
claim and case (each prediction's checks and their power, the limit, parameter and rate
variants and the outcome), the claims' summaries and the reading key; ``--json`` writes
:func:`~gapverify.verification.tools.audit.report_json`."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from gapverify.verification.claims.inputs import _int_in, parse_sizes
from gapverify.cli.args import add_run_options, run_options_claims, write_json
from gapverify.verification.running.defaults import DEFAULT_SEED

# The audit's machinery (sympy, scipy) is imported when the command runs, not when the
# parser is built: ``gapverify --help`` stays fast.
if TYPE_CHECKING:
    from gapverify.verification.tools.audit import AuditReport, ClaimAudit, VariantOutcome

__all__ = ["print_report", "register", "COMMANDS"]


def escape(text: str) -> str:
    from rich.markup import escape as _escape

    return _escape(text)


def _group(outcomes: list[VariantOutcome], role: str) -> str:
    parts = []
    for o in outcomes:
        if o.role != role or o.outcome == "not applicable":
            continue
        mark = {"rejected": "ok", "rejected at another case": "ok (other case)"}.get(o.outcome, "MISSED")
        short = o.variant.split(" ", 1)[1] if " " in o.variant else o.variant
        parts.append(f"{short}: {mark}")
    na = sorted({o.variant.split(" @ ")[1].split(" ")[0] for o in outcomes
                 if o.role == role and o.outcome == "not applicable" and " @ " in o.variant})
    if na:
        parts.append("n/a: " + ", ".join(na))
    return "; ".join(parts) or "-"


def _claim_table(a: ClaimAudit):
    from rich import box
    from rich.table import Table

    from gapverify.verification.judging.verdict import power_text

    sizes = ", ".join(map(str, a.sizes))
    title = (f"{a.name} ({a.status}): T = {sizes}; {a.replicates} replicates; "
             f"q = {a.q:.3f}; as stated: {a.truth}")
    t = Table(title=escape(title), box=box.SIMPLE_HEAVY, title_justify="left")
    for col in ("prediction", "status", "power (checks)", f"limit ±{a.perturbation:.0%}",
                "wrong parameter x1.25 / x0.8", "rate +0.5", "outcome"):
        t.add_column(col)
    for p in a.predictions:
        powers = ", ".join(power_text(v) for v in p.powers.values()) or "-"
        if not p.judged:
            t.add_row(escape(p.prediction), p.status, powers, "-", "-", "-",
                      f"[dim]{escape(p.note)}[/]")
            continue
        word = "[green]powered[/]" if all(o.ok for o in p.outcomes) else (
            "[bold red]FAILED[/]" if p.required else "[yellow]not rejected (empirical)[/]")
        t.add_row(escape(p.prediction), p.status, powers, escape(_group(p.outcomes, "limit")),
                  escape(_group(p.outcomes, "parameter")), escape(_group(p.outcomes, "rate")), word)
    return t


def _claim_summary(a: ClaimAudit) -> list[str]:
    style = {"FAILED": "bold red", "powered": "green"}[a.verdict]
    lines = [f"{escape(a.name)}: [{style}]{a.verdict}[/]"]
    if not a.truth_ok:
        lines.append(escape(f"  - as stated: {a.truth} ({a.truth_note})"))
    for p in a.predictions:
        for o in p.outcomes:
            if o.outcome == "NOT REJECTED":
                lines.append(escape(f"  - {o.variant}: NOT REJECTED ({o.note})"))
    return lines


def print_report(report: AuditReport) -> None:
    from gapverify.cli.display import console
    from gapverify.verification.judging.verdict import RATE_SHIFT

    for a in report.claims:
        console.print(_claim_table(a))
    for a in report.claims:
        for line in _claim_summary(a):
            console.print(line, highlight=False)
    for u in report.unjudged:
        console.print(escape(f"{u}: judged at no case of this profile (its checks are recorded "
                             "only, or outside their domain everywhere): not verified"),
                      style="bold red", highlight=False)
    console.print(
        f"False-alarm level {report.level:g} per claim, Bonferroni over that claim's tests (q in "
        f"each title). Each prediction is made wrong on its own: limit ±{report.perturbation:.0%} "
        f"(the {report.profile} profile's power target), each parameter x1.25 and x0.8, each "
        f"stated rate +{RATE_SHIFT:g}; all judged on the same measurements (root seed "
        f"{report.seed}).", style="dim", highlight=False)
    if report.ok:
        console.print("audit [green]PASSED[/]: every statement is verified as stated and every "
                      "applicable wrong variant of every prediction is rejected", highlight=False)
    else:
        console.print("audit [bold red]FAILED[/]: see the claims above", highlight=False)


def _cmd_audit(args) -> int:
    from gapverify.cli import display
    from gapverify.cli.sampling import LineProgress
    from gapverify.verification.running.store import Store
    from gapverify.verification.tools.audit import AuditOptions, audit, report_json

    claims, workers = run_options_claims(args)
    opts = AuditOptions(claims=claims, profile=args.profile, sizes=args.sizes,
                        replicates=args.replicates, seed=args.seed, workers=workers,
                        level=args.level, entries=args.entries, scheduler=args.scheduler)
    store = Store(args.store)
    # a bar on a terminal, one line per group of tasks in a log
    progress = None if args.quiet else display.Progress() if sys.stderr.isatty() else LineProgress()
    try:
        with (progress or display.nullcontext()):
            report = audit(opts, store, progress=progress)
    except KeyboardInterrupt:
        print(f"\ninterrupted: {store.count()} measurements are kept in {args.store}",
              file=sys.stderr)
        return 130
    print_report(report)
    if args.json:
        write_json(args.json, report_json(report))  # strict JSON, as run writes it
    return 0 if report.ok else 1


def register(subparsers) -> None:
    a = subparsers.add_parser("audit", help="power audit: judge the same samples against "
                                            "wrong variants of each prediction")
    a.add_argument("claims", nargs="*", metavar="CLAIM")
    a.add_argument("--profile", choices=("quick", "standard", "large", "long"), default="quick",
                   help="sweep profile; its power target is the size of the limit variants "
                        "(quick 5%%, standard 3%%) (default: quick)")
    a.add_argument("--sizes", type=parse_sizes)
    a.add_argument("--replicates", type=_int_in("--replicates", 2, 10000))
    a.add_argument("--seed", type=_int_in("--seed", 0, 2**63 - 1), default=DEFAULT_SEED)
    add_run_options(a)


COMMANDS = {"audit": _cmd_audit}
