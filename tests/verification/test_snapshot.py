"""tests for verification/tools/snapshot.py: ``gapverify snapshot`` catches changed statements."""
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp

from gapverify.verification import cli
from gapverify.verification.claims import registry
from gapverify.verification.tools import snapshot

SMALL = ("softmax.kappa", "markov.outliers")  # a cheap registry for the mutation tests
ROOT = Path(__file__).resolve().parents[2]
FULL = dict(registry.CLAIMS)  # before any test cuts the registry down


def main(argv):
    """``gapverify`` in-process."""
    return cli.main(argv)


@pytest.fixture
def small_registry(monkeypatch):
    """The registry cut to two claims (built from the real entries) for speed."""
    claims = {cid: registry.CLAIMS[cid] for cid in SMALL}
    monkeypatch.setattr(registry, "CLAIMS", claims)
    return claims


@pytest.fixture
def snap(tmp_path, small_registry):
    """A snapshot of the small registry, written by ``gapverify snapshot --update``."""
    path = tmp_path / "snapshots"
    assert main(["snapshot", "--update", "--path", str(path)]) == 0
    return path


def _replace_prediction(claims, cid, name, **changes):
    claim = claims[cid]
    preds = tuple(dataclasses.replace(p, **changes) if p.name == name else p
                  for p in claim.predictions)
    claims[cid] = dataclasses.replace(claim, predictions=preds)


def _run(path, capsys):
    code = main(["snapshot", "--path", str(path)])
    return code, capsys.readouterr().out


def test_committed_snapshot_matches_registry():
    """Fails whenever a statement changes without ``gapverify snapshot --update``."""
    result = snapshot.compare(snapshot.DEFAULT_PATH)
    assert not result.failed, "\n".join(f"{c.claim}: {c.kind} {c.parts}\n{c.diff}"
                                        for c in result.changes)


def test_committed_snapshot_is_stable_across_processes_and_hash_seeds():
    env = dict(os.environ, PYTHONHASHSEED="4321", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "gapverify", "snapshot"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_unchanged_registry_exits_0(snap, capsys):
    code, out = _run(snap, capsys)
    assert code == 0
    assert "all 2 claims match" in out


def test_update_is_byte_for_byte_reproducible(snap):
    before = {f.name: f.read_bytes() for f in snap.glob("*.json")}
    assert main(["snapshot", "--update", "--path", str(snap)]) == 0
    assert {f.name: f.read_bytes() for f in snap.glob("*.json")} == before
    assert set(before) == {"_meta.json", "softmax.kappa.json", "markov.outliers.json"}


def test_formula_times_1_01_is_caught(snap, small_registry, capsys):
    old = small_registry["softmax.kappa"].prediction("kappa").formula
    _replace_prediction(small_registry, "softmax.kappa", "kappa",
                        formula=lambda p: old(p) * sp.Rational(101, 100))
    code, out = _run(snap, capsys)
    assert code == 1
    assert "softmax.kappa: statement changed" in out
    assert "markov.outliers" not in out.split("statement changed")[0].splitlines()[-1]
    assert "--- snapshots/softmax.kappa.json" in out and "+++ registry/softmax.kappa" in out
    assert "1.01" in out  # the diff shows the new factor (in sstr) and the new numbers


def test_status_change_theorem_to_conjecture_is_caught(snap, small_registry, capsys):
    _replace_prediction(small_registry, "markov.outliers", "s1", status="conjecture")
    code, out = _run(snap, capsys)
    assert code == 1
    assert "markov.outliers: statement changed: predictions" in out
    assert '-      "status": "theorem"' in out and '+      "status": "conjecture"' in out


def test_rate_change_is_caught(snap, small_registry, capsys):
    claim = small_registry["softmax.kappa"]
    small_registry["softmax.kappa"] = dataclasses.replace(
        claim, checks=(dataclasses.replace(claim.checks[0], rate=0.5),))
    code, out = _run(snap, capsys)
    assert code == 1
    assert "softmax.kappa: statement changed: checks" in out
    assert '+      "rate": 0.5' in out


def test_added_and_removed_claims_are_reported(snap, small_registry, capsys):
    small_registry["fix.spectrum"] = FULL["fix.spectrum"]
    del small_registry["markov.outliers"]
    code, out = _run(snap, capsys)
    assert code == 1
    assert "fix.spectrum: claim added" in out
    assert "markov.outliers: claim removed" in out
    assert "+++ registry/fix.spectrum" in out and "--- snapshots/markov.outliers.json" in out


def test_last_digit_noise_is_not_a_change(snap, capsys):
    file = snap / "softmax.kappa.json"
    record = json.loads(file.read_text())
    value = record["reference_points"][1]["values"]["kappa"]
    mantissa, exponent = value.split("e")
    last = mantissa[-1]
    record["reference_points"][1]["values"]["kappa"] = (
        mantissa[:-1] + ("1" if last == "0" else "0") + "e" + exponent)
    file.write_text(snapshot.canonical_text(record))
    code, out = _run(snap, capsys)
    assert code == 0, out


def _reprint_statement(snap, sympy_version):
    """Simulate another sympy: an equivalent statement printed differently."""
    meta_file = snap / "_meta.json"
    meta = json.loads(meta_file.read_text())
    meta["sympy"] = sympy_version
    meta_file.write_text(snapshot.canonical_text(meta))
    file = snap / "softmax.kappa.json"
    record = json.loads(file.read_text())
    entry = record["statement"][0]
    st = sp.sympify(entry["srepr"])
    reprinted = sp.Tuple(*(sp.Eq(eq.lhs, sp.Mul(2, eq.rhs / 2, evaluate=False), evaluate=False)
                           for eq in st))
    entry["srepr"], entry["sstr"] = sp.srepr(reprinted), sp.sstr(reprinted)
    assert entry["srepr"] != sp.srepr(st)
    file.write_text(snapshot.canonical_text(record))


def test_other_sympy_printing_the_same_equations_is_not_a_change(snap, capsys):
    _reprint_statement(snap, "0.0.other")
    code, out = _run(snap, capsys)
    assert code == 0, out
    assert "softmax.kappa: printed differently by this sympy, same equations" in out


def test_same_sympy_printing_differently_is_a_change(snap, capsys):
    _reprint_statement(snap, sp.__version__)
    code, out = _run(snap, capsys)
    assert code == 1
    assert "softmax.kappa: statement changed: statement" in out


def test_other_sympy_and_a_changed_formula_is_still_a_change(snap, small_registry, capsys):
    _reprint_statement(snap, "0.0.other")
    old = small_registry["softmax.kappa"].prediction("kappa").formula
    _replace_prediction(small_registry, "softmax.kappa", "kappa",
                        formula=lambda p: old(p) * sp.Rational(101, 100))
    code, out = _run(snap, capsys)
    assert code == 1
    assert "softmax.kappa: statement changed" in out


def test_single_file_snapshot(tmp_path, small_registry, capsys):
    path = tmp_path / "snap.json"
    assert main(["snapshot", "--update", "--path", str(path)]) == 0
    doc = json.loads(path.read_text())
    assert set(doc["claims"]) == set(SMALL) and doc["_meta"]["digits"] == 30
    assert _run(path, capsys)[0] == 0
    _replace_prediction(small_registry, "markov.outliers", "sqrtT_s2",
                        formula=lambda p: sp.Integer(3))
    code, out = _run(path, capsys)
    assert code == 1 and "markov.outliers: statement changed" in out


def test_missing_snapshot_reports_every_claim_as_added(tmp_path, small_registry, capsys):
    code, out = _run(tmp_path / "nothing", capsys)
    assert code == 1
    assert all(f"{cid}: claim added" in out for cid in SMALL)


def test_bad_path_is_a_usage_error(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("x")
    assert main(["snapshot", "--path", str(bad)]) == 2


def test_record_contents():
    claim = registry.get_claim("softmax.kappa")
    record = snapshot.claim_record(claim)
    assert record["status"] == "derived"
    assert record["checks"]["kappa"] == {"prediction": "kappa", "statistic": "kappa",
                                         "kind": "limit", "rate": 0.75, "rate_status": "empirical",
                                         "asserted": True, "rate_range": None, "domain": None}
    edge = snapshot.claim_record(registry.get_claim("markov.outliers"))["checks"]["sqrtT_s2"]
    assert edge["rate"] is None and edge["rate_range"] == [2 / 3, 1.0]
    assert edge["domain"].startswith("judged for s2 <= 1/2 only")
    labels = [p["label"] for p in record["reference_points"]]
    assert labels == ["defaults", "s2=1", "mu=0"]
    assert record["reference_points"][1]["values"]["kappa"] == \
        "1.31083249443208617590677036113e+0"  # sqrt(e - 1) to 30 digits
    assert record["statement"][0]["sstr"] == "(Eq(Limit(kappa, T, oo, dir='-'), sqrt(exp(s2) - 1)),)"


def test_integer_parameters_fall_back_to_numbers():
    """A formula calling ``int(depth)`` is kept symbolic in the other parameters."""
    from gapverify.verification.claims.model import Check, Claim, Prediction, Profile

    claim = Claim(id="toy.depth", title="toy", parameters=("s2", "depth"), experiment="none",
                  predictions=(Prediction("x", "derived",
                                          lambda p: p["s2"] ** int(p["depth"]), "x"),),
                  checks=(Check("x", "x", "limit", rate=1.0),), references=(),
                  profiles={"quick": Profile((64,), 2)})
    entries = snapshot.claim_record(claim)["statement"]
    assert [e["label"] for e in entries] == ["symbolic", "depth=2"]
    assert entries[0]["sstr"] == "(Eq(Limit(x, T, oo, dir='-'), s2),)"
    assert entries[1]["sstr"] == "(Eq(Limit(x, T, oo, dir='-'), s2**2),)"
    assert entries[1]["numeric_parameters"] == {"x": {"depth": 2}}


def test_canonical_number_format():
    assert snapshot.canonical_number(sp.Rational(1, 4) / 10**7) == "2.50000000000000000000000000000e-8"
    assert snapshot.canonical_number(sp.Integer(0)) == "0"
    assert snapshot.canonical_number(-sp.pi) == "-3.14159265358979323846264338328e+0"
