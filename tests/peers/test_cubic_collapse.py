"""peers/cubic_collapse.py: the file loads; the split layer is the attention layer; the leading
map is the expansion of the softmax and matches the layer to O(eps^2) at x = 0 and O(eps) at
x != 0; the norms and the lower bound of the minimal residual are right; a prediction made 5%
wrong fails, and so does the issue's rate 2 at x != 0, while the true statement passes."""
import dataclasses
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import minimize

from gapverify import RateRule
from gapverify.verification.claims import loading

FILE = Path(__file__).resolve().parents[2] / "peers" / "cubic_collapse.py"


@pytest.fixture(scope="module")
def loaded():
    """The claim, the module its experiment runs in, and the experiment."""
    from gapverify.numerics.plugins import EXTRA_EXPERIMENTS

    claims = loading.read_claim_file(FILE, {}).claims
    function = EXTRA_EXPERIMENTS[claims[0].experiment]
    return claims[0], sys.modules[function.__module__], function


def _weights(rng, d):
    WQ, WK, WV = rng.standard_normal((3, d, d)) / math.sqrt(d)
    return WQ @ WK.T, WV


def test_claim_file_loads(loaded):
    claim, _, _ = loaded
    assert claim.id == "peers.cubic_collapse"
    assert claim.predict_numbers(claim.resolve({})) == {
        "exponent_1": 3.0, "exponent_2": 9.0, "leading_map": 1.0, "dong_bound": 1.0}


def test_split_layer_is_the_attention_layer(loaded):
    """(x', R') of the cancellation-free layer against softmax(X WQK X^T/sqrt d) X WV."""
    _, m, _ = loaded
    rng = np.random.default_rng(0)
    n, d = 12, 8
    WQK, WV = _weights(rng, d)
    for scale in (0.0, 1.0):
        x = scale * rng.standard_normal(d)
        R = 0.4 * rng.standard_normal((n, d))
        R -= R.mean(axis=0)
        Y = m.attention_direct(x[None, :] + R, WQK, WV)
        x1, R1 = m.attention_layer(x, R, WQK, WV)
        assert np.allclose(x1, Y.mean(axis=0), rtol=0, atol=1e-13)
        assert np.allclose(R1, Y - Y.mean(axis=0), rtol=0, atol=1e-13)


def test_softmax_expansion_behind_the_leading_map():
    """softmax(r + E)_j = q_j (1 + E_j - sum_k q_k E_k) + O(E^2), symbolically (3 entries)."""
    r = sp.symbols("r0:3")
    E = sp.symbols("E0:3")
    t = sp.Symbol("t")
    Z = sum(sp.exp(r[k] + t * E[k]) for k in range(3))
    q = [sp.exp(r[k]) / sum(sp.exp(r[i]) for i in range(3)) for k in range(3)]
    for j in range(3):
        first = sp.diff(sp.exp(r[j] + t * E[j]) / Z, t).subs(t, 0)
        assert sp.simplify(first - q[j] * (E[j] - sum(q[k] * E[k] for k in range(3)))) == 0


def test_leading_map_matches_the_layer(loaded):
    """res SA(X) / L(R) -> 1 with error c eps^2 at x = 0 and c eps at x != 0 (the same draw
    at eps, eps/2, eps/4: the error falls by 4, resp. 2, per halving)."""
    _, m, _ = loaded
    rng = np.random.default_rng(1)
    n, d = 32, 64
    WQK, WV = _weights(rng, d)
    Z = rng.standard_normal((n, d))
    Z -= Z.mean(axis=0)
    g = rng.standard_normal(d)
    for scale, order in ((0.0, 2), (1.0, 1)):
        err = []
        for eps in (1 / 16, 1 / 32, 1 / 64, 1 / 128):
            R = eps * Z
            _, R1 = m.attention_layer(scale * g, R, WQK, WV)
            lead = m.leading_map(R, WQK, WV)
            err.append(np.linalg.norm(R1 - lead) / np.linalg.norm(lead))
        slopes = [math.log2(a / b) for a, b in zip(err, err[1:])]
        assert all(abs(s - order) < 0.15 for s in slopes), (scale, slopes)
    # the leading map is homogeneous of degree 3 and already centred
    lead = m.leading_map(Z, WQK, WV)
    assert np.allclose(m.leading_map(2 * Z, WQK, WV), 8 * lead)
    assert np.allclose(lead.mean(axis=0), 0, atol=1e-12)


def test_norms_and_the_lower_bound_of_the_minimal_residual(loaded):
    _, m, _ = loaded
    M = np.array([[1.0, -2.0], [3.0, 0.5], [-1.0, 1.0]])
    assert m.l1_norm(M) == 5.0 and m.linf_norm(M) == 3.5  # column sums 5, 3.5; row sums 3, 3.5, 2
    assert m.composite_norm(M) == pytest.approx(math.sqrt(17.5))
    rng = np.random.default_rng(2)
    for _ in range(5):
        Y = rng.standard_normal((7, 4)) + rng.standard_normal(4)
        lower = m.min_residual_lower(Y)
        # the minimum over x, from several starts (a non-smooth, non-convex objective)
        best = min(minimize(lambda x: m.composite_norm(Y - x[None, :]), x0, method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000}).fun
                   for x0 in (Y.mean(axis=0), np.median(Y, axis=0), Y[0], np.zeros(4)))
        assert lower <= best + 1e-9
        assert best <= m.composite_norm(Y - Y.mean(axis=0)) + 1e-12  # the centred residual is above


def test_bound_holds_with_room_and_is_scale_free(loaded):
    _, m, experiment = loaded
    for T in (64, 1024):
        out = experiment(np.random.default_rng(4), T, {"d_qk": 64, "collapse_x": 0.0})
        assert out["dong_bound_holds"] == 1.0
        assert out["dong_log10_tightness_1"] < -3  # the bound is loose at the standard init
        assert abs(out["exponent_1"] - 3) < 1e-2 and abs(out["exponent_2"] - 9) < 3e-2


def _judged(claim, experiment, collapse_x, *, formula_of=None, name="exponent_1", rate=None,
            replicates=6):
    """A variant of ``claim`` (prediction ``name`` with its formula replaced, or the checks of
    ``name`` with another rate) judged at one case on small sizes."""
    from gapverify import verify

    predictions = tuple(dataclasses.replace(p, formula=formula_of(p.formula))
                        if formula_of is not None and p.name == name else p
                        for p in claim.predictions)
    checks = tuple(dataclasses.replace(c, rate=rate)
                   if rate is not None and c.prediction == name and c.rate is not None else c
                   for c in claim.checks)
    variant = dataclasses.replace(claim, id="test.cubic_collapse_variant", experiment=experiment,
                                  predictions=predictions, checks=checks)
    # few draws (the suite's per-draw bookkeeping dominates the time): enough to reject a wrong
    # statement; the quick profile sizes the draws for power (docs/peers.md)
    run = verify([variant], sizes=[64, 128, 256, 512], replicates=replicates, seed=3,
                 params={"collapse_x": collapse_x}, replay=False)
    verdict = run.claims[0]
    return verdict.outcome, [c.outcome for c in verdict.checks
                             if name is None or c.prediction == name]


@pytest.mark.slow
@pytest.mark.parametrize("collapse_x", [0.0, 1.0])
def test_the_true_statement_does_not_fail(loaded, collapse_x):
    """Every check passes (at 12 draws the rate +0.5 variant may not yet be rejected: the
    claim then reads "lacks power", never "fail")."""
    claim, _, experiment = loaded
    outcome, checks = _judged(claim, experiment, collapse_x, name=None, replicates=12)
    assert outcome != "fail" and set(checks) <= {"pass", "lacks power", "recorded"}
    assert "pass" in checks


@pytest.mark.slow
@pytest.mark.parametrize("name", ["exponent_1", "exponent_2", "leading_map", "dong_bound"])
def test_a_prediction_five_percent_wrong_fails(loaded, name):
    claim, _, experiment = loaded
    outcome, checks = _judged(claim, experiment, 0.0, name=name,
                              formula_of=lambda f: (lambda p: f(p) * sp.Rational(105, 100)))
    assert outcome == "fail" and "fail" in checks


@pytest.mark.slow
def test_the_issues_rate_two_fails_off_the_origin(loaded):
    """At x != 0 the remainder is O(|x| |R|^4): the ratio's error decays like eps, and the
    rate eps^2 (the issue's O(|R|^5)) is rejected by the same draws."""
    claim, _, experiment = loaded
    # 16 draws: at 6 the fitted rate's interval (beta = 1.5 +- 0.2, Student t at 3 sizes'
    # degrees of freedom) can still reach 2
    outcome, checks = _judged(claim, experiment, 1.0, name="leading_map",
                              rate=RateRule("2", lambda p: 2.0), replicates=16)
    assert outcome == "fail" and "fail" in checks
