"""Experiments by name, those of claims written outside the package included.

:data:`EXTRA_EXPERIMENTS` holds the experiments of claim files and plug-ins (keyed
``<claim id>@<sha-256 of the source>``), apart from the built-in
:data:`gapverify.numerics.experiments.EXPERIMENTS`, so that registering them loads no
experiment family (the command line's start-up); :func:`experiment` finds either, and
:func:`record` its :class:`~numerics.experiment_record.Experiment` record (a claim file's
or plug-in's has no facts: the defaults).
"""
from __future__ import annotations

from typing import Callable

#: The experiments of claim files and plug-ins, by key.
EXTRA_EXPERIMENTS: dict[str, Callable] = {}


def experiment(name: str) -> Callable:
    """The experiment ``name``: one of a claim file or plug-in, else a built-in one."""
    if name in EXTRA_EXPERIMENTS:
        return EXTRA_EXPERIMENTS[name]
    from gapverify.numerics.experiments import EXPERIMENTS  # every family, when needed

    return EXPERIMENTS[name]


def record(name: str):
    """The :class:`~numerics.experiment_record.Experiment` record of ``name``: a built-in
    one with its facts, else (a claim file's, a plug-in's, or an unknown name) a record
    without facts (the defaults of :mod:`numerics.experiment_record`)."""
    from gapverify.numerics.experiment_record import bare_record

    if name in EXTRA_EXPERIMENTS:
        return bare_record(name, EXTRA_EXPERIMENTS[name])
    from gapverify.numerics.experiments import RECORDS  # every family, when needed

    return RECORDS[name] if name in RECORDS else bare_record(name, None)
