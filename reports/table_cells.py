r"""Cells and phrases every table of the report shares: a check's base label and case
(:func:`split_case`), what it measures (the registry's quantity), a case's parameters as
math, the run's profile, seed and level for a caption, and the short words of the compact
tables (status, verdict, power in \%).

Read from the run's results (:mod:`reports.results`) and the registry, never from new
samples.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from gapverify.reports.cells import (
    Cell, Code, Joined, Math, Number, Raw, Text, Verdict, two_lines,
)
from gapverify.reports.latex import DASH, TeX, escape, math_or_text
from gapverify.reports.numbers import num, percent, significant, table_format
from gapverify.reports.results import registry_claim, verdict_word
from gapverify.reports.results import split_case as _split_bracket_case
from gapverify.verification.judging.outcomes import Outcome

__all__ = ["split_case", "commit_text", "paper_result", "paper_short", "common_parameters",
           "own_references", "run_references", "cites_paper", "reference_marks",
           "parameters_math", "BEYOND", "PEERS_PREFIX", "is_peer", "claim_blocks", "Block", "two_lines",
           "percent_cell", "case_cell", "ASSERTED", "commit_cell", "run_cell"]

def split_case(label: str) -> tuple[str, str]:
    """``("sr_X", "depth=2, gamma=1")`` from a check label: the suite labels the checks of
    a claim that sweeps cases ``"sr_X @ depth=2, gamma=1"``
    (:func:`verification.running.suite._merge`); older results wrote ``"sr_X [depth=2, gamma=1]"``.

    Reading only the bracket form left every case's label whole, so a rate note written
    once per check was printed under each case's label, where it read as a statement about
    that case (a depth-1 row carried the note "(l, gamma) = (2, 1)", and the registry's
    quantity and rate status were never found)."""
    base, sep, case = str(label).partition(" @ ")
    if sep:
        return base.strip(), case.strip()
    return _split_bracket_case(label)


#: Ids of the peers' results (``peers/``, loaded through the ``gapverify.claims`` entry
#: points): results of other papers, checked beside the paper's claims, never as its own.
PEERS_PREFIX = "peers."


def is_peer(claim_id: object) -> bool:
    """Whether a claim id names a peer's result (:data:`PEERS_PREFIX`)."""
    return str(claim_id).startswith(PEERS_PREFIX)


@dataclass(frozen=True)
class Block:
    """Claims of a run that the report keeps together: ``key`` (``"paper"`` or
    ``"peers"``), the ``title`` of their part of the summary and of their sections (empty
    when the run has no peers' results: nothing to tell apart), and the ``claims`` in the
    run's order."""

    key: str
    title: str
    claims: tuple


#: Titles of the two blocks of a run that holds peers' results.
PAPER_TITLE = "Claims of the paper (and this suite's extensions)"
PEERS_TITLE = "Peers' results"


def claim_blocks(run: Mapping[str, Any]) -> list[Block]:
    """The run's claims split into the paper's (with this suite's extensions, every id but
    :data:`PEERS_PREFIX`) and the peers' results, each block in the run's order and only
    when not empty; a run without peers' results is one untitled block (issue 24: the
    report separates the paper's claims from the peers')."""
    claims = list(run["claims"])
    peers = tuple(c for c in claims if is_peer(c["claim"]))
    if not peers:
        return [Block("paper", "", tuple(claims))]
    own = tuple(c for c in claims if not is_peer(c["claim"]))
    return ([Block("paper", PAPER_TITLE, own)] if own else []) + [Block("peers", PEERS_TITLE, peers)]


def _slug(claim_id: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-") or "claim"


def _tt(text: object) -> TeX:
    return TeX(r"\texttt{" + escape(text) + "}")


def _registry_check(claim_id: str, label: str, result: Mapping[str, Any] | None = None):
    """The registry's Check and Prediction behind a result's check label, when known. A
    label can name several checks (a prediction judged through two statistics, one
    recorded; or split by domain, a rate at depth >= 2 and a model family at depth 1): the
    result's ``statistic`` and ``case`` pick the one that judged it."""
    reg = registry_claim(claim_id)
    if reg is None:
        return None, None
    base, _ = split_case(label)
    matches = [c for c in reg.checks if c.label == base]
    if result is not None and len(matches) > 1:
        stat, case = result.get("statistic"), result.get("case")
        narrowed = [c for c in matches if stat is None or c.statistic == stat]
        if isinstance(case, Mapping):
            narrowed = [c for c in narrowed if c.applies(case)]
        matches = narrowed or matches
    if not matches:
        return None, None
    check = matches[0]
    try:
        return check, reg.prediction(check.prediction)
    except KeyError:
        return check, None


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


def _parameters_text(parameters: Mapping[str, Any]) -> TeX:
    from gapverify.theory.parameters import PARAMETERS

    parts = []
    for name in sorted(parameters):
        value = parameters[name]
        symbol = (math_or_text(PARAMETERS[name].latex, math=True) if name in PARAMETERS
                  else _tt(name))
        parts.append(TeX(f"{symbol} $=$ {num(significant(float(value), 6))}"))
    return TeX(", ".join(parts) if parts else "none")


def commit_cell(run: Mapping[str, Any]) -> Cell:
    """``commit 969bee7`` (and `` with uncommitted changes`` when the checkout was dirty)
    from the results' ``provenance`` (:func:`verification.running.output.provenance`);
    empty when the run recorded no commit (not run from a git checkout, or older
    results)."""
    prov = run.get("provenance") or {}
    sha = prov.get("git_commit")
    if not sha:
        return Text("")
    dirty = [Text(" with uncommitted changes")] if prov.get("git_dirty") else []
    return Joined(tuple([Text("commit "), Code(str(sha)[:7])] + dirty))


def commit_text(run: Mapping[str, Any]) -> TeX:
    """:func:`commit_cell` as LaTeX (``""`` without a commit)."""
    return commit_cell(run).latex()


def run_cell(run: Mapping[str, Any], claim: Mapping[str, Any] | None = None) -> Cell:
    """``commit 969bee7, profile quick, root seed 1, false-alarm level 0.01 per claim``:
    what a caption needs to stand alone (the code that ran, its sizes and replicates, its
    randomness and its false-alarm level)."""
    seeds = sorted({int(c["root_seed"]) for c in ([claim] if claim else run["claims"])
                    if "root_seed" in c})
    seed = (", ".join(str(x) for x in seeds) if seeds else str(run.get("root_seed", "?")))
    level = Number(significant(run["level"], 3)) if _finite(run.get("level")) else Text("?")
    commit = commit_cell(run)
    return Joined(((commit, Text(", ")) if commit else ()) + (
        Text("profile " + str(run.get("profile") or "?") + ", root seed " + seed
             + ", false-alarm level "), level, Text(" per claim")))


def _run_text(run: Mapping[str, Any], claim: Mapping[str, Any] | None = None) -> TeX:
    """:func:`run_cell` as LaTeX."""
    return run_cell(run, claim).latex()


#: Leading words of a numbered result in ``Claim.paper_result`` and their short forms.
_RESULT_SHORT = {"theorem": "Thm", "proposition": "Prop.", "lemma": "Lem.", "corollary": "Cor.",
                 "figure": "Fig.", "section": "Sec.", "remark": "Rem."}
_NUMBERED = re.compile(r"\b(" + "|".join(_RESULT_SHORT) + r")\s+(\d+(?:\.\d+)*)", re.I)
BEYOND = "beyond the paper"


def paper_result(claim_id: str) -> str:
    """The result of the paper a claim checks, as the registry states it
    (``Claim.paper_result``, "" when the registry does not say or does not hold the
    claim: then the report claims nothing about it)."""
    reg = registry_claim(claim_id)
    return str(getattr(reg, "paper_result", "") or "").strip() if reg is not None else ""


def own_references(claim_id: str) -> tuple[str, ...]:
    """The references of a claim that names no result of the paper (a user's claim of a
    claim file or a plug-in: ``Claim.references``); ``()`` for the paper's claims, whose
    result :func:`paper_result` names, and for a claim the registry does not hold."""
    reg = registry_claim(claim_id)
    if reg is None or paper_result(claim_id):
        return ()
    return tuple(str(r).strip() for r in getattr(reg, "references", ()) if str(r).strip())


def run_references(run: Mapping[str, Any]) -> list[str]:
    """Every reference of the run's claims that name no result of the paper
    (:func:`own_references`), once each, in the run's order: the numbers ``[1]``, ``[2]``
    the tables cite them by."""
    refs: list[str] = []
    for claim in run["claims"]:
        refs += [r for r in own_references(str(claim["claim"])) if r not in refs]
    return refs


def cites_paper(run: Mapping[str, Any]) -> bool:
    """Whether a claim of the run names a result of the paper (or of the peers' papers):
    only then do the tables and the report cite it."""
    return any(paper_result(str(c["claim"])) for c in run["claims"])


def reference_marks(claim_id: str, refs: Sequence[str]) -> str:
    """``ref. 1, 2``: the numbers of a claim's own references in ``refs``
    (:func:`run_references`); ``---`` when it has none."""
    numbers = [str(refs.index(r) + 1) for r in own_references(claim_id) if r in refs]
    if not numbers:
        return DASH
    return ("refs. " if len(numbers) > 1 else "ref. ") + ", ".join(numbers)


def paper_short(text: str) -> str:
    """The short form of a ``paper_result`` for a table cell: the paper's own numbered
    result when the text names one (``"BCC 2012 Theorem 1.1 (the paper's Theorem 2)"`` ->
    ``"Thm 2"``; a number of another work: ``"Thm 1.1"``), ``"beyond"`` for this project's
    extensions, the kind of result without a number (``"Prop."``) when the text says its
    number is not confirmed, else ``"---"``; the full text goes to the claim's notes."""
    text = str(text or "").strip()
    if not text:
        return DASH
    if text.lower().startswith(BEYOND):
        return "beyond"
    own = re.search(r"the paper's\s+(" + "|".join(_RESULT_SHORT) + r")\s+(\d+(?:\.\d+)*)", text, re.I)
    m = own or _NUMBERED.search(text)
    if m:
        return _RESULT_SHORT[m.group(1).lower()] + " " + m.group(2)
    kind = re.search(r"\b(theorem|proposition|lemma|corollary|figure)\b", text, re.I)
    if kind:
        return _RESULT_SHORT[kind.group(1).lower()]
    if "model" in text.lower():
        return "model"
    return "paper" if "the paper" in text.lower() else DASH


def common_parameters(claim: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters every case of ``claim`` shares (all of them for a claim of one case,
    the parameters of a run with ``--set``)."""
    cases = claim.get("cases") or []
    if len(cases) <= 1:
        return dict(cases[0] if cases else claim.get("parameters") or {})
    return {k: v for k, v in cases[0].items() if all(c.get(k) == v for c in cases)}


def parameters_math(parameters: Mapping[str, Any], names: Sequence[str] | None = None) -> TeX:
    r"""``$s^2=0.25$, $\gamma=0.5$``: parameters as math, one ``$...$`` each so that a
    cell breaks between them; ``names`` picks and orders them (default: sorted)."""
    return _case_text(_case_math({"case": dict(parameters)},
                                 list(names) if names is not None else sorted(parameters)))


#: Short words of the compact tables (the notes spell them out).
_STATUS_SHORT = {"theorem": "thm", "derived": "der", "conjecture": "conj", "empirical": "emp"}


def _verdict_short(verdict: str, status: str, reason: str | None = None) -> Verdict:
    """The verdict word of :mod:`gapverify.verification.judging.outcomes` (the same as the
    terminal's and the JSON's), bold when it failed; "outside domain", "lacks power" on two
    lines in LaTeX, so that the column stays narrow."""
    return Verdict(verdict_word(verdict, status, reason), failed=verdict == Outcome.FAIL,
                   split=" ")


def percent_cell(power) -> Cell:
    """A power as a percentage, a number of an ``S`` column at one decimal in every row
    (:func:`reports.numbers.percent`: ``3.0``, ``2.9``, ``<0.1``): ``none`` where nothing
    is rejected, a dash where it was not measured."""
    if power == "inf" or (isinstance(power, float) and math.isinf(power)):
        return Text("none")
    if not _finite(power):
        return Number(DASH)
    return Number(percent(power))


#: The outcomes of a check that assert its prediction (with or without power).
ASSERTED = (Outcome.PASS, Outcome.FAIL, Outcome.LACKS_POWER)


def _asserted(check: Mapping[str, Any]) -> bool:
    return check["verdict"] in ASSERTED


def _targets(run: Mapping[str, Any]) -> TeX:
    targets = sorted({c["power_target"] for cl in run["claims"] for c in cl["checks"]
                      if _finite(c.get("power_target"))})
    return TeX(", ".join(r"\num{" + significant(100 * t, 2) + r"}\%" for t in targets)
               or "none recorded")


def _s_column(cells: Sequence[str]) -> TeX:
    return TeX("S[table-format=" + table_format(cells) + "]")


def case_cell(check: Mapping[str, Any], varying: Sequence[str]) -> Cell:
    """A check's case, its ``varying`` parameters as math, one ``$...$`` each
    (``$\\ell=2$, $\\gamma=0.5$``); empty for a claim of one case."""
    pieces = str(_case_text(_case_math(check, varying))).split(", ")
    if not any(pieces) or not all(p.startswith("$") and p.endswith("$") for p in pieces):
        return Raw(_case_text(_case_math(check, varying)))
    return Joined(tuple(Math(p[1:-1]) for p in pieces), ", ")


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


def _case_text(math: str) -> TeX:
    # "$a=1,b=2$" -> "$a=1$, $b=2$": a case breaks between its parameters
    if not (math.startswith("$") and math.endswith("$")):
        return TeX(math)
    return TeX(", ".join(f"${p}$" for p in math[1:-1].split(",")))
