"""tests for verification/running/suite.py: one verdict for any engine. The cases are
judged in this process (``--workers 1``, a Dask cluster) or in the process pool's workers
(``--workers 2``, :func:`judge_stored`): under an entry law the worker must judge the
run's claim (statuses dropped, light-tail domains lifted), not the registry's."""
import json

import pytest

from gapverify.cli import main

#: what differs between two runs of the same statement on the same samples
VOLATILE = {"provenance", "command", "run_id", "created", "seconds", "elapsed"}


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


@pytest.mark.parametrize("law", ["exponential", "scipy:gamma(2)"])
def test_the_same_verdict_json_for_every_engine(law, tmp_path, capsys):
    pytest.importorskip("distributed")
    store = str(tmp_path / "s.sqlite")
    base = ["run", "markov.outliers", "--entries", law, "--sizes", "128,181,256,362",
            "--replicates", "4", "--store", store, "--quiet", "--no-replay"]
    docs, codes = {}, {}
    for name, engine in (("1", ["--workers", "1"]), ("2", ["--workers", "2"]),
                         ("local:2", ["--scheduler", "local:2"])):
        out = tmp_path / f"{name}.json"
        codes[name] = main([*base, *engine, "--json", str(out)])
        docs[name] = _strip(json.loads(out.read_text()))
    capsys.readouterr()
    assert codes["1"] == codes["2"] == codes["local:2"]
    assert docs["1"] == docs["2"] == docs["local:2"]
    outcomes = {c["label"]: c["outcome"] for c in docs["2"]["claims"][0]["checks"]}
    assert "outside domain" not in outcomes.values()  # the law lifts the log-normal domain


def test_a_pool_worker_judges_the_runs_claim_under_a_law():
    from gapverify.verification.running.suite import run_claim

    # the log-normal edge domain (in (s2, T): Check.min_size) is lifted under another law
    plain = {c.prediction: c.min_size for c in run_claim("markov.outliers", None).checks}
    law = {c.prediction: c.min_size for c in run_claim("markov.outliers", "exponential").checks}
    assert any(d is not None for d in plain.values())
    assert all(d is None for d in law.values())
