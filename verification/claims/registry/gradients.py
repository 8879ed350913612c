r"""Claim family ``gradients``: value-weight gradients and the input Jacobian."""
from __future__ import annotations

import functools
from typing import Mapping

import numpy as np
import sympy as sp

from gapverify.numerics.common import width_of
from gapverify.theory.edge_offset import squared_edge_relative_offset
from gapverify.verification.claims.authoring import (
    ONE_OVER_T_SERIES, UNBIASED, Check, Claim, Prediction, RateRule, profiles,
)
from gapverify.verification.claims.registry._bulk_edge import DECAY_NOTE, light_edge_floor, offset_check
from gapverify.verification.claims.registry._common import (
    EDGE_RATES, GAP, _LIGHT_TAIL_NOTE, _k2, _layers, light_tails,
)



def _grad_std(p):
    # ||dX_L/dW_1||_F^2 / T^L -> sigma_V^{2(L-1)} gamma^-L frob_A(L): the constant C of the
    # growth C T^e (e from the theory, judged through _growth_correction)
    L = int(p["depth"])
    layers = _layers()
    return layers.value_gradient_expectation(L, 1 / p["gamma"], p["sigma_V"],
                                             layers.frob_A(L, _k2(p)))


def _grad_fix(p):
    # ||dX_L/dW_1||_F^2 / T -> sigma_V^{2(L-1)} gamma^-L kappa^{2L}
    L = int(p["depth"])
    layers = _layers()
    return layers.value_gradient_expectation(L, 1 / p["gamma"], p["sigma_V"],
                                             layers.frob_Aperp_scaled(L, _k2(p)))


#: The power of ``T`` the sampler divides each growth statistic by, a fact about the
#: measurement, not the theory (``numerics.experiments.value_gradients``: ``grad_std_scaled
#: = ||dX_L/dW_1||_F^2 / T^L``, ``grad_fix_scaled = ||dX_L perp/dW_1||_F^2 / T``;
#: ``tests/verification/test_growth_exponent.py`` checks the two agree)
def sampler_power(depth: int, fixed: bool) -> int:
    return 1 if fixed else int(depth)


@functools.lru_cache(maxsize=None)
def _growth_constant(fixed: bool, items: tuple) -> float:
    return float((_grad_fix if fixed else _grad_std)(dict(items)))


def _growth_correction(fixed: bool):
    """``Check.correction`` of a growth statistic ``x_T = ||dX_L/dW_1||_F^2 / T^p`` (``p``
    typed in the sampler, :func:`sampler_power`): the theory's mean is ``C T^e`` with ``e``
    from :func:`theory.layers.value_gradient_growth_exponent`, read when judging, so
    ``E x_T - C = C (T^(e - p) - 1)``: zero when the theory's exponent is the sampler's, and
    a growth the theory states wrong (``T^1.05`` for ``T``) moves every size's mean by
    ``T^(e - p)``, which no ``1/T`` series absorbs."""
    def correction(p: Mapping[str, float], T: np.ndarray) -> np.ndarray:
        L = int(p["depth"])
        e = _layers().value_gradient_growth_exponent(L, fixed=fixed)
        shift = float(e) - sampler_power(L, fixed)
        T = np.asarray(T, dtype=float)
        if shift == 0.0:
            return np.zeros_like(T)
        items = tuple(sorted((k, float(v)) for k, v in p.items()))
        return _growth_constant(fixed, items) * (T ** shift - 1.0)

    correction.__name__ = f"growth_correction_{'fix' if fixed else 'std'}"
    return correction


# two depths, two gamma, two sigma_V != 1 and two kappa != 1 in every profile: a wrong
# power of sigma_V, d (gamma) or kappa changes the predicted growth constant
_GRAD_CASES = {"quick": ({"depth": 1, "gamma": 1.0, "sigma_V": 1.5, "s2": 0.5},
                         {"depth": 2, "gamma": 0.5, "sigma_V": 0.7, "s2": 0.25}),
               "standard": ({"depth": 1, "gamma": 1.0, "sigma_V": 1.5, "s2": 0.5},
                            {"depth": 2, "gamma": 0.5, "sigma_V": 0.7, "s2": 0.25},
                            {"depth": 3, "gamma": 0.5, "sigma_V": 1.0})}

#: Given the attention matrices, E_W of each gradient norm is exact (Gaussian W independent
#: of A and X0, E||W_2 ... W_L||_F^2 = d^L sigma_V^(2(L-1))): the ratios to the identity's
#: prediction have mean exactly 1 at every T, and the sizes pool into one weighted mean
_RATIO_NOTE = ("the identity holds in expectation over W conditionally on the attention "
               "matrices and X0 (X0 X0^T = I): the ratio's mean is exactly 1 at every T, so "
               "the sizes pool into one weighted mean (a drift in T would show as Birge "
               "inflation); one draw concentrates like a chi-square with ~d^2 degrees of "
               "freedom per factor, sd ~ 1/d. The stated rate 1 it replaces had no rate "
               "+0.5 power at depth 2 (quick)")
#: The growth statistics' means are exact multiples of E||A_L ... A_1||_F^2 (standard) and
#: T^(L-1) E||Aperp_L ... Aperp_1||_F^2 (fix), which expand in integer powers of 1/T
_GROWTH_NOTE = ("E_W is exact given the attention matrices, so the mean is sigma_V^(2(L-1)) "
                "(d/T)^L times {what}, a normalised trace of a product of L independent "
                "softmax layers: each layer's moments expand in integer powers of 1/T (delta "
                "method around the row sum, as depth.frobenius), so the mean is L + c/T + "
                "e/T^2 + ...; the truncations after 1/T and after 1/T^2 are both fitted and "
                "the limit's interval is the union. The W factors add chi-square noise "
                "(sd ~ 1/d) and no bias. The growth exponent e is the theory's "
                "(theory.layers.value_gradient_growth_exponent, read when judging): the "
                "sampler divides by T^p, and the theory's mean of the quotient, C T^(e-p), "
                "is its correction (C (T^(e-p) - 1), zero when e = p; a growth T^1.05 "
                "stated for T fails). {was}")

#: The claims of this family, in the order of the listings; the registry registers them
#: (:data:`gapverify.verification.claims.registry.REGISTRY`), as a claim file's.
CLAIMS: list[Claim] = []

CLAIMS.append(Claim(
    id="gradient.value_frobenius",
    title=r"$\operatorname{E}_W\|\partial X_L/\partial W_\ell\|_F^2 = \sigma_V^{2(L-1)} d^L\|A_L\cdots A_1\|_F^2$: $T^L$ growth, $T$ with $A^\perp$",
    predictions=(
        Prediction("identity_first", "derived", lambda p: sp.Integer(1),
                   r"\|\partial X_L/\partial W_1\|_F^2 / (\sigma_V^{2(L-1)} d^L \|A_L\cdots A_1\|_F^2)",
                   note="exact identity in expectation (Kronecker structure)"),
        Prediction("identity_last", "derived", lambda p: sp.Integer(1),
                   r"\|\partial X_L/\partial W_L\|_F^2 / (\sigma_V^{2(L-1)} d^L \|A_L\cdots A_1\|_F^2)"),
        Prediction("grad_std_over_T_L", "derived", _grad_std,
                   r"\|\partial X_L/\partial W_1\|_F^2 / T^L", note="growth exponent L"),
        Prediction("grad_fix_over_T", "derived", _grad_fix,
                   r"\|\partial X_L^\perp/\partial W_1\|_F^2 / T", note="growth exponent 1"),
    ),
    checks=(
        Check("identity_first", "ratio_first_std", "limit", models=UNBIASED,
              rate_status="derived", rate_note=_RATIO_NOTE),
        Check("identity_last", "ratio_last_fix", "limit", models=UNBIASED, rate_status="derived",
              rate_note=_RATIO_NOTE.replace("chi-square with ~d^2 degrees of freedom per "
                                            "factor", "chi-square with ~T d degrees of "
                                            "freedom (the Gaussian squares of X0 W_1 ... "
                                            "W_(L-1))")),
        Check("grad_std_over_T_L", "grad_std_scaled", "limit", models=ONE_OVER_T_SERIES,
              rate_status="derived", correction=_growth_correction(fixed=False),
              rate_note=_GROWTH_NOTE.format(
                  what="E||A_L ... A_1||_F^2",
                  was="The stated rate 0.85 it replaces had no rate +0.5 power at depth 2 "
                      "(standard)")),
        Check("grad_fix_over_T", "grad_fix_scaled", "limit", models=ONE_OVER_T_SERIES,
              rate_status="derived", correction=_growth_correction(fixed=True),
              rate_note=_GROWTH_NOTE.format(
                  what="T^(L-1) E||Aperp_L ... Aperp_1||_F^2 (depth.frobenius "
                       "frob_Aperp_scaled)",
                  was="The stated rate 0.7 it replaces had power 6.2% at depth 3 "
                      "(standard; no rate fitted the means, Birge factor 1.7-1.9)")),
    ),
    parameters=("s2", "mu", "gamma", "sigma_V", "depth"),
    experiment="gradient.value",
    references=(GAP,),
    # standard: 96 replicates up to T = 512; with 48 up to 512, or 96 up to 362, the depth-3
    # grad_fix_over_T had power 3.7% (1.8% with both)
    profiles=profiles(quick=(64, 362), standard=(64, 512)),
    cases=_GRAD_CASES,
))

#: derived in sympy from Johnstone's Tracy-Widom centring and scale (theory.layers)
_JACOBIAN_RATE = RateRule("2/3 (Tracy-Widom offset of ||W_1||_2^2, theory.layers.input_jacobian_rate)",
                          lambda p: _layers().input_jacobian_rate())

def _jacobian_fix(p):
    # 16 sigma_V^2 kappa^2 / gamma: ||W_1||_2^2 ||Aperp||_2^2 with T = gamma d
    return _layers().input_jacobian_sq_norm(1 / p["gamma"], p["sigma_V"], _k2(p), p["gamma"],
                                            fixed=True, T=1)


@functools.lru_cache(maxsize=None)
def _jacobian_fix_float(s2: float, sigma_V: float, gamma: float) -> float:
    return float(_jacobian_fix({"s2": s2, "sigma_V": sigma_V, "gamma": gamma}))


def _jacobian_fix_offset(p: Mapping[str, float], T: np.ndarray) -> np.ndarray:
    """``Check.correction`` of jacobian_fix: ``L (c d^-2/3 + c T^-2/3)``, the Tracy-Widom
    offsets of its two squared edges, ``||W_1||_2^2`` (``d x d``, ``d = width_of(T,
    gamma)``) and ``T ||Aperp||_2^2`` (``T x T``), ``c = 2^(-2/3) E[TW_1]``
    (:func:`theory.edge_offset.squared_edge_relative_offset`)."""
    sizes = np.atleast_1d(np.asarray(T))
    d = np.array([width_of(int(t), float(p["gamma"])) for t in sizes], dtype=float)
    limit = _jacobian_fix_float(float(p["s2"]), float(p["sigma_V"]), float(p["gamma"]))
    offset = limit * (squared_edge_relative_offset(d) + squared_edge_relative_offset(sizes))
    return offset.reshape(np.shape(T))


_JACOBIAN_FIX_NOTE = (
    "a product of two squared edges, ||W1||_2^2 (d x d) and T s_1(Aperp)^2: their Tracy-Widom "
    "offsets L 2^(-2/3) E[TW_1] (d^(-2/3) + T^(-2/3)) (theory.edge_offset) are subtracted and "
    "the rest, L + c T^-r with r estimated in [2/3, 1], carries the O(1/T) terms; fitted "
    "without them, the mean sat 1.35% below the limit at T = 724 (s2 = 0.35, gamma = 1/2; the "
    "offsets give 1.5%) and the interval missed it in 1 of 10 standard seeds of base 235711")

CLAIMS.append(Claim(
    id="gradient.input_jacobian",
    title=r"$\|\partial X_1/\partial X_0\|_2^2 = \|W_1\|_2^2\|A\|_2^2$: $4\sigma_V^2 d$ standard, $16\sigma_V^2\kappa^2/\gamma$ fixed",
    predictions=(
        Prediction("jacobian_std_over_d", "derived",
                   lambda p: _layers().input_jacobian_sq_norm(1, p["sigma_V"], _k2(p), p["gamma"]),
                   r"\|\partial X_1/\partial X_0\|_2^2 / d"),
        Prediction("jacobian_fix", "derived", _jacobian_fix,
                   r"\|\partial X_1^\perp/\partial X_0\|_2^2"),
    ),
    checks=(
        Check("jacobian_std_over_d", "jacobian_std_over_d", "limit", rate=_JACOBIAN_RATE,
              rate_status="derived",
              rate_note="the Tracy-Widom offset of ||W_1||_2^2/d, 2^(4/3) E[TW_1] d^(-2/3) "
                        "(Johnstone's centring and scale), leads the centring's O(1/d) and "
                        "||A||_2^2 - 1 = O(kappa^2/T) (column sums): rate 2/3 in d = T/gamma. "
                        "The stated 1/2 it replaces lacked rate +0.5 power in 2 of 20 quick "
                        "seeds of base 161803 (fitted beta 0.78+-0.11, 0.71+-0.13)"),
        Check("jacobian_fix", "jacobian_fix", "limit", rate_range=EDGE_RATES,
              rate_status="derived", rate_note=_JACOBIAN_FIX_NOTE,
              correction=_jacobian_fix_offset, domain=light_tails,
              domain_note=_LIGHT_TAIL_NOTE, min_size=light_edge_floor, min_size_note=DECAY_NOTE),
        offset_check("jacobian_fix", "jacobian_fix", correction=_jacobian_fix_offset),
    ),
    parameters=("s2", "mu", "gamma", "sigma_V"),
    experiment="gradient.input",
    references=(GAP,),
    # standard: 64 replicates; with 48, jacobian_fix at s2 = 0.35 had power 3.1% against the
    # 3% target in 1 of 5 standard root seeds of base 161803 (power ~ replicates^-1/2)
    profiles=profiles(quick=(64, 724), standard=(64, 724)),
    # the fixed Jacobian is an edge: judged at light tails (s2 = 1/4, 0.35, as fix.spectrum)
    cases={"quick": ({"gamma": 1.0, "sigma_V": 1.5, "s2": 0.25},
                     {"gamma": 0.5, "sigma_V": 0.7, "s2": 0.35}),
           "standard": ({"gamma": 1.0, "sigma_V": 1.5, "s2": 0.25},
                        {"gamma": 0.5, "sigma_V": 0.7, "s2": 0.35}, {"gamma": 1.0})},
))

