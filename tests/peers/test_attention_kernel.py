"""``peers.attention_kernel`` (Hron et al.'s d^-1 attention kernel): the file loads, its
sympy limit and delta-method constant match direct numerical computations, the sampled
model is the stated one, and a prediction made 5% wrong fails on samples where the true
one does not (``--perturb NAME=0.05`` is the same :class:`Variant`)."""
import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from gapverify.verification.claims import loading

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "peers" / "attention_kernel.py"
ASSERTED = ("attention", "trace", "correlation")


def _loaded():
    """The claim and the module its experiment runs in."""
    from gapverify.numerics.plugins import EXTRA_EXPERIMENTS

    claim = loading.read_claim_file(FILE, {}).claims[0]
    return claim, sys.modules[EXTRA_EXPERIMENTS[claim.experiment].__module__]


def _exact(params):
    return {k: sp.nsimplify(v) for k, v in params.items()}


def _softmax(S):
    A = np.exp(S - S.max(axis=1, keepdims=True))
    return A / A.sum(axis=1, keepdims=True)


def test_claim_file_loads_and_predicts_at_every_case():
    claim, _ = _loaded()
    assert claim.id == "peers.attention_kernel"
    assert {p.name for p in claim.predictions if p.asserted} == set(ASSERTED)
    for profile in ("quick", "standard"):
        for case in claim.cases_for(profile):
            values = claim.predict_numbers(case)
            assert all(math.isfinite(v) for v in values.values()), (case, values)


@pytest.mark.parametrize("s, sv", [(1.0, 1.0), (2.0, 1.0), (0.5, 1.5), (3.0, 0.7)])
def test_sympy_limit_is_sigma_v2_G_K_Gt_computed_directly(s, sv):
    claim, m = _loaded()
    X = np.array(m.X_TOKENS, dtype=float)
    K = X @ X.T / X.shape[1]
    G = _softmax(s * K)
    C = sv**2 * G @ K @ G.T
    p = _exact({"sigma_QK": s, "sigma_V": sv})
    exact = np.array(m.covariance_limit(p).evalf(30).tolist(), dtype=float)
    assert np.max(np.abs(exact - C)) < 1e-13
    a, b = m.PAIR
    values = claim.predict_numbers(claim.resolve({"sigma_QK": s, "sigma_V": sv}))
    assert values["attention"] == pytest.approx(np.mean(np.diag(G)), rel=1e-13)
    assert values["trace"] == pytest.approx(np.trace(C) / len(C), rel=1e-13)
    assert values["correlation"] == pytest.approx(C[a, b] / math.sqrt(C[a, a] * C[b, b]), rel=1e-13)


@pytest.mark.parametrize("s", [1.0, 2.0, 0.5])
def test_fluctuation_constant_matches_a_finite_difference_jacobian(s):
    """``lim d sum Var(A_ij)`` (sympy, delta method) against the same Gaussian computation
    with the softmax's Jacobian by central differences and the covariance of the logits'
    fluctuation built from the Wishart law's, ``Cov(E_ab, E_cd) = (d_ac d_bd + d_ad d_bc)/d``."""
    _, m = _loaded()
    X = np.array(m.X_TOKENS, dtype=float)
    n, d_in = X.shape
    K = X @ X.T / d_in
    # Cov of vec(H'), H' = X H X^T / d_in, with Cov(H_ab, H_cd) = d_ac d_bd + d_ad d_bc
    basis = []
    for a in range(d_in):
        for b in range(a, d_in):
            H = np.zeros((d_in, d_in))
            H[a, b] = H[b, a] = 1.0
            sd = math.sqrt(2.0) if a == b else 1.0  # Var(H_aa) = 2, Var(H_ab) = 1
            basis.append(sd * (X @ H @ X.T / d_in).ravel())
    B = np.array(basis)  # independent unit-variance coordinates of H'
    h = 1e-6
    J = np.zeros((n * n, n * n))
    for k in range(n * n):
        dS = np.zeros(n * n)
        dS[k] = h
        J[:, k] = ((_softmax(s * K + dS.reshape(n, n)) - _softmax(s * K - dS.reshape(n, n))).ravel()
                   / (2 * h))
    total = s**2 * float(np.sum((J @ B.T) ** 2))  # sum_ij Var(J_ij . H') s^2
    value = float(m.fluctuation_linear(_exact({"sigma_QK": s})))
    assert value == pytest.approx(total, rel=1e-7)


@pytest.mark.parametrize("s", [1.0, 2.0])
def test_contrast_quadrature_matches_monte_carlo_of_the_gaussian_logits(s):
    _, m = _loaded()
    X = np.array(m.X_TOKENS, dtype=float)
    K = X @ X.T / X.shape[1]
    rng = np.random.default_rng(0)
    n = 200_000
    total, se2 = 0.0, 0.0
    for i in range(len(X)):
        g = rng.standard_normal((n, X.shape[1])) @ X.T / math.sqrt(X.shape[1])  # N(0, K)
        P = _softmax(s * math.sqrt(K[i, i]) * g)
        total += float(P.var(axis=0).sum())
        se2 += float(np.sum(P.var(axis=0) ** 2 * 2 / n))  # rough: Var of a variance
    assert float(m.fluctuation_sqrt({"sigma_QK": sp.Float(s)})) == pytest.approx(
        total, abs=6 * math.sqrt(se2) + 1e-4)


@pytest.mark.slow
def test_attention_fluctuation_at_large_width_is_the_delta_method_constant():
    _, m = _loaded()
    X = np.array(m.X_TOKENS, dtype=float)
    rng = np.random.default_rng(1)
    d, reps, s = 4096, 2000, 1.0
    v = np.array([d * np.sum((m.attention_linear(rng, X, d, s)
                              - m.attention_linear(rng, X, d, s)) ** 2) / 2 for _ in range(reps)])
    want = float(m.fluctuation_linear(_exact({"sigma_QK": s})))
    assert abs(v.mean() - want) < 4 * v.std() / math.sqrt(reps) + 2 * want / d


@pytest.mark.slow
@pytest.mark.parametrize("s", [1.0, 2.0])
def test_the_bias_is_order_one_over_d_with_the_second_order_coefficient(s):
    """The finite-size model ``L + c/d``: ``d (E[mean_i A_ii] - mean_i G_ii)`` is the same at
    d = 64 and 256 and equals the second-order delta method ``1/2 sum_b f''[s B_b, s B_b]``
    over independent unit-variance coordinates ``B_b`` of ``H'`` (a d^-1/2 bias would grow
    like d^1/2 after the factor d)."""
    _, m = _loaded()
    X = np.array(m.X_TOKENS, dtype=float)
    d_in = X.shape[1]
    K = X @ X.T / d_in

    def f(S):
        return float(np.mean(np.diag(_softmax(S))))

    h, coefficient = 1e-3, 0.0
    for a in range(d_in):
        for b in range(a, d_in):
            H = np.zeros((d_in, d_in))
            H[a, b] = H[b, a] = 1.0
            dS = s * (math.sqrt(2.0) if a == b else 1.0) * X @ H @ X.T / d_in
            coefficient += (f(s * K + h * dS) - 2 * f(s * K) + f(s * K - h * dS)) / h**2 / 2
    rng = np.random.default_rng(3)
    for d in (64, 256):
        v = np.array([np.mean(np.diag(m.attention_linear(rng, X, d, s))) for _ in range(12000)])
        measured, se = d * (v.mean() - f(s * K)), d * v.std() / math.sqrt(v.size)
        assert abs(measured - coefficient) < 4 * se + 0.05 * abs(coefficient), (d, measured, se)
    assert abs(coefficient) > 0.1


@pytest.mark.slow
def test_value_output_product_has_the_law_of_W_V_W_O():
    """The output covariance with ``W_V W_O`` drawn through ``(W_V W_V^T)^{1/2} Z`` and with
    the two matrices drawn directly: same means and spreads of its trace and an entry."""
    _, m = _loaded()
    X = np.array(m.X_TOKENS, dtype=float)
    d_in, d, reps = X.shape[1], 24, 3000
    A = _softmax(X @ X.T / d_in)
    rng = np.random.default_rng(2)
    out = {"law": [], "direct": []}
    for _ in range(reps):
        M_law = m.value_output_product(rng, d_in, d, d)
        M_direct = rng.standard_normal((d_in, d)) @ rng.standard_normal((d, d))
        for key, M in (("law", M_law), ("direct", M_direct)):
            C = m.output_covariance(A, X, M, 1.0, d)
            out[key].append((np.trace(C), C[0, 3], C[1, 2] ** 2))
    law, direct = np.array(out["law"]), np.array(out["direct"])
    se = np.sqrt((law.var(axis=0) + direct.var(axis=0)) / reps)
    assert np.all(np.abs(law.mean(axis=0) - direct.mean(axis=0)) < 4 * se)
    assert np.all(np.abs(law.std(axis=0) / direct.std(axis=0) - 1) < 0.12)


def _judged(claim, case, data, variant):
    from gapverify.verification.judging.inference import two_sided_quantile
    from gapverify.verification.judging.verdict import count_tests, judge_claim

    tests = sum(count_tests([claim], {claim.id: len(data)}, {claim.id: c})
                for c in claim.cases_for("quick"))
    q = two_sided_quantile(0.01, tests)
    return judge_claim(claim, data, case, q=q, root_seed=0, variant=variant,
                       power_target=0.05, measure=False)


@pytest.mark.slow
@pytest.mark.parametrize("sigma_qk", [1.0, 2.0])
def test_a_prediction_made_five_percent_wrong_fails_and_the_true_one_does_not(sigma_qk):
    from gapverify.verification.judging.checks import Variant
    from gapverify.verification.judging.outcomes import Outcome

    claim, m = _loaded()
    case = claim.resolve({"sigma_QK": sigma_qk})
    sizes = (64, 91, 128, 181, 256, 362, 512, 724, 1024)  # the draws cost ~1 ms each
    root = np.random.SeedSequence(7)
    data = {}
    for T, seq in zip(sizes, root.spawn(len(sizes))):
        data[T] = [m.kernel_experiment(np.random.default_rng(s), T, case)
                   for s in seq.spawn(120)]
    true = _judged(claim, case, data, Variant())
    assert true.verdict != Outcome.FAIL, [c.reason for c in true.checks]
    for name in ASSERTED:
        for eps in (0.05, -0.05):
            wrong = _judged(claim, case, data, Variant(name=f"{name} {eps:+}",
                                                       scales={name: 1.0 + eps}))
            mine = [c for c in wrong.checks if c.prediction == name]
            assert wrong.verdict == Outcome.FAIL and all(c.verdict == Outcome.FAIL for c in mine), (
                name, eps, [c.reason for c in mine])


def test_oracle_script_is_not_collected_and_has_a_main():
    spec = importlib.util.spec_from_file_location("nt_oracle_kernel",
                                                  ROOT / "tests" / "peers" / "nt_oracle_kernel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(module.main) and not any(n.startswith("test") for n in dir(module))


def _nt_python():
    """An interpreter where neural_tangents imports: this one, or $GAPVERIFY_NT_PYTHON."""
    import os

    if importlib.util.find_spec("neural_tangents") is not None:
        return None, True
    other = os.environ.get("GAPVERIFY_NT_PYTHON")
    if other:
        ok = subprocess.run([other, "-c", "import sys, types; sys.modules.setdefault("
                             "'neural_tangents.experimental', types.ModuleType('x')); "
                             "import neural_tangents"], capture_output=True).returncode == 0
        return other, ok
    return None, False


@pytest.mark.slow
def test_neural_tangents_kernel_is_the_sympy_limit():
    python, ok = _nt_python()
    if not ok:
        pytest.skip("neural_tangents is not importable (here or at $GAPVERIFY_NT_PYTHON)")
    spec = importlib.util.spec_from_file_location("nt_oracle_kernel",
                                                  ROOT / "tests" / "peers" / "nt_oracle_kernel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.compare(python)
    for row in result["rows"]:
        assert row["kernel_rel_diff"] < 1e-12, row
        assert row["apply_identity_residual"] < 1e-10, row
        assert row["empirical_rel_diff"] < 0.1, row
