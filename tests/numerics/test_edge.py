"""tests for numerics/edge.py: the Airy-1 constants, their provenance, and the edge read
through the top singular values on an ensemble whose edge is known exactly."""
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import linalg

from gapverify.numerics.edge import (
    AIRY1_MEANS, AIRY1_MEANS_SE, EDGE_K, edge_stable_ranks, edge_weights, goe_tracy_widom_mean,
    tracy_widom_edge,
)
from gapverify.numerics.statistics import stable_ranks

#: E TW_1 (GOE), Bornemann (2010), Table 6: 16 digits from the Fredholm determinant
GOE_TW_MEAN = -1.2065335745820


def _script():
    path = Path(__file__).resolve().parents[2] / "scripts" / "airy_means.py"
    spec = importlib.util.spec_from_file_location("airy_means", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fredholm_mean_matches_the_tabulated_value():
    assert abs(goe_tracy_widom_mean() - GOE_TW_MEAN) < 1e-9


def test_table_agrees_with_the_exact_largest_mean():
    # the Monte-Carlo table's first entry is the exact E TW_1 within 4 of its standard errors
    assert abs(AIRY1_MEANS[0] - GOE_TW_MEAN) < 4 * AIRY1_MEANS_SE[0]
    assert all(a > b for a, b in zip(AIRY1_MEANS, AIRY1_MEANS[1:]))  # ordered points


def test_table_is_what_the_script_draws():
    # a small independent run of the generating script reproduces every entry within 4.5
    # of the combined standard errors (9 comparisons at about 1e-5 each)
    mod = _script()
    rng = np.random.default_rng(2024)
    pts = np.array([mod.airy_points(rng, 10**6, len(AIRY1_MEANS)) for _ in range(1500)])
    mean, se = pts.mean(axis=0), pts.std(axis=0, ddof=1) / math.sqrt(len(pts))
    z = (mean - np.array(AIRY1_MEANS)) / np.hypot(se, AIRY1_MEANS_SE)
    assert np.all(np.abs(z) < 4.5), z


def test_weights_remove_a_constant_and_the_airy_offset():
    for k in range(2, len(AIRY1_MEANS) + 1):
        w = edge_weights(k)
        assert abs(w.sum() - 1) < 1e-12
        assert abs(w @ np.array(AIRY1_MEANS[:k])) < 1e-12
    # exact on values that follow the Airy means: s_j^2 = x* + tau zeta_j
    top = np.sqrt(4.0 + 0.05 * np.array(AIRY1_MEANS[:EDGE_K]))
    assert abs(tracy_widom_edge(top) - 4.0) < 1e-12


@pytest.mark.parametrize("k", [1, 9, 2.5])
def test_bad_k_names_the_parameter(k):
    with pytest.raises(ValueError, match="parameter 'k'"):
        edge_weights(k)


def test_too_few_values_names_the_parameter():
    with pytest.raises(ValueError, match="parameter 'top'"):
        tracy_widom_edge(np.ones(EDGE_K - 1))


def test_edge_of_a_real_wishart_matrix_is_unbiased_where_s1_is_not():
    """X = G/sqrt(d), G a T x d real Gaussian matrix: the top eigenvalues of X X^T sit at
    Johnstone's centring mu = (sqrt(T-1) + sqrt(d))^2 / d plus sigma zeta_j, sigma =
    (sqrt(T-1) + sqrt(d)) (1/sqrt(T-1) + 1/sqrt(d))^(1/3) / d, to O(sigma T^-2/3). The mean
    of s_1^2 is then sigma zeta_1, about 12 standard errors, below mu; the edge read through
    the top 4 has no such offset (tolerance: 4 standard errors of the mean over 200
    replicates). Measured with 1500 replicates: the edge's mean minus mu was
    (+0.03 +- 0.04) sigma at T = 150 and (-0.004 +- 0.04) sigma at T = 300; s_1^2's
    -1.13 sigma and -1.17 sigma (E TW_1 = -1.21)."""
    T, d, reps = 300, 300, 200
    rng = np.random.default_rng(7)
    raw, edge = np.empty(reps), np.empty(reps)
    for i in range(reps):
        s = linalg.svdvals(rng.standard_normal((T, d)) / math.sqrt(d))
        raw[i], edge[i] = s[0] ** 2, tracy_widom_edge(s)
    mu = (math.sqrt(T - 1) + math.sqrt(d)) ** 2 / d
    se_raw, se_edge = raw.std(ddof=1) / math.sqrt(reps), edge.std(ddof=1) / math.sqrt(reps)
    assert abs(edge.mean() - mu) < 4 * se_edge
    assert raw.mean() < mu - 8 * se_raw


def test_edge_stable_ranks_extend_stable_ranks():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((120, 240))
    sr, sr_sigma, sr_edge, sr_sigma_edge = edge_stable_ranks(X)
    assert np.allclose((sr, sr_sigma), stable_ranks(X), rtol=1e-9, atol=0)
    s = linalg.svdvals(X)
    x_star = tracy_widom_edge(s)
    assert math.isclose(sr_edge, np.sum(s**2) / x_star, rel_tol=1e-9)
    assert math.isclose(sr_sigma_edge, np.sum(s**4) / x_star**2, rel_tol=1e-9)
