"""tests for verification/judging/outcomes.py: one table of verdict words and exit codes,
spoken alike by the judging, the terminal, the results JSON, the LaTeX reports, the
Python API, ``gapverify run`` and ``gapverify verify``, and printed verbatim in the README."""
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from gapverify.reports.results import claim_verdict_word, load_run, verdict_word
from gapverify.verification.claims.model import Check, Claim, Prediction, Profile
from gapverify.cli import main
from gapverify.verification.judging.outcomes import (
    CHECK_VERDICTS, CLAIM_VERDICTS, NOT_VERIFIED_REASONS, Outcome, claim_exit_code, claim_word,
    exit_code, markdown_table,
)
from gapverify.verification.judging.verdict import claim_reason, judge_claim

ROOT = Path(__file__).resolve().parents[2]
CLAIM_WORDS = {v.word for v in CLAIM_VERDICTS}
CHECK_WORDS = {v.word for v in CHECK_VERDICTS}
SIZES = (64, 128, 256, 512, 1024)


def test_the_readme_prints_the_table_verbatim():
    assert markdown_table() in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_reports_footnote_spells_every_word():
    from gapverify.reports.results import verdict_legend

    assert all(f"{v.word} - {v.meaning}" in verdict_legend() for v in CLAIM_VERDICTS)
    assert all(f"{v.word} - {v.meaning}" in verdict_legend(checks=True) for v in CHECK_VERDICTS)


def test_exit_codes_of_the_words():
    assert exit_code(["verified", "recorded", "reproduced", "supported"]) == 0
    assert exit_code(["verified", "not verified: outside domain"]) == 3
    assert exit_code(["not verified: lacks power", "flaky"]) == 1
    assert exit_code(["failed", "recorded"]) == 1
    assert exit_code([]) == 2
    assert [claim_word("not verified", "theorem", r) for r in NOT_VERIFIED_REASONS] == [
        "not verified: outside domain", "not verified: not assessed", "not verified: lacks power"]


def test_the_most_severe_reason_names_the_claim():
    lines = ["a outside domain at these parameters: not judged (x)", "b not assessed: too few",
             "c lacks power at T <= 64 (power 9%, target 5%)"]
    assert claim_reason("not verified", lines) == "lacks power"
    assert claim_reason("not verified", lines[:2]) == "not assessed"
    assert claim_reason("not verified", lines[:1]) == "outside domain"
    assert claim_reason("pass", []) == claim_reason("recorded", []) == ""


def _claim(*predictions, checks):
    return Claim(id="toy", title="x_T -> L", parameters=("s2",), predictions=predictions,
                 checks=checks, experiment="none", references=(),
                 profiles={"quick": Profile(SIZES, 16, 0.05)})


def _data(seed, noise):
    # x_T = 2 (1 + 0.5 T^-2/3) + noise T^-1/3 z, and y = x
    rng = np.random.default_rng([seed, 11])
    out = {}
    for T in SIZES:
        reps = [2 * (1 + 0.5 * T ** (-2 / 3)) + noise * T ** (-1 / 3) * rng.standard_normal()
                for _ in range(16)]
        out[T] = [{"x": v, "y": v} for v in reps]
    return out


def _limit(name, status="derived", **kw):
    return Check(name, name, "limit", rate_range=(2 / 3, 1.0), rate_status=status, **kw)


def _word(res):
    return claim_word(res.verdict, res.status, res.reason or "lacks power")


def test_an_empirical_law_without_power_is_not_reproduced():
    claim = _claim(Prediction("y", "empirical", lambda p: 2, "y"), checks=(_limit("y", "empirical"),))
    noisy = judge_claim(claim, _data(1, noise=2.0), {"s2": 1.0}, q=3.0, root_seed=1,
                        power_target=0.05)
    assert noisy.checks[0].verdict == "lacks power" and noisy.checks[0].power > 0.05
    assert _word(noisy) == "not verified: lacks power" and claim_exit_code(_word(noisy)) == 3
    clean = judge_claim(claim, _data(1, noise=0.002), {"s2": 1.0}, q=3.0, root_seed=1,
                        power_target=0.05)
    assert clean.checks[0].power <= 0.05 and _word(clean) == "reproduced"


def test_a_claim_of_recorded_laws_is_recorded_and_exits_0():
    claim = _claim(Prediction("y", "empirical", lambda p: 2, "y"),
                   checks=(Check("y", "y", "limit", asserted=False),))
    res = judge_claim(claim, _data(2, noise=0.002), {"s2": 1.0}, q=3.0, root_seed=2,
                      power_target=0.05)
    assert res.verdict == "recorded" and res.reason == "" and not res.unverified
    assert _word(res) == "recorded" and exit_code([_word(res)]) == 0


def test_outside_the_domain_is_its_own_reason():
    claim = _claim(Prediction("x", "derived", lambda p: 2, "x"),
                   Prediction("y", "empirical", lambda p: 2, "y"),
                   checks=(_limit("x"), _limit("y", "empirical", domain=lambda p: p["s2"] <= 0.5,
                                              domain_note="light tails only")))
    res = judge_claim(claim, _data(3, noise=0.002), {"s2": 1.0}, q=3.0, root_seed=3,
                      power_target=0.05)
    assert [c.verdict for c in res.checks] == ["pass", "outside domain"]
    assert res.reason == "outside domain" and _word(res) == "not verified: outside domain"
    assert res.unverified == ["y outside domain at these parameters: not judged (light tails only)"]
    # and a prediction lacking power as well: the most severe reason names the claim
    noisy = judge_claim(claim, _data(3, noise=2.0), {"s2": 1.0}, q=3.0, root_seed=3,
                        power_target=0.05)
    assert noisy.reason == "lacks power" and len(noisy.unverified) == 2


def test_the_judging_speaks_outcome_members_that_read_as_the_old_words():
    """The verdicts the judging produces are :class:`Outcome` members, and every output
    (JSON, f-strings, the unverified lines) spells them as the plain words it always did."""
    claim = _claim(Prediction("x", "derived", lambda p: 2, "x"),
                   Prediction("y", "empirical", lambda p: 2, "y"),
                   checks=(_limit("x"), _limit("y", "empirical", domain=lambda p: p["s2"] <= 0.5,
                                              domain_note="light tails only")))
    res = judge_claim(claim, _data(3, noise=2.0), {"s2": 1.0}, q=3.0, root_seed=3,
                      power_target=0.05)
    assert res.verdict is Outcome.NOT_VERIFIED and res.reason is Outcome.LACKS_POWER
    assert [c.verdict for c in res.checks] == [Outcome.LACKS_POWER, Outcome.OUTSIDE_DOMAIN]
    assert all(isinstance(c.verdict, Outcome) for c in res.checks)
    doc = json.loads(json.dumps(dataclasses.asdict(res)))
    assert (doc["verdict"], doc["reason"]) == ("not verified", "lacks power")
    assert [c["verdict"] for c in doc["checks"]] == ["lacks power", "outside domain"]
    assert f"{res.verdict}: {res.reason}" == "not verified: lacks power"
    assert res.unverified[0].startswith("x lacks power at T <= 1024")


TINY = ["--sizes", "128,181,256", "--replicates", "2", "--workers", "1", "--no-replay"]
CLAIMS = ["markov.outliers", "heavy_tail.edge"]


def _terminal_words(printed: str) -> dict[str, str]:
    # the claim lines under the table: "CLAIM (STATUS): WORD; ..."
    return {m[1]: m[2].lower() for m in re.finditer(r"^(\S+) \(\w+\): ([A-Z: ]+);", printed, re.M)}


def _same_everywhere(doc: dict, printed: str, store: Path) -> list[str]:
    """The words of one run's claims, checked equal in the JSON, on the terminal and in
    the LaTeX reports (read back from the JSON file and from the store)."""
    words = [c["verdict"] for c in doc["claims"]]
    assert set(words) <= CLAIM_WORDS
    assert _terminal_words(printed) == {c["claim"]: c["verdict"] for c in doc["claims"]}
    for run in (load_run(results=doc["_path"]), load_run(store=store, run_id=doc["run_id"])):
        for read, c in zip(run["claims"], doc["claims"]):
            assert claim_verdict_word(read) == verdict_word(read["verdict"], read["status"],
                                                            read["reason"]) == c["verdict"]
            for check_read, check in zip(read["checks"], c["checks"]):
                word = verdict_word(check_read["verdict"], check_read["status"])
                assert word == check["verdict"] and word in CHECK_WORDS
                assert f" {word} " in printed  # the table's verdict column
    return words


def test_one_run_speaks_one_vocabulary(tmp_path, capsys):
    """A tiny run (recorded, not verified: lacks power), then the same samples judged
    against a wrong lambda1 (failed): the terminal, the JSON, the LaTeX words and the API
    read the same table entries, and each exit code is outcomes.exit_code of the words."""
    store = tmp_path / "s.sqlite"
    seen = set()
    for extra, name in (([], "stated"), (["--perturb", "lambda1=0.5"], "perturbed")):
        out = tmp_path / f"{name}.json"
        code = main(["run", *CLAIMS, *TINY, *extra, "--store", str(store), "--json", str(out),
                     "--quiet"])
        printed = capsys.readouterr().out
        doc = json.loads(out.read_text())
        doc["_path"] = out
        words = _same_everywhere(doc, printed, store)
        reasons = {c["claim"]: c["reason"] for c in doc["claims"]}
        assert all(r in ("", *NOT_VERIFIED_REASONS) for r in reasons.values())
        seen |= set(words)
        assert code == exit_code(words), (code, words)
    assert {"recorded", "not verified: lacks power", "failed"} <= seen

    from gapverify.api import verify

    run = verify(CLAIMS, store=store, sizes=[128, 181, 256], replicates=2, replay=False)
    stated = json.loads((tmp_path / "stated.json").read_text())
    assert [c.verdict for c in run.claims] == [c["verdict"] for c in stated["claims"]]
    assert run.exit_code == exit_code([c["verdict"] for c in run.results["claims"]]) == 3


def test_a_run_of_recorded_claims_exits_0(tmp_path, capsys):
    """Recorded by design is not "not verified": ``gapverify run`` and the API exit 0."""
    from gapverify.api import verify

    store = tmp_path / "s.sqlite"
    code = main(["run", "heavy_tail.edge", *TINY, "--store", str(store), "--quiet"])
    assert "heavy_tail.edge (empirical): RECORDED;" in capsys.readouterr().out
    assert code == 0
    alone = verify("heavy_tail.edge", store=store, sizes=[128, 181, 256], replicates=2)
    assert [c.verdict for c in alone.claims] == ["recorded"] and alone.exit_code == 0


def test_verify_keeps_the_runs_code_when_the_report_fails(tmp_path, monkeypatch, capsys):
    """``gapverify verify``: run, paper-figure, report in that order; a failing report
    neither loses the results nor changes the exit code, the run's own (outcomes)."""
    from gapverify.cli import pipeline

    out = tmp_path / "out"
    calls = []

    def step(argv):
        calls.append(argv[0])
        if argv[0] == "run":
            claims = [{"claim": "a", "verdict": "verified"}, {"claim": "b", "verdict": "recorded"}]
            Path(argv[argv.index("--json") + 1]).write_text(json.dumps({"claims": claims}))
            return 3  # what a run that counts recorded as not verified would say
        return 1 if argv[0] == "report" else 0

    monkeypatch.setattr(pipeline, "_step", step)
    code = main(["verify", "--profile", "quick", "--out", str(out), "--store",
                 str(tmp_path / "s.sqlite")])
    captured = capsys.readouterr()
    assert calls == ["run", "paper-figure", "report"] and code == 0
    assert "are not lost" in captured.err and "1 verified, 1 recorded: exit 0" in captured.out
    monkeypatch.setattr(pipeline, "_step", lambda argv: calls.append(argv[0]) or 130)
    assert main(["verify", "--out", str(out)]) == 130 and calls[-1] == "run"
