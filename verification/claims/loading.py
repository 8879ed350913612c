"""Claims written outside the package: a Python file or an installed plug-in.

Sources, read in this order by :func:`configured_claims` (the registry,
:class:`gapverify.verification.claims.registry.core.Registry`, registers what it returns
beside the built-in claims, when asked: :meth:`~.registry.core.Registry.load_configured`,
``load_files``, ``load_plugins``; importing this module or the registry loads nothing):

* files named in ``$GAPVERIFY_CLAIMS`` (``os.pathsep``-separated); ``--claims-from PATH``
  adds to it, so that worker processes load the same files;
* installed packages' entry points in the group ``gapverify.claims``: each names a
  module (or an object) with a ``CLAIMS`` list, or a function returning one.

A claim file is plain Python using :mod:`gapverify` (see
:mod:`gapverify.verification.claims.authoring` and ``docs/writing-a-claim.md``): it lists its
:class:`~gapverify.verification.claims.model.Claim` objects in ``CLAIMS`` and may list new
:class:`~gapverify.theory.parameters.Parameter` objects in ``PARAMETERS``. A claim's
``experiment`` may be a function ``f(rng, T, params) -> dict``: it is registered under the
key ``<claim id>@<sha-256 of the file, 12 hex digits>``, so that the store never mixes the
measurements of two files, or of two versions of one file.

A bad file is refused with :class:`ClaimFileError` (a ``ValueError``; exit 2 on the
command line), naming the file and the line: a syntax error, an exception while it runs
(anything it raises, ``SystemExit`` from ``sys.exit()`` included), a field of a
``Claim``, ``Check`` or ``Prediction`` out of its range (the objects check their own
fields when constructed: :class:`~.errors.ClaimDefinitionError`), ``CLAIMS`` or
``PARAMETERS`` that is not a list of ``Claim`` or ``Parameter`` objects, no claim, a
prediction that is not a finite number at the claim's defaults, an unknown parameter, a
check of an unknown prediction, an id that clashes with a built-in claim or another
file's. Ctrl-C while a file loads is an interrupt, :class:`ClaimFileInterrupt` (a
``KeyboardInterrupt`` naming the file): the command line ends on one line, exit 130.
A missing file's error names where the path came from: ``$GAPVERIFY_CLAIMS`` when the
variable lists it, else ``--claims-from`` (or the ``source`` given).
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import re
import sys
import traceback
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Callable, Iterable, Mapping

from gapverify.numerics.plugins import EXTRA_EXPERIMENTS
from gapverify.theory.parameters import PARAMETERS, Parameter
from gapverify.verification.claims.errors import ClaimDefinitionError, ClaimTypeError, UsageError
from gapverify.verification.claims.experiment_digest import experiment_digest
from gapverify.verification.claims.model import Claim

__all__ = ["ENV", "ENTRY_POINT_GROUP", "ClaimFileError", "ClaimFileInterrupt", "claim_paths",
           "read_claim_file", "entry_point_claims", "configured_paths", "configured_claims",
           "LoadedClaims"]

#: The environment variable listing claim files (``os.pathsep``-separated).
ENV = "GAPVERIFY_CLAIMS"
#: The entry-point group of installed claim packages.
ENTRY_POINT_GROUP = "gapverify.claims"
_ID = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
_STATUSES = ("theorem", "derived", "conjecture", "empirical")


class ClaimFileError(UsageError):
    """A claim file (or plug-in) that cannot be used: the message names the file and the
    line, and what is wrong."""


class ClaimFileInterrupt(KeyboardInterrupt):
    """Ctrl-C (or a ``KeyboardInterrupt`` the file raised) while a claim file was loading:
    still an interrupt, its message naming the file. The command line ends it on one line
    with exit 130, as any interrupt."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "interrupted while loading a claim file"


def claim_paths(paths: object, parameter: str = "paths") -> list[str | os.PathLike]:
    """``paths`` as a list of paths: one path (``str`` or ``os.PathLike``) is one path, not
    its characters; an iterable of paths is kept in order. Anything else is refused with
    :class:`~.errors.ClaimTypeError` naming ``parameter``."""
    def bad(what: object) -> ClaimTypeError:
        return ClaimTypeError(f"parameter '{parameter}' must be a path (str or os.PathLike) or "
                              f"a list of paths, got {type(what).__name__} {what!r}")

    if isinstance(paths, (str, os.PathLike)):
        return [paths]
    if isinstance(paths, (bytes, Mapping)) or not isinstance(paths, Iterable):
        raise bad(paths)
    out = list(paths)
    for p in out:
        if not isinstance(p, (str, os.PathLike)):
            raise bad(p)
    return out


def _origin(path: Path) -> str:
    """Where a claim file's path came from, as the user wrote it: ``$GAPVERIFY_CLAIMS``
    when the variable lists it, else ``--claims-from``."""
    try:
        listed = {Path(p).resolve() for p in configured_paths()}
        return f"${ENV}" if path.resolve() in listed else "--claims-from"
    except (OSError, RuntimeError):
        return "--claims-from"


def _user_error(exc: BaseException, where: str, shown: str) -> BaseException:
    """What an exception raised by a claim file's code becomes: an interrupt stays one
    (:class:`ClaimFileInterrupt`); ``sys.exit()`` and everything else is a
    :class:`ClaimFileError` on one line, with the file's line."""
    at = _where(where, _error_line(exc, shown))
    if isinstance(exc, KeyboardInterrupt):
        return ClaimFileInterrupt(f"interrupted while loading claim file {at}")
    if isinstance(exc, SystemExit):
        return ClaimFileError(f"{at}: SystemExit({exc.code!r}) while the file loads (sys.exit "
                              "in a claim file); a claim file defines its claims, never exits")
    if isinstance(exc, (ClaimDefinitionError, ClaimFileError)):
        return ClaimFileError(f"{at}: {exc}")  # already a sentence naming the field
    return ClaimFileError(f"{at}: {type(exc).__name__}: {exc}")


@dataclasses.dataclass(frozen=True)
class LoadedClaims:
    """The claims of one source (a file path or ``entry point NAME``), ready to register."""

    source: str
    claims: tuple[Claim, ...]
    #: the installed distribution of an entry point (``None`` for a claim file)
    distribution: str | None = None


def _line_of(source: str, text: str) -> int | None:
    """The first line of ``source`` containing ``text`` (1-based), if any."""
    for i, line in enumerate(source.splitlines(), 1):
        if text in line:
            return i
    return None


def _where(path: str, line: int | None) -> str:
    return f"{path}:{line}" if line else path


def _error_line(exc: BaseException, filename: str) -> int | None:
    """The line of ``filename`` where ``exc`` was raised (its innermost frame there)."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            line = frame.lineno
    return line


def _experiment_key(claim_id: str, digest: str) -> str:
    return f"{claim_id}@{digest}"


def _parameters(module_dict: Mapping[str, object], where: str) -> None:
    """New parameters a file declares (``PARAMETERS = [Parameter(...), ...]``); a name that
    is already a parameter must be that same parameter."""
    declared = module_dict.get("PARAMETERS", ())
    if isinstance(declared, Mapping):
        declared = tuple(declared.values())
    if isinstance(declared, Parameter):
        declared = (declared,)
    if not isinstance(declared, Sequence) or isinstance(declared, (str, bytes)):
        raise ClaimFileError(f"{where}: PARAMETERS must be a list of gapverify.Parameter "
                             f"objects, got {type(declared).__name__} {declared!r}")
    for p in declared:
        if not isinstance(p, Parameter):
            raise ClaimFileError(f"{where}: PARAMETERS must list gapverify.Parameter objects, got "
                                 f"{p!r}")
        known = PARAMETERS.get(p.name)
        if known is not None and known != p:
            raise ClaimFileError(f"{where}: parameter '{p.name}' is already defined differently "
                                 f"({known.description}, {known.domain_text()}); give yours "
                                 "another name")
        PARAMETERS.setdefault(p.name, p)


def _check_claim(claim: Claim, where: str, taken: Mapping[str, str]) -> None:
    """Everything about ``claim`` that can be judged before sampling."""
    if not isinstance(claim.id, str) or not _ID.match(claim.id):
        raise ClaimFileError(f"{where}: claim id must read 'family.name' (lower case, digits, "
                             f"underscores), got {claim.id!r}")
    if claim.id in taken:
        raise ClaimFileError(f"{where}: claim id '{claim.id}' clashes with "
                             f"{taken[claim.id]}; choose another id")
    unknown = [name for name in claim.parameters if name not in PARAMETERS]
    if unknown:
        raise ClaimFileError(
            f"{where}: claim '{claim.id}' takes unknown parameter(s) {', '.join(unknown)}; "
            f"known: {', '.join(PARAMETERS)} (declare new ones in PARAMETERS)")
    names = [p.name for p in claim.predictions]
    if not names:
        raise ClaimFileError(f"{where}: claim '{claim.id}' has no prediction")
    for p in claim.predictions:
        if p.status not in _STATUSES:
            raise ClaimFileError(f"{where}: prediction '{p.name}' of '{claim.id}' has status "
                                 f"{p.status!r}; one of {', '.join(_STATUSES)}")
    for check in claim.checks:
        if check.prediction not in names:
            raise ClaimFileError(f"{where}: a check of '{claim.id}' measures unknown prediction "
                                 f"'{check.prediction}'; predictions: {', '.join(names)}")
    if "quick" not in claim.profiles:
        raise ClaimFileError(f"{where}: claim '{claim.id}' needs a 'quick' profile "
                             "(gapverify.profiles(quick=(low, high, replicates)))")
    try:
        values = claim.resolve({})
    except Exception as exc:  # noqa: BLE001 - a default outside a parameter's domain
        raise ClaimFileError(f"{where}: claim '{claim.id}': {exc}") from None
    exact = claim.exact_parameters(values)
    for p in claim.predictions:
        try:
            value = p.formula(exact)
            number = float(value) if getattr(value, "is_number", isinstance(value, (int, float))) \
                else None
        except KeyboardInterrupt:
            raise ClaimFileInterrupt(f"interrupted while evaluating prediction '{p.name}' of "
                                     f"'{claim.id}' ({where})") from None
        except BaseException as exc:  # noqa: BLE001 - user code (sys.exit included)
            what = f"SystemExit({exc.code!r})" if isinstance(exc, SystemExit) else \
                f"{type(exc).__name__}: {exc}"
            raise ClaimFileError(f"{where}: prediction '{p.name}' of '{claim.id}' cannot be "
                                 f"evaluated at the defaults {values}: {what}") from None
        if number is None or not math.isfinite(number):
            raise ClaimFileError(f"{where}: prediction '{p.name}' of '{claim.id}' is not a finite "
                                 f"number at the defaults {values} (got {value!r}): a formula "
                                 "must return a sympy number of the parameters")


def _builtin_experiment(name: object) -> bool:
    from gapverify.numerics.experiments import EXPERIMENTS  # all families: only when named

    return name in EXPERIMENTS


def _adopt(claim: object, path: str, source: str, digest: str, taken: dict[str, str]) -> Claim:
    """``claim`` checked, with a function experiment registered under a keyed name."""
    if not isinstance(claim, Claim):
        raise ClaimFileError(f"{path}: CLAIMS must list gapverify.Claim objects, got "
                             f"{type(claim).__name__}")
    where = _where(path, _line_of(source, repr(claim.id)[1:-1]) if source else None)
    _check_claim(claim, where, taken)
    experiment = claim.experiment
    if callable(experiment):
        # keyed by the experiment's code, not the file's: a changed statement is judged
        # again on the stored samples, a changed experiment samples again
        key = _experiment_key(claim.id, experiment_digest(experiment) or digest)
        EXTRA_EXPERIMENTS[key] = experiment
        claim = dataclasses.replace(claim, experiment=key)
    elif experiment not in EXTRA_EXPERIMENTS and not _builtin_experiment(experiment):
        raise ClaimFileError(f"{where}: claim '{claim.id}' names experiment {experiment!r}, "
                             "which is neither a function f(rng, T, params) nor a built-in "
                             "experiment")
    taken[claim.id] = f"the claim of {path}"
    return claim


def read_claim_file(path: str | os.PathLike, taken: Mapping[str, str],
                    source: str | None = None) -> LoadedClaims:
    """Run the claim file ``path`` and return its claims, checked; ``taken``: ids already
    in use, with where they come from (built-in claims, other files); ``source``: the
    parameter a missing file's error names (default: ``$GAPVERIFY_CLAIMS`` when it lists
    the file, else ``--claims-from``)."""
    if not isinstance(path, (str, os.PathLike)):
        raise ClaimTypeError(f"parameter '{source or 'path'}' must be a path (str or "
                             f"os.PathLike), got {type(path).__name__} {path!r}")
    path = Path(path)
    shown = str(path)
    source = source or _origin(path)
    if not path.is_file():
        raise ClaimFileError(f"parameter '{source}': no such file: {shown!r}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ClaimFileError(f"parameter '{source}': cannot read {shown!r}: {exc}") from None
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    try:
        code = compile(text, shown, "exec")
    except SyntaxError as exc:
        raise ClaimFileError(f"{_where(shown, exc.lineno)}: syntax error: {exc.msg}") from None
    except ValueError as exc:  # source code with a null byte
        raise ClaimFileError(f"{shown}: not Python source: {exc}") from None
    stem = re.sub(r"\W", "_", path.stem)
    name = f"gapverify_claims_{stem}_{digest}"
    module = types.ModuleType(name)
    module.__file__ = str(path.resolve())
    sys.modules[name] = module  # functions defined there pickle by reference
    try:
        exec(code, module.__dict__)
    except BaseException as exc:  # noqa: BLE001 - user code, sys.exit and Ctrl-C included
        sys.modules.pop(name, None)
        raise _user_error(exc, shown, shown) from None
    try:
        return _collect(module.__dict__, shown, text, digest, taken)
    except BaseException:
        sys.modules.pop(name, None)
        raise


def _collect(namespace: Mapping[str, object], shown: str, source: str, digest: str,
             taken: Mapping[str, str]) -> LoadedClaims:
    _parameters(namespace, shown)
    listed = namespace.get("CLAIMS")
    if listed is None:
        raise ClaimFileError(f"{shown}: defines no CLAIMS (a list of gapverify.Claim)")
    if isinstance(listed, Claim):
        listed = [listed]
    if not isinstance(listed, Sequence) or isinstance(listed, (str, bytes)):
        raise ClaimFileError(f"{shown}: CLAIMS must be a list of gapverify.Claim objects, got "
                             f"{type(listed).__name__} {listed!r:.60}")
    mine = dict(taken)
    claims = tuple(_adopt(c, shown, source, digest, mine) for c in listed)
    if not claims:
        raise ClaimFileError(f"{shown}: CLAIMS is empty")
    return LoadedClaims(shown, claims)


def entry_point_claims(taken: Mapping[str, str]) -> list[LoadedClaims]:
    """The claims of every installed entry point in :data:`ENTRY_POINT_GROUP`. A plug-in
    that cannot be loaded (not importable, a bad claim, an id in use) is left out with one
    warning line on stderr: someone else's broken package must not stop every command (a
    claim file named with ``--claims-from`` is refused instead)."""
    from importlib.metadata import entry_points

    out, mine = [], dict(taken)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        shown = f"entry point '{ep.name}' ({ep.value})"
        try:
            obj = ep.load()
            namespace = obj.__dict__ if isinstance(obj, types.ModuleType) else (
                {"CLAIMS": obj()} if callable(obj) else {"CLAIMS": obj})
            source_file = getattr(obj, "__file__", None)
            source = Path(source_file).read_text(encoding="utf-8") if source_file else ""
            digest = hashlib.sha256((source or ep.value).encode()).hexdigest()[:12]
            loaded = _collect(namespace, shown, source, digest, mine)
        except KeyboardInterrupt:
            raise ClaimFileInterrupt(f"interrupted while loading plug-in {shown}") from None
        except BaseException as exc:  # noqa: BLE001 - a broken plug-in (sys.exit too): go on
            message = str(exc) if isinstance(exc, ClaimFileError) else \
                str(_user_error(exc, shown, ""))
            print(f"gapverify: warning: plug-in not loaded: {message}", file=sys.stderr)
            continue
        dist = getattr(ep, "dist", None)
        loaded = dataclasses.replace(loaded, distribution=dist.metadata["Name"] if dist else None)
        mine.update({c.id: f"the claim of {shown}" for c in loaded.claims})
        out.append(loaded)
    return out


def configured_paths(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The claim files ``$GAPVERIFY_CLAIMS`` names, in order, each once."""
    return list(dict.fromkeys(p for p in environ.get(ENV, "").split(os.pathsep) if p.strip()))


def configured_claims(taken: Mapping[str, str], paths: Iterable[str] | None = None,
                      plugins: bool = True, source: str | None = None) -> list[LoadedClaims]:
    """Every configured source's claims: the files (``paths``, default
    :func:`configured_paths`, one path or a list: :func:`claim_paths`), then the installed
    plug-ins; ``source``: what a missing file's error names (see :func:`read_claim_file`)."""
    out, mine = [], dict(taken)
    if paths is None:
        paths, source = configured_paths(), source or f"${ENV}"
    for p in claim_paths(paths, source or "paths"):
        loaded = read_claim_file(p, mine, source)
        mine.update({c.id: f"the claim of {loaded.source}" for c in loaded.claims})
        out.append(loaded)
    if plugins:
        out += entry_point_claims(mine)
    return out


def add_to_environment(paths: Iterable[str | os.PathLike],
                       environ: Callable[[], dict] = lambda: os.environ) -> None:
    """Append ``paths`` (absolute) to ``$GAPVERIFY_CLAIMS``: worker processes started
    later load the same files."""
    env = environ()
    known = configured_paths(env)
    new = [str(Path(p).resolve()) for p in paths]
    env[ENV] = os.pathsep.join(dict.fromkeys(known + new))
