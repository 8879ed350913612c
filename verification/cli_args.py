"""Argument parsing and validation for the ``gapverify`` command line
(:mod:`verification.cli`): the exit codes and limits the commands share, :class:`UsageError`
(bad input, exit 2) and the parser and help-formatter classes, the option parsers and
checks (``--sizes``, ``--set``, ``--perturb``, ``--perturb-parameter``, ``--backend``,
output paths), the run options that ``run``, ``audit`` and ``calibrate`` share, and strict
JSON output. Other modules import these from :mod:`verification.cli`, which re-exports them.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Mapping, Sequence

from theory.parameters import PARAMETERS

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_UNVERIFIED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_TERMINATED = 143  # 128 + SIGTERM
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of stdout went away
MAX_T = 16384
DEFAULT_STORE = "reports/gapverify.sqlite"
#: The environment variable that moves the default store.
STORE_ENV = "GAPVERIFY_STORE"
#: The profile run, audit and calibrate use unless --profile is given.
DEFAULT_PROFILE = "quick"


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
    from verification.sampling_inputs import select_entry_claims

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
    from verification.sampling_inputs import BACKEND_CLAIMS

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
