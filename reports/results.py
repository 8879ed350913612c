"""Where a report's numbers come from: a judged run, read back, never recomputed.

A run is the plain data of :func:`verification.running.suite.results_json` (what ``gapverify run
--json`` writes and what :meth:`verification.running.store.Store.last_run` returns). This module
reads it from a results JSON file or from a store, fetches a claim's stored measurements
(the spectra behind the figures) with the run's own parameters, seed and code version, and
turns a verdict and a status into the words a report prints.

The words are the one table of :mod:`verification.judging.outcomes`, the same the terminal
and the results JSON print. They carry the status: a claim whose weakest prediction is a
conjecture passes as "supported", never as "verified" (``docs/claims.md``: only theorems
and derived predictions read *verified*; a verifier that reports a conjecture as a theorem
is wrong even when the numbers pass).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

from gapverify.verification.judging.outcomes import (
    CHECK_VERDICTS, CLAIM_VERDICTS, PASS_WORDS, Outcome, check_word, claim_word,
)

__all__ = [
    "ResultsError",
    "load_run",
    "load_run_data",
    "load_measurements",
    "experiment_of",
    "verdict_word",
    "claim_verdict_word",
    "verdict_legend",
    "VERDICT_WORDS",
    "registry_claim",
    "split_case",
    "CSV_COLUMNS",
    "csv_rows",
]

Run = dict[str, Any]

#: Words for a passing verdict, by status (:data:`verification.judging.outcomes.PASS_WORDS`).
VERDICT_WORDS: Mapping[str, str] = PASS_WORDS


class ResultsError(ValueError):
    """Input that holds no usable run; the message names the parameter (exit code 2)."""


def verdict_word(verdict: str, status: str, reason: str | None = None) -> str:
    """The report's word for the machine outcome ``verdict`` of a claim or a check with
    ``status``: the word of :mod:`verification.judging.outcomes`, the one every output
    prints (the results JSON's ``verdict``, the terminal's).

    A claim that is ``not verified`` reads ``not verified: REASON`` with ``reason`` (the
    results' ``reason``; results without one read ``lacks power``, what they meant); a
    claim ``not assessed`` (older results) reads ``not verified: not assessed`` when its
    ``reason`` is given, else as the check's ``not assessed``. ``pass`` reads by status:
    ``verified`` only for ``theorem`` and ``derived``; an unknown status passes as
    ``passed (<status>)``, so that no new status can ever be shown as ``verified``.
    """
    if verdict == Outcome.PASS and status not in PASS_WORDS:
        return f"passed ({status})"
    if verdict == Outcome.NOT_VERIFIED or (verdict == Outcome.NOT_ASSESSED and reason):
        return claim_word(verdict, status, reason or Outcome.LACKS_POWER.value)
    if verdict == Outcome.FLAKY:
        return claim_word(verdict, status)
    try:
        return check_word(verdict, status)
    except ValueError:  # an outcome of a newer or foreign file: shown as it is
        return verdict


def verdict_legend(checks: bool = False) -> str:
    """The words of claims (``checks``: of checks) with their meanings, ``word - meaning;
    ...``, for a table's footnote: the table of :mod:`verification.judging.outcomes`."""
    table = CHECK_VERDICTS if checks else CLAIM_VERDICTS
    return "; ".join(f"{v.word} - {v.meaning}" for v in table) + "."


def claim_verdict_word(claim: Mapping[str, Any]) -> str:
    """:func:`verdict_word` of one claim of a run read by :func:`load_run_data`, with its
    ``reason`` (results written before there was one: read from its ``unverified``
    lines, :func:`verification.judging.verdict.claim_reason`)."""
    verdict, reason = str(claim["verdict"]), claim.get("reason")
    if reason is None and verdict in (Outcome.NOT_VERIFIED, Outcome.NOT_ASSESSED):
        from gapverify.verification.judging.verdict import claim_reason

        reason = claim_reason(verdict, claim.get("unverified") or [])
    return verdict_word(verdict, str(claim.get("status", "")), reason)


def _check_run(run: object, where: str) -> Run:
    """``run`` checked, with each claim's and check's ``verdict`` the machine outcome
    (``pass``, ``fail``, ...): results of schema 2 write the table's word as ``verdict``
    and the outcome as ``outcome`` (:mod:`verification.running.output`); older ones wrote the
    outcome as ``verdict``. Both read the same."""
    if not isinstance(run, dict) or not isinstance(run.get("claims"), list):
        raise ResultsError(f"{where} is not a gapverify results file (no 'claims' list)")
    from gapverify.verification.running.output import normalise_claim

    run = dict(run)
    run["claims"] = [normalise_claim(c) if isinstance(c, dict) else c for c in run["claims"]]
    for i, claim in enumerate(run["claims"]):
        missing = [k for k in ("claim", "status", "verdict", "checks") if k not in claim]
        if missing:
            raise ResultsError(f"{where}: claim #{i} lacks {', '.join(missing)}")
    return run


def load_run_data(run: object, where: str = "the run") -> Run:
    """A run's plain data (a results file's JSON, or a stored run) checked and normalised
    for readers: each ``verdict`` is the machine outcome, whatever the schema."""
    return _check_run(run, where)


def load_run(store: str | Path | None = None, results: str | Path | None = None,
             run_id: int | None = None) -> Run:
    """The run to report: the results JSON ``results`` if given, else run ``run_id`` of
    the SQLite store ``store`` (its last run when ``run_id`` is ``None``).

    Raises :class:`ResultsError` (naming ``--from`` or ``--store``) for a missing file, a
    file that is not JSON or SQLite, or a store without a recorded run. A missing store is
    never created.
    """
    if results is not None:
        path = Path(results)
        if not path.is_file():
            raise ResultsError(f"parameter '--from': no such results file: {path}")
        try:
            run = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ResultsError(f"parameter '--from' must be a results JSON file: {path}: {exc}") from None
        return _check_run(run, f"parameter '--from' ({path})")
    if store is None:
        raise ResultsError("give a results file with '--from' or a store with '--store'")
    from gapverify.verification.running.store import Store

    path = Path(store)
    if not path.is_file():
        raise ResultsError(f"parameter '--store': no such store: {path} "
                           "(run 'gapverify run ... --store PATH' first)")
    import sqlite3

    try:
        st = Store(path)
    except ValueError as exc:  # not a SQLite file
        raise ResultsError(str(exc)) from None
    try:
        run = st.last_run() if run_id is None else st.get_run(run_id)
        if run is None and run_id is not None:
            ids = [str(r["id"]) for r in st.runs()]
            raise ResultsError(f"parameter '--run': no run {run_id} in {path}; runs: "
                               f"{', '.join(ids) or '(none)'} ('gapverify runs' lists them)")
    except (sqlite3.DatabaseError, json.JSONDecodeError) as exc:
        raise ResultsError(f"parameter '--store' must be a gapverify store: {path}: {exc}") from None
    finally:
        st.close()
    if run is None:
        raise ResultsError(f"parameter '--store': no run recorded in {path} "
                           "(run 'gapverify run' first)")
    return _check_run(run, f"parameter '--store' ({path})")


def experiment_of(claim: Mapping[str, Any]) -> str:
    """The store key of a claim's measurements: the results' ``experiment`` field (claims
    may share an experiment), else the registry's, else the claim id (older results)."""
    if claim.get("experiment"):
        return str(claim["experiment"])
    reg = registry_claim(str(claim["claim"]))
    return reg.experiment if reg is not None else str(claim["claim"])


def load_measurements(store: str | Path | None, run: Mapping[str, Any], claim: Mapping[str, Any],
                      sizes: Iterable[int] | None = None,
                      parameters: Mapping[str, float] | None = None
                      ) -> dict[int, list[dict]] | None:
    """The stored replicates behind ``claim`` (one entry of ``run["claims"]``) at ``sizes``
    (default: the largest size), keyed exactly as the run sampled them: the experiment
    (:func:`experiment_of`), the parameters (the claim's, or one of its ``cases`` given as
    ``parameters``; :func:`verification.running.store.parameters_key`), the root seed, the
    replicate count and the run's code version. ``None`` when the store is absent or lacks
    them (a results file from another machine, measurements of another code version, or a
    store of an older schema).
    """
    if store is None or not Path(store).is_file() or not claim.get("sizes"):
        return None
    import sqlite3

    from gapverify.verification.running.store import Store, parameters_key

    try:
        st = Store(store)
    except ValueError:
        return None
    try:
        params = parameters if parameters is not None else claim.get("parameters", {})
        return st.load(experiment_of(claim), parameters_key(params),
                       int(claim["root_seed"]), str(run.get("code_version", "")),
                       list(sizes) if sizes is not None else [max(claim["sizes"])],
                       drawn(claim, parameters))
    except (RuntimeError, KeyError, ValueError, sqlite3.DatabaseError):
        return None
    finally:
        st.close()


def drawn(claim: Mapping[str, Any], parameters: Mapping[str, float] | None = None
          ) -> dict[int, int] | int:
    """The replicates the run drew per size for one case of ``claim`` (its ``sizing``,
    matched to ``parameters`` among its ``cases``; the first case by default), else the
    claim's replicate count (results written before the draws were sized)."""
    sizing = claim.get("sizing") or []
    cases = claim.get("cases") or [claim.get("parameters", {})]
    index = 0
    if parameters is not None:
        index = next((i for i, c in enumerate(cases)
                      if all(str(c.get(k)) == str(v) for k, v in parameters.items())), 0)
    if index < len(sizing) and sizing[index].get("drawn"):
        return {int(T): int(n) for T, n in sizing[index]["drawn"].items()}
    return int(claim["replicates"])


def draws_at(claim: Mapping[str, Any], T: int) -> int:
    """The replicates drawn at size ``T`` for the claim's first case."""
    counts = drawn(claim)
    return int(counts.get(int(T), claim.get("replicates", 0))) if isinstance(counts, dict) \
        else int(counts)


def replicates_text(claim: Mapping[str, Any]) -> str:
    """The replicates per size as a reader wants them: ``"12 to 98, sized to the power
    target"``, ``"16, fixed"``, or the count of an older results file."""
    sizing = claim.get("sizing") or []
    counts = [int(n) for s in sizing for n in (s.get("drawn") or {}).values()]
    if not counts:
        return str(claim.get("replicates", "?"))
    low, high = min(counts), max(counts)
    if all(s.get("stopped") == "fixed" for s in sizing):
        return f"{low}, fixed" if low == high else f"{low} to {high}, fixed"
    return (f"{low}" if low == high else f"{low} to {high}") + ", sized to the power target"


_CASE = re.compile(r"^(.*?)\s*\[([^\[\]]*)\]$")


def split_case(label: str) -> tuple[str, str]:
    """``("sr_X", "depth=2, gamma=1")`` from a check label ``"sr_X [depth=2, gamma=1]"``:
    a claim that sweeps several parameter cases labels each check with its case."""
    m = _CASE.match(str(label))
    return (m.group(1), m.group(2)) if m else (str(label), "")


def registry_claim(claim_id: str):
    """The :class:`~verification.claims.Claim` with this id from the registry, or ``None``
    for a claim the current registry does not hold (the report then shows the results
    file's own text)."""
    from gapverify.verification.claims.registry import CLAIMS

    return CLAIMS.get(claim_id)


#: Columns of ``gapverify runs --csv``: one row per run, claim, check (with its case) and size.
CSV_COLUMNS = ("run_id", "claim", "status", "check", "case", "prediction", "kind", "T", "n",
               "mean", "se", "error", "error_se", "predicted", "verdict", "outcome")


def csv_rows(run: Mapping, run_id: int | None = None) -> list[dict]:
    """The per-size rows of a run's results (see :data:`CSV_COLUMNS`)."""
    run = load_run_data(run)
    out = []
    for claim in run["claims"]:
        for check in claim["checks"]:
            case = check.get("case") or {}
            for row in check.get("rows") or []:
                out.append({"run_id": run_id, "claim": claim["claim"], "status": check.get("status"),
                            "check": check["label"],
                            "case": ";".join(f"{k}={v}" for k, v in sorted(case.items())),
                            "prediction": check.get("prediction"), "kind": check.get("kind"),
                            **{k: row.get(k) for k in ("T", "n", "mean", "se", "error", "error_se")},
                            "predicted": check.get("predicted"),
                            "verdict": check.get("verdict_word", check["verdict"]),
                            "outcome": check["verdict"]})
    return out
