"""The ``gapverify`` command line (also ``python -m gapverify``).

Exit codes (:mod:`gapverify.verification.judging.outcomes`, one table for every output):
0 every claim verified, supported, reproduced or recorded (or the command succeeded), 1
some claim failed or is flaky (or a check found a difference), 2 bad usage or input (the
message names the parameter and its allowed range), 3 no claim failed but some claim is
not verified (outside domain, not assessed, or lacks power), 4 a claim error (a claim's
own code misbehaved: an experiment raised or returned no dict of finite numbers with every
statistic its checks read, a prediction is not a finite real at a case, a domain raised;
one line names the file and line, the claim, the case, the size and the replicate; no
verdict), 130 interrupted (SIGINT) and
143 terminated (SIGTERM); finished work is kept in the store either way; 141 when the
reader of stdout went away (``gapverify claims --json | head``).

The store: ``--store PATH``, else ``$GAPVERIFY_STORE``, else ``reports/gapverify.sqlite``
(:func:`default_store`); the commands that sample say which on stderr, once per run.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence


# The command line is split along its domain: the argument machinery (cli/args.py), the
# commands that read the registry (cli/claims.py), ``run`` (cli/sampling.py), ``runs``
# (cli/runs.py), and one module per tool command (audit, calibrate, snapshot, paper,
# normalization, reports); the command table and the parser are here. Nothing below the
# command line imports it (tests/test_layers.py). Each command imports its machinery
# (sympy, scipy, numpy) when it runs, so --version and --help start fast.
from gapverify.verification.claims.inputs import (DEFAULT_PROFILE, MAX_T, PROFILES, UsageError,
                                                  _int_in, parse_set, parse_sizes)
from gapverify.verification.running.defaults import (DEFAULT_SEED, DEFAULT_STORE, STORE_ENV,
                                                     default_store)
from gapverify.verification.judging.outcomes import (EXIT_BROKEN_PIPE, EXIT_CLAIM_ERROR,
                                                     EXIT_INTERRUPTED, EXIT_TERMINATED,
                                                     EXIT_USAGE, ClaimError)
from gapverify.cli.args import _Parser, add_run_options, output_path
from gapverify.cli.claims import _cmd_claims, _cmd_describe, _cmd_docs, _cmd_predict
from gapverify.cli.runs import _cmd_runs
from gapverify.cli.sampling import _cmd_run, _say_store
from gapverify.cli import (audit, calibrate, normalization, paper, pipeline,
                                        reports, snapshot)


def _version() -> str:
    from gapverify.verification.running.output import package_version

    return package_version("gapverify") or "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gapverify", description=(
        "Verify the random-matrix theory of attention at initialisation (Mind the Gap, "
        "ICML 2025) against sampled matrices. Exit codes: 0 verified (or done), 1 a claim "
        "failed or is flaky, 2 bad input, 3 not verified (outside domain, not assessed or "
        "lacks power), 4 a claim error (a claim's own code misbehaved: the message names its "
        "file and line, the claim, the case, the size and the replicate), 130/143 "
        "interrupted, 141 "
        "stdout closed early. "
        "The theory: docs/claims.md."))
    p.add_argument("--version", action="version", version=f"gapverify {_version()}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    c = sub.add_parser("claims", help="list the claims: id, status, statement")
    c.add_argument("--json", action="store_true", help="JSON on stdout instead of a table")

    pr = sub.add_parser("predict", help="the theory's named predictions at given parameters")
    pr.add_argument("claim", help="claim id (gapverify claims lists them)")
    pr.add_argument("--set", action="append", metavar="NAME=VALUE",
                    help="a parameter the claim takes (once each; default: the paper's values)")
    pr.add_argument("--json", action="store_true", help="JSON on stdout instead of a table")

    d = sub.add_parser("describe", help="one claim: parameters and domains, predictions, "
                                        "checks and rates, profiles and power targets")
    d.add_argument("claim", help="claim id (gapverify claims lists them)")
    d.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE,
                   help="profile whose parameter cases the predictions are valued at")
    d.add_argument("--json", action="store_true", help="JSON on stdout instead of text")

    dc = sub.add_parser("docs", help="write the theory document docs/claims.md from the registry")
    dc.add_argument("--out", metavar="PATH", default="docs/claims.md", type=output_path("--out"),
                    help="Markdown file to write ('-': stdout)")

    ru = sub.add_parser("runs", help="the runs recorded in the store; --csv exports one "
                                     "run's per-size rows")
    ru.add_argument("--store", default=None,
                    help=f"SQLite store (default: ${STORE_ENV} if set, else {DEFAULT_STORE})")
    ru.add_argument("--json", action="store_true", help="JSON on stdout instead of a table")
    ru.add_argument("--csv", metavar="PATH", default=None,
                    help="write the per-size rows (claim, check, case, T, mean, se, error, "
                         "predicted, verdict) of one run as CSV ('-': stdout); the run is "
                         "--run, else the last")
    ru.add_argument("--run", type=_int_in("--run", 1, 2**63 - 1), default=None,
                    help="run id for --csv (default: the last run)")

    r = sub.add_parser("run", help="sample, judge and print a verdict table")
    r.add_argument("claims", nargs="*", metavar="CLAIM", help="claim ids (default: every claim)")
    r.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE,
                   help="sweep profile: sizes, power target (quick 5%%, standard 3%%), pilot and "
                        "budget of the self-sized draws (gpu: T up to 65536, with --backend "
                        "torch|cupy)")
    r.add_argument("--sizes", type=parse_sizes,
                   help=f"sizes T1,T2,... in [16, {MAX_T}] instead of the profile's; at least 3 "
                        "for a stated rate, 4 for a rate range (default: the profile's)")
    r.add_argument("--replicates", type=_int_in("--replicates", 2, 10000),
                   help="fixed replicates per size in [2, 10000] (default: sized by the run, a "
                        "pilot then rounds to the power target)")
    r.add_argument("--seed", type=_int_in("--seed", 0, 2**63 - 1), default=DEFAULT_SEED,
                   help="root seed, an integer in [0, 2^63 - 1]")
    r.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="a parameter every selected claim takes, once each (default: the "
                        "profile's cases)")
    r.add_argument("--perturb", action="append", metavar="EPS|NAME=EPS",
                   help="judge the same samples against a wrong statement: every predicted "
                        "limit (EPS) or one prediction (NAME=EPS) times 1 + EPS; repeatable")
    r.add_argument("--perturb-parameter", action="append", metavar="NAME:PARAM=FACTOR",
                   help="evaluate prediction NAME at parameter PARAM times FACTOR, every "
                        "other prediction unchanged; repeatable")
    add_run_options(r)
    r.add_argument("--no-replay", action="store_true", help="do not replay failures")

    for module in _COMMAND_MODULES:
        module.register(sub)
    _add_aliases(sub)
    for command in sub.choices.values():  # claims of your own, on every command
        command.add_argument("--claims-from", action="append", metavar="PATH", default=None,
                             help="load the claims of a claim file (docs/writing-a-claim.md); "
                                  "repeatable; $GAPVERIFY_CLAIMS does the same")
    _fill_help(p)
    return p


def _load_claim_files(paths: Sequence[str] | None) -> None:
    """``--claims-from``: register the files' claims, and name them in the environment so
    that worker processes (and Dask workers started here) load them too."""
    if not paths:
        return
    from gapverify.verification.claims.loading import add_to_environment
    from gapverify.verification.claims.registry import load_claim_files

    load_claim_files(paths)
    add_to_environment(paths)


#: Help for options the command modules register without one.
_OPTION_HELP = {
    "T": "context length T (deprecated alias of --sizes)", "depth": "number of layers",
    "seeds": "number of seeds", "gamma": "T/d (deprecated alias of --set gamma=VALUE)",
    "seed": f"root seed, an integer in [0, 2^63 - 1] (default: {DEFAULT_SEED})",
    "out": "output folder", "attention": "attention matrix: markov or xavier",
    "sizes": "sizes T1,T2,...", "replicates": "replicates per size",
    "update": "rewrite instead of compare", "path": "file or folder",
}


def _fill_help(parser: argparse.ArgumentParser) -> None:
    """Every option of every command has help text (the formatter adds its default)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _fill_help(sub)
        elif action.option_strings and action.help is None:
            action.help = _OPTION_HELP.get(action.dest, action.dest.replace("_", " "))


def _add_aliases(sub) -> None:
    """``paper-figure`` and ``normalization-figure`` take ``--sizes`` and ``--set`` like
    ``run``; their ``--T`` (and ``--gamma``) stay as deprecated aliases."""
    for name in ("paper-figure", "normalization-figure"):
        parser = sub.choices.get(name)
        if parser is None:
            continue
        for action in parser._actions:
            if action.dest == "T":
                action.help = "context length(s) T (deprecated: use --sizes)"
                parser.set_defaults(_T_default=action.default)
                action.default = None
            elif action.dest == "gamma":
                action.help = "T/d in (0, 1] (deprecated: use --set gamma=VALUE)"
                parser.set_defaults(_gamma_default=action.default)
                action.default = None
        one = name == "paper-figure"
        t_default = parser.get_default("_T_default")
        parser.add_argument("--sizes", type=parse_sizes, default=None,
                            help=f"context length T in [16, 4096] (one size; default: {t_default})"
                            if one else f"context lengths T1,T2,... (d = T; default: {t_default})")
        parser.add_argument("--set", action="append", metavar="NAME=VALUE",
                            help="gamma=VALUE (T/d, default: 1) or depth=N (same as --depth)"
                            if one else "depth=N (same as --depth)")


def _resolve_aliases(args) -> None:
    """Map ``--sizes``/``--set`` of the figure commands onto their own options."""
    if args.command not in ("paper-figure", "normalization-figure"):
        return
    one = args.command == "paper-figure"
    if args.T is not None:
        print("gapverify: warning: --T is deprecated; use --sizes", file=sys.stderr)
        if args.sizes is not None:
            raise UsageError("give --sizes or its deprecated alias --T, not both")
    elif args.sizes is not None:
        if one and len(args.sizes) != 1:
            raise UsageError(f"parameter '--sizes' of paper-figure takes one size T in [16, 4096], "
                             f"got {len(args.sizes)}")
        if one and args.sizes[0] > 4096:
            raise UsageError(f"parameter '--sizes' of paper-figure must be in [16, 4096], got {args.sizes[0]}")
        args.T = args.sizes[0] if one else ",".join(map(str, args.sizes))
    else:
        args.T = args._T_default
    overrides = parse_set(args.set)
    allowed = ("gamma", "depth") if one else ("depth",)
    for k in overrides:
        if k not in allowed:
            raise UsageError(f"parameter '{k}' in --set is not a parameter of {args.command}; "
                             f"it takes: {', '.join(allowed)}")
    if "depth" in overrides:
        args.depth = int(overrides["depth"])
    if one:
        if args.gamma is not None:
            print("gapverify: warning: --gamma is deprecated; use --set gamma=VALUE", file=sys.stderr)
            if "gamma" in overrides:
                raise UsageError("give --set gamma=VALUE or its deprecated alias --gamma, not both")
        else:
            args.gamma = overrides.get("gamma", args._gamma_default)


#: The tools' commands, each module with ``register(subparsers)`` and ``COMMANDS``.
_COMMAND_MODULES = (paper, snapshot, audit, calibrate, normalization, reports, pipeline)
_COMMANDS = {"claims": _cmd_claims, "predict": _cmd_predict, "run": _cmd_run,
             "describe": _cmd_describe, "docs": _cmd_docs, "runs": _cmd_runs,
             **{name: cmd for module in _COMMAND_MODULES for name, cmd in module.COMMANDS.items()}}


def _input_error(exc: BaseException) -> bool:
    """Bad input, reported on one line with exit 2: a :class:`UsageError`, a parameter
    outside its domain, an unknown claim, or another ``ValueError`` naming a parameter."""
    if isinstance(exc, UsageError):
        return True
    # imported here, when an error is being reported: not at start-up (sympy)
    from gapverify.theory.parameters import ParameterError
    from gapverify.verification.claims.registry import UnknownClaimError

    return isinstance(exc, (ParameterError, UnknownClaimError)) or (
        isinstance(exc, ValueError) and "parameter '" in str(exc))


#: Commands that sample and say once, on stderr, which store they use.
_STORE_COMMANDS = ("run", "audit", "calibrate")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        _load_claim_files(getattr(args, "claims_from", None))
        _resolve_aliases(args)
        if "store" in vars(args) and args.command in (*_STORE_COMMANDS, "runs"):
            source = ("--store" if args.store is not None else
                      f"${STORE_ENV}" if os.environ.get(STORE_ENV) else "default")
            args.store = args.store if args.store is not None else default_store()
            args.store_source = source
            if args.command in _STORE_COMMANDS and args.command != "run":  # run: once checked
                _say_store(args)
        return _COMMANDS[args.command](args)
    except BrokenPipeError:
        # the reader of stdout went away (| head): no traceback, and none at exit either
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_BROKEN_PIPE
    except ClaimError as exc:
        # a claim's own code misbehaved: one line, no traceback, no verdict
        print(f"gapverify: claim error: {exc}", file=sys.stderr)
        return EXIT_CLAIM_ERROR
    except KeyboardInterrupt as exc:
        # Ctrl-C in a command other than a run (which says its own): one line and 130
        # (143 for a run's SIGTERM that arrived outside its own handling); while a claim
        # file loaded, the line names the file
        from gapverify.verification.claims.loading import ClaimFileInterrupt
        from gapverify.verification.running.runner import Terminated

        if isinstance(exc, ClaimFileInterrupt):
            print(f"gapverify: {exc}", file=sys.stderr)
            return EXIT_INTERRUPTED
        term = isinstance(exc, Terminated)
        print(f"\ngapverify: {'terminated' if term else 'interrupted'}", file=sys.stderr)
        return EXIT_TERMINATED if term else EXIT_INTERRUPTED
    except (ValueError, KeyError) as exc:
        if _input_error(exc):
            print(f"gapverify: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        raise


def entry() -> None:
    """The console script and ``python -m gapverify``: :func:`main`, with
    ``kill -USR1 PID`` printing every thread's stack (faulthandler), to see where a long
    run is. A run started with SIGINT ignored (a background job of a non-interactive
    shell, ``nohup``) keeps ignoring it, as POSIX programs do; SIGTERM still ends it (a
    run and ``verify`` as Ctrl-C does, with their clean-up and exit 143; any other command
    at once, even inside a long native call). A step of ``gapverify verify`` ends when
    ``verify`` is gone (:func:`pipeline.follow_parent`)."""
    import faulthandler
    import signal

    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    pipeline.follow_parent()
    sys.exit(main())


if __name__ == "__main__":
    entry()
