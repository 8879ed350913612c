r"""The notes on the checks: the registry's rate notes (once per check) and the verifier's
reasons, their ASCII math typeset as math (:func:`reports.prose.prose`)."""
from __future__ import annotations

from typing import Any, Mapping

from gapverify.reports.latex import PACKAGES_COMMENT, TeX, escape
from gapverify.reports.prose import prose
from gapverify.reports.render import render
from gapverify.verification.judging.outcomes import Outcome
from gapverify.reports.results import registry_claim, verdict_word
from gapverify.reports.table_cells import (
    _case_math, _case_text, _tt, claim_blocks, paper_result, split_case,
)

__all__ = ["check_notes", "note_items"]

def _label_tex(check: Mapping[str, Any]) -> TeX:
    # "sr_X @ s2=0.5, depth=1" -> bold check name, then its case as math
    base, case = split_case(str(check["label"]))
    text = r"\textbf{" + escape(base) + "}"
    if case:
        keys = [kv.split("=")[0].strip() for kv in case.split(",")]
        shown = _case_text(_case_math(check, keys)) if check.get("case") else ""
        shown = shown or escape(case)
        text += ", case " + shown
    return TeX(text)


def _check_notes(claim: Mapping[str, Any]) -> list[TeX]:
    # why each rate, once per check of the registry and labelled with the check alone (the
    # note is the registry's, the same for every case), then the verifier's reason for
    # every case that did not simply pass and for the exact ones (their tolerance), under
    # that case's own label
    notes, seen = [], set()
    cases = len({split_case(c["label"])[1] for c in claim["checks"]}) > 1
    for check in claim["checks"]:
        base, _ = split_case(check["label"])
        if check.get("rate_note") and base not in seen:
            seen.add(base)
            notes.append(TeX(r"\textbf{" + escape(base) + "}" + (" (every case)" if cases else "")
                             + ": " + prose(check["rate_note"])))
    for check in claim["checks"]:
        if check["verdict"] != Outcome.PASS or check["kind"] in ("exact", "matching"):
            reason, _, command = str(check.get("reason", "")).partition("; reproduce: ")
            text = (_label_tex(check) + " ("
                    + escape(verdict_word(str(check["verdict"]), str(check.get("status", ""))))
                    + "): " + prose(reason))
            if command:  # the one line that reproduces a failure, in typewriter type
                text += "; reproduce with " + _tt(command)
            notes.append(TeX(text))
    return notes


def _source_notes(claim: Mapping[str, Any]) -> list[TeX]:
    # the paper's result the claim checks, in full (the summary prints its short form),
    # and where each derived prediction is derived (Claim.derivation), once per place
    out = []
    result = paper_result(str(claim["claim"]))
    if result:
        out.append(TeX(r"\textbf{Paper}: " + prose(result)))
    reg = registry_claim(str(claim["claim"]))
    if reg is None:
        return out
    places: dict[str, list[str]] = {}
    for p in reg.predictions:
        where = reg.derivation(p.name) if hasattr(reg, "derivation") else ""
        if where:
            places.setdefault(where, []).append(p.name)
    for where, names in places.items():
        out.append(TeX(r"\textbf{Derived} (" + ", ".join(_tt(n) for n in names) + "): in "
                       + prose(where)))
    return out


def note_items(run: Mapping[str, Any]) -> list[dict]:
    """Per claim with notes: its ``claim`` id, its ``notes`` (LaTeX) and the ``block``
    title it opens (the paper's claims, the peers' results; "" elsewhere)."""
    items = []
    for block in claim_blocks(run):
        first = True
        for claim in block.claims:
            notes = _source_notes(claim) + _check_notes(claim)
            if notes:
                items.append({"claim": str(claim["claim"]), "notes": notes,
                              "block": block.title if first else ""})
                first = False
    return items


def check_notes(run: Mapping[str, Any]) -> str:
    r"""The notes on the checks (LaTeX source, a ``description`` list): per claim, why each
    rate was stated (the registry's note, once per check, with its math typeset) and the
    verifier's reason for every case that did not pass or is exact; a run with peers'
    results under two headings, the paper's claims, then the peers' results."""
    items = [{"claim": _tt(item["claim"]), "notes": item["notes"],
              "block": TeX(escape(item["block"])) if item["block"] else ""}
             for item in note_items(run)]
    return render("check_notes.tex", packages_comment=TeX(PACKAGES_COMMENT), items=items)
