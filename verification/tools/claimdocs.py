r"""What a claim says, as data and as Markdown: ``gapverify describe`` and ``docs/claims.md``.

(Named ``claimdocs``, not ``describe``, to keep it apart from the API's function
:func:`gapverify.api.describe`.)

Everything here is read from the registry (:data:`verification.claims.registry.CLAIMS`): the
statement (sympy), the status of each prediction, the derivation notes the registry
carries (each prediction's ``note``, each check's ``rate_note``, ``domain_note``,
``tolerance_note`` and ``record_note``, and the docstring of the family module that
registers the claim), the parameters with their domains, the checks with their rates or
rate ranges, the profiles with their power targets, and the references.

* :func:`describe_claim` returns one claim as plain (JSON-safe) data, predictions valued
  at every parameter case of a profile;
* :func:`claims_markdown` renders every claim as the Markdown document
  ``docs/claims.md`` (``gapverify docs --out docs/claims.md``); the test suite compares
  the committed file with a fresh rendering, so the document cannot drift from the code.
"""
from __future__ import annotations

import importlib
import inspect
import math
import re
from typing import Any, Mapping

from gapverify.theory.parameters import PARAMETERS
from gapverify.verification.claims.model import POWER_TARGETS, Check, Claim, RateRule

__all__ = ["describe_claim", "claims_markdown", "family_of", "model_text", "rst_to_markdown",
           "DOCS_PATH"]

#: Where the generated theory document lives, relative to the repository root.
DOCS_PATH = "docs/claims.md"


def family_of(claim: Claim) -> str:
    """The registry module that registers ``claim`` (``markov``, ``layers``, ...)."""
    module = claim.predictions[0].formula.__module__ if claim.predictions else ""
    if module.startswith("gapverify.verification.claims.registry."):
        return module.rsplit(".", 1)[-1]
    return claim.id.split(".", 1)[0]  # a claim of a file or plug-in: its id's family


def _number(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _parameter(name: str, claim: Claim) -> dict[str, Any]:
    p = PARAMETERS[name]
    return {"name": name, "latex": p.latex, "description": p.description,
            "default": p.default, "domain": p.domain_text(),
            "computable": p.numeric_domain_text(), "integer": p.integer,
            "fixed": claim.fixed_parameters.get(name)}


def _rate(check: Check, values: Mapping[str, float]) -> dict[str, Any]:
    if check.models:
        return {"model": "model family", "models": [f"{m.name}: {m.formula}" for m in check.models]
                + (["the theory's finite-size mean subtracted first"] if check.correction else [])}
    if check.rate_range is not None:
        return {"model": "rate range", "rate_range": list(check.rate_range),
                **({"corrected": True} if check.correction else {})}
    if isinstance(check.rate, RateRule):
        return {"model": "rate", "rate": str(check.rate), "rate_at_parameters": check.rate(values)}
    if check.rate is not None:
        return {"model": "rate", "rate": float(check.rate)}
    if check.kind in ("exact", "matching"):
        return {"model": "exact"}
    return {"model": "recorded" if not check.asserted else "none"}


def describe_claim(claim_id: str, profile: str = "quick") -> dict[str, Any]:
    """Claim ``claim_id`` as plain data: parameters (domains), predictions (statement and
    value at each case of ``profile``), checks (kind, rate or rate range, domain), the
    profiles (sizes, replicates, power target), status and references.

    Raises :class:`verification.claims.registry.UnknownClaimError` for an unknown id and
    ``KeyError`` for a profile the claim does not have.
    """
    from gapverify.verification.claims.registry import get_claim

    claim = get_claim(claim_id)
    if profile not in claim.profiles:
        raise KeyError(f"claim {claim.id} has no profile '{profile}'; it has: "
                       f"{', '.join(claim.profiles)}")
    claim = claim.for_profile(profile)  # a profile with its own experiment judges part of it
    cases = claim.cases_for(profile)
    values = [claim.predict_numbers(case) for case in cases]
    statement = statements_latex(claim)
    predictions = []
    for p in claim.predictions:
        predictions.append({
            "name": p.name, "status": p.status, "kind": p.kind, "quantity": p.quantity,
            "asserted": p.asserted, "note": p.note, "reference_limit": p.reference_limit or None,
            "derived_in": claim.derivation(p.name) or None,
            "statement": statement[p.name][0],
            "statement_numeric_parameters": statement[p.name][1],
            "values": [{"parameters": dict(case), "value": _number(v[p.name])}
                       for case, v in zip(cases, values)],
        })
    checks = []
    for c in claim.checks:
        checks.append({
            "prediction": c.prediction, "statistic": c.statistic, "kind": c.kind,
            "asserted": c.asserted, **_rate(c, cases[0]), "rate_status": c.rate_status or None,
            "rate_note": c.rate_note or None,
            # where it is judged: its parameter domain, and its domain in (parameters, T)
            "domain": "; ".join(n for n in (c.domain_note, c.min_size_note) if n) or (
                None if c.domain is None and c.min_size is None else "restricted"),
            "judged_at": [c.applies(case) for case in cases],
            "judged_sizes": [{"parameters": dict(case),
                              "sizes": c.judged_sizes(case, claim.profiles[profile].sizes,
                                                     claim.sampled_from)}
                             for case in cases],
            "tolerance_note": c.tolerance_note or None, "record_note": c.record_note or None,
            "minimum_sizes": c.minimum_sizes,
            "relative_to": list(c.relative_to) if c.relative_to else None,
        })
    return {
        "claim": claim.id, "title": claim.title, "status": claim.status,
        "paper_result": claim.paper_result,
        "family": family_of(claim), "experiment": claim.experiment,
        "references": list(claim.references),
        "parameters": [_parameter(n, claim) for n in claim.parameters],
        "fixed_parameters": dict(claim.fixed_parameters),
        "profile": profile, "cases": [dict(c) for c in cases],
        "predictions": predictions, "checks": checks,
        "profiles": {name: {"sizes": list(pr.sizes), "replicates": pr.replicates,
                            "pilot": pr.minimum, "budget_seconds": pr.budget_for(name),
                            "power_target": pr.power,
                            **({"experiment": pr.experiment or claim.experiment,
                                "judges": list(pr.predictions)} if pr.narrows() else {})}
                     for name, pr in claim.profiles.items()},
        "power_targets": dict(POWER_TARGETS),
        # below the smallest size its profiles sample no statistical check is judged
        "judged_from": claim.sampled_from,
    }


def statements_latex(claim: Claim) -> dict[str, tuple[str, dict]]:
    """Per prediction: its equation in LaTeX at symbolic parameters, and the parameters
    that had to be numbers (at their defaults) for a formula that needs them, e.g.
    ``int(depth)`` (:func:`verification.tools.snapshot._equation`, as the snapshots do)."""
    import sympy as sp

    from gapverify.verification.tools.snapshot import _equation

    names = {sp.Symbol(p.name): p.quantity for p in claim.predictions}
    names.update({PARAMETERS[n].symbol: PARAMETERS[n].latex for n in claim.parameters})
    base = claim.resolve({})
    out = {}
    for p in claim.predictions:
        eq, numeric = _equation(claim, p, base)
        out[p.name] = (sp.latex(eq, symbol_names=names), dict(numeric))
    return out


# ----------------------------------------------------------------------------- Markdown
def _cell(text: object) -> str:
    return str(text).replace("|", r"\|").replace("\n", " ")


def _fmt(x: object) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.10g}"
    return str(x)


def model_text(check: Mapping[str, object], digits: int = 10) -> str:
    """A described check's finite-size model in words (:func:`describe_claim`'s
    ``model``): ``rate range [lo, hi]``, ``rate r`` (a rule's text as it is), or the kind."""
    def num(x: object) -> str:
        return f"{x:.{digits}g}" if isinstance(x, float) else _fmt(x)

    if check["model"] == "rate range":
        lo, hi = check["rate_range"]
        return (f"rate range [{num(lo)}, {num(hi)}]"
                + (", the theory's finite-size term subtracted first" if check.get("corrected") else ""))
    if check["model"] == "rate":
        return f"rate {num(check['rate'])}"
    if check["model"] == "model family":
        return "models " + "; ".join(check["models"])
    return str(check["model"])


def _case_text(case: Mapping[str, float], claim: Claim) -> str:
    return ", ".join(f"{k}={_fmt(case[k])}" for k in claim.parameters if k in case)


def _family_doc(family: str) -> str:
    try:
        module = importlib.import_module(f"gapverify.verification.claims.registry.{family}")
    except ImportError:
        return ""
    return rst_to_markdown(inspect.cleandoc(module.__doc__ or ""))


_MATH_ROLE = re.compile(r":math:`([^`]*)`")
_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`]*)`")
_LITERAL = re.compile(r"``([^`]+)``")


def rst_to_markdown(text: str) -> str:
    """The reStructuredText of a docstring as Markdown: ``:math:`x``` -> ``$x$``, other
    roles (``:func:`f```, ``:data:`X```) and ````literals```` -> code spans, a
    ``.. math::`` block -> ``$$ ... $$``."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip().startswith(".. math::"):
            body = [line.strip()[len(".. math::"):].strip()]
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                body.append(lines[i].strip())
                i += 1
            out += ["$$" + " ".join(b for b in body if b) + "$$"]
            continue
        out.append(line)
        i += 1
    text = _MATH_ROLE.sub(lambda m: f"${m.group(1)}$", "\n".join(out))  # may span lines
    text = _ROLE.sub(lambda m: f"`{m.group(1)}`", text)
    return _LITERAL.sub(lambda m: f"`{m.group(1)}`", text)


def claims_markdown(profile: str = "quick") -> str:
    """Every claim of the registry as one Markdown document (``docs/claims.md``)."""
    from gapverify.verification.claims.registry import documented_claim_ids, get_claim

    claims = {cid: get_claim(cid) for cid in documented_claim_ids()}

    lines = [
        "# Claims",
        "",
        "<!-- Generated from verification/claims/registry by `gapverify docs --out docs/claims.md`;",
        "     do not edit by hand: tests/verification/test_api.py fails when it drifts. -->",
        "",
        "Every claim the suite verifies, read from the registry (`verification/claims/registry/`):",
        "its statement, the status of each prediction (theorem, derived, conjecture,",
        "empirical), the derivation notes the registry carries, its parameters with their",
        "domains, the predicted values at the parameter cases of the "
        f"`{profile}` profile, the checks",
        "that measure each prediction (a stated rate `alpha`: the error decays at least like",
        "`T^-alpha`; a rate range: `x_T = L + c T^-r` with `r` estimated in it; a model",
        "family: corrections of known form, each fitted, the union of their intervals), the sweep",
        "profiles with their power targets, and the references. The same data as JSON:",
        "`gapverify describe CLAIM --json`; how a claim is judged:",
        "[judging.md](judging.md).",
        "",
        "Where a note says \"measured\", the number was measured with this suite, before",
        "the rate was stated; the verdict tables give what each run measures.",
        "",
        "A claim's status is its weakest prediction's. A passing conjecture reads",
        "*supported*, a passing empirical law *reproduced*; only theorems and derived",
        "predictions read *verified*.",
        "",
        "## Contents",
        "",
        "| claim | status | statement |",
        "| --- | --- | --- |",
    ]
    for cid, claim in claims.items():
        lines.append(f"| [`{cid}`](#{cid.replace('.', '')}) | {claim.status} | {_cell(claim.title)} |")
    families: dict[str, list[str]] = {}
    for cid, claim in claims.items():
        families.setdefault(family_of(claim), []).append(cid)
    for family, ids in families.items():
        lines += ["", f"## Family `{family}`", ""]
        doc = _family_doc(family)
        if doc:
            lines += [doc, ""]
        for cid in ids:
            lines += _claim_markdown(get_claim(cid), profile)
    return "\n".join(lines).rstrip() + "\n"


def _experiment_line(claim: Claim) -> str:
    from gapverify.verification.claims.registry import OPT_IN_PREFIXES

    if claim.id.startswith(OPT_IN_PREFIXES):
        # the same text with or without torch (without it the claim samples a stub)
        return (f"- **experiment**: `{claim.id}` (opt-in: run only when named; needs the "
                "`models` extra, `pip install gapverify[models]`)")
    return f"- **experiment**: `{claim.experiment}`"


def _claim_markdown(claim: Claim, profile: str) -> list[str]:
    d = describe_claim(claim.id, profile if profile in claim.profiles else "quick")
    out = ["", f"### {claim.id}", "", f"{claim.title}", "",
           f"- **status**: {claim.status} (weakest of its predictions)",
           f"- **paper result**: {claim.paper_result or '-'}",
           _experiment_line(claim),
           "- **references**: " + "; ".join(claim.references), "",
           "Statement (parameters symbolic unless a value is given):", ""]
    for p in d["predictions"]:
        at = p["statement_numeric_parameters"]
        where = f" (at {_case_text(at, claim)})" if at else ""
        out += [f"- `{p['name']}`{where}:", "", "  $$" + p["statement"] + "$$", ""]
    out += ["Parameters:", "", "| name | symbol | meaning | default | domain | computed for |",
            "| --- | --- | --- | --- | --- | --- |"]
    for p in d["parameters"]:
        out.append(f"| `{p['name']}` | ${p['latex']}$ | {_cell(p['description'])} | "
                   f"{_fmt(p['default'])} | {p['domain']} | {p['computable']} |")
    cases = d["cases"]
    out += ["", f"Predictions (values at the `{d['profile']}` profile's cases: "
            + "; ".join(f"({_case_text(c, claim)})" for c in cases) + "):", "",
            "| prediction | status | kind | measured quantity | value(s) | note |",
            "| --- | --- | --- | --- | --- | --- |"]
    for p in d["predictions"]:
        vals = ", ".join(_fmt(v["value"]) for v in p["values"])
        kind = p["kind"] + (f" ({p['reference_limit']} -> oo)" if p["reference_limit"] else "")
        note = "; ".join(n for n in (p["note"], p["derived_in"] and f"derived in {p['derived_in']}")
                         if n)
        out.append(f"| `{p['name']}` | {p['status']} | {kind} | ${p['quantity']}$ | {vals} | "
                   f"{_cell(note or '-')} |")
    out += ["", "Checks:", "", "| prediction | statistic | kind | model | rate status | domain | notes |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for c in d["checks"]:
        model = model_text(c)
        notes = "; ".join(n for n in (c["rate_note"], c["tolerance_note"], c["record_note"]) if n)
        prediction = f"`{c['prediction']}`"
        if c["relative_to"]:  # judged against P / P_other^k
            other, k = c["relative_to"]
            prediction += f" / `{other}`" + (f"^{k}" if k != 1 else "")
        out.append(f"| {prediction} | `{c['statistic']}` | {c['kind']}"
                   f"{'' if c['asserted'] else ' (recorded, not asserted)'} | {_cell(model)} | "
                   f"{c['rate_status'] or '-'} | {_cell(c['domain'] or 'everywhere')} | "
                   f"{_cell(notes or '-')} |")
    out += ["", "Profiles (replicates per size: the pilot, then as many as the power target "
            "needs within the budget, in reference-machine seconds per case; or fixed):", "",
            "| profile | sizes T | replicates | power target |", "| --- | --- | --- | --- |"]
    for name, pr in d["profiles"].items():
        out.append(f"| {name} | {', '.join(map(str, pr['sizes']))} | {_draws(pr)} | "
                   f"{pr['power_target']:.0%} |")
    out += ["", f"Its statistical checks are judged from `T = {d['judged_from']}` on, the "
                "smallest size its profiles sample, where their finite-size models were "
                "calibrated: a run at smaller `--sizes` reads *outside domain* below it "
                "(exact checks are judged at every size)."]
    narrowed = [(n, pr) for n, pr in d["profiles"].items() if "judges" in pr]
    for name, pr in narrowed:
        out += ["", f"The {name} profile judges only "
                    + ", ".join(f"`{p}`" for p in pr["judges"])
                    + f", measured by the experiment `{pr['experiment']}` (shared by the claims "
                      "whose profiles name it: one draw serves them all)."]
    return out


def _draws(profile: dict) -> str:
    """A profile's draws as a reader wants them: fixed, or self-sized from its pilot."""
    if profile["replicates"] is not None:
        return f"{profile['replicates']} (fixed)"
    return f"pilot {profile['pilot']}, then to the target (budget {profile['budget_seconds']:g} s)"
