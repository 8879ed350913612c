r"""The per-claim summary table: one row per claim (status, largest size, predictions
verified with power, worst power, verdict), ``\scriptsize`` and narrow enough for
``\columnwidth`` of a two-column paper."""
from __future__ import annotations

import re
from typing import Any, Mapping

from gapverify.reports.latex import DASH, PACKAGES_COMMENT, TeX, escape
from gapverify.reports.numbers import significant
from gapverify.reports.render import render
from gapverify.reports.table_cells import (
    _STATUS_SHORT, _asserted, _finite, _percent, _run_text, _s_column, _targets, _tt,
    _verdict_short,
)

__all__ = ["summary_table"]

def _worst_power(claim: Mapping[str, Any]):
    powers = [c.get("power") for c in claim["checks"]
              if _asserted(c) and c.get("power_class") != "exact"]
    if any(p == "inf" for p in powers):
        return "inf"
    finite = [p for p in powers if _finite(p)]
    return max(finite) if finite else None


def summary_table(run: Mapping[str, Any]) -> str:
    r"""The one-page summary (LaTeX source), one row per claim in the run's order: claim,
    status, largest size, predictions verified with power, the worst power of its asserted
    checks, verdict. Narrow enough for ``\columnwidth`` of a two-column paper
    (``\scriptsize``, siunitx ``S`` columns without digit grouping)."""
    rows = []
    for claim in run["claims"]:
        summary = claim.get("power_summary") or ""
        m = re.match(r"(\d+) of (\d+)", summary)
        if m:
            checks = f"{m.group(1)}/{m.group(2)}"
        else:
            asserted = [c for c in claim["checks"] if _asserted(c)]
            checks = f"{sum(c['verdict'] == 'pass' for c in asserted)}/{len(asserted)}"
        sizes = claim.get("sizes") or []
        rows.append({"claim": _tt(claim["claim"]),
                     "status": TeX(_STATUS_SHORT.get(str(claim["status"]),
                                                     escape(claim["status"]))),
                     "T": TeX(str(max(sizes)) if sizes else "{" + DASH + "}"),
                     "checks": TeX(checks), "power": TeX(_percent(_worst_power(claim))),
                     "verdict": _verdict_short(str(claim["verdict"]), str(claim["status"]))})
    notes = [
        {"mark": "a", "text": TeX(
            "The weakest status of the claim's predictions: thm theorem, der derived, "
            "emp empirical, conj conjecture.")},
        {"mark": "b", "text": TeX(
            "Predictions verified with power, of those a verdict needs (recorded checks are "
            "never counted).")},
        {"mark": "c", "text": TeX(
            r"Worst power of the claim's asserted checks, in \%: the smallest relative error "
            r"of a prediction that the same samples reject on both sides; target "
            + _targets(run) + ".")},
        {"mark": "d", "text": TeX(
            r"verified: every prediction of a theorem or derived claim passed with power; "
            r"supported: passed, but the claim is a conjecture; reproduced: an empirical law; "
            r"lacks power: no check failed, but a prediction could not be told from a wrong "
            r"one; flaky: a failure that did not recur on replay.")},
        {"mark": "", "text": TeX(
            "Code version " + _tt(run.get("code_version", "?")) + ".")},
    ]
    if _finite(run.get("perturb")) and run["perturb"]:
        notes.append({"mark": "", "text": TeX(
            r"\textbf{Every claim was judged against a statement perturbed by} \num{"
            + significant(run["perturb"], 3) + "}: a failure is the expected outcome.")})
    caption = TeX(
        "Verdict per claim of a gapverify run: largest context length $T$ sampled, "
        "predictions verified with power and the worst power (" + _run_text(run) + ").")
    return render("summary_table.tex", packages_comment=TeX(PACKAGES_COMMENT),
                  caption=caption, label=TeX("tab:gapverify:summary"), rows=rows, notes=notes,
                  T_col=_s_column([r["T"] for r in rows]),
                  power_col=_s_column([r["power"] for r in rows]))
