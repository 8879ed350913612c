"""``gapverify verify``: the whole verification, as ``make verify`` runs it, with the run's
own exit code.

The steps, each the command a person would type (run in a child ``python -m gapverify``,
so that each is exactly that command and one failing leaves the others' outputs):

1. ``gapverify run --profile P --json OUT/results.json --store STORE [--workers N]``;
2. ``gapverify paper-figure --out OUT`` (the paper's depth figure; not for ``--profile long``);
3. ``gapverify report --from OUT/results.json --store STORE --out OUT`` (tables, figures,
   ``report.tex`` and, where LaTeX is complete, ``report.pdf``).

Signals. Each step runs in a session of its own and ``verify`` passes it the SIGINT or
SIGTERM it gets (at its pid, or Ctrl-C at its terminal), once, after one line on stderr
saying so; the step stops as that command does (the run keeps every finished
measurement), no further step starts, and ``verify`` exits 130 or 143. A step that has
not stopped :data:`STOP_SECONDS` later, or a second signal, kills it. A step ends on its
own (SIGTERM) when ``verify`` is gone, killed with SIGKILL included
(:func:`follow_parent`): no step outlives ``verify``, and none of the run's workers
outlives the run.

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
import os
import signal
import subprocess
import sys
from pathlib import Path

from gapverify.verification.claims.inputs import UsageError, _int_in
from gapverify.verification.judging.outcomes import (
    CLAIM_VERDICTS, EXIT_FAIL, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, EXIT_UNVERIFIED,
    exit_code,
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


#: The environment variable that names ``verify``'s pid to each step's process: the step
#: ends (SIGTERM) when ``verify`` is gone, killed with SIGKILL included (:func:`follow_parent`).
PARENT_ENV = "GAPVERIFY_VERIFY_PID"
#: Seconds a step has to stop after ``verify`` passed it a signal, before it is killed.
STOP_SECONDS = 20.0


class _Steps:
    """The signals of a ``verify``: SIGINT and SIGTERM to ``verify``'s pid (or Ctrl-C at
    its terminal) are acknowledged at once on stderr and passed to the step running (a
    child in a session of its own, so that a terminal's Ctrl-C reaches it once, through
    here); that step stops as that command does (the run keeps its finished work) and
    ``verify`` starts no further step. A step that has not stopped ``STOP_SECONDS`` after
    the signal, or a second signal, kills it."""

    def __init__(self) -> None:
        self.child: subprocess.Popen | None = None
        self.received: int | None = None  # the first signal's number
        self.label = ""
        self._old: dict = {}
        self._passed = False  # the signal passed to the step

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                if sig == signal.SIGINT and signal.getsignal(sig) is not signal.default_int_handler:
                    continue  # SIGINT ignored (nohup, a background job): stays ignored
                self._old[sig] = signal.signal(sig, self._on_signal)
            except ValueError:  # not the main thread (a test): signals left alone
                break
        return self

    def __exit__(self, *exc) -> bool:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        return False

    def _on_signal(self, signum, frame) -> None:
        from gapverify.cli.sampling import say_now

        name = signal.Signals(signum).name
        child = self.child if self.child is not None and self.child.poll() is None else None
        if self.received is not None:
            say_now(f"gapverify verify: {name} again: ending {self.label} at once")
            if child is not None:
                _kill_group(child)
            return
        self.received = signum
        say_now(f"gapverify verify: {name} received: " + (
            f"stopping {self.label}; the work it finished is kept ({name} again ends it at "
            "once)" if self.label else "stopping before the next step"))
        self._pass()

    def _pass(self) -> None:
        """The signal received, passed to the step running, once (a signal that arrived
        while the step started is passed as soon as it has)."""
        if self.received is None or self._passed or self.child is None:
            return
        self._passed = True
        self.child.send_signal(self.received)

    def code(self) -> int:
        """The exit code of the signal received: 130 (SIGINT) or 143 (SIGTERM)."""
        return EXIT_TERMINATED if self.received == signal.SIGTERM else EXIT_INTERRUPTED

    def run(self, argv: list[str], label: str) -> int:
        """``gapverify ARGV`` in a child process writing to this terminal; its exit code."""
        self.label = label
        if self.received is not None:  # stopped before this step: not started
            return self.code()
        env = {**os.environ, PARENT_ENV: str(os.getpid())}
        self.child = subprocess.Popen([sys.executable, "-m", "gapverify", *argv], env=env,
                                      start_new_session=True)
        self._pass()  # a signal that came while it started
        try:
            while True:
                try:
                    return self.child.wait(timeout=None if self.received is None else
                                           STOP_SECONDS)
                except subprocess.TimeoutExpired:
                    from gapverify.cli.sampling import say_now

                    say_now(f"gapverify verify: {self.label} did not stop within "
                            f"{STOP_SECONDS:g} s of the signal: killed")
                    _kill_group(self.child)
        finally:
            if self.child.poll() is None:  # an exception here (none expected): no orphan
                _kill_group(self.child)
                self.child.wait()
            if self.received is not None:  # stopped: what the step started goes with it
                _kill_group(self.child)  # (a report's LaTeX run, a killed run's workers)
            self.child, self.label = None, ""


_STEPS: _Steps | None = None


def _kill_group(child: subprocess.Popen) -> None:
    """SIGKILL to the step's process group (its session: the step and what it started);
    the step itself when the group is gone."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        if child.poll() is None:
            child.kill()


def _step(argv: list[str]) -> int:
    """``gapverify ARGV`` in a child process sharing this terminal; its exit code. A signal
    to ``verify`` reaches the child (:class:`_Steps`), which keeps its finished work and
    exits 130 or 143; ``verify`` waits for it."""
    steps = _STEPS or _Steps()
    return steps.run(argv, f"'gapverify {argv[0]}'")


def follow_parent(environ=os.environ) -> None:
    """In a step of ``verify`` (``$GAPVERIFY_VERIFY_PID`` names it): end with SIGTERM, as
    ``kill`` would end this command, when ``verify`` is gone, killed with SIGKILL included
    (Linux: ``prctl(PR_SET_PDEATHSIG)``; elsewhere a thread watching the parent pid), so
    that no step outlives it. The variable is not passed on."""
    text = environ.pop(PARENT_ENV, None)
    if not text or not text.isdigit():
        return
    parent = int(text)
    asked = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            asked = libc.prctl(1, int(signal.SIGTERM), 0, 0, 0) == 0  # 1: PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            asked = False
    if os.getppid() != parent:  # verify died before this process asked
        os.kill(os.getpid(), signal.SIGTERM)
        return
    if not asked:
        import threading
        import time

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch, daemon=True, name="gapverify-verify-watch").start()


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
    global _STEPS
    with _Steps() as _STEPS:
        try:
            run_code = _run_steps(run, steps, results)
        finally:
            _STEPS = None
    if run_code not in _JUDGED:
        return run_code
    code = run_exit_code(results, run_code)
    if args.summary:
        _write_summary(Path(args.summary), results, store)
    print(f"Outputs: {results}, {out / 'report.pdf'} (where LaTeX is complete), "
          f"{out / 'report.tex'}, {out / 'tables'}/, {out / 'figures'}/"
          + (f", {out / 'depth_profile.png'}" if args.profile in _PAPER_FIGURE else ""))
    print(f"gapverify verify: {_summary(results)}: exit {code}")
    return code


def _run_steps(run: list[str], steps: list[tuple[str, list[str]]], results: Path) -> int:
    """The run, then (when it judged its claims) the figure and the report, each said as
    it starts; the run's code, or 130/143 when a signal stopped a step (no further step
    starts: one line says so)."""
    count = 1 + len(steps)
    _say_step(1, count, "sampling and judging the claims", run)
    run_code = _step(run)
    if _stopped(1, count):
        return _STEPS.code()
    if run_code not in _JUDGED:
        print(f"gapverify verify: 'gapverify {' '.join(run)}' ended with exit {run_code}; "
              "no figure or report", file=sys.stderr)
        return run_code
    for i, (name, argv) in enumerate(steps, 2):
        _say_step(i, count, _STEP_WORDS[name], argv)
        code = _step(argv)
        if _stopped(i, count):
            return _STEPS.code()
        if code != EXIT_OK:
            print(f"gapverify verify: 'gapverify {name}' ended with exit {code} (see above); "
                  f"the run's results are in {results} and are not lost", file=sys.stderr)
    return run_code


def _stopped(i: int, count: int) -> bool:
    """Whether a signal stopped ``verify`` during or before step ``i``; says so."""
    if _STEPS is None or _STEPS.received is None:
        return False
    name = signal.Signals(_STEPS.received).name
    print(f"gapverify verify: stopped by {name} at step {i} of {count}; the store keeps every "
          f"finished measurement (rerun the same command to resume): exit {_STEPS.code()}",
          file=sys.stderr)
    return True


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
