r"""Experiments of ``variants.elementwise``: attention :math:`A = \varphi(M)/T` without row
normalisation (ReLU, sigmoid, linear), :math:`M_{ij}` i.i.d. :math:`N(\mu, s^2)`.

.. math::

    A = \frac{\varphi(M)}{T},\qquad
    A_{\mathrm{fix}} = A - \frac{\mu_\varphi}{T}\mathbf 1\mathbf 1^\top,\qquad
    \mu_\varphi = \mathbb E\,\varphi(g)\ (\text{the definition of the fix, from theory}).

Each replicate measures the outlier eigenvalue (real part of the eigenvalue of largest
modulus), :math:`s_1(A)`, :math:`\sqrt T s_2(A)`, :math:`\sqrt T|\lambda_2(A)|` and
:math:`\sqrt T s_1(A_{\mathrm{fix}})`: three Lanczos runs, ``O(T^2)`` per iteration.
It also draws a real Ginibre matrix :math:`G` (i.i.d. :math:`N(0, 1/T)`, independent of
:math:`A`) and records :math:`\sqrt T|\lambda_2(A)| / |\lambda_k(G)|`, :math:`k` the rank
of :math:`\lambda_2`'s modulus in the bulk (:func:`ginibre_reference`): the spectral
radius of an i.i.d. matrix approaches its limit like :math:`\sqrt{\log T/T}` [2]_, and
that correction is universal at the Gumbel scale [3]_, so the ratio sheds it.

References
----------
.. [1] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap", ICML 2025, arXiv:2410.07799.
.. [2] B. Rider, "A limit theorem at the edge of a non-Hermitian random matrix ensemble",
   J. Phys. A 36 (2003) 3401.
.. [3] G. Cipolloni, L. Erdos, Y. Xu, "Universality of extremal eigenvalues of large
   random matrices", arXiv:2312.08325 (2023).
"""
from __future__ import annotations

import math
from typing import Callable, Mapping

import numpy as np

from gapverify.numerics.experiment_record import Experiment
from gapverify.numerics.statistics import ginibre_ratio, top_eigenvalues, top_singular_values
from gapverify.theory.elementwise import moments_float

__all__ = ["MAPS", "elementwise_attention", "elementwise_experiment", "ginibre_reference",
           "VARIANT_EXPERIMENTS", "VARIANT_RECORDS"]

#: The maps, vectorised: phi(M) elementwise.
MAPS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "relu": lambda M: np.maximum(M, 0.0),  # max(x, 0)
    "sigmoid": lambda M: 0.5 * (1.0 + np.tanh(0.5 * M)),  # 1 / (1 + e^-x), overflow-free
    "linear": lambda M: M,  # x
}


def elementwise_attention(rng: np.random.Generator, T: int, name: str, mu: float, s2: float) -> np.ndarray:
    r""":math:`A = \varphi(M)/T`, :math:`M_{ij}` i.i.d. :math:`N(\mu, s^2)`; ``O(T^2)``."""
    if name not in MAPS:
        raise ValueError(f"parameter 'name' must be one of {', '.join(MAPS)}, got {name!r}")
    M = rng.normal(mu, math.sqrt(s2), size=(T, T))  # M_ij ~ N(mu, s2)
    return MAPS[name](M) / T


#: Arnoldi restarts before LAPACK takes over: 64 restarts of 38 products cost about as
#: much as LAPACK's full spectrum at T = 724 (0.23 s, one thread); most draws need under
#: 25, but a bulk without outlier (linear at mu = 0) has near-equal moduli at the edge and
#: took up to 1100 (41907 products, 3.4 s) or never converged (24 s before giving up)
ARNOLDI_RESTARTS = 64


def ginibre_reference(rng: np.random.Generator, T: int, k: int,
                      restarts: int | None = ARNOLDI_RESTARTS) -> float:
    r""":math:`|\lambda_k(G)|`, the ``k``-th largest eigenvalue modulus of a real Ginibre
    matrix :math:`G_{ij}` i.i.d. :math:`N(0, 1/T)` (``k = 1``: its spectral radius, which
    tends to 1 like :math:`1 + \sqrt{\gamma_T/4T}`, :math:`\gamma_T \approx \log T`).
    Arnoldi for three values (a conjugate pair and the next), ``O(T^2)`` per product;
    ``restarts`` as in :func:`numerics.statistics.top_eigenvalues` (``None``: ARPACK's
    ``10 T``, never the ``O(T^3)`` full spectrum, for the large sizes of ``markov.outliers``)."""
    if k not in (1, 2):
        raise ValueError(f"parameter 'k' must be 1 or 2, got {k!r}")
    G = rng.normal(0.0, 1.0 / math.sqrt(T), size=(T, T))  # G_ij ~ N(0, 1/T)
    return float(abs(top_eigenvalues(G, 3, restarts=restarts)[k - 1]))


def bulk_rank_of_lambda2(mean: float, var: float, T: int) -> int:
    r"""Where :math:`\lambda_2(A)` sits in the bulk of :math:`\sqrt T(A - \mu_\varphi
    \mathbf 1\mathbf 1^\top/T)`: first (``1``) when the mean's outlier
    :math:`\mu_\varphi` lies outside the disc of radius :math:`\sqrt{v_\varphi/T}` (Tao),
    second (``2``) when there is no outlier and :math:`\lambda_1` is the bulk's own."""
    return 1 if mean * mean * T > var else 2  # |mu_phi| > sqrt(v_phi / T)


def elementwise_experiment(name: str):
    """The experiment of claim ``variants.<name>``."""

    def experiment(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> dict[str, float]:
        A = elementwise_attention(rng, T, name, p["mu"], p["s2"])
        mean, var = moments_float(name, p["mu"], p["s2"])
        s = top_singular_values(A, 2)
        lam = top_eigenvalues(A, 2, restarts=ARNOLDI_RESTARTS)
        s_fix = top_singular_values(A - mean / T, 1)[0]  # A - mu_phi 11^T / T
        root = math.sqrt(T)
        # drawn after A: the statistics above keep their values for a given seed
        rho = ginibre_reference(rng, T, bulk_rank_of_lambda2(mean, var, T))
        radius = float(abs(lam[1]) * root)
        return {
            "outlier": float(lam[0].real),
            "s1": float(s[0]),
            "sqrtT_s2": float(s[1] * root),
            "sqrtT_lambda2": radius,
            "sqrtT_s1_fix": float(s_fix * root),
            **ginibre_ratio(radius, rho),  # sqrt(T)|lambda_2(A)| / |lambda_k(G)|, and rho
        }

    experiment.__name__ = f"variants_{name}"
    experiment.__doc__ = f"``variants.{name}``: outlier, bulk edges and the fix of phi = {name}."
    return experiment


def normalization(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> dict[str, float]:
    r"""``variants.normalization``: Markov-surrogate networks of depth ``L`` with LayerNorm,
    skip, skip + LayerNorm and upscaled skip (:func:`numerics.forward_pass.forward`), standard
    and fixed on the same draws: :math:`\mathrm{sr}(\Sigma_L)` of each, and the fixed
    one over ``T``. ``O(L (T d^2 + T^3))`` per network, eight networks, four sets of draws
    (:func:`numerics.forward_pass.forward_twins`)."""
    from gapverify.numerics.common import _network_config, network_stream
    from gapverify.numerics.forward_pass import forward_twins

    out: dict[str, float] = {}
    for key, residual, ln in (("LN", "none", True), ("skip", "skip", False),
                              ("skip_LN", "skip", True), ("upscaled", "upscaled", False)):
        std, fix = forward_twins(network_stream(rng),
                                 _network_config(T, p, False, residual=residual, layer_norm=ln))
        out[f"sr_Sigma_{key}"] = float(std.sr_Sigma[-1])
        out[f"sr_Sigmaperp_over_T_{key}"] = float(fix.sr_Sigma_over_T[-1])
    return out


#: Seconds of one task on the reference machine, ``a + b T^2 + c T^3`` per map
#: (:mod:`numerics.experiment_record`), and of ``variants.normalization``. The maps' were
#: refitted on 2026-12-03, once ``moments_float`` was cached (its quadrature had cost
#: 45-84 ms of every draw) and matrices under ``statistics.DENSE_BELOW`` went to LAPACK:
#: ``gapverify run --profile standard --replicates 6 --workers 2 --no-replay --store S``
#: (every default claim, 2 idle cores, 2 min 25 s), then
#: ``python scripts/replay_time_left.py S --calibrate``. The other records keep the fit
#: on the 22 444-task standard sweep: for them only the sizes under 96 moved, by a few ms.
_SECONDS = {"relu": (0.00268, 3.8e-07, 0.0), "sigmoid": (0.00219, 4.02e-07, 0.0),
            "linear": (0.0026, 4.2e-07, 0.0)}

#: The records of these experiments, by claim id (registered by :mod:`numerics.experiments`).
VARIANT_RECORDS = (
    *(Experiment(f"variants.{name}", elementwise_experiment(name), seconds=_SECONDS[name])
      for name in MAPS),
    # the fit times the twins' measured ratio to two passes, 0.757 (docs/performance.md)
    Experiment("variants.normalization", normalization, seconds=(0.0118, 9.46e-07, 4.76e-09)),
)
#: Their functions by claim id.
VARIANT_EXPERIMENTS = {r.name: r.function for r in VARIANT_RECORDS}
