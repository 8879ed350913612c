"""tests for claims from outside the package: the tutorial's claim file runs and audits
through ``--claims-from`` (docs/writing-a-claim.md: its first Python block is the file),
the peers' claims load through the package's own entry points, and an installed plug-in's
claim appears in ``gapverify claims`` (CI installs examples/gapverify-column-sums)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

from gapverify.cli import main

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "writing-a-claim.md"


# claims loaded here leave the registry and $GAPVERIFY_CLAIMS as they found them
pytestmark = pytest.mark.usefixtures("isolated_registry")


@pytest.fixture
def tutorial_file(tmp_path) -> Path:
    block = re.search(r"```python\n(.*?)```", TUTORIAL.read_text(), re.S).group(1)
    path = tmp_path / "participation.py"
    path.write_text(block)
    return path


@pytest.mark.slow
def test_the_tutorial_claim_runs_verifies_and_audits(tutorial_file, tmp_path, capsys):
    store, out = str(tmp_path / "s.sqlite"), tmp_path / "r.json"
    code = main(["run", "tutorial.participation", "--claims-from", str(tutorial_file),
                 "--profile", "quick", "--workers", "1", "--quiet", "--store", store,
                 "--json", str(out)])
    assert code == 0, capsys.readouterr().out
    (claim,) = json.loads(out.read_text())["claims"]
    assert claim["verdict"] == "verified"
    assert main(["audit", "tutorial.participation", "--claims-from", str(tutorial_file),
                 "--workers", "1", "--quiet", "--store", store]) == 0


def test_the_python_api_loads_and_verifies_a_claim_file(tutorial_file):
    import gapverify

    assert gapverify.load_claims([tutorial_file]) == ["tutorial.participation"]
    assert gapverify.predict("tutorial.participation", s2=0.25)["participation"] == \
        pytest.approx(1.2840254166877414)  # e^{1/4}
    run = gapverify.verify("tutorial.participation", sizes=[64, 128, 256], replicates=4)
    assert run["tutorial.participation"].claim == "tutorial.participation"


def test_a_wrong_tutorial_statement_fails(tutorial_file, tmp_path):
    wrong = tutorial_file.read_text().replace('return sp.exp(p["s2"])',
                                              'return sp.exp(p["s2"]) * sp.Rational(103, 100)')
    assert wrong != tutorial_file.read_text()
    path = tmp_path / "wrong.py"
    path.write_text(wrong)
    assert main(["run", "tutorial.participation", "--claims-from", str(path), "--profile",
                 "quick", "--workers", "1", "--quiet", "--no-replay",
                 "--store", str(tmp_path / "w.sqlite")]) == 1


def test_the_tutorial_file_is_about_sixty_lines(tutorial_file):
    assert 30 <= len(tutorial_file.read_text().splitlines()) <= 70


def test_a_bad_claim_file_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("CLAIMS = [\n")
    assert main(["claims", "--claims-from", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"gapverify: error: {bad}:")


def test_the_peers_claims_come_from_the_package_entry_points(capsys):
    assert main(["claims", "--json"]) == 0
    ids = {c["id"] for c in json.loads(capsys.readouterr().out)}
    assert {"peers.entropy", "peers.collapsed_gradients", "peers.kedia_attention"} <= ids


def _installed(name: str) -> bool:
    try:
        version(name)
    except PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not (os.environ.get("CI") or _installed("gapverify-column-sums")),
                    reason="pip install -e examples/gapverify-column-sums (CI installs it)")
def test_an_installed_plugin_claim_is_listed(capsys):
    assert _installed("gapverify-column-sums"), "CI must install examples/gapverify-column-sums"
    assert main(["claims", "--json"]) == 0
    ids = {c["id"] for c in json.loads(capsys.readouterr().out)}
    assert "example.column_sums" in ids


# --- the registry as an object (issue 33) ---------------------------------------------------

def test_importing_the_registry_loads_no_plugin():
    """The plug-ins load on the first lookup or listing, not on import."""
    code = ("import sys\n"
            "from gapverify.verification.claims import registry\n"
            "before = any(m.startswith('gapverify.peers') for m in sys.modules)\n"
            "n = len(registry.CLAIMS)\n"
            "after = any(m.startswith('gapverify.peers') for m in sys.modules)\n"
            "print(before, after, 'peers.entropy' in registry.CLAIMS)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "True"]


def test_the_built_in_claims_are_the_families_lists_in_order():
    from gapverify.verification.claims.registry import BUILT_IN, FAMILIES, REGISTRY

    built_in = [c.id for family in FAMILIES for c in family.CLAIMS]
    assert [c for c in REGISTRY.ids() if REGISTRY.source(c) == BUILT_IN] == built_in
    assert REGISTRY.ids()[:len(built_in)] == tuple(built_in)


def test_the_families_are_written_with_the_public_api():
    """No family module registers or builds profiles with private helpers: each lists its
    claims in ``CLAIMS`` and imports Claim, Check, Prediction and profiles from the
    authoring module (the names ``from gapverify import ...`` gives a claim file)."""
    from gapverify.verification.claims import authoring
    from gapverify.verification.claims.registry import FAMILIES

    for family in FAMILIES:
        source = Path(family.__file__).read_text()
        assert "_register" not in source and "_profiles(" not in source, family.__name__
        for name in ("Claim", "Check", "Prediction"):
            assert getattr(family, name) is getattr(authoring, name), (family.__name__, name)


def test_a_registry_of_its_own(tutorial_file):
    """A fresh registry holds what it is given and loads what it is asked to."""
    from gapverify.verification.claims.errors import UnknownClaimError
    from gapverify.verification.claims.registry import BUILT_IN, REGISTRY, Registry

    kappa = REGISTRY.get("softmax.kappa")
    mine = Registry([kappa])
    assert mine.ids() == ("softmax.kappa",) and mine.source("softmax.kappa") == BUILT_IN
    with pytest.raises(ValueError, match="already registered"):
        mine.register(kappa)
    with pytest.raises(UnknownClaimError, match="known claims: softmax.kappa"):
        mine.get("peers.entropy")
    assert mine.load_files([tutorial_file]) == ["tutorial.participation"]
    assert mine.file_ids() == ("tutorial.participation",)
    assert mine.default_ids() == ("softmax.kappa", "tutorial.participation")
    assert mine.load_files([tutorial_file]) == []  # a file loaded once
    assert "peers.entropy" in mine.load_plugins()
    assert "peers.entropy" in mine.package_ids()
    assert "tutorial.participation" not in mine.package_ids()
    assert "tutorial.participation" not in REGISTRY  # the package's registry untouched
