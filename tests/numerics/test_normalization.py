"""tests for the LayerNorm and skip options of numerics/networks.py and the
normalization-figure command."""
import math

import numpy as np
import pytest

from gapverify.numerics.common import twin_streams
from gapverify.numerics.forward_pass import forward, layer_norm
from gapverify.numerics.networks import NetworkConfig


def test_layer_norm_rows_have_zero_mean_and_unit_variance():
    X = np.random.default_rng(0).normal(3.0, 2.0, size=(5, 400))
    Y = layer_norm(X)
    assert np.allclose(Y.mean(axis=1), 0, atol=1e-12)
    # variance var/(var + eps): 1 - eps/var to first order
    assert np.allclose(Y.var(axis=1), 1, atol=1e-5 / 3.0)


def test_layer_norm_is_scale_free_in_the_forward_pass():
    """X_l = LN(e^c Y) = LN(Y) up to eps: rescaling the input by 10^3 leaves sr unchanged."""
    cfg = NetworkConfig(T=32, d=32, depth=3, layer_norm=True, sigma_V=1.0)
    big = NetworkConfig(T=32, d=32, depth=3, layer_norm=True, sigma_V=1e3)
    a = forward(np.random.default_rng(1), cfg).sr_Sigma
    b = forward(np.random.default_rng(1), big).sr_Sigma
    # sigma_V only scales A X W by a scalar, which LN removes but for its eps = 1e-5 against
    # a row variance of order ||A X||^2/T >= 1/(4T) at sigma_V = 1: relative effect
    # <= 4 T eps ~ 1.3e-3 on each row's scale
    assert np.allclose(a, b, rtol=2e-3)
    # and without LN the scale does matter once a skip adds X to A X W
    c = forward(np.random.default_rng(1), NetworkConfig(T=32, d=32, depth=3, residual="skip")).sr_Sigma
    d = forward(np.random.default_rng(1), NetworkConfig(T=32, d=32, depth=3, residual="skip",
                                                         sigma_V=1e3)).sr_Sigma
    assert not np.allclose(c, d, rtol=2e-3)


@pytest.mark.parametrize("bad", [{"residual": "dense"}, {"layer_norm": 1}])
def test_bad_options_name_the_parameter(bad):
    with pytest.raises(ValueError, match=list(bad)[0]):
        NetworkConfig(T=8, d=8, depth=1, **bad)


def test_skip_connections_keep_rank_for_the_fix_and_collapse_without():
    """T = d = 64, depth 6 (5 seeds): standard attention with a plain skip collapses to
    sr(Sigma) < 1.1 by layer 6; the fix stays above 3 (the paper's picture)."""
    std, fix = [], []
    for s in range(5):
        a, b = twin_streams(np.random.default_rng([s, 64]))
        std.append(forward(a, NetworkConfig(T=64, d=64, depth=6, residual="skip")).sr_Sigma[-1])
        fix.append(forward(b, NetworkConfig(T=64, d=64, depth=6, residual="skip", fixed=True)).sr_Sigma[-1])
    assert max(std) < 1.1 and min(fix) > 3


def test_normalization_command_rejects_a_bad_attention(capsys):
    from gapverify.cli import main

    assert main(["normalization-figure", "--attention", "gpt", "--T", "16"]) == 2
    assert "markov, xavier" in capsys.readouterr().err


def test_causal_attention_keeps_its_mask_with_and_without_the_fix():
    cfg = NetworkConfig(T=16, d=16, depth=2, attention="causal")
    for fixed in (False, True):
        tr = forward(np.random.default_rng(2), NetworkConfig(T=16, d=16, depth=2, attention="causal",
                                                             fixed=fixed), keep_matrices=True)
        for A in tr.As:
            assert np.all(np.triu(A, 1) == 0)
            # rows of A sum to 1; rows of A - C_T sum to 0
            assert np.allclose(A.sum(axis=1), 0.0 if fixed else 1.0, atol=1e-13)
    assert cfg.attention == "causal"
