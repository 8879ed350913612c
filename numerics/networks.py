r"""Attention-only networks at initialisation: their configuration and attention matrices
(the forward passes and per-layer statistics are :mod:`numerics.forward_pass`).

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
from dataclasses import dataclass

import numpy as np

from gapverify.numerics.samplers import LogNormalEntries, gaussian_matrix, softmax_rows
from gapverify.theory.parameters import PARAMETERS

__all__ = [
    "ATTENTIONS",
    "RESIDUALS",
    "INITS",
    "NetworkConfig",
    "attention_logits",
    "attention_matrix",
    "SHARED_DRAWS",
]

#: Attention mechanisms understood by :class:`NetworkConfig`.
ATTENTIONS: tuple[str, ...] = ("markov", "kq_merged", "kq_separate", "causal")
#: Residual connections (claim variants.normalization, the paper's code):
#: ``"none"`` :math:`X_\ell = A X W`; ``"skip"`` :math:`X + A X W`; ``"upscaled"``
#: :math:`X + A X W/\sqrt d`.
RESIDUALS: tuple[str, ...] = ("none", "skip", "upscaled")
#: Attentions whose logits read no activations: a standard network and a fixed one can
#: share every draw (:func:`numerics.forward_pass.forward_twins`).
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
    which :func:`numerics.forward_pass.forward` divides out to stay in floating-point range) and is ignored by
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
    :func:`numerics.forward_pass.forward`, not here. Cost of the softmax ``O(T^2)`` plus the logits'.
    References: [1]_, [2]_.
    """
    return softmax_rows(attention_logits(rng, config, X_prev, log_scale))
