r"""``gapverify snapshot``: regression testing of the claims' statements.

A snapshot records, for every claim of :data:`verification.claims.registry.CLAIMS`, what the
suite *states*: the claim's status and each prediction's status, kind and measured
quantity; the paper's result it checks (``paper_result``); the statement at symbolic
parameters; every number it gives (:mod:`~gapverify.verification.tools.snapshot_numbers`):
its predictions at reference parameters and at every profile case to 30 significant
digits, the quantiles of every law a check judges with, and for the claims that take
``--entries`` the reference entry laws' ``kappa`` and the predictions at their
``s2_eff``; and each check's kind and stated rate. ``gapverify snapshot``
compares the registry with the stored snapshot and exits 1 on any change, printing a
unified diff per changed claim; ``--update`` rewrites the snapshot. A statement can then
change only on purpose: whoever changes one regenerates the snapshot, and the diff of the
snapshot files shows the reviewer what changed.

Format
------
One canonical JSON document per claim (``json.dumps(sort_keys=True, indent=2,
ensure_ascii=False)``, ``\n`` line ends, UTF-8): by default one file per claim,
``verification/snapshots/<claim id>.json``, plus ``_meta.json`` (format version, digits,
the sympy and mpmath versions that wrote it). One file per claim keeps concurrent
additions of claims from conflicting and makes each diff name its claim. ``--path
FILE.json`` keeps the same documents in one file instead (``{"_meta": ..., "claims":
{id: ...}}``); any other ``--path`` is a directory.

The statement is ``Claim.statement()``: every prediction's equation at symbolic
parameters. A formula that needs numbers (``int(p["depth"])`` in the depth claims) is
built with its integer parameters at the defaults and the others symbolic (failing that,
all numeric); ``numeric_parameters`` says which, and the statement is then kept again at
each reference point that moves one of those (``depth=2``), so a depth-dependent law is
recorded symbolically in ``s2`` and ``gamma`` at two depths.

Reference points: the claim's defaults, then, for each parameter the claim takes (and
does not fix), the defaults with that one parameter moved to :data:`REFERENCE_VALUES`
(``s2=1``, ``gamma=0.5``, ``depth=2``, ...; a parameter added later gets the end of its
typical range). Numbers are ``sympy.N(expr, 30)`` written in one fixed scientific format
(``1.41421356237309504880168872421e+0``), so their text is free of sympy's and
mpmath's printing conventions.

Not kept: titles, notes and rate notes (prose: rewording them is no change of the
mathematics), the profiles' sizes and replicates (how much is sampled, not what is
stated). The profiles' cases are kept by their predictions: a number that moves at a case
the suite samples is a change even where no reference point sees it. So are the checks'
known finite-size terms (``Check.correction``, e.g. the Tracy-Widom offset of an edge,
subtracted before a fit), at every profile case at ``T = 128`` and ``1024``
(``finite_size_terms``): a term scaled by 1.05 moves verdicts without touching a prediction.

What counts as a change (the version-independence decision)
-----------------------------------------------------------
The statement is kept three ways: ``srepr`` (exact structure), ``sstr`` (readable) and
LaTeX. All three are sympy's printers, and a new sympy may print the same expression
differently (``srepr`` of ``Limit`` already spells its direction as ``Symbol('-')``).
Everything else in the record is plain data that no library prints. So:

* statuses, kinds, quantities, parameters, checks and rates must match exactly;
* the numbers must match to a relative ``1e-25`` (five digits of slack below the 30
  stored: N's last digit may differ between mpmath versions; a real change is far
  larger), numbers computed in floating point (quantiles, scipy moments) to ``1e-9``;
* the printed statement must match exactly **when the snapshot was written by the same
  sympy version** (then a different print is a different expression);
* written by another sympy version, a different print is accepted as a
  *representation-only change* (reported, exit 0, "run --update") when the stored
  ``srepr``, parsed by the running sympy, gives the same equations as the registry:
  identical, or with ``simplify(old - new) == 0`` on both sides. The numbers at the
  reference points have already matched. Anything else is a change (exit 1).
"""
from __future__ import annotations

import difflib
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import mpmath
import sympy as sp

from gapverify.verification.running.defaults import SNAPSHOT_PATH
from gapverify.verification.claims.model import Claim, RateRule
from gapverify.verification.tools.snapshot_numbers import (
    DIGITS, NUMERIC_PARTS, REFERENCE_VALUES, _checks_by_label, _json_number,
    _predictions_at, canonical_number, close, entry_laws, finite_size_terms, law_quantiles,
    profile_cases, reference_points,
)

__all__ = ["DEFAULT_PATH", "DIGITS", "REFERENCE_VALUES", "canonical_number", "claim_record",
           "current_snapshot", "read_snapshot", "write_snapshot", "compare", "Comparison",
           "update_command", "inside_package_snapshots", "suggested_path"]

FORMAT = 3  # 2: paper_result, profile_cases, law_quantiles, entry_laws; 3: finite_size_terms
DEFAULT_PATH = SNAPSHOT_PATH
META_NAME = "_meta.json"


# --- where a snapshot goes, and the command that rewrites it -----------------------------

def inside_package_snapshots(path: Path | str) -> bool:
    """Whether ``path`` is the package's own snapshot folder (``verification/snapshots/``)
    or inside it: only the package's claims are kept there (``--update`` of other claims
    would also delete the package's records, :func:`write_snapshot`)."""
    target, own = Path(path).resolve(), Path(SNAPSHOT_PATH).resolve()
    return target == own or own in target.parents


def suggested_path(claim_files: Sequence[str]) -> str:
    """Where the snapshot of claim files' claims goes unless told: beside the first file,
    ``<its name>.snapshots`` (``my_claims.py`` -> ``my_claims.snapshots``)."""
    first = Path(claim_files[0]) if claim_files else Path("my_claims.py")
    return str(first.with_suffix(".snapshots"))


def update_command(path: Path | str = DEFAULT_PATH, claim_files: Sequence[str] = ()) -> str:
    """The command that rewrites the snapshot at ``path``, to be followed literally: with
    the claim files' ``--claims-from`` and ``--path`` (only ``gapverify snapshot --update``
    for the package's own claims at the default path)."""
    parts = ["gapverify", "snapshot", "--update"]
    for file in claim_files:
        parts += ["--claims-from", str(file)]
    if claim_files or Path(path).resolve() != Path(DEFAULT_PATH).resolve():
        parts += ["--path", str(path)]
    return shlex.join(parts)


# --- building the records ---------------------------------------------------------------

def _checks(claim: Claim) -> dict[str, dict]:
    return {key: {"prediction": c.prediction, "statistic": c.statistic,
                                  "kind": c.kind,
                                  "rate": str(c.rate) if isinstance(c.rate, RateRule) else c.rate,
                                  "rate_status": c.rate_status,
                                  "asserted": c.asserted,
                                  "rate_range": list(c.rate_range) if c.rate_range else None,
                                  **({"models": [f"{m.name}: {m.formula}" for m in c.models]}
                                     if c.models else {}),
                                  **({"correction": c.correction.__name__} if c.correction else {}),
                                  **({"relative_to": list(c.relative_to)} if c.relative_to else {}),
                                  # both notes: a changed smallest size of a check with a
                                  # parameter domain is a changed statement too
                                  "domain": "; ".join(n for n in (c.domain_note, c.min_size_note)
                                                      if n) or None}
            for key, c in _checks_by_label(claim)}


def _equation(claim: Claim, prediction, values: Mapping[str, float | int]):
    """The prediction's equation at symbolic parameters or, for a formula that needs
    numbers (``int(depth)``), with the fewest parameters made numeric: first the integer
    ones, then all. Returns ``(equation, {parameter: value substituted})``."""
    from gapverify.theory.parameters import PARAMETERS

    names = [n for n in claim.parameters if n in PARAMETERS]
    integers = {n for n in names if PARAMETERS[n].integer}
    exact = claim.exact_parameters(values)
    error = None
    for numeric in (set(), integers, set(names)):
        params = {n: exact[n] if n in numeric else PARAMETERS[n].symbol for n in names}
        try:
            return prediction.statement(params), {n: values[n] for n in sorted(numeric)}
        except Exception as exc:  # noqa: BLE001 - try the next, more numeric, point
            error = exc
    raise error


def statement_of(claim: Claim, values: Mapping[str, float | int] | None = None
                 ) -> tuple[sp.Tuple, str, dict]:
    """``(statement, latex, substitutions)``: ``Claim.statement()`` at symbolic
    parameters, falling back per prediction as :func:`_equation` does, with the numbers
    taken from ``values`` (default: the claim's defaults); ``substitutions`` names, per
    prediction, the parameters that had to be numbers."""
    from gapverify.theory.parameters import PARAMETERS

    values = claim.resolve({}) if values is None else values
    equations, substituted = [], {}
    for p in claim.predictions:
        eq, numeric = _equation(claim, p, values)
        equations.append(eq)
        if numeric:
            substituted[p.name] = {k: _json_number(v) for k, v in numeric.items()}
    names = {sp.Symbol(p.name): p.quantity for p in claim.predictions}
    names.update({PARAMETERS[n].symbol: PARAMETERS[n].latex for n in claim.parameters})
    latex = r",\quad ".join(sp.latex(eq, symbol_names=names) for eq in equations)
    return sp.Tuple(*equations), latex, substituted


def statements(claim: Claim) -> list[tuple[str, sp.Tuple, str, dict]]:
    """``(label, statement, latex, substitutions)``: the symbolic statement, then, if some
    parameters had to be numbers, the statement again at each reference point that moves
    one of them (``depth=2``), so a depth-dependent law is kept at two depths."""
    base = claim.resolve({})
    first = statement_of(claim, base)
    out = [("symbolic", *first)]
    needed = {k for sub in first[2].values() for k in sub}
    for label, values in reference_points(claim)[1:]:
        if any(values[k] != base[k] for k in needed):
            out.append((label, *statement_of(claim, values)))
    return out


def _statement_entries(claim: Claim) -> list[dict]:
    return [{"label": label, "srepr": sp.srepr(st), "sstr": sp.sstr(st), "latex": latex,
             "numeric_parameters": sub}
            for label, st, latex, sub in statements(claim)]


def claim_record(claim: Claim) -> dict:
    """Everything the snapshot keeps about one claim, as plain JSON data."""
    laws = entry_laws(claim)
    terms = finite_size_terms(claim)
    return {
        "claim": claim.id,
        "paper_result": getattr(claim, "paper_result", ""),
        "status": claim.status,
        "parameters": list(claim.parameters),
        "fixed_parameters": {k: _json_number(v) for k, v in claim.fixed_parameters.items()},
        "predictions": {p.name: {"status": p.status, "kind": p.kind, "quantity": p.quantity}
                        for p in claim.predictions},
        "statement": _statement_entries(claim),
        "reference_points": [
            {"label": label,
             "parameters": {k: _json_number(v) for k, v in values.items()},
             "values": _predictions_at(claim, values)}
            for label, values in reference_points(claim)],
        "profile_cases": profile_cases(claim),
        "checks": _checks(claim),
        **({"law_quantiles": law_quantiles(claim)} if any(c.cdf for c in claim.checks) else {}),
        **({"entry_laws": laws} if laws is not None else {}),
        **({"finite_size_terms": terms} if terms else {}),
    }


def current_meta() -> dict:
    return {"format": FORMAT, "digits": DIGITS, "sympy": sp.__version__,
            "mpmath": mpmath.__version__}


def current_snapshot(ids: Sequence[str] | None = None) -> dict[str, dict]:
    """A record per claim of ``ids`` (default: the package's claims,
    :func:`~gapverify.verification.claims.registry.package_claim_ids`), read from the
    registry at call time."""
    from gapverify.verification.claims import registry

    ids = registry.package_claim_ids() if ids is None else ids
    return {cid: claim_record(registry.CLAIMS[cid]) for cid in ids}


def canonical_text(record: Mapping) -> str:
    return json.dumps(record, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


# --- storage ------------------------------------------------------------------------------

def _single_file(path: Path) -> bool:
    return path.suffix == ".json" and not path.is_dir()


def read_snapshot(path: Path) -> tuple[dict, dict[str, dict]]:
    """``(meta, records)``; both empty if there is no snapshot at ``path``."""
    path = Path(path)
    if _single_file(path):
        if not path.exists():
            return {}, {}
        doc = json.loads(path.read_text(encoding="utf-8"))
        return doc.get("_meta", {}), dict(doc.get("claims", {}))
    if not path.is_dir():
        return {}, {}
    meta_file = path / META_NAME
    meta = json.loads(meta_file.read_text(encoding="utf-8")) if meta_file.exists() else {}
    records = {}
    for file in _claim_files(path):
        records[file.stem] = json.loads(file.read_text(encoding="utf-8"))
    return meta, records


def _claim_files(path: Path) -> list[Path]:
    """The snapshot's claim files in ``path``: ``<id>.json`` holding ``{"claim": id}``
    (any other file there is left alone, by reading and by ``--update``)."""
    out = []
    for file in sorted(path.glob("*.json")):
        if file.name == META_NAME:
            continue
        try:
            record = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("claim") == file.stem:
            out.append(file)
    return out


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def write_snapshot(path: Path, meta: dict, records: Mapping[str, dict]) -> None:
    """Write the snapshot; in a directory, also delete the files of removed claims."""
    path = Path(path)
    if _single_file(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(path, canonical_text({"_meta": meta, "claims": dict(records)}))
        return
    path.mkdir(parents=True, exist_ok=True)
    _write(path / META_NAME, canonical_text(meta))
    for cid, record in records.items():
        _write(path / f"{cid}.json", canonical_text(record))
    for file in _claim_files(path):
        if file.stem not in records:
            file.unlink()


# --- comparison ---------------------------------------------------------------------------

def _part_equal(key: str, old: object, new: object) -> bool:
    return close(old, new, NUMERIC_PARTS[key]) if key in NUMERIC_PARTS else old == new


def _parsed_equivalent(old_srepr: str, current: sp.Tuple) -> bool:
    """The stored ``srepr`` read by the running sympy gives the same equations."""
    try:
        old = sp.sympify(old_srepr)
    except Exception:  # noqa: BLE001 - unreadable in this sympy: not provably the same
        return False
    if old == current:
        return True
    if not isinstance(old, sp.Tuple) or len(old) != len(current):
        return False
    return all(_same_equation(a, b) for a, b in zip(old, current))


def _same_statements(old: list, claim: Claim) -> bool:
    """Stored statement entries equal the registry's up to sympy's printing."""
    current = statements(claim)
    if not isinstance(old, list) or len(old) != len(current):
        return False
    for entry, (label, st, _, sub) in zip(old, current):
        plain = {"label": label, "numeric_parameters": sub}
        if {k: entry.get(k) for k in plain} != plain:
            return False
        if not _parsed_equivalent(entry.get("srepr", ""), st):
            return False
    return True


def _same_equation(a, b) -> bool:
    if not (isinstance(a, sp.Equality) and isinstance(b, sp.Equality)):
        return a == b
    return all(x == y or sp.simplify(x - y) == 0 for x, y in ((a.lhs, b.lhs), (a.rhs, b.rhs)))


@dataclass
class ClaimChange:
    claim: str
    kind: str  # added / removed / changed / representation
    parts: list[str] = field(default_factory=list)  # top-level fields that differ
    diff: str = ""


@dataclass
class Comparison:
    changes: list[ClaimChange]
    unchanged: list[str]
    notes: list[str]

    @property
    def failed(self) -> bool:
        return any(c.kind != "representation" for c in self.changes)


def _diff(old: Mapping | None, new: Mapping | None, cid: str, where: str) -> str:
    a = canonical_text(old).splitlines(keepends=True) if old is not None else []
    b = canonical_text(new).splitlines(keepends=True) if new is not None else []
    return "".join(difflib.unified_diff(a, b, fromfile=f"{where}/{cid}.json",
                                        tofile=f"registry/{cid}", n=2))


def _differing_parts(old: Mapping, new: Mapping) -> list[str]:
    keys = sorted(set(old) | set(new))
    return [k for k in keys if not _part_equal(k, old.get(k), new.get(k))]


def _classify(cid: str, old: dict, new: dict, same_sympy: bool, where: str) -> ClaimChange | None:
    if canonical_text(old) == canonical_text(new):
        return None
    parts = _differing_parts(old, new)
    if not parts:
        return None  # numbers equal to within REL_TOL: last-digit noise
    diff = _diff(old, new, cid, where)
    if parts != ["statement"] or same_sympy:
        return ClaimChange(cid, "changed", parts, diff)
    from gapverify.verification.claims import registry

    if _same_statements(old["statement"], registry.CLAIMS[cid]):
        return ClaimChange(cid, "representation", parts, diff)
    return ClaimChange(cid, "changed", parts, diff)


def compare(path: Path = DEFAULT_PATH, ids: Sequence[str] | None = None,
            claim_files: Sequence[str] = ()) -> Comparison:
    """Compare the claims ``ids`` (default: the package's) with the snapshot at ``path``;
    ``claim_files``: the files they come from, named in the advice to update."""
    meta, stored = read_snapshot(path)
    current = current_snapshot(ids)
    same_sympy = meta.get("sympy") == sp.__version__
    notes = []
    if not meta and not stored:
        notes.append(f"no snapshot at {path}: every claim is new (write one with "
                     f"`{update_command(path, claim_files)}`)")
    elif not same_sympy:
        notes.append(f"snapshot written by sympy {meta.get('sympy')}, running {sp.__version__}: "
                     "a statement printed differently is accepted if it parses to the same "
                     "equations")
    where = Path(path).name
    changes, unchanged = [], []
    for cid in sorted(set(stored) | set(current)):
        if cid not in stored:
            changes.append(ClaimChange(cid, "added", ["claim"], _diff(None, current[cid], cid, where)))
        elif cid not in current:
            changes.append(ClaimChange(cid, "removed", ["claim"], _diff(stored[cid], None, cid, where)))
        else:
            change = _classify(cid, stored[cid], current[cid], same_sympy, where)
            (changes.append(change) if change else unchanged.append(cid))
    return Comparison(changes, unchanged, notes)




