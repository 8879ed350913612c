"""``gapverify verify``: the whole verification, as ``make verify`` runs it, with the run's
own exit code.

The steps, each the command a person would type (run in a child ``python -m gapverify``,
so that each is exactly that command and one failing leaves the others' outputs):

1. ``gapverify run --profile P --json OUT/results.json --store STORE [--workers N]``;
2. ``gapverify paper-figure --out OUT`` (the paper's depth figure; not for ``--profile long``);
3. ``gapverify report --from OUT/results.json --store STORE --out OUT`` (tables, figures,
   ``report.tex`` and, where LaTeX is complete, ``report.pdf``).

Each step is said on stderr as it starts (``gapverify verify: step 2 of 3: drawing the
paper's depth figure (gapverify paper-figure --out OUT)``), and each says its own progress:
the run its sampling and judging, the report its tables, figures and PDF. Steps 2 and 3
run when the run judged its claims (its code 0, 1 or 3); a failure of either is said on
stderr and never loses the results. The exit code is the run's own, from its
claims' words in ``OUT/results.json`` (:func:`verification.judging.outcomes.exit_code`:
0 every claim verified, supported, reproduced or recorded; 1 a claim failed or is flaky;
3 not verified), else the run's code (2 bad input, 130/143 interrupted). GNU make can
only exit 0 or 2, so ``make verify`` reports a 1 or a 3 as its own 2: a CI that needs
the exact code calls ``gapverify verify``.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gapverify.verification.claims.inputs import UsageError, _int_in
from gapverify.verification.judging.outcomes import (
    CLAIM_VERDICTS, EXIT_FAIL, EXIT_INTERRUPTED, EXIT_OK, EXIT_UNVERIFIED, exit_code,
)
from gapverify.verification.running.defaults import DEFAULT_STORE, STORE_ENV, default_store

__all__ = ["register", "COMMANDS", "PROFILES", "run_exit_code"]

#: The profiles ``verify`` runs: quick and standard (every default claim, minutes) and
#: long (the bulk edge at kappa = 1, about 45 minutes on 2 cores: ``make long``, overnight).
PROFILES = ("quick", "standard", "long")
#: Profiles whose verification draws the paper's depth figure too (long judges the edge only).
_PAPER_FIGURE = ("quick", "standard")
#: The run's codes after which it judged every claim and wrote its results.
_JUDGED = (EXIT_OK, EXIT_FAIL, EXIT_UNVERIFIED)


def _step(argv: list[str]) -> int:
    """``gapverify ARGV`` in a child process sharing this terminal; its exit code. Ctrl-C
    reaches the child too, which keeps its finished work and exits 130: wait for it."""
    proc = subprocess.Popen([sys.executable, "-m", "gapverify", *argv])
    try:
        return proc.wait()
    except KeyboardInterrupt:
        try:
            return proc.wait()
        except KeyboardInterrupt:
            proc.kill()
            return EXIT_INTERRUPTED


def run_exit_code(results: Path, run_code: int) -> int:
    """The run's exit code from its claims' words in ``results`` (the JSON of ``gapverify
    run --json``): :func:`~verification.judging.outcomes.exit_code`, the rule the Python
    API uses too; ``run_code`` where the run did not judge its claims or the file cannot
    be read."""
    if run_code not in _JUDGED:
        return run_code
    try:
        claims = json.loads(results.read_text(encoding="utf-8"))["claims"]
        return exit_code([c["verdict"] for c in claims])
    except (OSError, ValueError, KeyError, TypeError):
        return run_code


def _summary(results: Path) -> str:
    """``N verified, M recorded, ...`` of the claims in ``results`` (table order)."""
    try:
        words = [c["verdict"] for c in json.loads(results.read_text(encoding="utf-8"))["claims"]]
    except (OSError, ValueError, KeyError, TypeError):
        return "no readable results"
    return ", ".join(f"{words.count(v.word)} {v.word}" for v in CLAIM_VERDICTS if v.word in words)


#: What each step after the run does, in the words of its phase line.
_STEP_WORDS = {"paper-figure": "drawing the paper's depth figure",
               "report": "writing the report (tables, figures, report.tex, the PDF)"}


def _say_step(i: int, count: int, what: str, argv: list[str]) -> None:
    """The phase line of step ``i`` of ``count`` on stderr, with the command it runs."""
    print(f"gapverify verify: step {i} of {count}: {what} (gapverify {' '.join(argv)})",
          file=sys.stderr, flush=True)


def _cmd_verify(args) -> int:
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"parameter '--out': cannot create {str(out)!r}: "
                         f"{exc.strerror or exc}") from None
    store = args.store or default_store()
    results = out / "results.json"
    run = ["run", "--profile", args.profile, "--json", str(results), "--store", store]
    if args.workers is not None:
        run += ["--workers", str(args.workers)]
    steps = [("paper-figure", ["paper-figure", "--out", str(out)])] if args.profile in _PAPER_FIGURE else []
    steps.append(("report", ["report", "--from", str(results), "--store", store, "--out", str(out)]))
    count = 1 + len(steps)
    _say_step(1, count, "sampling and judging the claims", run)
    run_code = _step(run)
    if run_code not in _JUDGED:
        print(f"gapverify verify: 'gapverify {' '.join(run)}' ended with exit {run_code}; "
              "no figure or report", file=sys.stderr)
        return run_code
    for i, (name, argv) in enumerate(steps, 2):
        _say_step(i, count, _STEP_WORDS[name], argv)
        code = _step(argv)
        if code != EXIT_OK:
            print(f"gapverify verify: 'gapverify {name}' ended with exit {code} (see above); "
                  f"the run's results are in {results} and are not lost", file=sys.stderr)
    code = run_exit_code(results, run_code)
    if args.summary:
        _write_summary(Path(args.summary), results, store)
    print(f"Outputs: {results}, {out / 'report.pdf'} (where LaTeX is complete), "
          f"{out / 'report.tex'}, {out / 'tables'}/, {out / 'figures'}/"
          + (f", {out / 'depth_profile.png'}" if args.profile in _PAPER_FIGURE else ""))
    print(f"gapverify verify: {_summary(results)}: exit {code}")
    return code


def _write_summary(path: Path, results: Path, store: str) -> None:
    """The job-summary page (:func:`reports.changes.job_summary`): the summary table and
    what changed since the store's previous run of the profile."""
    import json

    from gapverify.reports.changes import job_summary, previous_run
    from gapverify.verification.running.store import Store

    run = json.loads(results.read_text())
    st = Store(store, readonly=True)
    try:
        before = previous_run(st.runs(), st, run)
    finally:
        st.close()
    try:
        with path.open("a", encoding="utf-8") as f:  # $GITHUB_STEP_SUMMARY is appended to
            f.write(job_summary(run, before))
    except OSError as exc:
        print(f"gapverify verify: parameter '--summary': cannot write {str(path)!r}: "
              f"{exc.strerror or exc}", file=sys.stderr)


def register(sub) -> None:
    p = sub.add_parser("verify", help="the whole verification (what 'make verify' runs): run "
                                      "the suite, draw the paper's figure, write the report; "
                                      "exits with the run's code")
    p.add_argument("--profile", choices=PROFILES, default="standard",
                   help="sweep profile of the run (quick: minutes; standard: the report's; "
                        "long: the bulk edge at kappa = 1 to T = 16384, about 45 min on 2 "
                        "cores, no depth figure)")
    p.add_argument("--out", metavar="DIR", default="reports/out",
                   help="output folder: results.json, tables/, figures/, report.tex, report.pdf")
    p.add_argument("--store", metavar="PATH", default=None,
                   help=f"SQLite store the run samples into and the report reads (default: "
                        f"${STORE_ENV} if set, else {DEFAULT_STORE})")
    p.add_argument("--workers", type=_int_in("--workers", 1, 64), default=None,
                   help="worker processes of the run (default: the run's, up to 2)")
    p.add_argument("--summary", metavar="PATH", default=None,
                   help="append a Markdown job summary to PATH: one row per claim (verdict, "
                        "power) and what changed since the store's previous run of the "
                        "profile (experiment, statement, rate, verdict); for CI, e.g. "
                        "$GITHUB_STEP_SUMMARY (default: none)")


COMMANDS = {"verify": _cmd_verify}
