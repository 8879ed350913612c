"""The output of ``gapverify audit`` (:mod:`verification.audit`): a table per claim and
case (each prediction's checks and their power, the limit, parameter and rate variants and
the outcome), the claims' summaries and the reading key, and the same as JSON."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from verification.verdict import PARAMETER_FACTORS, RATE_SHIFT, power_text

if TYPE_CHECKING:
    from verification.audit import AuditReport, ClaimAudit, VariantOutcome

__all__ = ["print_report", "report_json"]


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
    from verification.display import console

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


def report_json(report: AuditReport) -> dict:
    return {"level": report.level, "level_is_per_claim": True, "root_seed": report.seed,
            "profile": report.profile, "perturbation": report.perturbation,
            "parameter_factors": list(PARAMETER_FACTORS), "rate_shift": RATE_SHIFT,
            "ok": report.ok, "unjudged": report.unjudged,
            "claims": [dict(dataclasses.asdict(a), name=a.name, verdict=a.verdict)
                       for a in report.claims]}
