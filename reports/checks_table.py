r"""The per-check table, the main table of the report: one row per check and parameter
case (the mean at the largest size with its standard error, the prediction, the fitted
rate, the power, the verdict) in siunitx ``S`` columns (``table-format`` from the cells,
``group-digits=false``), as ``table*`` floats of at most :data:`FIRST_ROWS` lines (the
first, with the notes) and :data:`CHECK_ROWS` (the others)."""
from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from gapverify.reports.cells import (
    Cell, Code, Joined, Lines, Marked, Math, Number, Raw, RegistryMath, RegistryText, Text,
    md_escape, s_cell,
)
from gapverify.reports.latex import DASH, PACKAGES_COMMENT, TeX, escape
from gapverify.reports.model_cell import ModelKind, finite_size_model
from gapverify.reports.numbers import concise, rate_fraction, rounded_like, significant, trim_zeros
from gapverify.reports.render import render
from gapverify.reports.results import registry_claim, replicates_text
from gapverify.reports.table_cells import (
    ASSERTED, _finite, _quantity, _run_text, _s_column, _targets, _varying, _verdict_short,
    case_cell, common_parameters, parameters_math, percent_cell, split_case,
)

__all__ = ["checks_table", "check_groups", "model_cell", "CHECK_COLUMNS", "CHECK_ROWS",
           "FIRST_ROWS", "MAX_DECIMALS"]

def model_cell(check: Mapping[str, Any]) -> Cell:
    """The finite-size model of a check (:func:`reports.model_cell.finite_size_model`, the
    terminal's too) as a cell. A check outside its domain keeps its own model here: the
    verdict column says "outside domain" (saying it twice made the standard run's tables
    33 pt too wide)."""
    model = finite_size_model(check)
    if model.kind in (ModelKind.RECORDED, ModelKind.EXACT):
        return Text(model.kind.value)
    if model.kind is ModelKind.FAMILY:
        words = escape(model.family).split(" ", 1)
        if len(words) == 2 and words[0].replace("'", "").isalpha() and words[1].isalpha():
            # "theory's mean" on two short lines (one line with a "reproduced" verdict took
            # the standard run's table 15 pt past the text width)
            return Lines(*map(Text, model.family.split(" ", 1)))
        return Text(model.family)
    if model.kind is ModelKind.RANGE:
        interval = Math(f"r\\in[{rate_fraction(model.low)},{rate_fraction(model.high)}]")
        # the theory's finite-size term subtracted first (the Tracy-Widom offset of an edge)
        return Lines(Text("corrected,"), interval) if model.corrected else interval
    if model.kind is ModelKind.RATE and _finite(model.rate):
        return Math(f"T^{{-{rate_fraction(model.rate)}}}")
    return Text(DASH)


def _parameters_phrase(claim: Mapping[str, Any], varying: Sequence[str]) -> Cell:
    # the parameters every case shares, in the claim's heading ("; s^2 = 0.25, gamma = 0.5");
    # those that vary are in the Case column of each row
    common = {k: v for k, v in common_parameters(claim).items() if k not in varying}
    if not common:
        return Text("")
    return Joined((Text(", " + ("cases at " if varying else "")),
                   Raw(parameters_math(common), md_escape(parameters_math(common)))))


def _value(check: Mapping[str, Any], last, exact: bool) -> tuple[Number, bool]:
    # the mean at the largest size (the largest residual of an exact check, set unaligned),
    # and whether it was rounded to MAX_DECIMALS
    if last is None:
        return Number(DASH), False
    if exact:
        return Number(significant(last["error"], 2), aligned=False), False
    text = concise(last["mean"], last["se"])
    if text == DASH:
        return Number(DASH), False
    m = re.fullmatch(r"(-?\d+)(?:\.(\d+))?(\([^)]*\))?", text)
    if m and len(m.group(2) or "") > MAX_DECIMALS:
        return Number(f"{last['mean']:.{MAX_DECIMALS}f}"), True
    return Number(text), False


def _predicted(check: Mapping[str, Any], last, exact: bool, capped: bool) -> Cell:
    # the prediction, rounded like the measurement
    if check["kind"] == "distance":
        return Number("0")
    if check["kind"] == "matching":
        return Text("identity")
    if exact or last is None:
        text = trim_zeros(significant(check.get("predicted"), 6))
        return Raw(DASH, DASH) if text == DASH else Number(text)  # a dash unbraced, as ever
    if capped:
        return Number(trim_zeros(f"{float(check['predicted']):.{MAX_DECIMALS}f}"))
    return Number(trim_zeros(rounded_like(check.get("predicted"), last["se"])))


def _check_row(claim: Mapping[str, Any], check: Mapping[str, Any],
               varying: Sequence[str]) -> dict[str, Cell]:
    """The cells of one check's row: quantity, case, model, value, predicted, beta, power
    and verdict (a value rounded to :data:`MAX_DECIMALS` marks its quantity ``g``)."""
    base, _ = split_case(check["label"])
    measured = _quantity(str(claim["claim"]), str(check["label"]))
    quantity = RegistryMath(measured) if measured is not None else Code(base)
    rows = check.get("rows") or []
    last = rows[-1] if rows else None
    model = model_cell(check)
    exact = model == Text("exact")
    value, capped = _value(check, last, exact)
    beta = (Number(concise(check["beta"], check.get("beta_se")))
            if _finite(check.get("beta")) and not exact else Number(DASH))
    power = percent_cell(check.get("power")) if check["verdict"] in ASSERTED else Number(DASH)
    return {"quantity": Marked(quantity, "g") if capped else quantity,
            "case": case_cell(check, varying), "model": model, "value": value,
            "predicted": _predicted(check, last, exact, capped), "beta": beta, "power": power,
            "verdict": _verdict_short(str(check["verdict"]), str(check.get("status", "")))}


#: Columns of the per-check table: key, LaTeX head (with its note mark), Markdown head.
#: The marks run a, b, c, ... in the order a reader meets them (``g``, of a rounded value,
#: stands in the rows), and the notes in that order.
CHECK_COLUMNS = (
    ("quantity", "Quantity", "Quantity"), ("case", "Case", "Case"),
    ("model", r"Model\tnote{a}", "Model"), ("value", r"{Value\tnote{b}}", "Value"),
    ("predicted", r"{Pred.\tnote{c}}", "Prediction"),
    ("beta", r"{$\hat\beta$\tnote{d}}", "$\\hat\\beta$"),
    ("power", r"{Power\tnote{e}}", "Power (%)"), ("verdict", r"Verdict\tnote{f}", "Verdict"),
)


def _quantity_latex(cell: Cell) -> TeX:
    # a registry quantity may break after a '/' (_breakable), its mark after it
    if isinstance(cell, Marked):
        return TeX(_quantity_latex(cell.cell) + r"\tnote{" + cell.mark + "}")
    return _breakable(cell.latex()) if isinstance(cell, RegistryMath) else cell.latex()


def _latex_row(row: Mapping[str, Cell]) -> dict[str, TeX]:
    # a row's cells as LaTeX; numbers in S columns, those in exponent form unaligned
    out = {k: row[k].latex() for k in ("case", "model", "verdict")}
    out.update({k: s_cell(row[k], unalign_exponent=True) for k in ("value", "predicted", "beta")})
    return {**out, "quantity": _quantity_latex(row["quantity"]), "power": s_cell(row["power"])}


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


#: The two text columns of the per-check table (tabularx ``X`` columns, the rest at
#: their natural width): long quantities and cases wrap inside what the others leave of
#: the line, shared in these proportions (they sum to the number of X columns, 2).
QUANTITY_SHARE = 1.2
CASE_SHARE = 0.8
#: The width of both in ems of the table's type (\scriptsize) on the narrowest page the
#: tables are made for, the standard article's 345 pt text at 7 pt type, 49 ems, less
#: about 32 ems of the other columns (the report's 484 pt at 8 pt and a two-column
#: paper's 469 pt at 7 pt leave more): the estimates of :func:`_row_lines` take it, so
#: that a float estimated to fit the narrow page fits every page.
TEXT_EMS = 15.0


def _x_column(share: float) -> TeX:
    # a tabularx X column of `share` of the X width, its text ragged right
    return TeX(r">{\hsize=" + f"{share:g}" + r"\hsize\linewidth=\hsize\raggedright\arraybackslash}X")


#: Lines (of rows and claim headings) of the first float of the per-check table, the one
#: that carries the notes, and of every further float (their captions point to those
#: notes). With the notes on every float, 32 lines a float fitted the widest rows on the
#: report's 11 pt page (36 overflowed it by up to 26 pt, measured on a synthetic run of
#: every check; a two-column paper's page fitted 36) and the standard run's table took 14
#: floats; without them a float holds CHECK_ROWS lines on both pages
#: (tests/reports/test_reports_layout.py typesets the synthetic run on both).
FIRST_ROWS = 34
CHECK_ROWS = 54
#: Fewest rows of a claim set at the end of a float, the rest continuing on the next one;
#: a claim with fewer rows left over starts on the next float whole.
SPLIT_ROWS = 3


def _glyphs(tex: str) -> int:
    # visible characters of a cell, about: a macro is one glyph, braces and scripts none
    tex = re.sub(r"\\(allowbreak|textstyle|displaystyle|left|right|raggedright)\b|\\,", "", str(tex))
    tex = re.sub(r"\\tnote\{[^}]*\}", "", tex)
    tex = re.sub(r"\\([A-Za-z]+|.)\s*", "x", tex)
    return len(re.sub(r"[{}$^_\s]", "", tex))


def _row_lines(row: Mapping[str, TeX]) -> int:
    """Printed lines of a row of the per-check table: its quantity wraps at about
    :data:`_QUANTITY_GLYPHS` glyphs a line, its case between parameters at about
    :data:`_CASE_PT` points (:func:`_math_width`); a model or verdict of two words takes
    two lines."""
    quantity = -(-_glyphs(row["quantity"]) // _QUANTITY_GLYPHS)
    lines, used = 1, 0.0
    for piece in str(row["case"]).split(", "):
        n = _math_width(piece) + _COMMA_PT
        if used and used + _SPACE_PT + n > _CASE_PT:
            lines, used = lines + 1, 0.0
        used += (_SPACE_PT if used else 0.0) + n
    stacked = 2 if any(r"\begin{tabular}" in str(row[k]) for k in ("model", "verdict")) else 1
    return max(stacked, quantity, lines)


def _heading_lines(heading: str) -> int:
    # a claim's heading spans the table (about _HEADING_GLYPHS glyphs a line)
    return -(-_glyphs(heading) // _HEADING_GLYPHS)


#: Glyphs of a claim's heading a line (it spans the table: 49 ems on the narrowest page)
#: and of a quantity (its share of :data:`TEXT_EMS`, about 0.63 em a glyph of math).
_HEADING_GLYPHS = 95
_QUANTITY_GLYPHS = int(QUANTITY_SHARE / 2 * TEXT_EMS / 0.63)
#: The case column's width (its share of TEXT_EMS) in points of 9 pt type, and the widths in
#: 9 pt type of the pieces of a case such as ``$s^{2}=0.25$, $\sigma_{V}=1.5$``: a digit, a
#: letter or macro (a Greek letter), a character in a sub- or superscript, a relation with
#: its spaces, a point, a comma and the space after it. Set a little wide, so that an
#: estimate errs towards a line too many (calibrated on the four-parameter cases of
#: tests/reports: "l = 1, gamma = 0.5" on one line, "s2 = 0.25, sigma_V = 1.5" on two).
_CASE_PT = CASE_SHARE / 2 * TEXT_EMS * 9.0
_DIGIT_PT, _LETTER_PT, _SCRIPT_PT, _REL_PT, _POINT_PT = 4.6, 4.9, 3.4, 12.5, 2.5
_COMMA_PT, _SPACE_PT = 2.5, 3.0


def _math_width(piece: str) -> float:
    r"""Width in points of one parameter of a case (``$\gamma=0.5$``), about."""
    tex = re.sub(r"\\(allowbreak|,)|[$\s]", "", str(piece))
    width, i = 0.0, 0
    while i < len(tex):
        ch = tex[i]
        if ch in "^_":  # a script: its group or its one token, at script size
            m = re.match(r"[\^_](\{[^}]*\}|\\[A-Za-z]+|.)", tex[i:])
            body = m.group(1).strip("{}")
            width += _SCRIPT_PT * max(1, len(re.sub(r"\\[A-Za-z]+", "x", body)))
            i += len(m.group(0))
            continue
        m = re.match(r"\\[A-Za-z]+", tex[i:])
        if m:
            width += _LETTER_PT
            i += len(m.group(0))
            continue
        width += (_DIGIT_PT if ch.isdigit() else _REL_PT if ch in "=<>" else
                  _POINT_PT if ch in ".," else 0.0 if ch in "{}" else _LETTER_PT)
        i += 1
    return width


def _pack(groups: Sequence[Mapping[str, Any]], first: int = FIRST_ROWS,
          rest: int = CHECK_ROWS) -> list[list[dict]]:
    """The floats of the per-check table: claims in order, at most ``first`` printed lines
    on the first float and ``rest`` on each further one (:func:`_row_lines`, a heading
    :func:`_heading_lines` and its rule). A claim that does not fit where the float stands
    is split when at least :data:`SPLIT_ROWS` of its rows fit there and as many follow,
    its heading repeated "(continued)"; otherwise it starts the next float."""
    parts: list[list[dict]] = []
    current: list[dict] = []
    used, cap = 0, first

    def close():
        nonlocal current, used, cap
        parts.append(current)
        current, used, cap = [], 0, rest

    for g in groups:
        head = 1 + _heading_lines(g["heading"])
        rows, i, k = list(g["rows"]), 0, 0
        while True:
            take, lines = 0, head
            while i + take < len(rows) and lines + _row_lines(rows[i + take]) <= cap - used:
                lines += _row_lines(rows[i + take])
                take += 1
            left = len(rows) - i - take
            if 0 < left < SPLIT_ROWS:  # leave SPLIT_ROWS rows to continue with
                take, left = take - (SPLIT_ROWS - left), SPLIT_ROWS
            if current and left and take < SPLIT_ROWS:
                close()  # too little of the claim fits here: it starts the next float
                continue
            take = max(take, 1 if i < len(rows) else 0)  # a float holds at least one row
            piece = rows[i:i + take]
            current.append({"heading": g["heading"] if k == 0
                            else TeX(g["heading"] + " (continued)"), "rows": piece})
            used += head + sum(_row_lines(r) for r in piece)
            i, k = i + take, k + 1
            if i >= len(rows):
                break
            close()
    if current:
        parts.append(current)
    return parts


def _heading(claim: Mapping[str, Any], varying: Sequence[str]) -> Cell:
    # a claim's heading: id, status, largest size, replicates, shared parameters, title
    sizes = claim.get("sizes") or []
    reg = registry_claim(str(claim["claim"]))
    parts = [Code(claim["claim"]), Text(" [" + str(claim["status"]) + "]")]
    if sizes:
        parts += [Text(", "), Math(f"T\\le{max(sizes)}")]
    parts += [Text(", " + replicates_text(claim) + " replicates per size"),
              _parameters_phrase(claim, varying)]
    if reg is not None:
        parts += [Text(": "), RegistryText(reg.title)]
    return Joined(tuple(parts))


def check_groups(claims: Sequence[Mapping[str, Any]]) -> list[dict]:
    """Per claim, its ``heading`` (id, status, largest size, replicates, shared
    parameters, title) and the ``rows`` of its checks (:func:`_check_row`), as cells."""
    groups = []
    for claim in claims:
        varying = _varying(claim)
        rows = [_check_row(claim, c, varying) for c in claim["checks"]]
        groups.append({"heading": _heading(claim, varying), "rows": rows})
    return groups


def _groups(claims: Sequence[Mapping[str, Any]]) -> list[dict]:
    # the groups of check_groups as LaTeX
    return [{"heading": g["heading"].latex(), "rows": [_latex_row(r) for r in g["rows"]]}
            for g in check_groups(claims)]


def _notes(run: Mapping[str, Any], corrected: bool) -> list[dict]:
    # the notes of the table, in the order of their marks (CHECK_COLUMNS)
    return [
        {"mark": "a", "text": TeX(
            r"$T^{-\alpha}$: the stated rate $\alpha$ (a lower bound); $r\in[\cdot]$: "
            r"$x_T = L + c\,T^{-r}$ with $r$ estimated in that range, $L$ in the "
            r"profile-likelihood interval; "
            + (r"corrected: the theory's finite-size term (an edge's Tracy-Widom offset "
               r"$\kappa\,2^{-2/3}\,\mathrm{E}\,\mathrm{TW}_1\,T^{-2/3}$, or a known mean) "
               r"subtracted from $x_T$ first; " if corrected else "")
            + r"exact: within a round-off tolerance at every size; "
            r"recorded: shown, never asserted.")},
        {"mark": "b", "text": TeX(
            r"Mean over the replicates at the largest size $T$ of the claim; digits in "
            r"parentheses: one standard error in the last digits. For a law, the Kolmogorov "
            r"distance to the limiting law (predicted $0$); for an exact check, the largest "
            r"residual $|x - L|$ over the replicates.")},
        {"mark": "c", "text": TeX(
            r"The prediction $L$ for the case, rounded like the measurement.")},
        {"mark": "d", "text": TeX(
            r"Fitted exponent of the mean absolute error, $|\text{error}| \approx C\,T^{-\hat\beta}$; "
            r"the check needs $\hat\beta + t\,\mathrm{se} \ge \alpha$ and the extrapolated limit "
            r"within $\max(t\,\mathrm{se}, \rho)$ of $L$, $t$ the Student-t quantile at the "
            r"estimate's degrees of freedom for the claim's false-alarm level, Bonferroni over "
            r"its tests, and $\rho = P^*|\hat L|/4$ the resolution (a quarter of the power "
            r"target $P^*$).")},
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


def checks_table(run: Mapping[str, Any], claims: Sequence[Mapping[str, Any]] | None = None,
                 label: str = "tab:gapverify:checks", title: str = "") -> str:
    r"""The per-check table (LaTeX source), the main table of the report: one row per check
    and case, grouped by claim, with the mean at the largest size and its standard error,
    the prediction, the fitted rate, the power and the verdict, in siunitx ``S`` columns.
    ``claims`` (default: every claim of the run) picks the claims, ``label`` names the
    first float and ``title`` heads every caption (the report's table of the peers'
    results: ``"Peers' results"``).

    At the standard profile this is about 200 rows, too many for one page: it is split into
    ``table*`` floats (:func:`_pack`: at most :data:`FIRST_ROWS` lines on the first, which
    carries the notes, and :data:`CHECK_ROWS` on each further one, whose caption points to
    those notes); ``table*`` spans both columns of a two-column paper and is a plain float
    in a one-column document."""
    groups = _groups(run["claims"] if claims is None else claims)
    parts = _pack(groups)
    all_rows = [r for g in groups for r in g["rows"]]
    cols = {key: _s_column([r[key] for r in all_rows]) for key in ("value", "predicted", "beta", "power")}
    corrected = any(c.get("corrected") for claim in (run["claims"] if claims is None else claims)
                    for c in claim.get("checks", ()))
    notes = _notes(run, corrected)
    rendered = []
    lead = escape(title) + ": every" if title else "Every"
    for i, part in enumerate(parts):
        if i == 0:
            caption = TeX(
                lead + " check of a gapverify run, one row per check and parameter case: the "
                "mean at the largest $T$, the prediction, the fitted rate, the power and the "
                "verdict (" + _run_text(run) + ")"
                + (f"; part 1 of {len(parts)}" if len(parts) > 1 else "") + ".")
        else:
            caption = TeX(
                lead + " check, continued from Table~\\ref{" + label + "} (its notes hold "
                "for this part; " + _run_text(run) + f"); part {i + 1} of {len(parts)}.")
        rendered.append({"caption": caption,
                         "label": TeX(label + (f":{i + 1}" if i else "")),
                         "groups": part, "notes": i == 0})
    has_case = any(str(r["case"]) for r in all_rows)
    return render("checks_table.tex", packages_comment=TeX(PACKAGES_COMMENT), parts=rendered,
                  has_case=has_case, ncols=TeX(str(8 if has_case else 7)),
                  header=TeX(" & ".join(head for key, head, _ in CHECK_COLUMNS
                                        if key != "case" or has_case)),
                  notes=notes, quantity_col=_x_column(QUANTITY_SHARE if has_case else 1.0),
                  case_col=_x_column(CASE_SHARE),
                  **{f"{k}_col": v for k, v in cols.items()})
