r"""The text of an ``--entries`` value: its syntax, the named laws, and the frozen
``scipy.stats`` law it names.

``NAME`` or ``NAME(ARGS)`` for a named law (:data:`NAMED_LAWS`), ``scipy:NAME(ARGS)`` for a
``scipy.stats`` law. ``ARGS`` are numbers only, read with :mod:`ast` (``ast.literal_eval`` of
each argument; nothing is evaluated). A bad value raises :class:`EntryLawError`, naming
``--entries`` and the allowed values (exit 2 on the command line). What a law means for the
theory (``kappa``, hypotheses), a named law's own arguments and its sampler are its class in
:mod:`theory.entry_laws`.
"""
from __future__ import annotations

import ast
import math
import re
import warnings
from functools import lru_cache

from gapverify.theory.parameters import ParameterError

__all__ = ["EntryLawError", "entries_error", "read_spec", "canonical_scipy", "scipy_frozen",
           "scipy_generator", "shape_names", "format_number", "DEFAULT_ENTRIES", "NAMED_LAWS",
           "allowed_text"]

DEFAULT_ENTRIES = "gaussian-logits"

#: The named laws and what they are (the error message lists them), in the order their
#: classes register them (:func:`theory.entry_laws.named_law`): the laws are their classes.
NAMED_LAWS: dict[str, str] = {}


def allowed_text() -> str:
    """What ``--entries`` allows, for the error messages: the named laws, then the scipy form."""
    return ("allowed: " + "; ".join(f"{k} ({v})" for k, v in NAMED_LAWS.items())
            + "; scipy:NAME(ARGS) with NAME a nonnegative scipy.stats law and ARGS numbers "
              "(shape parameters, then loc=, scale=), e.g. scipy:gamma(2), scipy:uniform, "
              "scipy:lognorm(0.5), scipy:pareto(3.5), scipy:gamma(2, scale=3)")


class EntryLawError(ParameterError):
    """A bad ``--entries`` value: unknown name, bad arguments, or a law outside the theory."""


def _short(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters (a 400-digit argument is not echoed whole)."""
    return text if len(text) <= limit else f"{text[:limit - 20]}...({len(text)} characters)"


def entries_error(text: str, spec: str) -> EntryLawError:
    """The error of a bad ``--entries`` value ``spec``: what is wrong, and the value (cut)."""
    return EntryLawError(f"parameter '--entries': {text}, got {_short(spec, 120)!r}")


# --- syntax ------------------------------------------------------------------------------

_SCIPY = re.compile(r"^scipy:\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\((.*)\))?\s*$", re.S)
_NAMED = re.compile(r"^([a-z-]+)\s*(\((.*)\))?\s*$", re.S)


def _number(node: ast.AST, spec: str) -> float:
    try:
        value = ast.literal_eval(node)
        if isinstance(value, int) and not isinstance(value, bool):
            value = float(value)  # a 400-digit integer overflows here: refused below
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError, OverflowError):
        value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise entries_error(f"arguments must be finite numbers (got {_short(ast.unparse(node))!r}); "
                     + allowed_text(), spec)
    return float(value)


def _arguments(inner: str | None, spec: str) -> tuple[tuple[float, ...], tuple[tuple[str, float], ...]]:
    """``ARGS`` of ``NAME(ARGS)`` as numbers: parsed by :mod:`ast`, never evaluated."""
    if inner is None or not inner.strip():
        return (), ()
    try:
        tree = ast.parse(f"f({inner})", mode="eval")
    except SyntaxError:
        raise entries_error(f"cannot read the arguments ({inner!r}); " + allowed_text(), spec) from None
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.func.id != "f":
        raise entries_error(f"cannot read the arguments ({inner!r}); " + allowed_text(), spec)
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise entries_error("arguments must be numbers, not *args or **kwargs", spec)
    names = [k.arg for k in call.keywords]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise entries_error(f"keyword argument {twice[0]!r} is given twice; give each argument once",
                     spec)
    args = tuple(_number(a, spec) for a in call.args)
    kwargs = tuple((k.arg, _number(k.value, spec)) for k in call.keywords)
    return args, kwargs


def read_spec(spec: str) -> tuple[bool, str, tuple, tuple]:
    """``(is a scipy law, name, args, kwargs)`` of an ``--entries`` value (stripped): the
    grammar only; a named law's own arguments are read by its class
    (:func:`theory.entry_laws.parse_syntax`)."""
    m = _SCIPY.match(spec)
    if m:
        args, kwargs = _arguments(m.group(3) if m.group(2) else None, spec)
        return True, m.group(1), args, kwargs
    if spec.startswith("scipy:"):
        raise entries_error("cannot read scipy:NAME(ARGS); " + allowed_text(), spec)
    m = _NAMED.match(spec)
    if not m or m.group(1) not in NAMED_LAWS:
        hint = " (scipy laws are written scipy:NAME)" if m and m.group(1).isidentifier() else ""
        raise entries_error(f"unknown entry law{hint}; " + allowed_text(), spec)
    args, kwargs = _arguments(m.group(3) if m.group(2) else None, spec)
    return False, m.group(1), args, kwargs


# --- scipy laws ----------------------------------------------------------------------------

def scipy_generator(name: str, spec: str):
    """The ``scipy.stats`` distribution named ``name`` (continuous or discrete)."""
    from scipy import stats

    gen = getattr(stats, name, None)
    if not isinstance(gen, (stats.rv_continuous, stats.rv_discrete)):
        raise entries_error(f"scipy.stats has no distribution named {name!r}; " + allowed_text(), spec)
    return gen


def shape_names(gen) -> list[str]:
    """The names of a ``scipy.stats`` distribution's shape parameters, in order."""
    return [s.strip() for s in (gen.shapes or "").split(",") if s.strip()]


def format_number(v: float) -> str:
    """``v`` written exactly: an integer without its ``.0``, otherwise ``repr``."""
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(float(v))


def canonical_scipy(name: str, args: tuple, kwargs: tuple) -> str:
    """``scipy:NAME(ARGS)`` with every number written exactly (the store key)."""
    inner = ", ".join([*map(format_number, args), *(f"{k}={format_number(v)}" for k, v in kwargs)])
    return f"scipy:{name}" + (f"({inner})" if inner else "")


@lru_cache(maxsize=64)
def scipy_frozen(name: str, args: tuple, kwargs: tuple, spec: str = ""):
    """The frozen ``scipy.stats`` law, its parameters checked (``EntryLawError`` with
    scipy's own message when they are wrong)."""
    spec = spec or canonical_scipy(name, args, kwargs)
    gen = scipy_generator(name, spec)
    shapes = shape_names(gen)
    usage = f"scipy.stats.{name}({', '.join([*shapes, 'loc=0', 'scale=1'])})"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dist = gen(*args, **dict(kwargs))
            lo, hi = (float(x) for x in dist.support())
    except Exception as exc:  # noqa: BLE001 - scipy's own message, briefly, exit 2
        msg = str(exc).replace("_parse_args()", name).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise entries_error(f"bad arguments for {usage}: {msg}", spec) from None
    if math.isnan(lo) or math.isnan(hi):
        raise entries_error(f"parameters outside the domain of {usage} (scipy returns nan)", spec)
    return dist
