"""A judged run as a row of the store's ``runs`` table, and back.

The run's results JSON is the record; the columns ``profile``, ``claims``, ``root_seed``,
``code_version``, ``provenance`` and ``perturbations`` (schema versions 2 and 3 of
:mod:`verification.running.store`) repeat what a listing needs without parsing every
result. Reading is forgiving: a column that is not JSON of its kind is taken from the
results, and what neither holds is named in the row's ``damaged`` list (:meth:`verification.running.store.Store.runs`).
"""
from __future__ import annotations

import json
from typing import Mapping

__all__ = ["results_dict", "run_fields", "run_row", "perturbations_of"]


def results_dict(text: str) -> dict:
    """A run's results JSON as a dict; ``{}`` when it is not a JSON object."""
    try:
        out = json.loads(text)
    except (TypeError, json.JSONDecodeError):
        return {}
    return out if isinstance(out, dict) else {}


def perturbations_of(column, results: Mapping) -> list[str]:
    """A run's perturbations: its column (JSON list), else read from its results."""
    if isinstance(column, str):
        try:
            value = json.loads(column)
            if isinstance(value, list):
                return [str(v) for v in value]
        except json.JSONDecodeError:
            pass
    return _perturbation_args(results)


def _perturbation_args(results: Mapping) -> list[str]:
    """``--perturb``/``--perturb-parameter`` arguments of a run, from its results
    (the order of :func:`verification.running.suite.perturbations`)."""
    out = []
    eps = results.get("perturb")
    if isinstance(eps, (int, float)) and eps:
        out.append(f"--perturb {float(eps)!r}")
    preds = results.get("perturb_predictions")
    for k, v in sorted(preds.items() if isinstance(preds, dict) else ()):
        out.append(f"--perturb {k}={float(v)!r}")
    params = results.get("perturb_parameters")
    for k, d in sorted(params.items() if isinstance(params, dict) else ()):
        for p, f in sorted(d.items() if isinstance(d, dict) else ()):
            out.append(f"--perturb-parameter {k}:{p}={float(f)!r}")
    return out


def run_fields(results: Mapping[str, object]) -> tuple:
    """``(profile, claims JSON, root_seed, code_version, provenance JSON, perturbations
    JSON)`` of a run's results."""
    claims = [c.get("claim") for c in results.get("claims", []) if isinstance(c, dict)]
    prov = results.get("provenance") or {}
    seed = results.get("root_seed")
    return (results.get("profile"), json.dumps(claims), int(seed) if seed is not None else None,
            results.get("code_version"), json.dumps(prov, sort_keys=True),
            json.dumps(_perturbation_args(results)))


def _json_column(text, kind):
    """A JSON column's value, or ``None`` when it is missing or not JSON of ``kind``."""
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, kind) else None


def run_row(rid, created, command, results_text, stored: Mapping) -> dict:
    """One row of :meth:`Store.runs`: the columns, each unreadable one taken from the
    run's results (``damaged`` names what neither holds)."""
    results = results_dict(results_text)
    fields = dict(zip(("profile", "claims", "root_seed", "code_version", "provenance"),
                      run_fields(results)))
    damaged = [] if results or results_text == "{}" else ["results"]
    claims = _json_column(stored.get("claims"), list)
    prov = _json_column(stored.get("provenance"), dict)
    for name, value in (("claims", claims), ("provenance", prov)):
        if value is None and stored.get(name) is not None and not results:
            damaged.append(name)
    row = {"id": int(rid), "created": float(created), "command": command,
           "profile": stored.get("profile") or fields["profile"],
           "claims": claims if claims is not None else json.loads(fields["claims"]),
           "root_seed": stored.get("root_seed") if stored.get("root_seed") is not None
           else fields["root_seed"],
           "code_version": stored.get("code_version") or fields["code_version"],
           "provenance": prov if prov is not None else json.loads(fields["provenance"]),
           "perturbations": perturbations_of(stored.get("perturbations"), results)}
    if damaged:
        row["damaged"] = damaged
    return row
