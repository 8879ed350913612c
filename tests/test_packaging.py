"""The distribution installs one import name, ``gapverify``: the wheel built from this
checkout has one top-level package (with the templates and snapshots it reads), and in an
environment with only that wheel, ``import theory`` and ``import reports`` fail while
``gapverify``, its command line and ``python -m gapverify`` work."""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # no build isolation: the test environment has setuptools>=77 (the test extra) and no
    # network is needed
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "--quiet", "-w", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (path,) = out.glob("gapverify-*.whl")
    return path


def test_the_wheel_has_one_top_level_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/", 1)[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"gapverify"}
    for needed in ("gapverify/cli/__init__.py", "gapverify/theory/laws.py",
                   "gapverify/numerics/experiments.py", "gapverify/reports/tables.py",
                   "gapverify/reports/templates/report.tex",
                   "gapverify/verification/snapshots/_meta.json", "gapverify/__main__.py",
                   "gapverify/peers/entropy.py"):
        assert needed in names, needed
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "gapverify = gapverify.cli:entry" in text
    assert "peers_entropy = gapverify.peers.entropy" in text  # the peers' claims, as plug-ins


def _bare_python(target: Path, code: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Python with only ``target`` (the installed wheel) and the dependencies' folder on
    its path: no site processing, so the checkout's editable install is not seen."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join([str(target), sysconfig.get_paths()["purelib"]])
    return subprocess.run([sys.executable, "-S", *code], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_only_gapverify_is_importable_from_the_installed_wheel(wheel, tmp_path):
    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet",
                           "--target", str(target), str(wheel)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    probe = ("import importlib, gapverify, gapverify.cli as cli\n"
             f"assert gapverify.__file__.startswith({str(target)!r}), gapverify.__file__\n"
             "for name in ('theory', 'numerics', 'verification', 'reports', 'peers'):\n"
             "    try:\n"
             "        importlib.import_module(name)\n"
             "    except ModuleNotFoundError:\n"
             "        continue\n"
             "    raise SystemExit(f'{name} is importable')\n"
             "print(gapverify.predict('softmax.kappa', s2=0.5)['kappa'])\n")
    proc = _bare_python(target, ["-c", probe], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert float(proc.stdout) == pytest.approx(0.80543235, rel=1e-7)  # sqrt(e^0.5 - 1)
    proc = _bare_python(target, ["-m", "gapverify", "--version"], tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("gapverify "), proc.stderr
