r"""Pure attention collapses cubically (Dong, Cordonnier, Loukas, ICML 2021).

One single-head layer :math:`\mathrm{SA}(X) = \mathrm{softmax}(X W_{QK} X^\top/\sqrt d)\,X W_V`
(rows by softmax, :math:`W_{QK} = W_Q W_K^\top`, no bias, no skip, no MLP) on tokens near
collapse, :math:`X = \mathbf 1 x^\top + R`, with ``n`` tokens of width ``d = d_qk``.

**The residual used here.** :math:`\mathrm{res}(X) = X - \mathbf 1 \bar x^\top`,
:math:`\bar x` the mean of the rows: the Frobenius projection off the identical-rows
matrices (Dong et al.'s own plotting code, ``walking_casual_transformers.ipynb``, measures
``hidden_states - hidden_states.mean(dim=-2)``). The paper's ``res`` takes the ``x`` that
minimises the composite norm :math:`\|\cdot\|_{1,\infty} = \sqrt{\|\cdot\|_1\|\cdot\|_\infty}`;
for the exponent and the leading map the choice does not matter (both are homogeneous),
and for the bound it is handled conservatively (below).

**The leading map (derived here).** In the logits :math:`(x + R_i) W_{QK} (x + R_j)^\top`
the terms constant along a row drop out of the softmax, leaving
:math:`r_j + E_{ij}`, :math:`r_j = x W_{QK} R_j^\top/\sqrt d`,
:math:`E_{ij} = R_i W_{QK} R_j^\top/\sqrt d`. With :math:`q = \mathrm{softmax}(r)` and
:math:`A = \mathrm{softmax}(\mathbf 1 r^\top + E)`,
:math:`A_{ij} - q_j = q_j(E_{ij} - \sum_k q_k E_{ik}) + O(E^2)`, and since the rows of
``A`` sum to 1, :math:`A X W_V = \mathbf 1(x^\top W_V + q^\top R W_V) + (A - \mathbf 1 q^\top) R W_V`:

.. math::
    \mathrm{res}(\mathrm{SA}(X)) = \mathrm{res}\big(R W_{QK}\,\mathrm{Cov}_q(R)\,W_V\big)/\sqrt d
    + O(|R|\,|E|^2),\qquad
    \mathrm{Cov}_q(R) = \textstyle\sum_j q_j R_j^\top R_j - (\sum_j q_j R_j)^\top(\sum_j q_j R_j).

As :math:`R \to 0`, :math:`q \to \mathbf 1/n` and, for centred ``R``,
:math:`\mathrm{Cov}_q \to C = R^\top R/n`: the leading map is the cubic
:math:`\mathcal L(R) = R W_{QK} C W_V/\sqrt d` (already centred), a local exponent of
exactly 3, and after ``L`` layers :math:`3^L`, the origin of the :math:`3^L` in their bound.
The remainder: at :math:`x = 0` the map :math:`R \mapsto \mathrm{SA}(R)` is odd (the logits
are even in ``R``), so :math:`\mathrm{res}(\mathrm{SA}) = \mathcal L(R)(1 + O(|R|^2))`,
the :math:`O(|R|^5)` of the issue. At :math:`x \ne 0` the weights ``q`` differ from uniform
by :math:`O(|x||R|)` and the remainder is :math:`O(|x|\,|R|^4)`: relative error
:math:`O(|R|)`, not :math:`O(|R|^2)`. Both are judged (cases ``collapse_x = 0`` and ``1``).

**The size.** ``R = eps Z``, ``Z`` i.i.d. :math:`N(0,1)`, centred over the tokens,
:math:`\epsilon = 8/T`; ``n = 32`` tokens at every ``T`` (``T`` is the inverse residual
scale, not a token count), so every statistic's error is :math:`c\,\epsilon^{k}` with a
per-draw constant ``c``: rate 2 at ``x = 0``, rate 1 at ``x != 0``.

**Theorem 2.2 of Dong et al. (simplified form).** For a single-head SAN of ``L`` layers with
:math:`\|W_{QK}^l\|_1\|W_V^l\|_{1,\infty} \le \beta`,
:math:`\|\mathrm{res}(\mathrm{SAN}(X))\|_{1,\infty} \le (4\gamma\beta/\sqrt{d_{qk}})^{(3^L-1)/2}
\|\mathrm{res}(X)\|_{1,\infty}^{3^L}`, ``gamma`` "a term that depends on the attention
entries" (not defined in the statement we could read). Checked with ``gamma = 1`` and on the
safe side of both residuals: the left side with the mean-centred residual (at least the
minimum), the right side with a lower bound of the minimum,
:math:`\min_x\|Y - \mathbf 1x^\top\|_{1,\infty} \ge (\max_j S_j \cdot \tfrac1n\sum_j S_j)^{1/2}`,
:math:`S_j = \sum_i |Y_{ij} - \mathrm{median}_i Y_{ij}|` (the column sums decouple for
:math:`\|\cdot\|_1`, and a maximum over rows is at least their mean for
:math:`\|\cdot\|_\infty`). Its tightness is recorded.
"""
import math

import numpy as np
import sympy as sp

from gapverify import Check, Claim, Parameter, Prediction, RateRule, profiles

#: tokens per draw (fixed: ``T`` maps to the residual scale only)
TOKENS = 32
#: the residual scale is ``eps = EPS_SCALE / T``
EPS_SCALE = 8.0
#: depths of the single-head SAN whose Theorem 2.2 bound is checked
DEPTHS = (1, 2, 3)

PARAMETERS = [
    Parameter("collapse_x", r"|x|", "scale of the common token x of X = 1 x^T + R "
              "(x = collapse_x g, g ~ N(0, I_d))", 0.0, 0.0, 16.0, typical=(0.0, 2.0)),
]


def attention_layer(x, R, WQK, WV):
    """One layer ``SA(1 x^T + R) = softmax((1x^T + R) WQK (1x^T + R)^T / sqrt d)(1x^T + R) WV``
    split into its common row and its centred residual, ``(x', R')``, without cancellation:
    the row-constant logits are dropped (softmax is invariant to them), ``q = softmax(r)`` is
    factored out with ``expm1``, and the identical-rows part ``1 q^T R WV`` goes to ``x'``.
    Exact algebra; the residual keeps full relative precision however small ``R`` is."""
    d = WQK.shape[0]
    r = (R @ (WQK.T @ x)) / math.sqrt(d)  # r_j = x WQK R_j^T / sqrt d (the same in every row)
    q = np.exp(r - r.max())
    q /= q.sum()  # q = softmax(r)
    M = np.expm1((R @ WQK @ R.T) / math.sqrt(d))  # e^{E_ij} - 1
    s = M @ q  # s_i = sum_k q_k (e^{E_ik} - 1)
    delta = q[None, :] * (M - s[:, None]) / (1.0 + s[:, None])  # A - 1 q^T, exactly
    D = delta @ R @ WV
    mean = D.mean(axis=0)
    return x @ WV + q @ R @ WV + mean, D - mean


def attention_direct(X, WQK, WV):
    """``softmax(X WQK X^T / sqrt d) X WV`` computed as written (for the tests)."""
    d = WQK.shape[0]
    S = X @ WQK @ X.T / math.sqrt(d)
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    return A @ X @ WV


def leading_map(R, WQK, WV):
    """``L(R) = R WQK C WV / sqrt d``, ``C = R^T R / n`` (``R`` centred over the tokens)."""
    n, d = R.shape
    return R @ WQK @ (R.T @ R / n) @ WV / math.sqrt(d)


def l1_norm(M):
    """``||M||_1``: the largest column sum of ``|M|``."""
    return float(np.abs(M).sum(axis=0).max())


def linf_norm(M):
    """``||M||_inf``: the largest row sum of ``|M|``."""
    return float(np.abs(M).sum(axis=1).max())


def composite_norm(M):
    """Dong et al.'s ``||M||_{1,inf} = sqrt(||M||_1 ||M||_inf)``."""
    return math.sqrt(l1_norm(M) * linf_norm(M))


def min_residual_lower(Y):
    """A lower bound of ``min_x ||Y - 1 x^T||_{1,inf}``. With ``S_j = sum_i |Y_ij - median_i
    Y_ij|``: ``min_x ||Y - 1x^T||_1 = max_j S_j`` exactly (the columns decouple, each is
    minimised at its median), and ``min_x ||Y - 1x^T||_inf >= min_x (1/n) sum_i sum_j |Y_ij -
    x_j| = (1/n) sum_j S_j`` (a largest row sum is at least the mean row sum). The minimum of
    the geometric mean is at least the geometric mean of the two minima."""
    S = np.abs(Y - np.median(Y, axis=0, keepdims=True)).sum(axis=0)
    return math.sqrt(float(S.max()) * float(S.sum()) / Y.shape[0])


def dong_log_bound(log_res0, betas, d, L):
    """``log`` of ``(4 beta / sqrt d)^((3^L - 1)/2) res0^(3^L)`` at ``gamma = 1``, ``beta`` the
    largest ``||W_QK^l||_1 ||W_V^l||_{1,inf}`` over the ``L`` layers."""
    beta = max(betas[:L])
    return (3**L - 1) / 2 * math.log(4 * beta / math.sqrt(d)) + 3**L * log_res0


def collapse_experiment(rng, T, params):
    """One draw at size ``T`` (residual scale ``eps = 8/T``): the local exponents of one and
    two layers, the ratio and alignment of one layer's residual with the leading map, and
    Theorem 2.2's bound at depths 1 to 3."""
    d, n = int(params["d_qk"]), TOKENS
    layers = []
    for _ in range(max(DEPTHS)):
        WQ, WK, WV = rng.standard_normal((3, d, d)) / math.sqrt(d)  # the standard init N(0, 1/d)
        layers.append((WQ @ WK.T, WV))
    Z = rng.standard_normal((n, d))
    Z -= Z.mean(axis=0)  # centred: res(R) = R
    x0 = float(params["collapse_x"]) * rng.standard_normal(d)
    betas = [l1_norm(WQK) * composite_norm(WV) for WQK, WV in layers]
    eps = EPS_SCALE / T
    out, norms = {}, {}
    holds, tight = [], {L: [] for L in DEPTHS}
    for e in (eps, eps / 2):
        R0 = e * Z
        x, R, res = x0, R0, []
        for WQK, WV in layers:
            x, R = attention_layer(x, R, WQK, WV)
            res.append(R)
        norms[e] = [np.linalg.norm(Rl) for Rl in res]
        log_res0 = math.log(min_residual_lower(R0))
        for L in DEPTHS:
            log_lhs = math.log(composite_norm(res[L - 1]))  # the centred residual: >= the minimum
            log_rhs = dong_log_bound(log_res0, betas, d, L)
            holds.append(log_lhs <= log_rhs)
            tight[L].append((log_lhs - log_rhs) / math.log(10))
        if e == eps:
            lead = leading_map(R0, *layers[0])
            out["leading_ratio"] = float(np.linalg.norm(res[0]) / np.linalg.norm(lead))
            out["leading_alignment"] = float(np.sum(res[0] * lead)
                                             / (np.linalg.norm(res[0]) * np.linalg.norm(lead)))
    out["exponent_1"] = float(math.log2(norms[eps][0] / norms[eps / 2][0]))
    out["exponent_2"] = float(math.log2(norms[eps][1] / norms[eps / 2][1]))
    out["dong_bound_holds"] = float(all(holds))
    for L in DEPTHS:
        # log10 (lhs / bound), the larger of eps and eps/2
        out[f"dong_log10_tightness_{L}"] = float(max(tight[L]))
    return out


_RATE = RateRule("2 at collapse_x = 0 (odd map), 1 otherwise",
                 lambda p: 2.0 if float(p["collapse_x"]) == 0.0 else 1.0)
_RATE_SQUARED = RateRule("4 at collapse_x = 0, 2 otherwise (the square of the leading map's rate)",
                         lambda p: 4.0 if float(p["collapse_x"]) == 0.0 else 2.0)
_RATE_NOTE = ("eps = 8/T with n = 32 tokens fixed: each draw's error is c eps^2 + O(eps^4) at "
              "x = 0 (SA(-R) = -SA(R): only odd powers of R) and c eps + O(eps^2) at x != 0 "
              "(q = softmax(r) differs from uniform by O(|x| eps)); c varies over the draws, "
              "so the mean absolute error decays like T^-2, resp. T^-1")

CLAIMS = [Claim(
    id="peers.cubic_collapse",
    title=r"Pure attention collapses cubically: $\mathrm{res}(\mathrm{SA}(\mathbf 1x^\top + R)) "
          r"= R W_{QK} C W_V/\sqrt d\,(1 + O(|R|^{2}))$; Dong et al.'s Theorem 2.2",
    predictions=(
        Prediction("exponent_1", "derived", lambda p: sp.Integer(3),
                   r"\log_2 \frac{\|\mathrm{res}\,\mathrm{SA}(\epsilon)\|}{\|\mathrm{res}\,\mathrm{SA}(\epsilon/2)\|}",
                   note="the leading map R WQK (R^T R/n) WV / sqrt d is homogeneous of degree 3"),
        Prediction("exponent_2", "derived", lambda p: sp.Integer(9),
                   r"\log_2 \frac{\|\mathrm{res}\,\mathrm{SA}^2(\epsilon)\|}{\|\mathrm{res}\,\mathrm{SA}^2(\epsilon/2)\|}",
                   note="two layers compose two cubic maps: 3^2, the 3^L of Theorem 2.2"),
        Prediction("leading_map", "derived", lambda p: sp.Integer(1),
                   r"\|\mathrm{res}\,\mathrm{SA}(X)\| / \|R W_{QK} C W_V\|/\sqrt d",
                   note="A - 1q^T = q_j (E_ij - sum_k q_k E_ik) + O(E^2), q -> 1/n, "
                        "C = R^T R / n"),
        Prediction("dong_bound", "theorem", lambda p: sp.Integer(1),
                   r"\mathbb 1[\|\mathrm{res}\,\mathrm{SAN}_L\|_{1,\infty} \le (4\beta/\sqrt d)^{(3^L-1)/2}"
                   r"\|\mathrm{res}\,X\|_{1,\infty}^{3^L}],\ L \le 3",
                   kind="exact",
                   note="Dong, Cordonnier, Loukas 2021, Theorem 2.2 (simplified), at gamma = 1, "
                        "the left side with the centred residual, the right with a lower bound "
                        "of the minimal one"),
    ),
    checks=(
        Check("exponent_1", "exponent_1", "limit", rate=_RATE, rate_status="derived",
              rate_note=_RATE_NOTE),
        Check("exponent_2", "exponent_2", "limit", rate=_RATE, rate_status="derived",
              rate_note=_RATE_NOTE + "; the second layer's input residual is O(eps^3), its own "
                        "correction O(eps^6)"),
        Check("leading_map", "leading_ratio", "limit", rate=_RATE, rate_status="derived",
              rate_note=_RATE_NOTE),
        Check("leading_map", "leading_alignment", "limit", rate=_RATE_SQUARED,
              rate_status="derived",
              rate_note="the cosine of the angle between res SA(X) and the leading map: the "
                        "part orthogonal to it is O(eps^2) at x = 0 (O(eps) at x != 0) relative "
                        "and enters the cosine squared: 1 - cos = O(eps^4), resp. O(eps^2)"),
        Check("dong_bound", "dong_bound_holds", "exact", tolerance=0.0,
              tolerance_note="depths 1, 2, 3 at eps and eps/2, compared in logs; the two sides "
                             "are orders of magnitude apart, far beyond round-off"),
        Check("dong_bound", "dong_log10_tightness_1", "limit", asserted=False,
              record_note="tightness at L = 1: log10 (||res SA(X)||_{1,inf} / bound), the larger "
                          "of eps and eps/2"),
        Check("dong_bound", "dong_log10_tightness_2", "limit", asserted=False,
              record_note="tightness at L = 2 (log10)"),
        Check("dong_bound", "dong_log10_tightness_3", "limit", asserted=False,
              record_note="tightness at L = 3 (log10)"),
    ),
    parameters=("d_qk", "collapse_x"),
    experiment=collapse_experiment,
    paper_result="beyond the paper: Dong, Cordonnier, Loukas (ICML 2021), the cubic rate behind "
                 "Theorem 2.2 (paper text not read here; form from three transcriptions)",
    derived_in="docs/peers.md, peers.cubic_collapse",
    references=("Y. Dong, J.-B. Cordonnier, A. Loukas, Attention is not all you need: pure "
                "attention loses rank doubly exponentially with depth, ICML 2021, "
                "arXiv:2103.03404, Theorem 2.2; code: github.com/twistedcubic/attention-rank-collapse",
                "docs/peers.md"),
    profiles=profiles(quick=(64, 1024), standard=(64, 2048)),
    cases={"quick": ({}, {"collapse_x": 1.0}), "standard": ({}, {"collapse_x": 1.0},
                                                            {"collapse_x": 1.0, "d_qk": 32})},
)]
