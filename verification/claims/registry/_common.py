r"""Shared pieces of the claim families: references, the laws' CDFs, round-off
tolerances, the edge and moment reads of a check and their notes. The claims themselves are
written with the public authoring API (:mod:`...authoring`) and registered by the registry
(:mod:`.core`), as a claim file's are."""
from __future__ import annotations

import dataclasses
from typing import Mapping

import numpy as np
import sympy as sp

from gapverify.numerics.statistics import LANCZOS_TOL
from gapverify.theory.laws import disc_modulus_law, quarter_circle
from gapverify.theory.markov import kappa_of

from gapverify.verification.claims.authoring import (  # noqa: F401 - the families, here too
    ONE_OVER_LOG_T, ONE_OVER_T, ONE_OVER_T_SERIES, UNBIASED, Check,
)

EPS = float(np.finfo(float).eps)
BCC = "Bordenave, Caputo, Chafai, PTRF 152 (2012), arXiv:0808.1502"
GAP = "Naderi, Nait Saada, Tanner, Mind the Gap, ICML 2025, arXiv:2410.07799"
RIDER = ("Rider, A limit theorem at the edge of a non-Hermitian random matrix ensemble, "
         "J. Phys. A 36 (2003) 3401")
CEX = ("Cipolloni, Erdos, Xu, Universality of extremal eigenvalues of large random matrices, "
       "arXiv:2312.08325")


def _kappa(p: Mapping[str, float]) -> float:
    # kappa = sqrt(exp(s2) - 1), evaluated from the sympy derivation
    return float(kappa_of(sp.Float(p["s2"], 30)))


def _quarter_circle_cdf(p: Mapping[str, float], scale: float):
    return quarter_circle(scale=_kappa(p) * scale).cdf


def _disc_modulus_cdf(p: Mapping[str, float], scale: float):
    return disc_modulus_law().frozen(_kappa(p) * scale).cdf


# --- exact tolerances -------------------------------------------------------------------

def _lanczos_tolerance(T: int, m: Mapping[str, object]) -> float:
    # |lambda_1 - 1| <= tol_ARPACK * |lambda_1| + T eps: ARPACK's own convergence bound.
    # The array-API path (numerics.array_api) records its dtype's eps and its Krylov
    # tolerance: in float32, 1e-5 + T eps_32 (row sums of A are 1 only to ~T eps_32), so
    # a float32 run never judges lambda_1 by a double-precision bound
    eps = float(m.get("dtype_eps", EPS))  # type: ignore[arg-type]
    tol = float(m.get("lanczos_tol", LANCZOS_TOL))  # type: ignore[arg-type]
    return tol + T * eps


def _eig_tolerance(T: int, m: Mapping[str, object]) -> float:
    # |d lambda| <= cond(lambda) * ||E||, ||E|| <= T eps ||A||_F (backward-stable geev);
    # eigenvalue condition numbers of a T x T random non-normal matrix are taken <= T
    return T * T * EPS * float(m["norm_A"]) * 16


def _fix_predicted_spectrum(m: Mapping[str, object], scale: float) -> np.ndarray:
    # spectrum of Aperp predicted from A's: the Perron eigenvalue 1 replaced by 0
    ev = np.array(m["eig_A"], dtype=complex)
    ev[int(np.argmin(np.abs(ev - 1.0)))] = 0.0
    return ev * scale


#: Finite-size model of a statistic set by a spectral edge: ``x_T = L + c T^-r``.
EDGE_RATES = (2 / 3, 1.0)
_EDGE_NOTE = ("set by a spectral edge: finite-size model x_T = L + c T^-r with r estimated in "
              "[2/3, 1], since the largest singular value of a bulk matrix sits a Tracy-Widom "
              "distance O(T^-2/3) from the edge and the Frobenius mass and the mean carry O(1/T) "
              "corrections; the rate's uncertainty widens the limit's interval (profile likelihood)")
#: Heavy tails: edge statistics of A are judged only where the largest column norms of
#: sqrt(T) Aperp no longer exceed the edge at the sizes run (claim heavy_tail.edge).
LIGHT_TAIL_S2 = 0.5
_LIGHT_TAIL_NOTE = (
    "judged for s2 <= 1/2 only: for heavier log-normal tails the largest column norms of "
    "sqrt(T) Aperp exceed 2 kappa at T <= 2048 and the edge statistic is not monotone in T "
    "(measured at s2 = log 2, quick grid T = 128..1024, 12 replicates: sqrt(T) s2 = 2.138, "
    "2.235, 2.124, 2.143, 2.093, 2.108, 2.027 against 2), so no finite-size model applies; "
    "see the heavy-tail edge claim")


def light_tails(p: Mapping[str, float]) -> bool:
    """The domain of the edge checks of A: ``s2 <= 1/2``."""
    return float(p["s2"]) <= LIGHT_TAIL_S2 * (1 + 1e-12)

def split_by_domain(where, inside: Check, outside: Check, here: str, there: str) -> tuple[Check, Check]:
    """Two checks of one prediction on complementary domains: ``inside`` judged where
    ``where(params)`` holds (described as ``here``), ``outside`` everywhere else
    (``there``); each says which check judges the other cases."""
    return (dataclasses.replace(inside, domain=where,
                                domain_note=f"judged at {here} only: at {there} the other check judges it"),
            dataclasses.replace(outside, domain=lambda p: not where(p),
                                domain_note=f"judged at {there} only: at {here} the other check judges it"))


#: A stable rank of the fix read through the edge of its top singular values (numerics.edge)
_EDGE_READ_NOTE = (
    "read through the edge x* = sum_j w_j s_j^2 of the top 4 singular values instead of s_1^2 "
    "(w: the intercept of s_j^2 regressed on the Airy-1 means zeta_j, numerics.edge), which "
    "removes the Tracy-Widom offset tau_T zeta_1 = O(T^-2/3) of s_1^2 whatever its scale "
    "tau_T; left: the O(1/T) corrections (Frobenius mass, the fourth-cumulant shift of the "
    "edge), and near s2 = 1/2 the log-normal tails' slower approach from below, modelled by "
    "x_T = L + c T^-r with r estimated in {range} (profile likelihood)")


#: sr(X_1) of the standard network at one layer (width sr_X1, depth sr_X at l = 1)
ROW_AVERAGE_NOTE = (
    "sr(X_1) = ||A Y||_F^2 / s_1(A Y)^2 with s_1 the separated rank-one part ||1^T Y||^2/T: "
    "a smooth function of row and column averages, whose chi-square (d dof) fluctuation is "
    "d^(-1/2) but whose mean expands in integer powers of 1/T (delta method; "
    "E[1/chi2_d] = 1/(d - 2)); the truncations after 1/T and after 1/T^2 are both fitted. ")


_RAW_EDGE_NOTE = (
    "read through s_1^2, recorded: s_1^2 sits a Tracy-Widom distance O(T^-2/3) below the "
    "edge and the O(1/T) corrections (the fourth-cumulant shift of the edge) push the other "
    "way, so L + c T^-r is a poor model of its mean; the same prediction is judged through "
    "the edge above. Judged this way before: ")


def read_through_edge(prediction: str, rate_status: str, recorded_why: str,
                      rate_range: tuple[float, float] = EDGE_RATES, range_why: str = "",
                      **where: object) -> tuple[Check, Check]:
    """A fixed stable rank ``prediction`` (its statistic of the same name, read through
    :math:`s_1^2`) judged through the edge of its top singular values instead (the
    statistic with ``_over_T`` read ``_edge_over_T``: the same limit, the ``T^{-2/3}``
    offset removed); the :math:`s_1^2` read is recorded, saying why. ``rate_range``: the
    rates of what the edge read leaves (``[2/3, 1]`` unless ``range_why`` says why
    another). ``where``: the ``domain``, ``min_size`` and their notes, of both."""
    edge_statistic = prediction.replace("_over_T", "_edge_over_T")
    lo, hi = (sp.nsimplify(r, tolerance=1e-9) for r in rate_range)  # 0.666.. -> 2/3
    note = _EDGE_READ_NOTE.format(range=f"[{lo}, {hi}]") + (f". {range_why}" if range_why else "")
    return (Check(prediction, edge_statistic, "limit", rate_range=rate_range,
                  rate_status=rate_status, rate_note=note, **where),
            Check(prediction, prediction, "limit", asserted=False,
                  record_note=_RAW_EDGE_NOTE + recorded_why, **where))


#: sr(Sigma)/T judged without its edge (the moment ratio), the edge judged through sr(X)/T
_MOMENT_NOTE = (
    "sr(Sigma)/T = m_2/x*^2 carries the edge squared, twice sr(X)/T's relative error; it is "
    "judged as the moment ratio T sum s^4/(sum s^2)^2 = (sr(Sigma)/T)/(sr(X)/T)^2 -> m_2/m_1^2 "
    "against this prediction over the square of sr(X)/T's, whose own check judges the edge x*: "
    "the two predictions hold exactly when both checks do, and this one made wrong alone moves "
    "the ratio by as much. A ratio of traces, no edge in it: its mean expands in integer powers "
    "of 1/T (delta method), the truncations after 1/T and after 1/T^2 both fitted. Judged "
    "where the check of sr(X)/T is")
_EDGE_RECORDED_NOTE = (
    "read through the edge x* of the top 4 singular values (numerics.edge), recorded: x*^2 "
    "doubles the relative error of the edge, which the check of sr(X)/T judges, and the moment "
    "ratio judges the rest. Judged this way before: ")


def read_through_moments(prediction: str, over: str, rate_status: str, recorded_why: str,
                         **where: object) -> tuple[Check, Check]:
    """A fixed Gram stable rank ``prediction`` (``sr(Sigma)/T``) judged through the moment
    ratio ``m2_ratio_<X>`` (its statistic named after ``over``, the matching ``sr(X)/T``
    prediction: ``sr_X1perp_over_T`` -> ``m2_ratio_X1perp``) against
    ``prediction / over^2``; its read through the edge is recorded, saying why
    (``recorded_why``: the powers it and the :math:`s_1^2` read had). ``where``: the
    ``domain`` and ``domain_note`` of both."""
    statistic = "m2_ratio_" + over.removeprefix("sr_").removesuffix("_over_T")
    return (Check(prediction, statistic, "limit", models=ONE_OVER_T_SERIES, relative_to=(over, 2),
                  rate_status=rate_status, rate_note=_MOMENT_NOTE, **where),
            Check(prediction, prediction.replace("_over_T", "_edge_over_T"), "limit",
                  asserted=False, record_note=_EDGE_RECORDED_NOTE + recorded_why, **where))


def _k2(p: Mapping[str, sp.Expr]) -> sp.Expr:
    return kappa_of(p["s2"]) ** 2


def _layers():
    from gapverify.theory import layers

    return layers

