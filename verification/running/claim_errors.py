"""Claim errors: a claim's own code that misbehaves during a run, caught as early as it can
be and reported as one :class:`~verification.judging.outcomes.ClaimError` (exit code 4),
never as a verdict or a traceback.

What is checked, and where (:mod:`verification.running.suite` calls these):

* before anything is sampled, at every case of the run: each check's ``domain``,
  ``min_size`` and stated rate evaluate (:func:`check_case`), and every prediction is a
  finite real number (:func:`case_predictions`; a complex value, an exception or a value
  that is not a number is an error wherever it is, a non-finite one where a check judges
  it); the values found are the judging's, computed once. The input checks of a run
  (``check_run_inputs``) value the predictions too: an error there that a claim's code
  caused is its claim error (:func:`checked_inputs`);
* in the task itself (:func:`~verification.running.runner.run_task`), for an experiment
  of a claim file or plug-in: an exception it raises, and a result that is not a dict of
  numbers or arrays of numbers (:func:`checked_measurement`);
* on the first replicate of each case, before the sweep (the suite's probe), and on every
  replicate before judging: each statistic a check judged there reads is present, finite
  and of its kind's shape (:func:`check_statistics`);
* while judging a claim of a file or plug-in: an exception raised in its code
  (:func:`from_judging`).

Each error names the file and line of the code at fault (:func:`defined_at`,
:func:`raised_at`), the claim, the case, and the size and replicate where a sample is
concerned.
"""
from __future__ import annotations

import difflib
import inspect
import math
import traceback
from pathlib import Path
from typing import Callable, Iterable, Mapping

import numpy as np

from gapverify.verification.judging.outcomes import ClaimError

__all__ = ["ClaimError", "user_claim", "user_experiment", "defined_at", "raised_at",
           "checked_measurement", "check_statistics", "check_data", "check_case",
           "case_predictions", "from_judging", "explained", "checked_inputs"]


# --- where -------------------------------------------------------------------------------

def _file(fn: object) -> str | None:
    try:
        return inspect.getsourcefile(fn)  # type: ignore[arg-type]
    except (TypeError, OSError):
        return None


def defined_at(fn: object, text: str | Iterable[str] = ()) -> str:
    """``FILE:LINE`` of the function ``fn``: the first line of its source holding one of
    ``text`` (e.g. a statistic's quoted name), else its ``def`` line; ``""`` unknown."""
    fn = inspect.unwrap(fn) if callable(fn) else fn
    path = _file(fn)
    if path is None:
        return ""
    try:
        lines, start = inspect.getsourcelines(fn)  # type: ignore[arg-type]
    except (TypeError, OSError):
        return path
    wanted = [text] if isinstance(text, str) else list(text)
    for i, line in enumerate(lines):
        if any(w and w in line for w in wanted):
            return f"{path}:{start + i}"
    return f"{path}:{max(start, 1)}"


def raised_at(exc: BaseException, fns: Iterable[object]) -> str:
    """``FILE:LINE`` where ``exc`` was raised in the files of ``fns`` (its innermost frame
    there), else the ``def`` line of the first of ``fns``."""
    fns = [f for f in fns if f is not None]
    files = {p for p in (_file(inspect.unwrap(f) if callable(f) else f) for f in fns) if p}
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename in files:
            where = f"{frame.filename}:{frame.lineno}"
    return where or (defined_at(fns[0]) if fns else "")


def _quoted(key: str) -> tuple[str, str]:
    return (f'"{key}"', f"'{key}'")


def _check_line(path: str | None, statistic: str) -> str:
    """``PATH:LINE`` of the check reading ``statistic`` in the claim file ``path``: the
    line naming it quoted beside ``Check(``, else the last line naming it; ``""``."""
    if not path:
        return ""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    hits = [i for i, line in enumerate(lines, 1) if any(q in line for q in _quoted(statistic))]
    checks = [i for i in hits if "Check(" in lines[i - 1]]
    best = checks[0] if checks else (hits[-1] if hits else None)
    return f"{path}:{best}" if best else ""


def _brief(value: object, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


# --- whose code --------------------------------------------------------------------------

def user_experiment(name: object) -> bool:
    """Whether the experiment ``name`` is a claim file's or a plug-in's (user code)."""
    from gapverify.numerics.plugins import EXTRA_EXPERIMENTS

    return isinstance(name, str) and name in EXTRA_EXPERIMENTS


def user_claim(claim) -> bool:
    """Whether ``claim`` is written outside the package: from a claim file or a plug-in,
    or sampled by such an experiment. The probe and the checks of every replicate apply
    to these; the built-in claims' experiments are the package's, tested on their own."""
    from gapverify.verification.claims.registry import REGISTRY
    from gapverify.verification.claims.registry.core import BUILT_IN

    if user_experiment(claim.experiment):
        return True
    source = REGISTRY.sources().get(claim.id)
    return source is not None and source != BUILT_IN


def _experiment_fn(claim) -> Callable | None:
    from gapverify.numerics.plugins import EXTRA_EXPERIMENTS

    return EXTRA_EXPERIMENTS.get(claim.experiment) if isinstance(claim.experiment, str) else None


def _claim_file(claim) -> str | None:
    """The claim file ``claim`` comes from, if any."""
    from gapverify.verification.claims.registry import REGISTRY

    return REGISTRY.sources().get(claim.id) if REGISTRY.file_ids([claim.id]) else None


def _fn_name(fn: object) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


# --- one measurement ---------------------------------------------------------------------

def checked_measurement(measurement: object, fn: object) -> dict:
    """An experiment's result as a dict of numbers or arrays of numbers (what the store
    keeps), else a :class:`ClaimError` at ``fn``'s source."""
    name = _fn_name(fn)
    if not isinstance(measurement, Mapping):
        raise ClaimError(f"the experiment {name} returned {type(measurement).__name__} "
                         f"{_brief(measurement)}, not a dict of statistics (name -> number or "
                         "array)", where=defined_at(fn, "return"))
    out = {}
    for key, value in measurement.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise ClaimError(f"the experiment {name} returned the key {_brief(key)}: a "
                             "statistic's name is an identifier (a string)",
                             where=defined_at(fn, repr(key)))
        try:
            array = np.asarray(value)
        except Exception:  # noqa: BLE001 - anything numpy cannot read is refused below
            array = np.asarray(None)
        if array.dtype.kind not in "biufc":
            raise ClaimError(f"the experiment {name} returned {key!r} = {_brief(value)} "
                             f"({type(value).__name__}), not a number or an array of numbers",
                             where=defined_at(fn, _quoted(key)))
        out[key] = value
    return out


def _applies(claim, check, values: Mapping[str, float], T: int) -> bool:
    """Whether ``check`` judges size ``T`` at ``values`` (its domain and smallest size)."""
    try:
        return T in check.judged_sizes(values, [T])
    except Exception as exc:  # noqa: BLE001 - user code: one line with its place
        raise _check_code_error(claim, check, values, exc) from None


def check_statistics(claim, values: Mapping[str, float], T: int, replicate: int,
                     measurement: Mapping[str, object]) -> None:
    """Every statistic a check of ``claim`` judged at ``values`` and size ``T`` reads is
    in ``measurement``, finite, and a number (a limit or exact check's) or an array (a
    distance or matching check's); else a :class:`ClaimError` naming the statistic, the
    experiment's line and the check's."""
    fn = _experiment_fn(claim)
    context = dict(claim=claim.id, case=dict(values), T=T, replicate=replicate)
    for check in claim.checks:
        if not _applies(claim, check, values, T):
            continue
        stat = check.statistic
        problem = _problem(measurement[stat], check.kind) if stat in measurement else "missing"
        if problem is None:
            continue  # the common case: no file is read (the places below cost milliseconds)
        line = _check_line(_claim_file(claim), stat)
        read = f"check {check.label} reads" + (f" ({line})" if line else "")
        if problem == "missing":
            keys = ", ".join(map(repr, measurement)) or "nothing"
            close = difflib.get_close_matches(stat, [str(k) for k in measurement], n=1)
            hint = f" ({close[0]!r}: a misspelling?)" if close else ""
            quoted = [q for k in measurement for q in _quoted(str(k))] or "return"
            raise ClaimError(f"the experiment {_fn_name(fn) if fn else claim.experiment} "
                             f"returned no statistic {stat!r}, which {read}; it returned "
                             f"{keys}{hint}", where=defined_at(fn, quoted) if fn else "",
                             **context)
        where = defined_at(fn, _quoted(stat)) if fn else ""
        if problem == "shape":
            shape = "a real number" if check.kind in ("limit", "exact") else "an array of numbers"
            raise ClaimError(f"the statistic {stat!r}, which {read}, is "
                             f"{_brief(measurement[stat])}, not {shape} (a {check.kind} "
                             "check)", where=where, **context)
        raise ClaimError(f"the statistic {stat!r}, which {read}, is not finite: "
                         f"{_brief(measurement[stat])}", where=where, **context)


def _problem(value: object, kind: str) -> str | None:
    """What is wrong with ``value`` as the statistic of a ``kind`` check: ``"shape"`` (not
    a real number for a limit or exact check, not an array of numbers for a distance or
    matching one; matching may be complex), ``"finite"`` (a NaN or infinity), or ``None``."""
    if isinstance(value, float):  # the common scalar, without an array
        if kind not in ("limit", "exact"):
            return "shape"
        return None if math.isfinite(value) else "finite"
    array = np.asarray(value)
    scalar = kind in ("limit", "exact")
    if array.dtype.kind not in ("biuf" if kind != "matching" else "biufc") or (
            array.size != 1 if scalar else array.ndim == 0):
        return "shape"
    return None if np.all(np.isfinite(array)) else "finite"


def check_data(claim, values: Mapping[str, float],
               data: Mapping[int, Iterable[Mapping[str, object]]]) -> None:
    """:func:`check_statistics` for every size and replicate of ``data``."""
    for T in sorted(data):
        for r, m in enumerate(data[T]):
            check_statistics(claim, values, T, r, m)


# --- a case, before sampling --------------------------------------------------------------

def _check_code_error(claim, check, values, exc: BaseException) -> ClaimError:
    fns = [check.domain, check.min_size, getattr(check.rate, "fn", None)]
    return ClaimError(f"check {check.label}: its domain, smallest size or rate raised "
                      f"{_error_text(exc)}", where=raised_at(exc, fns), claim=claim.id,
                      case=dict(values))


def check_case(claim, values: Mapping[str, float]) -> None:
    """Each check's ``domain``, ``min_size`` and stated rate evaluate at ``values``."""
    for check in claim.checks:
        try:
            if check.applies(values):
                if check.min_size is not None:
                    int(check.min_size(values))
                rate = check.rate_at(values) if check.rate is not None else None
                if rate is not None and not math.isfinite(float(rate)):
                    raise ValueError(f"the stated rate is {rate!r}")
        except Exception as exc:  # noqa: BLE001 - user code: one line with its place
            raise _check_code_error(claim, check, values, exc) from None


def _judged_predictions(claim, values: Mapping[str, float]) -> set[str]:
    """The predictions a check judged at ``values`` reads (its own, ``relative_to``'s)."""
    out = set()
    for check in claim.checks:
        if check.applies(values):
            out.add(check.prediction)
            if check.relative_to is not None:
                out.add(check.relative_to[0])
    return out


def case_predictions(claim, values: Mapping[str, float]) -> dict[str, float]:
    """Every prediction of ``claim`` at ``values`` as the judging computes it
    (``float(sympy.N(value, 17))``, :meth:`Claim.predict_numbers`); a :class:`ClaimError`
    naming the prediction, its formula's line and the case where one raises, is not a
    real number, or is not finite where a check judges it."""
    import sympy as sp

    exact = claim.exact_parameters(values)
    judged = _judged_predictions(claim, values)
    out: dict[str, float] = {}
    for p in claim.predictions:
        context = dict(claim=claim.id, case=dict(values))
        try:
            number = sp.N(p.formula(exact), 17)
        except Exception as exc:  # noqa: BLE001 - user code: one line with its place
            raise ClaimError(f"prediction {p.name!r} raised {_error_text(exc)}",
                             where=raised_at(exc, [p.formula]), **context) from None
        try:
            out[p.name] = float(number)
        except (TypeError, ValueError):
            try:
                z = complex(number)
                what = f"complex ({z:g})" if z.imag else f"{number}"
            except (TypeError, ValueError):
                what = f"not a number ({_brief(number)})"
            raise ClaimError(f"prediction {p.name!r} is {what}, not a finite real number",
                             where=defined_at(p.formula, "return"), **context) from None
        if p.name in judged and not math.isfinite(out[p.name]):
            raise ClaimError(f"prediction {p.name!r} is {out[p.name]}, not a finite real "
                             "number", where=defined_at(p.formula, "return"), **context)
    return out


# --- while judging -----------------------------------------------------------------------

def _user_code(claim) -> list[object]:
    fns: list[object] = [p.formula for p in claim.predictions]
    fns += [f for c in claim.checks for f in (c.domain, c.min_size, c.tolerance, c.cdf,
                                               c.predicted_spectrum, c.correction,
                                               c.zero_scale, getattr(c.rate, "fn", None))
            if f is not None]
    fn = _experiment_fn(claim)
    return [fn, *fns] if fn is not None else fns


def from_judging(exc: BaseException, claim, values: Mapping[str, float]) -> ClaimError | None:
    """A :class:`ClaimError` for ``exc`` raised while judging ``claim`` when it was raised
    in the claim's own file (a tolerance, a CDF, a correction, a formula at a moved
    parameter); ``None`` when not (the package's own error, re-raised as it is)."""
    if isinstance(exc, ClaimError):
        return exc.within(claim=claim.id, case=dict(values))
    files = {p for p in (_file(inspect.unwrap(f)) for f in _user_code(claim)) if p}
    source = _claim_file(claim)
    files |= {source} if source else set()
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename in files:
            where = f"{frame.filename}:{frame.lineno}"
    if not where:
        return None
    return ClaimError(f"the claim's code raised {_error_text(exc)} while it was judged",
                      where=where, claim=claim.id, case=dict(values))


def explained(exc: BaseException, claims: Iterable[str], overrides: Mapping[str, object],
              profile: str) -> ClaimError | None:
    """Why the input checks of a run (``check_run_inputs``, which values every prediction
    at every case) raised ``exc``, an error that is not bad input: the
    :class:`ClaimError` of the claim whose code raised it or gave a value that is not a
    real number (:func:`check_case`, :func:`case_predictions`); ``None`` when none does."""
    from gapverify.verification.claims.registry import get_claim

    for claim_id in claims:
        claim = get_claim(claim_id)
        try:
            for values in claim.cases_for(profile, overrides):
                check_case(claim, values)
                case_predictions(claim, values)
        except ClaimError as error:
            return error
        except Exception:  # noqa: BLE001 - not this claim's own code: look on
            continue
    return None


def checked_inputs(check: Callable[[], None], claims: Iterable[str],
                   overrides: Mapping[str, object], profile: str) -> None:
    """Run the input checks ``check()`` of a run; an exception that is not bad input
    (:class:`UsageError`, a parameter outside its domain, an unknown claim) and that a
    claim's own code caused is raised as its :class:`ClaimError` (:func:`explained`)."""
    from gapverify.theory.parameters import ParameterError
    from gapverify.verification.claims.errors import UnknownClaimError, UsageError

    try:
        check()
    except (UsageError, ParameterError, UnknownClaimError, ClaimError):
        raise
    except Exception as exc:  # noqa: BLE001 - a claim's code (a complex prediction), or not
        error = explained(exc, list(claims), overrides, profile)
        if error is None:
            raise
        raise error from None
