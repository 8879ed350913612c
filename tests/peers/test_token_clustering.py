"""peers/token_clustering.py: the file loads; the closed-form time and the mpmath solution
are the ODE's; the particles started from orthogonal tokens follow the ODE exactly; RK4's step
error is h^4 and below the stated bound; a prediction made 5% wrong fails, and so does the ODE
with the wrong normalisation, while the true one passes."""
import dataclasses
import math
import sys
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
import sympy as sp

from gapverify.verification.claims import loading

FILE = Path(__file__).resolve().parents[2] / "peers" / "token_clustering.py"


@pytest.fixture(scope="module")
def loaded():
    """The claim and the module its experiment runs in."""
    from gapverify.numerics.plugins import EXTRA_EXPERIMENTS

    claims = loading.read_claim_file(FILE, {}).claims
    function = EXTRA_EXPERIMENTS[claims[0].experiment]
    return claims[0], sys.modules[function.__module__], function


def test_claim_file_loads(loaded):
    claim, m, _ = loaded
    assert claim.id == "peers.token_clustering"
    for case in claim.cases["quick"]:
        values = claim.predict_numbers(claim.resolve(case))
        assert all(math.isfinite(v) for v in values.values())
    p = claim.predict_numbers(claim.resolve({}))  # n = 8, beta = 1
    assert p["rho_t1"] == pytest.approx(0.36258687984933597, abs=1e-15)
    assert p["t_half"] == pytest.approx(1.2648254740965817, abs=1e-15)


def test_closed_form_time_is_the_odes(loaded):
    """d t(rho)/d rho = 1 / rho'(rho), symbolically, for SA and USA; t(0) = 0."""
    _, m, _ = loaded
    r, n, beta = sp.symbols("r n beta", positive=True)
    for usa in (False, True):
        t = m.time_expr(r, n, beta, usa)
        assert sp.simplify(t.subs(r, 0)) == 0
        residual = sp.diff(t, r) - 1 / m.rho_rate(r, n, beta, usa)
        for point in ({r: sp.Rational(1, 3), n: 8, beta: 1},
                      {r: sp.Rational(-1, 10), n: 4, beta: 2},
                      {r: sp.Rational(9, 10), n: 16, beta: sp.Rational(1, 2)}):
            assert abs(sp.N(residual.subs(point), 40)) < 1e-35


def test_rho_matches_mpmath_odefun(loaded):
    """The inverse of the closed form against mpmath's Taylor-series ODE solver."""
    _, m, _ = loaded
    with mp.workdps(20):
        for usa, t in ((False, 1.0), (True, 0.5)):
            f = mp.odefun(lambda s, y: m.rho_rate(y, mp.mpf(8), mp.mpf(1), usa), 0, mp.mpf(0))
            assert abs(f(t) - mp.mpf(m.rho_at(t, 8, "1.0", usa))) < 1e-17
    # the double-precision helpers used by the control variate agree with the mpmath root
    assert m.rho_float(2.0, 4, 2.0) == pytest.approx(float(m.rho_at(2.0, 4, "2.0")), abs=1e-14)


def test_orthogonal_tokens_follow_the_ode_and_rk4_is_fourth_order(loaded):
    """Pairwise orthogonal tokens stay equiangular (the ODE's derivation): the particles'
    mean inner product equals rho(t) up to the RK4 error, which falls 16-fold per halving of
    the step; at the claim's step the error is far below the Richardson tolerance."""
    _, m, _ = loaded
    n, beta, d = 8, 1.0, 16
    X0 = np.eye(d)[:n]
    exact = {t: float(m.rho_at(t, n, "1.0")) for t in (1.0, 2.0)}
    errors = []
    for h in (1 / 8, 1 / 16, 1 / 32):
        out, crossing = m.trajectory(X0, beta, h, (1.0, 2.0), level=0.5)
        errors.append(max(abs(out[t] - exact[t]) for t in exact))
        assert crossing == pytest.approx(1.2648254740965817, abs=1e-5)
    assert 13 < errors[0] / errors[1] < 19 and 13 < errors[1] / errors[2] < 19
    assert errors[2] < 1e-8  # h = 1/32, the claim's step
    # every pair equiangular: the Gram matrix stays (1 - rho) I + rho 11^T
    Y = X0
    for _ in range(32):
        Y = m.rk4_step(Y, beta, 1 / 32)
    G = Y @ Y.T
    off = G[~np.eye(n, dtype=bool)]
    assert np.ptp(off) < 1e-13 and np.allclose(np.diag(G), 1.0, atol=1e-12)
    # the USA dynamics follow eq (ybetaUSA), with its 2/n
    out, _ = m.trajectory(X0, beta, 1 / 32, (0.5,), usa=True)
    assert out[0.5] == pytest.approx(float(m.rho_at(0.5, n, "1.0", True)), abs=1e-8)


def test_time_shift_of_the_control_variate(loaded):
    """An equiangular start at rho0 follows the ODE shifted by t(rho0): what the control
    variate subtracts is the exact response along the equiangular direction."""
    _, m, _ = loaded
    n, beta, rho0 = 6, 2.0, 0.05
    G0 = (1 - rho0) * np.eye(n) + rho0
    X0 = np.linalg.cholesky(G0)  # rows: unit vectors with inner products rho0
    out, crossing = m.trajectory(X0, beta, 1 / 64, (1.0,), level=0.5)
    s = m.time_float(rho0, n, beta)
    assert out[1.0] == pytest.approx(m.rho_float(1.0 + s, n, beta), abs=1e-9)
    assert crossing + s == pytest.approx(m.time_float(0.5, n, beta), abs=1e-8)


def test_step_error_of_uniform_draws_is_below_the_bound(loaded):
    """At the largest quick dimension the Richardson estimate of the step error, times d,
    is far below the stated tolerance, and the estimate itself is h^4: halving the step
    divides the difference of successive solutions by about 16."""
    _, m, experiment = loaded
    rng = np.random.default_rng(5)
    out = experiment(rng, 1024, {"cluster_n": 4, "cluster_beta": 2.0})
    assert out["d_step_error"] < m.STEP_TOLERANCE / 10
    X0 = m.uniform_sphere(np.random.default_rng(6), 8, 256)
    q = [m.trajectory(X0, 1.0, h, (2.0,))[0][2.0] for h in (1 / 16, 1 / 32, 1 / 64)]
    assert 12 < (q[0] - q[1]) / (q[1] - q[2]) < 20


def _judged(claim, experiment, formula_of=None, name="rho_t1"):
    """``claim`` (or a variant with prediction ``name``'s formula replaced) judged at the
    default case on small sizes: the claim-level outcome and the check's."""
    from gapverify import verify

    predictions = claim.predictions
    if formula_of is not None:
        predictions = tuple(dataclasses.replace(p, formula=formula_of(p.formula)) if p.name == name
                            else p for p in predictions)
    variant = dataclasses.replace(claim, id="test.token_clustering_variant", experiment=experiment,
                                  predictions=predictions)
    run = verify([variant], sizes=[64, 128, 256, 512], replicates=6, seed=3,
                 params={"cluster_n": 8, "cluster_beta": 1.0}, replay=False)
    verdict = run.claims[0]
    outcomes = {c.prediction: c.outcome for c in verdict.checks
                if c.verdict != "recorded" and c.prediction == name}
    return verdict.outcome, outcomes


@pytest.mark.slow
def test_the_true_statement_passes(loaded):
    claim, _, experiment = loaded
    outcome, checks = _judged(claim, experiment)
    assert outcome == "pass" and checks == {"rho_t1": "pass"}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["rho_t1", "t_half", "rho_usa_half"])
def test_a_prediction_five_percent_wrong_fails(loaded, name):
    claim, _, experiment = loaded
    outcome, checks = _judged(claim, experiment,
                              lambda f: (lambda p: f(p) * sp.Rational(105, 100)), name)
    assert outcome == "fail" and checks == {name: "fail"}


@pytest.mark.slow
def test_the_ode_without_its_factor_two_fails(loaded):
    """rho' without the 2 runs at half speed: rho(1) would be rho_SA(1/2)."""
    claim, m, experiment = loaded
    outcome, checks = _judged(claim, experiment,
                              lambda f: (lambda p: sp.Float(m.rho_at(0.5, 8, "1.0"), 30)))
    assert outcome == "fail" and checks == {"rho_t1": "fail"}
