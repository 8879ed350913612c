"""``gapverify snapshot``: the theorem statements against the recorded snapshot
(:mod:`gapverify.verification.tools.snapshot`); ``--update`` rewrites it."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gapverify.verification.claims.inputs import UsageError
from gapverify.verification.running.defaults import SNAPSHOT_PATH

# the snapshot's machinery (sympy) is imported when the command runs (fast --help)
if TYPE_CHECKING:
    from gapverify.verification.tools.snapshot import Comparison


def _print_comparison(result: Comparison, path: Path) -> None:
    for note in result.notes:
        print(f"note: {note}")
    for change in result.changes:
        print(change.diff, end="" if change.diff.endswith("\n") else "\n")
    for change in result.changes:
        what = {"added": "claim added (not in the snapshot)",
                "removed": "claim removed (only in the snapshot)",
                "changed": "statement changed: " + ", ".join(change.parts),
                "representation": "printed differently by this sympy, same equations "
                                  "(not a change; refresh with --update)"}[change.kind]
        print(f"{change.claim}: {what}")
    n_bad = sum(c.kind != "representation" for c in result.changes)
    if n_bad:
        print(f"snapshot {path}: {n_bad} claim(s) differ from the registry; if the change is "
              "intended, run `gapverify snapshot --update` and commit the new snapshot")
    else:
        print(f"snapshot {path}: all {len(result.unchanged) + len(result.changes)} claims match "
              "the registry")


def _cmd_snapshot(args) -> int:
    from gapverify.verification.claims.registry import file_claim_ids
    from gapverify.verification.tools.snapshot import (compare, current_meta, current_snapshot,
                                                       write_snapshot)

    path = Path(args.path)
    if path.exists() and not path.is_dir() and path.suffix != ".json":
        raise UsageError(f"parameter '--path' must be a directory or a .json file, got {args.path!r}")
    # with --claims-from: the snapshot of those claims, kept where their author says
    ids = file_claim_ids() or None
    if ids and path.resolve() == SNAPSHOT_PATH.resolve():
        raise UsageError("parameter '--path': with --claims-from, give the folder of your "
                         "claims' snapshot (e.g. --path my_claims.snapshots); the default "
                         "holds the package's own claims")
    if args.update:
        records = current_snapshot(ids)
        write_snapshot(path, current_meta(), records)
        print(f"snapshot of {len(records)} claims written to {path}")
        return 0
    result = compare(path, ids)
    _print_comparison(result, path)
    return 1 if result.failed else 0


def register(subparsers) -> None:
    p = subparsers.add_parser("snapshot", help="compare the claims' statements with the "
                                               "stored snapshot (exit 1 on any change)")
    p.add_argument("--update", action="store_true", help="rewrite the snapshot from the registry")
    p.add_argument("--path", default=str(SNAPSHOT_PATH),
                   help="snapshot directory (one JSON per claim) or a single .json file "
                        "(default: verification/snapshots/)")


COMMANDS = {"snapshot": _cmd_snapshot}
