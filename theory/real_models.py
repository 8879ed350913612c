r"""The first attention layer of BERT, RoBERTa and GPT-2 at random initialisation, on
isometric input: the logit law of one head and the limits it gives.

Setting (:mod:`numerics.hf_models`). Hidden width ``d``, heads of width ``d_qk``, weights
i.i.d. :math:`N(0, r^2)` (``initializer_range`` ``r``, biases 0), scaling
:math:`1/\sqrt{d_{qk}}`. The input rows are :math:`e_j = \sqrt d\,q_j` with orthonormal
:math:`q_j` (``T <= d``), plus position embeddings :math:`p_j` and, for BERT and RoBERTa, one
token-type vector ``t`` shared by every row, all :math:`N(0, r^2 I_d)`; a LayerNorm (at
initialisation: gain 1, bias 0) gives :math:`x_j` with :math:`\|x_j\|^2 = d`.

1. **Conditional law of a row** (derived here). Head ``h``'s logits are
   :math:`M_{ij} = q_i^\top k_j/\sqrt{d_{qk}} = u_i^\top x_j`,
   :math:`q_i = W_Q^h x_i`, :math:`u_i = W_K^{h\top} q_i/\sqrt{d_{qk}}`. ``W_K`` is independent
   of :math:`q_i`, so given :math:`q_i` and ``X`` the logits of row ``i`` are the Gaussian
   vector :math:`Xu_i` with covariance :math:`r^2\|q_i\|^2 XX^\top/d_{qk}`. For the
   isometric part :math:`XX^\top = dI`, and since :math:`\|x_i\|^2 = d`,
   :math:`\|q_i\|^2 = r^2 d\,\chi^2_{d_{qk}}`: the row's logits are i.i.d.
   :math:`N(0, s^2 X)`, :math:`X \sim \chi^2_{d_{qk}}/d_{qk}`, with

   .. math:: s^2 = (d r^2)^2\,\frac{1 + r^2}{1 + \epsilon r^2}

   (:func:`layer1_logit_variance`): the shared token-type vector (:math:`\epsilon = 2`;
   GPT-2 has none, :math:`\epsilon = 1`) adds the same logit to a whole row, which the
   softmax ignores, and takes the fraction :math:`r^2/(1 + 2r^2)` of each row's squared
   norm after the LayerNorm. What is left out: the position embeddings' and the token-type
   vector's cross terms with the rows, off-diagonal entries of :math:`XX^\top/d` of order
   :math:`r/\sqrt d = 7\cdot10^{-4}`, a second-order effect on the statistics below.
2. **Frobenius limit** (derived here). For i.i.d. :math:`N(0, v)` logits a row of
   :math:`A - \mathbf 1\mathbf 1^\top/T` has :math:`\mathbb E\,T\sum_j(A_{ij} - 1/T)^2 =
   e^v - 1 + O(1/T)` (``softmax.kappa``), so averaging over :math:`X`,

   .. math:: \|A_1 - \mathbf 1\mathbf 1^\top/T\|_F^2 \to \mathbb E\,e^{s^2 X} - 1
             = \Bigl(1 - \frac{2s^2}{d_{qk}}\Bigr)^{-d_{qk}/2} - 1

   (:func:`frobenius_limit`: the moment generating function of :math:`\chi^2_{d_{qk}}/d_{qk}`
   at :math:`s^2`, computed by ``sympy.stats``), which tends to :math:`\kappa^2 =
   e^{s^2} - 1` as :math:`d_{qk} \to \infty`; at BERT's :math:`d = 768`, :math:`d_{qk} = 64`,
   ``r = 0.02`` it is :math:`0.09908` against :math:`\kappa^2 = 0.09897` (the head's random
   variance, a Jensen excess of 0.1%). The finite-size terms of the row statistic (the
   normalisation by the row sum, the sample variance's factor :math:`1 - 1/T`) are
   :math:`O(1/T)`.
3. **Causal layer** (derived here; GPT-2). :math:`A_1 = C_T + N`, :math:`\mathbb E N = 0`
   (``causal.cesaro``: the entries of a causal row are exchangeable), row ``i`` of ``N`` of
   squared norm :math:`\approx(e^{v}-1)/i`. To second order
   :math:`s_1(A) - s_1(C_T) \approx u^\top N v + O(\|Nv\|^2 + \|N^\top u\|^2)/s_1`, ``u, v``
   the top singular vectors of :math:`C_T`. The first term has mean 0. The top singular
   vectors of :math:`C_T` spread like :math:`j^{-1/2}/\sqrt{\log T}` (the Mellin line of
   ``causal.cesaro``), so they put a weight :math:`\sim 1/\log T` on the first rows, whose
   noise does not average out: :math:`\mathbb E\|Nv\|^2 = O(\kappa^2/\log T)`, and
   :math:`s_1(A_1)/s_1(C_T) \to 1` (:func:`cesaro_ratio_limit`) with a correction in
   powers of :math:`1/\log T`; :math:`s_1(C_T) \to 2` itself only like
   :math:`1/\log^2 T`. (A heuristic expansion, not a proof; the finite-size family of the
   check is :math:`L + c/\log T (+ e/\log^2 T)`.)

References: Naderi, Nait Saada, Tanner, *Mind the Gap*, ICML 2025 (arXiv:2410.07799),
Section 3 (softmax attention as a random Markov matrix); the configurations of Devlin et
al. (BERT), Liu et al. (RoBERTa), Radford et al. (GPT-2).
"""
from __future__ import annotations

import functools

import sympy as sp

__all__ = ["layer1_logit_variance", "frobenius_limit", "cesaro_ratio_limit"]


def layer1_logit_variance(d, r, shared_vector: bool) -> sp.Expr:
    r"""The variance :math:`s^2 = (d r^2)^2 (1 + r^2)/(1 + \epsilon r^2)` of a first-layer
    logit across a row (module docstring, 1), exact in ``d`` and ``r`` (sympy numbers);
    ``shared_vector``: the input carries a token-type vector shared by every row (BERT,
    RoBERTa: :math:`\epsilon = 2`), else :math:`\epsilon = 1` (GPT-2)."""
    d, r = sp.sympify(d), sp.sympify(r)
    eps = 2 if shared_vector else 1
    return (d * r**2) ** 2 * (1 + r**2) / (1 + eps * r**2)


@functools.lru_cache(maxsize=None)
def _scaled_chi2_mgf_checked(k: int) -> bool:
    """Whether ``sympy.stats`` gives :math:`\\mathbb E\\,e^{tX} = (1 - 2t/k)^{-k/2}` for
    :math:`X \\sim \\chi^2_k/k` (the closed form :func:`frobenius_limit` writes)."""
    from sympy.stats import ChiSquared, moment_generating_function

    t = sp.Symbol("t", positive=True)
    mgf = moment_generating_function(ChiSquared("X", k))(t / k)
    return sp.simplify(mgf - (1 - 2 * t / k) ** sp.Rational(-k, 2)) == 0


def frobenius_limit(s2, d_qk: int) -> sp.Expr:
    r""":math:`\lim_T \|A_1 - \mathbf 1\mathbf 1^\top/T\|_F^2 = \mathbb E\,e^{s^2X} - 1`,
    :math:`X \sim \chi^2_{d_{qk}}/d_{qk}`, that is
    :math:`(1 - 2s^2/d_{qk})^{-d_{qk}/2} - 1` (module docstring, 2; the moment generating
    function is sympy.stats', checked against this form); ``s2`` below :math:`d_{qk}/2`,
    where it is finite. Returned unevaluated, so that it reads as the formula."""
    s2 = sp.sympify(s2)
    if not 0 <= float(s2) < d_qk / 2:
        raise ValueError(f"parameter 's2' must lie in [0, d_qk/2) = [0, {d_qk / 2}), got {s2}")
    if not _scaled_chi2_mgf_checked(int(d_qk)):  # pragma: no cover - a sympy regression
        raise ArithmeticError(f"sympy.stats' chi-square({d_qk}) MGF is not (1 - 2t/k)^(-k/2)")
    x = 2 * s2 / d_qk  # evaluated: one number
    with sp.evaluate(False):
        return sp.Pow(sp.Add(1, -x), sp.Rational(-int(d_qk), 2)) - 1


def cesaro_ratio_limit() -> sp.Expr:
    r""":math:`\lim_T s_1(A_1)/s_1(C_T) = 1` for causal softmax attention at any logit
    variance (module docstring, 3)."""
    return sp.Integer(1)
