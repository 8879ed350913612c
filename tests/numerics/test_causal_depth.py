"""The causal depth experiment (claim ``causal.depth``): standard and fixed causal networks
on twin streams; the causal fix keeps the decoder mask and does not keep rank."""
import numpy as np
import pytest

from gapverify.numerics.causal import causal_depth
from gapverify.numerics.forward_pass import forward
from gapverify.numerics.networks import NetworkConfig


def test_causal_depth_measures_both_networks_on_the_same_draws():
    p = {"s2": 0.5, "mu": 0.0, "gamma": 1.0, "sigma_V": 1.0, "depth": 2}
    m = causal_depth(np.random.default_rng(3), 64, p)
    assert m["layers_sr_Sigma_std"].shape == m["layers_sr_Sigma_fix"].shape == (2,)
    assert m["sr_Sigma_fix"] == pytest.approx(64 * m["sr_Sigma_fix_over_T"], rel=1e-12)
    assert m["sr_Sigma_std"] == m["layers_sr_Sigma_std"][-1]
    # reproducible from the stream alone
    again = causal_depth(np.random.default_rng(3), 64, p)
    assert again["sr_Sigma_fix"] == m["sr_Sigma_fix"] and again["sr_Sigma_std"] == m["sr_Sigma_std"]


def test_the_causal_fix_collapses_where_the_surrogates_fix_keeps_rank():
    """At T = 128, depth 2, the same draws: the Markov surrogate's fix keeps sr(Sigma_2)
    of order T (sr/T near its limit 0.08 at gamma = 1), the causal fix leaves it below 3."""
    T, kw = 128, dict(fixed=True, s2=0.5, mu=0.0, sigma_V=1.0)
    causal = forward(np.random.default_rng(0), NetworkConfig.from_gamma(T, 1.0, 2, attention="causal", **kw))
    markov = forward(np.random.default_rng(0), NetworkConfig.from_gamma(T, 1.0, 2, **kw))
    assert causal.sr_Sigma[-1] < 3.0
    assert markov.sr_Sigma[-1] > 5.0
