"""Experiments by name, those of claims written outside the package included.

:data:`EXTRA_EXPERIMENTS` holds the experiments of claim files and plug-ins (keyed
``<claim id>@<sha-256 of the source>``), apart from the built-in
:data:`gapverify.numerics.experiments.EXPERIMENTS`, so that registering them loads no
experiment family (the command line's start-up); :func:`experiment` finds either.
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
