"""reports/model_figures.py on synthetic profiles (no torch needed)."""
import numpy as np

from gapverify.reports.model_figures import _save, depth_figure, exponents, layer_table


def _profile(L=3, T=16):
    p = {"T": T, "depth": L, "root_seed": 1}
    for inp in ("tok", "iso"):
        for var in ("std", "fix"):
            for k in ("s1", "sqrtT_s2", "frob"):
                p[f"{inp}_{var}_{k}"] = list(np.linspace(1, 2, L))
            p[f"{inp}_{var}_sr_X"] = list(np.linspace(10, 2, L + 1))
            p[f"{inp}_{var}_sr_Sigma"] = list(np.linspace(5, 1, L + 1))
    return p


def test_layer_table_and_depth_figure(tmp_path):
    prof = {"bert": _profile(), "gpt2": _profile()}
    text = layer_table(prof, "iso")
    assert "||A-C_T||_F^2/H_T" in text and len(text.splitlines()) == 2 * (2 + 1 + 3 + 1) - 1
    png, pdf = _save(depth_figure(prof), tmp_path / "depth")
    assert png.stat().st_size > 0 and pdf.stat().st_size > 0


def test_exponents_recover_a_power_law():
    T = [64, 128, 256, 512]
    rows = [{"T": t, "mean": 3.0 * t**0.5, "se": 0.01 * t**0.5} for t in T]
    run = {"claims": [{"claim": "models.bert", "checks": [{"label": "x", "rows": rows}]},
                      {"claim": "markov.outliers", "checks": [{"label": "y", "rows": rows}]}]}
    (r,) = exponents(run)
    assert r["check"] == "x" and abs(r["exponent"] - 0.5) < 1e-6 and r["low"] <= 0.5 <= r["high"]
