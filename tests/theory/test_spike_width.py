"""tests for theory/spike_width.py: the spike of sqrt(T) Aperp carried to X1perp = Aperp Y."""
import math

import numpy as np
import pytest
import sympy as sp
from scipy import stats

from gapverify.theory import layers, spike_edge
from gapverify.theory import spike_width as sw


def test_width_spike_map_is_derived_and_its_identities_hold():
    assert sw.width_spike_identities() == {"stieltjes": True, "closed_form": True,
                                           "threshold": True, "edge": True}
    u, g, psi = sw.width_spike_map()
    assert sp.simplify(psi - (u + 1 / u) ** 2 * (1 + g / u**2)) == 0
    # the edge of A^perp's map alone (no sample-covariance factor) is not the edge x*
    assert sp.simplify(((u + 1 / u) ** 2).subs(u, sp.sqrt(2)) - sp.Rational(27, 4)) != 0


@pytest.mark.parametrize("gamma", [0.25, 0.5, 1.0])
def test_threshold_lands_on_the_free_probability_edge(gamma):
    uc = sw.width_threshold(gamma)
    assert sw.width_outlier(uc, gamma) == pytest.approx(float(layers.x_star(1, gamma)), rel=1e-12)
    # psi has its minimum there: below u_c the spike leaves the edge where it is
    dpsi = sw._outlier_functions()[1]
    assert dpsi(uc * 0.99, gamma) < 0 < dpsi(uc * 1.01, gamma)
    h = 1e-6
    assert dpsi(1.7, gamma) == pytest.approx(
        (sw.width_outlier(1.7 + h, gamma) - sw.width_outlier(1.7 - h, gamma)) / (2 * h), rel=1e-6)


def _sample(s2: float, gamma: float, T: int, n: int, seed: int):
    """(a_T / kappa, top eigenvalue of C G G^T C^T) for C = sqrt(T) Aperp / kappa and G a
    T x d Gaussian matrix of variance 1/d: the units of theory.layers (depth 1)."""
    rng = np.random.default_rng(seed)
    kappa, d = math.sqrt(math.expm1(s2)), int(round(T / gamma))
    out = np.empty((n, 2))
    for i in range(n):
        Z = np.exp(rng.standard_normal((T, T)) * math.sqrt(s2))
        C = math.sqrt(T) * (Z / Z.sum(axis=1, keepdims=True) - 1 / T) / kappa
        G = rng.standard_normal((T, d)) / math.sqrt(d)
        out[i] = C.max(), np.linalg.svd(C @ G, compute_uv=False)[0] ** 2
    return out[:, 0], out[:, 1]


def test_spiked_edge_against_sampled_matrices():
    """s2 = 1/2, gamma = 1/2, T = 256, 240 draws. Draws with a clear spike (u > u_c + 0.15)
    sit at psi(u): the mean ratio is within [1 - 2 T^(-2/3) - 4 se, 1 + 4 se], the low side
    allowing the finite-size edge's offset below its limit (the unspiked draws, u < 1, sit
    2-7% under x* at T = 128..256, 1.4-1.7 T^(-2/3), measured on 3 x 150 draws). The map
    without its sample-covariance factor, (u + 1/u)^2, reads 14-19% high and is rejected.
    The fraction of draws with u > u_c agrees with the entry law (binomial test, 1e-3)."""
    s2, gamma, T, n = 0.5, 0.5, 256, 240
    u, lam = _sample(s2, gamma, T, n, seed=2026)
    uc = sw.width_threshold(gamma)
    spiked = u > uc + 0.15
    assert spiked.sum() >= 10
    ratio = lam[spiked] / sw.width_outlier(u[spiked], gamma)
    se = ratio.std(ddof=1) / math.sqrt(spiked.sum())
    assert 1 - 2 * T ** (-2 / 3) - 4 * se <= ratio.mean() <= 1 + 4 * se
    wrong = lam[spiked] / (u[spiked] + 1 / u[spiked]) ** 2
    assert not wrong.mean() <= 1 + 4 * se
    kappa = math.sqrt(math.expm1(s2))
    p = float(spike_edge.order_statistic_sf(kappa * uc, s2, T))
    assert stats.binomtest(int((u > uc).sum()), n, p).pvalue > 1e-3


def test_excess_and_floor():
    # no spike can reach the threshold at light tails; t_min grows with s2
    assert sw.t_min_width(0.25, 1.0) == 16
    floors = [sw.t_min_width(s2, 0.5) for s2 in (0.3, 0.4, 0.5)]
    assert floors == sorted(floors) and floors[-1] == 305
    assert sw.width_excess(0.5, 0.5, 304) > 0.01 >= sw.width_excess(0.5, 0.5, 306)
    # the X1perp floor is below that of sr(Aperp)/T (its threshold u_c > 1)
    assert sw.t_min_width(0.5, 0.5) < spike_edge.t_min(0.5, power=2)


@pytest.mark.parametrize("call, name", [
    (lambda: sw.width_threshold(1.5), "gamma"),
    (lambda: sw.width_excess(-1.0, 0.5, 100), "s2"),
    (lambda: sw.width_excess(0.5, 0.5, 2), "T"),
    (lambda: sw.t_min_width(0.5, 0.5, threshold=2.0), "threshold"),
])
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=f"'{name}'"):
        call()
