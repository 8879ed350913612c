"""The ``gapverify run`` command: sample the selected claims, judge them and print (and
record) the verdicts, with what it needs around the sampling: the ``--profile large``
and early memory checks, :class:`LineProgress` (progress lines off a terminal, also used
by ``audit``), SIGTERM handled as an interrupt, the store line on stderr and the
``training.fix`` seeds table. Registered in :mod:`gapverify.cli`.
"""
from __future__ import annotations

import os
import sys

from gapverify.verification.judging.outcomes import (
    EXIT_INTERRUPTED, EXIT_TERMINATED, exit_code,
)
from gapverify.verification.claims.inputs import (
    UsageError, _check_perturbed_names, _claims_arg, check_run_inputs, parse_perturb,
    parse_perturb_parameter, parse_set,
)
from gapverify.cli.args import _claims_with_profile, write_json


def _cmd_run(args) -> int:
    # the run's machinery (numpy, scipy, sympy) is imported here, not at start-up
    from gapverify.cli import display
    from gapverify.verification.running.runner import Terminated
    from gapverify.verification.running.store import Store
    from gapverify.verification.running.suite import results_json, verify

    store = None
    progress = None if args.quiet else (display.Progress() if sys.stderr.isatty()
                                        else LineProgress())
    try:
        with _terminate_as_interrupt():  # from the input checks on (sympy: seconds)
            opts = _run_options(args)
            store = Store(args.store)
            with progress or display.nullcontext():
                results = verify(opts, store, progress=progress)
    except KeyboardInterrupt as exc:
        from gapverify.verification.claims.loading import ClaimFileInterrupt

        if isinstance(exc, ClaimFileInterrupt):
            raise  # while a claim file loaded: the command line's line names the file
        how = "terminated" if isinstance(exc, Terminated) else "interrupted"
        kept = (f"{store.count()} measurements are kept in {args.store}; rerun the same "
                "command to resume" if store is not None else "before sampling, nothing stored")
        print(f"\n{how}: {kept}", file=sys.stderr)
        return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
    payload = _record(args, store, results_json(results, opts))
    display.verdict_table(results, opts)
    _print_run_notes(args, store, opts, "backend" in payload)
    if args.json:
        write_json(args.json, payload)
    # the exit code of the claims' verdict words, as the API's (judging/outcomes.py)
    return exit_code([c["verdict"] for c in payload["claims"]])


def _run_options(args):
    """The options of ``gapverify run``, every one checked before anything is sampled (bad
    input: exit 2), then the store line on stderr."""
    from gapverify.verification.running.claim_errors import checked_inputs
    from gapverify.verification.running.executors import parse_scheduler
    from gapverify.verification.running.suite import RunOptions

    claims = _claims_arg(args.claims)
    overrides = parse_set(args.set)
    claims = _run_claims(claims, args)
    workers = args.workers or max(1, min(2, os.cpu_count() or 1))
    if args.device == "cuda" and args.workers is None:
        workers = 1  # one device: tasks in this process, one after the other
    early = None
    if args.sizes and args.scheduler is None and (args.backend, args.dtype) == ("numpy", "float64"):
        def early():  # the memory of the largest size, named as such before --sizes's checks
            _check_memory_early(claims, overrides, args.sizes, workers, args.profile)
    # a claim whose prediction is complex at a case: a claim error, not a traceback
    checked_inputs(lambda: check_run_inputs(claims, overrides, args.profile, args.sizes,
                                            before_sizes=early),
                   claims, overrides, args.profile)
    parse_scheduler(args.scheduler)  # bad addresses exit 2 before anything starts
    perturb, perturb_predictions = parse_perturb(args.perturb)
    perturb_parameters = parse_perturb_parameter(args.perturb_parameter)
    _check_perturbed_names(claims, [*perturb_predictions, *perturb_parameters])
    _say_store(args)
    return RunOptions(claims=claims, profile=args.profile, sizes=args.sizes,
                      replicates=args.replicates, seed=args.seed, overrides=overrides,
                      perturb=perturb, perturb_predictions=perturb_predictions,
                      perturb_parameters=perturb_parameters, workers=workers, level=args.level,
                      replay=not args.no_replay, scheduler=args.scheduler, entries=args.entries,
                      backend=args.backend, device=args.device, dtype=args.dtype)


def _run_claims(claims: list[str], args) -> list[str]:
    """The claims a run judges: those with ``--profile large``, ``long`` or ``gpu`` when
    it is asked, those that take ``--backend`` and ``--entries`` when they are given (all
    of them when no claim is named; a named claim that does not take them: exit 2)."""
    from gapverify.verification.claims.registry import get_claim
    from gapverify.verification.running.sampling_inputs import backend_claims, select_entry_claims

    claims = _claims_with_profile(claims, args)
    claims = backend_claims(claims, backend=args.backend, device=args.device, dtype=args.dtype,
                            profile=args.profile, entries=args.entries, named=bool(args.claims))
    if args.profile == "gpu":
        lacking = [c for c in claims if "gpu" not in get_claim(c).profiles]
        if lacking:
            raise UsageError(f"parameter '--profile gpu': claim {lacking[0]} has no gpu profile; "
                             f"claims with one: markov.outliers, width.stable_rank")
    return select_entry_claims(claims, args.entries, named=bool(args.claims))


def _record(args, store, payload: dict) -> dict:
    """The run's results with its command (and backend, if not numpy in float64), recorded
    in the store when it can be written; says on stderr which."""
    payload["command"] = " ".join(["gapverify"] + sys.argv[1:])
    if args.backend != "numpy" or args.dtype != "float64":
        payload["backend"] = {"backend": args.backend, "device": args.device, "dtype": args.dtype}
    run_id = store.add_run(payload["command"], payload)
    if run_id:
        payload["run_id"] = run_id
        print(f"gapverify: recorded as run {run_id} in {args.store} ('gapverify runs' lists "
              "the runs)", file=sys.stderr)
    else:
        print(f"gapverify: note: the store {args.store} is read-only: this run's verdicts are "
              "printed (and written with --json) but not recorded", file=sys.stderr)
    return payload


def _print_run_notes(args, store, opts, backend: bool) -> None:
    """What a run prints under its verdict table: the entry law, the ``training.fix``
    seeds and the backend it sampled with."""
    from gapverify.verification.running.suite import entry_law_lines, plan_run

    for line in entry_law_lines(plan_run(opts)) if args.entries else ():
        print(line)
    if "training.fix" in opts.claims:
        _print_training_seeds(store, opts)
    if backend:
        print(f"Sampled with {args.backend} on {args.device} in {args.dtype} "
              f"(numerics.array_api; store key includes backend, device and dtype)")


def _print_training_seeds(store, opts) -> None:
    """The seeds table of ``training.fix`` (every seed: trained or not, steps, loss
    ratios; standard against fix) from the stored measurements of this run; the loss
    curves and the JSON: ``python -m gapverify.reports.model_figures training``."""
    from gapverify.numerics.training import seeds_table
    from gapverify.verification.running.runner import SerialExecutor
    from gapverify.verification.running.suite import plan_run, sample

    for job in plan_run(opts).jobs_of("training.fix"):
        data = sample(store, job.claim, job.sampling, job.profile, job.seed, SerialExecutor())
        for T, reps in sorted(data.items()):
            for r, m in enumerate(reps):
                if "unavailable" in m:
                    return
                print(f"\ntraining.fix, T = {T}, depth {int(job.values['depth'])}, "
                      f"replicate {r}:")
                print(seeds_table(m))
    print("loss curves and the seeds as JSON: python -m gapverify.reports.model_figures training "
          f"--store {store.path} --seed {opts.seed}")


class LineProgress:
    """Progress as plain lines on stderr when it is not a terminal (a log, CI, a pipe):
    one line when a group of tasks starts, one every ``every`` seconds while it runs (done,
    rate and the time left at that rate: a standard sweep is one group of 16 000 tasks
    and minutes long) and one when it is finished, instead of a redrawn bar."""

    def __init__(self, stream=None, every: float = 30.0) -> None:
        self._stream = stream
        self._every = every
        self._label, self._todo, self._done, self._start = "", 0, 0, 0.0
        self._last = 0.0
        self._left = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def _print(self, text: str) -> None:
        print(text, file=self._stream or sys.stderr, flush=True)

    def start(self, claim: str, todo: int, total: int, tasks=None) -> None:
        import time

        from gapverify.verification.running.runner import TimeLeft

        self._label, self._todo, self._done, self._start = claim, todo, 0, time.monotonic()
        self._last = self._start
        self._left = TimeLeft(tasks) if tasks else None
        reused = total - todo
        self._print(f"sampling {claim}: {todo} task(s)" + (f", {reused} reused from the store"
                                                           if reused else ""))
        if todo == 0:
            self._print(f"sampled {claim}: nothing to do")

    def time_left(self, elapsed: float) -> float:
        """Seconds left: the cost model of the tasks still to run
        (:class:`~verification.running.runner.TimeLeft`), or without the tasks the rate so far."""
        left = self._left.seconds(elapsed) if self._left is not None else None
        return elapsed * (self._todo - self._done) / self._done if left is None else left

    def advance(self, task, seconds: float) -> None:
        import time

        self._done += 1
        if self._left is not None:
            self._left.finished(task, seconds)
        now = time.monotonic()
        if self._done == self._todo:
            self._print(f"sampled {self._label}: {self._done}/{self._todo} task(s) in "
                        f"{now - self._start:.1f} s")
        elif now - self._last >= self._every:
            self._last = now
            elapsed = now - self._start
            self._print(f"  {self._label}: {self._done}/{self._todo} task(s) "
                        f"({100 * self._done / self._todo:.0f}%) in {elapsed:.0f} s, about "
                        f"{self.time_left(elapsed):.0f} s left")


def _check_memory_early(claims, overrides, sizes, workers, profile) -> None:
    """The memory estimate of the largest size (exit 2 naming ``--sizes``) before the other
    checks of ``--sizes``, so that a size that cannot fit is named as such."""
    from gapverify.verification.claims.registry import get_claim
    from gapverify.verification.running.runner import Task, check_memory

    judged = [get_claim(c).for_profile(profile) for c in claims]  # a profile's own experiment
    tasks = [Task(claim.experiment, tuple(sorted((k, float(v)) for k, v in case.items())),
                  max(sizes), 0, 0, "")
             for claim in judged for case in claim.cases_for(profile, overrides)]
    check_memory(tasks, workers)


def say_now(text: str) -> None:
    """One line on stderr, written at once and safely from a signal handler (``os.write``:
    no buffered stream re-entered while it was writing)."""
    try:
        os.write(sys.stderr.fileno(), ("\n" + text + "\n").encode(errors="replace"))
    except (OSError, ValueError, AttributeError):  # no stderr (closed, replaced)
        pass


class _terminate_as_interrupt:
    """While a run is on, SIGTERM raises :class:`verification.running.runner.Terminated`
    and SIGINT ``KeyboardInterrupt`` in the main thread (the same clean-up, exit 143 or
    130), each acknowledged at once on stderr in one line; the same signal again while
    the run stops exits at once (``os._exit``: the store keeps every finished
    measurement, committed one by one, and a rerun takes over this run's leases). A
    SIGINT that was ignored when the run started (``nohup``, a background job) stays
    ignored."""

    def __enter__(self):
        import signal

        from gapverify.verification.running.runner import Terminated

        self._count = 0

        def on_signal(signum, frame):
            self._count += 1
            term = signum == signal.SIGTERM
            name = signal.Signals(signum).name
            code = EXIT_TERMINATED if term else EXIT_INTERRUPTED
            if self._count > 1:
                say_now(f"gapverify: {name} again: exiting now (exit {code}); every finished "
                        "measurement is in the store and a rerun resumes")
                os._exit(code)
            say_now(f"gapverify: {name} received: stopping; the tasks in progress are "
                    f"dropped, every finished measurement is kept ({name} again exits at once)")
            raise Terminated() if term else KeyboardInterrupt()

        self._old = {}
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                if sig == signal.SIGINT and signal.getsignal(sig) is not signal.default_int_handler:
                    continue  # ignored (nohup, a background job) or the caller's own
                self._old[sig] = signal.signal(sig, on_signal)
            except ValueError:  # not the main thread: leave signals alone
                break
        return self

    def __exit__(self, *exc):
        import signal

        for sig, old in self._old.items():
            signal.signal(sig, old)
        return False


def _say_store(args) -> None:
    print(f"gapverify: store {args.store} ({args.store_source})", file=sys.stderr)
