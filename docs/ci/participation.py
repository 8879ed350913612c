"""The participation ratio of a softmax row: T sum_j A_ij^2 -> e^{s2}."""
import math

import numpy as np
import sympy as sp

from gapverify import Check, Claim, Prediction, profiles


def participation(rng, T, params):
    """One replicate at size T: the mean over the T rows of T sum_j A_ij^2."""
    logits = rng.normal(params["mu"], np.sqrt(params["s2"]), size=(T, T))
    logits -= logits.max(axis=1, keepdims=True)  # a stable softmax
    A = np.exp(logits)
    A /= A.sum(axis=1, keepdims=True)  # A = softmax of each row
    # mean over rows i of T sum_j A_ij^2
    return {"T_sum_sq": float(T * np.mean(np.sum(A**2, axis=1)))}


def limit(p):
    # T sum_j A_ij^2 = mean(Z^2) / mean(Z)^2 with Z = e^M, M ~ N(mu, s2):
    # E Z^2 / (E Z)^2 = e^{2 mu + 2 s2} / e^{2 mu + s2} = e^{s2}
    return sp.exp(p["s2"])


CLAIMS = [Claim(
    id="tutorial.participation",
    title=r"Participation ratio of a softmax row: $T\sum_j A_{ij}^2 \to e^{s^2}$",
    predictions=(
        Prediction("participation", "derived", limit, r"T\sum_j A_{ij}^2",
                   note="the law of large numbers for mean(Z^2)/mean(Z)^2, Z log-normal"),
    ),
    checks=(
        Check("participation", "T_sum_sq", "limit", rate=1.0, rate_status="derived",
              rate_note="delta method: the ratio's bias is O(1/T); each row fluctuates like "
                        "T^-1/2 and the mean of T independent rows like 1/T",
              domain=lambda p: p["s2"] <= math.log(2) + 1e-12,
              domain_note="judged for s2 <= log 2: the delta method needs the mean of "
                          "Z^4 settled, T >> e^{4 s2}; at s2 = 1 the sizes to 1024 still "
                          "decay slower than 1/T"),
    ),
    parameters=("s2", "mu"),
    experiment=participation,
    references=("docs/writing-a-claim.md",),
    profiles=profiles(quick=(64, 1024), standard=(64, 2048)),
)]
