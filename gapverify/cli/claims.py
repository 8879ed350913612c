"""The ``gapverify`` commands that read the claim registry without sampling: ``claims``
(the list), ``predict`` (a claim's predictions at given parameters, with
:func:`claim_parameters`, shared with :mod:`gapverify.api`), ``describe`` (one claim in
full) and ``docs`` (writes docs/claims.md). Registered in :mod:`gapverify.cli`.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Mapping

from gapverify.verification.judging.outcomes import EXIT_OK
from gapverify.verification.claims.inputs import UsageError, check_finite, claim_parameters, parse_set
from gapverify.cli.args import print_json

def _cmd_claims(args) -> int:
    from gapverify.verification.claims.registry import CLAIMS

    rows = [{"id": c.id, "status": c.status, "statement": c.title,
             "paper_result": c.paper_result,
             "predictions": {p.name: p.status for p in c.predictions}} for c in CLAIMS.values()]
    if args.json:
        print_json(rows)
        return EXIT_OK
    from gapverify.cli import display

    # the paper's result under the statement (the table has three columns)
    display.claims_table([{**r, "statement": f"{r['statement']}\n  paper: {r['paper_result']}"}
                          if r["paper_result"] else r for r in rows])
    return EXIT_OK


def _cmd_predict(args) -> int:
    from gapverify.verification.claims.registry import get_claim

    claim = get_claim(args.claim)
    overrides = parse_set(args.set)
    values = claim_parameters(claim, overrides)
    exact = claim.predict(values)
    preds = claim.predict_numbers(values)
    # floats for reading, the exact sympy value as text beside them (no 50-digit rationals)
    out = {"claim": claim.id, "status": claim.status, "parameters": values, "predictions": preds,
           "exact": {k: sstr(v) for k, v in exact.items()},
           "statement": claim.statement_latex(values)}
    if args.json:
        print_json(out)
    else:
        from gapverify.cli import display

        display.predictions_table(out, {p.name: p.status for p in claim.predictions})
    return EXIT_OK


def sstr(expr) -> str:
    """The exact value as sympy's text (``sqrt(exp(1/2) - 1)``)."""
    import sympy as sp

    return sp.sstr(expr)


def _cmd_describe(args) -> int:
    from gapverify.verification.tools.claimdocs import describe_claim, model_text

    d = describe_claim(args.claim, args.profile) if args.profile in _profiles_of(args.claim) \
        else None
    if d is None:
        raise UsageError(f"parameter '--profile': claim {args.claim} has no profile "
                         f"'{args.profile}'; it has: {', '.join(_profiles_of(args.claim))}")
    if args.json:
        print_json(d)
        return EXIT_OK
    out = [f"{d['claim']} ({d['status']}): {d['title']}",
           f"  paper: {d['paper_result'] or '-'}",
           f"  family {d['family']}, experiment {d['experiment']}",
           "  references: " + "; ".join(d["references"]), "", "parameters:"]
    for p in d["parameters"]:
        out.append(f"  {p['name']:<8} {p['description']}; default {p['default']:.10g}; "
                   f"domain {p['domain']}" + (f", computed for {p['computable']}"
                                              if p["computable"] != p["domain"] else ""))
    cases = "; ".join(", ".join(f"{k}={v:.6g}" for k, v in c.items()) for c in d["cases"])
    out += ["", f"predictions (values at the {d['profile']} profile's cases: {cases}):"]
    for p in d["predictions"]:
        vals = ", ".join("-" if v["value"] is None else f"{v['value']:.10g}" for v in p["values"])
        out.append(f"  {p['name']:<22} {p['status']:<10} {p['kind']:<9} {vals}")
        out.append(f"      {p['statement']}")
        if p["note"]:
            out.append(f"      note: {p['note']}")
        if p["derived_in"]:
            out.append(f"      derived in: {p['derived_in']}")
    out += ["", "checks:"]
    for c in d["checks"]:
        model = model_text(c, digits=3)
        out.append(f"  {c['prediction']}:{c['statistic']}  {c['kind']}, {model}"
                   + (f" ({c['rate_status']})" if c["rate_status"] else "")
                   + f", needs >= {c['minimum_sizes']} size(s)"
                   + ("" if c["asserted"] else ", recorded (not asserted)"))
        if c["domain"]:
            out.append(f"      domain: {c['domain']}")
        out.append("      judged at T = " + "; ".join(
            (", ".join(map(str, j["sizes"])) or "none (outside its domain)")
            + (f" ({', '.join(f'{k}={v:.6g}' for k, v in j['parameters'].items())})"
               if len(c["judged_sizes"]) > 1 else "")
            for j in c["judged_sizes"]))
        if c["rate_note"]:
            out.append(f"      {c['rate_note']}")
    out += ["", "profiles (power target: the largest relative error a verified check may "
                "fail to reject):"]
    for name, pr in d["profiles"].items():
        draws = (f"{pr['replicates']} replicates (fixed)" if pr["replicates"] is not None else
                 f"pilot {pr['pilot']} replicates, then as many as the target needs (budget "
                 f"{pr['budget_seconds']:g} reference seconds per case)")
        out.append(f"  {name:<9} T = {', '.join(map(str, pr['sizes']))}; {draws}; "
                   f"power target {pr['power_target']:.0%}"
                   + (f"; judges {', '.join(pr['judges'])} through {pr['experiment']}"
                      if "judges" in pr else ""))
    print("\n".join(out))
    return EXIT_OK


def _profiles_of(claim_id: str) -> list[str]:
    from gapverify.verification.claims.registry import get_claim

    return list(get_claim(claim_id).profiles)


def _cmd_docs(args) -> int:
    from gapverify.verification.tools.claimdocs import claims_markdown

    text = claims_markdown()
    if args.out == "-":
        sys.stdout.write(text)
        return EXIT_OK
    try:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"parameter '--out': cannot write {args.out!r}: {exc.strerror or exc}") from None
    print(f"wrote {args.out}")
    return EXIT_OK
