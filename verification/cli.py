"""The ``gapverify`` command line (also ``python -m verification``).

Exit codes: 0 every claim verified (or the command succeeded), 1 some claim failed or a
check found a difference, 2 bad usage or input (the message names the parameter and its
allowed range), 3 no claim failed but some claim is not verified (a prediction lacks
power at the sizes run, or was not assessed), 130 interrupted (SIGINT) and 143 terminated
(SIGTERM); finished work is kept in the store either way.
"""
from __future__ import annotations

import argparse
import json
import os
import math
import sys
from pathlib import Path
from typing import Sequence

from theory.parameters import PARAMETERS, ParameterError
from verification.runner import DEFAULT_SEED

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_UNVERIFIED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_TERMINATED = 143  # 128 + SIGTERM
MAX_T = 16384
DEFAULT_STORE = "reports/gapverify.sqlite"


class UsageError(argparse.ArgumentTypeError, ValueError):
    """Bad command-line input: reported on one line, exit code 2 (argparse keeps the text)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: exit 2 with the usage line
        self.print_usage(sys.stderr)
        raise UsageError(message)


def _int_in(name: str, low: int, high: int):
    def parse(text: str) -> int:
        try:
            value = float(text)
        except ValueError:
            raise UsageError(f"parameter '{name}' must be an integer in [{low}, {high}], got {text!r}") from None
        if not math.isfinite(value) or value != int(value) or not low <= value <= high:
            raise UsageError(f"parameter '{name}' must be an integer in [{low}, {high}], got {text!r}")
        return int(value)
    return parse


def parse_sizes(text: str) -> list[int]:
    """``T1,T2,...``: distinct integers in ``[16, MAX_T]``."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise UsageError(f"parameter '--sizes' must list integers T in [16, {MAX_T}], got {text!r}")
    sizes = [_int_in("--sizes (T)", 16, MAX_T)(p) for p in parts]
    if len(set(sizes)) != len(sizes):
        raise UsageError(f"parameter '--sizes' must not repeat a size, got {text!r}")
    return sorted(sizes)


def parse_float(name: str, low: float, high: float):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or not low < value < high:
            raise UsageError(f"parameter '{name}' must be a finite number in ({low:g}, {high:g}), got {text!r}")
        return value
    return parse


def parse_set(items: Sequence[str] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items or []:
        if "=" not in item:
            raise UsageError(f"--set takes NAME=VALUE, got {item!r}; names: {', '.join(PARAMETERS)}")
        name, value = (s.strip() for s in item.split("=", 1))
        if name not in PARAMETERS:
            raise UsageError(f"unknown parameter '{name}' in --set; known: {', '.join(PARAMETERS)}")
        out[name] = PARAMETERS[name].validate(value)
    return out


def parse_perturb(items: Sequence[str] | None) -> tuple[float, dict[str, float]]:
    """``--perturb EPS`` (every prediction) and ``--perturb NAME=EPS`` (one prediction),
    each relative error in (-1, 1); a prediction named twice is an error."""
    everything, one = 0.0, {}
    for item in items or []:
        if "=" in item:
            name, text = (s.strip() for s in item.split("=", 1))
            if not name or name in one:
                raise UsageError(f"parameter '--perturb' names prediction {name!r} "
                                 f"{'twice' if name else 'without a name'}, got {item!r}")
            one[name] = parse_float(f"--perturb {name}", -1.0, 1.0)(text)
        else:
            if everything:
                raise UsageError(f"parameter '--perturb' EPS given twice, got {item!r}")
            everything = parse_float("--perturb", -1.0, 1.0)(item)
    return everything, one


def parse_perturb_parameter(items: Sequence[str] | None) -> dict[str, dict[str, float]]:
    """``--perturb-parameter NAME:PARAM=FACTOR``: prediction NAME evaluated at parameter
    PARAM times FACTOR (in (0, 100)), every other prediction unchanged."""
    out: dict[str, dict[str, float]] = {}
    for item in items or []:
        head, sep, text = item.partition("=")
        name, colon, param = head.partition(":")
        name, param = name.strip(), param.strip()
        if not sep or not colon or not name or not param:
            raise UsageError("parameter '--perturb-parameter' takes PREDICTION:PARAMETER=FACTOR, "
                             f"got {item!r}")
        if param not in PARAMETERS:
            raise UsageError(f"unknown parameter '{param}' in --perturb-parameter; known: "
                             f"{', '.join(PARAMETERS)}")
        if param in out.get(name, {}):
            raise UsageError(f"parameter '--perturb-parameter' sets {name}:{param} twice")
        out.setdefault(name, {})[param] = parse_float(f"--perturb-parameter {name}:{param}",
                                                      0.0, 100.0)(text.strip())
    return out


def _check_perturbed_names(claims: Sequence[str], names: Sequence[str]) -> None:
    from verification.registry import get_claim

    known = {p.name for c in claims for p in get_claim(c).predictions}
    for n in names:
        if n not in known:
            raise UsageError(f"no selected claim has a prediction named '{n}' (in --perturb or "
                             f"--perturb-parameter); predictions: {', '.join(sorted(known))}")


def add_run_options(p: argparse.ArgumentParser, quiet_help: str = "no progress display") -> None:
    """Options every sampling command shares (``run``, ``audit``, ``calibrate``)."""
    p.add_argument("--workers", type=_int_in("--workers", 1, 64), default=None,
                   help="worker processes (default: min(2, cores))")
    p.add_argument("--level", type=parse_float("--level", 0.0, 0.5), default=0.01,
                   help="false-alarm level per claim, Bonferroni over its tests (default 0.01)")
    p.add_argument("--store", default=DEFAULT_STORE, help=f"SQLite store (default {DEFAULT_STORE})")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON")
    p.add_argument("--quiet", action="store_true", help=quiet_help)


def _claims_arg(names: Sequence[str]) -> list[str]:
    from verification.registry import CLAIMS, get_claim

    if not names:
        return list(CLAIMS)
    for n in names:
        get_claim(n)
    return list(dict.fromkeys(names))


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gapverify", description=(
        "Verify the random-matrix theory of attention at initialisation (Mind the Gap, "
        "ICML 2025) against sampled matrices."))
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    c = sub.add_parser("claims", help="list the claims: id, status, statement")
    c.add_argument("--json", action="store_true")

    pr = sub.add_parser("predict", help="the theory's named predictions at given parameters")
    pr.add_argument("claim")
    pr.add_argument("--set", action="append", metavar="NAME=VALUE")
    pr.add_argument("--json", action="store_true")

    r = sub.add_parser("run", help="sample, judge and print a verdict table")
    r.add_argument("claims", nargs="*", metavar="CLAIM")
    r.add_argument("--profile", choices=("quick", "standard", "large"), default="standard")
    r.add_argument("--sizes", type=parse_sizes)
    r.add_argument("--replicates", type=_int_in("--replicates", 2, 10000))
    r.add_argument("--seed", type=_int_in("--seed", 0, 2**63 - 1), default=DEFAULT_SEED)
    r.add_argument("--set", action="append", metavar="NAME=VALUE")
    r.add_argument("--perturb", action="append", metavar="EPS|NAME=EPS",
                   help="judge the same samples against a wrong statement: every predicted "
                        "limit (EPS) or one prediction (NAME=EPS) times 1 + EPS; repeatable")
    r.add_argument("--perturb-parameter", action="append", metavar="NAME:PARAM=FACTOR",
                   help="evaluate prediction NAME at parameter PARAM times FACTOR, every "
                        "other prediction unchanged; repeatable")
    add_run_options(r)
    r.add_argument("--entries", metavar="LAW", default=None,
                   help="law of the entries Z of A = D^-1 Z: gaussian-logits (default, softmax), "
                        "lognormal, exponential or scipy:NAME(ARGS), e.g. scipy:gamma(2); selects "
                        "(or requires) the single-layer claims that take one")
    r.add_argument("--no-replay", action="store_true", help="do not replay failures")
    r.add_argument("--scheduler", metavar="ADDRESS|local:N", default=None,
                   help="run the tasks on a Dask cluster: a scheduler address "
                        "(tcp://host:8786) or local:N for a LocalCluster of N workers")

    for extra in _EXTRA_COMMANDS:
        extra(sub)
    return p


def _cmd_claims(args) -> int:
    from verification.registry import CLAIMS

    rows = [{"id": c.id, "status": c.status, "statement": c.title,
             "predictions": {p.name: p.status for p in c.predictions}} for c in CLAIMS.values()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    from verification import display

    display.claims_table(rows)
    return EXIT_OK


def _cmd_predict(args) -> int:
    from verification.registry import get_claim

    claim = get_claim(args.claim)
    overrides = parse_set(args.set)
    unknown = [k for k in overrides if k not in claim.parameters]
    if unknown:
        raise UsageError(f"claim {claim.id} takes no parameter '{unknown[0]}'; "
                         f"it takes: {', '.join(claim.parameters)}")
    values = claim.resolve(overrides)
    preds = claim.predict_numbers(values)
    out = {"claim": claim.id, "status": claim.status, "parameters": values,
           "predictions": preds, "statement": claim.statement_latex(values)}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        from verification import display

        display.predictions_table(out, {p.name: p.status for p in claim.predictions})
    return EXIT_OK


def _cmd_run(args) -> int:
    from verification import display
    from verification.store import Store
    from verification.suite import RunOptions, results_json, verify
    from verification.registry import get_claim

    claims = _claims_arg(args.claims)
    overrides = parse_set(args.set)
    if overrides and not any(k in get_claim(c).parameters for c in claims for k in overrides):
        raise UsageError(f"no selected claim takes parameter '{next(iter(overrides))}'")
    claims = _large_claims(claims, args)
    from verification.suite import select_entry_claims

    claims = select_entry_claims(claims, args.entries, named=bool(args.claims))
    workers = args.workers or max(1, min(2, os.cpu_count() or 1))
    from verification.executors import parse_scheduler

    parse_scheduler(args.scheduler)  # bad addresses exit 2 before anything starts
    perturb, perturb_predictions = parse_perturb(args.perturb)
    perturb_parameters = parse_perturb_parameter(args.perturb_parameter)
    _check_perturbed_names(claims, [*perturb_predictions, *perturb_parameters])
    opts = RunOptions(claims=claims, profile=args.profile, sizes=args.sizes,
                      replicates=args.replicates, seed=args.seed, overrides=overrides,
                      perturb=perturb, perturb_predictions=perturb_predictions,
                      perturb_parameters=perturb_parameters, workers=workers, level=args.level,
                      replay=not args.no_replay, scheduler=args.scheduler, entries=args.entries)
    store = Store(args.store)
    progress = None if args.quiet else display.Progress()
    from verification.runner import Terminated

    try:
        with _terminate_as_interrupt(), (progress or display.nullcontext()):
            results = verify(opts, store, progress=progress)
    except KeyboardInterrupt as exc:
        how = "terminated" if isinstance(exc, Terminated) else "interrupted"
        print(f"\n{how}: {store.count()} measurements are kept in {args.store}; "
              "rerun the same command to resume", file=sys.stderr)
        return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
    payload = results_json(results, opts)
    payload["command"] = " ".join(["gapverify"] + sys.argv[1:])
    store.add_run(payload["command"], payload)
    display.verdict_table(results, opts)
    from verification.suite import entry_law_lines, plan_run

    for line in entry_law_lines(plan_run(opts)) if args.entries else ():
        print(line)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(payload, indent=2, sort_keys=True))
    if any(r.verdict in ("fail", "flaky") for r in results):
        return EXIT_FAIL
    return EXIT_OK if all(r.verdict == "pass" for r in results) else EXIT_UNVERIFIED


def _large_claims(claims: list[str], args) -> list[str]:
    """``--profile large``: the claims that have one (all of them when none is named)."""
    from verification.registry import get_claim

    if args.profile != "large":
        return claims
    have = [c for c in claims if "large" in get_claim(c).profiles]
    if args.claims and len(have) < len(claims):
        from verification.registry import CLAIMS

        lacking = next(c for c in claims if c not in have)
        raise UsageError(f"parameter '--profile large': claim {lacking} has no large profile; "
                         f"claims with one: {', '.join(c for c in CLAIMS if 'large' in CLAIMS[c].profiles)}")
    if not have:
        raise UsageError("parameter '--profile large': no claim has a large profile")
    return have


class _terminate_as_interrupt:
    """SIGTERM raises :class:`verification.runner.Terminated` in the main thread while a
    run is on (a ``KeyboardInterrupt``: the same clean-up as Ctrl-C, exit 143)."""

    def __enter__(self):
        import signal

        from verification.runner import Terminated

        def on_term(signum, frame):
            raise Terminated()

        try:
            self._old = signal.signal(signal.SIGTERM, on_term)
        except ValueError:  # not the main thread: leave signals alone
            self._old = None
        return self

    def __exit__(self, *exc):
        import signal

        if self._old is not None:
            signal.signal(signal.SIGTERM, self._old)
        return False


_COMMANDS = {"claims": _cmd_claims, "predict": _cmd_predict, "run": _cmd_run}
_EXTRA_COMMANDS: list = []  # (register(subparsers)) hooks of other modules, see below


def _load_extensions() -> None:
    """Commands that live in their own modules (tables, report, snapshot, audit); once."""
    import importlib

    if _EXTRA_COMMANDS:
        return
    for module in ("verification.paper", "verification.snapshot", "verification.audit",
                   "verification.calibrate", "verification.normalization", "reports.cli"):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name == module:
                continue
            raise
        _EXTRA_COMMANDS.append(mod.register)
        _COMMANDS.update(mod.COMMANDS)


def main(argv: Sequence[str] | None = None) -> int:
    _load_extensions()
    from verification.registry import UnknownClaimError

    try:
        args = build_parser().parse_args(argv)
        return _COMMANDS[args.command](args)
    except (UsageError, ParameterError, UnknownClaimError) as exc:
        print(f"gapverify: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        if "parameter '" in str(exc):
            print(f"gapverify: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        raise


if __name__ == "__main__":
    sys.exit(main())
