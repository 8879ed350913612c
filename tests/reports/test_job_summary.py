"""The CI job summary (``gapverify verify --summary PATH``): the summary table and what
changed per claim since the store's previous run of the profile."""
from __future__ import annotations

import copy
import json
import shutil

from gapverify.reports.changes import changes, job_summary


def _changed(payload: dict) -> dict:
    """``payload`` with markov.outliers' first prediction and markov.singular_law's
    experiment moved."""
    after = copy.deepcopy(payload)
    claims = {c["claim"]: c for c in after["claims"]}
    claims["markov.outliers"]["checks"][0]["predicted"] *= 1.05
    claims["markov.singular_law"]["experiment"] += "[another]"
    return after


def test_changes_name_what_moved(tiny):
    payload = json.loads(tiny[0].read_text())
    assert changes(payload, payload) == {c["claim"]: [] for c in payload["claims"]}
    moved = changes(payload, _changed(payload))
    assert moved == {"markov.outliers": ["statement"], "markov.singular_law": ["experiment"]}
    assert changes(None, payload) == {}
    fewer = copy.deepcopy(payload)
    fewer["claims"] = fewer["claims"][:1]
    assert changes(fewer, payload)["markov.singular_law"] == ["new"]


def test_the_page_holds_the_summary_and_the_changes(tiny):
    payload = json.loads(tiny[0].read_text())
    page = job_summary(_changed(payload), payload)
    assert page.startswith("# Summary of claims")
    assert "## Changed since the stored run" in page
    assert "| `markov.outliers` |" in page and "statement" in page and "experiment" in page
    assert "nothing to compare with" in job_summary(payload, None)


def test_verify_writes_the_summary_from_the_store(tiny, tmp_path):
    """The command's own step: the previous run of the profile is read from the store."""
    from gapverify.cli.pipeline import _write_summary
    from gapverify.verification.running.store import Store

    store = tmp_path / "s.sqlite"
    shutil.copy(tiny[1], store)
    payload = json.loads(tiny[0].read_text())
    after = _changed(payload)
    st = Store(store)
    st.add_run("gapverify run ...", after)
    st.close()
    results = tmp_path / "results.json"
    results.write_text(json.dumps(after))
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    _write_summary(summary, results, str(store))
    text = summary.read_text()
    assert text.startswith("earlier step\n# Summary of claims")  # appended, as CI expects
    assert "| `markov.singular_law` |" in text and "experiment" in text
