"""Helpers the experiment modules share (widths, paired random streams, network
configurations), in a module of their own so that :mod:`gapverify.numerics.experiments`
can import the experiment families without a cycle."""
from __future__ import annotations

from typing import Mapping

import numpy as np


def width_of(T: int, gamma: float) -> int:
    """``d = round(T / gamma)`` (at least ``T``), the width for a token count and ratio."""
    return max(T, int(round(T / gamma)))


def twin_streams(rng: np.random.Generator) -> tuple[np.random.Generator, np.random.Generator]:
    """Two generators with the same stream: standard and fixed networks on the same draws."""
    child = rng.bit_generator.seed_seq.spawn(1)[0]
    return np.random.default_rng(child), np.random.default_rng(child)


def _network_config(T: int, p: Mapping[str, float], fixed: bool, **kw):
    from gapverify.numerics.networks import NetworkConfig

    return NetworkConfig.from_gamma(T, p["gamma"], int(p["depth"]), fixed=fixed, s2=p["s2"],
                                    mu=p["mu"], sigma_V=p["sigma_V"], **kw)
