r"""The per-check table, the main table of the report: one row per check and parameter
case (the mean at the largest size with its standard error, the prediction, the fitted
rate, the power, the verdict) in siunitx ``S`` columns (``table-format`` from the cells,
``group-digits=false``), as ``table*`` floats of at most :data:`CHECK_ROWS` lines."""
from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from gapverify.reports.latex import DASH, PACKAGES_COMMENT, TeX, escape, math_or_text
from gapverify.reports.numbers import rate_fraction, rounded_like, s_number, significant, trim_zeros
from gapverify.reports.render import render
from gapverify.reports.results import registry_claim
from gapverify.reports.table_cells import (
    _case_math, _case_text, _finite, _percent, _quantity, _run_text, _s_column, _targets, _tt,
    _varying, _verdict_short, common_parameters, parameters_math, split_case,
)

__all__ = ["checks_table", "CHECK_ROWS", "MAX_DECIMALS"]

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


def _parameters_phrase(claim: Mapping[str, Any], varying: Sequence[str]) -> TeX:
    # the parameters every case shares, in the claim's heading ("; s^2 = 0.25, gamma = 0.5");
    # those that vary are in the Case column of each row
    common = {k: v for k, v in common_parameters(claim).items() if k not in varying}
    if not common:
        return TeX("")
    return TeX(", " + ("cases at " if varying else "") + parameters_math(common))


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


def _heading_lines(heading: str) -> int:
    # a claim's heading spans the table (about 150 glyphs a line in \footnotesize)
    return -(-_glyphs(heading) // _HEADING_GLYPHS)


_HEADING_GLYPHS = 150
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
                   + _parameters_phrase(claim, varying)
                   + (": " + math_or_text(reg.title) if reg is not None else ""))
        rows = [_check_row(claim, c, varying) for c in claim["checks"]]
        groups.append({"heading": TeX(heading), "rows": rows})
    parts, current, used = [], [], 0
    for g in groups:
        head = 1 + _heading_lines(g["heading"])
        pieces, piece, lines = [], [], head
        for row in g["rows"]:
            if piece and lines + _row_lines(row) > CHECK_ROWS:
                pieces.append(piece)
                piece, lines = [], head
            piece.append(row)
            lines += _row_lines(row)
        pieces.append(piece)
        for k, piece in enumerate(pieces):
            size = head + sum(_row_lines(r) for r in piece)
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
    has_case = any(str(r["case"]) for r in all_rows)
    return render("checks_table.tex", packages_comment=TeX(PACKAGES_COMMENT), parts=rendered,
                  has_case=has_case, ncols=TeX(str(8 if has_case else 7)),
                  notes=notes, quantity_width=TeX(QUANTITY_WIDTH), case_width=TeX(CASE_WIDTH),
                  **{f"{k}_col": v for k, v in cols.items()})
