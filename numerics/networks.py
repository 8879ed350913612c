r"""Attention-only networks at initialisation: forward passes and per-layer statistics.

One head, no LayerNorm, no skip connection (the paper's model):

.. math::

    X_\ell = A_\ell X_{\ell-1} W_\ell,\qquad
    X_0 X_0^\top = I_T,\qquad (W_\ell)_{ab} \overset{iid}{\sim} N(0, \sigma_V^2),

with ``X0`` the first ``T`` rows of a Haar-orthogonal ``d x d`` matrix and ``A_l`` one of

* the *Markov surrogate*: :math:`A_\ell = \mathrm{softmax}(M_\ell)`,
  :math:`M_\ell` i.i.d. :math:`N(\mu, s^2)`, independent of everything else;
* *merged key-query* attention: :math:`A_\ell = \mathrm{softmax}(X_{\ell-1} W^{QK}_\ell
  X_{\ell-1}^\top)`, :math:`W^{QK}_\ell` i.i.d. :math:`N(0, s^2)`;
* *separate key-query* attention: :math:`A_\ell = \mathrm{softmax}(X_{\ell-1} W^Q_\ell
  W^{K\top}_\ell X_{\ell-1}^\top / \sqrt{d_{qk}})`, with Gaussian (``sQ^2 sK^2 = s^2``)
  or Xavier (variance :math:`2/(d + d_{qk})`) key and query weights,

* *causal* attention (the Markov surrogate with the decoder mask :math:`j > i`; claim
  ``causal.cesaro``),

and, with the fix, :math:`A_\ell^\perp = A_\ell - \tfrac1T \mathbf 1 \mathbf 1^\top` at
every layer (:math:`A_\ell - C_T`, the Cesaro matrix, for causal attention).
Stable ranks use :math:`\mathrm{sr}(M) = \|M\|_F^2 / \|M\|_2^2`, reported for
both :math:`X_\ell` and :math:`\Sigma_\ell = X_\ell X_\ell^\top` (claims
``depth.stable_rank``, ``depth.frobenius``, ``width.stable_rank``, ``kq.attention``).

Randomness comes only from the :class:`numpy.random.Generator` passed in. The first
layer's logits and their moments (``kq.attention``'s diagnostics) are
:mod:`numerics.logit_moments`.

References
----------
.. [1] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap: a Spectral Analysis of Rank
   Collapse and Signal Propagation in Attention Layers", ICML 2025, arXiv:2410.07799.
.. [2] C. Bordenave, P. Caputo, D. Chafai, "Circular law theorem for random Markov
   matrices", PTRF 152 (2012), arXiv:0808.1502.
.. [3] X. Glorot, Y. Bengio, "Understanding the difficulty of training deep feedforward
   neural networks", AISTATS 2010 (Xavier initialisation).
.. [4] R. B. Lehoucq, D. C. Sorensen, C. Yang, "ARPACK Users' Guide", SIAM 1998
   (implicitly restarted Lanczos, used for the top singular value).
"""
from __future__ import annotations

import math
import operator
import dataclasses
from dataclasses import dataclass, field

import numpy as np

from gapverify.numerics.samplers import (
    LogNormalEntries, gaussian_matrix, isometric_input, remove_outlier, softmax_rows,
)
from gapverify.numerics.edge import edge_stable_ranks
from gapverify.numerics.statistics import frobenius_sq, stable_ranks
from gapverify.theory.parameters import PARAMETERS

__all__ = [
    "ATTENTIONS",
    "RESIDUALS",
    "layer_norm",
    "INITS",
    "NetworkConfig",
    "NetworkTrace",
    "attention_logits",
    "attention_matrix",
    "forward",
    "forward_twins",
    "SHARED_DRAWS",
]

#: Attention mechanisms understood by :class:`NetworkConfig`.
ATTENTIONS: tuple[str, ...] = ("markov", "kq_merged", "kq_separate", "causal")
#: Residual connections (claim variants.normalization, the paper's code):
#: ``"none"`` :math:`X_\ell = A X W`; ``"skip"`` :math:`X + A X W`; ``"upscaled"``
#: :math:`X + A X W/\sqrt d`.
RESIDUALS: tuple[str, ...] = ("none", "skip", "upscaled")
#: Attentions whose logits read no activations: a standard network and a fixed one can
#: share every draw (:func:`forward_twins`).
SHARED_DRAWS: tuple[str, ...] = ("markov", "causal")
#: Key/query initialisations understood by :class:`NetworkConfig`.
INITS: tuple[str, ...] = ("gaussian", "xavier")

_LOG2 = math.log(2.0)
#: Largest representable logit scale: ``exp(2 log c)`` with ``2 log c`` above this overflows.
_MAX_LOG_FLOAT = math.log(np.finfo(float).max)


# --------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------
def _as_int(name: str, value: object, low: int, high: float = math.inf, what: str = "") -> int:
    """``value`` as an ``int`` in ``[low, high]``, or a ValueError naming the parameter."""
    rng_text = f"integers >= {low}" + ("" if math.isinf(high) else f" and <= {int(high)}")
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"parameter '{name}'{what} must be one of the {rng_text}, got {value!r}")
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(
            f"parameter '{name}'{what} must be one of the {rng_text}, got {value!r}"
        ) from None
    if number < low or number > high:
        raise ValueError(f"parameter '{name}'{what} must be one of the {rng_text}, got {value!r}")
    return int(number)


@dataclass(frozen=True)
class NetworkConfig:
    r"""Parameters of an attention-only network :math:`X_\ell = A_\ell X_{\ell-1} W_\ell`.

    Fields (validated on construction; a ValueError names the parameter and its range):

    ``T`` tokens (integer >= 2); ``d`` width (integer >= T, so that
    :math:`X_0 X_0^\top = I_T` is possible; :math:`\gamma = T/d`); ``depth`` number of
    layers ``L`` (1..64); ``attention`` one of :data:`ATTENTIONS`; ``init`` key/query
    initialisation, one of :data:`INITS` (``"xavier"`` only with ``"kq_separate"``);
    ``fixed`` use :math:`A^\perp = A - \tfrac1T \mathbf 1\mathbf 1^\top` at every layer;
    ``s2`` logit variance :math:`s^2 > 0` (Markov) or key-query weight variance
    (:math:`\mathrm{Var}\,W^{QK} = s^2`, :math:`s_Q^2 s_K^2 = s^2`); ``mu`` logit mean of
    the Markov surrogate (softmax is shift invariant row-wise, so ``mu`` does not change
    ``A``); ``sigma_V`` value-weight standard deviation :math:`> 0`; ``d_qk`` key/query
    head width (integer >= 1, ``kq_separate`` only).

    Defaults are the paper's code [1]_: :math:`\mu = -\tfrac12\log 2`, :math:`s^2 = \log 2`
    (so :math:`\kappa^2 = e^{s^2} - 1 = 1`), :math:`\sigma_V = 1`, :math:`d_{qk} = 64`.
    """

    T: int
    d: int
    depth: int
    attention: str = "markov"
    init: str = "gaussian"
    fixed: bool = False
    s2: float = _LOG2
    mu: float = -_LOG2 / 2
    sigma_V: float = 1.0
    d_qk: int = 64
    residual: str = "none"
    layer_norm: bool = False

    def __post_init__(self) -> None:
        """Validate every field and store it normalised (``int``/``float``/``bool``)."""
        T = _as_int("T", self.T, 2, what=" (number of tokens)")
        d = _as_int("d", self.d, T, what=f" (width; needs d >= T = {T} for an isometric input)")
        depth = PARAMETERS["depth"].validate(_as_int("depth", self.depth, 1, 64, what=" (number of layers)"))
        if self.attention not in ATTENTIONS:
            raise ValueError(
                f"parameter 'attention' must be one of {', '.join(map(repr, ATTENTIONS))}, "
                f"got {self.attention!r}"
            )
        if self.residual not in RESIDUALS:
            raise ValueError(
                f"parameter 'residual' must be one of {', '.join(map(repr, RESIDUALS))}, "
                f"got {self.residual!r}"
            )
        if not isinstance(self.layer_norm, (bool, np.bool_)):
            raise ValueError(f"parameter 'layer_norm' must be True or False, got {self.layer_norm!r}")
        object.__setattr__(self, "layer_norm", bool(self.layer_norm))
        if self.init not in INITS:
            raise ValueError(
                f"parameter 'init' must be one of {', '.join(map(repr, INITS))}, got {self.init!r}"
            )
        if self.init == "xavier" and self.attention != "kq_separate":
            raise ValueError(
                "parameter 'init' may be 'xavier' only with attention='kq_separate' "
                f"(Xavier initialises W^Q, W^K), got attention={self.attention!r}"
            )
        if not isinstance(self.fixed, (bool, np.bool_)):
            raise ValueError(f"parameter 'fixed' must be True or False, got {self.fixed!r}")
        # model parameters: one description of each domain (theory.parameters)
        s2, mu, sigma_V = (float(PARAMETERS[n].validate(getattr(self, n)))
                           for n in ("s2", "mu", "sigma_V"))
        d_qk = PARAMETERS["d_qk"].validate(_as_int("d_qk", self.d_qk, 1, what=" (key/query head width)"))
        for name, value in (("T", T), ("d", d), ("depth", depth), ("s2", s2), ("mu", mu),
                            ("sigma_V", sigma_V), ("d_qk", d_qk), ("fixed", bool(self.fixed))):
            object.__setattr__(self, name, value)

    @property
    def gamma(self) -> float:
        r""":math:`\gamma = T / d \in (0, 1]`."""
        return self.T / self.d

    @property
    def kappa2(self) -> float:
        r""":math:`\kappa^2 = e^{s^2} - 1` (softmax Markov entries; ``softmax.kappa``)."""
        return math.expm1(self.s2)

    @classmethod
    def from_gamma(cls, T: int, gamma: float, depth: int, **kwargs: object) -> "NetworkConfig":
        r"""Config with width :math:`d = \mathrm{round}(T / \gamma)`, :math:`\gamma \in (0, 1]`."""
        g = float(PARAMETERS["gamma"].validate(gamma))  # (0, 1]
        T_int = _as_int("T", T, 2, what=" (number of tokens)")
        return cls(T=T_int, d=max(T_int, round(T_int / g)), depth=depth, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------------------
def _kq_logits_unit(rng: np.random.Generator, X: np.ndarray, attention: str, init: str,
                    s2: float, d_qk: int) -> np.ndarray:
    r"""Key-query logits of ``X`` before the overall scale: draws the weights of one layer.

    merged: :math:`X W^{QK} X^\top`, :math:`W^{QK}` ``d x d`` i.i.d. :math:`N(0, s^2)`,
    cost ``O(T d^2 + T^2 d)``; separate: :math:`(X W^Q)(X W^K)^\top/\sqrt{d_{qk}}`, cost
    ``O(T d d_qk + T^2 d_qk)``, weights i.i.d. :math:`N(0, s)` each (variances
    :math:`s_Q^2 = s_K^2 = s`, so :math:`s_Q^2 s_K^2 = s^2`) or Xavier
    :math:`N(0, 2/(d + d_{qk}))` [3]_.
    Draw order: ``W^QK``; or ``W^Q`` then ``W^K``.
    """
    d = X.shape[1]
    if attention == "kq_merged":
        W_qk = gaussian_matrix(rng, d, d, math.sqrt(s2))  # W^QK_ab ~ N(0, s^2)
        return (X @ W_qk) @ X.T  # M = X W^QK X^T
    std = math.sqrt(2.0 / (d + d_qk)) if init == "xavier" else s2**0.25  # Xavier or sQ = sK = s^{1/2}
    W_q = gaussian_matrix(rng, d, d_qk, std)
    W_k = gaussian_matrix(rng, d, d_qk, std)
    return (X @ W_q) @ (X @ W_k).T / math.sqrt(d_qk)  # M = X W^Q W^K^T X^T / sqrt(d_qk)


def attention_logits(rng: np.random.Generator, config: NetworkConfig,
                     X_prev: np.ndarray | None = None, log_scale: float = 0.0) -> np.ndarray:
    r"""Logits :math:`M_\ell` of one layer (``T x T``), drawing that layer's weights.

    .. math::

        M_\ell = \begin{cases}
          N(\mu, s^2)\ \text{i.i.d.} & \text{Markov surrogate}\\
          c^2\, \hat X W^{QK} \hat X^\top & \text{merged}\\
          c^2\, \hat X W^Q W^{K\top} \hat X^\top / \sqrt{d_{qk}} & \text{separate}
        \end{cases}
        \qquad X_{\ell-1} = c\,\hat X,\quad c = e^{\texttt{log\_scale}} .

    ``X_prev`` is :math:`\hat X` (the previous layer up to the positive scalar ``c``,
    which :func:`forward` divides out to stay in floating-point range) and is ignored by
    the Markov surrogate. Raises OverflowError if :math:`c^2` exceeds float64 range (the
    model's logits themselves overflow). Cost: ``O(T^2)`` (Markov), ``O(T d^2 + T^2 d)``
    (merged), ``O(T d d_qk + T^2 d_qk)`` (separate). Reference: [1]_, Prop. 1.
    """
    T = config.T
    if config.attention == "causal":  # Markov surrogate with the decoder mask j > i
        M = LogNormalEntries(mu=config.mu, s2=config.s2).logits(rng, (T, T))
        M[np.triu_indices(T, 1)] = -np.inf  # softmax row i over its first i logits
        return M
    if config.attention == "markov":
        return LogNormalEntries(mu=config.mu, s2=config.s2).logits(rng, (T, T))  # M_ij ~ N(mu, s2)
    if X_prev is None:
        raise ValueError("parameter 'X_prev' is required for key-query attention")
    X_prev = np.asarray(X_prev, dtype=float)
    if X_prev.shape != (T, config.d):
        raise ValueError(
            f"parameter 'X_prev' must have shape (T, d) = {(T, config.d)}, got {X_prev.shape}"
        )
    if 2.0 * log_scale > _MAX_LOG_FLOAT:
        raise OverflowError(
            f"key-query logits scale exp(2 * {log_scale:.4g}) exceeds float64 range: the "
            "unnormalised network's logits overflow at this depth"
        )
    M = _kq_logits_unit(rng, X_prev, config.attention, config.init, config.s2, config.d_qk)
    M *= math.exp(2.0 * log_scale)  # logits of X_{l-1} = c X_hat scale by c^2
    if not np.all(np.isfinite(M)):
        raise FloatingPointError("non-finite key-query logits (float64 overflow)")
    return M


def attention_matrix(rng: np.random.Generator, config: NetworkConfig,
                     X_prev: np.ndarray | None = None, log_scale: float = 0.0) -> np.ndarray:
    r"""One layer's attention :math:`A_\ell = \mathrm{softmax}_{\text{rows}}(M_\ell)` (not fixed).

    .. math:: (A_\ell)_{ij} = \frac{e^{(M_\ell)_{ij}}}{\sum_k e^{(M_\ell)_{ik}}},\qquad
              A_\ell \mathbf 1 = \mathbf 1,

    with :math:`M_\ell` from :func:`attention_logits` (see there for ``X_prev`` and
    ``log_scale``). The fix :math:`A - \tfrac1T\mathbf 1\mathbf 1^\top` is applied by
    :func:`forward`, not here. Cost of the softmax ``O(T^2)`` plus the logits'.
    References: [1]_, [2]_.
    """
    return softmax_rows(attention_logits(rng, config, X_prev, log_scale))


# --------------------------------------------------------------------------------------
# Forward pass
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NetworkTrace:
    r"""Per-layer statistics of one forward pass; arrays have length ``depth``, entry
    ``l - 1`` for layer ``l``.

    ``sr_X``: :math:`\mathrm{sr}(X_\ell) = \|X_\ell\|_F^2 / \|X_\ell\|_2^2`.
    ``sr_Sigma``: :math:`\mathrm{sr}(\Sigma_\ell) = \sum_i s_i^4 / s_1^4`,
    :math:`\Sigma_\ell = X_\ell X_\ell^\top`.
    ``sr_X_over_T``, ``sr_Sigma_over_T``: the same divided by ``T``.
    ``frob_A_product``: :math:`\|A_\ell \cdots A_1\|_F^2` (the fixed
    :math:`A^\perp`'s when ``config.fixed``).
    ``frob_A_product_scaled``: :math:`T^{\ell-1} \|A_\ell \cdots A_1\|_F^2`.
    ``log_frob_X``: :math:`\log \|X_\ell\|_F` (the scalar divided out each layer).
    ``sr_X_edge_over_T``, ``sr_Sigma_edge_over_T``: with ``forward(..., edge=True)`` and
    ``config.fixed`` (no outlier), the stable ranks over ``T`` read through the edge
    :math:`\hat x_*` instead of :math:`s_1^2` (:func:`numerics.edge.edge_stable_ranks`);
    ``nan`` otherwise.

    With ``keep_matrices=True``: ``X0`` (``T x d``), ``As`` (the ``A_l`` actually used,
    fixed ones if ``fixed``), ``Ws`` (the value weights) and ``X_normalised``
    (:math:`\hat X_\ell = X_\ell / \|X_\ell\|_F`); otherwise ``None``.
    """

    config: NetworkConfig
    sr_X: np.ndarray
    sr_Sigma: np.ndarray
    frob_A_product: np.ndarray
    frob_A_product_scaled: np.ndarray
    sr_X_over_T: np.ndarray
    sr_Sigma_over_T: np.ndarray
    log_frob_X: np.ndarray
    sr_X_edge_over_T: np.ndarray | None = None
    sr_Sigma_edge_over_T: np.ndarray | None = None
    X0: np.ndarray | None = field(default=None, repr=False)
    As: list[np.ndarray] | None = field(default=None, repr=False)
    Ws: list[np.ndarray] | None = field(default=None, repr=False)
    X_normalised: list[np.ndarray] | None = field(default=None, repr=False)


_LN_EPS = 1e-5  # PyTorch's LayerNorm default


def layer_norm(X: np.ndarray, eps: float = _LN_EPS) -> np.ndarray:
    r"""LayerNorm per token over the width, no affine part (the paper's code, at
    initialisation): :math:`(x - \bar x)/\sqrt{\overline{(x-\bar x)^2} + \epsilon}` row by
    row. ``eps`` (PyTorch's default) only guards a zero row."""
    centred = X - X.mean(axis=1, keepdims=True)
    return centred / np.sqrt(np.mean(centred * centred, axis=1, keepdims=True) + eps)


def forward(rng: np.random.Generator, config: NetworkConfig,
            keep_matrices: bool = False, edge: bool = False, ranks: bool = True) -> NetworkTrace:
    r"""One forward pass :math:`X_\ell = A_\ell X_{\ell-1} W_\ell`, ``l = 1..depth``.

    .. math::

        X_\ell = A_\ell \cdots A_1\, X_0\, W_1 \cdots W_\ell \quad(\text{Markov surrogate}),
        \qquad
        \mathrm{sr}(X_\ell) = \frac{\|X_\ell\|_F^2}{\|X_\ell\|_2^2},\quad
        \mathrm{sr}(\Sigma_\ell) = \frac{\sum_i s_i(X_\ell)^4}{s_1(X_\ell)^4} .

    ``edge=True`` (with ``config.fixed``, non-causal: no outlier) also reads each layer's
    stable ranks through the edge (``sr_X_edge_over_T``, ``sr_Sigma_edge_over_T``), from
    the same Lanczos run widened to :data:`numerics.edge.EDGE_K` vectors.

    ``ranks=False`` skips the stable ranks (``nan``): for callers that need the
    activations and products only (the value gradients), it saves each layer's Gram
    matrix and Lanczos run.

    Draw order: ``X0``; then per layer the attention randomness (Markov logits, or the
    key-query weights) followed by ``W_l``. Changing ``fixed`` alone keeps every draw.

    Scaling: entries of :math:`X_\ell` grow like :math:`(\sigma_V \sqrt d)^\ell`; each
    layer is divided by the scalar :math:`\|X_\ell\|_F` (kept in ``log_frob_X``), which
    leaves the stable ranks unchanged (they are scale free) and is put back into the
    key-query logits (:math:`M_\ell` uses the true :math:`X_{\ell-1}`), so the network is
    exactly the unnormalised one. The product :math:`A_\ell \cdots A_1` is tracked
    unnormalised (one ``T x T`` matmul per layer): :math:`\|\cdot\|_F^2 \le T` for
    products of Markov matrices, about :math:`\kappa^{2\ell} T^{1-\ell}` with the fix,
    within float64 range for ``depth <= 64``.

    Cost per layer ``O(T^2 d + T d^2 + T^3)`` (matmuls and Gram matrix), plus the
    key-query logits (``O(T d^2)`` merged) and one Lanczos for :math:`s_1(X_\ell)`
    (:func:`numerics.statistics.top_singular_values`); total
    ``O(L (T d^2 + T^3))``. References: [1]_ (rank collapse in depth and width).
    """
    _check_config(config)
    X0 = isometric_input(rng, config.T, config.d)  # X0 X0^T = I_T
    net = _Pass(config, X0, keep_matrices, edge, ranks)
    for ell in range(config.depth):
        A = attention_matrix(rng, config, net.X_hat, net.log_c)
        W = gaussian_matrix(rng, config.d, config.d, config.sigma_V)  # W_ab ~ N(0, sigma_V^2)
        net.step(ell, A, W, net.X_hat @ W)  # X_hat W: O(T d^2)
    return net.trace()


def forward_twins(rng: np.random.Generator, config: NetworkConfig, edge: bool = False,
                  keep_matrices: bool = False, ranks: bool = True) -> tuple[NetworkTrace, NetworkTrace]:
    r"""The network of ``config`` standard and fixed (:math:`A_\ell^\perp` at every layer)
    on the same draws, each drawn once: ``(forward(.., fixed=False), forward(.., fixed=True,
    edge=edge))`` of one stream, in :func:`forward`'s draw order (``keep_matrices`` and
    ``ranks`` as there, for both).

    For an attention of :data:`SHARED_DRAWS` (its logits do not read the activations) the
    two networks share ``X0``, every :math:`A_\ell` before the fix, every :math:`W_\ell`
    and the first layer's :math:`X_0 W_1`: one isometric input (a QR, ``O(d T^2)``), one
    set of draws and one ``O(T d^2)`` product fewer than two passes. The standard network
    is the one :func:`forward` draws from the same stream, number for number.
    """
    _check_config(config)
    if config.attention not in SHARED_DRAWS:
        raise ValueError(f"parameter 'config' must have an attention of {SHARED_DRAWS} for "
                         f"twin networks (its logits read no activations), got {config.attention!r}")
    X0 = isometric_input(rng, config.T, config.d)
    std = _Pass(dataclasses.replace(config, fixed=False), X0, keep_matrices, ranks=ranks)
    fix = _Pass(dataclasses.replace(config, fixed=True), X0, keep_matrices, edge, ranks)
    for ell in range(config.depth):
        A = attention_matrix(rng, std.config)  # A_l before the fix, the same for both
        W = gaussian_matrix(rng, config.d, config.d, config.sigma_V)
        first = X0 @ W if ell == 0 else None  # X_0 W_1: both networks start from X_0
        for net in (std, fix):
            net.step(ell, A, W, first if first is not None else net.X_hat @ W)
    return std.trace(), fix.trace()


def _check_config(config: object) -> None:
    if not isinstance(config, NetworkConfig):
        raise ValueError(f"parameter 'config' must be a NetworkConfig, got {type(config).__name__}")


class _Pass:
    r"""One network's state through :func:`forward`'s layers: :math:`\hat X_{\ell}`, the
    log of the scalar divided out, the product :math:`A_\ell \cdots A_1` and the
    per-layer statistics."""

    def __init__(self, config: NetworkConfig, X0: np.ndarray, keep_matrices: bool = False,
                 edge: bool = False, ranks: bool = True) -> None:
        self.config, self.X0, self.edge, self.ranks = config, X0, edge, ranks
        self.X_hat, self.log_c = X0, 0.0  # X_{l-1} = e^{log_c} X_hat
        self.P: np.ndarray | None = None  # A_l ... A_1 (A_1 itself at l = 1: no identity matmul)
        self.stats = {k: np.full(config.depth, np.nan) for k in (
            "sr_X", "sr_Sigma", "frob", "log_frob_X", "sr_X_edge", "sr_Sigma_edge")}
        self.kept: tuple[list, list, list] | None = ([], [], []) if keep_matrices else None

    def step(self, ell: int, A: np.ndarray, W: np.ndarray, XW: np.ndarray) -> None:
        r"""Layer ``ell`` from its attention ``A`` (before the fix), its value weights ``W``
        and :math:`\hat X_{\ell-1} W` (``XW``)."""
        config = self.config
        A = _fixed(A, config)
        Y = A @ XW  # X_l / e^{log_c} = A X_hat W, O(T^2 d)
        if config.residual != "none":
            # skip: X + A X W (/ sqrt(d) upscaled); linear in X, so the scale e^{log_c} factors out
            Y = self.X_hat + (Y / math.sqrt(config.d) if config.residual == "upscaled" else Y)
        if config.layer_norm:
            # X_l = LN(e^{log_c} Y): LN is scale free but for its eps, which acts on Y as
            # eps e^{-2 log_c}; after it X_l itself is O(1): log_c restarts at 0
            Y = layer_norm(Y, eps=math.exp(min(math.log(_LN_EPS) - 2.0 * self.log_c, 700.0)))
            self.log_c = 0.0
        nrm = float(np.linalg.norm(Y))
        if nrm == 0.0 or not math.isfinite(nrm):
            raise FloatingPointError(f"||X_{ell + 1}||_F is {nrm}: cannot normalise")
        self.X_hat = Y / nrm  # ||X_hat||_F = 1
        self.log_c += math.log(nrm)  # log ||X_l||_F
        self.P = A.copy() if self.P is None else A @ self.P  # A_l ... A_1, O(T^3)
        if self.ranks:  # ranks=False leaves them nan
            _stable_ranks_into(self.stats, ell, self.X_hat, config, self.edge)
        self.stats["frob"][ell] = frobenius_sq(self.P)  # ||A_l ... A_1||_F^2
        self.stats["log_frob_X"][ell] = self.log_c
        if self.kept is not None:
            for kept, x in zip(self.kept, (A, W, self.X_hat)):
                kept.append(x)

    def trace(self) -> NetworkTrace:
        kept = (self.X0, *self.kept) if self.kept is not None else (None,) * 4
        return _trace(self.config, self.stats, *kept)


def _fixed(A: np.ndarray, config: NetworkConfig) -> np.ndarray:
    r"""``A`` itself, or with ``config.fixed`` the fix: :math:`A - \tfrac1T\mathbf 1\mathbf 1^\top`,
    or :math:`A - C_T` for causal attention (the Cesaro matrix, :math:`(C_T)_{ij} = 1/i` for
    :math:`j \le i`; claim ``causal.cesaro``)."""
    if not config.fixed:
        return A
    if config.attention == "causal":
        T = config.T
        return A - np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    return remove_outlier(A)  # A^perp = A - 11^T / T


def _stable_ranks_into(stats: dict, ell: int, X_hat: np.ndarray, config: NetworkConfig,
                       edge: bool) -> None:
    """Layer ``ell``'s stable ranks into ``stats``; with ``edge`` (the fix, non-causal: no
    outlier) also read through the top singular values."""
    if edge and config.fixed and config.attention != "causal":
        (stats["sr_X"][ell], stats["sr_Sigma"][ell], stats["sr_X_edge"][ell],
         stats["sr_Sigma_edge"][ell]) = edge_stable_ranks(X_hat)
    else:
        stats["sr_X"][ell], stats["sr_Sigma"][ell] = stable_ranks(X_hat)


def _trace(config: NetworkConfig, stats: dict, X0, As, Ws, Xn) -> NetworkTrace:
    """The per-layer statistics as a :class:`NetworkTrace` (``/ T`` and ``T^(l-1)``
    scalings applied)."""
    T, L = config.T, config.depth
    scaled = stats["frob"] * float(T) ** np.arange(L)  # T^{l-1} ||A_l...A_1||_F^2
    return NetworkTrace(
        config=config,
        sr_X=stats["sr_X"],
        sr_Sigma=stats["sr_Sigma"],
        frob_A_product=stats["frob"],
        frob_A_product_scaled=scaled,
        sr_X_over_T=stats["sr_X"] / T,
        sr_Sigma_over_T=stats["sr_Sigma"] / T,
        log_frob_X=stats["log_frob_X"],
        sr_X_edge_over_T=stats["sr_X_edge"] / T,
        sr_Sigma_edge_over_T=stats["sr_Sigma_edge"] / T,
        X0=X0, As=As, Ws=Ws, X_normalised=Xn,
    )
