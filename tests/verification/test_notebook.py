"""tests for the Python API as a notebook uses it (gapverify/api.py): a claim written in a
cell is judged with ``verify(claims=[Claim(...)])`` and leaves the registry as it found
it, claim files come with ``verify(claims_from=...)``, and the run reads as a short
``repr`` and, in the notebook, as an HTML table of claims, checks and verdicts."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import sympy as sp

import gapverify
from gapverify import Check, Claim, Prediction, profiles, verify
from gapverify.api import Run, _claim_verdict

ROOT = Path(__file__).resolve().parents[2]
TINY = dict(sizes=[64, 128, 256], replicates=6, seed=1)


# claims loaded here leave the registry and $GAPVERIFY_CLAIMS as they found them
pytestmark = pytest.mark.usefixtures("isolated_registry")


def grand_mean(rng, T, params):
    """One replicate: the mean of T x T draws of N(1, 1) (standard error 1/T)."""
    return {"mean": float(rng.normal(1.0, 1.0, size=(T, T)).mean())}


def cell_claim(claim_id: str = "cell.grand_mean") -> Claim:
    """A claim as a notebook cell writes it: an experiment function defined right here."""
    return Claim(id=claim_id, title="the grand mean of N(1, 1) draws tends to 1",
                 predictions=(Prediction("mean", "derived", lambda p: sp.Integer(1), "m"),),
                 checks=(Check("mean", "mean", "limit", rate=1.0, rate_status="derived"),),
                 parameters=(), experiment=grand_mean, references=("a notebook cell",),
                 profiles=profiles(quick=(64, 256, 6)))


def _registry_state():
    from gapverify.numerics.plugins import EXTRA_EXPERIMENTS
    from gapverify.verification.claims.registry import REGISTRY

    return REGISTRY.ids(), dict(REGISTRY.sources()), dict(EXTRA_EXPERIMENTS)


def test_a_claim_defined_in_a_cell_is_judged_and_shown(tmp_path):
    before = _registry_state()
    run = verify(claims=[cell_claim()], store=tmp_path / "s.sqlite", **TINY)
    assert isinstance(run, Run) and [c.claim for c in run.claims] == ["cell.grand_mean"]
    claim = run["cell.grand_mean"]
    # too few sizes for power on a 5% error: judged, not failed, not an error
    assert claim.verdict in ("verified", "not verified: lacks power"), claim.checks[0].reason
    # the registry, the experiments' table and the sources are as they were
    assert _registry_state() == before
    assert "cell.grand_mean" not in gapverify.CLAIMS
    # repr: a few lines, never the dataclass with its rows
    text = repr(run)
    assert len(text.splitlines()) < 20 and len(text) < 2000, text
    assert f"cell.grand_mean (derived): {claim.verdict}" in text and "'rows'" not in text
    assert len(repr(claim).splitlines()) < 20 and "predicted 1" in repr(claim)
    # the notebook's HTML: a table with a row for the claim and one for its check
    html = run._repr_html_()
    assert html.startswith("<table") and html.endswith("</table>")
    assert html.count("<tr>") == 3  # the header, the claim, its check
    assert "cell.grand_mean" in html and f">{claim.verdict}</td>" in html
    assert f">{claim.checks[0].verdict}</td>" in html
    assert re.search(r"<th>measured ± se</th>", html)
    assert claim._repr_html_().startswith("<table")
    # the same measurements again from the store: the experiment's key is stable
    again = verify(cell_claim(), store=tmp_path / "s.sqlite", **TINY)
    assert again["cell.grand_mean"].checks[0].rows == claim.checks[0].rows


def test_a_cell_claim_may_not_take_a_registered_id():
    with pytest.raises(ValueError, match=r"parameter 'claims': claim id 'softmax.kappa' "
                                         r"clashes with the built-in claim"):
        verify(claims=[cell_claim("softmax.kappa")], **TINY)
    assert gapverify.CLAIMS["softmax.kappa"].experiment == "softmax.kappa"
    with pytest.raises(ValueError, match="'claims' must list claim ids .* or Claim objects"):
        verify(claims=[3], **TINY)


def broken(rng, T, params):
    return {"mean": 1.0 / 0}


def test_a_cell_claim_whose_experiment_raises_is_a_claim_error():
    """The command line's exit code 4 in the API: a ClaimError naming the cell's line,
    not a ValueError; the registry is as it was all the same."""
    from gapverify.verification.judging.outcomes import ClaimError

    before = _registry_state()
    claim = dataclasses.replace(cell_claim("cell.broken"), experiment=broken)
    with pytest.raises(ClaimError) as info:
        verify(claims=[claim], **TINY)
    assert not isinstance(info.value, ValueError)
    assert "cell.broken" in str(info.value) and "test_notebook.py:" in str(info.value)
    assert "ZeroDivisionError" in str(info.value)
    assert _registry_state() == before


def test_claims_from_loads_a_claim_file_for_the_run(tmp_path):
    block = re.search(r"```python\n(.*?)```", (ROOT / "docs" / "writing-a-claim.md").read_text(),
                      re.S).group(1)
    path = tmp_path / "participation.py"
    path.write_text(block)
    run = verify("tutorial.participation", claims_from=[path], sizes=[64, 128, 256],
                 replicates=4, seed=1)
    assert run["tutorial.participation"].status == "derived"
    assert "tutorial.participation" not in gapverify.CLAIMS  # for that run only
    with pytest.raises(ValueError, match=r"parameter 'claims_from': no such file") as info:
        verify("tutorial.participation", claims_from=tmp_path / "missing.py")
    assert "--claims-from" not in str(info.value)


def test_the_repr_of_a_long_run_stays_short():
    claims = [{"claim": f"family.claim_{i}", "status": "theorem", "verdict": "verified",
               "outcome": "pass", "power_summary": "1 of 1 predictions verified with power",
               "sizes": [64, 128], "replicates": 2, "root_seed": 1,
               "checks": [{"label": f"p @ s2={s}", "kind": "limit", "status": "theorem",
                           "predicted": 1.0, "verdict": "verified", "outcome": "pass",
                           "power": 0.01, "rows": [{"T": 128, "n": 2, "mean": 1.0,
                                                    "se": 0.001}]} for s in range(12)]}
              for i in range(22)]
    run = Run(claims=[_claim_verdict(c) for c in claims], exit_code=0, run_id=None,
              store=":memory:", results={"claims": claims, "profile": "quick", "root_seed": 1})
    lines = repr(run).splitlines()
    assert len(lines) < 20 and "... and 7 more claim(s)" in repr(run)
    assert len(repr(run.claims[0]).splitlines()) < 20  # 12 checks: the first 10 listed
    assert run._repr_html_().count("<tr>") == 1 + 22 * 13
