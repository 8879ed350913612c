"""The ``gapverify`` command line (also ``python -m verification``).

Exit codes: 0 every claim verified (or the command succeeded), 1 some claim failed or a
check found a difference, 2 bad usage or input (the message names the parameter and its
allowed range), 130 interrupted (finished work is kept in the store).
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

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
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
    r.add_argument("--profile", choices=("quick", "standard"), default="standard")
    r.add_argument("--sizes", type=parse_sizes)
    r.add_argument("--replicates", type=_int_in("--replicates", 2, 10000))
    r.add_argument("--seed", type=_int_in("--seed", 0, 2**63 - 1), default=DEFAULT_SEED)
    r.add_argument("--set", action="append", metavar="NAME=VALUE")
    r.add_argument("--perturb", type=parse_float("--perturb", -1.0, 1.0), default=0.0)
    r.add_argument("--workers", type=_int_in("--workers", 1, 64), default=None)
    r.add_argument("--level", type=parse_float("--level", 0.0, 0.5), default=0.01,
                   help="family-wise false-alarm level (default 0.01)")
    r.add_argument("--store", default=DEFAULT_STORE)
    r.add_argument("--json", metavar="PATH")
    r.add_argument("--no-replay", action="store_true", help="do not replay failures")
    r.add_argument("--quiet", action="store_true", help="no progress display")

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
    workers = args.workers or max(1, min(2, os.cpu_count() or 1))
    opts = RunOptions(claims=claims, profile=args.profile, sizes=args.sizes,
                      replicates=args.replicates, seed=args.seed, overrides=overrides,
                      perturb=args.perturb, workers=workers, level=args.level,
                      replay=not args.no_replay)
    store = Store(args.store)
    progress = None if args.quiet else display.Progress()
    try:
        with (progress or display.nullcontext()):
            results = verify(opts, store, progress=progress)
    except KeyboardInterrupt:
        print(f"\ninterrupted: {store.count()} measurements are kept in {args.store}; "
              "rerun the same command to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    payload = results_json(results, opts)
    payload["command"] = " ".join(["gapverify"] + sys.argv[1:])
    store.add_run(payload["command"], payload)
    display.verdict_table(results, opts)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(payload, indent=2, sort_keys=True))
    return EXIT_FAIL if any(r.verdict in ("fail", "flaky") for r in results) else EXIT_OK


_COMMANDS = {"claims": _cmd_claims, "predict": _cmd_predict, "run": _cmd_run}
_EXTRA_COMMANDS: list = []  # (register(subparsers)) hooks of other modules, see below


def _load_extensions() -> None:
    """Commands that live in their own modules (tables, report, snapshot, audit); once."""
    import importlib

    if _EXTRA_COMMANDS:
        return
    for module in ("verification.paper", "verification.snapshot", "verification.audit", "reports.cli",
                   "verification.normalization"):
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
