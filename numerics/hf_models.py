r"""Real transformers at random initialisation (``transformers``, offline): BERT-base,
RoBERTa-base and GPT-2 built from their config classes with random weights, eager
attention, and per-layer spectral statistics with and without the fix.

Nothing is downloaded: every model is built from a config object (``BertConfig``,
``RobertaConfig``, ``GPT2Config``) with the library's own random initialisation
(``initializer_range``, BERT's and GPT-2's 0.02 by default), and ``HF_HUB_OFFLINE=1`` is set
before ``transformers`` is imported.

torch and transformers are optional (``pip install gapverify[models]``) and imported
lazily, inside the functions that need them: importing this module (the claim registry
does, through :mod:`numerics.experiments`) never imports torch. :func:`models_available`
asks ``importlib`` whether both are installed without importing them.

Inputs. Two per replicate, both drawn from the replicate's ``numpy.random.Generator``:

* ``tok``: token ids uniform on the vocabulary (special and padding ids excluded);
* ``iso``: ``inputs_embeds`` ``X_0 = \sqrt d\, Q``, ``Q`` the first ``T`` rows of a
  Haar-orthogonal ``d x d`` matrix (:func:`numerics.samplers.isometric_input`), so
  ``X_0 X_0^\top = d\, I_T``: the suite's isometric input scaled so that each row has the
  norm ``\sqrt d`` a LayerNorm output has (entries of unit mean square). For ``T > d``
  (possible with GPT-2 only) the columns are orthonormal instead: ``X_0^\top X_0 = T I_d``.
  BERT and RoBERTa add their (small, ``N(0, 0.02^2)``) position and token-type embeddings
  and a LayerNorm, GPT-2 its position embeddings, to ``inputs_embeds``.

Weights are initialised by torch from ``torch.manual_seed(int(rng.integers(2**63)))``
inside :func:`torch.random.fork_rng` (the global torch stream is left as it was), so a
replicate's numbers depend on the recorded root seed and the torch/transformers versions
only. The standard and the fixed network share every weight and input.

The fix. Each model module's ``eager_attention_forward`` (the function the eager
implementation calls) is replaced for the duration of a forward pass by one that applies
``P = A - E`` to the values instead of the softmax probabilities ``A``: ``E = 11^T/T`` for
the bidirectional encoders, ``E = C_T`` (Cesaro: lower triangular, ``(C_T)_{ij} = 1/i``,
the mean of causal attention, claim ``causal.cesaro``) for GPT-2. With
``output_attentions=True`` the models then return ``P``.

Statistics per layer ``l`` and head (means over heads are kept per layer):

* ``s1``: ``s_1`` of the matrix applied to the values (``A``, or ``P`` with the fix);
* ``sqrtT_s2``: ``\sqrt T s_2`` of it;
* ``frob``: ``\|A - E\|_F^2`` of the layer's softmax matrix ``A`` (with the fix ``= \|P\|_F^2``);
  for GPT-2 also ``frob/H_T`` (``H_T = \|C_T\|_F^2``, the normalisation of ``causal.cesaro``);
* ``sr_X``, ``sr_Sigma``: ``\mathrm{sr}(X_l)`` and ``\mathrm{sr}(\Sigma_l)``,
  ``\Sigma_l = X_l X_l^\top`` (:func:`numerics.statistics.stable_ranks`, the suite's
  definition), ``X_l`` the hidden states after block ``l`` (``l = 0``: the embedding output).

Top singular values come from Lanczos (:func:`numerics.statistics.top_singular_values`,
PROPACK): measured at ``T = 512`` on one core, 2.6 ms per head for ``s_1, s_2`` against
71 ms for LAPACK's full ``svdvals``.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import math
import os
from typing import Mapping

import numpy as np

from gapverify.numerics.samplers import isometric_input
from gapverify.numerics.statistics import frobenius_sq, stable_ranks, top_singular_values

__all__ = ["MODEL_NAMES", "INSTALL_HINT", "models_available", "build_model", "fixed_attention",
           "cesaro_matrix", "cesaro_singular_values", "token_ids", "isometric_embeddings",
           "forward_statistics", "measure_model", "model_experiment", "unavailable_experiment",
           "INPUTS", "VARIANTS"]

#: The three configurations, by the name used in claim ids (``models.bert``, ...).
MODEL_NAMES = ("bert", "roberta", "gpt2")
INSTALL_HINT = "pip install gapverify[models]"
INPUTS = ("tok", "iso")
VARIANTS = ("std", "fix")
#: where each model's eager attention function lives
_MODULES = {"bert": "transformers.models.bert.modeling_bert",
            "roberta": "transformers.models.roberta.modeling_roberta",
            "gpt2": "transformers.models.gpt2.modeling_gpt2"}
_CAUSAL = {"bert": False, "roberta": False, "gpt2": True}


def models_available() -> bool:
    """Whether torch and transformers are installed (asked of ``importlib``; nothing is
    imported)."""
    try:
        return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))
    except (ImportError, ValueError):  # a finder that refuses them, a broken install
        return False


def _torch():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach the hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as exc:  # pragma: no cover - exercised without torch
        raise ImportError(f"torch and transformers are needed here ({INSTALL_HINT})") from exc
    return torch


def _config(name: str, depth: int, initializer_range: float):
    """The base configuration of ``name`` with ``depth`` layers, eager attention."""
    _torch()
    from transformers import BertConfig, GPT2Config, RobertaConfig

    common = dict(initializer_range=float(initializer_range), attn_implementation="eager")
    if name == "bert":  # bert-base-uncased: BertConfig's defaults
        return BertConfig(num_hidden_layers=int(depth), **common)
    if name == "roberta":  # roberta-base's config.json
        return RobertaConfig(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1,
                             layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                             num_hidden_layers=int(depth), **common)
    if name == "gpt2":  # gpt2 (124M): GPT2Config's defaults
        return GPT2Config(n_layer=int(depth), **common)
    raise ValueError(f"parameter 'model' must be one of {', '.join(MODEL_NAMES)}, got {name!r}")


def max_tokens(name: str) -> int:
    """The longest sequence the configuration's position embeddings allow."""
    return 1024 if name == "gpt2" else 512


def build_model(name: str, depth: int, initializer_range: float, seed: int):
    """``name``'s base model (no task head) with ``depth`` layers and random weights drawn
    by torch from ``seed`` (global torch state restored afterwards), in eval mode."""
    torch = _torch()
    from transformers import BertModel, GPT2Model, RobertaModel

    cfg = _config(name, depth, initializer_range)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        if name == "gpt2":
            model = GPT2Model(cfg)
        else:
            model = (BertModel if name == "bert" else RobertaModel)(cfg, add_pooling_layer=False)
    return model.eval()


@functools.lru_cache(maxsize=16)
def cesaro_matrix(T: int) -> np.ndarray:
    """:math:`C_T`: lower triangular, :math:`(C_T)_{ij} = 1/i` for :math:`j \\le i` (1-based)."""
    C = np.tril(np.ones((T, T)))
    return C / np.arange(1, T + 1)[:, None]


@functools.lru_cache(maxsize=16)
def cesaro_singular_values(T: int) -> tuple[float, float]:
    """:math:`s_1(C_T), s_2(C_T)` (deterministic)."""
    s = top_singular_values(cesaro_matrix(T), 2)
    return float(s[0]), float(s[1])


def _fixed_eager(kind: str):
    """An eager attention function applying ``A - E`` (``kind``: ``uniform`` or
    ``cesaro``) to the values; same signature and return as transformers'."""
    torch = _torch()

    def eager_fixed(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
        if scaling is None:
            scaling = query.size(-1) ** -0.5
        w = torch.matmul(query, key.transpose(-1, -2)) * scaling
        if attention_mask is not None:
            w = w + attention_mask[..., : key.shape[-2]]
        A = torch.nn.functional.softmax(w, dim=-1)
        Tq, Tk = A.shape[-2], A.shape[-1]
        if kind == "none":  # the library's eager attention, reimplemented (tests)
            E = torch.zeros(Tq, Tk, dtype=A.dtype)
        elif kind == "cesaro":
            E = torch.tril(torch.ones(Tq, Tk, dtype=A.dtype)) / torch.arange(
                1, Tq + 1, dtype=A.dtype)[:, None]
        else:
            E = torch.full((Tq, Tk), 1.0 / Tk, dtype=A.dtype)
        P = (A - E).to(value.dtype)
        P = torch.nn.functional.dropout(P, p=dropout, training=module.training)
        out = torch.matmul(P, value).transpose(1, 2).contiguous()
        return out, P

    return eager_fixed


@contextlib.contextmanager
def fixed_attention(name: str, kind: str | None = None):
    """Inside the block, ``name``'s eager attention applies ``A - 11^T/T`` (BERT, RoBERTa)
    or ``A - C_T`` (GPT-2) to the values. Needs a transformers whose model modules route
    eager attention through a module-level ``eager_attention_forward`` (the attention
    interface); otherwise a ``RuntimeError`` says so."""
    _torch()
    mod = importlib.import_module(_MODULES[name])
    original = getattr(mod, "eager_attention_forward", None)
    if original is None:
        import transformers

        raise RuntimeError(f"transformers {transformers.__version__}: {mod.__name__} has no "
                           "eager_attention_forward to patch; the fix needs a version with the "
                           "attention interface (tested with 5.24)")
    kind = kind or ("cesaro" if _CAUSAL[name] else "uniform")
    mod.eager_attention_forward = _fixed_eager(kind)
    try:
        yield
    finally:
        mod.eager_attention_forward = original


def token_ids(rng: np.random.Generator, T: int, name: str, vocab_size: int) -> np.ndarray:
    """``T`` token ids uniform on the vocabulary, special ids excluded (BERT: 0..998
    are [PAD], [unused*], [UNK], [CLS], [SEP], [MASK]; RoBERTa: 0..3 are <s>, <pad>, </s>,
    <unk>; GPT-2 has one special id, the last)."""
    low = {"bert": 999, "roberta": 4, "gpt2": 0}[name]
    high = vocab_size - 1 if name == "gpt2" else vocab_size
    return rng.integers(low, high, size=T)


def isometric_embeddings(rng: np.random.Generator, T: int, d: int) -> np.ndarray:
    """``sqrt(d) Q``: ``Q Q^T = I_T`` (``T <= d``) or ``Q^T Q = (T/d) I_d`` (``T > d``), so
    that every row has mean square entry 1 on average (module docstring)."""
    if T <= d:
        return math.sqrt(d) * isometric_input(rng, T, d)
    return math.sqrt(T) * isometric_input(rng, d, T).T  # orthonormal columns, scaled


def _head_statistics(P: np.ndarray, E: np.ndarray, fixed: bool) -> tuple[float, float, float]:
    """``s_1(P)``, ``sqrt(T) s_2(P)`` and ``||A - E||_F^2`` of one head (``A = P`` unless
    ``fixed``, then ``A - E = P``)."""
    T = P.shape[0]
    s = top_singular_values(P, 2)
    frob = frobenius_sq(P) if fixed else frobenius_sq(P - E)
    return float(s[0]), float(s[1] * math.sqrt(T)), frob


def forward_statistics(model, name: str, inputs: Mapping[str, np.ndarray], fixed: bool) -> dict:
    """One forward pass (``inputs``: ``input_ids`` or ``inputs_embeds``, without the batch
    axis) and its per-layer statistics: arrays ``s1``, ``sqrtT_s2``, ``frob`` of shape
    ``(L, H)`` and ``sr_X``, ``sr_Sigma`` of shape ``(L + 1,)``."""
    torch = _torch()
    kw = {}
    if "input_ids" in inputs:
        kw["input_ids"] = torch.as_tensor(np.asarray(inputs["input_ids"])[None, :], dtype=torch.long)
    else:
        kw["inputs_embeds"] = torch.as_tensor(np.asarray(inputs["inputs_embeds"])[None],
                                              dtype=torch.float32)
    ctx = fixed_attention(name) if fixed else contextlib.nullcontext()
    with torch.no_grad(), ctx:
        out = model(**kw, output_attentions=True, output_hidden_states=True)
    attentions = [a[0].double().numpy() for a in out.attentions]
    hidden = [h[0].double().numpy() for h in out.hidden_states]
    L, H, T = len(attentions), attentions[0].shape[0], attentions[0].shape[-1]
    E = cesaro_matrix(T) if _CAUSAL[name] else np.full((T, T), 1.0 / T)
    stats = {k: np.empty((L, H)) for k in ("s1", "sqrtT_s2", "frob")}
    for l, heads in enumerate(attentions):
        for h in range(H):
            stats["s1"][l, h], stats["sqrtT_s2"][l, h], stats["frob"][l, h] = \
                _head_statistics(heads[h], E, fixed)
    sr = np.array([stable_ranks(X) for X in hidden])
    stats["sr_X"], stats["sr_Sigma"] = sr[:, 0], sr[:, 1]
    return stats


def measure_model(name: str, rng: np.random.Generator, T: int, depth: int,
                  initializer_range: float, keep_heads: bool = True) -> dict[str, np.ndarray | float]:
    """Both inputs, standard and fixed, on one model drawn from ``rng``.

    Keys ``{inp}_{var}_{stat}`` (``inp`` in :data:`INPUTS`, ``var`` in :data:`VARIANTS`):
    per-layer arrays (``s1``, ``sqrtT_s2``, ``frob`` averaged over heads, length ``L``;
    ``sr_X``, ``sr_Sigma``, length ``L + 1``); with ``keep_heads`` the ``(L, H)`` arrays as
    ``..._heads``. Scalars (what the claims judge): ``..._first`` (layer 1) and
    ``..._last`` (layer ``L``) of each, and for GPT-2 the ratios to ``C_T``.
    """
    torch = _torch()
    if T > max_tokens(name):
        raise ValueError(f"parameter 'T': {name} has {max_tokens(name)} positions, got T={T}")
    torch.set_num_threads(1)  # the suite's policy: one thread per task (bit-identical numbers)
    torch_seed = int(rng.integers(2**63))
    model = build_model(name, depth, initializer_range, torch_seed)
    d = model.config.hidden_size
    streams = rng.spawn(2)
    inputs = {"tok": {"input_ids": token_ids(streams[0], T, name, model.config.vocab_size)},
              "iso": {"inputs_embeds": isometric_embeddings(streams[1], T, d)}}
    out: dict[str, np.ndarray | float] = {"torch_seed": float(torch_seed % 2**52)}
    H_T = float(np.sum(1.0 / np.arange(1, T + 1)))
    for inp, x in inputs.items():
        for var in VARIANTS:
            st = forward_statistics(model, name, x, fixed=(var == "fix"))
            if _CAUSAL[name]:
                st["frob"] = st["frob"] / H_T  # ||A - C_T||_F^2 / H_T, as causal.cesaro
            for k, v in st.items():
                key = f"{inp}_{var}_{k}"
                if v.ndim == 2:
                    if keep_heads:
                        out[key + "_heads"] = v
                    v = v.mean(axis=1)
                out[key] = v
                out[key + "_first"] = float(v[1] if k.startswith("sr_") else v[0])
                out[key + "_last"] = float(v[-1])
    for inp in INPUTS:  # the fixed matrix's edge on the scale of the theory (fix.spectrum)
        out[f"{inp}_fix_sqrtT_s1_first"] = out[f"{inp}_fix_s1_first"] * math.sqrt(T)
    if _CAUSAL[name]:
        c1, c2 = cesaro_singular_values(T)
        for inp in INPUTS:
            out[f"{inp}_std_s1_over_cesaro"] = out[f"{inp}_std_s1_first"] / c1
            out[f"{inp}_std_s2_over_cesaro"] = out[f"{inp}_std_sqrtT_s2_first"] / (c2 * math.sqrt(T))
    return out


def model_experiment(name: str):
    """The experiment of claim ``models.{name}``: ``f(rng, T, params)``, parameters
    ``depth`` and ``initializer_range``."""
    def experiment(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> dict:
        return measure_model(name, rng, T, int(p["depth"]), float(p["initializer_range"]))

    experiment.__name__ = f"models_{name}"
    experiment.__doc__ = f"{name} at random initialisation: :func:`measure_model`."
    return experiment


def unavailable_experiment(rng: np.random.Generator, T: int, p: Mapping[str, float]) -> dict:
    """What the model claims sample where torch is not installed: nothing (their checks
    are outside their domain there, so no statistic is read)."""
    return {"unavailable": 1.0}
