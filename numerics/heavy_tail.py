r"""Experiment of ``heavy_tail.edge``: the finite-size edge of log-normal softmax attention
against the largest column of :math:`\sqrt T A^\perp`.

With :math:`B = \sqrt T A^\perp`, :math:`c = \max_j\|B e_j\|` and
:math:`\theta = c/\kappa` (:math:`\kappa^2 = e^{s^2} - 1`, the law's parameter, not a
prediction), the edge is compared with

.. math::

    \max(2\kappa, c) \quad\text{and}\quad \kappa\,g(\theta),\qquad
    g(\theta) = \theta + 1/\theta\ (\theta > 1),\quad g = 2\ (\theta \le 1),

the location of the outlier that one column spike of norm :math:`c` pushes out of a
bulk of edge :math:`2\kappa` (the BBP transition for an additive rank-one spike). Both
ratios tend to 1 as :math:`T\to\infty` (BCC's edge theorem and :math:`\theta\to1`); at
finite ``T`` the spike dominates until roughly :math:`T > e^{16 s^2}` (claim ``heavy_tail.edge``).
One Lanczos run, ``O(T^2)`` per iteration.

References
----------
.. [1] C. Bordenave, P. Caputo, D. Chafai, PTRF 152 (2012), arXiv:0808.1502.
.. [2] J. Baik, G. Ben Arous, S. Peche, "Phase transition of the largest eigenvalue for
   nonnull complex sample covariance matrices", Ann. Probab. 33 (2005), arXiv:math/0403022.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from gapverify.numerics.experiment_record import Experiment
from gapverify.numerics.samplers import LogNormalEntries, remove_outlier
from gapverify.numerics.statistics import top_singular_values

__all__ = ["spike_edge", "heavy_tail_edge", "HEAVY_TAIL_EXPERIMENTS", "HEAVY_TAIL_RECORDS"]


def spike_edge(kappa: float, c: float) -> float:
    r""":math:`\kappa g(c/\kappa)`: :math:`c + \kappa^2/c` above the bulk, :math:`2\kappa` below."""
    return c + kappa * kappa / c if c > kappa else 2.0 * kappa


def heavy_tail_edge(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> dict[str, float]:
    r""":math:`\sqrt T s_2(A)`, the largest column norm :math:`c` of :math:`\sqrt T A^\perp`,
    and the ratios of the edge to :math:`\max(2\kappa, c)` and to :math:`\kappa g(c/\kappa)`."""
    A = LogNormalEntries(mu=p["mu"], s2=p["s2"]).markov(rng, T)
    kappa = math.sqrt(math.expm1(p["s2"]))  # the law's parameter: kappa^2 = e^{s2} - 1
    edge = float(top_singular_values(A, 2)[1]) * math.sqrt(T)  # sqrt(T) s_2(A)
    B = remove_outlier(A)
    c = math.sqrt(T * float(np.max(np.einsum("ij,ij->j", B, B))))  # max_j ||sqrt(T) Aperp e_j||
    return {"sqrtT_s2": edge, "col_max": c,
            "edge_over_max": edge / max(2.0 * kappa, c),
            "edge_over_spike": edge / spike_edge(kappa, c)}


#: The record of this experiment (:mod:`numerics.experiment_record`; registered by
#: :mod:`numerics.experiments`) and its function by claim id.
HEAVY_TAIL_RECORDS = (
    Experiment("heavy_tail.edge", heavy_tail_edge, seconds=(0.00164, 2.38e-08, 8.66e-12)),
)
HEAVY_TAIL_EXPERIMENTS = {r.name: r.function for r in HEAVY_TAIL_RECORDS}
