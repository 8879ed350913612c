"""The ``gapverify`` command line (also ``python -m verification``).

Exit codes: 0 every claim verified (or the command succeeded), 1 some claim failed or a
check found a difference, 2 bad usage or input (the message names the parameter and its
allowed range), 3 no claim failed but some claim is not verified (a prediction lacks
power at the sizes run, or was not assessed), 130 interrupted (SIGINT) and 143 terminated
(SIGTERM); finished work is kept in the store either way; 141 when the reader of
stdout went away (``gapverify claims --json | head``).

The store: ``--store PATH``, else ``$GAPVERIFY_STORE``, else ``reports/gapverify.sqlite``
(:func:`default_store`); the commands that sample say which on stderr, once per run.
"""
from __future__ import annotations

import argparse
import json
import os
import math
import sys
from pathlib import Path
from typing import Mapping, Sequence

from theory.parameters import PARAMETERS, ParameterError
from verification.runner import DEFAULT_SEED

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_UNVERIFIED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_TERMINATED = 143  # 128 + SIGTERM
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of stdout went away
MAX_T = 16384
DEFAULT_STORE = "reports/gapverify.sqlite"
#: The environment variable that moves the default store.
STORE_ENV = "GAPVERIFY_STORE"
#: The profile run, audit and calibrate use unless --profile is given.
DEFAULT_PROFILE = "quick"


def default_store() -> str:
    """``$GAPVERIFY_STORE`` when set (and not empty), else ``reports/gapverify.sqlite``."""
    return os.environ.get(STORE_ENV) or DEFAULT_STORE


def _version() -> str:
    from verification.output import package_version

    return package_version("gapverify") or "unknown (not installed)"


class UsageError(argparse.ArgumentTypeError, ValueError):
    """Bad command-line input: reported on one line, exit code 2 (argparse keeps the text)."""


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


def _int_in(name: str, low: int, high: int):
    """An integer in ``[low, high]``, parsed exactly (``Decimal``, never through a float:
    ``--seed 9223372036854775807`` is 2^63 - 1, not 2^63); ``1e3`` reads as 1000."""
    def parse(text: str) -> int:
        from decimal import Decimal, InvalidOperation

        message = f"parameter '{name}' must be an integer in [{low}, {high}], got {text!r}"
        try:
            value = Decimal(str(text).strip().replace("_", ""))
        except InvalidOperation:
            raise UsageError(message) from None
        if not value.is_finite() or value != value.to_integral_value() or not low <= value <= high:
            raise UsageError(message)
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
    """``--set NAME=VALUE`` (repeatable): each known parameter once, validated."""
    out: dict[str, float] = {}
    for item in items or []:
        if "=" not in item:
            raise UsageError(f"--set takes NAME=VALUE, got {item!r}; names: {', '.join(PARAMETERS)}")
        name, value = (s.strip() for s in item.split("=", 1))
        if name not in PARAMETERS:
            raise UsageError(f"unknown parameter '{name}' in --set; known: {', '.join(PARAMETERS)}")
        if name in out:
            raise UsageError(f"parameter '{name}' is set twice in --set ({name}={out[name]!r} and "
                             f"{item!r}); give it once, in {PARAMETERS[name].numeric_domain_text()}")
        out[name] = PARAMETERS[name].validate(value)
    return out


def check_overrides(claims: Sequence[str], overrides: Mapping[str, object]) -> None:
    """Every ``--set`` parameter must be one that every selected claim takes (a claim
    that does not take it would silently run at its default)."""
    from verification.registry import get_claim

    for name in overrides:
        lacking = [c for c in claims if name not in get_claim(c).parameters]
        if lacking:
            takers = [c for c in claims if c not in lacking]
            raise UsageError(
                f"parameter '{name}' in --set is not a parameter of claim(s) "
                f"{', '.join(lacking)} (they take: "
                f"{'; '.join(f'{c}: ' + (', '.join(get_claim(c).parameters) or '(none)') for c in lacking[:3])})"
                + (f"; name only the claims that take it, e.g. {', '.join(takers[:5])}" if takers else ""))


def check_finite(claims: Sequence[str], overrides: Mapping[str, object], profile: str | None = None
                 ) -> None:
    """Every prediction of every selected claim (at every case of ``profile``) must be a
    finite double; otherwise the parameters are outside what double precision can judge."""
    from verification.registry import get_claim

    for c in claims:
        claim = get_claim(c)
        for values in (claim.cases_for(profile, overrides) if profile else [claim.resolve(overrides)]):
            for name, value in claim.predict_numbers(values).items():
                if not math.isfinite(value):
                    given = {k: values[k] for k in overrides if k in values} or values
                    ranges = "; ".join(f"{k} in {PARAMETERS[k].numeric_domain_text()}" for k in given
                                       if k in PARAMETERS)
                    raise UsageError(
                        f"parameter(s) {', '.join(f'{k}={v!r}' for k, v in given.items())}: prediction "
                        f"'{name}' of {claim.id} is {value} in double precision, which cannot be "
                        f"judged; give smaller values ({ranges})")


def minimum_sizes(claims: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Sizes per claim: ``(fewest any asserted check can be judged with, sizes every one
    needs)``: :attr:`Check.minimum_sizes` (3 for a stated rate, 4 for a rate range, one
    more than a model family's largest member has parameters, 1 for exact checks)."""
    from verification.registry import get_claim

    out = {}
    for c in claims:
        needs = [check.minimum_sizes for check in get_claim(c).checks if check.asserted]
        out[c] = (min(needs, default=1), max(needs, default=1))
    return out


def check_sizes(claims: Sequence[str], sizes: Sequence[int] | None) -> None:
    """Too few ``--sizes`` for any check of a claim is bad input (exit 2); enough for some
    checks but not all leaves the others not assessed, said on stderr (exit 3 at most)."""
    if not sizes:
        return
    need = minimum_sizes(claims)
    short = {c: lo for c, (lo, _) in need.items() if len(sizes) < lo}
    if short:
        raise UsageError(
            f"parameter '--sizes' gives {len(sizes)} size(s), but a rate fit needs at least "
            f"{min(short.values())} (3 for a stated rate, 4 for a rate range): "
            + ", ".join(f"{c} needs {n}" for c, n in short.items()))
    partial = {c: hi for c, (_, hi) in need.items() if len(sizes) < hi}
    if partial:
        print(f"gapverify: note: with {len(sizes)} size(s) the checks that need more are not "
              "assessed, so these claims cannot be verified (exit 3 at best): "
              + ", ".join(f"{c} (needs {n} for every check)" for c, n in partial.items()),
              file=sys.stderr)


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


def _choice(name: str, allowed: tuple[str, ...]):
    """One of ``allowed`` (exit 2 naming the option and the allowed values otherwise)."""
    def parse(text: str) -> str:
        if text not in allowed:
            raise UsageError(f"parameter '{name}' must be one of {', '.join(allowed)}, got {text!r}")
        return text
    return parse


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
    from verification.executors import parse_scheduler
    from verification.suite import select_entry_claims

    claims = select_entry_claims(_claims_arg(args.claims), args.entries, named=bool(args.claims))
    parse_scheduler(args.scheduler)  # a bad address exits 2 before anything starts
    return claims, args.workers or max(1, min(2, os.cpu_count() or 1))


def backend_claims(claims: list[str], *, backend: str, device: str, dtype: str, profile: str,
                   entries: str | None, named: bool) -> list[str]:
    """``--backend/--device/--dtype`` and ``--profile gpu``: the library installed (else exit
    2 with the install command), the claims that take a backend (all of them when none is
    ``named``), the gpu profile only with a GPU library. Shared by ``run`` and
    :func:`verification.api.verify`."""
    from numerics.backends import BackendUnavailable, check_backend, sampling_keys
    from verification.suite import BACKEND_CLAIMS

    default = not sampling_keys(backend, device, dtype)
    if profile == "gpu" and backend == "numpy":
        raise UsageError("parameter '--profile gpu': its sizes reach T = 65536 (a 32 GiB float64 "
                         "matrix per task, Lanczos passes over it); it runs with --backend torch "
                         "or cupy (--device cuda), not numpy")
    if default:
        return claims
    try:
        check_backend(backend, device, dtype)
    except (BackendUnavailable, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if entries is not None:
        raise UsageError("parameter '--backend': --entries laws are sampled with numpy in float64 "
                         "only")
    if not named:
        return list(BACKEND_CLAIMS)
    others = [c for c in claims if c not in BACKEND_CLAIMS]
    if others:
        raise UsageError(f"parameter '--backend': claim(s) {', '.join(others)} sample with numpy "
                         f"in float64 only; claims that take --backend, --device, --dtype: "
                         f"{', '.join(BACKEND_CLAIMS)}")
    return claims


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
    from verification.suite import json_safe

    text = json.dumps(json_safe(data), indent=2, sort_keys=True, allow_nan=False)
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    except OSError as exc:
        raise UsageError(f"parameter '{name}': cannot write {str(path)!r}: {exc.strerror or exc}") from None


def print_json(data) -> None:
    """Strict JSON on stdout (see :func:`write_json`)."""
    from verification.suite import json_safe

    print(json.dumps(json_safe(data), indent=2, allow_nan=False))


def _claims_arg(names: Sequence[str]) -> list[str]:
    from verification.registry import default_claim_ids, get_claim

    if not names:  # the opt-in families (models.*, training.*) only when named
        return list(default_claim_ids())
    for n in names:
        get_claim(n)
    return list(dict.fromkeys(names))


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gapverify", description=(
        "Verify the random-matrix theory of attention at initialisation (Mind the Gap, "
        "ICML 2025) against sampled matrices. Exit codes: 0 verified (or done), 1 a claim "
        "failed, 2 bad input, 3 not verified (lacks power), 130/143 interrupted, 141 "
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
    d.add_argument("--profile", choices=("quick", "standard", "large", "gpu"), default=DEFAULT_PROFILE,
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
    r.add_argument("--profile", choices=("quick", "standard", "large", "gpu"), default=DEFAULT_PROFILE,
                   help="sweep profile: sizes, replicates, power target (quick 5%%, standard 3%%; "
                        "gpu: T up to 65536, with --backend torch|cupy)")
    r.add_argument("--sizes", type=parse_sizes,
                   help=f"sizes T1,T2,... in [16, {MAX_T}] instead of the profile's; at least 3 "
                        "for a stated rate, 4 for a rate range (default: the profile's)")
    r.add_argument("--replicates", type=_int_in("--replicates", 2, 10000),
                   help="replicates per size in [2, 10000] (default: the profile's)")
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

    for extra in _EXTRA_COMMANDS:
        extra(sub)
    _add_aliases(sub)
    _fill_help(p)
    return p


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


def _cmd_claims(args) -> int:
    from verification.registry import CLAIMS

    rows = [{"id": c.id, "status": c.status, "statement": c.title,
             "predictions": {p.name: p.status for p in c.predictions}} for c in CLAIMS.values()]
    if args.json:
        print_json(rows)
        return EXIT_OK
    from verification import display

    display.claims_table(rows)
    return EXIT_OK


def claim_parameters(claim, overrides: Mapping[str, float]) -> dict:
    """The claim's parameters with ``overrides`` (``--set``) applied: a parameter the claim
    does not take, or a value where its theory is not finite, is bad input (exit 2)."""
    unknown = [k for k in overrides if k not in claim.parameters]
    if unknown:
        raise UsageError(f"claim {claim.id} takes no parameter '{unknown[0]}'; "
                         f"it takes: {', '.join(claim.parameters)}")
    values = claim.resolve(overrides)
    check_finite([claim.id], overrides)
    return values


def _cmd_predict(args) -> int:
    from verification.registry import get_claim

    claim = get_claim(args.claim)
    overrides = parse_set(args.set)
    values = claim_parameters(claim, overrides)
    preds = claim.predict_numbers(values)
    out = {"claim": claim.id, "status": claim.status, "parameters": values,
           "predictions": preds, "statement": claim.statement_latex(values)}
    if args.json:
        print_json(out)
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
    claims = _large_claims(claims, args)
    claims = backend_claims(claims, backend=args.backend, device=args.device, dtype=args.dtype,
                            profile=args.profile, entries=args.entries, named=bool(args.claims))
    if args.profile == "gpu":
        lacking = [c for c in claims if "gpu" not in get_claim(c).profiles]
        if lacking:
            raise UsageError(f"parameter '--profile gpu': claim {lacking[0]} has no gpu profile; "
                             f"claims with one: markov.outliers, width.stable_rank")
    from verification.suite import select_entry_claims

    claims = select_entry_claims(claims, args.entries, named=bool(args.claims))
    check_overrides(claims, overrides)
    workers = args.workers or max(1, min(2, os.cpu_count() or 1))
    if args.device == "cuda" and args.workers is None:
        workers = 1  # one device: tasks in this process, one after the other
    if args.sizes and args.scheduler is None and args.backend == "numpy" and args.dtype == "float64":
        _check_memory_early(claims, overrides, args.sizes, workers, args.profile)
    check_sizes(claims, args.sizes)
    if overrides:
        check_finite(claims, overrides, args.profile)
    from verification.executors import parse_scheduler

    parse_scheduler(args.scheduler)  # bad addresses exit 2 before anything starts
    perturb, perturb_predictions = parse_perturb(args.perturb)
    perturb_parameters = parse_perturb_parameter(args.perturb_parameter)
    _check_perturbed_names(claims, [*perturb_predictions, *perturb_parameters])
    _say_store(args)
    opts = RunOptions(claims=claims, profile=args.profile, sizes=args.sizes,
                      replicates=args.replicates, seed=args.seed, overrides=overrides,
                      perturb=perturb, perturb_predictions=perturb_predictions,
                      perturb_parameters=perturb_parameters, workers=workers, level=args.level,
                      replay=not args.no_replay, scheduler=args.scheduler, entries=args.entries,
                      backend=args.backend, device=args.device, dtype=args.dtype)
    store = Store(args.store)
    progress = None if args.quiet else (display.Progress() if sys.stderr.isatty()
                                        else LineProgress())
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
    display.verdict_table(results, opts)
    from verification.suite import entry_law_lines, plan_run

    for line in entry_law_lines(plan_run(opts)) if args.entries else ():
        print(line)
    if "training.fix" in claims:
        _print_training_seeds(store, opts)
    if "backend" in payload:
        print(f"Sampled with {args.backend} on {args.device} in {args.dtype} "
              f"(numerics.array_api; store key includes backend, device and dtype)")
    if args.json:
        write_json(args.json, payload)
    if any(r.verdict in ("fail", "flaky") for r in results):
        return EXIT_FAIL
    return EXIT_OK if all(r.verdict == "pass" for r in results) else EXIT_UNVERIFIED


def _print_training_seeds(store, opts) -> None:
    """The seeds table of ``training.fix`` (every seed: trained or not, steps, loss
    ratios; standard against fix) from the stored measurements of this run; the loss
    curves and the JSON: ``python -m reports.model_figures training``."""
    from numerics.training import seeds_table
    from verification.registry import get_claim
    from verification.runner import SerialExecutor
    from verification.suite import plan_run, sample

    plan = plan_run(opts)
    claim = get_claim("training.fix")
    for values in plan.cases["training.fix"]:
        data = sample(store, claim, values, plan.profiles["training.fix"], opts.seed,
                      SerialExecutor())
        for T, reps in sorted(data.items()):
            for r, m in enumerate(reps):
                if "unavailable" in m:
                    return
                print(f"\ntraining.fix, T = {T}, depth {int(values['depth'])}, replicate {r}:")
                print(seeds_table(m))
    print("loss curves and the seeds as JSON: python -m reports.model_figures training "
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

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def _print(self, text: str) -> None:
        print(text, file=self._stream or sys.stderr, flush=True)

    def start(self, claim: str, todo: int, total: int) -> None:
        import time

        self._label, self._todo, self._done, self._start = claim, todo, 0, time.monotonic()
        self._last = self._start
        reused = total - todo
        self._print(f"sampling {claim}: {todo} task(s)" + (f", {reused} reused from the store"
                                                           if reused else ""))
        if todo == 0:
            self._print(f"sampled {claim}: nothing to do")

    def advance(self, task, seconds: float) -> None:
        import time

        self._done += 1
        now = time.monotonic()
        if self._done == self._todo:
            self._print(f"sampled {self._label}: {self._done}/{self._todo} task(s) in "
                        f"{now - self._start:.1f} s")
        elif now - self._last >= self._every:
            self._last = now
            elapsed = now - self._start
            left = elapsed * (self._todo - self._done) / self._done
            self._print(f"  {self._label}: {self._done}/{self._todo} task(s) "
                        f"({100 * self._done / self._todo:.0f}%) in {elapsed:.0f} s, about "
                        f"{left:.0f} s left")


def _cmd_describe(args) -> int:
    from verification.claimdocs import describe_claim, model_text

    d = describe_claim(args.claim, args.profile) if args.profile in _profiles_of(args.claim) \
        else None
    if d is None:
        raise UsageError(f"parameter '--profile': claim {args.claim} has no profile "
                         f"'{args.profile}'; it has: {', '.join(_profiles_of(args.claim))}")
    if args.json:
        print_json(d)
        return EXIT_OK
    out = [f"{d['claim']} ({d['status']}): {d['title']}",
           f"  family {d['family']}, experiment {d['experiment']}",
           "  references: " + "; ".join(d["references"]), "", "parameters:"]
    for p in d["parameters"]:
        out.append(f"  {p['name']:<8} {p['description']}; default {p['default']:.10g}; "
                   f"domain {p['domain']}" + (f", computed for {p['computable']}"
                                              if p["computable"] != p["domain"] else ""))
    cases = "; ".join(", ".join(f"{k}={v:.6g}" for k, v in c.items()) for c in d["cases"])
    out += ["", f"predictions (values at the {d['profile']} profile's cases: {cases}):"]
    for p in d["predictions"]:
        vals = ", ".join("-" if v["value"] is None else f"{v['value']:.10g}" for v in p["values"])
        out.append(f"  {p['name']:<22} {p['status']:<10} {p['kind']:<9} {vals}")
        out.append(f"      {p['statement']}")
        if p["note"]:
            out.append(f"      note: {p['note']}")
    out += ["", "checks:"]
    for c in d["checks"]:
        model = model_text(c, digits=3)
        out.append(f"  {c['prediction']}:{c['statistic']}  {c['kind']}, {model}"
                   + (f" ({c['rate_status']})" if c["rate_status"] else "")
                   + f", needs >= {c['minimum_sizes']} size(s)"
                   + ("" if c["asserted"] else ", recorded (not asserted)"))
        if c["domain"]:
            out.append(f"      domain: {c['domain']}")
        if c["rate_note"]:
            out.append(f"      {c['rate_note']}")
    out += ["", "profiles (power target: the largest relative error a verified check may "
                "fail to reject):"]
    for name, pr in d["profiles"].items():
        out.append(f"  {name:<9} T = {', '.join(map(str, pr['sizes']))}; {pr['replicates']} "
                   f"replicates; power target {pr['power_target']:.0%}")
    print("\n".join(out))
    return EXIT_OK


def _profiles_of(claim_id: str) -> list[str]:
    from verification.registry import get_claim

    return list(get_claim(claim_id).profiles)


def _cmd_docs(args) -> int:
    from verification.claimdocs import claims_markdown

    text = claims_markdown()
    if args.out == "-":
        sys.stdout.write(text)
        return EXIT_OK
    try:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"parameter '--out': cannot write {args.out!r}: {exc.strerror or exc}") from None
    print(f"wrote {args.out}")
    return EXIT_OK


def _cmd_runs(args) -> int:
    import datetime as dt

    from verification.store import Store

    if not Path(args.store).is_file():
        raise UsageError(f"parameter '--store': no such store: {args.store} (run 'gapverify "
                         "run ... --store PATH' first)")
    store = Store(args.store)
    try:
        runs = store.runs()
        if args.csv is not None:
            run_id = args.run if args.run is not None else (runs[-1]["id"] if runs else None)
            run = store.get_run(run_id) if run_id is not None else None
            if run is None:
                raise UsageError(f"parameter '--run': no run {run_id} in {args.store}; runs: "
                                 f"{', '.join(str(r['id']) for r in runs) or '(none)'}")
            return _write_csv(args.csv, run, run_id)
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
        claims = ", ".join(r["claims"])
        print(f"{r['id']:>4}  {r['date']:<20} {str(r['profile']):<9} {str(r['root_seed']):>20}  "
              f"{str(r['code_version']):<12} {(r['git_commit'] or '-')[:10]:<10} "
              f"{claims if len(claims) < 80 else claims[:77] + '...'}")
    return EXIT_OK


#: Columns of ``gapverify runs --csv``: one row per run, claim, check (with its case) and size.
CSV_COLUMNS = ("run_id", "claim", "status", "check", "case", "prediction", "kind", "T", "n",
               "mean", "se", "error", "error_se", "predicted", "verdict", "outcome")


def csv_rows(run: Mapping, run_id: int | None = None) -> list[dict]:
    """The per-size rows of a run's results (see :data:`CSV_COLUMNS`)."""
    from reports.results import load_run_data

    run = load_run_data(run)
    out = []
    for claim in run["claims"]:
        for check in claim["checks"]:
            case = check.get("case") or {}
            for row in check.get("rows") or []:
                out.append({"run_id": run_id, "claim": claim["claim"], "status": check.get("status"),
                            "check": check["label"],
                            "case": ";".join(f"{k}={v}" for k, v in sorted(case.items())),
                            "prediction": check.get("prediction"), "kind": check.get("kind"),
                            **{k: row.get(k) for k in ("T", "n", "mean", "se", "error", "error_se")},
                            "predicted": check.get("predicted"),
                            "verdict": check.get("verdict_word", check["verdict"]),
                            "outcome": check["verdict"]})
    return out


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
        Path(path).write_text(buf.getvalue())
    except OSError as exc:
        raise UsageError(f"parameter '--csv': cannot write {path!r}: {exc.strerror or exc}") from None
    print(f"wrote {len(rows)} rows of run {run_id} to {path}")
    return EXIT_OK


def _check_memory_early(claims, overrides, sizes, workers, profile) -> None:
    """The memory estimate of the largest size (exit 2 naming ``--sizes``) before the other
    checks of ``--sizes``, so that a size that cannot fit is named as such."""
    from verification.registry import get_claim
    from verification.runner import Task, check_memory

    tasks = [Task(get_claim(c).experiment, tuple(sorted((k, float(v)) for k, v in case.items())),
                  max(sizes), 0, 0, "") for c in claims
             for case in get_claim(c).cases_for(profile, overrides)]
    check_memory(tasks, workers)


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


_COMMANDS = {"claims": _cmd_claims, "predict": _cmd_predict, "run": _cmd_run,
             "describe": _cmd_describe, "docs": _cmd_docs, "runs": _cmd_runs}
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


def _say_store(args) -> None:
    print(f"gapverify: store {args.store} ({args.store_source})", file=sys.stderr)


#: Commands that sample and say once, on stderr, which store they use.
_STORE_COMMANDS = ("run", "audit", "calibrate")


def main(argv: Sequence[str] | None = None) -> int:
    _load_extensions()
    from verification.registry import UnknownClaimError

    try:
        args = build_parser().parse_args(argv)
        _resolve_aliases(args)
        if "store" in vars(args) and args.command in (*_STORE_COMMANDS, "runs"):
            source = ("--store" if args.store is not None else
                      f"${STORE_ENV}" if os.environ.get(STORE_ENV) else "default")
            args.store = args.store if args.store is not None else default_store()
            args.store_source = source
            if args.command in _STORE_COMMANDS and args.command != "run":  # run: once checked
                _say_store(args)
        if args.command == "audit" and not sys.stderr.isatty():
            # audit builds display.Progress itself: lines instead of a bar off a terminal
            # (belongs in verification/display.py, which this change does not own)
            from verification import display

            real = display.Progress
            display.Progress = LineProgress
            try:
                return _COMMANDS[args.command](args)
            finally:
                display.Progress = real
        return _COMMANDS[args.command](args)
    except (UsageError, ParameterError, UnknownClaimError) as exc:
        print(f"gapverify: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader of stdout went away (| head): no traceback, and none at exit either
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_BROKEN_PIPE
    except ValueError as exc:
        if "parameter '" in str(exc):
            print(f"gapverify: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        raise


def entry() -> None:
    """The console script and ``python -m verification``: :func:`main`, with
    ``kill -USR1 PID`` printing every thread's stack (faulthandler), to see where a long
    run is. A run started with SIGINT ignored (a background job of a non-interactive
    shell, ``nohup``) keeps ignoring it, as POSIX programs do; SIGTERM still ends it."""
    import faulthandler
    import signal

    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    sys.exit(main())


if __name__ == "__main__":
    entry()
