"""tests for verification/tools/snapshot.py: ``gapverify snapshot`` catches changed statements."""
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp

from gapverify import cli
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
    assert edge["domain"].startswith("judged where the bulk edge holds")
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


# --- every number: profile cases, law quantiles, entry laws' kappa -------------------------

@pytest.fixture
def law_snap(tmp_path, monkeypatch):
    """A snapshot of the two law claims and markov.outliers (an entry-law claim)."""
    claims = {cid: FULL[cid] for cid in ("markov.singular_law", "markov.circular_law",
                                         "markov.outliers")}
    monkeypatch.setattr(registry, "CLAIMS", claims)
    path = tmp_path / "snapshots"
    assert main(["snapshot", "--update", "--path", str(path)]) == 0
    assert not snapshot.compare(path).failed
    return path


def _changed(path) -> dict[str, list[str]]:
    result = snapshot.compare(path)
    return {c.claim: c.parts for c in result.changes if c.kind != "representation"}


def test_circular_law_scaled_by_1_05_is_caught(law_snap, monkeypatch):
    """The disc-modulus scipy law scaled by 1.05 leaves the statement (the edge kappa) as
    it was; its quantiles move by 5%."""
    from gapverify.theory.laws import DiscModulusLaw

    frozen = DiscModulusLaw.frozen
    monkeypatch.setattr(DiscModulusLaw, "frozen", lambda self, kappa: frozen(self, 1.05 * kappa))
    assert _changed(law_snap) == {"markov.circular_law": ["law_quantiles"]}


def test_quarter_circle_law_scaled_by_1_05_is_caught(law_snap, monkeypatch):
    from gapverify.verification.claims.registry import _common

    real = _common.quarter_circle
    monkeypatch.setattr(_common, "quarter_circle", lambda scale: real(scale=1.05 * scale))
    assert _changed(law_snap) == {"markov.singular_law": ["law_quantiles"]}


def test_an_edge_offset_scaled_by_1_05_is_caught(law_snap, monkeypatch):
    """The Tracy-Widom offset that the edge checks subtract (``Check.correction``) moves
    no prediction; scaled by 1.05 (E TW_1 mistyped) it moves ``finite_size_terms``."""
    from gapverify.theory import edge_offset

    monkeypatch.setattr(edge_offset, "TW1_MEAN", 1.05 * edge_offset.TW1_MEAN)
    assert _changed(law_snap) == {"markov.outliers": ["finite_size_terms"],
                                  "markov.singular_law": ["finite_size_terms"]}
    record = json.loads((law_snap / "markov.outliers.json").read_text())
    terms = record["finite_size_terms"][0]["terms"]["sqrtT_s2"]
    kappa = float(sp.sqrt(sp.exp(record["finite_size_terms"][0]["parameters"]["s2"]) - 1))
    assert float(terms["T=1024"]) == pytest.approx(
        kappa * 2 ** (-2 / 3) * -1.2065335745820 / 1024 ** (2 / 3), rel=1e-12)


def test_law_quantiles_are_the_laws(law_snap):
    """Q_kappa at s2 = log 2 (kappa = 1): the median of the quarter circle on [0, 2] solves
    (2/pi)(u sqrt(1-u^2) + asin u) = 1/2, u = x/2; the disc modulus has F(r) = r^2."""
    import math
    from scipy.optimize import brentq

    record = json.loads((law_snap / "markov.singular_law.json").read_text())
    q = record["law_quantiles"][0]
    assert q["check"] == "law:bulk" and q["parameters"]["s2"] == pytest.approx(math.log(2))
    u = brentq(lambda u: 2 / math.pi * (u * math.sqrt(1 - u * u) + math.asin(u)) - 0.5, 0, 1)
    assert float(q["quantiles"]["0.5"]) == pytest.approx(2 * u, rel=1e-12)
    disc = json.loads((law_snap / "markov.circular_law.json").read_text())["law_quantiles"][0]
    assert {k: float(v) for k, v in disc["quantiles"].items()} == pytest.approx(
        {k: math.sqrt(float(k)) for k in disc["quantiles"]}, rel=1e-12)


def test_exponential_kappa_scaled_by_1_04_is_caught(law_snap, monkeypatch):
    """A single-site error in the exponential entry law (kappa^2 times 1.04^2) changes no
    statement; the entry laws' kappa and the predictions at s2_eff show it."""
    import gapverify.theory.entry_laws as entry_laws

    real = entry_laws.parse_entry_law

    def wrong(text):
        law = real(text)
        return dataclasses.replace(law, kappa2=law.kappa2 * sp.Rational(104, 100) ** 2) \
            if law.spec == "exponential" else law

    monkeypatch.setattr(entry_laws, "parse_entry_law", wrong)
    changed = _changed(law_snap)
    assert changed == {cid: ["entry_laws"] for cid in
                       ("markov.circular_law", "markov.outliers", "markov.singular_law")}
    diff = next(c.diff for c in snapshot.compare(law_snap).changes if c.claim == "markov.outliers")
    assert '+      "kappa": "1.040000000000000e+00"' in diff


def test_entry_law_kappa_property_scaled_by_1_04_is_caught(law_snap, monkeypatch):
    from gapverify.theory.entry_laws import EntryLaw

    kappa = EntryLaw.kappa.fget
    monkeypatch.setattr(EntryLaw, "kappa", property(
        lambda self: kappa(self) * (1.04 if self.spec == "exponential" else 1.0)))
    assert set(_changed(law_snap)) == {"markov.circular_law", "markov.outliers",
                                       "markov.singular_law"}


def test_a_change_seen_only_at_a_profile_case_is_caught(snap, small_registry):
    """s2 = 1/4 is a case of softmax.kappa's profiles and no reference point (the entry
    law lognorm(0.5) has s2_eff = 1/4 too)."""
    old = small_registry["softmax.kappa"].prediction("kappa").formula
    _replace_prediction(small_registry, "softmax.kappa", "kappa",
                        formula=lambda p: old(p) * (sp.Rational(101, 100)
                                                    if p["s2"] == sp.Rational(1, 4) else 1))
    assert _changed(snap) == {"softmax.kappa": ["entry_laws", "profile_cases"]}


def test_float_noise_below_1e_9_is_not_a_change(law_snap):
    file = law_snap / "markov.circular_law.json"
    record = json.loads(file.read_text())
    q = record["law_quantiles"][1]["quantiles"]
    q["0.5"] = f"{float(q['0.5']) * (1 + 1e-12):.15e}"
    file.write_text(snapshot.canonical_text(record))
    assert _changed(law_snap) == {}
    q["0.5"] = f"{float(q['0.5']) * (1 + 1e-6):.15e}"
    file.write_text(snapshot.canonical_text(record))
    assert _changed(law_snap) == {"markov.circular_law": ["law_quantiles"]}


def test_a_rule_rate_changed_behind_its_text_is_caught(tmp_path, monkeypatch):
    """gradient.input_jacobian states its rate by a rule whose text names the derivation:
    the derivation returning 1/2 instead of 2/3 leaves every text alone and shows as the
    profile cases' rates."""
    from gapverify.theory import layers

    monkeypatch.setattr(registry, "CLAIMS", {"gradient.input_jacobian": FULL["gradient.input_jacobian"]})
    path = tmp_path / "snapshots"
    assert main(["snapshot", "--update", "--path", str(path)]) == 0
    record = json.loads((path / "gradient.input_jacobian.json").read_text())
    assert {c["rates"]["jacobian_std_over_d"] for c in record["profile_cases"]} == {
        snapshot.canonical_number(sp.Rational(2, 3))}
    monkeypatch.setattr(layers, "input_jacobian_rate", lambda: sp.Rational(1, 2))
    assert _changed(path) == {"gradient.input_jacobian": ["profile_cases"]}
