r"""Claim family ``layers``: rank collapse in width and depth, and key-query attention."""
from __future__ import annotations
from typing import Mapping

import sympy as sp

from theory.markov import sr_Aperp_over_T, width_standard_predictions

from verification.claims import Check, Claim, Prediction, RateRule
from verification.registry._common import (
    EDGE_RATES, GAP, ONE_OVER_T_SERIES, _EDGE_NOTE, _LIGHT_TAIL_NOTE, _k2, _layers, _profiles,
    _register, light_tails, split_by_domain,
)


def _width_fixed(name: str):
    def formula(p: Mapping[str, sp.Expr]) -> sp.Expr:
        from theory import layers  # the free-probability engine

        fn = {"sr_X1perp_over_T": layers.sr_Xperp_over_T,
              "sr_Sigma1perp_over_T": layers.sr_Sigmaperp_over_T}[name]
        return fn(1, p["gamma"])

    return formula



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
        Check("sr_A", "sr_A", "limit", rate=0.85, rate_status="derived",
              rate_note="||A||_F^2 = 1 + ||Aperp||_F^2 and s1 - 1 both O(1/T); measured local "
                        "slopes 0.93 (T = 64..1024), 0.93-0.98 (quick): asserted 0.85"),
        Check("sr_X1", "sr_X1", "limit", rate=0.5, rate_status="derived",
              rate_note="the rank-one mass ||W^T X0^T 1||^2/T is chi-square with d dof: sd ~ "
                        "d^-1/2 (CLT), asserted 1/2; measured local slopes 0.42±0.09, 0.50, "
                        "0.56 (quick, T = 64..1024)"),
        Check("sr_Sigma1", "sr_Sigma1", "limit", rate=0.85, rate_status="derived",
              rate_note="the bulk adds sum s_i^4/s_1^4 = O(1/T); measured local slope 0.98: "
                        "asserted 0.85"),
        Check("sr_Aperp_over_T", "sr_Aperp_over_T", "limit", rate_range=(1 / 3, 1.0),
              rate_status="empirical",
              rate_note="s1(Aperp)^-2 times a Frobenius mass: finite-size model x_T = L + c T^-r "
                        "with r estimated in [1/3, 1]; the edge range [2/3, 1] rejected the true "
                        "1/4 at the standard profile (s2 = 1/4, 40 replicates, T <= 1024: L in "
                        "[0.25026, 0.25286]): the log-normal entries' approach to the edge is "
                        "slower than Tracy-Widom at these sizes",
              domain=light_tails, domain_note=_LIGHT_TAIL_NOTE),
        Check("sr_X1perp_over_T", "sr_X1perp_over_T", "limit", rate_range=EDGE_RATES,
              rate_status="derived", rate_note="s1(X1perp) is " + _EDGE_NOTE,
              domain=light_tails, domain_note=_LIGHT_TAIL_NOTE),
        Check("sr_Sigma1perp_over_T", "sr_Sigma1perp_over_T", "limit", rate_range=EDGE_RATES,
              rate_status="derived", rate_note="s1(X1perp)^2 is " + _EDGE_NOTE,
              domain=light_tails, domain_note=_LIGHT_TAIL_NOTE),
    ),
    parameters=("s2", "mu", "gamma", "sigma_V"),
    experiment="width.stable_rank",
    references=(GAP,),
    # gpu: --backend torch|cupy only; at T = 32768, gamma = 1/2 (d = 65536): A 8 GiB, Y and
    # A Y 16 GiB each in float64 (numerics.array_api never forms Aperp nor a Gram matrix)
    profiles=_profiles((64, 1024, 20), (64, 1024, 40), large=(1024, 16384, 6),
                       gpu=(1024, 32768, 4)),
    # two kappa (s2 = 1/4, 1/2) and two gamma at light tails; standard adds the paper's log 2
    cases={"quick": ({"s2": 0.25, "gamma": 1.0}, {"s2": 0.5, "gamma": 0.5}),
           "standard": ({"s2": 0.25, "gamma": 1.0}, {"s2": 0.5, "gamma": 0.5}, {"gamma": 1.0}),
           "large": ({"s2": 0.25, "gamma": 1.0}, {"s2": 0.5, "gamma": 0.5}),
           "gpu": ({"s2": 0.25, "gamma": 1.0}, {"s2": 0.5, "gamma": 0.5})},
))



# two depths, two gamma and two kappa in every profile; depth.frobenius adds depth 3 and
# the paper's log 2 where its checks have power (the fixed stable ranks at depth 3 do not
# at T <= 724: power 4-6% for sr(X), 8-11% for sr(Sigma), measured at s2 = 1/4, 24 replicates)
_DEPTH_CASES = {"quick": ({"depth": 1, "gamma": 0.5, "s2": 0.5}, {"depth": 2, "gamma": 1.0, "s2": 0.25}),
                "standard": ({"depth": 1, "gamma": 0.5, "s2": 0.5}, {"depth": 2, "gamma": 1.0, "s2": 0.25},
                             {"depth": 2, "gamma": 0.5, "s2": 0.5})}
_FROB_CASES = {"quick": _DEPTH_CASES["quick"],
               "standard": _DEPTH_CASES["standard"] + ({"depth": 3, "gamma": 0.5},)}
# asymptotic rates less 0.15: measured local slopes at T <= 362 were 0.94 (l = 2) and
# 1.91 (l = 3) for sr_X, 2.94 (l = 2) and 4.92 (l = 3) for sr_Sigma
_SR_X_RATE = RateRule("l - 1.15 for l >= 2; 1/2 at l = 1",
                      lambda p: 1 / 2 if int(p["depth"]) == 1 else int(p["depth"]) - 1.15)
_SR_SIGMA_RATE = RateRule("2 l - 1.15", lambda p: 2 * int(p["depth"]) - 1.15)
_FC_NOTE = ("s1(X_l perp), the top singular value of a product of l bulk matrices, is "
            + _EDGE_NOTE + "; the mean approaches the limit from above (+9% at T = 64, +2% "
            "at T = 512 for (l, gamma) = (2, 1))")

_register(Claim(
    id="depth.stable_rank",
    title=r"Rank collapse in depth: $\mathrm{sr}(X_\ell)\to1$; with $A^\perp$, $\mathrm{sr}/T$ from free probability",
    predictions=(
        Prediction("sr_X", "derived", lambda p: _layers().sr_X(int(p["depth"]), _k2(p)),
                   r"\mathrm{sr}(X_\ell)"),
        Prediction("sr_Sigma", "derived", lambda p: _layers().sr_Sigma(int(p["depth"])),
                   r"\mathrm{sr}(\Sigma_\ell)"),
        Prediction("sr_Xperp_over_T", "derived",
                   lambda p: _layers().sr_Xperp_over_T(int(p["depth"]), p["gamma"]),
                   r"\mathrm{sr}(X_\ell^\perp)/T", note="1/x*_l, S(z) = (1+z)^-l (1+gamma z)^-l"),
        Prediction("sr_Sigmaperp_over_T", "derived",
                   lambda p: _layers().sr_Sigmaperp_over_T(int(p["depth"]), p["gamma"]),
                   r"\mathrm{sr}(\Sigma_\ell^\perp)/T", note="(1 + l(1+gamma))/x*_l^2"),
    ),
    checks=(
        *split_by_domain(
            lambda p: int(p["depth"]) >= 2,
            Check("sr_X", "sr_X", "limit", rate=_SR_X_RATE, rate_status="derived",
                  rate_note="the bulk's Frobenius mass relative to the rank-one part is "
                            "kappa^(2l) T^(1-l) for l >= 2: asserted 0.15 below"),
            Check("sr_X", "sr_X", "limit", models=ONE_OVER_T_SERIES, rate_status="derived",
                  rate_note="at l = 1, sr(X_1) = ||A Y||_F^2 / s_1(A Y)^2 with s_1 the "
                            "separated rank-one part ||1^T Y||^2/T: a smooth function of row "
                            "and column averages (as width sr_X1), whose chi-square (d dof) "
                            "fluctuation is d^(-1/2) but whose mean expands in integer powers "
                            "of 1/T (delta method; E[1/chi2_d] = 1/(d - 2)); the truncations "
                            "after 1/T and after 1/T^2 are both fitted. The stated rate 1/2 it "
                            "replaces had power 3.1% (standard, s2 = 1/2, gamma = 1/2)"),
            "depth >= 2", "depth 1"),
        Check("sr_Sigma", "sr_Sigma", "limit", rate=_SR_SIGMA_RATE, rate_status="derived",
              rate_note="the bulk adds sum_(i>=2) s_i^4 / s_1^4 = kappa^(4l) m_2 T^(1-2l); "
                        "asserted 0.15 below"),
        Check("sr_Xperp_over_T", "sr_Xperp_over_T", "limit", rate_range=EDGE_RATES,
              rate_status="derived", rate_note=_FC_NOTE, domain=light_tails,
              domain_note=_LIGHT_TAIL_NOTE),
        Check("sr_Sigmaperp_over_T", "sr_Sigmaperp_over_T", "limit", rate_range=EDGE_RATES,
              rate_status="derived", rate_note=_FC_NOTE, domain=light_tails,
              domain_note=_LIGHT_TAIL_NOTE),
    ),
    parameters=("s2", "mu", "gamma", "sigma_V", "depth"),
    experiment="depth.network",
    references=(GAP,),
    # standard: the 96 replicates depth.frobenius draws anyway (same experiment and cases):
    # with 48, sr_X at depth 1 had power 3.3% and sr_Xperp_over_T 4-5%
    profiles=_profiles((64, 512, 24), (64, 512, 96)),
    cases=_DEPTH_CASES,
))

_register(Claim(
    id="depth.frobenius",
    title=r"$\|A_\ell\cdots A_1\|_F^2 \to 1$ for $\ell\ge2$; $T^{\ell-1}\|A^\perp_\ell\cdots A^\perp_1\|_F^2\to\kappa^{2\ell}$",
    predictions=(
        Prediction("frob_A", "derived", lambda p: _layers().frob_A(int(p["depth"]), _k2(p)),
                   r"\|A_\ell\cdots A_1\|_F^2"),
        Prediction("frob_Aperp_scaled", "derived",
                   lambda p: _layers().frob_Aperp_scaled(int(p["depth"]), _k2(p)),
                   r"T^{\ell-1}\|A^\perp_\ell\cdots A^\perp_1\|_F^2"),
    ),
    checks=(
        Check("frob_A", "frob_A", "limit", rate=0.85, rate_status="derived",
              rate_note="column-sum fluctuations of the cross terms are O(kappa^2/T); a "
                        "subleading correction keeps the local slope at 0.92-0.97 for "
                        "T <= 512: asserted 0.85"),
        Check("frob_Aperp_scaled", "frob_Aperp_scaled", "limit", models=ONE_OVER_T_SERIES,
              rate_status="derived",
              rate_note="the mean of a normalised trace of a product of l independent bulk "
                        "matrices A_k - 11^T/T: each layer's softmax moments expand in integer "
                        "powers of 1/T (delta method around the row sum), so the mean is "
                        "L + c/T + e/T^2 + ...; the truncations after 1/T and after 1/T^2 are "
                        "both fitted and the limit's interval is the union. Measured: the "
                        "error times T stays 3-5 (l = 1), 4-6 (l = 2) and 13-20 (l = 3, in "
                        "units of 1%) at T = 64..512; the stated rate 0.8 it replaces had "
                        "power 3.6% at depth 3 (standard)"),
    ),
    parameters=("s2", "mu", "gamma", "sigma_V", "depth"),
    experiment="depth.network",
    references=(GAP,),
    # standard: 96 replicates (the first 48 shared with depth.stable_rank): with 48, depth 3
    # had power 2.7% at the default seed and lacked power (above 3%) in 3 of 5 other seeds
    profiles=_profiles((64, 512, 24), (64, 512, 96)),
    cases=_FROB_CASES,
))
