r"""The public API for writing a claim (stable; exported from :mod:`gapverify`).

A claim file is plain Python that builds :class:`Claim` objects and lists them in
``CLAIMS``; ``gapverify ... --claims-from FILE`` (or ``$GAPVERIFY_CLAIMS``, or an installed
package's entry point in the group ``gapverify.claims``) loads it, and the claim then gets
everything a built-in claim gets: run, audit, calibrate, describe, docs, snapshot, tables,
report, the store and the Python API. ``docs/writing-a-claim.md`` writes one end to end.

The pieces:

* :class:`Claim` -- ``id`` (``family.name``, not a built-in id), ``title``, its
  ``predictions``, the ``checks`` that measure them, the ``parameters`` it takes (names of
  :data:`PARAMETERS`, or new :class:`Parameter` objects the file lists in
  ``PARAMETERS``), the ``experiment`` that samples it, ``references`` and ``profiles``;
* :class:`Prediction` -- ``Prediction(name, status, formula, latex, note=...)``: ``status``
  one of theorem, derived, conjecture, empirical; ``formula(params) -> sympy.Expr`` with
  the parameters as exact sympy numbers;
* :class:`Check` -- how a prediction is measured: ``Check(prediction, statistic, "limit",
  rate=..., rate_status=..., rate_note=...)`` (the error decays at least like
  ``T^-rate``), or ``rate_range=(lo, hi)``, or ``models=(...)``; ``kind="exact"`` with a
  ``tolerance(T, measurement)``; ``asserted=False`` with ``record_note`` to record only;
* :class:`FiniteSizeModel` -- one member of a ``models`` family: the mean at size ``T`` is
  ``curve(T, L, *theta)``, with the limit ``L`` and the nuisances ``theta`` (starting at
  ``start``) fitted together, e.g. ``FiniteSizeModel("1/T", "L + c/T", lambda T, L, c: L +
  c / T, (0.0,))``. A family is a tuple of members: each member that fits the per-size
  means gives an interval for ``L``, the family accepts the union of these intervals
  (:func:`gapverify.verification.judging.inference.family_limit`), so a truncation whose
  order is unknown widens the interval rather than biasing it. Ready families:
  :data:`UNBIASED` (``L`` at every size), :data:`ONE_OVER_T` (``L + c/T``),
  :data:`ONE_OVER_T_SERIES` (``L + c/T`` and ``L + c/T + e/T^2``), :data:`ONE_OVER_LOG_T`
  (``L + c/log T``);
* the experiment: a function ``f(rng, T, params) -> dict`` of named measurements (floats
  or arrays) of one replicate at size ``T``; ``rng`` is a ``numpy.random.Generator``
  spawned from the run's root seed (use no other randomness);
* :func:`profiles` -- the sweeps: ``profiles(quick=(64, 1024, 24))`` is the geometric grid
  ``64, 91, 128, ..., 1024`` with 24 replicates per size and the quick power target.
"""
from __future__ import annotations

from gapverify.theory.parameters import PARAMETERS, Parameter
import importlib

from gapverify.verification.claims.finite_size import (
    ONE_OVER_LOG_T, ONE_OVER_T, ONE_OVER_T_SERIES, UNBIASED, FiniteSizeModel,
)
from gapverify.verification.claims.model import POWER_TARGETS, Check, Claim, Prediction, Profile

__all__ = ["Claim", "Prediction", "Check", "Profile", "Parameter", "PARAMETERS",
           "POWER_TARGETS", "geometric_sizes", "profiles", "FiniteSizeModel", "UNBIASED",
           "ONE_OVER_T", "ONE_OVER_T_SERIES", "ONE_OVER_LOG_T"]


def geometric_sizes(low: int, high: int) -> tuple[int, ...]:
    """The sizes ``low * sqrt(2)^k <= high`` rounded to integers (the built-in grids)."""
    if not (isinstance(low, int) and isinstance(high, int) and 16 <= low < high):
        raise ValueError(f"parameter 'sizes' must be integers 16 <= low < high, got "
                         f"({low!r}, {high!r})")
    return _common()._grid(low, high)


def _common():
    # read on first use: importing this module must not load the registry, whose plug-ins
    # import this module's names (``from gapverify import Check, profiles``)
    return importlib.import_module("gapverify.verification.claims.registry._common")


def profiles(**sweeps: tuple[int, int, int]) -> dict[str, Profile]:
    """``profiles(quick=(low, high, replicates), standard=(...))``: each a geometric grid
    of sizes with the profile's power target (:data:`POWER_TARGETS`: quick 5%, standard
    3%)."""
    if "quick" not in sweeps:
        raise ValueError("parameter 'profiles' needs a 'quick' sweep (the default profile)")
    out = {}
    for name, sweep in sweeps.items():
        if name not in POWER_TARGETS:
            raise ValueError(f"parameter 'profiles': unknown profile {name!r}; one of "
                             f"{', '.join(POWER_TARGETS)}")
        try:
            low, high, replicates = sweep
        except (TypeError, ValueError):
            raise ValueError(f"parameter 'profiles': {name}=(low, high, replicates), got "
                             f"{sweep!r}") from None
        if not (isinstance(replicates, int) and 2 <= replicates <= 10000):
            raise ValueError(f"parameter 'profiles': {name} replicates must be an integer in "
                             f"[2, 10000], got {replicates!r}")
        out[name] = Profile(geometric_sizes(low, high), replicates, POWER_TARGETS[name])
    return out
