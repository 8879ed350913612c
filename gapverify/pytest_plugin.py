"""The pytest plugin: ``pytest --gapverify[=PROFILE]`` judges claims as test items.

Registered through the ``pytest11`` entry point (``pyproject.toml``), as pytest-cov and
hypothesis are, so every pytest run in an environment with gapverify installed loads this
module. Without ``--gapverify`` it does nothing: it adds its options and returns, and it
imports nothing but pytest and the standard library (no sympy, scipy or numpy at pytest
start-up; ``tests/test_pytest_plugin.py`` checks it with ``python -X importtime``).

With ``--gapverify`` every claim becomes a test item (``docs/ci.md``):

* ``gapverify::CLAIM``: the claim sampled and judged by :func:`gapverify.verify`, on its
  own (a claim's verdict does not depend on the others), when the item runs: a claim
  deselected by ``-k``, ``-m`` or ``--deselect`` samples nothing. Which claims: those
  ``gapverify run`` judges without claim names (the built-in ones but the opt-in families
  ``models.*`` and ``training.*``, and those of claim files), plus the claims that run
  only when named (the opt-in families, the installed plug-ins' claims) when ``-k``
  selects them by name or with ``--gapverify-all``;
* ``gapverify::snapshot::CLAIM``: the claim's statement against the recorded snapshot
  (what ``gapverify snapshot`` compares; nothing is sampled), for the package's claims
  and, with ``--gapverify-snapshot PATH``, for the claims of claim files.

Outcomes: verified, supported, reproduced and recorded pass; failed and flaky fail, with
the failing checks' reasons and the command that reproduces them; "not verified"
fails, is an expected failure or is skipped (``--gapverify-not-verified``). The session's
verdicts are recorded in the store as one run (``gapverify tables --store S`` reads it).
"""
from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest

#: The ways a "not verified" claim can end as a test (``--gapverify-not-verified``).
NOT_VERIFIED_POLICIES = ("fail", "xfail", "skip")
#: The collector's node id: every item's id starts ``gapverify::``.
ROOT = "gapverify"
#: The store's file in pytest's cache directory (``.pytest_cache/d/gapverify/``).
CACHE_NAME, STORE_NAME = "gapverify", "store.sqlite"
#: What an xdist worker hands to the controller: the results of the claims it judged.
WORKER_KEY = "gapverify_results"


class GapverifyFailure(Exception):
    """A claim's verdict or a statement's change that fails its item: the message is the
    whole report (no traceback)."""


# ------------------------------------------------------------------------------ options
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gapverify", "gapverify: claims as test items (docs/ci.md)")
    group.addoption("--gapverify", dest="gapverify", nargs="?", const="quick", default=None,
                    metavar="PROFILE",
                    help="collect every claim as a test item gapverify::CLAIM (and its "
                         "statement snapshot as gapverify::snapshot::CLAIM), sampled and "
                         "judged at PROFILE: quick (default), standard, large, long, gpu. "
                         "Write --gapverify=PROFILE: a bare word after --gapverify is read "
                         "as the profile")
    group.addoption("--gapverify-claims-from", dest="gapverify_claims_from", action="append",
                    default=[], metavar="PATH",
                    help="load the claims of a claim file (docs/writing-a-claim.md); "
                         "repeatable; $GAPVERIFY_CLAIMS does the same")
    group.addoption("--gapverify-store", dest="gapverify_store", default=None, metavar="PATH",
                    help="SQLite store of the measurements, reused between runs (default: "
                         "$GAPVERIFY_STORE if set, else store.sqlite in pytest's cache "
                         "directory, .pytest_cache/d/gapverify/)")
    group.addoption("--gapverify-not-verified", dest="gapverify_not_verified",
                    choices=NOT_VERIFIED_POLICIES, default="fail",
                    help="the test outcome of a claim that is not verified (outside "
                         "domain, not assessed, lacks power): fail (default), xfail or skip")
    group.addoption("--gapverify-all", dest="gapverify_all", action="store_true",
                    help="also judge the claims gapverify run judges only when named (the "
                         "opt-in families models.* and training.*, the installed plug-ins' "
                         "claims); -k selects them by name without it")
    group.addoption("--gapverify-sizes", dest="gapverify_sizes", default=None,
                    metavar="T1,T2,...", help="sizes T replacing the profile's (as "
                                              "gapverify run --sizes)")
    group.addoption("--gapverify-replicates", dest="gapverify_replicates", default=None,
                    metavar="N", help="replicates per size replacing the profile's")
    group.addoption("--gapverify-seed", dest="gapverify_seed", default=None, metavar="SEED",
                    help="root seed (default: gapverify run's)")
    group.addoption("--gapverify-workers", dest="gapverify_workers", default="1", metavar="N",
                    help="sampling processes per pytest process (default 1; with -n, per "
                         "xdist worker)")
    group.addoption("--gapverify-snapshot", dest="gapverify_snapshot", default=None,
                    metavar="PATH",
                    help="the snapshot of the claim files' statements (written by gapverify "
                         "snapshot --update --path PATH --claims-from FILE): one item "
                         "gapverify::snapshot::CLAIM per claim; the package's claims are "
                         "always compared with the package's snapshot")
    group.addoption("--gapverify-no-snapshot", dest="gapverify_no_snapshot",
                    action="store_true", help="collect no statement snapshot items")
    group.addoption("--gapverify-json", dest="gapverify_json", default=None, metavar="PATH",
                    help="write the session's verdicts as one results JSON (as gapverify "
                         "run --json)")


class Settings:
    """The checked options of a ``--gapverify`` session (:func:`pytest_configure`)."""

    def __init__(self, config: pytest.Config) -> None:
        from gapverify.verification.claims.inputs import PROFILES, UsageError, parse_sizes

        get = config.getoption
        self.profile: str = get("gapverify")
        if self.profile not in PROFILES:
            raise pytest.UsageError(
                f"--gapverify: unknown profile {self.profile!r} (one of {', '.join(PROFILES)}); "
                "write --gapverify=PROFILE, or --gapverify before another option")
        try:
            self.sizes = (parse_sizes(get("gapverify_sizes"))
                          if get("gapverify_sizes") is not None else None)
        except UsageError as exc:
            raise pytest.UsageError(f"--gapverify-sizes: {exc}") from None
        self.replicates = _integer(get("gapverify_replicates"), "--gapverify-replicates", 2, 10000)
        self.seed = _integer(get("gapverify_seed"), "--gapverify-seed", 0, 2**63 - 1)
        self.workers = _integer(get("gapverify_workers"), "--gapverify-workers", 1, 64)
        self.not_verified: str = get("gapverify_not_verified")
        self.select_all: bool = get("gapverify_all")
        self.claim_files = [str(Path(p).resolve()) for p in get("gapverify_claims_from")]
        for path in self.claim_files:
            if not Path(path).is_file():
                raise pytest.UsageError(f"--gapverify-claims-from: no such file: {path}")
        self.snapshot = (str(Path(get("gapverify_snapshot")).resolve())
                         if get("gapverify_snapshot") else None)
        self.no_snapshot: bool = get("gapverify_no_snapshot")
        self.json = get("gapverify_json")
        self.store = str(store_path(config))


def _integer(text: str | None, name: str, low: int, high: int) -> int | None:
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        raise pytest.UsageError(f"{name} must be an integer in [{low}, {high}], got {text!r}")
    return value


def store_path(config: pytest.Config) -> Path:
    """``--gapverify-store``, else ``$GAPVERIFY_STORE``, else ``store.sqlite`` in pytest's
    cache directory (``.pytest_cache/d/gapverify/``; made if missing)."""
    given = config.getoption("gapverify_store") or os.environ.get("GAPVERIFY_STORE")
    if given:
        return Path(given).expanduser().resolve()
    cache = getattr(config, "cache", None)
    if cache is not None:
        return cache.mkdir(CACHE_NAME) / STORE_NAME
    folder = config.rootpath / ".pytest_cache" / "d" / CACHE_NAME  # -p no:cacheprovider
    folder.mkdir(parents=True, exist_ok=True)
    return folder / STORE_NAME


# ------------------------------------------------------------------------------- set-up
_SETTINGS = pytest.StashKey[Settings]()
_RESULTS = pytest.StashKey[list]()  # the results JSON of every claim judged in this process
_ENVIRON = pytest.StashKey[Any]()  # $GAPVERIFY_CLAIMS before the session
_RUN_ID = pytest.StashKey[int]()  # the session's run in the store
_RUN_ERROR = pytest.StashKey[str]()  # why it could not be recorded


def enabled(config: pytest.Config) -> bool:
    return config.getoption("gapverify", None) is not None


def pytest_configure(config: pytest.Config) -> None:
    if not enabled(config):
        return
    config.addinivalue_line("markers", "gapverify: a gapverify claim or statement snapshot "
                                       "(pytest --gapverify)")
    config.stash[_SETTINGS] = settings = Settings(config)
    config.stash[_RESULTS] = []
    if settings.claim_files:
        # sampling processes (--gapverify-workers) load the files from the environment,
        # as the command line's --claims-from arranges
        from gapverify.verification.claims.loading import ENV, add_to_environment

        config.stash[_ENVIRON] = os.environ.get(ENV)
        add_to_environment(settings.claim_files)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _ENVIRON not in config.stash:
        return
    from gapverify.verification.claims.loading import ENV

    before = config.stash[_ENVIRON]
    if before is None:
        os.environ.pop(ENV, None)
    else:
        os.environ[ENV] = before


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    if not enabled(config):
        return None
    s = config.stash[_SETTINGS]
    return [f"gapverify: profile {s.profile}, store {s.store}, not verified -> "
            f"{s.not_verified}"]


# --------------------------------------------------------------------------- collection
@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]):
    """Add the claims' items before ``-k``, ``-m`` and ``--deselect`` select among them;
    after them, keep a claim that runs only when named (an opt-in family, a plug-in's)
    only when ``-k`` named it, or with ``--gapverify-all``."""
    if not enabled(config):
        return (yield)
    root = Claims.from_parent(session, name=ROOT, nodeid=ROOT)
    items.extend(session.genitems(root))
    result = yield
    if not (config.stash[_SETTINGS].select_all or selects_by_name(config)):
        dropped = [i for i in items if isinstance(i, ClaimItem) and i.opt_in]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [i for i in items if not (isinstance(i, ClaimItem) and i.opt_in)]
    return result


def selects_by_name(config: pytest.Config) -> bool:
    """Whether ``-k`` selects claims by their names: the expression does not also select
    a claim item of no name (``-k "not softmax"`` and ``-k gapverify`` select every
    claim, so they add no opt-in claim)."""
    text = (config.getoption("keyword") or "").strip()
    if not text:
        return False
    try:
        from _pytest.mark.expression import Expression

        nameless = Expression.compile(text).evaluate(
            lambda name, **kwargs: name.lower() in ROOT)
    except Exception:  # noqa: BLE001 - an expression pytest itself refuses, or a new API
        return False
    return not nameless


class Claims(pytest.Collector):
    """The node ``gapverify``: one :class:`ClaimItem` per claim, then the snapshot's items."""

    def collect(self):
        from gapverify.verification.claims import registry

        s = self.config.stash[_SETTINGS]
        if s.claim_files:
            registry.load_claim_files(s.claim_files)  # ClaimFileError: repr_failure
        ids = registry.claim_ids()  # $GAPVERIFY_CLAIMS and the plug-ins load here
        default, files = set(registry.default_claim_ids()), set(registry.file_claim_ids())
        for cid in ids:
            yield ClaimItem.from_parent(self, name=cid, opt_in=cid not in default,
                                        claim_file=registry.SOURCES[cid] if cid in files
                                        else None)
        if not s.no_snapshot:
            yield Snapshots.from_parent(self, name="snapshot")

    def repr_failure(self, excinfo):  # a bad claim file: its one line, no traceback
        if refused(excinfo.value):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


def refused(exc: BaseException) -> bool:
    """``exc`` is gapverify refusing an input (a claim file, sizes a claim cannot use: a
    ``ValueError`` of gapverify's own, whose message names the input, as the command
    line's exit 2 prints it) or a claim's own code failing (a ``ClaimError``, whose one
    line names the file and line): its message says it all, a traceback would not."""
    if isinstance(exc, ValueError) and type(exc).__module__.startswith("gapverify."):
        return True
    from gapverify.verification.judging import outcomes

    claim_error = getattr(outcomes, "ClaimError", None)
    return claim_error is not None and isinstance(exc, claim_error)


class Snapshots(pytest.Collector):
    """``gapverify::snapshot``: one :class:`SnapshotItem` per claim with a snapshot to
    compare with (a claim of the snapshot no longer in the registry included)."""

    def collect(self):
        from gapverify.verification.claims import registry
        from gapverify.verification.running.defaults import SNAPSHOT_PATH
        from gapverify.verification.tools.snapshot import read_snapshot

        s = self.config.stash[_SETTINGS]
        wanted = [(Path(SNAPSHOT_PATH), registry.package_claim_ids())]
        if s.snapshot:
            wanted.append((Path(s.snapshot), registry.file_claim_ids()))
        seen = set()
        for path, ids in wanted:
            stored = [c for c in read_snapshot(path)[1] if c not in ids]
            for cid in [*ids, *sorted(stored)]:
                if cid not in seen:
                    seen.add(cid)
                    yield SnapshotItem.from_parent(self, name=cid, snapshot=path)


# -------------------------------------------------------------------------------- items
class ClaimItem(pytest.Item):
    """``gapverify::CLAIM``: sample and judge one claim when the item runs."""

    def __init__(self, *, opt_in: bool = False, claim_file: str | None = None, **kwargs):
        super().__init__(**kwargs)
        self.opt_in = opt_in
        self.claim_file = claim_file
        self.add_marker("gapverify")

    def runtest(self) -> None:
        from gapverify import verify

        s = self.config.stash[_SETTINGS]
        run = verify(self.name, profile=s.profile, store=s.store, seed=s.seed,
                     workers=s.workers, sizes=s.sizes, replicates=s.replicates)
        payload = json.loads(json.dumps(run.results))  # plain types (execnet, JSON)
        self.config.stash[_RESULTS].append(payload)
        if hasattr(self.config, "workeroutput"):  # an xdist worker: for the controller
            self.config.workeroutput.setdefault(WORKER_KEY, []).append(payload)
        claim = run[self.name]
        outcome = claim_outcome(claim.verdict, s.not_verified)
        if outcome == "passed":
            return
        message = claim_report(claim, payload["claims"][0], self.claim_file)
        if outcome == "xfailed":
            pytest.xfail(message)
        if outcome == "skipped":
            pytest.skip(message)
        raise GapverifyFailure(message)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, GapverifyFailure) or refused(excinfo.value):
            return str(excinfo.value)  # the verdict's reasons, or the input refused
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        # the failure's headline; not the id itself: pytest -v would print a domain that
        # ends the node id with its dots as "::"
        return self.claim_file or self.path, None, f"gapverify claim {self.name}"


class SnapshotItem(pytest.Item):
    """``gapverify::snapshot::CLAIM``: the claim's statement against the snapshot at
    ``snapshot`` (``gapverify snapshot``); a change fails with its diff."""

    def __init__(self, *, snapshot: Path, **kwargs):
        super().__init__(**kwargs)
        self.snapshot = snapshot
        self.add_marker("gapverify")

    def runtest(self) -> None:
        from gapverify.verification.claims import registry
        from gapverify.verification.tools.snapshot import compare

        ids = [self.name] if self.name in registry.claim_ids() else []
        result = compare(self.snapshot, ids)
        change = next((c for c in result.changes if c.claim == self.name), None)
        if change is None:
            return
        if change.kind == "representation":
            self.warn(pytest.PytestWarning(
                f"{self.name}: printed differently by this sympy, same equations (not a "
                f"change); refresh the snapshot with {self._update_command()}"))
            return
        what = {"added": "claim added (not in the snapshot)",
                "removed": "claim removed (only in the snapshot)",
                "changed": "statement changed: " + ", ".join(change.parts)}[change.kind]
        raise GapverifyFailure(
            f"{self.name}: {what} ({self.snapshot})\n{change.diff}"
            f"if the change is intended, run `{self._update_command()}` and commit the "
            "new snapshot")

    def _update_command(self) -> str:
        from gapverify.verification.running.defaults import SNAPSHOT_PATH

        s = self.config.stash[_SETTINGS]
        if Path(self.snapshot) == Path(SNAPSHOT_PATH):
            return "gapverify snapshot --update"
        parts = ["gapverify", "snapshot", "--update", "--path", str(self.snapshot)]
        for path in s.claim_files:
            parts += ["--claims-from", path]
        return shlex.join(parts)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, GapverifyFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, f"gapverify snapshot {self.name}"


# ----------------------------------------------------------------------------- outcomes
#: A "not verified" policy's pytest outcome.
POLICY_OUTCOMES = {"fail": "failed", "xfail": "xfailed", "skip": "skipped"}


def claim_outcome(verdict: str, not_verified: str = "fail") -> str:
    """The pytest outcome of a claim's verdict word: ``passed`` for verified, supported,
    reproduced and recorded (exit code 0), ``failed`` for failed and flaky (exit code
    1), and for a claim not verified (exit code 3) the outcome of the policy
    ``not_verified``: ``failed`` (``fail``), ``xfailed`` (``xfail``) or ``skipped``
    (``skip``). The exit codes are those of :mod:`~gapverify.verification.judging.outcomes`."""
    from gapverify.verification.judging.outcomes import EXIT_OK, EXIT_UNVERIFIED, claim_exit_code

    if not_verified not in POLICY_OUTCOMES:
        raise ValueError(f"not_verified must be one of {NOT_VERIFIED_POLICIES}, got "
                         f"{not_verified!r}")
    code = claim_exit_code(verdict)
    if code == EXIT_OK:
        return "passed"
    return POLICY_OUTCOMES[not_verified] if code == EXIT_UNVERIFIED else "failed"


def claim_report(claim, data: dict, claim_file: str | None = None) -> str:
    """The lines ``gapverify run`` prints under its table for ``claim`` (a
    :class:`~gapverify.api.ClaimVerdict`; ``data``: its results JSON): the verdict, each
    failing check's reason with the command that reproduces it, why each prediction is
    not verified, the replay. A claim file's claim gets ``--claims-from FILE`` in the
    command (the command line would not know the claim without it)."""
    from gapverify.verification.judging.outcomes import Outcome

    lines = [f"{claim.claim} ({claim.status}): {claim.verdict.upper()}; {claim.power_summary}"]
    for check in claim.checks:
        if check.outcome == Outcome.FAIL:
            lines.append(f"  - {check.label}: {with_claim_file(check.reason, claim_file)}")
    lines += [f"  - {why}" for why in claim.unverified]
    replay = data.get("replay")
    if replay:
        lines.append(f"  replayed with root seed {replay['root_seed']}: {replay['verdict']}")
    return "\n".join(lines)


def with_claim_file(reason: str, claim_file: str | None) -> str:
    """``reason`` with ``--claims-from claim_file`` added to its reproduce command."""
    head, sep, command = reason.partition("; reproduce: ")
    if not sep or not claim_file or "--claims-from" in command:
        return reason
    return f"{head}{sep}{command} --claims-from {shlex.quote(claim_file)}"


# ---------------------------------------------------------------------- the session's run
@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """pytest-xdist, on the controller: a worker's results, for the session's run."""
    config = node.config
    if enabled(config):
        config.stash[_RESULTS].extend(getattr(node, "workeroutput", {}).get(WORKER_KEY, []))


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if not enabled(config) or hasattr(config, "workeroutput") or _SETTINGS not in config.stash:
        return  # an xdist worker hands its results to the controller instead
    s = config.stash[_SETTINGS]
    results = config.stash[_RESULTS]
    merged = session_results(results, config)
    if merged is None:
        return
    if s.json:
        Path(s.json).write_text(json.dumps(merged, indent=2, sort_keys=True, allow_nan=False)
                                + "\n", encoding="utf-8")
    if len(merged["claims"]) > 1:
        from gapverify.verification.running.store import Store

        try:
            store = Store(s.store)
            try:
                config.stash[_RUN_ID] = store.add_run(merged["command"], merged)
            finally:
                store.close()
        except Exception as exc:  # noqa: BLE001 - the verdicts stand; the summary says so
            config.stash[_RUN_ERROR] = f"the session's run was not recorded: {exc}"


def session_results(results: list[dict], config: pytest.Config) -> dict | None:
    """The claims judged in this session as one results JSON: the first claim's run with
    every claim's results, in the registry's order, and the pytest command; ``None`` when
    no claim was judged."""
    if not results:
        return None
    from gapverify.verification.claims import registry

    order = {cid: i for i, cid in enumerate(registry.claim_ids())}
    claims = {c["claim"]: c for r in results for c in r["claims"]}
    merged = {k: v for k, v in results[0].items() if k != "run_id"}
    merged["claims"] = sorted(claims.values(), key=lambda c: order.get(c["claim"], len(order)))
    merged["command"] = shlex.join(["pytest", *config.invocation_params.args])
    return merged


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    if not enabled(config) or hasattr(config, "workeroutput"):
        return
    s = config.stash[_SETTINGS]
    n = len({c["claim"] for r in config.stash[_RESULTS] for c in r["claims"]})
    if not n:
        return
    run = config.stash.get(_RUN_ID, None)
    where = f"run {run} in {s.store}" if run else s.store
    if _RUN_ERROR in config.stash:
        terminalreporter.write_line(f"gapverify: {config.stash[_RUN_ERROR]}", yellow=True)
    terminalreporter.write_line(
        f"gapverify: {n} claim(s) judged at profile {s.profile}; store {where}; Markdown "
        f"tables: gapverify tables --format markdown --store {shlex.quote(s.store)} --out DIR")
