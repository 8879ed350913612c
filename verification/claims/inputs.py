"""Input checks shared by the Python API and the command line: one error type
(:class:`UsageError`, a ``ValueError`` whose message names the parameter and what is
allowed) and the parsers and checks of sizes, replicates, seeds, ``--set`` parameters,
perturbations and claim names. The command line (:mod:`gapverify.cli`)
reports a :class:`UsageError` on one line with exit code 2; the API raises it, in its
own words (:func:`in_api_words`: ``parameter 'sizes'``, not ``'--sizes'``).
"""
from __future__ import annotations

import functools
import math
import re
import sys
from typing import Mapping, Sequence

from gapverify.verification.claims.errors import UsageError


MAX_T = 16384
#: The profile run, audit and calibrate use unless --profile is given.
DEFAULT_PROFILE = "quick"
#: Every sweep profile (verification.claims.model.POWER_TARGETS gives each its power):
#: quick and standard for every claim, large, long and gpu for the claims that have one.
PROFILES = ("quick", "standard", "large", "long", "gpu")




def _int_in(name: str, low: int, high: int):
    """An integer in ``[low, high]`` written in digits (``1_000`` too), parsed exactly
    (never through a float: ``--seed 9223372036854775807`` is 2^63 - 1, not 2^63);
    ``1e3``, ``1000.0`` and ``0x10`` are refused, as ``int()`` refuses them."""
    def parse(text: str) -> int:
        message = f"parameter '{name}' must be an integer in [{low}, {high}], got {text!r}"
        digits = str(text).strip()
        if not _INTEGER.fullmatch(digits) or len(digits) > 40:
            raise UsageError(message + (" (an integer is written in digits, e.g. 1000)"
                                        if re.fullmatch(r"[\d_.eE+-]+", digits) else ""))
        value = int(digits)
        if not low <= value <= high:
            raise UsageError(message)
        return value
    return parse


#: An integer option's text: digits, underscores between them as in Python (``1_000``).
_INTEGER = re.compile(r"[+-]?\d+(?:_\d+)*")


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
    from gapverify.theory.parameters import PARAMETERS  # sympy: not at start-up

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
    from gapverify.verification.claims.registry import get_claim

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
    from gapverify.theory.parameters import PARAMETERS  # sympy: not at start-up

    from gapverify.verification.claims.registry import get_claim

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


def check_judged(overrides: Mapping[str, float]) -> None:
    """``--set`` values a run can judge in float64
    (:meth:`theory.parameters.Parameter.check_judged`: ``s2 >= 1e-16``; below it the
    samples are constant to round-off); bad input (exit 2) otherwise."""
    from gapverify.theory.parameters import PARAMETERS

    for name, value in overrides.items():
        if name in PARAMETERS:
            PARAMETERS[name].check_judged(float(value))


def check_run_inputs(claims: Sequence[str], overrides: Mapping[str, float], profile: str,
                     sizes: Sequence[int] | None, before_sizes=None) -> None:
    """A run's ``--set`` parameters (``s2`` among them) and ``--sizes``, checked in one
    place for ``gapverify run`` and :func:`gapverify.verify`, in this order: every
    selected claim takes each parameter (:func:`check_overrides`); ``before_sizes()``, if
    given (the command line's memory estimate of the largest size); enough sizes
    (:func:`check_sizes`); every prediction a finite double at every case of ``profile``
    (:func:`check_finite`); values float64 can judge (:func:`check_judged`: ``s2 >=
    1e-16``). Bad input raises :class:`UsageError` (or a ``ParameterError``), exit 2."""
    check_overrides(claims, overrides)
    if before_sizes is not None:
        before_sizes()
    check_sizes(claims, sizes)
    if overrides:
        check_finite(claims, overrides, profile)
        check_judged(overrides)


def minimum_sizes(claims: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Sizes per claim: ``(fewest any asserted check can be judged with, sizes every one
    needs)``: :attr:`Check.minimum_sizes` (3 for a stated rate, 4 for a rate range, one
    more than a model family's largest member has parameters, 1 for exact checks)."""
    from gapverify.verification.claims.registry import get_claim

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
    everything, one, given = 0.0, {}, None
    for item in items or []:
        if "=" in item:
            name, text = (s.strip() for s in item.split("=", 1))
            if not name or name in one:
                raise UsageError(f"parameter '--perturb' names prediction {name!r} "
                                 f"{'twice' if name else 'without a name'}, got {item!r}")
            one[name] = parse_float(f"--perturb {name}", -1.0, 1.0)(text)
        else:
            if given is not None:  # twice, whatever the values (0 included)
                raise UsageError(f"parameter '--perturb' EPS given twice, got {given!r} and "
                                 f"{item!r}")
            everything, given = parse_float("--perturb", -1.0, 1.0)(item), item
    return everything, one


def parse_perturb_parameter(items: Sequence[str] | None) -> dict[str, dict[str, float]]:
    """``--perturb-parameter NAME:PARAM=FACTOR``: prediction NAME evaluated at parameter
    PARAM times FACTOR (in (0, 100)), every other prediction unchanged."""
    from gapverify.theory.parameters import PARAMETERS  # sympy: not at start-up

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
    from gapverify.verification.claims.registry import get_claim

    known = {p.name for c in claims for p in get_claim(c).predictions}
    for n in names:
        if n not in known:
            raise UsageError(f"no selected claim has a prediction named '{n}' (in --perturb or "
                             f"--perturb-parameter); predictions: {', '.join(sorted(known))}")


def _choice(name: str, allowed: tuple[str, ...]):
    """One of ``allowed`` (exit 2 naming the option and the allowed values otherwise)."""
    def parse(text: str) -> str:
        if text not in allowed:
            raise UsageError(f"parameter '{name}' must be one of {', '.join(allowed)}, got {text!r}")
        return text
    return parse


def _claims_arg(names: Sequence[str]) -> list[str]:
    from gapverify.verification.claims.registry import default_claim_ids, get_claim

    if not names:  # the opt-in families (models.*, training.*) only when named
        return list(default_claim_ids())
    for n in names:
        get_claim(n)
    return list(dict.fromkeys(names))


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


#: The command line's words in a message of the checks the API shares with it, and the
#: API's: ``parameter '--sizes'`` reads ``parameter 'sizes'``, ``--set s2=0.5`` reads
#: ``params={'s2': 0.5}``, ``'--profile gpu'`` reads ``'profile' ('gpu')``.
_API_WORDS = (
    (re.compile(r"'--sizes \(T\)'"), "'sizes'"),
    (re.compile(r"'--set (\w+)'"), r"'params' (\1)"),
    (re.compile(r"--set (\w+)=([^\s;,)]+)"), r"params={'\1': \2}"),
    (re.compile(r"--set\b"), "params"),
    (re.compile(r"'--(profile|backend|device|dtype) (\w+)'"), r"'\1' ('\2')"),
    (re.compile(r"--(profile|backend|device|dtype) (\w+)"), r"\1='\2'"),
    (re.compile(r"--claims-from\b"), "claims_from"),
    (re.compile(r"--(sizes|profile|backend|device|dtype|replicates|seed|level|workers|store)\b"),
     r"\1"),
)


def api_message(text: str) -> str:
    """``text`` (a message the command line shares) with the command line's flags named as
    the API's parameters (:data:`_API_WORDS`)."""
    for pattern, words in _API_WORDS:
        text = pattern.sub(words, text)
    return text


def in_api_words(fn):
    """``fn`` raising bad input (a ``ValueError``: :class:`UsageError`,
    :class:`~theory.parameters.ParameterError`, a claim file's error) in the API's words:
    ``parameter 'sizes'``, never ``--sizes``."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ValueError as exc:
            if exc.args and isinstance(exc.args[0], str):
                exc.args = (api_message(exc.args[0]), *exc.args[1:])
            raise
    return wrapped
