r"""Forward passes of the attention-only networks of :mod:`numerics.networks`: one network
(:func:`forward`), or a standard network and its fixed twin on the same draws
(:func:`forward_twins`), with the per-layer statistics of :class:`NetworkTrace`.

.. math::

    X_\ell = A_\ell X_{\ell-1} W_\ell \quad(\text{or } X + A X W,\ \mathrm{LN}(\cdot)),
    \qquad \mathrm{sr}(X_\ell) = \|X_\ell\|_F^2 / \|X_\ell\|_2^2 .

Randomness comes only from the :class:`numpy.random.Generator` passed in.

References
----------
.. [1] A. Naderi, T. Nait Saada, J. Tanner, "Mind the Gap: a Spectral Analysis of Rank
   Collapse and Signal Propagation in Attention Layers", ICML 2025, arXiv:2410.07799.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from gapverify.numerics.edge import edge_stable_ranks
from gapverify.numerics.networks import SHARED_DRAWS, NetworkConfig, attention_matrix
from gapverify.numerics.samplers import gaussian_matrix, isometric_input, remove_outlier
from gapverify.numerics.statistics import frobenius_sq, stable_ranks

__all__ = ["NetworkTrace", "forward", "forward_twins", "layer_norm"]


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
    key-query weights) followed by ``W_l``. Where nothing else reads ``X0`` or ``W_1``
    (Markov or causal logits, no skip connection, ``keep_matrices=False``) neither is
    drawn: the first layer's :math:`X_0 W_1` is drawn in ``W_1``'s place as one ``T x d``
    Gaussian, which has its law (:func:`_first_product_direct`). Changing ``fixed`` alone
    keeps every draw.

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
    direct = _first_product_direct(config, keep_matrices)
    X0 = None if direct else isometric_input(rng, config.T, config.d)  # X0 X0^T = I_T
    net = _Pass(config, X0, keep_matrices, edge, ranks)
    for ell in range(config.depth):
        A = attention_matrix(rng, config, net.X_hat, net.log_c)
        net.step(ell, A, *_value_product(rng, config, net.X_hat, direct and ell == 0))
    return net.trace()


def forward_twins(rng: np.random.Generator, config: NetworkConfig, edge: bool = False,
                  keep_matrices: bool = False, ranks: bool = True) -> tuple[NetworkTrace, NetworkTrace]:
    r"""The network of ``config`` standard and fixed (:math:`A_\ell^\perp` at every layer)
    on the same draws, each drawn once: ``(forward(.., fixed=False), forward(.., fixed=True,
    edge=edge))`` of one stream, in :func:`forward`'s draw order (``keep_matrices`` and
    ``ranks`` as there, for both).

    For an attention of :data:`SHARED_DRAWS` (its logits do not read the activations) the
    two networks share ``X0``, every :math:`A_\ell` before the fix, every :math:`W_\ell`
    and the first layer's :math:`X_0 W_1` (drawn directly where :func:`forward` does): one
    set of draws and one ``O(T d^2)`` product fewer than two passes. Without skip or
    LayerNorm both are :math:`X_\ell = P_\ell\, X_0 W_1 \cdots W_\ell`, :math:`P_\ell` each
    network's product of attentions: the chain of weights is multiplied once, one
    ``O(T d^2)`` product a layer fewer again, and the first fixed layer is
    :math:`A X_0 W_1 - F X_0 W_1` (``F`` what the fix removes), ``O(T d)`` instead of
    ``O(T^2 d)``. The standard network is the one :func:`forward` draws from the same
    stream: number for number with skip or LayerNorm, to rounding (the products taken in
    another order) without.
    """
    _check_config(config)
    if config.attention not in SHARED_DRAWS:
        raise ValueError(f"parameter 'config' must have an attention of {SHARED_DRAWS} for "
                         f"twin networks (its logits read no activations), got {config.attention!r}")
    direct = _first_product_direct(config, keep_matrices)
    X0 = None if direct else isometric_input(rng, config.T, config.d)
    std = _Pass(replace(config, fixed=False), X0, keep_matrices, ranks=ranks)
    fix = _Pass(replace(config, fixed=True), X0, keep_matrices, edge, ranks)
    # without skip or LayerNorm both networks are X_l = P_l X_0 W_1 ... W_l: one chain of weights
    chain = _WeightChain() if config.residual == "none" and not config.layer_norm else None
    for ell in range(config.depth):
        A = attention_matrix(rng, std.config)  # A_l before the fix, the same for both
        if ell == 0:  # both networks start from X_0: X_0 W_1 once
            W, XW = _value_product(rng, config, X0, direct)
        else:
            W = gaussian_matrix(rng, config.d, config.d, config.sigma_V)
        if chain is not None:
            M_hat, log_m = chain.extend(XW if ell == 0 else W)
            Y_std = std.step_through_chain(ell, A, W, M_hat, log_m)
            # the first layer's fixed Y: (A - F) M = A M - F M, F M in O(T d) (_removed_part)
            fix.step_through_chain(ell, A, W, M_hat, log_m,
                                   Y=Y_std - _removed_part(M_hat, config) if ell == 0 else None)
            continue
        products = (XW, XW) if ell == 0 else (std.X_hat @ W, fix.X_hat @ W)
        for net, XW_net in zip((std, fix), products):
            net.step(ell, A, W, XW_net)
    return std.trace(), fix.trace()


class _WeightChain:
    r""":math:`M_\ell = X_0 W_1 \cdots W_\ell`, normalised: :math:`\hat M_\ell` with
    :math:`\|\hat M_\ell\|_F = 1` and :math:`\log \|M_\ell\|_F`. Twin networks without skip
    or LayerNorm are :math:`X_\ell = P_\ell M_\ell` with their own products
    :math:`P_\ell = A_\ell \cdots A_1` (fixed: :math:`A^\perp`'s) and one chain of weights
    between them: one ``O(T d^2)`` product a layer instead of two."""

    def __init__(self) -> None:
        self.M_hat: np.ndarray | None = None
        self.log_m = 0.0

    def extend(self, factor: np.ndarray) -> tuple[np.ndarray, float]:
        r"""The chain one layer longer: ``factor`` is :math:`X_0 W_1` at the first layer, then
        :math:`W_\ell`."""
        M = factor if self.M_hat is None else self.M_hat @ factor  # M_l = M_{l-1} W_l, O(T d^2)
        nrm = float(np.linalg.norm(M))
        if nrm == 0.0 or not math.isfinite(nrm):
            raise FloatingPointError(f"||X_0 W_1 ... W_l||_F is {nrm}: cannot normalise")
        self.M_hat, self.log_m = M / nrm, self.log_m + math.log(nrm)
        return self.M_hat, self.log_m


def _removed_part(M: np.ndarray, config: NetworkConfig) -> np.ndarray:
    r""":math:`F M` for the matrix :math:`F` the fix removes (:func:`_fixed`):
    :math:`\tfrac1T\mathbf 1\mathbf 1^\top M` (every row the column means of ``M``), or for
    causal attention :math:`C_T M` (row ``i`` the mean of rows ``1..i``); ``O(T d)``."""
    if config.attention == "causal":
        return np.cumsum(M, axis=0) / np.arange(1, M.shape[0] + 1)[:, None]  # (C_T M)_i = mean_{j<=i} M_j
    return M.mean(axis=0, keepdims=True)  # 1 1^T M / T, broadcast over the rows


def _first_product_direct(config: NetworkConfig, keep_matrices: bool) -> bool:
    r"""Whether the first layer's :math:`X_0 W_1` is drawn as one ``T x d`` matrix of i.i.d.
    :math:`N(0, \sigma_V^2)` entries instead of ``X0`` (a QR, ``O(d T^2)``), ``W_1``
    (``d x d``) and their product (``O(T d^2)``). Exact in law: ``X0`` has orthonormal rows,
    :math:`X_0 = [I_T\ 0]\,Q` with :math:`Q` orthogonal, and :math:`Q W_1` has the law of
    :math:`W_1` (its columns are isotropic Gaussians), so :math:`X_0 W_1` has the law of
    :math:`W_1`'s first ``T`` rows. Done where nothing else reads ``X0`` or ``W_1``: logits
    that read no activations (:data:`numerics.networks.SHARED_DRAWS`), no skip connection,
    no kept matrices."""
    return config.attention in SHARED_DRAWS and config.residual == "none" and not keep_matrices


def _value_product(rng: np.random.Generator, config: NetworkConfig, X_hat: np.ndarray | None,
                   direct: bool) -> tuple[np.ndarray | None, np.ndarray]:
    r"""A layer's value weights and :math:`\hat X_{\ell-1} W_\ell`; with ``direct`` (the
    first layer, :func:`_first_product_direct`) no ``W_1``: ``(None, X_0 W_1)`` drawn whole."""
    if direct:
        return None, gaussian_matrix(rng, config.T, config.d, config.sigma_V)  # X_0 W_1 ~ N(0, sigma_V^2)
    W = gaussian_matrix(rng, config.d, config.d, config.sigma_V)  # W_ab ~ N(0, sigma_V^2)
    return W, X_hat @ W  # O(T d^2)


def _check_config(config: object) -> None:
    if not isinstance(config, NetworkConfig):
        raise ValueError(f"parameter 'config' must be a NetworkConfig, got {type(config).__name__}")


class _Pass:
    r"""One network's state through :func:`forward`'s layers: :math:`\hat X_{\ell}`, the
    log of the scalar divided out, the product :math:`A_\ell \cdots A_1` and the
    per-layer statistics."""

    def __init__(self, config: NetworkConfig, X0: np.ndarray | None, keep_matrices: bool = False,
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
        A = self._extend_product(A)
        Y = A @ XW  # X_l / e^{log_c} = A X_hat W, O(T^2 d)
        if config.residual != "none":
            # skip: X + A X W (/ sqrt(d) upscaled); linear in X, so the scale e^{log_c} factors out
            Y = self.X_hat + (Y / math.sqrt(config.d) if config.residual == "upscaled" else Y)
        if config.layer_norm:
            # X_l = LN(e^{log_c} Y): LN is scale free but for its eps, which acts on Y as
            # eps e^{-2 log_c}; after it X_l itself is O(1): log_c restarts at 0
            Y = layer_norm(Y, eps=math.exp(min(math.log(_LN_EPS) - 2.0 * self.log_c, 700.0)))
            self.log_c = 0.0
        self._record(ell, A, W, Y, self.log_c)

    def step_through_chain(self, ell: int, A: np.ndarray, W: np.ndarray, M_hat: np.ndarray,
                           log_m: float, Y: np.ndarray | None = None) -> np.ndarray:
        r"""Layer ``ell`` of a network without skip or LayerNorm as
        :math:`X_\ell = P_\ell M_\ell` (:class:`_WeightChain`): the product takes ``A``
        (before the fix), then :math:`Y = P_\ell \hat M_\ell` (``O(T^2 d)``) unless given.
        The same network as :meth:`step`'s, to rounding. Returns ``Y``
        (:math:`X_\ell / \|M_\ell\|_F`)."""
        A = self._extend_product(A)
        if Y is None:
            Y = self.P @ M_hat  # X_l / ||M_l||_F = P_l M_hat_l, O(T^2 d)
        self._record(ell, A, W, Y, log_m)
        return Y

    def _extend_product(self, A: np.ndarray) -> np.ndarray:
        r"""The layer's attention ``A`` (before the fix) as this network uses it (:func:`_fixed`),
        the product :math:`A_\ell \cdots A_1` extended by it."""
        A = _fixed(A, self.config)
        self.P = A.copy() if self.P is None else A @ self.P  # A_l ... A_1, O(T^3)
        return A

    def _record(self, ell: int, A: np.ndarray, W: np.ndarray | None, Y: np.ndarray,
                log_scale: float) -> None:
        r"""Layer ``ell``'s activations :math:`X_\ell = e^{\text{log\_scale}}\,Y` (``A``
        the fixed attention used): normalised, and their statistics recorded."""
        nrm = float(np.linalg.norm(Y))
        if nrm == 0.0 or not math.isfinite(nrm):
            raise FloatingPointError(f"||X_{ell + 1}||_F is {nrm}: cannot normalise")
        self.X_hat = Y / nrm  # ||X_hat||_F = 1
        self.log_c = log_scale + math.log(nrm)  # log ||X_l||_F
        if self.ranks:  # ranks=False leaves them nan
            _stable_ranks_into(self.stats, ell, self.X_hat, self.config, self.edge)
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
