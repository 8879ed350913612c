"""``gapverify snapshot``: the theorem statements against the recorded snapshot
(:mod:`gapverify.verification.tools.snapshot`); ``--update`` rewrites it.

Which claims, and where: without claim files, the package's own claims at the package's
snapshot (``verification/snapshots/``), as ever. With claims from files
(``--claims-from``, ``$GAPVERIFY_CLAIMS``), those claims, at a ``--path`` of their
author's: the package's snapshot folder (or anything inside it) is refused, exit 2, the
message giving the ``--path`` to use, so that no advice followed literally rewrites the
package's own snapshot. ``--package`` snapshots the package's own claims even when claim
files are loaded. Every advice to update is the full command: ``--claims-from`` and
``--path`` included.
"""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from gapverify.verification.claims.inputs import UsageError
from gapverify.verification.running.defaults import SNAPSHOT_PATH

# the snapshot's machinery (sympy) is imported when the command runs (fast --help)
if TYPE_CHECKING:
    from gapverify.verification.tools.snapshot import Comparison


def _print_comparison(result: Comparison, path: Path, advice: str) -> None:
    for note in result.notes:
        print(f"note: {note}")
    for change in result.changes:
        print(change.diff, end="" if change.diff.endswith("\n") else "\n")
    for change in result.changes:
        what = {"added": "claim added (not in the snapshot)",
                "removed": "claim removed (only in the snapshot)",
                "changed": "statement changed: " + ", ".join(change.parts),
                "representation": "printed differently by this sympy, same equations "
                                  f"(not a change; refresh with `{advice}`)"}[change.kind]
        print(f"{change.claim}: {what}")
    n_bad = sum(c.kind != "representation" for c in result.changes)
    if n_bad:
        print(f"snapshot {path}: {n_bad} claim(s) differ from the registry; if the change is "
              f"intended, run `{advice}` and commit the new snapshot")
    else:
        print(f"snapshot {path}: all {len(result.unchanged) + len(result.changes)} claims match "
              "the registry")


def _claim_files(ids: Sequence[str]) -> list[str]:
    """The files the claims ``ids`` come from, in order, each once."""
    from gapverify.verification.claims.registry import REGISTRY

    return list(dict.fromkeys(str(REGISTRY.source(cid)) for cid in ids))


def _checked_path(args, ids: Sequence[str], files: Sequence[str]) -> Path:
    """``--path``, refused (exit 2) where it cannot hold these claims' snapshot."""
    from gapverify.verification.tools.snapshot import inside_package_snapshots, suggested_path

    path = Path(args.path)
    if path.exists() and not path.is_dir() and path.suffix != ".json":
        raise UsageError(f"parameter '--path' must be a directory or a .json file, got "
                         f"{args.path!r}")
    if ids and inside_package_snapshots(path):
        given = "" if args.path_given else " (the default)"
        fix = shlex.join(["--path", suggested_path(files)])
        raise UsageError(f"parameter '--path': {args.path}{given} lies in the package's own "
                         f"snapshot folder, which holds only the package's claims; the claims of "
                         f"{', '.join(files)} need a snapshot of their own: give e.g. {fix} "
                         "(or --package for the package's claims)")
    return path


def _cmd_snapshot(args) -> int:
    from gapverify.verification.claims.registry import file_claim_ids
    from gapverify.verification.tools.snapshot import (compare, current_meta, current_snapshot,
                                                       update_command, write_snapshot)

    args.path_given = args.path is not None
    args.path = args.path if args.path_given else str(SNAPSHOT_PATH)
    # with claim files: the snapshot of their claims, kept where their author says
    ids = () if args.package else file_claim_ids()
    files = _claim_files(ids) if ids else []
    path = _checked_path(args, ids, files)
    if args.update:
        records = current_snapshot(ids or None)
        write_snapshot(path, current_meta(), records)
        print(f"snapshot of {len(records)} claims written to {path}")
        return 0
    result = compare(path, ids or None, files)
    _print_comparison(result, path, update_command(path, files))
    return 1 if result.failed else 0


def register(subparsers) -> None:
    p = subparsers.add_parser("snapshot", help="compare the claims' statements with the "
                                               "stored snapshot (exit 1 on any change)")
    p.add_argument("--update", action="store_true", help="rewrite the snapshot from the registry")
    p.add_argument("--path", default=None,
                   help="snapshot directory (one JSON per claim) or a single .json file "
                        "(default: verification/snapshots/, the package's own claims; claims "
                        "from --claims-from or $GAPVERIFY_CLAIMS need a path of their own)")
    p.add_argument("--package", action="store_true",
                   help="the package's own claims, even when claim files are loaded")


COMMANDS = {"snapshot": _cmd_snapshot}
