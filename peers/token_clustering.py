r"""Tokens cluster along an ODE in high dimension (Geshkovski, Letrouit, Polyanskiy, Rigollet).

"A mathematical perspective on Transformers", arXiv:2312.10794, Section 6.2. ``n`` tokens
on the sphere :math:`S^{d-1}`, :math:`Q = K = V = I_d`, the self-attention dynamics (SA)

.. math:: \dot x_i = P_{x_i}\Big(\frac{1}{Z_i}\sum_j e^{\beta\langle x_i, x_j\rangle} x_j\Big),
   \quad Z_i = \sum_k e^{\beta\langle x_i, x_k\rangle},\quad P_x y = y - \langle x, y\rangle x,

and its unnormalised variant (USA), :math:`1/Z_i` replaced by :math:`1/n`.

**The ODE (re-derived here).** The Gram matrix :math:`G_{ij} = \langle x_i, x_j\rangle` obeys
a closed equation: :math:`\dot G_{ij} = \sum_k a_{ik}(G_{kj} - G_{ik}G_{ij}) + (i
\leftrightarrow j)`, :math:`a_{ik} = e^{\beta G_{ik}}/Z_i`. At an equiangular configuration
(:math:`G_{ij} = \rho`, :math:`i \ne j`) the term ``k = i`` vanishes, ``k = j`` gives
:math:`a(1 - \rho^2)` and each of the ``n - 2`` others :math:`a(\rho - \rho^2)`, with
:math:`a = e^{\beta\rho}/(e^\beta + (n-1)e^{\beta\rho})`; the two symmetric halves give

.. math:: \dot\rho = \frac{2 e^{\beta\rho}(1-\rho)(1 + (n-1)\rho)}{e^\beta + (n-1)e^{\beta\rho}},
   \quad \rho(0) = 0,

the paper's equation ``(eq: ybeta)``, and for USA
:math:`\dot\rho = \tfrac{2}{n} e^{\beta\rho}(1-\rho)(1+(n-1)\rho)` (``eq: ybetaUSA``). The
equiangular set is invariant, so pairwise orthogonal tokens follow it exactly; uniform tokens
have :math:`G_{ij}(0) = O(d^{-1/2})` and follow it as :math:`d \to \infty` (the paper's
theorem ``thm: phase.transition.curve``, Theorem 6.9 of v4: with probability
:math:`\ge 1 - 2n^2 d^{-1/64}`, :math:`|\langle x_i(t), x_j(t)\rangle - \rho(t)| \le
\min(2 c(\beta)^{nt}\sqrt{\log d/d}, C e^{-\lambda t})`).

**Closed form of the time (derived here, checked by sympy).** Partial fractions,
:math:`1/((1-r)(1+(n-1)r)) = (1/(1-r) + (n-1)/(1+(n-1)r))/n`, and
:math:`\int e^{a u}/u\,du = \mathrm{Ei}(a u)` give

.. math:: t_{SA}(\rho) = \frac{n-1}{2n}\log\frac{1+(n-1)\rho}{1-\rho}
   + \frac{\mathrm{Ei}(\beta) - \mathrm{Ei}(\beta(1-\rho))}{2n}
   + \frac{e^{\beta n/(n-1)}}{2n}\Big(\mathrm{Ei}\big(-\tfrac{\beta(1+(n-1)\rho)}{n-1}\big)
   - \mathrm{Ei}\big(-\tfrac{\beta}{n-1}\big)\Big),

and :math:`t_{USA}(\rho) = \tfrac12[e^{-\beta}(\mathrm{Ei}(\beta) - \mathrm{Ei}(\beta(1-\rho)))
+ e^{\beta/(n-1)}(\mathrm{Ei}(-\tfrac{\beta(1+(n-1)\rho)}{n-1}) - \mathrm{Ei}(-\tfrac{\beta}{n-1}))]`
(``beta > 0``, ``n >= 2``). The time to :math:`\rho = 1/2` is :math:`t_{SA}(1/2)` in closed
form; :math:`\rho(t)` is its inverse, solved in mpmath to 30 digits.

**The measurement and its rate (derived here).** ``T = d``. Each draw integrates the particles
in :math:`\mathbb R^d` (RK4, step ``h = 1/32``, and ``2h`` beside it) from ``n`` i.i.d.
uniform points and reads the mean pairwise inner product :math:`\bar\rho(t)` at
``t = 1, 2`` (SA) and ``t = 1/2`` (USA), and the time it crosses 1/2. The Gram flow is
closed, so :math:`\bar\rho(t) = f_t(G(0))` with :math:`G(0) - I = O(d^{-1/2})`,
:math:`E\,G_{kl} = 0`, :math:`E\,G_{kl}^2 = 1/d`, third and fourth moments
:math:`O(d^{-2})`: the linear term of :math:`f_t` has mean zero and fluctuates like
:math:`d^{-1/2}`, the quadratic term gives a bias :math:`b(t)/d`, and the moments of a
uniform Gram matrix are rational in ``d``: :math:`E\bar\rho_d(t) = \rho(t) + b/d + O(d^{-2})`,
judged by the ``1/T`` series (``L + c/T`` and ``L + c/T + e/T^2``). The step error:
RK4's global error is :math:`O(h^4)`; :math:`|q_h - q_{2h}|/15` estimates it (Richardson),
and ``d`` times it must stay below 1% of a unit ``1/d`` effect.
"""
import functools
import math

import mpmath as mp
import numpy as np
import sympy as sp
from scipy.optimize import brentq
from scipy.special import expi

from gapverify import Check, Claim, ONE_OVER_T_SERIES, Parameter, Prediction, profiles

#: RK4 step (a power of 2, so every observation time is on the grids of ``H`` and ``2H``)
H = 1.0 / 32
#: observation times of the SA dynamics, and of the USA dynamics
TIMES = (1.0, 2.0)
USA_TIME = 0.5
#: the level whose crossing time is measured
HALF = 0.5
#: ``d`` times the Richardson estimate of the step error may not exceed this (1% of a unit
#: ``1/d`` effect)
STEP_TOLERANCE = 0.01
#: digits of the mpmath solution
DIGITS = 30

PARAMETERS = [
    Parameter("cluster_n", r"n", "number of tokens of the self-attention dynamics on the sphere",
              8, 2, 4096, integer=True, typical=(2, 32)),
    Parameter("cluster_beta", r"\beta", "inverse temperature beta of the self-attention dynamics",
              1.0, 0.0, 20.0, low_open=True, typical=(0.25, 4.0)),
]


# ------------------------------------------------------------------- the theory (sympy, mpmath)
def rho_rate(rho, n, beta, usa=False):
    """The right-hand side of ``eq: ybeta`` (SA) or ``eq: ybetaUSA`` (USA), any number type."""
    exp = sp.exp if isinstance(rho, sp.Basic) else (mp.exp if isinstance(rho, mp.mpf) else math.exp)
    core = exp(beta * rho) * (1 - rho) * (1 + (n - 1) * rho)
    return 2 * core / n if usa else 2 * core / (exp(beta) + (n - 1) * exp(beta * rho))


def time_expr(rho, n, beta, usa=False):
    """``t(rho) = int_0^rho dr / rho_rate(r)`` in closed form (sympy; ``beta > 0``, ``n >= 2``)."""
    a = beta / (n - 1)
    tail = sp.Ei(-a * (1 + (n - 1) * rho)) - sp.Ei(-a)  # the 1/(1 + (n-1) r) part
    head = sp.Ei(beta) - sp.Ei(beta * (1 - rho))  # the 1/(1 - r) part
    if usa:
        return (sp.exp(-beta) * head + sp.exp(a) * tail) / 2
    return ((n - 1) / (2 * n) * sp.log((1 + (n - 1) * rho) / (1 - rho))
            + head / (2 * n) + sp.exp(beta * n / (n - 1)) * tail / (2 * n))


def _time_mp(rho, n, beta, usa):
    """``time_expr`` in mpmath."""
    a = beta / (n - 1)
    tail = mp.ei(-a * (1 + (n - 1) * rho)) - mp.ei(-a)
    head = mp.ei(beta) - mp.ei(beta * (1 - rho))
    if usa:
        return (mp.exp(-beta) * head + mp.exp(a) * tail) / 2
    return ((n - 1) / (2 * n) * mp.log((1 + (n - 1) * rho) / (1 - rho))
            + head / (2 * n) + mp.exp(beta * n / (n - 1)) * tail / (2 * n))


@functools.lru_cache(maxsize=None)
def rho_at(t, n, beta, usa=False):
    """``rho(t)``, the solution of the ODE at time ``t``: the root of ``t(rho) = t`` in
    ``(0, 1)`` (``t(rho)`` increases from 0 to infinity), to :data:`DIGITS` digits, as a string."""
    with mp.workdps(DIGITS + 10):
        n_, b_, t_ = mp.mpf(n), mp.mpf(beta), mp.mpf(t)
        lo, hi = mp.mpf(0), 1 - mp.mpf(10) ** (-DIGITS)
        root = mp.findroot(lambda r: _time_mp(r, n_, b_, usa) - t_, (lo, hi), solver="anderson")
        return mp.nstr(root, DIGITS)


def _numbers(p):
    """``(n, beta)`` of exact parameters, as an int and a decimal string (cache keys)."""
    return int(p["cluster_n"]), str(sp.N(p["cluster_beta"], DIGITS + 5))


def _rho_prediction(t, usa=False):
    def formula(p):
        n, beta = _numbers(p)
        return sp.Float(rho_at(float(t), n, beta, usa), DIGITS)
    return formula


def _half_time(p):
    """``t_SA(1/2)`` in closed form."""
    return time_expr(sp.Rational(1, 2), p["cluster_n"], p["cluster_beta"])


def time_float(rho, n, beta, usa=False):
    """``time_expr`` in double precision (``scipy.special.expi``), for the control variate."""
    a = beta / (n - 1)
    tail = expi(-a * (1 + (n - 1) * rho)) - expi(-a)
    head = expi(beta) - expi(beta * (1 - rho))
    if usa:
        return (math.exp(-beta) * head + math.exp(a) * tail) / 2
    return ((n - 1) / (2 * n) * math.log((1 + (n - 1) * rho) / (1 - rho))
            + head / (2 * n) + math.exp(beta * n / (n - 1)) * tail / (2 * n))


def rho_float(t, n, beta, usa=False):
    """The ODE's solution at time ``t`` (``t(rho) = t`` solved by ``brentq``) in double
    precision; ``t`` may be slightly negative (the solution continued backwards)."""
    lo, hi = -0.5 / (n - 1), 1.0 - 1e-14
    return brentq(lambda r: time_float(r, n, beta, usa) - t, lo, hi, xtol=1e-16, rtol=1e-15)


# ------------------------------------------------------------------------- the particles (numpy)
def attention_field(X, beta, usa=False):
    """``x_i' = P_{x_i}(sum_j w_ij x_j)``, ``w_ij = e^{beta <x_i, x_j>}/Z_i`` (SA) or ``/n``
    (USA)."""
    G = X @ X.T
    if usa:
        W = np.exp(beta * G) / X.shape[0]
    else:
        W = np.exp(beta * (G - G.max(axis=1, keepdims=True)))
        W /= W.sum(axis=1, keepdims=True)
    V = W @ X
    return V - np.sum(V * X, axis=1, keepdims=True) * X  # the projection on the tangent space


def rk4_step(X, beta, h, usa=False):
    k1 = attention_field(X, beta, usa)
    k2 = attention_field(X + h / 2 * k1, beta, usa)
    k3 = attention_field(X + h / 2 * k2, beta, usa)
    k4 = attention_field(X + h * k3, beta, usa)
    return X + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def mean_inner_product(X):
    """The mean of ``<x_i, x_j>`` over the pairs ``i != j``."""
    n = X.shape[0]
    s = X.sum(axis=0)
    return float((s @ s - np.sum(X * X)) / (n * (n - 1)))


def trajectory(X, beta, h, times, usa=False, level=None, t_cap=64.0):
    """Integrate from ``X`` with RK4 at step ``h``: the mean inner product at each of ``times``
    (on the grid of ``h``) and, when ``level`` is given, the time it first reaches it (found
    inside the step that crosses it by solving ``mean(RK4 step of size s) = level``, so the
    crossing time carries the RK4 order too)."""
    marks = {int(round(t / h)): t for t in times}
    out, crossing, k, t = {}, None, 0, 0.0
    last = max(marks)
    while k < last or (level is not None and crossing is None):
        if t > t_cap:
            raise RuntimeError(f"the mean inner product did not reach {level} by t = {t_cap}")
        Y = rk4_step(X, beta, h, usa)
        if level is not None and crossing is None and mean_inner_product(Y) >= level:
            s = brentq(lambda s: mean_inner_product(rk4_step(X, beta, s, usa)) - level, 0.0, h,
                       xtol=1e-15, rtol=1e-14)
            crossing = t + s
        X, k = Y, k + 1
        t = k * h
        if k in marks:
            out[marks[k]] = mean_inner_product(X)
    return out, crossing


def uniform_sphere(rng, n, d):
    X = rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def clustering_experiment(rng, T, params):
    """One draw at dimension ``d = T``: ``n`` uniform tokens on ``S^{d-1}`` integrated by RK4
    at steps ``H`` and ``2H``: the mean pairwise inner product at ``t = 1, 2`` (SA) and
    ``t = 1/2`` (USA), the time it reaches 1/2 (SA), and ``d`` times the step error.

    Each is read with the control variate of its initial mean ``rho0`` (the mean pairwise
    inner product at ``t = 0``): the ODE started at ``rho0`` instead of 0 is the ODE shifted
    in time by ``s = t(rho0)``, so ``rho(t; rho0) - rho(t) = rho(t + s) - rho(t)`` and the
    crossing time moves by ``-s``. By the permutation symmetry of the Gram flow at ``G = I``
    its linear response to ``G(0) - I`` is a multiple of ``rho0``, and this is it: the
    corrected statistics keep the limit (the shift vanishes with ``rho0 = O(d^-1/2)`` whatever
    the flow) and lose the ``d^-1/2`` fluctuation, leaving ``O(1/d)``. The raw ones are kept."""
    n, beta, d = int(params["cluster_n"]), float(params["cluster_beta"]), int(T)
    X0 = uniform_sphere(rng, n, d)
    values = {}
    for h in (H, 2 * H):
        sa, half = trajectory(X0, beta, h, TIMES, level=HALF)
        usa, _ = trajectory(X0, beta, h, (USA_TIME,), usa=True)
        values[h] = [sa[t] for t in TIMES] + [half, usa[USA_TIME]]
    fine, coarse = np.array(values[H]), np.array(values[2 * H])
    rho0 = mean_inner_product(X0)
    s_sa, s_usa = time_float(rho0, n, beta), time_float(rho0, n, beta, usa=True)
    out = {}
    for t, v in zip(TIMES, values[H][:len(TIMES)]):
        out[f"rho_t{t:g}_raw"] = v
        out[f"rho_t{t:g}"] = v - (rho_float(t + s_sa, n, beta) - rho_float(t, n, beta))
    out["t_half_raw"] = values[H][len(TIMES)]
    out["t_half"] = values[H][len(TIMES)] + s_sa
    out["rho_usa_half_raw"] = values[H][-1]
    out["rho_usa_half"] = values[H][-1] - (rho_float(USA_TIME + s_usa, n, beta, usa=True)
                                           - rho_float(USA_TIME, n, beta, usa=True))
    # Richardson: the h-solution's error is (q_h - q_2h)/(2^4 - 1) + O(h^5)
    out["d_step_error"] = float(d * np.max(np.abs(fine - coarse)) / 15.0)
    return out


_FAMILY_NOTE = ("E rho_d(t) = rho(t) + b(t)/d + O(d^-2): the Gram flow is closed, G(0) - I has "
                "mean 0, variance 1/d and higher moments O(d^-2), rational in d; each draw "
                "fluctuates like d^-1/2 (the linear term), the mean is biased by the quadratic "
                "term, b/d")

CLAIMS = [Claim(
    id="peers.token_clustering",
    title=r"Tokens cluster along an ODE as $d \to \infty$: "
          r"$\dot\rho = 2e^{\beta\rho}(1-\rho)(1+(n-1)\rho)/(e^\beta + (n-1)e^{\beta\rho})$",
    predictions=(
        Prediction("rho_t1", "theorem", _rho_prediction(1.0), r"\bar\rho(1)",
                   note="Geshkovski et al., arXiv:2312.10794, Section 6.2, eq (ybeta) and Theorem "
                        "6.9 (v4); the ODE re-derived from the equiangular Gram flow"),
        Prediction("rho_t2", "theorem", _rho_prediction(2.0), r"\bar\rho(2)",
                   note="as rho_t1, at t = 2"),
        Prediction("t_half", "derived", _half_time, r"\inf\{t: \bar\rho(t) \ge 1/2\}",
                   note="t_SA(1/2) in closed form (partial fractions and Ei), the inverse of the "
                        "ODE's solution"),
        Prediction("rho_usa_half", "theorem", _rho_prediction(USA_TIME, usa=True),
                   r"\bar\rho_{USA}(1/2)",
                   note="the USA dynamics (1/Z_i replaced by 1/n): eq (ybetaUSA), "
                        "rho' = (2/n) e^{beta rho}(1 - rho)(1 + (n-1) rho)"),
        Prediction("rk4_step_error", "derived", lambda p: sp.Integer(0),
                   r"d\,\max|q_h - q_{2h}|/15", kind="exact",
                   note="RK4's global error is O(h^4): the Richardson estimate of the step error "
                        "of every statistic, times d, against the unit 1/d effect"),
    ),
    checks=(
        Check("rho_t1", "rho_t1", "limit", models=ONE_OVER_T_SERIES, rate_note=_FAMILY_NOTE),
        Check("rho_t2", "rho_t2", "limit", models=ONE_OVER_T_SERIES, rate_note=_FAMILY_NOTE),
        Check("t_half", "t_half", "limit", models=ONE_OVER_T_SERIES,
              rate_note="the crossing time is a smooth function of the Gram flow near t_half "
                        "(the slope rho'(t_half) > 0): the same 1/d series"),
        Check("rho_usa_half", "rho_usa_half", "limit", models=ONE_OVER_T_SERIES,
              rate_note=_FAMILY_NOTE),
        Check("rho_t1", "rho_t1_raw", "limit", asserted=False,
              record_note="the mean pairwise inner product without the control variate: the "
                          "same limit, fluctuations d^-1/2"),
        Check("rho_t2", "rho_t2_raw", "limit", asserted=False,
              record_note="rho(2) without the control variate"),
        Check("t_half", "t_half_raw", "limit", asserted=False,
              record_note="the crossing time without the control variate"),
        Check("rho_usa_half", "rho_usa_half_raw", "limit", asserted=False,
              record_note="USA rho(1/2) without the control variate"),
        Check("rk4_step_error", "d_step_error", "exact", tolerance=STEP_TOLERANCE,
              zero_scale=lambda p: 1.0,
              tolerance_note="d times the step error at most 1% of a unit 1/d effect (h = 1/32)"),
    ),
    parameters=("cluster_n", "cluster_beta"),
    experiment=clustering_experiment,
    paper_result="beyond the paper: Geshkovski, Letrouit, Polyanskiy, Rigollet, arXiv:2312.10794, "
                 "Section 6.2, eq (ybeta) and Theorem 6.9 of v4 (the number inferred from its "
                 "table of contents, not read in the text)",
    derived_in="docs/peers.md, peers.token_clustering",
    references=("B. Geshkovski, C. Letrouit, Y. Polyanskiy, P. Rigollet, A mathematical "
                "perspective on Transformers, arXiv:2312.10794 (Bull. AMS 62(3), 2025), Section 6.2",
                "docs/peers.md"),
    profiles=profiles(quick=(64, 1024), standard=(64, 2048)),
    cases={"quick": ({}, {"cluster_n": 4, "cluster_beta": 2.0}),
           "standard": ({}, {"cluster_n": 4, "cluster_beta": 2.0},
                        {"cluster_n": 16, "cluster_beta": 0.5})},
)]
