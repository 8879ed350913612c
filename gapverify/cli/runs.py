"""The ``gapverify runs`` command: the runs recorded in the store, as a table or JSON,
and ``--csv``, one run's per-size rows (:data:`CSV_COLUMNS`, :func:`csv_rows`, shared
with :mod:`gapverify.api`). Registered in :mod:`gapverify.cli`.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Mapping

from gapverify.verification.judging.outcomes import EXIT_OK
from gapverify.verification.claims.inputs import UsageError
from gapverify.reports.results import CSV_COLUMNS, csv_rows
from gapverify.cli.args import output_path, print_json

def _cmd_runs(args) -> int:
    import datetime as dt

    from gapverify.verification.running.store import Store

    if not Path(args.store).is_file():
        raise UsageError(f"parameter '--store': no such store: {args.store} (run 'gapverify "
                         "run ... --store PATH' first)")
    store = Store(args.store, readonly=True)  # a listing writes nothing, not even a schema
    try:
        runs = store.runs()
        if args.csv is not None:
            if not runs:
                raise UsageError(f"parameter '--store': no run recorded in {args.store}; "
                                 "nothing to export (--csv)")
            run_id = args.run if args.run is not None else runs[-1]["id"]
            run = store.get_run(run_id)
            if run is None:
                raise UsageError(f"parameter '--run': no run {run_id} in {args.store}; runs: "
                                 f"{', '.join(str(r['id']) for r in runs) or '(none)'}")
            return _write_csv(args.csv, _checked_run(run, run_id, args.store), run_id)
    finally:
        store.close()
    if args.run is not None:
        raise UsageError("parameter '--run' selects the run for --csv; give --csv PATH too")
    rows = []
    for r in runs:
        prov = r["provenance"] or {}
        rows.append({**r, "date": dt.datetime.fromtimestamp(r["created"], dt.timezone.utc)
                     .strftime("%Y-%m-%d %H:%M:%SZ"),
                     "git_commit": prov.get("git_commit")})
    if args.json:
        print_json(rows)
        return EXIT_OK
    if not rows:
        print(f"no run recorded in {args.store}")
        return EXIT_OK
    print(f"{'id':>4}  {'date (UTC)':<20} {'profile':<9} {'seed':>20}  {'code':<12} "
          f"{'commit':<10} claims")
    for r in rows:
        claims = ", ".join(map(str, r["claims"]))  # a damaged row's may not be strings
        mark = "P" if r["perturbations"] else " "
        print(f"{r['id']:>4}{mark} {r['date']:<20} {str(r['profile']):<9} {str(r['root_seed']):>20}  "
              f"{str(r['code_version']):<12} {(r['git_commit'] or '-')[:10]:<10} "
              f"{claims if len(claims) < 80 else claims[:77] + '...'}")
        if r["perturbations"]:
            print(f"{'':6}perturbed (a wrong statement, judged on purpose): "
                  + " ".join(r["perturbations"]))
        if r.get("damaged"):
            print(f"{'':6}damaged: {', '.join(r['damaged'])} cannot be read")
    if any(r["perturbations"] for r in rows):
        print("P: a perturbed run; tables and report without --run take the latest run "
              "that is not perturbed")
    return EXIT_OK


def _checked_run(run: Mapping, run_id: int, store: str) -> Mapping:
    """Run ``run_id``'s results as the CSV reads them, else a :class:`UsageError` naming
    the store, the run and the first field that is not of its kind (a store edited by
    hand or damaged: ``claims`` listing numbers made the export raise a ``TypeError``)."""
    from gapverify.cli.reports import _check_shapes
    from gapverify.reports.results import ResultsError, load_run_data

    where = f"parameter '--store': run {run_id} in {store} cannot be exported"
    try:
        if not isinstance(run.get("claims"), list):
            raise ResultsError(f"{where}: its 'claims' must be a list, got "
                               f"{type(run.get('claims')).__name__}")
        _check_shapes(run, where)
        load_run_data(run, where)
    except ResultsError as exc:
        message = str(exc)
        raise UsageError(message if message.startswith(where) else f"{where}: {message}") from None
    return run


def _write_csv(path: str, run: Mapping, run_id: int | None) -> int:
    import csv
    import io

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    rows = csv_rows(run, run_id)
    writer.writerows(rows)
    if path == "-":
        sys.stdout.write(buf.getvalue())
        return EXIT_OK
    output_path("--csv")(path)
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)  # as --json does
        Path(path).write_text(buf.getvalue())
    except OSError as exc:
        raise UsageError(f"parameter '--csv': cannot write {path!r}: {exc.strerror or exc}") from None
    print(f"wrote {len(rows)} rows of run {run_id} to {path}")
    return EXIT_OK
