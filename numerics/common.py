"""Helpers the experiment modules share (widths, paired random streams, network
configurations), in a module of their own so that :mod:`gapverify.numerics.experiments`
can import the experiment families without a cycle."""
from __future__ import annotations

from typing import Mapping

import numpy as np


def width_of(T: int, gamma: float) -> int:
    """``d = round(T / gamma)`` (at least ``T``), the width for a token count and ratio."""
    return max(T, int(round(T / gamma)))


def network_stream(rng: np.random.Generator) -> np.random.Generator:
    """The stream a standard network and its fixed twin draw from
    (:func:`numerics.forward_pass.forward_twins`): a child of ``rng``'s seed sequence, the
    first of :func:`twin_streams`."""
    return np.random.default_rng(rng.bit_generator.seed_seq.spawn(1)[0])


def twin_streams(rng: np.random.Generator) -> tuple[np.random.Generator, np.random.Generator]:
    """Two generators with the same stream, for a standard and a fixed network whose
    attention reads its activations (key-query; :func:`numerics.forward_pass.forward_twins`
    draws once where it does not). Each has its own copy of the child seed sequence: a
    matrix of more than ``BLOCK_ROWS`` rows spawns its blocks from it
    (:func:`theory.row_blocks.fill_blocks`), and a shared sequence would hand the second
    generator the next children, not the same ones."""
    child = rng.bit_generator.seed_seq.spawn(1)[0]
    twin = np.random.SeedSequence(child.entropy, spawn_key=child.spawn_key,
                                  pool_size=child.pool_size)
    return np.random.default_rng(child), np.random.default_rng(twin)


def _network_config(T: int, p: Mapping[str, float], fixed: bool, **kw):
    from gapverify.numerics.networks import NetworkConfig

    return NetworkConfig.from_gamma(T, p["gamma"], int(p["depth"]), fixed=fixed, s2=p["s2"],
                                    mu=p["mu"], sigma_V=p["sigma_V"], **kw)
