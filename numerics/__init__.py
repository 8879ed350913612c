"""Numerics: samplers of finite-size random matrices and the statistics measured on them.

Never imports ``verification``. The names below are imported on first use (PEP 562):
importing one submodule (``gapverify.numerics.statistics``) does not load every
experiment family and scipy.stats with it.
"""
import importlib

_EXPORTS = {
    "EXPERIMENTS": "experiments",
    "ExponentialEntries": "samplers", "LogNormalEntries": "samplers", "ScipyEntries": "samplers",
    "isometric_input": "samplers", "markov_matrix": "samplers", "remove_outlier": "samplers",
    "softmax_rows": "samplers",
    "gram_stable_rank": "statistics", "stable_rank": "statistics",
    "top_singular_values": "statistics",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
