"""What a run's JSON carries beside its numbers: provenance and the verdict words.

* :func:`provenance`: the git commit of the checkout (when there is one), the versions of
  gapverify, Python, numpy, scipy, sympy and mpmath, a UTC timestamp and
  :data:`RESULTS_SCHEMA`, the version of the results format.
* :func:`with_words`: the JSON's ``verdict`` of a claim and of each check is its word in
  the one table of :mod:`verification.judging.outcomes` (``verified``, ``recorded``,
  ``not verified: lacks power``, ``failed``, ...), the word the verdict table prints; the
  machine verdict the judging used (``pass``, ``fail``, ...) is kept as ``outcome``, and
  a claim's ``reason`` says why it is not verified. ``outcomes.exit_code`` of the claims'
  words is the run's exit code.
  Readers of older files (``verdict`` = ``pass``) go through
  :func:`reports.results.load_run`, which accepts both.
* :func:`claims_text`, :func:`claim_text`, :func:`claim_line`, :func:`check_line` and
  :func:`claims_html`:
  the claims of a run's JSON as a person reads them in a notebook (the Python API's
  ``repr`` and ``_repr_html_``): a few lines, or an HTML table of claims, checks and
  verdicts.
"""
from __future__ import annotations

import datetime as _dt
import html
import math
import platform
import subprocess
from pathlib import Path
from typing import Any, Mapping

__all__ = ["RESULTS_SCHEMA", "provenance", "package_version", "git_commit", "with_words",
           "normalise_claim", "claims_text", "claim_text", "claim_line", "check_line",
           "claims_html"]

#: Version of the results JSON: 2 added ``provenance``, ``schema`` and ``outcome`` (the
#: machine verdict), and made ``verdict`` the table's word; a claim's ``reason`` (why it is
#: not verified) came later within schema 2, readers default it.
RESULTS_SCHEMA = 2


def with_words(claim: dict[str, Any]) -> dict[str, Any]:
    """``claim`` (a ``ClaimResult`` as a dict) with ``outcome`` = the machine verdict,
    ``reason`` = why it is not verified (one of
    :data:`~verification.judging.outcomes.NOT_VERIFIED_REASONS`, else ``""``) and
    ``verdict`` = its word in :mod:`verification.judging.outcomes`, for the claim and
    each of its checks (checks have no ``reason`` beyond their own text)."""
    from gapverify.verification.judging.outcomes import Outcome, check_word, claim_word
    from gapverify.verification.judging.verdict import claim_reason

    # plain words, not Outcome members: the results are plain data (JSON, YAML, a repr)
    claim = dict(claim)
    claim["outcome"] = str(claim["verdict"])
    # from the unverified lines, so that a claim merged over its cases reads its own
    claim["reason"] = str(claim_reason(claim["outcome"], claim.get("unverified") or []))
    claim["verdict"] = claim_word(claim["outcome"], str(claim.get("status", "")),
                                  claim["reason"] or Outcome.LACKS_POWER)
    checks = []
    for c in claim.get("checks", []):
        c = dict(c)
        c["outcome"] = str(c["verdict"])
        c["verdict"] = check_word(c["outcome"], str(c.get("status", "")))
        checks.append(c)
    claim["checks"] = checks
    return claim


def package_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def git_commit(where: Path | None = None) -> dict[str, Any] | None:
    """``{"commit": SHA, "dirty": bool}`` of the checkout holding the code, ``None``
    outside a git checkout or without git."""
    where = where or Path(__file__).resolve().parent.parent
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True,
                             text=True, timeout=10)
        if sha.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=where, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": sha.stdout.strip(), "dirty": bool(dirty.stdout.strip())}


def provenance(now: _dt.datetime | None = None) -> dict[str, Any]:
    """Where and with what a run was computed (see the module docstring)."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    git = git_commit()
    return {
        "schema": RESULTS_SCHEMA,
        "timestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_commit": git["commit"] if git else None,
        "git_dirty": git["dirty"] if git else None,
        "versions": {name: package_version(name)
                     for name in ("gapverify", "numpy", "scipy", "sympy", "mpmath")},
        "python": platform.python_version(),
    }


def normalise_claim(claim: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`with_words` for readers: ``verdict`` back to the machine
    outcome (a file of schema 1 has no ``outcome`` and is returned as it is), the word
    kept as ``verdict_word``."""
    claim = dict(claim)
    if "outcome" in claim:
        claim["verdict_word"], claim["verdict"] = claim["verdict"], claim["outcome"]
    checks = []
    for c in claim.get("checks", []) or []:
        c = dict(c)
        if "outcome" in c:
            c["verdict_word"], c["verdict"] = c["verdict"], c["outcome"]
        checks.append(c)
    if "checks" in claim:
        claim["checks"] = checks
    return claim


# --- a run's claims as a person reads them (the Python API's repr and _repr_html_) ---------

#: At most this many claims are listed by :func:`claims_text` (the rest are counted).
TEXT_CLAIMS = 15
#: The colour of a verdict word by its exit-code contribution (0, 1, 3), as the terminal's.
_COLOURS = {0: "#1a7f37", 1: "#cf222e", 3: "#9a6700"}


def _number(x: Any, digits: int = 5) -> str:
    return "-" if not isinstance(x, (int, float)) or isinstance(x, bool) else f"{x:.{digits}g}"


def _measured(check: Mapping[str, Any]) -> tuple[str, str]:
    """A check's measurement at its largest size (mean ± se, or its residual or distance)
    and that size, from the JSON's rows."""
    rows = check.get("rows") or []
    if not rows:
        return "-", "-"
    last = rows[-1]
    kind, T = check.get("kind"), str(last.get("T", "-"))
    if kind in ("exact", "matching"):
        return f"{_number(last.get('error'), 3)} (residual)", T
    if kind == "distance":
        return f"D={_number(last.get('error'), 4)}±{_number(last.get('error_se'), 2)}", T
    se = last.get("se")
    if not isinstance(se, (int, float)) or not math.isfinite(se) or last.get("n", 2) < 2:
        return f"{_number(last.get('mean'))} (n={last.get('n')})", T
    return f"{_number(last.get('mean'))}±{_number(se, 2)}", T


def _power(check: Mapping[str, Any]) -> str:
    from gapverify.verification.judging.power import power_text

    power = check.get("power")
    power = math.inf if power == "inf" else power  # the JSON's infinity
    return power_text(power if isinstance(power, (int, float)) else None)


def _predicted(check: Mapping[str, Any]) -> str:
    return "law" if check.get("kind") == "distance" else _number(check.get("predicted"), 6)


def check_line(check: Mapping[str, Any]) -> str:
    """One line for a check: its label, verdict word, prediction, measurement and power."""
    measured, T = _measured(check)
    return (f"{check.get('label')!r}: {check.get('verdict')}; predicted {_predicted(check)}, "
            f"measured {measured} at T={T}, power {_power(check)}")


def claim_line(claim: Mapping[str, Any]) -> str:
    """One line for a claim: its id, status, verdict word and power summary."""
    checks = claim.get("checks") or []
    return (f"{claim.get('claim')} ({claim.get('status')}): {claim.get('verdict')}; "
            f"{claim.get('power_summary') or 'no power summary'}; {len(checks)} check(s)")


def claim_text(claim: Mapping[str, Any], limit: int = 10) -> str:
    """A claim's line (:func:`claim_line`) and a line for each of its first ``limit``
    checks (:func:`check_line`)."""
    checks = claim.get("checks") or []
    lines = [claim_line(claim)] + [f"  {check_line(c)}" for c in checks[:limit]]
    if len(checks) > limit:
        lines.append(f"  ... and {len(checks) - limit} more check(s)")
    return "\n".join(lines)


def claims_text(claims: list[Mapping[str, Any]], head: str, limit: int = TEXT_CLAIMS) -> str:
    """``head`` and a line per claim (:func:`claim_line`), the first ``limit`` of them."""
    lines = [head] + [f"  {claim_line(c)}" for c in claims[:limit]]
    if len(claims) > limit:
        lines.append(f"  ... and {len(claims) - limit} more claim(s)")
    return "\n".join(lines)


def _word_html(word: str, code: int, bold: bool = False) -> str:
    text = html.escape(word)
    weight = "font-weight:bold;" if bold else ""
    return f'<td style="{weight}color:{_COLOURS.get(code, _COLOURS[3])}">{text}</td>'


def _check_row(check: Mapping[str, Any]) -> str:
    from gapverify.verification.judging.outcomes import CHECK_VERDICTS

    codes = {v.word: v.exit_code for v in CHECK_VERDICTS}
    measured, T = _measured(check)
    cells = [str(check.get("label", "")), str(check.get("status", "")), _predicted(check),
             measured, T, _power(check)]
    word = str(check.get("verdict", ""))
    return ("<tr>" + "".join(f'<td style="text-align:left">{html.escape(c)}</td>'
                             for c in cells[:2])
            + "".join(f"<td>{html.escape(c)}</td>" for c in cells[2:])
            + _word_html(word, codes.get(word, 3)) + "</tr>")


def claims_html(claims: list[Mapping[str, Any]], caption: str) -> str:
    """An HTML table of ``claims`` (the JSON's): a row per claim with its verdict word and
    power summary, then a row per check (label, status, predicted, measured ± se at the
    largest size, power, verdict word), each word coloured as in the terminal."""
    from gapverify.verification.judging.outcomes import claim_exit_code

    head = ("<thead><tr>" + "".join(f"<th>{h}</th>" for h in (
        "claim / check", "status", "predicted", "measured ± se", "T max", "power",
        "verdict")) + "</tr></thead>")
    rows = []
    for claim in claims:
        word = str(claim.get("verdict", ""))
        try:
            code = claim_exit_code(word)
        except (KeyError, ValueError):
            code = 3
        text = html.escape(f"{claim.get('claim')} ({claim.get('status')}): "
                           f"{claim.get('power_summary', '')}")
        rows.append(f'<tr><th colspan="6" style="text-align:left">{text}</th>'
                    f"{_word_html(word, code, bold=True)}</tr>")
        rows += [_check_row(c) for c in claim.get("checks") or []]
    return (f'<table class="gapverify-run"><caption>{html.escape(caption)}</caption>{head}'
            f"<tbody>{''.join(rows)}</tbody></table>")
