r"""LaTeX tables of a judged run: one convergence table per claim and a summary table.

Read from the run's results (:mod:`reports.results`), never from new samples. For each
check of a claim the convergence table lists, per size :math:`T`, the measured mean with
its standard error (concise form ``0.0490(12)``), the interval
:math:`\bar x_T \pm q\,\mathrm{se}` the verdict used, the predicted limit and the mean
absolute error; under the sizes, the fitted exponent :math:`\hat\beta` of the error with
its interval, the extrapolated limit and the verdict. The root seed, replicate count,
code version and parameters are in the table notes (threeparttable). The summary lists
every claim with the status recorded in the run and the verdict word of
:func:`reports.results.verdict_word`.

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

from reports.latex import (
    DASH,
    PACKAGES_COMMENT,
    TeX,
    escape,
    interval,
    math_or_text,
    num,
    num_shorthand,
    rate_fraction,
    rounded_like,
    significant,
    trim_zeros,
)
from reports.render import render
from reports.results import registry_claim, split_case, verdict_word

__all__ = ["claim_table", "summary_table", "table_files", "write_tables", "table_names",
           "SUMMARY_NAME", "MAX_ROWS"]

SUMMARY_NAME = "summary.tex"
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


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def _rate_text(check: Mapping[str, Any], rate_status: str) -> TeX:
    rate = check.get("rate")
    if check["kind"] in ("exact", "matching"):
        return TeX("round-off tolerance")
    rr = check.get("rate_range")
    if rr:
        return TeX(f"finite-size model $L + c\\,T^{{-r}}$, $r$ estimated in "
                   f"$[{rate_fraction(rr[0])}, {rate_fraction(rr[1])}]$")
    if not _finite(rate):
        return TeX("recorded, not asserted")
    origin = f" ({escape(rate_status)} rate)" if rate_status else ""
    return TeX(f"stated rate $T^{{-{rate_fraction(rate)}}}${origin}")


def _heading(claim_id: str, check: Mapping[str, Any]) -> list[TeX]:
    reg_check, prediction = _registry_check(claim_id, str(check["label"]))
    first = r"\textbf{" + escape(check["label"]) + "}"
    if prediction is not None:
        first += r"\quad " + math_or_text(prediction.quantity, math=True)
    first += r"\quad [" + escape(check.get("status", "?")) + "]"
    kind = check["kind"]
    second = escape(_KIND_TEXT.get(kind, kind))
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
    from theory.parameters import PARAMETERS

    parts = []
    for name in sorted(parameters):
        value = parameters[name]
        symbol = (math_or_text(PARAMETERS[name].latex, math=True) if name in PARAMETERS
                  else _tt(name))
        parts.append(TeX(f"{symbol} $=$ {num(significant(float(value), 6))}"))
    return TeX(", ".join(parts) if parts else "none")


def _check_notes(claim: Mapping[str, Any]) -> list[TeX]:
    # why each rate (once per check, not once per case), then the verifier's reason for
    # every check that did not simply pass and for the exact ones (their tolerance)
    notes, seen = [], set()
    for check in claim["checks"]:
        base, _ = split_case(check["label"])
        if check.get("rate_note") and base not in seen:
            seen.add(base)
            notes.append(TeX(r"\textbf{" + escape(base) + "}: " + escape(check["rate_note"])))
    for check in claim["checks"]:
        if check["verdict"] != "pass" or check["kind"] in ("exact", "matching"):
            reason, _, command = str(check.get("reason", "")).partition("; reproduce: ")
            text = (r"\textbf{" + escape(check["label"]) + "} ("
                    + escape(verdict_word(str(check["verdict"]), str(check.get("status", ""))))
                    + "): " + escape(reason))
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
            "normal quantile at the run's family-wise false-alarm level "
            + (r"\num{" + significant(run["level"], 3) + "}" if _finite(run.get("level"))
               else "(not recorded)")
            + ", Bonferroni over every test of the run." if q > 0 else
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


def _caption(claim: Mapping[str, Any], part: int, parts: int) -> TeX:
    reg = registry_claim(str(claim["claim"]))
    text = _tt(claim["claim"]) + " [" + escape(claim["status"]) + "]"
    if reg is not None:
        text += ": " + math_or_text(reg.title)
    text += ". Verdict: " + escape(verdict_word(str(claim["verdict"]), str(claim["status"])))
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
    parts = [{"caption": _caption(claim, i + 1, len(groups)),
              "label": TeX(label + (f":{i + 1}" if i else "")), "checks": g,
              "size": _font_size(g),
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


def summary_table(run: Mapping[str, Any]) -> str:
    """The summary table (LaTeX source): claim, status, sizes, replicates, checks passed,
    verdict word, one row per claim in the run's order."""
    rows = []
    for claim in run["claims"]:
        asserted = [c for c in claim["checks"] if c["verdict"] in ("pass", "fail", "lacks power")]
        passed = sum(c["verdict"] == "pass" for c in asserted)
        recorded = len(claim["checks"]) - len(asserted)
        summary = claim.get("power_summary") or ""
        checks = (summary.replace(" predictions verified with power", "") if summary
                  else f"{passed} of {len(asserted)}" + (f" (+{recorded} recorded)" if recorded else ""))
        word = verdict_word(str(claim["verdict"]), str(claim["status"]))
        rows.append({"claim": _tt(claim["claim"]), "status": escape(claim["status"]),
                     "sizes": _sizes_text(claim.get("sizes") or []),
                     "replicates": escape(claim.get("replicates", DASH)),
                     "checks": escape(checks),
                     "verdict": TeX(r"\textbf{" + escape(word) + "}")})
    seeds = sorted({int(c["root_seed"]) for c in run["claims"] if "root_seed" in c})
    seed_text = ", ".join(_tt(s) for s in seeds) if seeds else escape(run.get("root_seed", "?"))
    notes = [
        {"mark": "a", "text": TeX(
            "The status recorded with the run: the weakest status of the claim's predictions "
            "(theorem, derived, empirical, conjecture).")},
        {"mark": "b", "text": TeX(
            "Predictions verified with power, of those a verdict needs (theorem, derived, "
            "conjecture): every check of the prediction passed and rejects the prediction "
            "made wrong by the profile's power target; recorded checks are shown, never "
            "counted.")},
        {"mark": "c", "text": TeX(
            r"\emph{verified}: every asserted check of a theorem or derived claim passed; "
            r"\emph{supported (conjecture)}: it passed, but the claim includes a conjecture and "
            r"is not a theorem; \emph{reproduced (empirical)}: a measured law was reproduced; "
            r"\emph{not verified (lacks power)}: no check failed, but a prediction could not "
            r"be told from a wrong one at these sizes; "
            r"\emph{flaky}: a failure that did not recur on replay.")},
        {"mark": "", "text": TeX(
            "Root seed " + seed_text + "; profile " + escape(run.get("profile", "?"))
            + "; false-alarm level per claim "
            + (r"\num{" + significant(run["level"], 3) + "}" if _finite(run.get("level"))
               else "?") + "; code version " + _tt(run.get("code_version", "?")) + ".")},
    ]
    if _finite(run.get("perturb")) and run["perturb"]:
        notes.append({"mark": "", "text": TeX(
            r"\textbf{Every claim was judged against a statement perturbed by} \num{"
            + significant(run["perturb"], 3) + "}: a failure is the expected outcome.")})
    return render("summary_table.tex", packages_comment=TeX(PACKAGES_COMMENT),
                  caption=TeX("Claims judged in this run, their status and verdict."),
                  label=TeX("tab:gapverify:summary"), rows=rows, notes=notes)


def table_files(run: Mapping[str, Any]) -> dict[str, str]:
    """Every table of ``run`` as ``{file name: LaTeX source}``: the summary first, then one
    file per claim in the run's order (:func:`table_names`)."""
    files = {SUMMARY_NAME: summary_table(run)}
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
