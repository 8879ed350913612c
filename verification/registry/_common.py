r"""Shared pieces of the claim families: references, size grids and profiles, the
laws' CDFs, round-off tolerances, and the one :data:`CLAIMS` dictionary they register into."""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import sympy as sp

from numerics.statistics import LANCZOS_TOL
from theory.laws import disc_modulus_law, quarter_circle
from theory.markov import kappa_of

from verification.claims import Claim, Profile

EPS = float(np.finfo(float).eps)
BCC = "Bordenave, Caputo, Chafai, PTRF 152 (2012), arXiv:0808.1502"
GAP = "Naderi, Nait Saada, Tanner, Mind the Gap, ICML 2025, arXiv:2410.07799"


def _kappa(p: Mapping[str, float]) -> float:
    # kappa = sqrt(exp(s2) - 1), evaluated from the sympy derivation
    return float(kappa_of(sp.Float(p["s2"], 30)))


def _quarter_circle_cdf(p: Mapping[str, float], scale: float):
    return quarter_circle(scale=_kappa(p) * scale).cdf


def _disc_modulus_cdf(p: Mapping[str, float], scale: float):
    return disc_modulus_law().frozen(_kappa(p) * scale).cdf


def _grid(low: int, high: int, ratio: float = math.sqrt(2)) -> tuple[int, ...]:
    """Geometric grid ``low * ratio^k <= high``, rounded to integers."""
    # the tolerance keeps a bound given to 4 digits, e.g. 724 ~ 64 * sqrt(2)^7 = 724.08
    n = int(math.floor(math.log(high / low) / math.log(ratio) + 1e-3)) + 1
    return tuple(int(round(low * ratio**k)) for k in range(n))


def _profiles(quick: tuple[int, int, int], standard: tuple[int, int, int],
              large: tuple[int, int, int] | None = None) -> dict[str, Profile]:
    """Profiles ``(low, high, replicates)``; ``large`` (Lanczos-based claims only) reaches
    ``T = 16384`` where memory allows (``verification.runner.check_memory``)."""
    (ql, qh, qr), (sl, sh, sr) = quick, standard
    out = {"quick": Profile(_grid(ql, qh), qr), "standard": Profile(_grid(sl, sh), sr)}
    if large is not None:
        out["large"] = Profile(_grid(large[0], large[1]), large[2])
    return out


# --- exact tolerances -------------------------------------------------------------------

def _lanczos_tolerance(T: int, m: Mapping[str, object]) -> float:
    # |lambda_1 - 1| <= tol_ARPACK * |lambda_1| + T eps: ARPACK's own convergence bound
    return LANCZOS_TOL + T * EPS


def _eig_tolerance(T: int, m: Mapping[str, object]) -> float:
    # |d lambda| <= cond(lambda) * ||E||, ||E|| <= T eps ||A||_F (backward-stable geev);
    # eigenvalue condition numbers of a T x T random non-normal matrix are taken <= T
    return T * T * EPS * float(m["norm_A"]) * 16


def _fix_predicted_spectrum(m: Mapping[str, object], scale: float) -> np.ndarray:
    # spectrum of Aperp predicted from A's: the Perron eigenvalue 1 replaced by 0
    ev = np.array(m["eig_A"], dtype=complex)
    ev[int(np.argmin(np.abs(ev - 1.0)))] = 0.0
    return ev * scale


_EDGE_NOTE = ("no rate asserted: the edge of log-normal entries converges slowly and "
              "noisily (THEORY.md heavy_tail.edge); consistency only")

CLAIMS: dict[str, Claim] = {}


def _register(claim: Claim) -> None:
    names = {p.name for p in claim.predictions}
    for check in claim.checks:
        if check.prediction not in names:
            raise AssertionError(f"{claim.id}: check of unknown prediction {check.prediction}")
    CLAIMS[claim.id] = claim



def _k2(p: Mapping[str, sp.Expr]) -> sp.Expr:
    return kappa_of(p["s2"]) ** 2


def _layers():
    from theory import layers  # the free-probability engine

    return layers

