"""The ``gapverify tables`` and ``gapverify report`` commands.

Listed in :data:`gapverify.cli._COMMAND_MODULES`, which registers it through
:func:`register` and :data:`COMMANDS`. Both read a judged run, never sample:

* ``--from RESULTS.json``: the results file written by ``gapverify run --json``;
* ``--store PATH``: the SQLite store (default ``$GAPVERIFY_STORE``, else
  ``reports/gapverify.sqlite``); its last run when ``--from`` is not given (or run
  ``--run ID``, see ``gapverify runs``), and in any case the source of the stored spectra
  the figures plot.

Outputs of one run never mix with another's: ``--run ID`` writes into ``OUT/run-ID/``,
with ``SOURCE.json`` saying which run they are (store, id, command, seed, profile,
provenance); without ``--run`` the outputs of the last run (or of ``--from``) go to
``OUT`` itself, as before, and files there that this command did not rewrite (left by
another run) are named in a warning on stderr.

Exit codes: 0 written (and compiled where LaTeX is usable; otherwise the ``.tex`` only,
and a line says why there is no PDF), 1 pdflatex failed on a usable installation (the tail
of its log is printed), 2 bad input (a missing or unreadable results file or store).
"""
from __future__ import annotations

import argparse
import re
import sys
from contextlib import nullcontext
from pathlib import Path

from gapverify.verification.running.defaults import DEFAULT_STORE, STORE_ENV, default_store
from gapverify.verification.judging.outcomes import EXIT_FAIL, EXIT_OK, EXIT_USAGE
from gapverify.verification.claims.inputs import _int_in

__all__ = ["register", "COMMANDS", "out_folder", "DEFAULT_TABLES_OUT", "DEFAULT_REPORT_OUT"]

DEFAULT_TABLES_OUT = "reports/out/tables"
DEFAULT_REPORT_OUT = "reports/out"
#: The formats of ``gapverify tables --format`` (:data:`reports.tables.FORMATS`).
TABLE_FORMATS = ("latex", "markdown")


def _source_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", metavar="PATH", default=None,
                        help=f"result store: its last run, unless --from or --run is given, "
                             f"and the stored spectra for figures (default: ${STORE_ENV} if "
                             f"set, else {DEFAULT_STORE})")
    parser.add_argument("--from", dest="results", metavar="RESULTS.json", default=None,
                        help="results file of 'gapverify run --json' (instead of the store's "
                             "last run)")
    parser.add_argument("--run", dest="run_id", metavar="ID", type=_int_in("--run", 1, 2**63 - 1),
                        default=None,
                        help="the store's run ID ('gapverify runs' lists them); outputs go "
                             "to OUT/run-ID/ (default: the last run, outputs in OUT)")


def out_folder(path: str | Path, parameter: str = "--out") -> Path:
    """``path`` as an output folder that can be written, or a :class:`UsageError` naming
    ``parameter``: an existing file, a file on the way, or a folder that cannot be created
    or written is refused before anything is computed (the folder is created)."""
    from gapverify.verification.claims.inputs import UsageError

    out = Path(path)
    if out.exists() and not out.is_dir():
        raise UsageError(f"parameter '{parameter}' must be a folder; {out} is a file")
    ancestor = out
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UsageError(f"parameter '{parameter}' must be a folder; {ancestor} on its path is a file")
    try:  # the one sure test, also for root and read-only file systems: make it
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".gapverify-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"parameter '{parameter}' must be a folder you can write; {out}: "
                         f"{exc.strerror or exc}") from None
    return out


def _check_shapes(run, where: str) -> None:
    """Every claim an object with a list of check objects, every check's rows a list of
    objects with numeric ``T``, ``mean`` and ``se``: else a :class:`ResultsError` naming
    the first wrong field (a wrong type made the tables raise a traceback)."""
    from gapverify.reports.results import ResultsError

    for i, claim in enumerate(run["claims"]):
        if not isinstance(claim, dict):
            raise ResultsError(f"{where}: claims[{i}] must be an object, got {type(claim).__name__}")
        _check_id(claim.get("claim"), f"{where}: claims[{i}].claim")
        if not isinstance(claim.get("checks"), list):
            raise ResultsError(f"{where}: claims[{i}].checks must be a list, got "
                               f"{type(claim.get('checks')).__name__}")
        for j, check in enumerate(claim["checks"]):
            at = f"claims[{i}].checks[{j}]"
            if not isinstance(check, dict):
                raise ResultsError(f"{where}: {at} must be an object, got {type(check).__name__}")
            for key in ("label", "kind", "verdict"):
                if not isinstance(check.get(key), str):
                    raise ResultsError(f"{where}: {at}.{key} must be a string, got "
                                       f"{type(check.get(key)).__name__}")
            rows = check.get("rows", [])
            if not isinstance(rows, list) or not all(
                    isinstance(r, dict) and all(isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool)
                                                for k in ("T", "mean", "se")) for r in rows):
                raise ResultsError(f"{where}: {at}.rows must be a list of objects with numbers "
                                   "T, mean and se")


#: The longest claim id a report takes (a built-in one has 25 characters; the id names a
#: table's file, and a results file holding a megabyte "id" is damaged or not ours).
MAX_CLAIM_ID = 200
_CLAIM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")


def _check_id(claim_id: object, at: str) -> None:
    """A claim id a report can name files and tables after, else a :class:`ResultsError`
    saying what it is (never the id itself when it is long)."""
    from gapverify.reports.results import ResultsError

    if claim_id is None:
        return  # the loader names the missing field
    if not isinstance(claim_id, str):
        raise ResultsError(f"{at} must be a claim id (a string), got {type(claim_id).__name__}")
    if len(claim_id) > MAX_CLAIM_ID:
        raise ResultsError(f"{at} is {len(claim_id):,} characters long ({claim_id[:20]!r}...); a "
                           f"claim id has at most {MAX_CLAIM_ID} (such as markov.outliers)")
    if not _CLAIM_ID.fullmatch(claim_id):
        raise ResultsError(f"{at} must be a claim id (letters, digits, '.', '_' and '-', such as "
                           f"markov.outliers), got {claim_id!r}")


def _check_shapes_of_file(path) -> None:
    # a results file's claims and checks checked before the loader reads them
    import json

    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return  # the loader says what is wrong with the file itself
    if isinstance(payload, dict) and isinstance(payload.get("claims"), list):
        _check_shapes(payload, f"parameter '--from' ({path})")


def register(subparsers) -> None:
    """Add the ``tables`` and ``report`` subcommands to the ``gapverify`` parser."""
    t = subparsers.add_parser("tables", help="LaTeX tables (booktabs, siunitx), or Markdown "
                                             "ones, from stored results, without sampling")
    _source_arguments(t)
    t.add_argument("--out", metavar="DIR", default=DEFAULT_TABLES_OUT,
                   help=f"output folder (default {DEFAULT_TABLES_OUT})")
    t.add_argument("--format", choices=TABLE_FORMATS, default="latex",
                   help="latex: .tex files to \\input (default); markdown: .md files of GitHub "
                        "pipe tables, the same rows and verdict words")
    r = subparsers.add_parser("report", help="tables, figures and a LaTeX/PDF report from "
                                             "stored results, without sampling")
    _source_arguments(r)
    r.add_argument("--out", metavar="DIR", default=DEFAULT_REPORT_OUT,
                   help=f"output folder (default {DEFAULT_REPORT_OUT})")
    r.add_argument("--appendix", action="store_true",
                   help="add the per-size convergence table of every claim as an appendix "
                        "(long; the tables are written to OUT/tables either way)")


def _load(args):
    # (run, store for measurements) or an exit code after printing the error
    from gapverify.reports.results import ResultsError, load_run

    store = args.store if args.store is not None else default_store()
    if args.run_id is not None and args.results is not None:
        print("gapverify: error: give --from RESULTS.json or --run ID, not both", file=sys.stderr)
        return None, None
    try:
        if args.results is not None:  # the shapes first: a wrong type made loading raise
            _check_shapes_of_file(args.results)
        run = load_run(store=store, results=args.results, run_id=args.run_id)
        _check_shapes(run, f"parameter '--from' ({args.results})" if args.results else
                      f"parameter '--store' ({store})")
    except ResultsError as exc:
        print(f"gapverify: error: {exc}", file=sys.stderr)
        return None, None
    if args.run_id is not None:
        args.out = str(Path(args.out) / f"run-{args.run_id}")
    measurements = store if Path(store).is_file() else None
    if args.run_id is not None:
        _write_source(args, run, store)
    return run, measurements


def _write_source(args, run, store) -> None:
    """``OUT/SOURCE.json``: which run the outputs in ``OUT`` come from."""
    import json

    source = {"from": str(args.results) if args.results else str(store),
              "run_id": args.run_id,
              "command": run.get("command"), "root_seed": run.get("root_seed"),
              "profile": run.get("profile"), "code_version": run.get("code_version"),
              "provenance": run.get("provenance"),
              "claims": [c.get("claim") for c in run.get("claims", [])]}
    try:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "SOURCE.json").write_text(json.dumps(source, indent=2, sort_keys=True))
    except OSError as exc:
        from gapverify.verification.claims.inputs import UsageError

        raise UsageError(f"parameter '--out': cannot write to {args.out!r}: {exc.strerror or exc}") from None


def _snapshot(*folders: str | Path, suffixes=(".tex", ".pdf", ".png")) -> dict[Path, int]:
    """The table and figure files (``suffixes``: ``.tex``, ``.pdf``, ``.png``) directly in
    ``folders`` and their modification times (ns), to find what a command leaves
    unwritten."""
    out = {}
    for folder in map(Path, folders):
        if folder.is_dir():
            out.update({p: p.stat().st_mtime_ns for p in folder.iterdir()
                        if p.is_file() and p.suffix in suffixes})
    return out


def _warn_leftovers(out: str, before: dict[Path, int]) -> None:
    """Name the files in ``out`` this command did not rewrite: outputs of another run."""
    left = sorted(str(p) for p, t in before.items() if p.exists() and p.stat().st_mtime_ns == t)
    if left:
        print(f"gapverify: warning: {out} also holds {len(left)} file(s) of an earlier run that "
              f"this run did not write: {', '.join(left[:5])}{' ...' if len(left) > 5 else ''}; "
              "use --run ID for a folder per run, or an empty --out", file=sys.stderr)


def _cmd_tables(args) -> int:
    from gapverify.reports.tables import write_tables

    out_folder(args.out)
    run, _ = _load(args)
    if run is None:
        return EXIT_USAGE
    fmt = getattr(args, "format", "latex")  # a namespace made without --format: LaTeX
    before = _snapshot(args.out, suffixes=(".md",)) if fmt == "markdown" else _snapshot(args.out)
    paths = write_tables(run, args.out, format=fmt)
    _warn_leftovers(args.out, before)
    print(f"tables ({len(paths)}) in {Path(args.out)}:")
    for p in paths:
        print(f"  {p}")
    return EXIT_OK


def _cmd_report(args) -> int:
    from gapverify.cli.display import phase
    from gapverify.reports.document import CompileError, compile_pdf, latex_status, write_report

    out_folder(args.out)
    run, store = _load(args)
    if run is None:
        return EXIT_USAGE
    before = _snapshot(Path(args.out) / "tables", Path(args.out) / "figures")
    # a minute or two without a word otherwise: each step said on stderr as it runs
    with phase(f"writing the report of {len(run['claims'])} claim(s): tables, figures "
               "and report.tex"):
        files = write_report(run, args.out, store, appendix=args.appendix)
    _warn_leftovers(args.out, before)
    print(f"tables ({len(files.tables)}):")
    for p in files.tables:
        print(f"  {p}")
    print(f"figures ({len(files.figures)}, PDF for LaTeX and PNG to view):")
    for pdf, png in files.figures:
        print(f"  {pdf}\n  {png}")
    for s in files.skipped:
        print(f"  left out: {s}")
    print(f"LaTeX document: {files.tex}")
    status = latex_status()
    try:
        with phase("compiling report.tex with pdflatex") if status.usable else nullcontext():
            pdf = compile_pdf(files.tex, status=status)
    except CompileError as exc:
        print(f"gapverify: error: {exc}; end of the log:", file=sys.stderr)
        print(exc.log_tail, file=sys.stderr)
        return EXIT_FAIL
    if pdf is None:
        print(f"no PDF: {status.reason}; wrote {files.tex} only; compile it with "
              f"'pdflatex report.tex' (twice) in {files.out_dir} where LaTeX is complete")
    else:
        print(f"PDF report: {pdf}")
        from gapverify.reports.document import box_warnings

        log = pdf.with_suffix(".log")
        boxes = box_warnings(log.read_text(errors="replace")) if log.is_file() else []
        if boxes:
            worst = max((b.points or 0.0 for b in boxes), default=0.0)
            print(f"  {len(boxes)} over- or underfull box warnings in {log} (widest "
                  f"{worst:.1f} pt too wide)")
    return EXIT_OK


#: Subcommand handlers, merged into the ``gapverify`` command table.
COMMANDS = {"tables": _cmd_tables, "report": _cmd_report}
