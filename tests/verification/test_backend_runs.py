"""tests for ``gapverify run --backend/--device/--dtype`` and ``--profile gpu`` on CPU torch
(no GPU here: the CUDA run is scripts/gpu_check.py's, on a machine with one)."""
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gapverify.cli import main

pytest.importorskip("array_api_compat", reason="array-api-compat not installed (pip install "
                                               "gapverify[gpu] or the test extra)")

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--sizes", "64,91,128,181", "--replicates", "4", "--quiet", "--no-replay"]


def _torch():
    torch = pytest.importorskip("torch", reason="torch not installed: the torch backend is "
                                                "tested on CPU torch (pip install gapverify[gpu])")
    torch.set_num_threads(1)
    return torch


#: at 4 replicates a check's power is a property of the draw (a stated rate 0.5 faster is
#: rejected by one draw and not by the next): the backends are compared on what the
#: statements passed, failed or recorded, with "lacks power" counted as passed
_PASSED = dict.fromkeys(("verified", "supported", "reproduced", "lacks power"), "passed")


def _words(doc):
    return ({c["claim"]: c["verdict"] for c in doc["claims"]},
            {(c["claim"], k["label"]): _PASSED.get(k["verdict"], k["verdict"])
             for c in doc["claims"] for k in c["checks"]})


@pytest.mark.slow
def test_torch_cpu_gives_the_verdict_words_of_numpy(tmp_path, capsys):
    """The acceptance run of issue 11 at small T: the same claim and check verdicts from
    numpy's path and CPU torch's (different draws of the same law); the torch samples are
    stored under their own key, with backend, device and dtype."""
    _torch()
    store = str(tmp_path / "s.sqlite")
    docs, codes = {}, {}
    for backend in ("numpy", "torch"):
        out = tmp_path / f"{backend}.json"
        codes[backend] = main(["run", "markov.outliers", "width.stable_rank", "--backend", backend,
                               "--device", "cpu", "--profile", "quick", *SMALL, "--store", store,
                               "--json", str(out), "--workers", "1"])
        docs[backend] = json.loads(out.read_text())
    printed = capsys.readouterr().out
    assert "Sampled with torch on cpu in float64" in printed
    assert codes["numpy"] == codes["torch"]
    assert _words(docs["numpy"]) == _words(docs["torch"])
    assert "backend" not in docs["numpy"] and docs["torch"]["backend"]["backend"] == "torch"
    # readers of results (reports) never take numpy's samples for torch's
    assert {c["experiment"] for c in docs["torch"]["claims"]} == {
        "markov.outliers[backend=torch,device=cpu,dtype=float64]",
        "width.stable_rank[backend=torch,device=cpu,dtype=float64]"}
    keys = {k for (k,) in sqlite3.connect(store).execute("SELECT DISTINCT params FROM measurements")}
    torch_keys = [k for k in keys if '"backend": "torch"' in k]
    assert torch_keys and all('"dtype": "float64"' in k and '"device": "cpu"' in k
                              for k in torch_keys)
    assert any("backend" not in k for k in keys)  # numpy's keys as before


def test_float32_run_judges_lambda1_by_float32_round_off(tmp_path):
    _torch()
    out = tmp_path / "f32.json"
    code = main(["run", "markov.outliers", "--backend", "torch", "--dtype", "float32",
                 *SMALL, "--store", str(tmp_path / "s.sqlite"), "--json", str(out),
                 "--workers", "1"])
    doc = json.loads(out.read_text())
    checks = {k["label"]: k for c in doc["claims"] for k in c["checks"]}
    assert code in (0, 3)
    assert checks["lambda1 @ s2=0.25"]["verdict"] == "verified"
    assert doc["backend"] == {"backend": "torch", "device": "cpu", "dtype": "float32"}


@pytest.mark.parametrize("argv, message", [
    (["--backend", "jax"], "parameter '--backend' must be one of numpy, torch, cupy, got 'jax'"),
    (["--device", "tpu"], "parameter '--device' must be one of cpu, cuda, got 'tpu'"),
    (["--dtype", "float16"], "parameter '--dtype' must be one of float64, float32, got 'float16'"),
    (["--profile", "gpu"], "runs with --backend torch or cupy"),
])
def test_bad_backend_options_exit_2(tmp_path, capsys, argv, message):
    code = main(["run", "markov.outliers", *argv, "--store", str(tmp_path / "s.sqlite"), "--quiet"])
    assert code == 2
    assert message in capsys.readouterr().err


def test_missing_library_and_other_claims_exit_2(tmp_path, capsys):
    store = ["--store", str(tmp_path / "s.sqlite"), "--quiet"]
    try:
        import cupy  # noqa: F401
    except ImportError:
        assert main(["run", "markov.outliers", "--backend", "cupy", "--device", "cuda", *store]) == 2
        assert "pip install gapverify[gpu]" in capsys.readouterr().err
    torch = _torch()
    if not torch.cuda.is_available():
        assert main(["run", "markov.outliers", "--backend", "torch", "--device", "cuda",
                     *store]) == 2
        assert "torch sees no CUDA device" in capsys.readouterr().err
    assert main(["run", "softmax.kappa", "--backend", "torch", *store]) == 2
    err = capsys.readouterr().err
    assert "softmax.kappa" in err and "markov.outliers, width.stable_rank" in err
    assert main(["run", "markov.outliers", "--backend", "torch", "--entries", "exponential",
                 *store]) == 2
    assert "--entries" in capsys.readouterr().err
    # audit and calibrate sample with numpy: they refuse a backend instead of ignoring it
    assert main(["audit", "markov.outliers", "--backend", "torch", *store]) == 2
    assert "apply to gapverify run" in capsys.readouterr().err


def test_gpu_profile_sizes_and_memory():
    from gapverify.numerics.backends import matrix_gib
    from gapverify.verification.claims.registry import get_claim

    out, width = get_claim("markov.outliers").profiles["gpu"], get_claim("width.stable_rank").profiles["gpu"]
    assert max(out.sizes) == 65536 and max(width.sizes) == 32768
    assert matrix_gib(65536) == 32.0 and matrix_gib(65536, "float32") == 16.0


def test_gpu_check_script_dry_run(tmp_path):
    """scripts/gpu_check.py runs end to end on CPU torch with --dry-run (tiny sizes)."""
    _torch()
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gpu_check.py"), "--dry-run",
                           "--out", str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for word in ("markov.outliers", "width.stable_rank", "ratio", "verdict"):
        assert word in proc.stdout
    assert (tmp_path / "gpu_check.json").exists()
