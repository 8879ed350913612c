"""tests for perturbed runs (verification/running/suite.py, store.py, cli/runs.py): a
perturbation re-judges stored samples and samples nothing, is marked in the store and
never taken as "the last run"; the printed reproduce command reproduces a failure."""
import json
import shlex

import pytest

from gapverify.cli import main
from gapverify.verification.running.store import Store

KAPPA = ["softmax.kappa", "--sizes", "64,91,128", "--replicates", "3", "--quiet",
         "--workers", "1"]


@pytest.fixture
def stored(tmp_path, capsys):
    path = str(tmp_path / "s.sqlite")
    assert main(["run", *KAPPA, "--store", path]) in (0, 3)
    capsys.readouterr()
    return path


def _no_sampling(monkeypatch):
    import gapverify.verification.running.runner as runner

    def refuse(*args, **kwargs):
        raise AssertionError("a perturbed run sampled a task")

    monkeypatch.setattr(runner, "run_task", refuse)


def test_perturb_samples_nothing_and_is_marked(stored, tmp_path, monkeypatch, capsys):
    _no_sampling(monkeypatch)
    before = Store(stored).count()
    out = tmp_path / "p.json"
    code = main(["run", *KAPPA, "--store", stored, "--perturb", "kappa=0.05",
                 "--json", str(out)])
    assert code in (1, 3)  # judged: failed, or lacks power at these sizes; never sampled
    assert Store(stored).count() == before
    assert json.loads(out.read_text())["claims"][0]["replay"] is None  # no replay either
    capsys.readouterr()
    assert main(["runs", "--store", stored, "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert [r["perturbations"] for r in runs] == [[], ["--perturb kappa=0.05"]]
    assert main(["runs", "--store", stored]) == 0
    table = capsys.readouterr().out
    assert "2P" in table and "perturbed" in table and "--perturb kappa=0.05" in table
    # reports without --run take the latest run of the statements as stated
    st = Store(stored)
    assert st.last_run()["perturb_predictions"] == {}
    assert st.last_run(perturbed=True)["perturb_predictions"] == {"kappa": 0.05}
    from gapverify.reports.results import load_run
    assert load_run(stored)["perturb_predictions"] == {}


def test_perturb_parameter_without_samples_exits_2_naming_them(stored, monkeypatch, capsys):
    _no_sampling(monkeypatch)
    code = main(["run", "softmax.kappa", "--sizes", "64,91,128,181", "--replicates", "3",
                 "--quiet", "--workers", "1", "--store", stored,
                 "--perturb-parameter", "kappa:s2=1.5"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1].startswith("gapverify: error: parameter ")
    assert "lacks 6 of 24 sample(s) of softmax.kappa (T = 181)" in err[-1]
    assert "parameter '--perturb-parameter'" in err[-1]
    assert f"sample them first: gapverify run softmax.kappa --profile quick --sizes 64,91,128,181 " \
           f"--replicates 3 --seed 20250713 --store {stored}" in err[-1]


def _failed(doc):
    return {c["label"] for claim in doc["claims"] for c in claim["checks"]
            if c["outcome"] == "fail"}


@pytest.mark.parametrize("argv,perturb", [
    (KAPPA, ["--perturb", "0.5"]),  # a fitted check: every size of the run
    (["markov.outliers", "--sizes", "64,91,128,181", "--replicates", "3", "--quiet",
      "--workers", "1"], ["--perturb", "lambda1=0.01"]),  # an exact check: up to where it fails
])
def test_the_printed_reproduce_command_fails_the_same_way(argv, perturb, tmp_path, capsys):
    path = str(tmp_path / "r.sqlite")
    main(["run", *argv, "--store", path])
    out = tmp_path / "f.json"
    assert main(["run", *argv, "--store", path, *perturb, "--json", str(out)]) == 1
    doc = json.loads(out.read_text())
    failed = [c for claim in doc["claims"] for c in claim["checks"] if c["outcome"] == "fail"]
    command = failed[0]["reproduce"]
    assert command.startswith("gapverify run ") and "--no-replay" in command
    capsys.readouterr()
    again = tmp_path / "again.json"
    assert main([*shlex.split(command)[1:], "--quiet", "--json", str(again)]) == 1
    redo = json.loads(again.read_text())
    assert {c["label"] for c in failed} <= _failed(redo)
    assert failed[0]["label"] in _failed(redo)
