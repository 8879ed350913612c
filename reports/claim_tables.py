r"""The per-size convergence table of one claim (the report's appendix, ``report
--appendix``): per size :math:`T`, the measured mean with its standard error (concise form
``0.0490(12)``), the interval :math:`\bar x_T \pm t\,\mathrm{se}` (:math:`t` the Student-t
quantile the judging uses, :func:`student_t`), the
predicted limit and the mean absolute error; under the sizes, the fitted exponent
:math:`\hat\beta`, the extrapolated limit and the verdict."""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from gapverify.reports.check_notes import _check_notes
from gapverify.reports.cells import (
    Bold, Cell, Interval, Joined, Math, Number, Raw, RegistryMath, Text, s_cell,
)
from gapverify.reports.latex import DASH, PACKAGES_COMMENT, TeX, escape, math_or_text
from gapverify.reports.numbers import (
    rate_fraction, rounded_like, shorthand, significant, table_format, trim_zeros,
)
from gapverify.reports.render import render
from gapverify.verification.judging.outcomes import Outcome
from gapverify.verification.judging.resolution import widened_interval
from gapverify.reports.results import registry_claim, replicates_text, verdict_word
from gapverify.reports.table_cells import (
    _finite, _parameters_text, _quantity, _registry_check, _run_text, _slug, _tt, case_cell,
    split_case,
)

__all__ = ["claim_table", "claim_checks", "SIZE_COLUMNS", "MAX_ROWS", "MAX_LINES"]

#: Body rows of one table float; a claim with more is split into parts (a float taller
#: than a page cannot be placed).
MAX_ROWS = 40
#: Lines of one table float: its rows and every note, general ones included (\footnotesize,
#: about :data:`NOTE_CHARS` characters a line); the rows get what the general notes leave.
MAX_LINES = 40
#: Characters of a line of the notes (\footnotesize) and of a check's heading on the
#: narrowest page the tables are made for (the standard article's 345 pt text; the
#: report's page holds 110): a float estimated to fit there fits every page.
NOTE_CHARS = 85
#: Widest cells (characters of the five columns together) set in \small, and in
#: \footnotesize; wider, the table is set in \scriptsize (78 filled the report's 484 pt
#: text in \small; the article's 345 pt text holds 60 in \small, 72 in \scriptsize: a
#: deterministic statistic's 13 decimals, measured and its interval, took 72).
SMALL_CHARS = 60
FOOTNOTE_CHARS = 66
_KIND_TEXT = {
    "limit": "limit",
    "distance": "Kolmogorov distance to the limiting law",
    "exact": "exact at every size",
    "matching": "exact spectrum identity (optimal matching)",
}


def _rate_text(check: Mapping[str, Any], rate_status: str) -> Cell:
    rate = check.get("rate")
    if check["kind"] in ("exact", "matching"):
        return Text("round-off tolerance")
    models = check.get("models")
    if models and check.get("corrected"):
        return Text("the theory's finite-size mean subtracted, sizes pooled")
    if models:  # the models themselves on lines of their own (_heading)
        return Text(f"{len(models)} finite-size models, the union of their intervals:"
                    if len(models) > 1 else "finite-size model:")
    rr = check.get("rate_range")
    if rr:
        return Joined((Text("finite-size model "), Math(r"L + c\,T^{-r}"), Text(", "),
                       Math("r"), Text(" estimated in "),
                       Math(f"[{rate_fraction(rr[0])}, {rate_fraction(rr[1])}]")))
    if not _finite(rate):
        return Text("recorded, not asserted")
    origin = Text(f" ({rate_status} rate)" if rate_status else "")
    return Joined((Text("stated rate "), Math(f"T^{{-{rate_fraction(rate)}}}"), origin))


def _heading(claim_id: str, check: Mapping[str, Any]) -> list[Cell]:
    """A check's heading lines: its name, quantity and status; its case, kind and model;
    then a model family's members one a line (on one line, causal.cesaro's three made the
    standard run's table 262 pt wider than the page)."""
    reg_check, _ = _registry_check(claim_id, str(check["label"]), check)
    base, case = split_case(str(check["label"]))
    first = [Bold(Text(base))]
    if (quantity := _quantity(claim_id, str(check["label"]))) is not None:
        first += [SPACE, RegistryMath(quantity)]
    first += [SPACE, Text("[" + str(check.get("status", "?")) + "]")]
    kind = check["kind"]
    second = [Text(_KIND_TEXT.get(kind, kind))]
    if case:  # the case on the second line: a label with its case is too long for one
        keys = [kv.split("=")[0].strip() for kv in case.split(",")]
        shown = case_cell(check, keys) if check.get("case") else Text("")
        second = [Text("case "), shown or Text(case), Text("; ")] + second
    if kind == "distance" and _finite(check.get("predicted")):
        second += [Text(" (scale "), Number(significant(check["predicted"], 6)), Text(")")]
    second += [Text("; "), _rate_text(check, getattr(reg_check, "rate_status", ""))]
    models = [] if check.get("corrected") else list(check.get("models") or [])
    return [Joined(tuple(first)), Joined(tuple(second))] + [Text(m) for m in models]


#: The space between the pieces of a check's first heading line.
SPACE = Raw(r"\quad ", " ")


def _predicted_text(check: Mapping[str, Any], finest: float | None) -> Number:
    # the prediction at the precision of the check's best measurement, trailing zeros
    # dropped: an exact value (1, 2) does not pretend to a precision (1.0000000)
    if check["kind"] == "distance":
        return Number("0")
    return Number(trim_zeros(rounded_like(check.get("predicted"), finest)))


def _interval(centre, half_width, se) -> Cell:
    # centre -+ half_width, both ends rounded like the centre's concise form
    if not (_finite(centre) and _finite(half_width)):
        return Number(DASH)
    return Interval(rounded_like(centre - half_width, se), rounded_like(centre + half_width, se))


def student_t(q: float, n) -> float:
    """The quantile of an interval of a mean of ``n`` replicates, as the judging takes it
    (:func:`verification.judging.inference.student_quantile`): the Student-t quantile at
    ``n - 1`` degrees of freedom with the tail probability of the normal quantile ``q``
    (the claim's level, Bonferroni over its tests); ``q`` itself when ``n`` is unknown,
    ``0`` (no interval) when ``q`` is."""
    from gapverify.verification.judging.inference import student_quantile

    if not q > 0:
        return 0.0
    if not (_finite(n) and n >= 2):
        return q if n is None else math.inf
    return student_quantile(q, float(n) - 1)


def _fewest(check: Mapping[str, Any]):
    # the fewest replicates of a size: the fit rows' degrees of freedom are at least n - 1
    ns = [r["n"] for r in check.get("rows") or [] if _finite(r.get("n"))]
    return min(ns) if ns else None


def _size_row(check: Mapping[str, Any], r: Mapping[str, Any], q: float, finest) -> dict:
    # the cells of one size, its interval at the Student-t quantile of its replicates
    if check["kind"] in ("exact", "matching"):
        return {"T": Number(str(int(r["T"]))), "measured": Number(DASH),
                "interval": Number(DASH),
                "predicted": (Number(significant(check.get("predicted"), 6))
                              if check["kind"] == "exact" else Text("identity")),
                "error": Number(significant(r.get("error"), 2)), "space": False}
    return {"T": Number(str(int(r["T"]))), "measured": Number(shorthand(r["mean"], r["se"])),
            "interval": _interval(r["mean"], student_t(q, r.get("n")) * r["se"], r["se"])
            if q > 0 and _finite(r["se"]) else Number(DASH),
            "predicted": _predicted_text(check, finest),
            "error": Number(shorthand(r["error"], r["error_se"])), "space": False}


def _limit_row(check: Mapping[str, Any], q: float, finest) -> dict | None:
    # T -> oo: the limit extrapolated (with a rate range, its profile-likelihood interval)
    lim, lim_se = check.get("limit_hat"), check.get("limit_se")
    if not _finite(lim):
        return None
    band = check.get("limit_interval")
    target = check.get("predicted") if band or check["kind"] != "distance" else 0.0
    # the limits the verdict accepts: widened to at least L_hat +- the resolution
    rho = check.get("resolution") if _finite(check.get("resolution")) else 0.0
    if band:
        low, high = widened_interval(band[0], band[1], lim, rho)
        inter = Interval(significant(low, 4), significant(high, 4))
    else:
        t = student_t(q, _fewest(check))
        inter = (_interval(lim, max(t * lim_se, rho), lim_se) if q > 0 and _finite(lim_se)
                 else Number(DASH))
    return {"T": Math(r"T\to\infty"), "measured": Number(shorthand(lim, lim_se)),
            "interval": inter, "predicted": _predicted_text(check, finest),
            "error": (Number(shorthand(abs(lim - target), lim_se)) if _finite(target)
                      else Number(DASH)), "space": True}


def _rows(check: Mapping[str, Any], q: float) -> list[dict[str, Cell]]:
    """One row per size, then (for a rated check) the fit rows: ``T -> oo`` (the limit
    extrapolated at the stated rate) and ``beta`` (the fitted exponent of the error against
    the stated rate), in the same columns."""
    rows = check.get("rows") or []
    ses = [r["se"] for r in rows if _finite(r.get("se")) and r["se"] > 0]
    finest = min(ses) if ses else None
    out = [_size_row(check, r, q, finest) for r in rows]
    for row in out[1:]:
        row["predicted"] = Text("")
    limit = _limit_row(check, q, finest)
    if limit is not None:
        out.append(limit)
        if check.get("limit_interval"):
            return out
    beta, beta_se = check.get("beta"), check.get("beta_se")
    if _finite(beta):
        out.append({
            "T": Math(r"\hat\beta"), "measured": Number(shorthand(beta, beta_se)),
            "interval": (_interval(beta, student_t(q, _fewest(check)) * beta_se, beta_se)
                         if q > 0 and _finite(beta_se) else Number(DASH)),
            "predicted": Math(f"\\alpha = {rate_fraction(check.get('rate'))}"),
            "error": Text(""), "space": limit is None})
    return out


def _footer(claim: Mapping[str, Any], check: Mapping[str, Any], q: float) -> list[Cell]:
    word = verdict_word(str(check["verdict"]), str(check.get("status", "")))
    parts = [Text("verdict: "), Bold(Text(word))]
    if check.get("failing_size") is not None:
        parts += [Text(" (first failing size "), Math(f"T = {int(check['failing_size'])}"),
                  Text(")")]
    return [Joined(tuple(parts + [Text("; "), _power_text(check)]))]


def _power_text(check: Mapping[str, Any]) -> Cell:
    """``power: rejects +-x% (target y%)``: the smallest relative error of the prediction
    that the same samples reject on both sides."""
    power, target = check.get("power"), check.get("power_target")
    cls = check.get("power_class") or ""
    if power == "inf" or (isinstance(power, float) and math.isinf(power)):
        parts = [Text("power: none (a 100% error passes)")]
    elif _finite(power):
        parts = [Text("power: rejects "), Math(r"\pm"), Number(significant(100 * power, 2)),
                 Text("%")]
    else:
        return Text(cls if cls else "power: not measured")
    if _finite(target):
        parts += [Text(" (target "), Number(significant(100 * target, 2)), Text("%)")]
    return Joined(tuple(parts + ([Text(f", {cls}")] if cls else [])))


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


def _interval_note(run: Mapping[str, Any], claim: Mapping[str, Any], q: float) -> TeX:
    """The note on the intervals: the Student-t quantile the judging takes (the normal
    quantile ``q`` read as a tail probability, :func:`student_t`), at the claim's
    replicates."""
    if not q > 0:
        return TeX("No quantile recorded in the results: intervals omitted.")
    level = (r"\num{" + significant(run["level"], 3) + "}" if _finite(run.get("level"))
             else "(not recorded)")
    tests = (" " + escape(claim["tests"]) if claim.get("tests") else "")
    n = claim.get("replicates")
    at_n = (r" ($t = \num{" + significant(student_t(q, n), 3) + r"}$ at $n = " + str(int(n)) + "$)"
            if _finite(n) and n >= 2 else "")
    return TeX(
        r"Mean $\pm\, t\,\mathrm{se}$, $t$ the Student-t quantile at $n - 1$ degrees of "
        r"freedom ($n$ replicates)" + at_n + r" with the tail probability of the normal "
        r"quantile $q = \num{" + significant(q, 3) + r"}$: the claim's false-alarm level "
        + level + ", Bonferroni over its" + tests + " tests. Rows $T\\to\\infty$ and "
        r"$\hat\beta$ take $t$ at the fewest replicates of a size (a fit's degrees of "
        r"freedom are at least as many, its interval at most this wide).")


def _claim_notes(run: Mapping[str, Any], claim: Mapping[str, Any], q: float) -> list[dict]:
    # the notes, in the order of their marks (SIZE_COLUMNS), then the unmarked ones
    notes = [
        {"mark": "a", "text": TeX(
            r"Rows $T\to\infty$: the limit $\hat L$ extrapolated from "
            r"$\bar x_T = \hat L + c\,T^{-\alpha}$ at the stated rate $\alpha$ (for a law, the "
            r"distance's limit, predicted $0$); the check needs "
            r"$|\hat L - L| \le \max(t\,\mathrm{se}, \rho)$, $\rho = P^*|\hat L|/4$ the "
            r"resolution (a quarter of the power target $P^*$; none for a law). "
            r"Rows $\hat\beta$: the exponent of $|\text{error}| \approx C\,T^{-\hat\beta}$ (weighted "
            r"log-log fit); the check needs $\hat\beta + t\,\mathrm{se} \ge \alpha$ ($t$: note c). "
            r"For a finite-size model with an estimated rate, the row $T\to\infty$ gives the "
            r"best fit and the profile-likelihood interval of the limit, widened to at least "
            r"$\hat L \pm \rho$, which must contain the prediction. Power: the smallest relative error of the prediction that the "
            r"same samples reject on both sides; worse than the profile's target, the "
            r"prediction lacks power and is not verified.")},
        {"mark": "b", "text": TeX(
            "Mean over the replicates at each size; the digits in parentheses are one "
            "standard error in the last digits shown.")},
        {"mark": "c", "text": _interval_note(run, claim, q)},
        {"mark": "d", "text": TeX(
            r"Mean over the replicates of $|\text{measured} - \text{predicted}|$; for a law, "
            "the Kolmogorov distance itself; for an exact check, the largest residual.")},
        {"mark": "", "text": TeX(
            "Root seed " + _tt(claim.get("root_seed", "?")) + "; "
            + escape(replicates_text(claim)) + " replicates per size; code version "
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
    # printed lines of a check's notes (about NOTE_CHARS characters a line in \footnotesize)
    texts = [check.get("rate_note") or ""]
    if check["verdict"] != Outcome.PASS or check["kind"] in ("exact", "matching"):
        texts.append(check.get("reason") or "")
    return sum(math.ceil(len(t) / NOTE_CHARS) for t in texts if t)


def _spanning_lines(lines: Sequence[Cell]) -> int:
    # printed lines of a check's heading and footer lines, each wrapping at the table's width
    return sum(max(1, math.ceil(len(line.markdown()) / NOTE_CHARS)) for line in lines)


#: Characters of an interval set on one line; a longer one (the ends of a deterministic
#: statistic's 13 decimals) is set on two, its low end above its high one.
INTERVAL_CHARS = 24


def _long(cell: Cell) -> bool:
    # an interval too long for one line of its column
    return isinstance(cell, Interval) and len(cell.low) + len(cell.high) + 4 > INTERVAL_CHARS


def _interval_latex(cell: Cell) -> TeX:
    # an interval, on two lines (right-aligned, as its column) when it is long
    if not _long(cell):
        return cell.latex()
    return TeX(r"\begin{tabular}[t]{@{}r@{}}[\num{" + cell.low + r"},\\ \num{" + cell.high
               + r"}]\end{tabular}")


def _row_count(rows: Sequence[Mapping[str, Any]]) -> int:
    # printed lines of a check's rows (a long interval takes two)
    return sum(2 if _long(r.get("interval")) else 1 for r in rows)


def _split(checks: Sequence[dict], budget: int) -> list[list[dict]]:
    # consecutive groups of checks whose lines (sizes, fit rows, heading, footer, notes)
    # fit one float
    parts, current, used = [], [], 0.0
    for check in checks:
        size = (_row_count(check["rows"]) + _spanning_lines(check["heading"] + check["footer"])
                + _note_lines(check["source"]))
        if current and used + size > budget:
            parts.append(current)
            current, used = [], 0.0
        current.append(check)
        used += size
    return parts + [current] if current else parts or [[]]


def _font_size(groups: Sequence[dict]) -> TeX:
    # the largest type in which the widest cells fit the narrowest text (SMALL_CHARS)
    width = {}
    for check in groups:
        for row in check["rows"]:
            for key in ("T", "measured", "interval", "predicted", "error"):
                for line in str(row[key]).split("\\\\"):  # the widest line of a cell
                    text = re.sub(r"\\num|\\(begin|end)\{tabular\}(\[t\]\{@\{\}r@\{\}\})?|[{}$\\]", "", line)
                    width[key] = max(width.get(key, 0), len(text))
    chars = sum(width.values())
    return TeX(r"\small" if chars <= SMALL_CHARS else
               r"\footnotesize" if chars <= FOOTNOTE_CHARS else r"\scriptsize")


#: Columns of the per-size table: key, LaTeX head (with its note mark), Markdown head;
#: and those that are siunitx S columns.
SIZE_COLUMNS = (
    ("T", r"{$T$\tnote{a}}", "$T$"), ("measured", r"{measured\tnote{b}}", "measured"),
    ("interval", r"interval\tnote{c}", "interval"), ("predicted", r"{predicted}", "predicted"),
    ("error", r"{$|\text{error}|$\tnote{d}}", "$\\vert\\text{error}\\vert$"),
)
_S_KEYS = ("T", "measured", "predicted", "error")


def _latex_check(check: Mapping[str, Any]) -> dict:
    # a check's heading lines, rows (S columns as siunitx reads them) and footer as LaTeX
    heading = [line.latex() for line in check["heading"]]
    heading[1:2] = [TeX(r"\footnotesize\itshape " + line) for line in heading[1:2]]
    heading[2:] = [TeX(r"\footnotesize\quad " + line) for line in heading[2:]]
    rows = [{**{k: s_cell(c) if k in _S_KEYS else _interval_latex(c) if k == "interval"
                 else c.latex() for k, c in row.items() if k != "space"}, "space": row["space"]}
            for row in check["rows"]]
    return {**check, "heading": heading, "rows": rows,
            "footer": [line.latex() for line in check["footer"]]}


def _formats(groups: Sequence[dict]) -> dict[str, TeX]:
    return {k: TeX("S[table-format=" + table_format(
        [row[k] for check in groups for row in check["rows"]]) + "]") for k in _S_KEYS}


def claim_checks(claim: Mapping[str, Any]) -> list[dict]:
    """Per check of ``claim``: its ``heading`` lines, its ``rows`` (one per size, then the
    fit's), its ``footer`` (the verdict and the power), as cells, and its ``source``."""
    q = float(claim.get("q") or 0.0)
    return [{"source": c, "heading": _heading(str(claim["claim"]), c), "rows": _rows(c, q),
             "footer": _footer(claim, c, q)} for c in claim["checks"]]


def claim_table(run: Mapping[str, Any], claim: Mapping[str, Any], name: str | None = None) -> str:
    """The convergence table (LaTeX source) of one claim of ``run``.

    ``name`` (the file name, for the ``\\label``) defaults to the claim's slug.
    """
    q = float(claim.get("q") or 0.0)
    checks = claim_checks(claim)
    general = _claim_notes(run, claim, q)
    general_lines = sum(math.ceil(len(str(n["text"])) / NOTE_CHARS) for n in general)
    groups = _split(checks, min(MAX_ROWS, MAX_LINES - general_lines))
    label = "tab:gapverify:" + (Path(name).stem if name else "claim-" + _slug(str(claim["claim"])))
    parts = [{"caption": _caption(run, claim, i + 1, len(groups)),
              "label": TeX(label + (f":{i + 1}" if i else "")),
              "checks": [_latex_check(c) for c in g],
              "notes": general + [{"mark": "", "text": t} for t in
                                  _check_notes({"checks": [c["source"] for c in g]})]}
             for i, g in enumerate(groups)]
    for part in parts:  # the font and the columns' formats from the cells as LaTeX sets them
        part["size"], part["formats"] = _font_size(part["checks"]), _formats(part["checks"])
    return render("claim_table.tex", packages_comment=TeX(PACKAGES_COMMENT),
                  claim_id=str(claim["claim"]), parts=parts,
                  header=TeX(" & ".join(head for _, head, _ in SIZE_COLUMNS)))
