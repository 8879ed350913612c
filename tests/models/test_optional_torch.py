"""Without torch: the core never imports it, and the model claims report 'not assessed'
instead of failing (simulated in a subprocess where ``import torch`` fails)."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# a finder in front of every other that refuses torch and transformers, as if not installed
_HIDE = ("import sys\n"
         "class _Hide:\n"
         "    def find_spec(self, name, path=None, target=None):\n"
         "        if name.split('.')[0] in ('torch', 'transformers'):\n"
         "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
         "        return None\n"
         "sys.meta_path.insert(0, _Hide())\n")


def _python(code: str, tmp_path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240)


def test_core_never_imports_torch(tmp_path):
    code = ("import sys\n"
            "import gapverify.verification.claims.registry, gapverify.numerics.experiments\n"
            "from gapverify.cli import main\n"
            "assert main(['claims']) == 0\n"
            "assert main(['predict', 'models.bert']) == 0\n"
            "bad = [m for m in ('torch', 'transformers') if m in sys.modules]\n"
            "assert not bad, bad\n"
            "print('OK')\n")
    proc = _python(code, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "models.bert" in proc.stdout and "training.fix" in proc.stdout


def test_without_torch_claims_are_not_assessed(tmp_path):
    out = tmp_path / "r.json"
    code = (_HIDE + "from gapverify.cli import main\n"
            f"raise SystemExit(main(['run', 'models.bert', 'models.gpt2', 'training.fix', "
            f"'--profile', 'quick', '--quiet', '--store', {str(tmp_path / 's.sqlite')!r}, "
            f"'--json', {str(out)!r}]))\n")
    proc = _python(code, tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr  # not verified, nothing failed
    assert "NOT VERIFIED: NOT ASSESSED" in proc.stdout
    run = json.loads(out.read_text())
    for claim in run["claims"]:
        assert claim["verdict"] == "not verified: not assessed"
        assert claim["checks"]
        for check in claim["checks"]:
            assert check["verdict"] == "outside domain"
            assert check["reason"] == ("not assessed: torch not installed "
                                       "(pip install gapverify[models])")


def test_snapshot_does_not_depend_on_torch(tmp_path):
    proc = _python(_HIDE + "from gapverify.cli import main\n"
                   "raise SystemExit(main(['snapshot']))\n", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
