r"""One replicate of each claim's experiment: sample the matrices once, measure everything.

An experiment is ``f(rng, T, params) -> dict[str, float | ndarray]``. It measures, it
does not judge: it never sees a predicted value, so stored measurements can be re-judged
against any statement (``--perturb``, the power audit) without resampling. Arrays are
spectra for the law claims; scalars are the statistics named in the claim registry.

Parameters (``params``): ``s2``, ``mu`` (logit variance and mean), ``gamma`` (``T/d``),
``sigma_V`` (value weight standard deviation).
"""
from __future__ import annotations

import math
from typing import Callable, Mapping

import numpy as np

from numerics.samplers import LogNormalEntries, gaussian_matrix, isometric_input, remove_outlier
from numerics.statistics import (
    eigenvalues,
    frobenius_sq,
    gram_stable_rank,
    singular_values,
    stable_rank,
    top_eigenvalues,
    top_singular_values,
)

__all__ = ["EXPERIMENTS", "Experiment", "width_of"]

Measurement = dict[str, "float | np.ndarray"]
Experiment = Callable[[np.random.Generator, int, Mapping[str, float]], Measurement]


def _attention(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> np.ndarray:
    return LogNormalEntries(mu=p["mu"], s2=p["s2"]).markov(rng, T)


def width_of(T: int, gamma: float) -> int:
    """``d = round(T / gamma)`` (at least ``T``), the width for a token count and ratio."""
    return max(T, int(round(T / gamma)))


def softmax_kappa(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r"""Coefficient of variation of the ``T^2`` entries :math:`Z = e^M`, and
    :math:`\|A^\perp\|_F^2` (:math:`\to \kappa^2`). ``O(T^2)``."""
    law = LogNormalEntries(mu=p["mu"], s2=p["s2"])
    M = law.logits(rng, (T, T))
    Z = np.exp(M)
    # kappa_hat = sd(Z) / mean(Z) over all T^2 entries
    kappa_hat = float(Z.std(ddof=1) / Z.mean())
    A = Z / Z.sum(axis=1, keepdims=True)
    return {"kappa": kappa_hat, "frob_Aperp": frobenius_sq(remove_outlier(A))}


def singular_law(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r"""Bulk singular values :math:`\sqrt T s_2, \dots, \sqrt T s_T` of :math:`A` (full
    spectrum, ``O(T^3)``), their mean square and the largest of them."""
    s = singular_values(_attention(rng, T, p)) * math.sqrt(T)
    bulk = s[1:]
    return {"bulk": bulk, "second_moment": float(np.mean(bulk**2)), "edge": float(bulk[0])}


def circular_law(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r"""Moduli of the eigenvalues of :math:`\sqrt T A`, the Perron eigenvalue
    :math:`\sqrt T` removed (full spectrum, ``O(T^3)``)."""
    ev = eigenvalues(_attention(rng, T, p))
    perron = int(np.argmin(np.abs(ev - 1.0)))
    modulus = np.abs(np.delete(ev, perron)) * math.sqrt(T)
    return {"modulus": np.sort(modulus)}


def outliers(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r""":math:`\lambda_1`, :math:`s_1`, :math:`\sqrt T s_2`, :math:`\sqrt T|\lambda_2|` of
    :math:`A`: two Lanczos runs (``O(T^2)`` per iteration), no full spectrum."""
    A = _attention(rng, T, p)
    s = top_singular_values(A, 2)
    lam = top_eigenvalues(A, 2)
    return {
        "lambda1": float(lam[0].real),
        "lambda1_imag": float(abs(lam[0].imag)),
        "s1": float(s[0]),
        "sqrtT_s2": float(s[1] * math.sqrt(T)),
        "sqrtT_lambda2": float(abs(lam[1]) * math.sqrt(T)),
        "gap_ratio": float(s[0] / s[1]),
    }


def fix_spectrum(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r"""Eigenvalues of :math:`A` and :math:`A^\perp` (for the exact identity) and the
    singular values of :math:`\sqrt T A^\perp` (no outlier). Full spectra, ``O(T^3)``."""
    A = _attention(rng, T, p)
    A_perp = remove_outlier(A)
    sv = singular_values(A_perp) * math.sqrt(T)
    return {
        "eig_A": eigenvalues(A),
        "eig_Aperp": eigenvalues(A_perp),
        "bulk_perp": sv,
        "sqrtT_s1_Aperp": float(sv[0]),
        "norm_A": float(math.sqrt(frobenius_sq(A))),
    }


def width_stable_rank(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r"""One layer :math:`X_1 = A X_0 W_1` and :math:`X_1^\perp = A^\perp X_0 W_1` on the same
    draw: stable ranks of :math:`A, X_1, \Sigma_1` and of the fixed versions over ``T``.
    ``O(T^2 d + T d^2)`` for the products, Lanczos for the top singular values."""
    d = width_of(T, p["gamma"])
    A = _attention(rng, T, p)
    X0 = isometric_input(rng, T, d)
    W = gaussian_matrix(rng, d, d, p["sigma_V"])
    Y = X0 @ W  # shared by both layers: X1 = A Y, X1perp = Aperp Y
    A_perp = remove_outlier(A)
    X1, X1_perp = A @ Y, A_perp @ Y
    return {
        "sr_A": stable_rank(A),
        "sr_X1": stable_rank(X1),
        "sr_Sigma1": gram_stable_rank(X1),
        "sr_Aperp_over_T": stable_rank(A_perp) / T,
        "sr_X1perp_over_T": stable_rank(X1_perp) / T,
        "sr_Sigma1perp_over_T": gram_stable_rank(X1_perp) / T,
    }


#: Experiments by claim id.
EXPERIMENTS: dict[str, Experiment] = {
    "softmax.kappa": softmax_kappa,
    "markov.singular_law": singular_law,
    "markov.circular_law": circular_law,
    "markov.outliers": outliers,
    "fix.spectrum": fix_spectrum,
    "width.stable_rank": width_stable_rank,
}
