r"""An experiment and the facts that go with it, in one record: its function, the arrays
it holds at its peak, its cost on the reference machine and its array-API version.

An experiment is ``f(rng, T, params) -> dict[str, float | ndarray]``
(:mod:`numerics.experiments`). Its :class:`Experiment` record, made where the function is
written (:func:`experiment_record`), carries

* ``arrays = (a, b, c)``: peak numbers of live ``T x T`` / ``T x d`` / ``d x d`` float64
  arrays, LAPACK's workspaces included (the runner's memory estimate
  ``8 (a T^2 + b T d + c d^2)``); ``arrays_backend`` the same on the array-API path;
* ``seconds = (a, b, c)``: seconds of one task on the reference machine,
  :math:`R(T) = a + bT^2 + cT^3` (non-negative least squares in relative error on the
  per-size means of the standard sweep of 2026-12-01, ``make verify`` on 2 cores, 22 444
  tasks; ``python scripts/replay_time_left.py STORE --calibrate``);
* ``quadratic``: ``c`` when the task costs ``O(T^2)`` (sampling, Lanczos), ordered by
  ``c T^2``; ``None``: ``O(T^3)`` (full spectra, products with ``d x d`` weights), ``T^3``;
* ``array_api``: the name of its version in :mod:`numerics.array_api` (``""``: none).

An experiment of a claim file or plug-in has a record without facts (:func:`bare_record`):
the defaults below. Importing this module imports no experiment family.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

__all__ = ["Experiment", "RECORDS", "experiment_record", "register", "bare_record",
           "DEFAULT_ARRAYS"]

#: The arrays of an experiment with none recorded: six ``T x d`` and two ``d x d`` arrays
#: and two ``T x T`` ones (a deep network's).
DEFAULT_ARRAYS = (2, 6, 2)


@dataclass(frozen=True)
class Experiment:
    """One experiment: ``function(rng, T, params)`` and its facts (module docstring).
    Calling the record calls the function."""

    name: str
    function: Callable[[np.random.Generator, int, Mapping[str, float]], dict]
    arrays: tuple[float, float, float] = DEFAULT_ARRAYS
    arrays_backend: tuple[float, float, float] | None = None
    seconds: tuple[float, float, float] | None = None
    quadratic: float | None = None
    array_api: str = ""

    def __call__(self, rng: np.random.Generator, T: int, params: Mapping[str, float]) -> dict:
        return self.function(rng, T, params)

    def order_cost(self, T: int) -> float:
        """A relative cost to order tasks by, largest first: ``c T^2`` (:attr:`quadratic`)
        or ``T^3``."""
        T = float(T)
        return self.quadratic * T * T if self.quadratic is not None else T ** 3

    def reference_seconds(self, T: int) -> float:
        """Seconds of a task at ``T`` on the reference machine, :math:`a + bT^2 + cT^3`
        (:attr:`seconds`); without them ``1e-9`` :meth:`order_cost`."""
        if self.seconds is None:
            return 1e-9 * self.order_cost(T)
        a, b, c = self.seconds
        return a + b * T ** 2 + c * T ** 3

    def array_api_function(self) -> Callable | None:
        """Its version on any array library (:mod:`numerics.array_api`), or ``None``."""
        if not self.array_api:
            return None
        from gapverify.numerics import array_api

        return getattr(array_api, self.array_api)


#: The built-in experiments' records by name, in registration order (filled when
#: :mod:`numerics.experiments` is imported).
RECORDS: dict[str, Experiment] = {}


def experiment_record(name: str, **facts) -> Callable[[Callable], Callable]:
    """Decorator: record ``function`` as the experiment ``name`` with ``facts``
    (:class:`Experiment`'s fields) in :data:`RECORDS`; the function is returned unchanged."""
    def recorded(function: Callable) -> Callable:
        register(Experiment(name, function, **facts))
        return function

    return recorded


def register(*records: Experiment) -> None:
    """Add records made elsewhere (a family module's, :data:`numerics.variants.VARIANT_RECORDS`)
    to :data:`RECORDS`, in order."""
    for r in records:
        if r.name in RECORDS:
            raise ValueError(f"experiment {r.name!r} is recorded twice")
        RECORDS[r.name] = r


def bare_record(name: str, function: Callable) -> Experiment:
    """The record of an experiment with no facts (a claim file's, a plug-in's)."""
    return Experiment(name, function)
