"""tests for gapverify/cli/: the command-line contract (exit codes, JSON, errors)."""
import json
import re
from pathlib import Path

import pytest

from gapverify.cli import main
from gapverify.verification.running.store import Store

ISSUE_CLAIMS = ["markov.singular_law", "markov.circular_law", "markov.outliers",
                "softmax.kappa", "fix.spectrum", "width.stable_rank"]


def _run(argv, capsys):
    code = main(argv)
    return code, capsys.readouterr().out


@pytest.mark.slow
def test_quick_profile_verdicts_and_power(quick_store, tmp_path, capsys):
    """The shared quick run: no claim fails; each is verified with power or says exactly
    which prediction lacks power; exit 0 only when every claim is verified."""
    path, results = quick_store
    out = tmp_path / "run.json"
    code, printed = _run(["run", *results, "--profile", "quick", "--store", path,
                          "--json", str(out), "--quiet", "--workers", "1", "--no-replay"], capsys)
    doc = json.loads(out.read_text())
    verdicts = {c["claim"]: c["outcome"] for c in doc["claims"]}
    assert "fail" not in verdicts.values(), printed
    assert code == (0 if set(verdicts.values()) <= {"pass", "recorded"} else 3), printed
    for c in doc["claims"]:
        assert c["power_summary"].endswith("predictions verified with power")
        for why in c["unverified"]:
            assert ("lacks power at T <=" in why or "not assessed" in why
                    or "outside domain at these parameters" in why)
        for check in c["checks"]:
            assert check["power_class"] in ("exact", "rated", "rate range", "model family",
                                            "outside domain", "recorded")
            if check["outcome"] == "pass":
                assert check["power"] is not None and check["power"] <= 0.05
    statuses = {c["claim"]: c["status"] for c in doc["claims"]}
    assert statuses["markov.outliers"] == "conjecture"  # contains sqrtT_lambda2
    assert "predictions verified with power" in printed and "power" in printed
    # kappa != 1, two gamma, two sigma_V and two depths are all judged
    width = next(c for c in doc["claims"] if c["claim"] == "width.stable_rank")
    assert {(c["s2"], c["gamma"]) for c in width["cases"]} >= {(0.25, 1.0), (0.5, 0.5)}
    grad = next(c for c in doc["claims"] if c["claim"] == "gradient.value_frobenius")
    assert len({c["sigma_V"] for c in grad["cases"]}) == 2 and 1.0 not in {c["sigma_V"] for c in grad["cases"]}
    assert len({c["depth"] for c in grad["cases"]}) == 2


@pytest.mark.slow
def test_perturbed_statements_are_rejected(quick_store, tmp_path, capsys):
    """--perturb 0.05 multiplies every limit by 1.05; the same samples must reject every
    claim. --perturb NAME=EPS makes one prediction wrong, and only its checks fail."""
    path, results = quick_store
    out = tmp_path / "perturbed.json"
    code, printed = _run(["run", *results, "--profile", "quick", "--store", path,
                          "--json", str(out), "--quiet", "--perturb", "0.05", "--no-replay"], capsys)
    assert code == 1
    failed = {c["claim"] for c in json.loads(out.read_text())["claims"] if c["outcome"] == "fail"}
    assert failed == set(results)
    assert "reproduce: gapverify run" in printed
    code, printed = _run(["run", "markov.outliers", "--profile", "quick", "--store", path,
                          "--json", str(out), "--quiet", "--perturb", "sqrtT_s2=-0.05",
                          "--no-replay"], capsys)
    doc = json.loads(out.read_text())
    assert code == 1 and doc["perturb_predictions"] == {"sqrtT_s2": -0.05}
    failed = {c["label"].split(" @")[0] for c in doc["claims"][0]["checks"] if c["outcome"] == "fail"}
    assert failed == {"sqrtT_s2"}
    assert "--perturb sqrtT_s2=-0.05" in printed  # the reproduce line carries the variant


@pytest.mark.slow
def test_one_prediction_at_a_wrong_parameter_is_rejected(quick_store, tmp_path, capsys):
    path, _ = quick_store
    out = tmp_path / "wrong.json"
    code, _ = _run(["run", "width.stable_rank", "--profile", "quick", "--store", path, "--json",
                    str(out), "--quiet", "--no-replay", "--perturb-parameter",
                    "sr_X1perp_over_T:gamma=0.8"], capsys)
    doc = json.loads(out.read_text())
    assert code == 1
    failed = {c["label"].split(" @")[0] for c in doc["claims"][0]["checks"] if c["outcome"] == "fail"}
    # and the moment ratio judged against sr(Sigma1perp)/T over its square
    assert failed == {"sr_X1perp_over_T", "sr_Sigma1perp_over_T:m2_ratio_X1perp"}


def test_too_few_sizes_is_not_verified_and_not_exit_0(tmp_path, capsys):
    code, printed = _run(["run", "softmax.kappa", "--sizes", "64,91,128", "--replicates", "3",
                          "--store", str(tmp_path / "s.sqlite"), "--quiet", "--workers", "1"], capsys)
    assert code in (1, 3), printed
    if code == 3:
        assert "NOT VERIFIED: LACKS POWER" in printed and "lacks power" in printed


def test_claims_json_lists_ids_and_statuses(capsys):
    assert main(["claims", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    ids = {r["id"]: r for r in rows}
    assert set(ISSUE_CLAIMS) <= set(ids)
    assert ids["markov.singular_law"]["status"] == "theorem"
    assert ids["markov.outliers"]["predictions"]["sqrtT_lambda2"] == "conjecture"


def test_predict_json_contract(capsys):
    assert main(["predict", "width.stable_rank", "--set", "gamma=1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"claim", "status", "parameters", "predictions", "statement", "exact"}
    p = out["predictions"]
    assert p["sr_A"] == pytest.approx(2.0) and p["sr_Sigma1"] == 1.0
    assert p["sr_Aperp_over_T"] == 0.25
    assert p["sr_X1perp_over_T"] == pytest.approx(4 / 27, rel=1e-14)
    assert p["sr_Sigma1perp_over_T"] == pytest.approx(16 / 243, rel=1e-14)
    assert main(["predict", "softmax.kappa", "--set", "s2=1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["predictions"]["kappa"] == pytest.approx(
        (2.718281828459045 - 1) ** 0.5, rel=1e-15)


@pytest.mark.parametrize("argv,fragment", [
    (["run", "markov.outliers", "--sizes", "64,-5"], "'--sizes (T)' must be an integer in [16,"),
    (["run", "markov.outliers", "--sizes", "64,1.5"], "'--sizes (T)' must be an integer"),
    (["run", "markov.outliers", "--sizes", "abc"], "'--sizes (T)'"),
    (["run", "markov.outliers", "--sizes", "10"], "in [16, 16384]"),
    (["run", "width.stable_rank", "--set", "gamma=1.5"], "'gamma'"),
    (["run", "width.stable_rank", "--set", "gamma=0"], "(0, 1]"),
    (["run", "markov.outliers", "--set", "s2=-1"], "'s2'"),
    (["run", "width.stable_rank", "--set", "sigma_V=-1"], "'sigma_V'"),
    (["run", "markov.outliers", "--set", "s2=nan"], "finite"),
    (["run", "markov.outliers", "--set", "s2=inf"], "finite"),
    (["run", "markov.outliers", "--set", "mu=nan"], "'mu'"),
    (["run", "markov.outliers", "--set", "beta=1"], "unknown parameter 'beta'"),
    (["run", "markov.outliers", "--set", "gamma=0.5"], "parameter 'gamma' in --set is not a parameter of claim(s) markov.outliers"),
    (["run", "no.such.claim"], "unknown claim 'no.such.claim'"),
    (["run", "markov.outliers", "--replicates", "1"], "'--replicates' must be an integer in [2,"),
    (["run", "markov.outliers", "--perturb", "nan"], "'--perturb'"),
    (["run", "markov.outliers", "--perturb", "0.1", "--perturb", "0.2"], "EPS given twice"),
    (["run", "markov.outliers", "--perturb", "s1=2"], "'--perturb s1'"),
    (["run", "markov.outliers", "--perturb", "nosuch=0.1"], "no selected claim has a prediction named 'nosuch'"),
    (["run", "markov.outliers", "--perturb-parameter", "s1=1.2"], "PREDICTION:PARAMETER=FACTOR"),
    (["run", "markov.outliers", "--perturb-parameter", "s1:beta=1.2"], "unknown parameter 'beta'"),
    (["run", "markov.outliers", "--perturb-parameter", "s1:s2=-1"], "'--perturb-parameter s1:s2'"),
    (["run", "markov.outliers", "--perturb-parameter", "s1:gamma=0.8"], "takes no parameter 'gamma'"),
    (["run", "markov.outliers", "--workers", "0"], "'--workers'"),
    (["run", "markov.outliers", "--seed", "-3"], "'--seed'"),
    (["predict", "markov.outliers", "--set", "gamma=0.5"], "takes no parameter 'gamma'"),
    (["predict", "nope"], "unknown claim 'nope'"),
    (["run", "--profile", "huge"], "invalid choice"),
])
def test_bad_input_exits_2_naming_the_parameter(argv, fragment, tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    Store(store).close()
    before = store.read_bytes()
    code = main([*argv, "--store", str(store)] if argv[0] == "run" else argv)
    err = capsys.readouterr().err
    assert code == 2
    assert fragment in err
    assert store.read_bytes() == before  # nothing stored, nothing corrupted


# --- issue 10: the command line's polish ------------------------------------------------
TINY = ["softmax.kappa", "--sizes", "64,91,128", "--replicates", "2", "--no-replay",
        "--workers", "1"]


def test_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"gapverify {version('gapverify')}"


def test_every_option_has_help_and_shows_its_default():
    import argparse

    from gapverify.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sub.choices.items():
        text = p.format_help()
        for action in p._actions:
            if not action.option_strings or action.dest == "help":
                continue
            assert action.help, f"{name} {action.option_strings} has no help"
            if action.default not in (None, False, argparse.SUPPRESS):
                assert "default" in text.lower(), (name, action.option_strings)
    run_help = sub.choices["run"].format_help()
    assert "(default: quick)" in " ".join(run_help.split())


def test_one_default_profile_and_the_makefile_passes_standard():
    from gapverify.verification.claims.inputs import DEFAULT_PROFILE
    from gapverify.cli import build_parser

    assert DEFAULT_PROFILE == "quick"
    for cmd in ("run", "audit", "calibrate"):
        assert build_parser().parse_args([cmd]).profile == "quick"
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    assert "PROFILE ?= standard" in makefile and "verify --profile $(PROFILE)" in makefile


def test_json_verdict_words_are_the_tables_and_carry_provenance(tmp_path, capsys):
    out = tmp_path / "r.json"
    code = main(["run", *TINY, "--store", str(tmp_path / "s.sqlite"), "--json", str(out), "--quiet"])
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    claim = doc["claims"][0]
    table_word = {"pass": "VERIFIED", "not verified": f"NOT VERIFIED: {claim['reason'].upper()}",
                  "fail": "FAILED", "flaky": "FLAKY"}[claim["outcome"]]
    assert claim["verdict"] == table_word.lower() and f"{table_word}" in printed
    for check in claim["checks"]:
        assert check["verdict"] in printed and check["outcome"] in (
            "pass", "fail", "lacks power", "not assessed", "outside domain", "recorded")
    assert code == {"pass": 0, "not verified": 3, "fail": 1, "flaky": 1}[claim["outcome"]]
    prov = doc["provenance"]
    assert doc["schema"] == prov["schema"] == 2
    assert set(prov["versions"]) == {"gapverify", "numpy", "scipy", "sympy", "mpmath"}
    assert all(prov["versions"][k] for k in ("numpy", "scipy", "sympy", "mpmath"))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", prov["timestamp"])
    assert prov["git_commit"] is None or re.fullmatch(r"[0-9a-f]{40}", prov["git_commit"])
    assert doc["run_id"] == 1
    # the reports read the new words and the old ones alike
    from gapverify.reports.results import load_run

    run = load_run(results=out)
    assert run["claims"][0]["verdict"] == claim["outcome"]
    old = json.loads(out.read_text())
    for c in old["claims"]:
        c["verdict"] = c.pop("outcome")
        for k in c["checks"]:
            k["verdict"] = k.pop("outcome")
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert load_run(results=tmp_path / "old.json")["claims"][0]["verdict"] == claim["outcome"]


def test_runs_lists_the_store_and_exports_csv(tmp_path, capsys, monkeypatch):
    import csv
    import io

    store = tmp_path / "s.sqlite"
    monkeypatch.setenv("GAPVERIFY_STORE", str(store))  # the default store moves
    main(["run", *TINY, "--quiet"])
    main(["run", *TINY, "--quiet", "--seed", "7"])
    err = capsys.readouterr().err
    assert err.count(f"store {store} ($GAPVERIFY_STORE)") == 2  # once per run
    assert main(["runs"]) == 0
    text = capsys.readouterr().out
    assert "20250713" in text and "   7" in text and "softmax.kappa" in text and "quick" in text
    assert main(["runs", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == [1, 2] and rows[1]["root_seed"] == 7
    assert rows[0]["claims"] == ["softmax.kappa"] and rows[0]["code_version"]
    assert rows[0]["provenance"]["versions"]["numpy"]
    assert main(["runs", "--csv", "-", "--run", "1"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["T"] for r in table} == {"64", "91", "128"} and {r["run_id"] for r in table} == {"1"}
    assert table[0]["claim"] == "softmax.kappa" and table[0]["verdict"] and table[0]["outcome"]
    path = tmp_path / "rows.csv"
    assert main(["runs", "--csv", str(path)]) == 0  # the last run
    assert "wrote" in capsys.readouterr().out and path.read_text().startswith("run_id,claim")
    assert main(["runs", "--csv", "-", "--run", "9"]) == 2
    assert "no run 9" in capsys.readouterr().err


def test_tables_of_one_run_go_to_its_own_folder(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    main(["run", *TINY, "--quiet", "--store", str(store)])
    main(["run", *TINY, "--quiet", "--store", str(store), "--seed", "7"])
    out = tmp_path / "tables"
    assert main(["tables", "--store", str(store), "--run", "1", "--out", str(out)]) == 0
    source = json.loads((out / "run-1" / "SOURCE.json").read_text())
    assert source["run_id"] == 1 and source["root_seed"] == 20250713
    assert source["provenance"]["schema"] == 2
    assert any(p.suffix == ".tex" for p in (out / "run-1").iterdir())
    assert not any(p.suffix == ".tex" for p in out.iterdir())  # nothing mixed into OUT
    assert main(["tables", "--store", str(store), "--run", "5", "--out", str(out)]) == 2
    assert "no run 5" in capsys.readouterr().err


def test_an_old_store_is_migrated(tmp_path):
    import sqlite3

    from gapverify.verification.running.store import SCHEMA_VERSION, Store

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE measurements (experiment TEXT NOT NULL, params TEXT NOT NULL, T INTEGER NOT NULL,
            replicate INTEGER NOT NULL, root_seed INTEGER NOT NULL, code_version TEXT NOT NULL,
            payload BLOB NOT NULL, seconds REAL NOT NULL, created REAL NOT NULL,
            PRIMARY KEY (experiment, params, T, replicate, root_seed, code_version));
        CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, created REAL NOT NULL,
            command TEXT NOT NULL, results TEXT NOT NULL);""")
    db.execute("INSERT INTO runs (created, command, results) VALUES (?,?,?)",
               (1.0, "gapverify run x", json.dumps({"root_seed": 5, "profile": "standard",
                                                    "code_version": "abc",
                                                    "claims": [{"claim": "softmax.kappa"}]})))
    db.commit(), db.close()
    # read-only, it is not migrated, and its runs still list (from the stored results)
    (row,) = Store(path, readonly=True).runs()
    assert (row["profile"], row["root_seed"], row["claims"]) == ("standard", 5, ["softmax.kappa"])
    store = Store(path)
    (row,) = store.runs()
    assert (row["profile"], row["root_seed"], row["claims"], row["code_version"]) == \
        ("standard", 5, ["softmax.kappa"], "abc")
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    cols = {r[1] for r in store.db.execute("PRAGMA table_info(runs)")}
    assert {"profile", "claims", "root_seed", "code_version", "provenance"} <= cols


def test_progress_is_line_based_when_stderr_is_not_a_terminal(tmp_path, capsys):
    assert main(["run", *TINY, "--store", str(tmp_path / "s.sqlite")]) in (0, 1, 3)
    err = capsys.readouterr().err
    assert "sampling 1 claim(s): 12 task(s)" in err
    assert re.search(r"sampled 1 claim\(s\): 12/12 task\(s\) in [\d.]+ s", err)
    assert "\r" not in err and "\x1b[" not in err  # no bar redrawn


def test_describe(capsys):
    assert main(["describe", "markov.singular_law"]) == 0
    text = capsys.readouterr().out
    for fragment in ("markov.singular_law (theorem)", "s2", "(0, inf)", "edge",
                     "rate range [0.667, 1]", "power target 5%", "arXiv:0808.1502",
                     "needs >= 4 size(s)"):
        assert fragment in text, fragment
    assert main(["describe", "depth.stable_rank", "--json", "--profile", "standard"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["profile"] == "standard" and d["checks"][0]["rate"] == "l - 1.15 for l >= 2; 1/2 at l = 1"
    assert main(["describe", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown claim 'nope'" in err and "softmax.kappa" in err and "markov.outliers" in err
    assert main(["describe", "softmax.kappa", "--profile", "large"]) == 2
    assert "no profile 'large'" in capsys.readouterr().err


def test_docs_command_writes_the_document(tmp_path, capsys):
    out = tmp_path / "d" / "claims.md"
    assert main(["docs", "--out", str(out)]) == 0
    root = Path(__file__).resolve().parents[2]
    assert out.read_text() == (root / "docs" / "claims.md").read_text()


def test_figure_commands_take_sizes_and_set(capsys):
    from gapverify.verification.claims.inputs import UsageError
    from gapverify.cli import _resolve_aliases, build_parser


    def parse(*argv):
        args = build_parser().parse_args(list(argv))
        _resolve_aliases(args)
        return args

    args = parse("paper-figure", "--sizes", "64", "--set", "gamma=0.5", "--set", "depth=3")
    assert (args.T, args.gamma, args.depth) == (64, 0.5, 3)
    args = parse("paper-figure")
    assert (args.T, args.gamma, args.depth) == (150, 1.0, 10)
    args = parse("paper-figure", "--T", "64", "--gamma", "0.5")  # deprecated, still works
    assert (args.T, args.gamma) == (64, 0.5)
    assert "--T is deprecated" in capsys.readouterr().err
    args = parse("normalization-figure", "--sizes", "64,128")
    assert args.T == "64,128"
    for bad in (["paper-figure", "--sizes", "64,128"], ["paper-figure", "--T", "64", "--sizes", "64"],
                ["paper-figure", "--set", "s2=0.5"], ["paper-figure", "--sizes", "8192"]):
        with pytest.raises(UsageError):
            parse(*bad)


def test_tables_name_files_left_by_another_run(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    main(["run", *TINY, "--quiet", "--store", str(store)])
    out = tmp_path / "tables"
    out.mkdir()
    (out / "claim-other.tex").write_text("% from another run")
    capsys.readouterr()
    assert main(["tables", "--store", str(store), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "1 file(s) of an earlier run" in err and "claim-other.tex" in err
    assert main(["tables", "--store", str(store), "--out", str(tmp_path / "fresh")]) == 0
    assert "earlier run" not in capsys.readouterr().err


def test_line_progress_prints_while_a_long_group_runs():
    """Off a terminal, a group prints a start line, periodic lines with the time left and
    an end line (a standard sweep is one group of thousands of tasks)."""
    import io

    from gapverify.cli.sampling import LineProgress

    out = io.StringIO()
    progress = LineProgress(stream=out, every=0.0)
    progress.start("18 claim(s)", 4, 6)
    for _ in range(4):
        progress.advance(None, 0.1)
    lines = out.getvalue().splitlines()
    assert lines[0] == "sampling 18 claim(s): 4 task(s), 2 reused from the store"
    assert [l.split(":")[1].split(" in ")[0].strip() for l in lines[1:4]] == [
        "1/4 task(s) (25%)", "2/4 task(s) (50%)", "3/4 task(s) (75%)"]
    assert "s left" in lines[1] and lines[-1].startswith("sampled 18 claim(s): 4/4 task(s) in")
    quiet = io.StringIO()
    slow = LineProgress(stream=quiet, every=3600.0)
    slow.start("x", 3, 3)
    for _ in range(3):
        slow.advance(None, 0.1)
    assert len(quiet.getvalue().splitlines()) == 2  # start and end only within the hour
