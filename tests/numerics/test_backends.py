"""tests for numerics/backends.py and numerics/array_api.py: one code path on numpy and
CPU torch (no GPU here), the default numpy path unchanged, seeded streams per backend."""
import math

import numpy as np
import pytest

from gapverify.numerics import experiments
from gapverify.numerics.backends import (
    Backend, BackendUnavailable, check_backend, sampling_keys,
)
from gapverify.numerics.edge import EDGE_K, edge_stable_ranks, tracy_widom_edge
from gapverify.numerics.samplers import gaussian_matrix, remove_outlier
from gapverify.numerics.variants import ginibre_reference
from gapverify.numerics.statistics import (
    frobenius_sq, moment_ratio, stable_rank, stable_ranks,
    top_eigenvalues as np_top_eigenvalues, top_singular_values as np_top_singular_values,
)
from gapverify.verification.running.runner import params_key, stream, task_limits
from gapverify.verification.running.store import parameters_key

pytest.importorskip("array_api_compat", reason="array-api-compat not installed (pip install "
                                               "gapverify[gpu] or the test extra)")
from gapverify.numerics import array_api

OUT = {"s2": 0.25, "mu": -0.125}
WIDTH = {"s2": 0.5, "mu": -0.25, "gamma": 0.5, "sigma_V": 1.0}


def _torch():
    torch = pytest.importorskip("torch", reason="torch not installed: the torch backend is "
                                                "tested on CPU torch (pip install gapverify[gpu])")
    torch.set_num_threads(1)
    return torch


# --- the default path ----------------------------------------------------------------------

def _reference_outliers(rng, T, p):
    # the body of numerics.experiments.outliers before backends existed (with the Ginibre
    # reference drawn after A added since)
    A = experiments._attention(rng, T, p)
    s = np_top_singular_values(A, 2)
    lam = np_top_eigenvalues(A, 2)
    rho = ginibre_reference(rng, T, 1, restarts=None)
    return {"lambda1": float(lam[0].real), "lambda1_imag": float(abs(lam[0].imag)),
            "s1": float(s[0]), "sqrtT_s2": float(s[1] * math.sqrt(T)),
            "sqrtT_lambda2": float(abs(lam[1]) * math.sqrt(T)), "gap_ratio": float(s[0] / s[1]),
            "ginibre_rho": rho, "sqrtT_lambda2_ginibre": float(abs(lam[1]) * math.sqrt(T)) / rho}


def _reference_width(rng, T, p):
    # the body of numerics.experiments.width_stable_rank (before backends existed, with the
    # edge reads added since)
    d = experiments.width_of(T, p["gamma"])
    A = experiments._attention(rng, T, p)
    Y = gaussian_matrix(rng, T, d, p["sigma_V"])
    X1 = A @ Y
    X1perp = X1 - Y.mean(axis=0, keepdims=True)
    sr_X1, sr_Sigma1 = stable_ranks(X1)
    sr_X1perp, sr_Sigma1perp, e_X1perp, e_Sigma1perp = edge_stable_ranks(X1perp)
    A_perp = remove_outlier(A)
    top = np_top_singular_values(A_perp, EDGE_K)
    frob = frobenius_sq(A_perp)
    return {"sr_A": stable_rank(A), "sr_X1": sr_X1, "sr_Sigma1": sr_Sigma1,
            "sr_Aperp_over_T": frob / top[0] ** 2 / T,
            "sr_X1perp_over_T": sr_X1perp / T, "sr_Sigma1perp_over_T": sr_Sigma1perp / T,
            "sr_Aperp_edge_over_T": frob / tracy_widom_edge(top) / T,
            "sr_X1perp_edge_over_T": e_X1perp / T, "sr_Sigma1perp_edge_over_T": e_Sigma1perp / T,
            "m2_ratio_X1perp": moment_ratio(sr_X1perp / T, sr_Sigma1perp / T)}


@pytest.mark.parametrize("exp, params, reference", [
    ("markov.outliers", OUT, _reference_outliers),
    ("width.stable_rank", WIDTH, _reference_width)])
def test_default_path_is_bit_identical_and_never_uses_array_api(monkeypatch, exp, params,
                                                                 reference):
    """numpy in float64 (no backend in the params) is the numpy/scipy path, bit for bit,
    with the same keys; the array-API code is not called; the store key is unchanged."""
    task_limits()

    def refuse(*a, **k):
        raise AssertionError("the default path must not use numerics.array_api")

    monkeypatch.setattr(array_api, "outliers", refuse)
    monkeypatch.setattr(array_api, "width_stable_rank", refuse)
    got = experiments.EXPERIMENTS[exp](stream(exp, 96, 1, 7), 96, dict(params))
    want = reference(stream(exp, 96, 1, 7), 96, dict(params))
    assert got.keys() == want.keys()
    for k in want:
        assert float(got[k]).hex() == float(want[k]).hex(), k
    assert sampling_keys("numpy", "cpu", "float64") == {}
    assert params_key(params) == parameters_key(params)


def test_store_key_names_backend_device_and_dtype():
    keys = sampling_keys("torch", "cpu", "float32")
    assert keys == {"backend": "torch", "device": "cpu", "dtype": "float32"}
    key = params_key({**OUT, **keys})
    assert '"backend": "torch"' in key and '"dtype": "float32"' in key and '"device": "cpu"' in key
    assert key != params_key(OUT)
    assert params_key({**OUT, **sampling_keys("numpy", "cpu", "float32")}) != params_key(OUT)


# --- the iterative methods against ARPACK/PROPACK ------------------------------------------

@pytest.mark.parametrize("name", ["numpy", "torch"])
def test_lanczos_and_krylov_schur_match_scipy(name):
    """Golub-Kahan-Lanczos s1, s2 and Krylov-Schur lambda1, |lambda2| of one matrix agree with
    scipy's PROPACK/ARPACK to their stated tolerance (1e-10 relative in float64)."""
    if name == "torch":
        _torch()
    b = Backend(name, "cpu", "float64")
    A = array_api.softmax_markov(b, np.random.default_rng(3), 300, -0.25, 0.5)
    An = b.to_host(A)
    s = array_api.matrix_singular_values(A, 2, 1e-10)
    ref = np_top_singular_values(An, 2)
    assert np.allclose(s, ref, rtol=1e-9, atol=0)
    ev = array_api.top_eigenvalues(A, 2, 1e-10)
    ref_ev = np.linalg.eigvals(An)
    ref_ev = ref_ev[np.argsort(-np.abs(ref_ev))]
    assert abs(ev[0] - 1) < 1e-10
    assert abs(abs(ev[1]) - abs(ref_ev[1])) < 1e-9
    # the stable rank of Aperp through the operator, without forming it
    got = array_api.width_stable_rank(np.random.default_rng(3), 64,
                                      {**WIDTH, "backend": name, "device": "cpu",
                                       "dtype": "float64"})
    assert set(got) == set(_reference_width(np.random.default_rng(3), 64, WIDTH))


def test_softmax_rows_are_stochastic_in_float32_and_float64():
    torch = _torch()
    for dtype in ("float64", "float32"):
        b = Backend("torch", "cpu", dtype)
        A = array_api.softmax_markov(b, np.random.default_rng(0), 128, -0.5, 1.0)
        assert A.dtype == getattr(torch, dtype)
        rows = b.to_host(A).astype(float).sum(axis=1)
        assert np.max(np.abs(rows - 1)) <= 128 * b.eps


# --- reproducibility -------------------------------------------------------------------------

def test_same_backend_and_seed_same_numbers_other_seed_other_numbers():
    _torch()
    p = {**OUT, **sampling_keys("torch", "cpu", "float64")}
    a = experiments.outliers(stream("markov.outliers", 64, 0, 11), 64, p)
    b = experiments.outliers(stream("markov.outliers", 64, 0, 11), 64, p)
    c = experiments.outliers(stream("markov.outliers", 64, 0, 12), 64, p)
    assert a == b
    assert a["s1"] != c["s1"]
    # torch's stream is its own (not numpy's draws): the numbers differ from numpy's
    assert a["s1"] != experiments.outliers(stream("markov.outliers", 64, 0, 11), 64, dict(OUT))["s1"]


def test_backends_agree_in_distribution():
    """Means of s1 and sqrt(T) s2 over 8 replicates at T = 128, numpy path against CPU torch:
    within 4 standard errors of their difference (the seeds are fixed, so this is not flaky;
    a wrong sampler or Lanczos, e.g. s2 off by 2%, is many standard errors away)."""
    _torch()
    T, n = 128, 8
    p_t = {**OUT, **sampling_keys("torch", "cpu", "float64")}
    for key in ("s1", "sqrtT_s2", "sqrtT_lambda2", "ginibre_rho", "sqrtT_lambda2_ginibre"):
        xs = [experiments.outliers(stream("markov.outliers", T, r, 5), T, dict(OUT))[key]
              for r in range(n)]
        ys = [experiments.outliers(stream("markov.outliers", T, r, 5), T, p_t)[key]
              for r in range(n)]
        se = math.sqrt(np.var(xs, ddof=1) / n + np.var(ys, ddof=1) / n)
        assert abs(np.mean(xs) - np.mean(ys)) <= 4 * se, (key, np.mean(xs), np.mean(ys), se)


# --- float32 -------------------------------------------------------------------------------

def test_float32_scales_the_exact_tolerance_of_lambda1():
    """lambda1 in float32 is 1 only to float32 round-off: its exact check's tolerance is
    scaled by float32's eps (1e-5 + T eps_32), never the double-precision 1e-10 + T eps."""
    _torch()
    from gapverify.verification.claims.registry._common import EPS, _lanczos_tolerance

    T = 256
    m = experiments.outliers(stream("markov.outliers", T, 0, 1), T,
                             {**OUT, **sampling_keys("torch", "cpu", "float32")})
    eps32 = float(np.finfo(np.float32).eps)
    assert m["dtype_eps"] == eps32 and m["lanczos_tol"] == 1e-5
    assert _lanczos_tolerance(T, m) == pytest.approx(1e-5 + T * eps32)
    assert abs(m["lambda1"] - 1) <= _lanczos_tolerance(T, m)
    # the default measurement (no dtype keys): the double-precision bound, unchanged
    assert _lanczos_tolerance(T, {"lambda1": 1.0}) == 1e-10 + T * EPS


# --- availability --------------------------------------------------------------------------

def test_bad_values_and_missing_libraries_are_named():
    with pytest.raises(ValueError, match="'--backend' must be one of numpy, torch, cupy"):
        check_backend("jax")
    with pytest.raises(ValueError, match="'--dtype' must be one of float64, float32"):
        check_backend("numpy", "cpu", "float16")
    with pytest.raises(ValueError, match="numpy runs on the cpu only"):
        check_backend("numpy", "cuda")
    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.raises(BackendUnavailable, match=r"pip install gapverify\[gpu\]"):
            check_backend("cupy", "cuda")


@pytest.mark.parametrize("seed", range(6))
def test_krylov_schur_finds_the_largest_moduli(seed):
    """Restarted Arnoldi against LAPACK's full spectrum on several draws (numpy backend,
    so no torch needed): lambda1 = 1 and |lambda2| to 1e-9, in float64."""
    b = Backend("numpy", "cpu", "float64")
    T = 120 + 37 * seed
    A = array_api.softmax_markov(b, np.random.default_rng(seed), T, -0.25, 0.5)
    ev = array_api.top_eigenvalues(A, 2, 1e-10)
    ref = np.sort(np.abs(np.linalg.eigvals(A)))[::-1]
    assert abs(ev[0] - 1) < 1e-10 and abs(abs(ev[1]) - ref[1]) < 1e-9
    s = array_api.matrix_singular_values(A, 3, 1e-10)
    assert np.allclose(s, np.linalg.svd(A, compute_uv=False)[:3], rtol=1e-9, atol=0)
