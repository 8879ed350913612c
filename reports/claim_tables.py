r"""The per-size convergence table of one claim (the report's appendix, ``report
--appendix``): per size :math:`T`, the measured mean with its standard error (concise form
``0.0490(12)``), the interval :math:`\bar x_T \pm q\,\mathrm{se}` the verdict used, the
predicted limit and the mean absolute error; under the sizes, the fitted exponent
:math:`\hat\beta`, the extrapolated limit and the verdict."""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from gapverify.reports.check_notes import _check_notes
from gapverify.reports.latex import DASH, PACKAGES_COMMENT, TeX, escape, math_or_text
from gapverify.reports.numbers import (
    interval, num, num_shorthand, rate_fraction, rounded_like, significant, table_format,
    trim_zeros,
)
from gapverify.reports.render import render
from gapverify.reports.results import registry_claim, verdict_word
from gapverify.reports.table_cells import (
    _case_math, _case_text, _finite, _parameters_text, _quantity, _registry_check, _run_text,
    _slug, _tt, split_case,
)

__all__ = ["claim_table", "MAX_ROWS", "MAX_LINES"]

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


def _rate_text(check: Mapping[str, Any], rate_status: str) -> TeX:
    rate = check.get("rate")
    if check["kind"] in ("exact", "matching"):
        return TeX("round-off tolerance")
    models = check.get("models")
    if models and check.get("corrected"):
        return TeX("the theory's finite-size mean subtracted, sizes pooled")
    if models:  # the models themselves on lines of their own (_heading)
        return TeX(f"{len(models)} finite-size models, the union of their intervals:"
                   if len(models) > 1 else "finite-size model:")
    rr = check.get("rate_range")
    if rr:
        return TeX(f"finite-size model $L + c\\,T^{{-r}}$, $r$ estimated in "
                   f"$[{rate_fraction(rr[0])}, {rate_fraction(rr[1])}]$")
    if not _finite(rate):
        return TeX("recorded, not asserted")
    origin = f" ({escape(rate_status)} rate)" if rate_status else ""
    return TeX(f"stated rate $T^{{-{rate_fraction(rate)}}}${origin}")


def _heading(claim_id: str, check: Mapping[str, Any]) -> list[TeX]:
    reg_check, _ = _registry_check(claim_id, str(check["label"]), check)
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
    # a model family's members one a line (on one line, causal.cesaro's three made the
    # standard run's table 262 pt wider than the page)
    models = [] if check.get("corrected") else list(check.get("models") or [])
    return ([TeX(first), TeX(r"\footnotesize\itshape " + second)]
            + [TeX(r"\footnotesize\quad " + escape(m)) for m in models])


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
