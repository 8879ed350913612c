r"""The Python API: ``from verification import verify, predict, describe, statement``.

A thin facade over what the command line runs (:func:`verification.running.suite.verify`,
:func:`verification.running.suite.results_json`, the same input checks as ``gapverify run``), so
the numbers, verdicts and store are those of ``gapverify run``:

>>> from verification import predict
>>> predict("softmax.kappa", s2=0.5)                       # doctest: +SKIP
{'kappa': 0.8050...}

* :func:`predict` -- a claim's predictions at parameters, as floats;
* :func:`statement` -- its statement as sympy equations, each measured quantity a
  function of ``T`` (``Eq(Limit(s1(T), T, oo), 1)``), symbolic or at parameters;
* :func:`describe` -- parameters, predictions, checks, rates, profiles (plain data);
* :func:`verify` -- sample and judge claims (ids, ``Claim`` objects of a notebook cell,
  ``claims_from=`` claim files); returns a :class:`Run` of :class:`ClaimVerdict` s with
  ``to_dict()`` (plain data, no pandas) and ``to_dataframe()`` (pandas, one row per
  claim, check and size), a ``repr`` of a line per claim and, in a notebook, a table.

Bad input raises ``ValueError`` (:class:`theory.parameters.ParameterError` or
:class:`gapverify.cli.UsageError`) with the message the command line prints, its flags
named as the API's parameters (``parameter 'sizes'``, not ``'--sizes'``).
"""
from __future__ import annotations

import dataclasses
import hashlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import sympy as sp

from gapverify.verification.claims.inputs import PROFILES, UsageError, in_api_words
from gapverify.verification.judging.outcomes import Outcome
from gapverify.verification.running.output import check_line, claim_text, claims_html, claims_text

__all__ = ["verify", "predict", "statement", "describe", "Run", "ClaimVerdict", "CheckVerdict"]


def _claim(claim_id: str, name: str = "claim"):
    """The registry's claim; an unknown id is a ``ValueError`` naming ``claims`` (the
    registry's :class:`UnknownClaimError` is a ``KeyError``)."""
    from gapverify.verification.claims.registry import get_claim

    if not isinstance(claim_id, str):
        raise UsageError(f"parameter '{name}' must be a claim id (a string), got {claim_id!r}")
    try:
        return get_claim(claim_id)
    except KeyError as exc:
        raise UsageError(f"parameter '{name}': {exc}") from None


def _values(claim, params: Mapping[str, object]) -> dict:
    from gapverify.verification.claims.inputs import claim_parameters

    return claim_parameters(claim, params)  # ValueError, as the command line's exit 2


@in_api_words
def predict(claim: str, **params: float) -> dict[str, float]:
    """Every named prediction of ``claim`` at ``params`` (the rest at the paper's
    defaults), as floats: ``predict("softmax.kappa", s2=0.5)`` -> ``{"kappa": 0.805...}``.
    The same numbers as ``gapverify predict CLAIM --set NAME=VALUE --json``."""
    c = _claim(claim)
    return c.predict_numbers(_values(c, params))


@in_api_words
def statement(claim: str, symbolic: bool = False, **params: float) -> sp.Tuple:
    """The statement of ``claim`` as sympy equations, each measured quantity written as a
    function of ``T``: ``Eq(Limit(s1(T), T, oo), 1)`` for a limit, ``Eq(lambda1(T), 1)``
    for an exact identity (a reference value in another limit keeps its own variable).

    ``symbolic=True`` keeps the parameters as symbols (``s2``, ``gamma``, ...; a formula
    that needs a number, e.g. an integer depth, gets it from ``params`` or the default);
    otherwise they take ``params`` and the defaults. The right-hand sides evaluate with
    ``.rhs.evalf()``; ``{eq.lhs: eq.rhs for eq in statement(...)}`` maps each limit to
    its value.
    """
    from gapverify.theory.parameters import PARAMETERS
    from gapverify.verification.claims.model import T_SYMBOL

    c = _claim(claim)
    values = _values(c, params)
    names = [n for n in c.parameters if n in PARAMETERS]
    exact = c.exact_parameters(values)
    integers = {n for n in names if PARAMETERS[n].integer}
    out = []
    for p in c.predictions:
        tries = [set(params), set(params) | integers, set(names)] if symbolic else [set(names)]
        for numeric in tries:
            ex = {n: exact[n] if n in numeric else PARAMETERS[n].symbol for n in names}
            try:
                eq = p.statement(ex)
                break
            except TypeError:  # a formula that needs a number (int(depth)): more numbers
                continue
        else:
            eq = p.statement(exact)
        q = sp.Symbol(p.name)
        f = sp.Function(p.name)(T_SYMBOL) if p.kind != "reference" else q
        out.append(eq.xreplace({q: f}))
    return sp.Tuple(*out)


@in_api_words
def describe(claim: str, profile: str = "quick") -> dict[str, Any]:
    """``claim`` as plain data: the same as ``gapverify describe CLAIM --json``
    (:func:`verification.tools.claimdocs.describe_claim`)."""
    from gapverify.verification.tools.claimdocs import describe_claim

    profiles = list(_claim(claim).profiles)
    if not isinstance(profile, str) or profile not in profiles:
        raise UsageError(f"parameter 'profile': claim {claim} has no profile {profile!r}; it "
                         f"has: {', '.join(profiles)}")
    return describe_claim(claim, profile)


# ----------------------------------------------------------------------------- results
@dataclass(repr=False)
class CheckVerdict:
    """One check of a claim at one parameter case: its verdict in the table's words
    (``verdict``) and as the judging's outcome (``pass``, ``fail``, ``lacks power``,
    ...), the prediction, the power and the per-size rows."""

    claim: str
    label: str
    prediction: str
    kind: str
    status: str
    predicted: float | None
    verdict: str
    outcome: str
    reason: str
    power: float | str | None
    power_target: float | None
    case: dict | None
    rows: list[dict]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def __repr__(self) -> str:
        return f"CheckVerdict({self.claim!r}, {check_line(self.to_dict())})"


@dataclass(repr=False)
class ClaimVerdict:
    """One claim's verdict: ``verdict`` is the table's word (``verified``, ``supported``,
    ``reproduced``, ``not verified``, ``failed``, ``flaky``), ``outcome`` the judging's
    (``pass``, ``fail``, ...); ``verified`` is true only for a passing theorem or
    derived claim."""

    claim: str
    status: str
    verdict: str
    outcome: str
    power_summary: str
    unverified: list[str]
    parameters: dict
    cases: list[dict] | None
    sizes: list[int]
    replicates: int
    root_seed: int
    checks: list[CheckVerdict]

    @property
    def verified(self) -> bool:
        return self.outcome == Outcome.PASS and self.status in ("theorem", "derived")

    @property
    def passed(self) -> bool:
        return self.outcome == Outcome.PASS

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def __repr__(self) -> str:
        return f"ClaimVerdict({claim_text(self.to_dict())})"

    def _repr_html_(self) -> str:
        return claims_html([self.to_dict()], f"{self.claim}: {self.verdict}")


@dataclass(repr=False)
class Run:
    """What :func:`verify` returns: one :class:`ClaimVerdict` per claim, the run's id in
    its store (``None`` for an in-memory or read-only store), the exit code the command
    line would give, and ``results``, the full JSON the command line writes with
    ``--json`` (provenance included). Its ``repr`` is a line per claim (the first 15), and
    in a notebook it shows as a table of claims, checks and verdicts (``_repr_html_``)."""

    claims: list[ClaimVerdict]
    exit_code: int
    run_id: int | None
    store: str
    results: dict = field(repr=False)

    def __getitem__(self, claim: str) -> ClaimVerdict:
        for c in self.claims:
            if c.claim == claim:
                return c
        raise KeyError(claim)

    def _head(self) -> str:
        where = (f"run {self.run_id} in {self.store}" if self.run_id else
                 "not recorded" if self.store == ":memory:" else f"store {self.store}")
        return (f"{len(self.claims)} claim(s), exit code {self.exit_code}, {where}; profile "
                f"{self.results.get('profile')}, root seed {self.results.get('root_seed')}")

    def __repr__(self) -> str:
        return (claims_text([c.to_dict() for c in self.claims], f"Run({self._head()})")
                + "\n  (run['CLAIM'] for a claim's checks, run.to_dataframe() for every size)")

    def _repr_html_(self) -> str:
        return claims_html([c.to_dict() for c in self.claims], f"gapverify: {self._head()}")

    def to_dict(self) -> dict[str, Any]:
        """Plain data (no pandas needed): the run's claims and their checks."""
        return {"run_id": self.run_id, "store": self.store, "exit_code": self.exit_code,
                "provenance": self.results.get("provenance"),
                "claims": [c.to_dict() for c in self.claims]}

    def rows(self) -> list[dict[str, Any]]:
        """One row per claim, check (and case) and size: the columns of ``gapverify runs
        --csv``."""
        from gapverify.reports.results import csv_rows

        return csv_rows(self.results, self.run_id)

    def to_dataframe(self):
        """:meth:`rows` as a pandas DataFrame; needs pandas (``pip install pandas``)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("Run.to_dataframe() needs pandas, which is not installed: "
                              "pip install pandas (Run.to_dict() and Run.rows() need no "
                              "pandas)") from exc
        from gapverify.reports.results import CSV_COLUMNS

        return pd.DataFrame(self.rows(), columns=list(CSV_COLUMNS))


def _claim_verdict(data: Mapping[str, Any]) -> ClaimVerdict:
    checks = [CheckVerdict(claim=data["claim"], label=c["label"], prediction=c.get("prediction", ""),
                           kind=c["kind"], status=c["status"], predicted=c.get("predicted"),
                           verdict=c["verdict"], outcome=c["outcome"], reason=c.get("reason", ""),
                           power=c.get("power"), power_target=c.get("power_target"),
                           case=c.get("case"), rows=list(c.get("rows") or []))
              for c in data["checks"]]
    return ClaimVerdict(claim=data["claim"], status=data["status"], verdict=data["verdict"],
                        outcome=data["outcome"], power_summary=data.get("power_summary", ""),
                        unverified=list(data.get("unverified") or []),
                        parameters=dict(data.get("parameters") or {}), cases=data.get("cases"),
                        sizes=list(data["sizes"]), replicates=int(data["replicates"]),
                        root_seed=int(data["root_seed"]), checks=checks)


def _verify_arguments(claims, profile, seed, workers, sizes, params, replicates, level, replay,
                      backend, device, dtype, store) -> dict:
    """:func:`verify`'s arguments checked as the command line checks its options: each bad
    one raises a :class:`~verification.claims.inputs.UsageError` (a ``ValueError``) naming
    it and what is allowed, never a ``KeyError`` or ``TypeError``, and nothing is truncated
    (``sizes=[16.7]`` is refused, not read as 16)."""
    from gapverify.theory.parameters import PARAMETERS, validate_parameters
    from gapverify.verification.claims.inputs import (
        MAX_T, _choice, _int_in, parse_float, parse_sizes,
    )
    from gapverify.verification.claims.registry import default_claim_ids
    from gapverify.verification.judging.verdict import DEFAULT_LEVEL
    from gapverify.verification.running.defaults import DEFAULT_SEED

    def number(name, value, parse):
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise UsageError(f"parameter '{name}' must be a number, got {value!r}")
        if isinstance(value, float) and value.is_integer() and abs(value) < 2.0**64:
            value = int(value)  # 4.0 is 4 (an integer parameter's text is digits only)
        return parse(str(value))

    if claims is None:
        ids = list(default_claim_ids())
    elif isinstance(claims, str):
        ids = [claims]
    else:
        try:
            ids = list(claims)
        except TypeError:
            raise UsageError(f"parameter 'claims' must be a claim id, a list of claim ids or "
                             f"None (every claim), got {claims!r}") from None
        if not ids:
            raise UsageError("parameter 'claims' names no claim: give one or more claim ids, "
                             "or None for every claim (gapverify claims lists them)")
    for c in ids:
        if not isinstance(c, str):
            raise UsageError(f"parameter 'claims' must list claim ids (strings) or Claim "
                             f"objects, got {c!r}")
        _claim(c, "claims")
    ids = list(dict.fromkeys(ids))  # a claim named twice is judged once, as on the command line
    profile = _choice("profile", PROFILES)(
        profile if isinstance(profile, str) else repr(profile))
    for name, value, allowed in (("backend", backend, ("numpy", "torch", "cupy")),
                                 ("device", device, ("cpu", "cuda")),
                                 ("dtype", dtype, ("float64", "float32"))):
        _choice(name, allowed)(value if isinstance(value, str) else repr(value))
    if not isinstance(replay, bool):
        raise UsageError(f"parameter 'replay' must be True or False, got {replay!r}")
    if store is not None and not isinstance(store, (str, Path)):
        raise UsageError(f"parameter 'store' must be a path (str or pathlib.Path) or None, "
                         f"got {store!r}")
    seed = DEFAULT_SEED if seed is None else number("seed", seed, _int_in("seed", 0, 2**63 - 1))
    workers = number("workers", workers, _int_in("workers", 1, 64))
    if replicates is not None:
        replicates = number("replicates", replicates, _int_in("replicates", 2, 10000))
    level = DEFAULT_LEVEL if level is None else number("level", level,
                                                       parse_float("level", 0.0, 0.5))
    if sizes is not None:
        if isinstance(sizes, str):
            sizes = parse_sizes(sizes)
        else:
            try:
                items = list(sizes)
            except TypeError:
                raise UsageError(f"parameter 'sizes' must be a list of integers T in [16, "
                                 f"16384], got {sizes!r}") from None
            # each exactly an integer: 16.7 is refused, never truncated
            sizes = [number("sizes", s, _int_in("sizes", 16, MAX_T)) for s in items]
            if not sizes or len(set(sizes)) < len(sizes):
                raise UsageError(f"parameter 'sizes' must list distinct integers T in [16, "
                                 f"{MAX_T}], got {items!r}")
            sizes = sorted(sizes)
    if params is not None and not isinstance(params, Mapping):
        raise UsageError(f"parameter 'params' must be a mapping of parameter names to values "
                         f"(as --set NAME=VALUE), got {params!r}")
    overrides = validate_parameters(dict(params or {}), tuple(PARAMETERS))
    return {"ids": ids, "profile": profile, "seed": seed, "workers": workers, "sizes": sizes,
            "overrides": overrides, "replicates": replicates, "level": level}


def _experiment_digest(fn) -> str:
    """The key digest of a claim object's experiment: that of its code and what it
    reaches (:func:`~verification.claims.experiment_digest.experiment_digest`, as a claim
    file's), else of its ``repr``; a changed experiment never reuses the old measurements."""
    from gapverify.verification.claims.experiment_digest import experiment_digest

    return experiment_digest(fn) or hashlib.sha256(repr(fn).encode()).hexdigest()[:12]


def _register_objects(items: list, objects: list) -> list:
    """``items`` as claim ids, each claim object of ``objects`` checked as a claim file's
    claim and registered (an experiment function under ``<id>@<digest>``); a claim
    object that is the registry's own is its id."""
    from gapverify.verification.claims.loading import _adopt
    from gapverify.verification.claims.registry import CLAIMS, REGISTRY

    taken = REGISTRY.taken()
    for claim in objects:
        if claim.id in CLAIMS and CLAIMS[claim.id] is claim:
            continue
        digest = _experiment_digest(claim.experiment)  # a built-in's name: unused
        REGISTRY.register(_adopt(claim, "parameter 'claims'", "", digest, taken),
                          source=f"a Claim object given to verify() ({claim.id})")
    return [c.id if any(c is o for o in objects) else c for c in items]


@contextmanager
def _claims_of_run(claims, claims_from) -> Iterator[Any]:
    """``claims`` with the claim objects among them (:func:`_register_objects`) and the
    claims of the files ``claims_from`` registered while the run is on; afterwards the
    registry, the experiments and the parameters are as they were."""
    from gapverify.verification.claims.model import Claim

    items = claims
    if isinstance(claims, Claim):
        items = [claims]
    elif claims is not None and not isinstance(claims, str):
        try:
            items = list(claims)
        except TypeError:
            pass  # refused by _verify_arguments, naming 'claims'
    objects = [c for c in items if isinstance(c, Claim)] if isinstance(items, list) else []
    if not objects and claims_from is None:
        yield items
        return
    from gapverify.numerics.plugins import EXTRA_EXPERIMENTS
    from gapverify.theory.parameters import PARAMETERS
    from gapverify.verification.claims.loading import claim_paths
    from gapverify.verification.claims.registry import REGISTRY

    REGISTRY.load_configured()  # $GAPVERIFY_CLAIMS and the plug-ins stay loaded
    saved = REGISTRY.state(), dict(EXTRA_EXPERIMENTS), dict(PARAMETERS)
    try:
        if claims_from is not None:
            REGISTRY.load_files(claim_paths(claims_from, "claims_from"))
        yield _register_objects(items, objects) if objects else items
    finally:
        REGISTRY.restore(saved[0])
        for table, before in ((EXTRA_EXPERIMENTS, saved[1]), (PARAMETERS, saved[2])):
            table.clear()
            table.update(before)


@in_api_words
def verify(claims: str | Any | Iterable[str | Any] | None = None, profile: str = "quick",
           store: str | Path | None = None, seed: int | None = None, workers: int = 1,
           sizes: Sequence[int] | None = None, params: Mapping[str, float] | None = None,
           replicates: int | None = None, level: float | None = None,
           replay: bool = True, backend: str = "numpy", device: str = "cpu",
           dtype: str = "float64", claims_from: str | Path | Iterable[str | Path] | None = None,
           ) -> Run:
    """Sample and judge ``claims`` (an id, a list of ids, or ``None`` for every claim),
    exactly as ``gapverify run`` does, and record the run in ``store``.

    ``claims`` may hold :class:`~verification.claims.model.Claim` objects (written in a
    notebook cell, ``docs/writing-a-claim.md``), checked and judged as a claim file's;
    ``claims_from`` (a path or a list) is ``--claims-from``. Both are registered for this
    call only: ``CLAIMS`` is as it was afterwards (:func:`load_claims` keeps a file's). A
    claim object's experiment is keyed by its source (a ``store`` reuses its measurements
    until it changes); ``workers`` > 1 samples it in forked processes (Linux).

    ``store``: a SQLite path (created if missing; measurements already there are reused),
    or ``None``/``":memory:"`` for a store that lives only as long as this call. ``seed``
    (default the command line's) is the root seed; ``sizes`` and ``replicates`` replace
    the profile's (at least 3 sizes for a stated rate, 4 for a rate range; each an integer
    in [16, 16384], never truncated); ``level`` is ``--level``, in (0, 0.5); a claim named
    twice is judged once; ``params`` is
    ``--set`` (every claim must take each parameter); ``backend``, ``device``, ``dtype``
    are ``--backend``, ``--device``, ``--dtype`` (``markov.outliers`` and
    ``width.stable_rank`` only, and the ``gpu`` profile with torch or cupy). Raises a
    ``ValueError`` (:class:`~verification.claims.inputs.UsageError`,
    :class:`~theory.parameters.ParameterError` or
    :class:`~verification.claims.registry.UnknownClaimError`) naming the parameter for bad
    input (``parameter 'sizes'``, the API's names, not the command line's flags),
    ``claims=[]`` included. A claim whose own code misbehaves (an experiment that
    raises or returns no dict of finite numbers with every statistic its checks read, a
    prediction that is not a finite real at a case, a domain that raises) raises
    :class:`~verification.judging.outcomes.ClaimError` naming the file and line, the
    claim, the case, the size and the replicate (the command line's exit code 4).
    """
    with _claims_of_run(claims, claims_from) as ids:
        return _verify(ids, claims is not None, dict(
            profile=profile, store=store, seed=seed, workers=workers, sizes=sizes, params=params,
            replicates=replicates, level=level, replay=replay, backend=backend, device=device,
            dtype=dtype))


def _verify(claims, named: bool, o: dict) -> Run:
    """:func:`verify` of ``claims`` (ids, registered), ``named`` when the caller named them,
    with its other arguments ``o``."""
    profile, store, replay = o["profile"], o["store"], o["replay"]
    backend, device, dtype = o["backend"], o["device"], o["dtype"]
    from gapverify.verification.judging.outcomes import exit_code
    from gapverify.verification.claims.inputs import check_run_inputs
    from gapverify.verification.running.claim_errors import checked_inputs
    from gapverify.verification.running.store import Store
    from gapverify.verification.running.suite import (
        RunOptions, results_json, verify as run_suite,
    )
    from gapverify.verification.running.sampling_inputs import backend_claims

    a = _verify_arguments(claims, profile, o["seed"], o["workers"], o["sizes"], o["params"],
                          o["replicates"], o["level"], replay, backend, device, dtype, store)
    ids, profile, seed, workers, sizes, overrides, replicates, level = (
        a["ids"], a["profile"], a["seed"], a["workers"], a["sizes"], a["overrides"],
        a["replicates"], a["level"])
    # the command line's checks of --backend/--device/--dtype (and of the gpu profile)
    ids = backend_claims(ids, backend=backend, device=device, dtype=dtype, profile=profile,
                         entries=None, named=named)
    missing = [c for c in ids if profile not in _claim(c, "claims").profiles]
    if missing:
        raise UsageError(f"parameter 'profile': claim {missing[0]} has no profile '{profile}'")
    # a claim whose prediction is complex at a case: a ClaimError, not a TypeError
    checked_inputs(lambda: check_run_inputs(ids, overrides, profile, sizes), ids, overrides,
                   profile)
    opts = RunOptions(claims=ids, profile=profile, sizes=sizes, replicates=replicates, seed=seed,
                      overrides=overrides, workers=workers, level=level, replay=replay,
                      backend=backend, device=device, dtype=dtype)
    path = ":memory:" if store is None else str(store)
    st = Store(path)
    try:
        results = run_suite(opts, st)
        payload = results_json(results, opts)
        payload["command"] = "gapverify.verify(" + ", ".join(
            [repr(ids), f"profile={profile!r}", f"seed={seed}"]
            + ([f"sizes={list(sizes)}"] if sizes else [])
            + ([f"params={dict(overrides)}"] if overrides else [])) + ")"
        run_id = st.add_run(payload["command"], payload) if path != ":memory:" else 0
    finally:
        st.close()
    from gapverify.verification.running.suite import json_safe

    payload = json_safe(payload)
    if run_id:
        payload["run_id"] = run_id
    # the exit code of the verdict words, as the command line's (judging/outcomes.py)
    code = exit_code([c["verdict"] for c in payload["claims"]])
    return Run(claims=[_claim_verdict(c) for c in payload["claims"]], exit_code=code,
               run_id=run_id or None, store=path, results=payload)
