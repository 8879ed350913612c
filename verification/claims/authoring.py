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
* :func:`profiles` -- the sweeps: ``profiles(quick=(64, 1024))`` is the geometric grid
  ``64, 91, 128, ..., 1024`` with the quick power target; the run draws as many
  replicates per size as that target needs (a pilot, then rounds);
  ``large`` and ``gpu`` sweeps go beyond the standard sizes (``gpu`` runs only with
  ``--backend torch`` or ``cupy``);
* :class:`RateRule` -- a stated rate that depends on the parameters, e.g.
  ``RateRule("2 l - 1", lambda p: 2 * p["depth"] - 1)``.

The built-in claims (:mod:`gapverify.verification.claims.registry`) are written with these
same names, each family module listing its claims in ``CLAIMS`` as a claim file does.
Importing this module loads no claim.
"""
from __future__ import annotations

import math

from gapverify.theory.parameters import PARAMETERS, Parameter
from gapverify.verification.claims.finite_size import (
    ONE_OVER_LOG_T, ONE_OVER_T, ONE_OVER_T_SERIES, UNBIASED, FiniteSizeModel,
)
from gapverify.verification.claims.model import (
    MIN_REPLICATES, PILOTS, POWER_TARGETS, Check, Claim, Prediction, Profile, RateRule,
)

__all__ = ["Claim", "Prediction", "Check", "Profile", "Parameter", "PARAMETERS",
           "POWER_TARGETS", "geometric_sizes", "profiles", "FiniteSizeModel", "UNBIASED",
           "ONE_OVER_T", "ONE_OVER_T_SERIES", "ONE_OVER_LOG_T", "RateRule"]


def geometric_sizes(low: int, high: int) -> tuple[int, ...]:
    """The sizes ``low * sqrt(2)^k <= high`` rounded to integers (the built-in grids)."""
    if not (isinstance(low, int) and isinstance(high, int) and 16 <= low < high):
        raise ValueError(f"parameter 'sizes' must be integers 16 <= low < high, got "
                         f"({low!r}, {high!r})")
    ratio = math.sqrt(2)
    # the tolerance keeps a bound given to 4 digits, e.g. 724 ~ 64 * sqrt(2)^7 = 724.08
    n = int(math.floor(math.log(high / low) / math.log(ratio) + 1e-3)) + 1
    return tuple(int(round(low * ratio**k)) for k in range(n))


def profiles(**sweeps: tuple[int, int]) -> dict[str, Profile]:
    """``profiles(quick=(low, high), standard=(...))``: each a geometric grid of sizes with
    the profile's power target (:data:`POWER_TARGETS`: quick 5%, standard 3%). The run
    sizes the draws per size itself, in rounds, to reach that target
    (:mod:`verification.running.rounds`). A third number, ``(low, high, replicates)``,
    fixes the replicates at every size instead (an override, as ``--replicates``)."""
    if "quick" not in sweeps:
        raise ValueError("parameter 'profiles' needs a 'quick' sweep (the default profile)")
    out = {}
    for name, sweep in sweeps.items():
        if name not in POWER_TARGETS:
            raise ValueError(f"parameter 'profiles': unknown profile {name!r}; one of "
                             f"{', '.join(POWER_TARGETS)}")
        if not isinstance(sweep, tuple) or len(sweep) not in (2, 3):
            raise ValueError(f"parameter 'profiles': {name}=(low, high), got {sweep!r}")
        replicates = sweep[2] if len(sweep) == 3 else None
        if replicates is not None and not (isinstance(replicates, int) and 2 <= replicates <= 10000):
            raise ValueError(f"parameter 'profiles': {name} replicates must be an integer in "
                             f"[2, 10000], got {replicates!r}")
        out[name] = Profile(geometric_sizes(sweep[0], sweep[1]), replicates, POWER_TARGETS[name],
                            minimum=PILOTS.get(name, MIN_REPLICATES))
    return out
