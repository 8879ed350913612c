"""The pytest plugin (``gapverify/pytest_plugin.py``, ``docs/ci.md``): ``pytest
--gapverify`` collects every claim as an item ``gapverify::CLAIM`` (and its statement
snapshot as ``gapverify::snapshot::CLAIM``), judged when the item runs; without the option
the plugin imports nothing heavy; and the CI workflows of ``docs/ci/`` use only commands
and options that exist.

Runs that sample go through a subprocess (``runpytest_subprocess``: a fresh registry and
environment, as in CI); collection-only runs and snapshots run in-process, with the
registry put back as it was. Sizes are tiny, except in the one quick-profile test
(``slow``), the end-to-end check of docs/ci.md's first command.
"""
from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import json
import re
import shlex
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gapverify import pytest_plugin as plugin
# what an in-process run imports, imported before it (pytester drops the modules a run
# imports when it ends)
from gapverify.verification.claims import inputs, loading, registry  # noqa: F401
from gapverify.verification.judging.outcomes import CLAIM_VERDICTS
from gapverify.verification.running import defaults  # noqa: F401
from gapverify.verification.tools import snapshot as snapshot_tool

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
WORKFLOWS = {"github": DOCS / "ci" / "github-actions.yml", "gitlab": DOCS / "ci" / "gitlab-ci.yml"}
#: The tutorial's limit made 3% too large (docs/writing-a-claim.md, "What a wrong
#: statement looks like").
WRONG = ('    return sp.exp(p["s2"])\n', '    return sp.exp(p["s2"]) * sp.Rational(103, 100)\n')
TINY = ("--gapverify-sizes=64,128,256,512", "--gapverify-replicates=4")


def tutorial_claim() -> str:
    """``participation.py`` exactly as docs/writing-a-claim.md writes it."""
    text = (DOCS / "writing-a-claim.md").read_text(encoding="utf-8")
    found = re.search(r"Save this as `participation\.py`:\n\n```python\n(.*?)```", text, re.S)
    assert found, "docs/writing-a-claim.md no longer shows participation.py"
    assert WRONG[0] in found.group(1)
    return found.group(1)


def renamed(source: str, claim_id: str) -> str:
    return source.replace('id="tutorial.participation"', f'id="{claim_id}"')


def boom_claim(mark: Path) -> str:
    """A claim whose experiment leaves ``mark`` and raises: it shows whether it sampled."""
    source = renamed(tutorial_claim(), "tutorial.boom").replace("experiment=participation",
                                                                "experiment=boom")
    return source.replace("def limit(p):", f'''def boom(rng, T, params):
    open({str(mark)!r}, "w").close()
    raise RuntimeError("tutorial.boom sampled")


def limit(p):''')


@pytest.fixture
def clean_env(monkeypatch):
    """No store or claim files from the test session's environment; one BLAS thread."""
    for name in ("GAPVERIFY_STORE", "GAPVERIFY_CLAIMS", "PYTEST_ADDOPTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")


@pytest.fixture
def kept_registry(monkeypatch):
    """The registry as it was, after the test (in-process runs load claim files into it);
    calling the fixture's value puts it back at once."""
    monkeypatch.delenv("GAPVERIFY_CLAIMS", raising=False)
    registry.claim_ids()  # the configured claims (plug-ins) loaded before the copy
    state = registry.REGISTRY.state()
    yield lambda: registry.REGISTRY.restore(state)
    registry.REGISTRY.restore(state)


def option_names() -> list[str]:
    """The plugin's options, as its ``pytest_addoption`` adds them."""
    class Recorder:
        names: list[str] = []

        def getgroup(self, *args, **kwargs):
            return self

        def addoption(self, *names, **kwargs):
            self.names.extend(names)

    recorder = Recorder()
    plugin.pytest_addoption(recorder)
    return recorder.names


def inline(pytester, *args):
    """An in-process pytest run (the plugin loads through its entry point), without
    hypothesis' plugin, which imports hypothesis anew in each in-process run (seconds)."""
    return pytester.runpytest("-p", "no:hypothesispytest", *args)


def collected(result) -> list[str]:
    return [line for line in result.outlines if line.startswith("gapverify::")]


# ------------------------------------------------------------------ loading and start-up
def test_the_plugin_is_a_pytest11_entry_point():
    """pyproject.toml registers it, and the installed metadata has it, read as pytest reads
    it (every distribution's entry points: a stale ``gapverify.egg-info`` in the checkout
    does not hide it)."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"] == {"gapverify": "gapverify.pytest_plugin"}
    installed = [(ep.name, ep.value) for dist in importlib.metadata.distributions()
                 for ep in dist.entry_points if ep.group == "pytest11"]
    assert ("gapverify", "gapverify.pytest_plugin") in installed, (
        "the installed gapverify predates its pytest11 entry point: pip install -e .")


def test_without_the_option_pytest_imports_nothing_heavy(pytester, clean_env):
    """This project's own test run loads the plugin too: without --gapverify it adds its
    options and imports neither sympy nor scipy nor the verifier."""
    pytester.makepyfile(test_probe="""
        import sys

        def test_probe():
            heavy = sorted(m for m in ("sympy", "scipy", "gapverify.api",
                                       "gapverify.verification") if m in sys.modules)
            print("PLUGIN", "gapverify.pytest_plugin" in sys.modules, "HEAVY", heavy)
    """)
    result = pytester.run(sys.executable, "-X", "importtime", "-m", "pytest", "-s", "-q",
                          timeout=120)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["PLUGIN True HEAVY []"])
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.lines
                if line.startswith("import time:")]
    assert "pytest" in imported  # the importtime listing was read
    assert not [m for m in imported if m.split(".")[0] in ("sympy", "scipy")]


def test_help_lists_every_option(pytester):
    result = inline(pytester, "--help")
    assert result.ret == 0
    text = result.stdout.str()
    names = option_names()
    assert "--gapverify" in names and "--gapverify-store" in names
    for name in names:
        assert re.search(rf"{re.escape(name)}(?![\w-])", text), name


@pytest.mark.parametrize("args, message", [
    (("--gapverify=fast",), "--gapverify: unknown profile 'fast'"),
    (("--gapverify", "tests"), "--gapverify: unknown profile 'tests'"),
    (("--gapverify", "--gapverify-sizes=5,6"), "--gapverify-sizes: *"),
    (("--gapverify", "--gapverify-replicates=1"), "--gapverify-replicates must be an integer*"),
    (("--gapverify", "--gapverify-claims-from=missing.py"), "--gapverify-claims-from: no such file*"),
])
def test_bad_options_are_usage_errors(pytester, args, message):
    result = inline(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}*"])


# ---------------------------------------------------------------------------- outcomes
@pytest.mark.parametrize("policy", plugin.NOT_VERIFIED_POLICIES)
def test_every_verdict_word_has_a_pytest_outcome(policy):
    expected = {0: "passed", 1: "failed", 3: plugin.POLICY_OUTCOMES[policy]}
    for word in CLAIM_VERDICTS:
        assert plugin.claim_outcome(word.word, policy) == expected[word.exit_code], word.word
    with pytest.raises(ValueError):
        plugin.claim_outcome("verified", "ignore")


def test_a_claim_files_reproduce_command_names_the_file():
    reason = "misses 2.06; reproduce: gapverify run x.y --seed 1 --no-replay"
    assert plugin.with_claim_file(reason, "/a b/c.py").endswith(
        "--no-replay --claims-from '/a b/c.py'")
    assert plugin.with_claim_file(reason, None) == reason
    assert plugin.with_claim_file("misses 2.06", "/c.py") == "misses 2.06"
    given = reason + " --claims-from /c.py"
    assert plugin.with_claim_file(given, "/c.py") == given


# -------------------------------------------------------------------------- collection
def test_the_claims_are_collected_as_gapverify_items(pytester, kept_registry):
    claim = pytester.path / "participation.py"
    claim.write_text(tutorial_claim())
    result = inline(pytester, "--gapverify", "--collect-only", "-q",
                                f"--gapverify-claims-from={claim}")
    assert result.ret == 0, result.stdout.str()
    ids = collected(result)
    default = [f"gapverify::{c}" for c in registry.default_claim_ids()]
    assert ids[:len(default)] == default
    assert "gapverify::tutorial.participation" in default  # a claim file's claim runs
    for opt_in in ("gapverify::models.bert", "gapverify::peers.entropy"):
        assert opt_in not in ids  # run only when named
    snapshots = [i for i in ids if i.startswith("gapverify::snapshot::")]
    assert snapshots == [f"gapverify::snapshot::{c}" for c in registry.package_claim_ids()]
    assert "gapverify::snapshot::models.bert" in snapshots  # a statement is cheap to check


@pytest.mark.parametrize("args, wanted", [
    (("-k", "models.bert"), ["gapverify::models.bert", "gapverify::snapshot::models.bert"]),
    (("-k", "peers.entropy or tutorial", "--gapverify-no-snapshot"),
     ["gapverify::peers.entropy"]),
    (("-k", "not softmax", "--gapverify-no-snapshot"), None),
    (("--gapverify-all", "--gapverify-no-snapshot"), "all"),
], ids=["named", "named-or", "negated", "all"])
def test_opt_in_claims_run_when_k_names_them(pytester, kept_registry, args, wanted):
    result = inline(pytester, "--gapverify", "--collect-only", "-q", *args)
    ids = collected(result)
    if wanted == "all":
        assert ids == [f"gapverify::{c}" for c in registry.claim_ids()]
    elif wanted is None:  # every claim of no name: no opt-in one
        assert "gapverify::markov.outliers" in ids and "gapverify::softmax.kappa" not in ids
        assert not [i for i in ids if i.startswith(("gapverify::models.", "gapverify::peers.",
                                                    "gapverify::snapshot::"))]
    else:
        assert ids == wanted


def test_a_bad_claim_file_is_a_collection_error(pytester, kept_registry):
    bad = pytester.path / "bad.py"
    bad.write_text("CLAIMS = [\n")
    result = inline(pytester, "--gapverify", f"--gapverify-claims-from={bad}")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ERROR collecting gapverify*", f"{bad}:1: syntax error*"])


def test_a_changed_statement_fails_its_snapshot_item(pytester, kept_registry):
    claim = pytester.path / "participation.py"
    claim.write_text(tutorial_claim())
    snap = pytester.path / "snap"
    ids = registry.load_claim_files([claim])
    snapshot_tool.write_snapshot(snap, snapshot_tool.current_meta(),
                                 snapshot_tool.current_snapshot(ids))
    args = ("--gapverify", "-k", "snapshot and participation",
            f"--gapverify-claims-from={claim}", f"--gapverify-snapshot={snap}")
    result = inline(pytester, *args, "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["gapverify::snapshot::tutorial.participation PASSED*"])
    kept_registry()  # forget the file: the edited one loads afresh
    claim.write_text(tutorial_claim().replace(*WRONG))
    result = inline(pytester, *args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "tutorial.participation: statement changed: *",
        "*Rational(103, 100)*",
        f"if the change is intended, run `gapverify snapshot --update --path {snap} "
        f"--claims-from {claim}` and commit the new snapshot"])


# ------------------------------------------------------------------ sampling (subprocess)
def test_a_session_judges_the_selected_claims_only(pytester, clean_env):
    """-k deselects without sampling; not verified -> xfail; the store in pytest's cache;
    the session's run recorded; --junitxml one testcase per claim; -x stops."""
    mark = pytester.path / "boom-sampled"
    pytester.path.joinpath("boom.py").write_text(boom_claim(mark))
    pytester.path.joinpath("claims.py").write_text(  # two claims of one experiment
        tutorial_claim() + "\n\nimport dataclasses\n\nCLAIMS.append(dataclasses.replace("
                           "CLAIMS[0], id='tutorial.participation_two'))\n")
    files = ("--gapverify-claims-from=boom.py", "--gapverify-claims-from=claims.py")
    result = pytester.runpytest_subprocess(
        "--gapverify", "-k", "participation", *files, *TINY, "--gapverify-no-snapshot",
        "--gapverify-not-verified=xfail", "--gapverify-json=results.json",
        "--junitxml=junit.xml", "-rxX", timeout=300)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("xfailed", 0) == 2, outcomes
    assert outcomes["deselected"] >= 1 and not mark.exists()  # tutorial.boom never sampled
    store = pytester.path / ".pytest_cache" / "d" / "gapverify" / "store.sqlite"
    result.stdout.fnmatch_lines([f"gapverify: profile quick, store {store}, not verified -> xfail"])
    results = json.loads(pytester.path.joinpath("results.json").read_text())
    assert [c["claim"] for c in results["claims"]] == ["tutorial.participation",
                                                        "tutorial.participation_two"]
    assert results["command"].startswith("pytest ") and " --gapverify -k participation " in (
        results["command"])
    with sqlite3.connect(store) as db:
        command, claims = db.execute(
            "SELECT command, claims FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    assert command == results["command"] and "tutorial.participation_two" in claims
    cases = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    assert sorted((c.get("classname"), c.get("name")) for c in cases) == [
        ("gapverify", "tutorial.participation"), ("gapverify", "tutorial.participation_two")]
    # -x: the first claim (tutorial.boom, its file named first) fails and nothing follows
    result = pytester.runpytest_subprocess("--gapverify", "-x", "-k", "participation or boom",
                                           *files, *TINY, "--gapverify-no-snapshot",
                                           timeout=300)
    assert result.ret == 1 and mark.exists()
    result.assert_outcomes(failed=1, deselected=result.parseoutcomes()["deselected"])
    result.stdout.fnmatch_lines(["*RuntimeError*tutorial.boom sampled*",
                                 "FAILED gapverify::tutorial.boom - *"])


@pytest.mark.slow
def test_the_tutorial_passes_and_a_wrong_limit_fails_at_the_quick_profile(pytester, clean_env):
    """docs/ci.md's first command: the tutorial claim passes; its limit made 3% too large
    fails, with the reason and the command that reproduces it; --junitxml holds one
    testcase for the claim."""
    claim = pytester.path / "participation.py"
    claim.write_text(tutorial_claim())
    args = ("--gapverify=quick", "-k", "tutorial.participation",
            "--gapverify-claims-from=participation.py", "--junitxml=junit.xml")
    result = pytester.runpytest_subprocess(*args, timeout=300)
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=1, deselected=result.parseoutcomes()["deselected"])
    cases = list(ET.parse(pytester.path / "junit.xml").getroot().iter("testcase"))
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("gapverify", "tutorial.participation")]
    claim.write_text(tutorial_claim().replace(*WRONG))
    result = pytester.runpytest_subprocess(*args, timeout=300)
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        "*_ gapverify claim tutorial.participation _*",
        "tutorial.participation (derived): FAILED; 0 of 1 predictions verified with power",
        "  - participation: *misses 2.06*; reproduce: gapverify run tutorial.participation *",
        "FAILED gapverify::tutorial.participation - *"])
    (case,) = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    command = re.search(r"reproduce: (gapverify run .*)$", case.find("failure").text, re.M)
    words = shlex.split(command.group(1))
    store = pytester.path / ".pytest_cache" / "d" / "gapverify" / "store.sqlite"
    for option, value in (("--profile", "quick"), ("--claims-from", str(claim)),
                          ("--store", str(store))):
        assert words[words.index(option) + 1] == value, (option, command.group(1))
    # the draws are sized by the run: the same profile, sizes and seed repeat its rounds
    assert "--no-replay" in words and "--replicates" not in words
    # the reproduce command reproduces: the same failure, from the plugin's store
    proc = subprocess.run([sys.executable, "-m", "gapverify", *shlex.split(command.group(1))[1:]],
                          cwd=pytester.path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "tutorial.participation (derived): FAILED" in proc.stdout
    assert "sampled 1 claim(s): nothing to do" in proc.stderr  # all from the store, said


@pytest.mark.slow
def test_xdist_workers_share_the_claims_and_the_session_run(pytester, clean_env):
    pytest.importorskip("xdist")
    pytester.path.joinpath("one.py").write_text(tutorial_claim())
    pytester.path.joinpath("two.py").write_text(renamed(tutorial_claim(),
                                                        "tutorial.participation_two"))
    result = pytester.runpytest_subprocess(
        "--gapverify", "-n", "2", "-k", "participation", "--gapverify-claims-from=one.py",
        "--gapverify-claims-from=two.py", *TINY, "--gapverify-no-snapshot",
        "--gapverify-not-verified=skip", "--gapverify-json=results.json", timeout=300)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("skipped", 0) == 2, outcomes
    results = json.loads(pytester.path.joinpath("results.json").read_text())
    assert sorted(c["claim"] for c in results["claims"]) == ["tutorial.participation",
                                                             "tutorial.participation_two"]


# ------------------------------------------------------------------------ CI workflows
def _shell_lines(workflow: dict, kind: str) -> list[str]:
    """Every shell line a workflow runs."""
    texts = []
    if kind == "github":
        for job in workflow["jobs"].values():
            texts += [step["run"] for step in job["steps"] if "run" in step]
    else:
        for job in workflow.values():
            if isinstance(job, dict) and "script" in job:
                for key in ("before_script", "script", "after_script"):
                    texts += job.get(key, [])
    return [line for text in texts for line in text.splitlines() if line.strip()]


def _commands(lines: list[str]) -> list[list[str]]:
    """Each command of the lines, as words (split at ``&&``, ``|``, ``;``)."""
    out = []
    for line in lines:
        words = shlex.split(line, comments=True)
        current: list[str] = []
        for w in words + [";"]:
            if w in ("&&", "||", "|", ";"):
                if current:
                    out.append(current)
                current = []
            else:
                current.append(w)
    return out


@functools.lru_cache(maxsize=None)
def _gapverify_help(*command: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "gapverify", *command, "--help"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _options(help_text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", help_text))


def _pytest_accepts(args: list[str], folder: Path) -> subprocess.CompletedProcess:
    """pytest collecting with ``args`` (its own parser on every option, the installed
    plugins' included, and the plugin's checks of the values) in ``folder``, a copy of
    the files the workflow names; ``-n N`` is left out where pytest-xdist is not
    installed."""
    if importlib.util.find_spec("xdist") is None and "-n" in args:
        i = args.index("-n")
        args = args[:i] + args[i + 2:]
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "--gapverify-no-snapshot", *args],
                          capture_output=True, text=True, timeout=120, cwd=folder)


@pytest.mark.parametrize("kind", sorted(WORKFLOWS))
def test_the_workflows_use_only_commands_and_options_that_exist(kind, tmp_path, clean_env):
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load(WORKFLOWS[kind].read_text(encoding="utf-8"))
    commands = _commands(_shell_lines(workflow, kind))
    subcommands = re.search(r"\{([\w,-]+)\}", _gapverify_help()).group(1).split(",")
    seen = {"gapverify": [], "pytest": []}
    for words in commands:
        if words[:3] == ["python", "-m", "pytest"] or words[:1] == ["pytest"]:
            args = words[3:] if words[0] == "python" else words[1:]
            for a in args:  # the claim files, where the workflow has them
                if a.startswith("--gapverify-claims-from="):
                    copy = tmp_path / a.split("=", 1)[1]
                    copy.parent.mkdir(parents=True, exist_ok=True)
                    copy.write_text((ROOT / a.split("=", 1)[1]).read_text(encoding="utf-8"))
            proc = _pytest_accepts(args, tmp_path)
            assert proc.returncode == 0, f"{kind}: pytest refuses {args}: {proc.stdout}{proc.stderr}"
            assert "gapverify::tutorial.participation" in proc.stdout
            seen["pytest"].append(args)
        elif words[:1] == ["gapverify"]:
            assert words[1] in subcommands, f"{kind}: no command gapverify {words[1]}"
            known = _options(_gapverify_help(words[1]))
            unknown = [a for a in words[2:] if a.startswith("-") and a.split("=", 1)[0] not in known]
            assert not unknown, f"{kind}: gapverify {words[1]} has no option {unknown}"
            seen["gapverify"].append(words[1:])
    (args,) = seen["pytest"]
    assert "--gapverify=quick" in args and "-m" in args and "gapverify" in args
    (tables,) = [w for w in seen["gapverify"] if w[0] == "tables"]
    store = tables[tables.index("--store") + 1]
    out = tables[tables.index("--out") + 1]
    folder = f".pytest_cache/d/{plugin.CACHE_NAME}"
    assert store == f"{folder}/{plugin.STORE_NAME}"  # the plugin's default store
    claim_files = [a.split("=", 1)[1] for a in args if a.startswith("--gapverify-claims-from=")]
    assert claim_files == [tables[tables.index("--claims-from") + 1]]
    for path in claim_files:
        assert (ROOT / path).read_text(encoding="utf-8") == tutorial_claim()
    text = WORKFLOWS[kind].read_text(encoding="utf-8")
    if kind == "github":
        steps = workflow["jobs"]["claims"]["steps"]
        cached = [s["with"]["path"] for s in steps if str(s.get("uses", "")).startswith(
            "actions/cache/")]
        assert cached == [folder, folder]  # restored and saved
        assert f'cat {out}/summary.md >> "$GITHUB_STEP_SUMMARY"' in text
    else:
        job = workflow["gapverify"]
        assert [c["paths"] for c in job["cache"] if c["key"] == "gapverify-store"] == [
            [folder + "/"]]
        junit = [a.split("=", 1)[1] for a in args if a.startswith("--junitxml=")]
        assert job["artifacts"]["reports"]["junit"] == junit[0]
        assert f"cat {out}/summary.md" in text


def test_docs_ci_shows_the_workflow_files_as_they_are():
    text = (DOCS / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    assert blocks == [WORKFLOWS["github"].read_text(encoding="utf-8"),
                      WORKFLOWS["gitlab"].read_text(encoding="utf-8")]
    for name in option_names():
        assert name in text, f"docs/ci.md does not describe {name}"
