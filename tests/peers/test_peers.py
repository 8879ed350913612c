"""The peers' claim files: they load through the public loader, the attention gradients
match finite differences, and the exact identities hold."""
import math
from pathlib import Path

import numpy as np
import pytest

from gapverify.verification.claims import loading

PEERS = Path(__file__).resolve().parents[2] / "peers"
FILES = ("entropy.py", "collapsed_gradients.py", "kedia_attention.py", "kq_spectrum.py",
         "cubic_collapse.py", "token_clustering.py", "attention_kernel.py")


def _module(name):
    """The loaded file and the module it ran as (its experiment's module)."""
    from gapverify.numerics.plugins import EXTRA_EXPERIMENTS

    loaded = loading.read_claim_file(PEERS / name, {})
    function = EXTRA_EXPERIMENTS[loaded.claims[0].experiment]
    return loaded, __import__("sys").modules[function.__module__]


@pytest.mark.parametrize("name", FILES)
def test_claim_file_loads(name):
    loaded, _ = _module(name)
    assert loaded.claims and all(c.id.startswith("peers.") for c in loaded.claims)
    for c in loaded.claims:
        assert all(math.isfinite(v) for v in c.predict_numbers(c.resolve({})).values())


def test_gradients_match_finite_differences():
    _, m = _module("collapsed_gradients.py")
    rng = np.random.default_rng(0)
    T, d = 7, 5
    X, R = rng.standard_normal((T, d)), rng.standard_normal((T, d))
    W = list(rng.standard_normal((3, d, d)) / math.sqrt(d))
    grads = m.attention_gradients(X, *W, R)
    h = 1e-6
    for k, G in enumerate(grads):  # G_Q, G_K, G_V
        fd = np.zeros_like(G)
        for idx in np.ndindex(G.shape):
            Wp = [w.copy() for w in W]
            Wm = [w.copy() for w in W]
            Wp[k][idx] += h
            Wm[k][idx] -= h
            fd[idx] = (m.attention_loss(X, *Wp, R) - m.attention_loss(X, *Wm, R)) / (2 * h)
        assert np.max(np.abs(G - fd)) < 1e-7 * max(1.0, np.max(np.abs(G)))


def test_collapsed_query_key_gradients_vanish():
    _, m = _module("collapsed_gradients.py")
    rng = np.random.default_rng(1)
    T, d = 200, 32
    x = rng.standard_normal(d)
    X = np.ones((T, 1)) * x
    GQ, GK, GV = m.attention_gradients(X, *(rng.standard_normal((3, d, d)) / math.sqrt(d)),
                                       rng.standard_normal((T, d)))
    assert np.linalg.norm(GV) > 1.0
    assert 1 - m.value_share(GQ, GK, GV) <= m.share_tolerance(T, d)
    # and not at rho < 1: the identity is the collapse's, not the formulas'
    Y = X + 0.3 * rng.standard_normal((T, d))
    GQ, GK, GV = m.attention_gradients(Y, *(rng.standard_normal((3, d, d)) / math.sqrt(d)),
                                       rng.standard_normal((T, d)))
    assert 1 - m.value_share(GQ, GK, GV) > 1e-3


def test_zhai_spike_attains_the_bound_and_the_bound_holds():
    _, m = _module("entropy.py")
    rng = np.random.default_rng(2)
    for T in (2, 5, 64):
        for sigma in (0.3, 1.0, 4.0):
            g = sigma * math.sqrt(T / (T - 1))
            spike = np.zeros(T)
            spike[0] = g
            assert m.row_entropy(spike) == pytest.approx(float(m.zhai_bound(sigma, T)), rel=1e-12)
            rows = rng.standard_normal((500, T))
            rows -= rows.mean(axis=1, keepdims=True)
            rows *= sigma / np.linalg.norm(rows, axis=1, keepdims=True)
            assert np.all(m.row_entropy(rows) >= m.zhai_bound(sigma, T) - 1e-12)
    # a bound 5% too high is violated by the spike: the check has teeth
    assert m.row_entropy(np.array([4 * math.sqrt(2), 0.0])) < 1.05 * m.zhai_bound(4.0, 2)


def test_entropy_of_uniform_and_kedia_formula_at_zero_logit_variance():
    _, e = _module("entropy.py")
    assert e.row_entropy(np.zeros((3, 10))) == pytest.approx(np.full(3, math.log(10)))
    _, k = _module("kedia_attention.py")
    # s2 = 0: uniform attention averages N independent values: Var = 1/N
    assert k.kedia_variance(100, 50, 0.0) == pytest.approx(1 / 100)
    y = k.attention_output(np.random.default_rng(3), 400, 400, 0.0)
    assert 400 * np.var(y) == pytest.approx(1.0, rel=0.1)
