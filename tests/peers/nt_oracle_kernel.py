"""neural-tangents as an independent oracle for ``peers.attention_kernel`` (not collected by
pytest: a script with a main).

Compares the claim's exact limit ``sigma_V^2 G K G^T``, ``G = softmax(sigma_QK K)``,
``K = X X^T / d_in`` (sympy, ``peers/attention_kernel.py``) with the NNGP kernel of
neural-tangents' ``stax.GlobalSelfAttention(linear_scaling=True)`` on the claim's input
``X_TOKENS``, and checks that the layer's finite-width ``apply_fn`` is the claim's model:

* configuration mapping: ``n_heads=1``, ``W_query_std=sigma_QK, W_key_std=1`` (neural-tangents
  uses only the product ``QK_std``; with ``linear_scaling`` the key and query weights are
  tied and the logits are divided by ``d_in * n_chan_key``), ``W_value_std=sigma_V,
  W_out_std=1`` (only ``OV_std``), no bias, no positional embedding, softmax; the input a
  batch of one sequence ``X[None]`` (N tokens, d_in channels), whose input kernel
  neural-tangents takes as ``X X^T / d_in``;
* ``apply_fn`` with neural-tangents' own weights equals the claim's formula
  ``softmax(sigma_QK X W W^T X^T / (d_in d_k)) X W_V W_O sigma_V / sqrt(d_in d_v)`` to
  round-off;
* the empirical covariance over the output channels of ``apply_fn`` at width 4096 (a few
  seeds) is near the kernel (fluctuation ``O(d^-1/2)``).

Run it with an interpreter that has gapverify (``.venv/bin/python``) and point it at one
that has neural-tangents (never installed into the project's venv)::

    .venv/bin/python tests/peers/nt_oracle_kernel.py --nt-python /tmp/ntvenv/bin/python

(``$GAPVERIFY_NT_PYTHON`` does the same); without either, neural-tangents must import in
the running interpreter. Exit 0 when the kernels agree to ``1e-12`` (relative) and the
``apply_fn`` identity holds to ``1e-10``; 1 otherwise; 2 when neural-tangents is missing.

neural-tangents 0.6.5 imports TensorFlow at import time (``neural_tangents.experimental``,
the TF interop): that submodule is replaced by an empty module here, as nothing of it is
used; this lets it run with a JAX that matches it (0.4.26) whatever TensorFlow is present.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import types
from pathlib import Path

CLAIM_FILE = Path(__file__).resolve().parents[2] / "peers" / "attention_kernel.py"
CASES = ({"sigma_QK": 1.0, "sigma_V": 1.0}, {"sigma_QK": 2.0, "sigma_V": 1.0},
         {"sigma_QK": 0.5, "sigma_V": 1.5}, {"sigma_QK": 4.0, "sigma_V": 0.7})
WIDTH = 4096
SEEDS = 4


# --- the neural-tangents side (runs where neural_tangents imports) -------------------------

def _import_nt():
    sys.modules.setdefault("neural_tangents.experimental",
                           types.ModuleType("neural_tangents.experimental"))
    import jax

    jax.config.update("jax_enable_x64", True)
    import neural_tangents

    return jax, neural_tangents


def nt_side(X, cases) -> dict:
    """neural-tangents' NNGP kernel, the ``apply_fn`` identity residual and the empirical
    covariance at width :data:`WIDTH`, per case; with the versions."""
    import warnings

    import numpy as np

    jax, nt = _import_nt()
    import jax.numpy as jnp
    import jaxlib
    from neural_tangents import stax

    warnings.filterwarnings("ignore", message="Linear scaling attention used")
    x = jnp.asarray(np.array(X, dtype=float))[None]  # (batch 1, N tokens, d_in)
    n_tok, d_in = x.shape[1], x.shape[2]
    out = {"versions": {"neural_tangents": nt.__version__, "jax": jax.__version__,
                        "jaxlib": jaxlib.__version__, "python": sys.version.split()[0]},
           "cases": []}
    for case in cases:
        s, sv = float(case["sigma_QK"]), float(case["sigma_V"])
        layer = dict(n_heads=1, linear_scaling=True, W_query_std=s, W_key_std=1.0,
                     W_value_std=sv, W_out_std=1.0, b_std=None,
                     attention_mechanism="SOFTMAX", pos_emb_type="NONE")
        _, _, kernel_fn = stax.GlobalSelfAttention(n_chan_out=1, n_chan_key=1, n_chan_val=1,
                                                   **layer)
        nngp = np.asarray(kernel_fn(x, None, "nngp"))[0, 0]  # (N, N) of the one sequence
        init_fn, apply_fn, _ = stax.GlobalSelfAttention(
            n_chan_out=WIDTH, n_chan_key=WIDTH, n_chan_val=WIDTH, **layer)
        identity, empirical = 0.0, []
        for seed in range(SEEDS):
            _, params = init_fn(jax.random.PRNGKey(seed), x.shape)
            _, WK, WV, WO, _, _ = params
            y = np.asarray(apply_fn(params, x))[0]  # (N, d_out)
            # the claim's model with neural-tangents' weights (tied W_Q = W_K = WK[0])
            W, V, O = (np.asarray(a, dtype=float) for a in (WK[0], WV[0], WO))
            Xn = np.asarray(x[0])
            S = s * Xn @ W @ W.T @ Xn.T / (d_in * W.shape[1])
            A = np.exp(S - S.max(axis=1, keepdims=True))
            A /= A.sum(axis=1, keepdims=True)
            mine = sv * A @ Xn @ V @ O / np.sqrt(d_in * V.shape[1])
            identity = max(identity, float(np.max(np.abs(y - mine)) / np.max(np.abs(y))))
            empirical.append(y @ y.T / y.shape[1])
        out["cases"].append({"case": case, "nngp": nngp.tolist(),
                             "apply_identity_residual": identity,
                             "empirical_mean": np.mean(empirical, axis=0).tolist(),
                             "n_tokens": n_tok})
    return out


# --- the claim's side (runs where gapverify imports) ---------------------------------------

def _claim_module():
    from gapverify.verification.claims import loading
    from gapverify.numerics.plugins import EXTRA_EXPERIMENTS

    loaded = loading.read_claim_file(CLAIM_FILE, {})
    return sys.modules[EXTRA_EXPERIMENTS[loaded.claims[0].experiment].__module__]


def sympy_limit(module, case):
    import numpy as np
    import sympy as sp

    p = {k: sp.nsimplify(v) for k, v in case.items()}
    return np.array(module.covariance_limit(p).evalf(30).tolist(), dtype=float)


def run_nt(nt_python: str | None, X, cases) -> dict:
    payload = json.dumps({"X": X, "cases": list(cases)})
    if nt_python:
        done = subprocess.run([nt_python, __file__, "--nt-only", payload], capture_output=True,
                              text=True, timeout=900)
        if done.returncode != 0:
            raise RuntimeError(f"{nt_python} could not run neural-tangents:\n{done.stderr[-2000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])
    return nt_side(X, cases)


def compare(nt_python: str | None = None) -> dict:
    """Run both sides and return the comparison (the test calls this)."""
    import numpy as np

    module = _claim_module()
    X = [list(r) for r in module.X_TOKENS]
    nt_out = run_nt(nt_python, X, CASES)
    rows = []
    for c in nt_out["cases"]:
        exact = sympy_limit(module, c["case"])
        scale = float(np.max(np.abs(exact)))
        nngp, emp = np.array(c["nngp"]), np.array(c["empirical_mean"])
        rows.append({"case": c["case"],
                     "kernel_rel_diff": float(np.max(np.abs(nngp - exact))) / scale,
                     "apply_identity_residual": c["apply_identity_residual"],
                     "empirical_rel_diff": float(np.max(np.abs(emp - exact))) / scale,
                     "limit_00_03": [float(exact[0, 0]), float(exact[0, 3])]})
    return {"versions": nt_out["versions"], "rows": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nt-python", default=os.environ.get("GAPVERIFY_NT_PYTHON"),
                    help="an interpreter where neural_tangents imports ($GAPVERIFY_NT_PYTHON)")
    ap.add_argument("--nt-only", metavar="JSON", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.nt_only:  # the neural-tangents side alone, as one JSON line
        spec = json.loads(args.nt_only)
        print(json.dumps(nt_side(spec["X"], spec["cases"])))
        return 0
    try:
        result = compare(args.nt_python)
    except ImportError as exc:
        print(f"neural-tangents is not importable here ({exc}); pass --nt-python", file=sys.stderr)
        return 2
    v = result["versions"]
    print(f"neural-tangents {v['neural_tangents']}, jax {v['jax']}, jaxlib {v['jaxlib']}, "
          f"python {v['python']}; GlobalSelfAttention(n_heads=1, linear_scaling=True, "
          f"W_query_std=sigma_QK, W_key_std=1, W_value_std=sigma_V, W_out_std=1), input X[None]")
    ok = True
    for r in result["rows"]:
        good = r["kernel_rel_diff"] <= 1e-12 and r["apply_identity_residual"] <= 1e-10
        ok &= good
        print(f"{r['case']}: max|K_nt - K_sympy|/max|K| = {r['kernel_rel_diff']:.2e}; "
              f"apply_fn vs the claim's formula {r['apply_identity_residual']:.2e}; "
              f"empirical covariance at width {WIDTH} ({SEEDS} seeds) "
              f"{r['empirical_rel_diff']:.2%} off; C_00, C_03 = "
              f"{r['limit_00_03'][0]:.10f}, {r['limit_00_03'][1]:.10f}  "
              f"{'ok' if good else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
