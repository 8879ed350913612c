r"""One replicate of each claim's experiment: sample the matrices once, measure everything.

An experiment is ``f(rng, T, params) -> dict[str, float | ndarray]``. It measures, it
does not judge: it never sees a predicted value, so stored measurements can be re-judged
against any statement (``--perturb``, the power audit) without resampling. Arrays are
spectra for the law claims; scalars are the statistics named in the claim registry.

Parameters (``params``): ``s2``, ``mu`` (logit variance and mean), ``gamma`` (``T/d``),
``sigma_V`` (value weight standard deviation), and for the single-layer Markov experiments
``entries``, the ``--entries`` law of ``Z`` (:func:`numerics.samplers.entry_law`; absent:
softmax at ``(mu, s2)``, sampled exactly as before).

Each experiment is recorded with its facts (peak arrays, reference seconds, cost order,
array-API version) where it is written (:func:`numerics.experiment_record.experiment_record`).
"""
from __future__ import annotations

import math
from typing import Callable, Mapping

import numpy as np

from gapverify.numerics import (
    causal as _c, heavy_tail as _h, hf_models as _hf, training as _tr, variants as _v,
)
from gapverify.numerics.common import _network_config, network_stream, width_of
from gapverify.numerics.experiment_record import RECORDS, bare_record, experiment_record, register
from gapverify.numerics.edge import EDGE_K, edge_stable_ranks, tracy_widom_edge
from gapverify.numerics.samplers import (
    entry_law, gaussian_matrix, isometric_input, remove_outlier,
)
from gapverify.numerics.statistics import (
    eigenvalues, frobenius_sq, ginibre_ratio, moment_ratio, outlier_measurement, singular_values,
    stable_rank, stable_ranks, top_eigenvalues, top_singular_values,
)

__all__ = ["EXPERIMENTS", "Experiment", "RECORDS"]

Measurement = dict[str, "float | np.ndarray"]
#: The type of an experiment's function (its record: :class:`numerics.experiment_record.Experiment`).
Experiment = Callable[[np.random.Generator, int, Mapping[str, float]], Measurement]


def _law(p: Mapping[str, object]):
    # the case's entry law: softmax at (mu, s2) unless params name another (--entries)
    return entry_law(p.get("entries"), p["mu"], p["s2"])  # type: ignore[arg-type]


def _attention(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> np.ndarray:
    return _law(p).markov(rng, T)


@experiment_record("softmax.kappa", arrays=(4, 0, 0),  # M, Z, A, Aperp
                   seconds=(0.000571, 1.81e-08, 0.0), quadratic=1.0)
def softmax_kappa(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r"""Coefficient of variation of the ``T^2`` entries :math:`Z = e^M` (or of the
    ``entries`` law), and :math:`\|A^\perp\|_F^2` (:math:`\to \kappa^2`). ``O(T^2)``."""
    law = _law(p)
    Z = law.sample(rng, (T, T))  # softmax's: exp of its logits
    # kappa_hat = sd(Z) / mean(Z) over all T^2 entries
    kappa_hat = float(Z.std(ddof=1) / Z.mean())
    A = Z / Z.sum(axis=1, keepdims=True)
    return {"kappa": kappa_hat, "frob_Aperp": frobenius_sq(remove_outlier(A))}


@experiment_record("markov.singular_law", arrays=(3, 0, 0),  # A, gesdd's copy and workspace
                   seconds=(0.00147, 6.82e-08, 1.31e-10))
def singular_law(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r"""Bulk singular values :math:`\sqrt T s_2, \dots, \sqrt T s_T` of :math:`A` (full
    spectrum, ``O(T^3)``), their mean square and the largest of them."""
    s = singular_values(_attention(rng, T, p)) * math.sqrt(T)
    bulk = s[1:]
    return {"bulk": bulk, "second_moment": float(np.mean(bulk**2)), "edge": float(bulk[0])}


@experiment_record("markov.circular_law", arrays=(3, 0, 0),  # A, geev's copy and workspace
                   seconds=(0.0004, 3.25e-07, 4.76e-10))
def circular_law(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r"""Moduli of the eigenvalues of :math:`\sqrt T A`, the Perron eigenvalue
    :math:`\sqrt T` removed (full spectrum, ``O(T^3)``)."""
    ev = eigenvalues(_attention(rng, T, p))
    perron = int(np.argmin(np.abs(ev - 1.0)))
    modulus = np.abs(np.delete(ev, perron)) * math.sqrt(T)
    return {"modulus": np.sort(modulus)}


@experiment_record("markov.outliers", seconds=(0.00629, 1.61e-07, 0.0), quadratic=200.0,
                   arrays=(1.1, 0, 0),  # A (softmax in place; peak RSS 2.2 GiB at 16384)
                   arrays_backend=(2, 0, 0), array_api="outliers")  # A and exp's buffer
def outliers(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r""":math:`\lambda_1`, :math:`s_1`, :math:`\sqrt T s_2`, :math:`\sqrt T|\lambda_2|` of
    :math:`A`: two Lanczos runs (``O(T^2)`` per iteration), no full spectrum; and
    ``sqrtT_lambda2_ginibre`` :math:`= \sqrt T|\lambda_2(A)|/\rho(G)`, ``G`` a real Ginibre
    matrix (i.i.d. :math:`N(0, 1/T)`) drawn after ``A`` (:func:`numerics.variants.ginibre_reference`:
    ``A``'s outlier 1 lies outside the disc, so :math:`\lambda_2` is the bulk's first and
    is compared with ``G``'s spectral radius). Params that name a ``backend``
    (:mod:`numerics.backends`) are sampled by :mod:`numerics.array_api`."""
    if "backend" in p:
        from gapverify.numerics import array_api

        return array_api.outliers(rng, T, p)
    A = _attention(rng, T, p)
    out = outlier_measurement(top_singular_values(A, 2), top_eigenvalues(A, 2), T)
    del A  # G is drawn after A (A's statistics keep their values for a seed), not beside it
    # Arnoldi to ARPACK's own limit, as for lambda_2(A): no O(T^3) fallback at T = 16384
    rho = _v.ginibre_reference(rng, T, 1, restarts=None)
    return {**out, **ginibre_ratio(out["sqrtT_lambda2"], rho)}


@experiment_record("fix.spectrum", arrays=(4, 0, 0),  # A, Aperp, LAPACK's copy and workspace
                   seconds=(0.00113, 5.59e-07, 1.77e-09))
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


@experiment_record("width.stable_rank", seconds=(0.00268, 1.62e-07, 1.03e-10),
                   arrays=(4, 4, 1),  # A, Aperp, Gram | X0, G, Y, A Y | W
                   arrays_backend=(2, 2.5, 0),  # A, exp's buffer | Y, A Y, a Gram row block
                   array_api="width_stable_rank")
def width_stable_rank(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r"""One layer :math:`X_1 = A X_0 W_1` and :math:`X_1^\perp = A^\perp X_0 W_1` on the same
    draw: stable ranks of :math:`A, X_1, \Sigma_1` and of the fixed versions over ``T``,
    the fixed ones also read through the edge (``*_edge_over_T``,
    :func:`numerics.edge.edge_stable_ranks`).

    :math:`Y = X_0 W_1` is sampled directly as a ``T x d`` matrix of i.i.d.
    :math:`N(0, \sigma_V^2)` entries: with :math:`X_0 X_0^\top = I_T` and :math:`W_1`
    Gaussian, :math:`X_0 W_1` has exactly that law (orthogonal invariance of :math:`W_1`),
    independent of :math:`A`. Cost ``O(T^2 d)`` for :math:`AY` and the Gram matrices,
    ``O(T d)`` for :math:`A^\perp Y = AY - \mathbf 1 (\mathbf 1^\top Y)/T` (rank-one
    update), Lanczos for the top singular values; no QR and no ``d x d`` product. Params
    that name a ``backend`` are sampled by :mod:`numerics.array_api`.
    """
    if "backend" in p:
        from gapverify.numerics import array_api

        return array_api.width_stable_rank(rng, T, p)
    d = width_of(T, p["gamma"])
    A = _attention(rng, T, p)
    Y = gaussian_matrix(rng, T, d, p["sigma_V"])  # ~ X0 W1 in law
    X1 = A @ Y
    X1perp = X1 - Y.mean(axis=0, keepdims=True)  # Aperp Y = A Y - 1 (1^T Y) / T
    sr_X1, sr_Sigma1 = stable_ranks(X1)
    sr_X1perp, sr_Sigma1perp, edge_X1perp, edge_Sigma1perp = edge_stable_ranks(X1perp)
    A_perp = remove_outlier(A)
    top_perp = top_singular_values(A_perp, EDGE_K)
    frob_perp = frobenius_sq(A_perp)
    return {
        "sr_A": stable_rank(A),
        "sr_X1": sr_X1,
        "sr_Sigma1": sr_Sigma1,
        "sr_Aperp_over_T": frob_perp / top_perp[0] ** 2 / T,
        "sr_X1perp_over_T": sr_X1perp / T,
        "sr_Sigma1perp_over_T": sr_Sigma1perp / T,
        # the same read through the edge, its Tracy-Widom offset removed (numerics.edge)
        "sr_Aperp_edge_over_T": frob_perp / tracy_widom_edge(top_perp) / T,
        "sr_X1perp_edge_over_T": edge_X1perp / T,
        "sr_Sigma1perp_edge_over_T": edge_Sigma1perp / T,
        # T sum s^4 / (sum s^2)^2 of X1perp -> m2/m1^2: sr(Sigma1perp) without its edge
        "m2_ratio_X1perp": moment_ratio(sr_X1perp / T, sr_Sigma1perp / T),
    }


# the long profile's experiment, its seconds fitted the same way on its own sweep (2026-12-02,
# gapverify run --profile long, 2 cores, 320 tasks: 1.5 s at T = 4096, 48 s at 16384)
@experiment_record("markov.edge", seconds=(0.0, 6.66e-08, 7.02e-12), quadratic=200.0,
                   arrays=(1.1, 0, 0),  # float32 A and exp's buffer (peak RSS 2.1 GiB at 16384)
                   array_api="bulk_edge")
def bulk_edge(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r"""The edge statistics of :math:`A` at large ``T`` (the ``long`` profile's experiment,
    shared by ``markov.outliers``, ``fix.spectrum`` and ``width.stable_rank``):
    :func:`numerics.array_api.bulk_edge`, float32 by default, ``O(T^2)`` per Lanczos step."""
    from gapverify.numerics import array_api

    return array_api.bulk_edge(rng, T, p)


# --- through the layers (depth, gradients, key-query attention) --------------------------


# seconds: the fit on the standard sweep times the measured ratios of twin networks drawn once
# to two passes (0.683) and of X_0 W_1 drawn whole to X0 and W_1 (0.767; interleaved
# timings of the standard cases at every standard size, 2026-12-07; docs/performance.md,
# "Twin networks drawn once" and "The first layer's product drawn whole")
@experiment_record("depth.network", seconds=(0.00132, 3.43e-07, 5.66e-10))
def depth_network(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r"""Markov-surrogate network of depth ``L``, standard and fixed on the same draws:
    stable ranks of :math:`X_L, \Sigma_L` and :math:`\|A_L\cdots A_1\|_F^2` (scaled by
    :math:`T^{L-1}` with the fix); per-layer arrays kept for the depth figure.
    ``O(L (T d^2 + T^3))`` twice, the draws and ``X_0 W_1`` once
    (:func:`numerics.forward_pass.forward_twins`)."""
    from gapverify.numerics.forward_pass import forward_twins

    std, fix = forward_twins(network_stream(rng), _network_config(T, p, False), edge=True)
    return {
        "sr_X": float(std.sr_X[-1]), "sr_Sigma": float(std.sr_Sigma[-1]),
        "sr_Xperp_over_T": float(fix.sr_X_over_T[-1]),
        "sr_Sigmaperp_over_T": float(fix.sr_Sigma_over_T[-1]),
        "sr_Xperp_edge_over_T": float(fix.sr_X_edge_over_T[-1]),
        "sr_Sigmaperp_edge_over_T": float(fix.sr_Sigma_edge_over_T[-1]),
        # T sum s^4 / (sum s^2)^2 of X_L perp -> m2/m1^2: sr(Sigma_L perp) without its edge
        "m2_ratio_Xperp": moment_ratio(float(fix.sr_X_over_T[-1]), float(fix.sr_Sigma_over_T[-1])),
        "frob_A": float(std.frob_A_product[-1]),
        "frob_Aperp_scaled": float(fix.frob_A_product_scaled[-1]),
        "layers_sr_Sigma": std.sr_Sigma, "layers_sr_Sigmaperp": fix.sr_Sigma,
    }


# seconds: as depth.network's, the fit times the twins' measured ratio to two passes, 0.722
@experiment_record("gradient.value", seconds=(0.00171, 2.95e-07, 1.67e-09))
def value_gradients(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r""":math:`\|\partial X_L/\partial W_\ell\|_F^2` for ``l = 1`` and ``l = L`` from the
    Kronecker structure, divided by the identity's prediction
    :math:`\sigma_V^{2(L-1)} d^L \|A_L\cdots A_1\|_F^2` (``ratio_*``), and the raw norm
    scaled by :math:`T^L` (standard) or :math:`T` (fixed) for the growth exponents.
    ``O(L T^2 d + L d^3)`` per network; the two networks on the same draws, drawn once
    (:func:`numerics.forward_pass.forward_twins`)."""
    from gapverify.numerics.gradients import value_gradient_sq_norms, weight_suffix_logs
    from gapverify.numerics.forward_pass import forward_twins

    L, sv = int(p["depth"]), p["sigma_V"]
    out: Measurement = {}
    twins = forward_twins(rng, _network_config(T, p, False), keep_matrices=True, ranks=False)
    weight_logs = weight_suffix_logs(twins[0].Ws)  # log ||W_{l+1} ... W_L||_F: the same weights
    for tr, (name, power) in zip(twins, (("std", L), ("fix", 1))):
        cfg = tr.config
        # the activations X_0..X_{L-1} forward already computed, not computed again
        prefix = [(tr.X0, 0.0)] + list(zip(tr.X_normalised[:-1], tr.log_frob_X[:-1]))
        log_g = value_gradient_sq_norms(tr.As, tr.X0, tr.Ws, return_log=True, prefix=prefix,
                                        weight_logs=weight_logs)
        # log of sigma_V^{2(L-1)} d^L ||A_L ... A_1||_F^2
        log_pred = 2 * (L - 1) * math.log(sv) + L * math.log(cfg.d) + math.log(tr.frob_A_product[-1])
        out[f"ratio_first_{name}"] = float(math.exp(log_g[0] - log_pred))
        out[f"ratio_last_{name}"] = float(math.exp(log_g[-1] - log_pred))
        out[f"grad_{name}_scaled"] = float(math.exp(log_g[0] - power * math.log(T)))
    return out


@experiment_record("gradient.input", arrays=(2, 0, 2),  # A, Aperp | W, its copy
                   seconds=(0.00369, 1.07e-07, 2e-10), quadratic=200.0)
def input_jacobian(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r"""One layer: :math:`\|\partial X_1/\partial X_0\|_2^2 = \|W_1\|_2^2\|A_1\|_2^2`,
    standard divided by ``d``, and fixed (:math:`A^\perp`). Two Lanczos runs."""
    from gapverify.numerics.gradients import input_jacobian_sq_norm

    d = width_of(T, p["gamma"])
    A = _attention(rng, T, p)
    W = gaussian_matrix(rng, d, d, p["sigma_V"])
    return {"jacobian_std_over_d": input_jacobian_sq_norm(A, W) / d,
            "jacobian_fix": input_jacobian_sq_norm(remove_outlier(A), W)}


#: Independent draws of the head weights per replicate whose logit moments are averaged:
#: one draw's moments fluctuate with its T rows of X W^Q (relative sd 8-16% of the
#: kurtosis at T = 512 for d_qk 16-64), and the weights are cheap next to A's spectrum
KQ_MOMENT_DRAWS = 16
#: Independent Xavier draws per replicate: sr(X_1) - 1 carries the chi-square factor of
#: the rank-one mass ||1^T X0 W||^2 (relative sd sqrt(2/d), 6% at d = 512)
KQ_XAVIER_DRAWS = 6


def logit_draw_moments(M: np.ndarray) -> dict[str, float]:
    r"""Moments of the logits of one draw, over all ``T^2`` entries (centred by their mean):
    the variance :math:`m_2`, the excess kurtosis :math:`m_4/m_2^2 - 3`, and
    :math:`\mathrm{corr}(M_{ij}^2, M_{ik}^2)` over *all* pairs of distinct entries sharing a
    row, and likewise a column (rows and columns of key-query logits play symmetric roles):
    :math:`\sum_{j\ne k} a_j a_k = (\sum_j a_j)^2 - \sum_j a_j^2` makes it ``O(T^2)``."""
    T, n = M.shape[0], M.size
    x = M - M.mean()
    x2 = x * x
    flat = x2.ravel()
    m2 = float(flat.sum()) / n  # E x^2
    m4 = float(flat @ flat) / n  # E x^4
    r, c = x2.sum(axis=1), x2.sum(axis=0)
    pairs = n * (T - 1)  # ordered pairs of distinct entries in a row (as many in a column)
    e_row = (float(r @ r) - m4 * n) / pairs  # E x_ij^2 x_ik^2, j != k
    e_col = (float(c @ c) - m4 * n) / pairs  # E x_ij^2 x_kj^2, i != k
    return {"var": m2, "kurtosis": m4 / m2**2 - 3.0,
            "sq_corr": (0.5 * (e_row + e_col) - m2 * m2) / (m4 - m2 * m2)}


def _mean_of(draws: list[dict[str, float]]) -> dict[str, float]:
    return {k: float(np.mean([d[k] for d in draws])) for k in draws[0]}


@experiment_record("kq.attention", seconds=(0.00795, 4.38e-07, 8.74e-10))
def kq_attention(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> Measurement:
    r"""First layer of key-query attention on an isometric input: merged :math:`W^{QK}`
    (logits exactly i.i.d.), separate heads of width ``d_qk`` (uncorrelated, dependent)
    and Xavier heads (:math:`A \to \mathbf 1\mathbf 1^\top/T`, :math:`X_1` rank one).
    Logit moments (:func:`logit_draw_moments`; separate heads: the mean over
    :data:`KQ_MOMENT_DRAWS` draws of the weights), :math:`\mathrm{sr}(A)`,
    :math:`\sqrt T s_2(A)` (the first draw), and, the mean over :data:`KQ_XAVIER_DRAWS`
    Xavier draws, :math:`\|A^\perp\|_F^2 (d + d_{qk})^2/4` and
    :math:`(\mathrm{sr}(X_1) - 1)(d + d_{qk})^2/4`. All draws share ``X0``. Cost
    ``O(T d^2)`` for ``X0`` and the merged head, ``O(T d d_{qk} + T^2 d_{qk})`` per separate
    draw, ``O(T^2 d)`` per Xavier draw."""
    from gapverify.numerics.networks import NetworkConfig, attention_logits, softmax_rows

    d, dqk = width_of(T, p["gamma"]), int(p["d_qk"])
    out: Measurement = {}
    X0 = isometric_input(rng, T, d)

    def config(attention: str, init: str) -> NetworkConfig:
        return NetworkConfig(T=T, d=d, depth=1, attention=attention, init=init, s2=p["s2"],
                             d_qk=dqk, sigma_V=p["sigma_V"])

    for name, attention in (("merged", "kq_merged"), ("separate", "kq_separate")):
        M = attention_logits(rng, config(attention, "gaussian"), X0, 0.0)
        A = softmax_rows(M)
        moments = [logit_draw_moments(M)]
        if name == "separate":  # further draws of W^Q, W^K: their logit moments only
            moments += [logit_draw_moments(attention_logits(rng, config(attention, "gaussian"), X0, 0.0))
                        for _ in range(KQ_MOMENT_DRAWS - 1)]
        out.update({f"{name}_{k}": v for k, v in _mean_of(moments).items()})
        s = top_singular_values(A, 2)
        out[f"{name}_sr_A"] = frobenius_sq(A) / s[0] ** 2
        out[f"{name}_sqrtT_s2"] = float(s[1] * math.sqrt(T))
    scale = (d + dqk) ** 2 / 4  # 1/kappa^2: the Xavier logit variance is 4/(d + d_qk)^2
    xavier = []
    for _ in range(KQ_XAVIER_DRAWS):
        A = softmax_rows(attention_logits(rng, config("kq_separate", "xavier"), X0, 0.0))
        # Y ~ X0 W1 in law, sampled directly (no T x d x d product): X0 X0^T = I_T and W1
        # independent of W^Q, W^K make X0 W1 i.i.d. N(0, sigma_V^2), independent of the
        # logits (as width_stable_rank)
        Y = gaussian_matrix(rng, T, d, p["sigma_V"])
        xavier.append({"xavier_frob_Aperp_scaled": frobenius_sq(remove_outlier(A)) * scale,
                       "xavier_sr_X1_minus_1_scaled": (stable_rank(A @ Y) - 1) * scale})
    out.update(_mean_of(xavier))
    return out


# the families written in their own modules, then the real transformers and trainability
# (optional: torch, transformers). numerics.hf_models and numerics.training import torch only
# inside their functions: the registry (and this module) never import it. Where torch is
# missing the claims sample "models.unavailable" instead (verification.claims.registry.models).
register(*_v.VARIANT_RECORDS, *_c.CAUSAL_RECORDS, *_h.HEAVY_TAIL_RECORDS,
         *(bare_record(f"models.{name}", _hf.model_experiment(name)) for name in _hf.MODEL_NAMES),
         bare_record("training.fix", _tr.training_experiment),
         bare_record("models.unavailable", _hf.unavailable_experiment))

#: Experiments by name (a claim's, or a profile's own: ``markov.edge``): the functions of
#: :data:`~numerics.experiment_record.RECORDS`, a view kept for the callers that want the
#: function only.
EXPERIMENTS: dict[str, Experiment] = {name: r.function for name, r in RECORDS.items()}
