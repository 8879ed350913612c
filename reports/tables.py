r"""LaTeX tables of a judged run: a per-claim summary, a per-check table, the notes on the
checks and one per-size convergence table per claim.

Read from the run's results (:mod:`reports.results`), never from new samples.

* :func:`summary_table`: one row per claim (status, largest size, predictions verified
  with power, worst power, verdict), ``\scriptsize`` and narrow enough for
  ``\columnwidth`` of a two-column paper;
* :func:`checks_table`: the main table, one row per check and parameter case (the mean at
  the largest size with its standard error, the prediction, the fitted rate, the power,
  the verdict) in siunitx ``S`` columns (``table-format`` from the cells,
  ``group-digits=false``), as ``table*`` floats of at most :data:`CHECK_ROWS` lines;
* :func:`check_notes`: the registry's rate notes (once per check) and the verifier's
  reasons, their ASCII math typeset as math (:func:`reports.latex.prose`);
* :func:`claim_table`: per size :math:`T`, the measured mean with its standard error
  (concise form ``0.0490(12)``), the interval :math:`\bar x_T \pm q\,\mathrm{se}` the
  verdict used, the predicted limit and the mean absolute error; under the sizes, the
  fitted exponent :math:`\hat\beta`, the extrapolated limit and the verdict (the report's
  appendix, ``report --appendix``).

Every caption stands alone: what is measured, the profile, the root seed and the level.
Output is deterministic: claims in the run's order, checks in the claim's order, numbers
from :mod:`reports.latex` (precision from the error, no fixed format), no timestamps and
no input paths. Every file opens with :data:`reports.latex.PACKAGES_COMMENT` and uses
nothing beyond booktabs, siunitx, amsmath and threeparttable, so it can be ``\input``.
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from gapverify.reports.latex import (
    DASH, prose, s_number, table_format, PACKAGES_COMMENT, TeX, escape, interval, math_or_text,
    num, num_shorthand, rate_fraction, rounded_like, significant, trim_zeros,
)
from gapverify.reports.render import render
from gapverify.reports.results import registry_claim, verdict_word
from gapverify.reports.results import split_case as _split_bracket_case

__all__ = ["claim_table", "summary_table", "checks_table", "check_notes", "table_files",
           "write_tables", "table_names", "split_case", "SUMMARY_NAME", "CHECKS_NAME",
           "NOTES_NAME", "MAX_ROWS", "CHECK_ROWS"]

SUMMARY_NAME = "summary.tex"
CHECKS_NAME = "checks.tex"
NOTES_NAME = "check-notes.tex"
#: Body rows of one table float; a claim with more is split into parts (a float taller
#: than a page cannot be placed).
MAX_ROWS = 40
#: Lines of one table float: its rows and every note, general ones included (\footnotesize,
#: about 110 characters a line); the rows get what the general notes leave.
MAX_LINES = 40

_KIND_TEXT = {
    "limit": "limit",
    "distance": "Kolmogorov distance to the limiting law",
    "exact": "exact at every size",
    "matching": "exact spectrum identity (optimal matching)",
}


def split_case(label: str) -> tuple[str, str]:
    """``("sr_X", "depth=2, gamma=1")`` from a check label: the suite labels the checks of
    a claim that sweeps cases ``"sr_X @ depth=2, gamma=1"``
    (:func:`verification.suite._merge`); older results wrote ``"sr_X [depth=2, gamma=1]"``.

    Reading only the bracket form left every case's label whole, so a rate note written
    once per check was printed under each case's label, where it read as a statement about
    that case (a depth-1 row carried the note "(l, gamma) = (2, 1)", and the registry's
    quantity and rate status were never found)."""
    base, sep, case = str(label).partition(" @ ")
    if sep:
        return base.strip(), case.strip()
    return _split_bracket_case(label)


def _slug(claim_id: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-") or "claim"


def table_names(run: Mapping[str, Any]) -> list[str]:
    """File names of the claim tables, in the run's order: ``claim-<id with every run of
    non-alphanumerics as '-'>.tex``, made unique by a numeric suffix (plain names that
    ``\\input`` and every file system accept)."""
    names, seen = [], set()
    for claim in run["claims"]:
        base = "claim-" + _slug(str(claim["claim"]))
        name, k = base, 2
        while name in seen:
            name, k = f"{base}-{k}", k + 1
        seen.add(name)
        names.append(name + ".tex")
    return names


def _tt(text: object) -> TeX:
    return TeX(r"\texttt{" + escape(text) + "}")


def _registry_check(claim_id: str, label: str):
    # the registry's Check and Prediction behind a result's check label, when known
    reg = registry_claim(claim_id)
    if reg is None:
        return None, None
    base, _ = split_case(label)
    for check in reg.checks:
        if check.label == base:
            try:
                return check, reg.prediction(check.prediction)
            except KeyError:
                return check, None
    return None, None


def _quantity(claim_id: str, label: str) -> str | None:
    """The LaTeX of what a check measures: its prediction's quantity, over the ``k``-th
    power of another's for a check judged relative to it (``Check.relative_to``)."""
    check, prediction = _registry_check(claim_id, label)
    if prediction is None:
        return None
    if check.relative_to is None:
        return prediction.quantity
    other, k = check.relative_to
    power = f"^{{{k}}}" if k != 1 else ""
    return (prediction.quantity + r"\,\big/\,\bigl("
            + registry_claim(claim_id).prediction(other).quantity + r"\bigr)" + power)


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def _rate_text(check: Mapping[str, Any], rate_status: str) -> TeX:
    rate = check.get("rate")
    if check["kind"] in ("exact", "matching"):
        return TeX("round-off tolerance")
    models = check.get("models")
    if models and check.get("corrected"):
        return TeX("the theory's finite-size mean subtracted, sizes pooled")
    if models:
        return TeX(f"finite-size models: {escape('; '.join(models))} (union of their intervals)")
    rr = check.get("rate_range")
    if rr:
        return TeX(f"finite-size model $L + c\\,T^{{-r}}$, $r$ estimated in "
                   f"$[{rate_fraction(rr[0])}, {rate_fraction(rr[1])}]$")
    if not _finite(rate):
        return TeX("recorded, not asserted")
    origin = f" ({escape(rate_status)} rate)" if rate_status else ""
    return TeX(f"stated rate $T^{{-{rate_fraction(rate)}}}${origin}")


def _heading(claim_id: str, check: Mapping[str, Any]) -> list[TeX]:
    reg_check, _ = _registry_check(claim_id, str(check["label"]))
    base, case = split_case(str(check["label"]))
    first = r"\textbf{" + escape(base) + "}"
    if (quantity := _quantity(claim_id, str(check["label"]))) is not None:
        first += r"\quad " + math_or_text(quantity, math=True)
    first += r"\quad [" + escape(check.get("status", "?")) + "]"
    kind = check["kind"]
    second = escape(_KIND_TEXT.get(kind, kind))
    if case:  # the case on the second line: a label with its case is too long for one
        keys = [kv.split("=")[0].strip() for kv in case.split(",")]
        shown = _case_text(_case_math(check, keys)) if check.get("case") else ""
        shown = shown or escape(case)
        second = TeX("case " + shown + "; " + second)
    if kind == "distance" and _finite(check.get("predicted")):
        second += TeX(r" (scale \num{" + significant(check["predicted"], 6) + "})")
    second += "; " + _rate_text(check, getattr(reg_check, "rate_status", ""))
    return [TeX(first), TeX(r"\footnotesize\itshape " + second)]


def _predicted_text(check: Mapping[str, Any], finest: float | None) -> TeX:
    # the prediction at the precision of the check's best measurement, trailing zeros
    # dropped: an exact value (1, 2) does not pretend to a precision (1.0000000)
    if check["kind"] == "distance":
        return num("0")
    return num(trim_zeros(rounded_like(check.get("predicted"), finest)))


def _rows(check: Mapping[str, Any], q: float) -> list[dict[str, TeX]]:
    """One row per size, then (for a rated check) the fit rows: ``T -> oo`` (the limit
    extrapolated at the stated rate) and ``beta`` (the fitted exponent of the error against
    the stated rate), in the same columns."""
    rows = check.get("rows") or []
    kind = check["kind"]
    ses = [r["se"] for r in rows if _finite(r.get("se")) and r["se"] > 0]
    finest = min(ses) if ses else None
    out = []
    for i, r in enumerate(rows):
        if kind in ("exact", "matching"):
            measured = inter = TeX(DASH)
            predicted = (num(significant(check.get("predicted"), 6)) if kind == "exact"
                         else TeX("identity"))
            error = num(significant(r.get("error"), 2))  # max residual over the replicates
        else:
            measured = num_shorthand(r["mean"], r["se"])
            inter = (interval(r["mean"], q * r["se"], r["se"]) if q > 0 and _finite(r["se"])
                     else TeX(DASH))
            predicted = _predicted_text(check, finest)
            error = num_shorthand(r["error"], r["error_se"])
        out.append({"T": TeX(str(int(r["T"]))), "measured": measured, "interval": inter,
                    "predicted": predicted if i == 0 else TeX(""), "error": error,
                    "space": False})
    lim, lim_se = check.get("limit_hat"), check.get("limit_se")
    band = check.get("limit_interval")
    if band and _finite(lim):
        # rate range: the profile-likelihood interval of the limit
        target = check.get("predicted")
        out.append({
            "T": TeX(r"$T\to\infty$"), "measured": num_shorthand(lim, lim_se),
            "interval": TeX(r"[\num{" + significant(band[0], 4) + r"}, \num{"
                            + significant(band[1], 4) + "}]"),
            "predicted": _predicted_text(check, finest),
            "error": (num_shorthand(abs(lim - target), lim_se) if _finite(target) else TeX(DASH)),
            "space": True})
        return out
    if _finite(lim):
        target = 0.0 if kind == "distance" else check.get("predicted")
        out.append({
            "T": TeX(r"$T\to\infty$"), "measured": num_shorthand(lim, lim_se),
            "interval": (interval(lim, q * lim_se, lim_se) if q > 0 and _finite(lim_se)
                         else TeX(DASH)),
            "predicted": _predicted_text(check, finest),
            "error": (num_shorthand(abs(lim - target), lim_se) if _finite(target)
                      else TeX(DASH)),
            "space": True})
    beta, beta_se = check.get("beta"), check.get("beta_se")
    if _finite(beta):
        out.append({
            "T": TeX(r"$\hat\beta$"), "measured": num_shorthand(beta, beta_se),
            "interval": (interval(beta, q * beta_se, beta_se) if q > 0 and _finite(beta_se)
                         else TeX(DASH)),
            "predicted": TeX(f"$\\alpha = {rate_fraction(check.get('rate'))}$"),
            "error": TeX(""), "space": not _finite(lim)})
    return out


def _footer(claim: Mapping[str, Any], check: Mapping[str, Any], q: float) -> list[TeX]:
    word = verdict_word(str(check["verdict"]), str(check.get("status", "")))
    text = r"verdict: \textbf{" + escape(word) + "}"
    if check.get("failing_size") is not None:
        text += f" (first failing size $T = {int(check['failing_size'])}$)"
    text += "; " + _power_text(check)
    return [TeX(text)]


def _power_text(check: Mapping[str, Any]) -> TeX:
    """``power: rejects +-x% (target y%)``: the smallest relative error of the prediction
    that the same samples reject on both sides."""
    power, target = check.get("power"), check.get("power_target")
    cls = check.get("power_class") or ""
    if power == "inf" or (isinstance(power, float) and math.isinf(power)):
        text = "power: none (a 100\\% error passes)"
    elif _finite(power):
        text = r"power: rejects $\pm$\num{" + significant(100 * power, 2) + r"}\%"
    else:
        return TeX(escape(cls) if cls else "power: not measured")
    if _finite(target):
        text += r" (target \num{" + significant(100 * target, 2) + r"}\%)"
    return TeX(text + (f", {escape(cls)}" if cls else ""))


def _parameters_text(parameters: Mapping[str, Any]) -> TeX:
    from gapverify.theory.parameters import PARAMETERS

    parts = []
    for name in sorted(parameters):
        value = parameters[name]
        symbol = (math_or_text(PARAMETERS[name].latex, math=True) if name in PARAMETERS
                  else _tt(name))
        parts.append(TeX(f"{symbol} $=$ {num(significant(float(value), 6))}"))
    return TeX(", ".join(parts) if parts else "none")


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
        if check["verdict"] != "pass" or check["kind"] in ("exact", "matching"):
            reason, _, command = str(check.get("reason", "")).partition("; reproduce: ")
            text = (_label_tex(check) + " ("
                    + escape(verdict_word(str(check["verdict"]), str(check.get("status", ""))))
                    + "): " + prose(reason))
            if command:  # the one line that reproduces a failure, in typewriter type
                text += "; reproduce with " + _tt(command)
            notes.append(TeX(text))
    return notes


def _cases_text(claim: Mapping[str, Any]) -> TeX:
    # parameters shared by every case, then the cases themselves (labels carry them too)
    cases = claim.get("cases") or []
    if len(cases) <= 1:
        return TeX("parameters " + _parameters_text(claim.get("parameters", {})))
    common = {k: v for k, v in cases[0].items() if all(c.get(k) == v for c in cases)}
    varying = sorted({k for c in cases for k in c if k not in common})
    listed = "; ".join(", ".join(f"{k}={significant(float(c[k]), 6)}" for k in varying if k in c)
                       for c in cases)
    return TeX("parameters " + _parameters_text(common) + "; " + str(len(cases))
               + " cases, each judged on its own samples and shown in the check labels: "
               + escape(listed))


def _claim_notes(run: Mapping[str, Any], claim: Mapping[str, Any], q: float) -> list[dict]:
    notes = [
        {"mark": "a", "text": TeX(
            "Mean over the replicates at each size; the digits in parentheses are one "
            "standard error in the last digits shown.")},
        {"mark": "b", "text": TeX(
            r"Mean $\pm\, q\,\mathrm{se}$ with $q = $ \num{" + significant(q, 3) + "}, the "
            "normal quantile at the claim's false-alarm level "
            + (r"\num{" + significant(run["level"], 3) + "}" if _finite(run.get("level"))
               else "(not recorded)")
            + (", Bonferroni over the claim's " + escape(claim["tests"]) + " tests"
               if claim.get("tests") else ", Bonferroni over the claim's tests")
            + "." if q > 0 else
            "No quantile recorded in the results: intervals omitted.")},
        {"mark": "c", "text": TeX(
            r"Mean over the replicates of $|\text{measured} - \text{predicted}|$; for a law, "
            "the Kolmogorov distance itself; for an exact check, the largest residual.")},
        {"mark": "d", "text": TeX(
            r"Rows $T\to\infty$: the limit $\hat L$ extrapolated from "
            r"$\bar x_T = \hat L + c\,T^{-\alpha}$ at the stated rate $\alpha$ (for a law, the "
            r"distance's limit, predicted $0$); the check needs $|\hat L - L| \le q\,\mathrm{se}$. "
            r"Rows $\hat\beta$: the exponent of $|\text{error}| \approx C\,T^{-\hat\beta}$ (weighted "
            r"log-log fit); the check needs $\hat\beta + q\,\mathrm{se} \ge \alpha$. "
            r"For a finite-size model with an estimated rate, the row $T\to\infty$ gives the "
            r"best fit and the profile-likelihood interval of the limit, which must contain "
            r"the prediction. Power: the smallest relative error of the prediction that the "
            r"same samples reject on both sides; worse than the profile's target, the "
            r"prediction lacks power and is not verified.")},
        {"mark": "", "text": TeX(
            "Root seed " + _tt(claim.get("root_seed", "?")) + "; "
            + escape(claim.get("replicates", "?")) + " replicates per size; code version "
            + _tt(run.get("code_version", "?")) + "; " + _cases_text(claim) + ".")},
    ]
    if claim.get("variant", "as stated") != "as stated":
        notes.append({"mark": "", "text": TeX(
            r"\textbf{Judged against a deliberately changed statement:} "
            + escape(claim["variant"]) + ".")})
    if claim.get("replay"):
        rp = claim["replay"]
        notes.append({"mark": "", "text": TeX(
            "Failure replayed with root seed " + _tt(rp.get("root_seed", "?")) + ": "
            + escape(rp.get("verdict", "?"))
            + (" (failed: " + escape(", ".join(map(str, rp.get("failed", [])))) + ")"
               if rp.get("failed") else "") + ".")})
    return notes


def _run_text(run: Mapping[str, Any], claim: Mapping[str, Any] | None = None) -> TeX:
    """``profile quick, root seed 1, level 0.01 per claim``: what a caption needs to stand
    alone."""
    seeds = sorted({int(c["root_seed"]) for c in ([claim] if claim else run["claims"])
                    if "root_seed" in c})
    seed = (", ".join(str(x) for x in seeds) if seeds else str(run.get("root_seed", "?")))
    level = (r"\num{" + significant(run["level"], 3) + "}" if _finite(run.get("level"))
             else "?")
    return TeX("profile " + escape(run.get("profile") or "?") + ", root seed " + escape(seed)
               + ", false-alarm level " + level + " per claim")


def _caption(run: Mapping[str, Any], claim: Mapping[str, Any], part: int, parts: int) -> TeX:
    reg = registry_claim(str(claim["claim"]))
    text = (r"Convergence in $T$ of every check of " + _tt(claim["claim"])
            + " [" + escape(claim["status"]) + "]")
    if reg is not None:
        text += ", " + math_or_text(reg.title)
    text += (": the mean per size with its interval, the prediction, the fit and the "
             "verdict (" + _run_text(run, claim) + "). Verdict of the claim: "
             + escape(verdict_word(str(claim["verdict"]), str(claim["status"]))))
    if parts > 1:
        text += f" (part {part} of {parts})"
    return TeX(text + ".")


def _note_lines(check: Mapping[str, Any]) -> float:
    # printed lines of a check's notes (about 110 characters a line in \footnotesize)
    texts = [check.get("rate_note") or ""]
    if check["verdict"] != "pass" or check["kind"] in ("exact", "matching"):
        texts.append(check.get("reason") or "")
    return sum(math.ceil(len(t) / 110) for t in texts if t)


def _split(checks: Sequence[dict], budget: int) -> list[list[dict]]:
    # consecutive groups of checks whose lines (sizes, fit rows, heading, footer, notes)
    # fit one float
    parts, current, used = [], [], 0.0
    for check in checks:
        size = (len(check["rows"]) + len(check["heading"]) + len(check["footer"])
                + _note_lines(check["source"]))
        if current and used + size > budget:
            parts.append(current)
            current, used = [], 0.0
        current.append(check)
        used += size
    return parts + [current] if current else parts or [[]]


def _font_size(groups: Sequence[dict]) -> TeX:
    # \footnotesize when the widest cells would make a \small table wider than the text
    width = {}
    for check in groups:
        for row in check["rows"]:
            for key in ("T", "measured", "interval", "predicted", "error"):
                text = re.sub(r"\\num|[{}$\\]", "", str(row[key]))
                width[key] = max(width.get(key, 0), len(text))
    return TeX(r"\footnotesize" if sum(width.values()) > 78 else r"\small")


#: Columns of the per-size table that are siunitx S columns.
_S_KEYS = ("T", "measured", "predicted", "error")


def _s_cell(cell: str) -> TeX:
    # a cell of an S column: "\num{0.0490(12)}" -> "0.0490(12)" (an error with a decimal
    # point, "123.4(5.6)", -> "123.4(56)"); text (a dash, $T\to\infty$) is braced, so
    # siunitx sets it as it is
    cell = str(cell)
    m = re.fullmatch(r"\\num\{([^{}]*)\}", cell)
    if m:
        n = re.fullmatch(r"(.*)\(([\d.]+)\)(.*)", m.group(1))
        if n and "." in n.group(2):
            return TeX(n.group(1) + "(" + n.group(2).replace(".", "").lstrip("0") + ")" + n.group(3))
        return TeX(m.group(1))
    if re.fullmatch(r"\d+", cell):
        return TeX(cell)
    return TeX("{" + cell + "}") if cell else TeX("")


def _formats(groups: Sequence[dict]) -> dict[str, TeX]:
    return {k: TeX("S[table-format=" + table_format(
        [row[k] for check in groups for row in check["rows"]]) + "]") for k in _S_KEYS}


def claim_table(run: Mapping[str, Any], claim: Mapping[str, Any], name: str | None = None) -> str:
    """The convergence table (LaTeX source) of one claim of ``run``.

    ``name`` (the file name, for the ``\\label``) defaults to the claim's slug.
    """
    q = float(claim.get("q") or 0.0)
    checks = [{"source": c, "heading": _heading(str(claim["claim"]), c), "rows": _rows(c, q),
               "footer": _footer(claim, c, q)} for c in claim["checks"]]
    general_lines = sum(math.ceil(len(str(n["text"])) / 110) for n in _claim_notes(run, claim, q))
    groups = _split(checks, min(MAX_ROWS, MAX_LINES - general_lines))
    label = "tab:gapverify:" + (Path(name).stem if name else "claim-" + _slug(str(claim["claim"])))
    general = _claim_notes(run, claim, q)
    for g in groups:
        for check in g:
            check["rows"] = [{**row, **{k: _s_cell(row[k]) for k in _S_KEYS}} for row in check["rows"]]
    parts = [{"caption": _caption(run, claim, i + 1, len(groups)),
              "label": TeX(label + (f":{i + 1}" if i else "")), "checks": g,
              "size": _font_size(g), "formats": _formats(g),
              "notes": general + [{"mark": "", "text": t} for t in
                                  _check_notes({"checks": [c["source"] for c in g]})]}
             for i, g in enumerate(groups)]
    return render("claim_table.tex", packages_comment=TeX(PACKAGES_COMMENT),
                  claim_id=str(claim["claim"]), parts=parts)


def _sizes_text(sizes: Sequence[int]) -> TeX:
    if not sizes:
        return TeX(DASH)
    lo, hi = min(sizes), max(sizes)
    return TeX(f"{lo}" if lo == hi else f"{lo}--{hi} ({len(sizes)})")


#: Short words of the compact tables (the notes spell them out).
_STATUS_SHORT = {"theorem": "thm", "derived": "der", "conjecture": "conj", "empirical": "emp"}
_VERDICT_SHORT = {"fail": r"\textbf{failed}", "flaky": "flaky", "recorded": "recorded",
                  "not assessed": "not assessed", "not verified": "lacks power",
                  "lacks power": "lacks power", "outside domain": "outside"}
_PASS_SHORT = {"theorem": "verified", "derived": "verified", "conjecture": "supported",
               "empirical": "reproduced"}


def _verdict_short(verdict: str, status: str) -> TeX:
    if verdict == "pass":
        return TeX(_PASS_SHORT.get(status, "passed"))
    return TeX(_VERDICT_SHORT.get(verdict, escape(verdict)))


def _percent(power) -> str:
    # power as a percentage for an S column; braced text where it is not a number
    if power == "inf" or (isinstance(power, float) and math.isinf(power)):
        return "{none}"
    if not _finite(power):
        return "{" + DASH + "}"
    if 100 * power < 0.01:
        return r"{$<$0.01}"
    return significant(100 * power, 2)


def _asserted(check: Mapping[str, Any]) -> bool:
    return check["verdict"] in ("pass", "fail", "lacks power")


def _worst_power(claim: Mapping[str, Any]):
    powers = [c.get("power") for c in claim["checks"]
              if _asserted(c) and c.get("power_class") != "exact"]
    if any(p == "inf" for p in powers):
        return "inf"
    finite = [p for p in powers if _finite(p)]
    return max(finite) if finite else None


def _targets(run: Mapping[str, Any]) -> TeX:
    targets = sorted({c["power_target"] for cl in run["claims"] for c in cl["checks"]
                      if _finite(c.get("power_target"))})
    return TeX(", ".join(r"\num{" + significant(100 * t, 2) + r"}\%" for t in targets)
               or "none recorded")


def _s_column(cells: Sequence[str]) -> TeX:
    return TeX("S[table-format=" + table_format(cells) + "]")


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


def _case_math(check: Mapping[str, Any], varying: Sequence[str]) -> TeX:
    from gapverify.theory.parameters import PARAMETERS

    case = check.get("case") or {}
    parts = []
    for name in varying:
        if name not in case:
            continue
        symbol = PARAMETERS[name].latex if name in PARAMETERS else r"\mathrm{" + escape(name) + "}"
        if name == "depth":
            symbol = r"\ell"
        parts.append(f"{symbol}={significant(float(case[name]), 3)}")
    src = ",".join(parts)
    return math_or_text(src, math=True) if src else TeX("")


def _varying(claim: Mapping[str, Any]) -> list[str]:
    cases = claim.get("cases") or []
    if len(cases) <= 1:
        return []
    keys = sorted({k for c in cases for k in c})
    return [k for k in keys if len({str(c.get(k)) for c in cases}) > 1]


def _model(check: Mapping[str, Any]) -> TeX:
    # a check outside its domain keeps its own model here: the verdict column says
    # "outside domain" (saying it twice made the standard run's tables 33 pt too wide)
    if check.get("power_class") == "recorded" or check["verdict"] == "recorded":
        return TeX("recorded")
    if check["kind"] in ("exact", "matching") or check.get("power_class") == "exact":
        return TeX("exact")
    if check.get("models"):
        from gapverify.verification.judging.verdict import family_label

        return TeX(family_label(check["models"], bool(check.get("corrected"))))
    rr = check.get("rate_range")
    if rr:
        return TeX(f"$r\\in[{rate_fraction(rr[0])},{rate_fraction(rr[1])}]$")
    if _finite(check.get("rate")):
        return TeX(f"$T^{{-{rate_fraction(check['rate'])}}}$")
    return TeX(DASH)


def _check_row(claim: Mapping[str, Any], check: Mapping[str, Any],
               varying: Sequence[str]) -> dict[str, TeX]:
    base, _ = split_case(check["label"])
    measured = _quantity(str(claim["claim"]), str(check["label"]))
    quantity = (_breakable(math_or_text(measured, math=True)) if measured is not None
                else _tt(base))
    rows = check.get("rows") or []
    last = rows[-1] if rows else None
    model = _model(check)
    exact = str(model) == "exact"
    if last is None:
        value = "{" + DASH + "}"
    elif exact:  # the largest residual at the largest size, no error
        value = "{" + r"\num{" + significant(last["error"], 2) + "}}"
    else:
        value = s_number(last["mean"], last["se"])
    value, capped = _capped(value, last["mean"]) if last is not None and not exact else (value, False)
    if check["kind"] == "distance":
        predicted = "0"
    elif check["kind"] == "matching":
        predicted = "{identity}"
    elif exact or last is None:
        predicted = trim_zeros(significant(check.get("predicted"), 6))
    else:
        predicted = trim_zeros(rounded_like(check.get("predicted"), last["se"]))
        if predicted == DASH:
            predicted = "{" + DASH + "}"
        elif capped:
            predicted = trim_zeros(f"{float(check['predicted']):.{MAX_DECIMALS}f}")
    beta = (s_number(check["beta"], check.get("beta_se")) if _finite(check.get("beta"))
            and not exact else "{" + DASH + "}")
    power = (_percent(check.get("power")) if check["verdict"] in ("pass", "lacks power", "fail")
             else "{" + DASH + "}")
    if capped:
        quantity = TeX(quantity + r"\tnote{g}")
    value, predicted, beta = (_unaligned_if_exponent(c) for c in (value, predicted, beta))
    return {"quantity": quantity, "case": _case_text(_case_math(check, varying)), "model": model,
            "value": TeX(value), "predicted": TeX(predicted), "beta": TeX(beta),
            "power": TeX(power),
            "verdict": _verdict_short(str(check["verdict"]), str(check.get("status", "")))}


def _unaligned_if_exponent(cell: str) -> str:
    r"""A number in exponent form (``-9.9(97)e-6``, a correlation measured at ``1e-5``) as a
    braced ``\num`` cell: set by siunitx but not aligned, so one such cell does not give
    the whole column an exponent field (which widened the table past the page)."""
    if cell.startswith("{") or not re.search(r"[\d)]e[-+]?\d", cell):
        return cell
    return "{" + r"\num{" + cell + "}}"


#: Decimals of a value in the per-check table: a value measured more precisely (a limit
#: reached to round-off, a deterministic statistic) is rounded there and marked; the
#: per-size tables keep every digit.
MAX_DECIMALS = 6


def _breakable(math: str) -> TeX:
    # a long quantity may break after a '/' outside braces (a p-column cell wraps it)
    out, depth = [], 0
    for ch in math:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        out.append(ch + (r"\allowbreak " if ch == "/" and depth == 0 else ""))
    return TeX("".join(out))


def _case_text(math: str) -> TeX:
    # "$a=1,b=2$" -> "$a=1$, $b=2$": a case breaks between its parameters
    if not (math.startswith("$") and math.endswith("$")):
        return TeX(math)
    return TeX(", ".join(f"${p}$" for p in math[1:-1].split(",")))


def _capped(text: str, value: float) -> tuple[str, bool]:
    m = re.fullmatch(r"(-?\d+)(?:\.(\d+))?(\([^)]*\))?", text)
    if m and len(m.group(2) or "") > MAX_DECIMALS:
        return f"{value:.{MAX_DECIMALS}f}", True
    return text, False


#: Widths of the two text columns of the per-check table (the rest take their natural
#: width): long quantities and cases wrap inside them.
QUANTITY_WIDTH = "3.6cm"
CASE_WIDTH = "2.6cm"

#: Lines (of rows and claim headings) of one float of the per-check table: 32, so that the
#: widest rows fit the report's 11 pt page too (36 overflowed it by up to 26 pt, measured
#: on a synthetic run of every check; a two-column paper's page fitted 36).
CHECK_ROWS = 32


def _glyphs(tex: str) -> int:
    # visible characters of a cell, about: a macro is one glyph, braces and scripts none
    tex = re.sub(r"\\(allowbreak|textstyle|displaystyle|left|right|raggedright)\b|\\,", "", str(tex))
    tex = re.sub(r"\\tnote\{[^}]*\}", "", tex)
    tex = re.sub(r"\\([A-Za-z]+|.)\s*", "x", tex)
    return len(re.sub(r"[{}$^_\s]", "", tex))


def _row_lines(row: Mapping[str, TeX]) -> int:
    """Printed lines of a row of the per-check table: its quantity wraps at about
    :data:`_QUANTITY_GLYPHS` glyphs a line, its case between parameters at about
    :data:`_CASE_GLYPHS`."""
    quantity = -(-_glyphs(row["quantity"]) // _QUANTITY_GLYPHS)
    lines, used = 1, 0
    for piece in str(row["case"]).split(", "):
        n = _glyphs(piece) + 1
        if used and used + n > _CASE_GLYPHS:
            lines, used = lines + 1, 0
        used += n
    return max(1, quantity, lines)


_QUANTITY_GLYPHS = 18
_CASE_GLYPHS = 15


def checks_table(run: Mapping[str, Any]) -> str:
    r"""The per-check table (LaTeX source), the main table of the report: one row per check
    and case, grouped by claim, with the mean at the largest size and its standard error,
    the prediction, the fitted rate, the power and the verdict, in siunitx ``S`` columns.

    At the standard profile this is about 200 rows, too many for one page: it is split into
    ``table*`` floats of at most :data:`CHECK_ROWS` rows (a claim is split only when it
    alone is longer), each with its own caption and notes; ``table*`` spans both columns of
    a two-column paper and is a plain float in a one-column document."""
    groups = []
    for claim in run["claims"]:
        varying = _varying(claim)
        sizes = claim.get("sizes") or []
        reg = registry_claim(str(claim["claim"]))
        heading = (_tt(claim["claim"]) + " [" + escape(claim["status"]) + "]"
                   + (f", $T\\le{max(sizes)}$" if sizes else "")
                   + ", " + escape(claim.get("replicates", "?")) + " replicates"
                   + (": " + math_or_text(reg.title) if reg is not None else ""))
        rows = [_check_row(claim, c, varying) for c in claim["checks"]]
        groups.append({"heading": TeX(heading), "rows": rows})
    parts, current, used = [], [], 0
    for g in groups:
        pieces, piece, lines = [], [], 2
        for row in g["rows"]:
            if piece and lines + _row_lines(row) > CHECK_ROWS:
                pieces.append(piece)
                piece, lines = [], 2
            piece.append(row)
            lines += _row_lines(row)
        pieces.append(piece)
        for k, piece in enumerate(pieces):
            size = 2 + sum(_row_lines(r) for r in piece)
            if current and used + size > CHECK_ROWS:
                parts.append(current)
                current, used = [], 0
            heading = g["heading"] if k == 0 else TeX(g["heading"] + " (continued)")
            current.append({"heading": heading, "rows": piece})
            used += size
    if current:
        parts.append(current)
    all_rows = [r for g in groups for r in g["rows"]]
    cols = {key: _s_column([r[key] for r in all_rows]) for key in ("value", "predicted", "beta", "power")}
    notes = [
        {"mark": "a", "text": TeX(
            r"Mean over the replicates at the largest size $T$ of the claim; digits in "
            r"parentheses: one standard error in the last digits. For a law, the Kolmogorov "
            r"distance to the limiting law (predicted $0$); for an exact check, the largest "
            r"residual $|x - L|$ over the replicates.")},
        {"mark": "b", "text": TeX(
            r"The prediction $L$ for the case, rounded like the measurement.")},
        {"mark": "c", "text": TeX(
            r"Fitted exponent of the mean absolute error, $|\text{error}| \approx C\,T^{-\hat\beta}$; "
            r"the check needs $\hat\beta + q\,\mathrm{se} \ge \alpha$ and the extrapolated limit "
            r"within $q\,\mathrm{se}$ of $L$.")},
        {"mark": "d", "text": TeX(
            r"$T^{-\alpha}$: the stated rate $\alpha$ (a lower bound); $r\in[\cdot]$: "
            r"$x_T = L + c\,T^{-r}$ with $r$ estimated in that range, $L$ in the "
            r"profile-likelihood interval; exact: within a round-off tolerance at every size; "
            r"recorded: shown, never asserted.")},
        {"mark": "e", "text": TeX(
            r"Smallest relative error of the prediction that the same samples reject on both "
            r"sides, in \%; target " + _targets(run) + ".")},
        {"mark": "f", "text": TeX(
            r"verified (theorem or derived), supported (conjecture), reproduced (empirical): "
            r"passed with power; lacks power: passed, but a wrong prediction would pass too; "
            r"outside: the case is outside the check's domain, not judged.")},
        {"mark": "g", "text": TeX(
            r"Rounded to " + str(MAX_DECIMALS) + r" decimals: the standard error is smaller "
            r"(a limit reached to round-off, or a deterministic statistic); the per-size "
            r"tables give every digit.")},
    ]
    rendered = []
    for i, part in enumerate(parts):
        caption = TeX(
            "Every check of a gapverify run, one row per check and parameter case: the "
            "mean at the largest $T$, the prediction, the fitted rate, the power and the "
            "verdict (" + _run_text(run) + ")"
            + (f"; part {i + 1} of {len(parts)}" if len(parts) > 1 else "") + ".")
        rendered.append({"caption": caption,
                         "label": TeX("tab:gapverify:checks" + (f":{i + 1}" if i else "")),
                         "groups": part})
    return render("checks_table.tex", packages_comment=TeX(PACKAGES_COMMENT), parts=rendered,
                  notes=notes, quantity_width=TeX(QUANTITY_WIDTH), case_width=TeX(CASE_WIDTH),
                  **{f"{k}_col": v for k, v in cols.items()})


def check_notes(run: Mapping[str, Any]) -> str:
    r"""The notes on the checks (LaTeX source, a ``description`` list): per claim, why each
    rate was stated (the registry's note, once per check, with its math typeset) and the
    verifier's reason for every case that did not pass or is exact."""
    items = []
    for claim in run["claims"]:
        notes = _check_notes(claim)
        if notes:
            items.append({"claim": _tt(claim["claim"]), "notes": notes})
    return render("check_notes.tex", packages_comment=TeX(PACKAGES_COMMENT), items=items)


def table_files(run: Mapping[str, Any]) -> dict[str, str]:
    """Every table of ``run`` as ``{file name: LaTeX source}``: the per-claim summary, the
    per-check table and the notes on the checks first, then the per-size convergence table
    of each claim in the run's order (:func:`table_names`; the report's appendix)."""
    files = {SUMMARY_NAME: summary_table(run), CHECKS_NAME: checks_table(run),
             NOTES_NAME: check_notes(run)}
    for name, claim in zip(table_names(run), run["claims"]):
        files[name] = claim_table(run, claim, name)
    return files


def write_tables(run: Mapping[str, Any], out_dir: str | Path) -> list[Path]:
    """Write :func:`table_files` into ``out_dir`` (created); returns the paths in order.
    Files are written as UTF-8 bytes with ``\\n`` line ends, so equal runs give equal
    files."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in table_files(run).items():
        path = out / name
        path.write_bytes(text.encode("utf-8"))
        paths.append(path)
    return paths
