"""Numerics: samplers of finite-size random matrices and the statistics measured on them.

Never imports ``verification``.
"""
from gapverify.numerics.experiments import EXPERIMENTS
from gapverify.numerics.samplers import (
    ExponentialEntries, LogNormalEntries, ScipyEntries, isometric_input, markov_matrix,
    remove_outlier, softmax_rows,
)
from gapverify.numerics.statistics import gram_stable_rank, stable_rank, top_singular_values

__all__ = ["EXPERIMENTS", "ExponentialEntries", "LogNormalEntries", "ScipyEntries",
           "isometric_input", "markov_matrix", "remove_outlier", "softmax_rows",
           "gram_stable_rank", "stable_rank", "top_singular_values"]
