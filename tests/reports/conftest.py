"""Shared fixture of the report tests: a small judged run, made once per session."""
from __future__ import annotations

import json

import pytest

from gapverify.reports.results import load_run
from gapverify.verification.running.store import Store
from gapverify.verification.running.suite import RunOptions, results_json, verify


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """A judged run of two claims at small sizes from their smallest profile size (128:
    below it their finite-size models are not judged): (results JSON, store path, run)."""
    root = tmp_path_factory.mktemp("tiny")
    store_path = root / "tiny.sqlite"
    opts = RunOptions(claims=["markov.outliers", "markov.singular_law"], profile="quick",
                      sizes=[128, 181, 256], replicates=4, workers=1)
    store = Store(store_path)
    results = verify(opts, store)
    payload = results_json(results, opts)
    payload["command"] = "gapverify run markov.outliers markov.singular_law --sizes 128,181,256"
    store.add_run(payload["command"], payload)
    store.close()
    json_path = root / "run.json"
    json_path.write_text(json.dumps(payload, indent=2, sort_keys=True))
    return json_path, store_path, load_run(results=json_path)
