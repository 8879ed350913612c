"""The key of a claim file's experiment: a digest of the experiment's code, not of the file.

A stored sample of a claim file's claim is keyed ``"<claim id>@<digest>"``
(:mod:`verification.claims.loading`), the digest being that of what the experiment
computes: its bytecode and constants, and, transitively, those of the functions of its
module that it calls and the module-level constants it reads. Changing a prediction, a
check, a rate or a title leaves the digest, so the stored samples are judged again
(seconds); changing the experiment, a helper it calls or a constant it reads changes it,
so the samples are drawn again. Comments, blank lines and line numbers are not bytecode:
they change nothing. The bytecode is the interpreter's, so another Python version
samples again (a stored sample of one is never taken for another's).
"""
from __future__ import annotations

import hashlib
import types
from typing import Callable

__all__ = ["experiment_digest"]

#: Module-level values an experiment may read that are hashed by their ``repr``.
_PLAIN = (bool, int, float, complex, str, bytes, tuple, frozenset, list, dict, type(None))


def experiment_digest(function: Callable) -> str | None:
    """12 hex digits of the experiment's code and of what it reaches in its module;
    ``None`` for a callable without code of its own (a class instance, a builtin)."""
    if not isinstance(getattr(function, "__code__", None), types.CodeType):
        return None
    h = hashlib.sha256()
    _visit(function, h, set())
    return h.hexdigest()[:12]


def _visit(function, h, seen: set[int]) -> None:
    if id(function) in seen:
        return
    seen.add(id(function))
    code = function.__code__
    _code(code, h)
    module = getattr(function, "__module__", None)
    scope = getattr(function, "__globals__", {})
    for name in sorted(_names(code)):
        if name not in scope:
            continue  # a builtin, or an attribute name
        value = scope[name]
        if isinstance(value, types.FunctionType) and value.__module__ == module:
            h.update(f"call {name}".encode())
            _visit(value, h, seen)
        elif isinstance(value, _PLAIN):
            h.update(f"{name}={value!r}".encode())


def _code(code: types.CodeType, h) -> None:
    """A code object's bytecode, constants (nested functions' code recursively) and the
    names it reads: not its line numbers."""
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code(const, h)
        else:
            h.update(repr(const).encode())


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names
