r"""The one registry of claims (ids, statuses and statements from ``THEORY.md``).

Every consumer (the command line, the verifier, the tables, the snapshots, the audit and
the tests) reads :data:`CLAIMS`. To add a claim: write its theory in ``theory/``, its
experiment in ``numerics/experiments.py`` and one :class:`~verification.claims.Claim` here.

Rates. A check's ``rate`` is the exponent :math:`\alpha` in "the mean absolute error
decays at least like :math:`T^{-\alpha}`"; ``rate_status`` says where it comes from
(``derived``: a CLT or exact-algebra argument given in ``rate_note``; ``empirical``: measured
here or in THEORY.md, no proof). ``rate=None`` asserts no rate and the check is a
consistency check only (the reason is in ``rate_note``).
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import sympy as sp
from scipy import stats

from numerics.statistics import LANCZOS_TOL
from theory.laws import KAPPA, disc_modulus_law, quarter_circle
from theory.markov import (
    fix_spectrum_identity,
    kappa_of,
    outlier_predictions,
    singular_law_predictions,
    sr_Aperp_over_T,
    width_standard_predictions,
)
from theory.softmax import kappa_squared, S2

from verification.claims import Check, Claim, Prediction, Profile

__all__ = ["CLAIMS", "get_claim", "claim_ids", "UnknownClaimError"]

EPS = float(np.finfo(float).eps)
BCC = "Bordenave, Caputo, Chafai, PTRF 152 (2012), arXiv:0808.1502"
GAP = "Naderi, Nait Saada, Tanner, Mind the Gap, ICML 2025, arXiv:2410.07799"


class UnknownClaimError(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0])


def _kappa(p: Mapping[str, float]) -> float:
    # kappa = sqrt(exp(s2) - 1), evaluated from the sympy derivation
    return float(kappa_of(sp.Float(p["s2"], 30)))


def _quarter_circle_cdf(p: Mapping[str, float], scale: float):
    return quarter_circle(scale=_kappa(p) * scale).cdf


def _disc_modulus_cdf(p: Mapping[str, float], scale: float):
    return disc_modulus_law().frozen(_kappa(p) * scale).cdf


def _grid(low: int, high: int, ratio: float = math.sqrt(2)) -> tuple[int, ...]:
    """Geometric grid ``low * ratio^k <= high``, rounded to integers."""
    n = int(math.floor(math.log(high / low) / math.log(ratio) + 1e-9)) + 1
    return tuple(int(round(low * ratio**k)) for k in range(n))


def _profiles(quick: tuple[int, int, int], standard: tuple[int, int, int]) -> dict[str, Profile]:
    (ql, qh, qr), (sl, sh, sr) = quick, standard
    return {"quick": Profile(_grid(ql, qh), qr), "standard": Profile(_grid(sl, sh), sr)}


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


def _width_fixed(name: str):
    def formula(p: Mapping[str, sp.Expr]) -> sp.Expr:
        from theory import layers  # the free-probability engine

        fn = {"sr_X1perp_over_T": layers.sr_Xperp_over_T,
              "sr_Sigma1perp_over_T": layers.sr_Sigmaperp_over_T}[name]
        return fn(1, p["gamma"])

    return formula


_EDGE_NOTE = ("no rate asserted: the edge of log-normal entries converges slowly and "
              "noisily (THEORY.md heavy_tail.edge); consistency only")

CLAIMS: dict[str, Claim] = {}


def _register(claim: Claim) -> None:
    names = {p.name for p in claim.predictions}
    for check in claim.checks:
        if check.prediction not in names:
            raise AssertionError(f"{claim.id}: check of unknown prediction {check.prediction}")
    CLAIMS[claim.id] = claim


_register(Claim(
    id="softmax.kappa",
    title=r"Coefficient of variation of softmax entries: $\kappa^2 = e^{s^2} - 1$",
    predictions=(
        Prediction("kappa", "derived", lambda p: kappa_of(p["s2"]), r"\hat\kappa",
                   note="sigma/m of exp(N(mu, s2)), derived in sympy; free of mu"),
    ),
    checks=(
        Check("kappa", "kappa", "limit", rate=1.0, rate_status="derived",
              rate_note="sample coefficient of variation of T^2 i.i.d. entries: CLT, sd ~ 1/T"),
    ),
    parameters=("s2", "mu"),
    experiment="softmax.kappa",
    references=(GAP,),
    profiles=_profiles((64, 1024, 12), (64, 2048, 24)),
))

_register(Claim(
    id="markov.singular_law",
    title=r"Singular values of $\sqrt{T}A$ follow the quarter-circle law $Q_\kappa$",
    predictions=(
        Prediction("law", "theorem", lambda p: singular_law_predictions(p["s2"])["edge"],
                   r"\mathrm{ESD}(\sqrt{T}A)", kind="law",
                   note="BCC 2012 Thm 1.1 (the paper's Theorem 2); the value is the support edge"),
        Prediction("edge", "theorem", lambda p: singular_law_predictions(p["s2"])["edge"],
                   r"\sqrt{T}\,s_2(A)"),
        Prediction("second_moment", "theorem",
                   lambda p: singular_law_predictions(p["s2"])["second_moment"],
                   r"\tfrac{1}{T-1}\textstyle\sum_{i\ge2} T s_i^2"),
    ),
    checks=(
        Check("law", "bulk", "distance", rate=2 / 3, rate_status="empirical",
              rate_note="Kolmogorov distance; THEORY.md measured T^-0.85 at s2 = log 2 for "
                        "T >= 100; asserted conservatively as 2/3", cdf=_quarter_circle_cdf),
        Check("second_moment", "second_moment", "limit", rate=1.0, rate_status="empirical",
              rate_note="mean of T^2 bounded terms after normalisation: bias and sd ~ 1/T"),
        Check("edge", "edge", "limit", rate=None, rate_note=_EDGE_NOTE),
    ),
    parameters=("s2", "mu"),
    experiment="markov.singular_law",
    references=(BCC, GAP),
    profiles=_profiles((128, 1024, 12), (128, 2048, 20)),
))

_register(Claim(
    id="markov.circular_law",
    title=r"Eigenvalues of $\sqrt{T}A$ (Perron root removed) fill the disc of radius $\kappa$",
    predictions=(
        Prediction("law", "theorem", lambda p: disc_modulus_law().edge.subs(KAPPA, kappa_of(p["s2"])),
                   r"\mathrm{ESD}(\sqrt{T}A)", kind="law",
                   note="BCC 2012 main theorem (needs a bounded density): P(|z| <= r kappa) = r^2"),
    ),
    checks=(
        Check("law", "modulus", "distance", rate=0.5, rate_status="empirical",
              rate_note="Kolmogorov distance of the moduli; measured slope 0.5-0.8 for T in "
                        "64..512; asserted as 1/2", cdf=_disc_modulus_cdf),
    ),
    parameters=("s2", "mu"),
    experiment="markov.circular_law",
    references=(BCC,),
    profiles=_profiles((90, 720, 12), (90, 1440, 20)),
))

_register(Claim(
    id="markov.outliers",
    title=r"One outlier: $\lambda_1 = 1$, $s_1 \to 1$; bulk edges $2\kappa/\sqrt{T}$ and $\kappa/\sqrt{T}$",
    predictions=(
        Prediction("lambda1", "theorem", lambda p: outlier_predictions(p["s2"])["lambda1"],
                   r"\lambda_1(A)", kind="exact", note="A 1 = 1 (trivial)"),
        Prediction("s1", "theorem", lambda p: outlier_predictions(p["s2"])["s1"], r"s_1(A)",
                   note="BCC 2012"),
        Prediction("sqrtT_s2", "theorem", lambda p: outlier_predictions(p["s2"])["sqrtT_s2"],
                   r"\sqrt{T}\,s_2(A)", note="BCC 2012, finite fourth moment"),
        Prediction("sqrtT_lambda2", "conjecture",
                   lambda p: outlier_predictions(p["s2"])["sqrtT_lambda2"],
                   r"\sqrt{T}\,|\lambda_2(A)|", note="open in BCC 2012; measured 1.011 at T=2000"),
    ),
    checks=(
        Check("lambda1", "lambda1", "exact", tolerance=_lanczos_tolerance,
              tolerance_note="ARPACK relative tolerance 1e-10 plus T eps"),
        Check("s1", "s1", "limit", rate=1.0, rate_status="empirical",
              rate_note="THEORY.md: s1 - 1 ~ 0.5/T (measured; BCC gives no rate)"),
        Check("sqrtT_s2", "sqrtT_s2", "limit", rate=None, rate_note=_EDGE_NOTE),
        Check("sqrtT_lambda2", "sqrtT_lambda2", "limit", rate=None,
              rate_note="conjecture: no rate known; consistency only"),
    ),
    parameters=("s2", "mu"),
    experiment="markov.outliers",
    references=(BCC, GAP),
    profiles=_profiles((128, 1024, 12), (128, 4096, 16)),
))

_register(Claim(
    id="fix.spectrum",
    title=r"$A^\perp = A - \mathbf{1}\mathbf{1}^\top/T$: eigenvalue 1 replaced by 0, no outlier",
    predictions=(
        Prediction("spectrum", "derived",
                   lambda p: sp.Integer(int(all(fix_spectrum_identity(3).values()))),
                   r"\chi_{A^\perp}(x)(x-1)/(x\chi_A(x))", kind="exact",
                   note="exact algebra, proven in sympy for a generic 3 x 3 stochastic matrix"),
        Prediction("law", "theorem", lambda p: singular_law_predictions(p["s2"])["edge"],
                   r"\mathrm{ESD}(\sqrt{T}A^\perp)", kind="law", note="BCC 2012 Thm 1.1"),
        Prediction("sqrtT_s1_Aperp", "theorem",
                   lambda p: outlier_predictions(p["s2"])["sqrtT_s1_Aperp"],
                   r"\sqrt{T}\,s_1(A^\perp)", note="BCC 2012, finite fourth moment"),
    ),
    checks=(
        Check("spectrum", "eig_Aperp", "matching", tolerance=_eig_tolerance,
              tolerance_note="16 T^2 eps ||A||_F: backward-stable eigensolver times an "
                             "eigenvalue condition number <= T",
              predicted_spectrum=_fix_predicted_spectrum),
        Check("law", "bulk_perp", "distance", rate=2 / 3, rate_status="empirical",
              rate_note="as markov.singular_law", cdf=_quarter_circle_cdf),
        Check("sqrtT_s1_Aperp", "sqrtT_s1_Aperp", "limit", rate=None, rate_note=_EDGE_NOTE),
    ),
    parameters=("s2", "mu"),
    experiment="fix.spectrum",
    references=(BCC, GAP),
    profiles=_profiles((64, 512, 12), (64, 724, 20)),
))

_register(Claim(
    id="width.stable_rank",
    title=r"Rank collapse in width: $\mathrm{sr}$ bounded for $A$, linear in $T$ for $A^\perp$",
    predictions=(
        Prediction("sr_A", "derived", lambda p: width_standard_predictions(p["s2"])["sr_A"],
                   r"\mathrm{sr}(A)"),
        Prediction("sr_X1", "derived", lambda p: width_standard_predictions(p["s2"])["sr_X1"],
                   r"\mathrm{sr}(X_1)"),
        Prediction("sr_Sigma1", "derived",
                   lambda p: width_standard_predictions(p["s2"])["sr_Sigma1"],
                   r"\mathrm{sr}(\Sigma_1)"),
        Prediction("sr_Aperp_over_T", "derived", lambda p: sr_Aperp_over_T(),
                   r"\mathrm{sr}(A^\perp)/T"),
        Prediction("sr_X1perp_over_T", "derived", _width_fixed("sr_X1perp_over_T"),
                   r"\mathrm{sr}(X_1^\perp)/T", note="free probability: 1/x*"),
        Prediction("sr_Sigma1perp_over_T", "derived", _width_fixed("sr_Sigma1perp_over_T"),
                   r"\mathrm{sr}(\Sigma_1^\perp)/T", note="free probability: (2+gamma)/x*^2"),
    ),
    checks=(
        Check("sr_A", "sr_A", "limit", rate=1.0, rate_status="derived",
              rate_note="||A||_F^2 = 1 + ||Aperp||_F^2 and s1 - 1 both O(1/T)"),
        Check("sr_X1", "sr_X1", "limit", rate=0.5, rate_status="derived",
              rate_note="the rank-one mass ||W^T X0^T 1||^2/T is chi-square with d dof: sd ~ d^-1/2"),
        Check("sr_Sigma1", "sr_Sigma1", "limit", rate=1.0, rate_status="derived",
              rate_note="the bulk adds sum s_i^4/s_1^4 = O(1/T)"),
        Check("sr_Aperp_over_T", "sr_Aperp_over_T", "limit", rate=None,
              rate_note="set by the edge s1(Aperp): " + _EDGE_NOTE),
        Check("sr_X1perp_over_T", "sr_X1perp_over_T", "limit", rate=None,
              rate_note="set by the top singular value of a bulk matrix: " + _EDGE_NOTE),
        Check("sr_Sigma1perp_over_T", "sr_Sigma1perp_over_T", "limit", rate=None,
              rate_note="set by the top singular value of a bulk matrix: " + _EDGE_NOTE),
    ),
    parameters=("s2", "mu", "gamma", "sigma_V"),
    experiment="width.stable_rank",
    references=(GAP,),
    profiles=_profiles((64, 1024, 12), (64, 2048, 20)),
))


def claim_ids() -> tuple[str, ...]:
    return tuple(CLAIMS)


def get_claim(claim_id: str) -> Claim:
    try:
        return CLAIMS[claim_id]
    except KeyError:
        raise UnknownClaimError(
            f"unknown claim '{claim_id}'; known claims: {', '.join(CLAIMS)}") from None
