"""The command line's argument machinery: the parser and help-formatter classes (input
errors of the domain, :class:`~gapverify.verification.claims.inputs.UsageError`, shown as
argparse shows its own: one line, exit 2), the run options that ``run``, ``audit`` and
``calibrate`` share, output paths checked before a long run starts, and strict JSON output.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from gapverify.verification.claims.inputs import UsageError, _choice, _claims_arg, _int_in, parse_float
from gapverify.verification.running.defaults import DEFAULT_STORE, STORE_ENV


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default, unless the help already states one."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text.lower() or action.default in (None, False, argparse.SUPPRESS) \
                or isinstance(action, argparse._VersionAction):
            return text
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # argparse's own errors: exit 2 with the usage line
        self.print_usage(sys.stderr)
        raise UsageError(message)

    def _get_value(self, action, arg_string):
        # a domain check's UsageError keeps its own message (argparse would print
        # "invalid parse value" for a plain ValueError)
        try:
            return super()._get_value(action, arg_string)
        except argparse.ArgumentError as exc:
            if isinstance(exc.__context__, UsageError):
                raise argparse.ArgumentError(action, str(exc.__context__)) from None
            raise


def add_run_options(p: argparse.ArgumentParser, quiet_help: str = "no progress display") -> None:
    """Options every sampling command shares (``run``, ``audit``, ``calibrate``)."""
    p.add_argument("--workers", type=_int_in("--workers", 1, 64), default=None,
                   help="worker processes (default: min(2, cores))")
    p.add_argument("--level", type=parse_float("--level", 0.0, 0.5), default=0.01,
                   help="false-alarm level per claim, Bonferroni over its tests (default 0.01)")
    p.add_argument("--store", default=None,
                   help=f"SQLite store (default: ${STORE_ENV} if set, else {DEFAULT_STORE})")
    p.add_argument("--json", metavar="PATH", type=output_path("--json"),
                   help="write the results as JSON (no file unless given)")
    p.add_argument("--entries", metavar="LAW", default=None,
                   help="law of the entries Z of A = D^-1 Z: gaussian-logits (default, softmax), "
                        "lognormal, exponential or scipy:NAME(ARGS), e.g. scipy:gamma(2); selects "
                        "(or requires) the single-layer claims that take one")
    p.add_argument("--scheduler", metavar="ADDRESS|local:N", default=None,
                   help="run the tasks on a Dask cluster: a scheduler address "
                        "(tcp://host:8786) or local:N for a LocalCluster of N workers")
    p.add_argument("--backend", type=_choice("--backend", ("numpy", "torch", "cupy")),
                   default="numpy", action=_RunOnly,
                   help="array library of the sampling: numpy (the default numpy/scipy path), "
                        "torch or cupy (markov.outliers and width.stable_rank only, through the "
                        "array API; pip install gapverify[gpu])")
    p.add_argument("--device", type=_choice("--device", ("cpu", "cuda")), default="cpu",
                   action=_RunOnly, help="device of --backend torch (cupy: cuda)")
    p.add_argument("--dtype", type=_choice("--dtype", ("float64", "float32")), default="float64",
                   action=_RunOnly,
                   help="floating dtype of the sampling; float32 scales the exact checks' "
                        "round-off tolerance by float32's eps")
    p.add_argument("--quiet", action="store_true", help=quiet_help)


class _RunOnly(argparse.Action):
    """``--backend``, ``--device``, ``--dtype``: ``gapverify run`` samples with them; audit
    and calibrate sample with numpy in float64 and refuse another value (exit 2) rather
    than ignore it."""

    def __call__(self, parser, namespace, values, option_string=None):
        if not parser.prog.endswith(" run") and values != self.default:
            raise UsageError(f"parameter '{option_string}': {parser.prog} samples with numpy in "
                             f"float64 only; --backend, --device and --dtype apply to gapverify run")
        setattr(namespace, self.dest, values)


def run_options_claims(args) -> tuple[list[str], int]:
    """What ``audit`` and ``calibrate`` take from the shared run options
    (:func:`add_run_options`): the named (or default) claims narrowed by ``--entries``,
    ``--scheduler`` checked before anything starts, and the worker count (default
    ``min(2, cores)``)."""
    from gapverify.verification.running.executors import parse_scheduler
    from gapverify.verification.running.sampling_inputs import select_entry_claims

    # --profile large or long: the claims that have one
    claims = _claims_with_profile(_claims_arg(args.claims), args)
    claims = select_entry_claims(claims, args.entries, named=bool(args.claims))
    parse_scheduler(args.scheduler)  # a bad address exits 2 before anything starts
    return claims, args.workers or max(1, min(2, os.cpu_count() or 1))


def _claims_with_profile(claims: list[str], args) -> list[str]:
    """``--profile large`` or ``long``: the claims that have one (all of them when none is
    named)."""
    from gapverify.verification.claims.registry import get_claim

    profile = args.profile
    if profile not in ("large", "long"):
        return claims
    if profile == "long" and args.entries:
        raise UsageError("parameter '--entries': the long profile samples softmax entries only "
                         "(its experiment, markov.edge); use --profile quick or standard")
    have = [c for c in claims if profile in get_claim(c).profiles]
    if args.claims and len(have) < len(claims):
        from gapverify.verification.claims.registry import CLAIMS

        lacking = next(c for c in claims if c not in have)
        raise UsageError(f"parameter '--profile {profile}': claim {lacking} has no {profile} "
                         f"profile; claims with one: "
                         f"{', '.join(c for c in CLAIMS if profile in CLAIMS[c].profiles)}")
    if not have:
        raise UsageError(f"parameter '--profile {profile}': no claim has a {profile} profile")
    return have


def output_path(name: str):
    """A file this command will write: refused at once (exit 2) when it is a folder, a
    name in it is too long, it lies under a file, or it cannot be written, so a long run
    never ends in a traceback. Nothing is created here (missing folders are created when
    the file is written)."""
    def parse(text: str) -> str:
        path = Path(text)
        try:
            if text.endswith(os.sep) or path.is_dir():
                raise UsageError(f"parameter '{name}' must be a file path, got the folder {text!r}")
            ancestor = path.absolute().parent
            while not ancestor.exists():
                ancestor = ancestor.parent
            if not ancestor.is_dir():
                raise UsageError(f"parameter '{name}': cannot write {text!r}: {str(ancestor)!r} "
                                 "is a file, not a folder")
            limit = os.pathconf(ancestor, "PC_NAME_MAX")
            long = [part for part in path.parts if len(os.fsencode(part)) > limit]
            if long:
                raise UsageError(f"parameter '{name}': cannot write {text!r}: the name "
                                 f"{long[0][:40]!r}... is longer than {limit} bytes")
            if not os.access(ancestor, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
                raise UsageError(f"parameter '{name}': cannot write {text!r}: permission denied")
        except OSError as exc:
            raise UsageError(f"parameter '{name}': cannot write {text!r}: "
                             f"{exc.strerror or exc}") from None
        return text
    return parse


def write_json(path: str | Path, data, name: str = "--json") -> None:
    """Write ``data`` as strict JSON (no Infinity or NaN: those become null); an error
    writing is bad input naming ``name`` (exit 2), never a traceback."""
    from gapverify.verification.running.suite import json_safe

    text = json.dumps(json_safe(data), indent=2, sort_keys=True, allow_nan=False)
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    except OSError as exc:
        raise UsageError(f"parameter '{name}': cannot write {str(path)!r}: {exc.strerror or exc}") from None


def print_json(data) -> None:
    """Strict JSON on stdout (see :func:`write_json`)."""
    from gapverify.verification.running.suite import json_safe

    print(json.dumps(json_safe(data), indent=2, allow_nan=False))


