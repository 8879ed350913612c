"""What changed since the stored run: per claim, between two judged runs of the same
profile, whether the experiment (its store key: the samples), a statement (a predicted
value), a stated rate or the verdict moved; and the job-summary page that CI publishes
(``gapverify verify --summary PATH``: GitHub's ``$GITHUB_STEP_SUMMARY``, a GitLab
artifact)."""
from __future__ import annotations

from typing import Any, Mapping

from gapverify.reports.markdown import pipe_table, summary_markdown

__all__ = ["changes", "previous_run", "job_summary"]


def _checks(claim: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(c.get("label")): c for c in claim.get("checks") or []}


def changes(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per claim of ``after``, what moved since ``before``: ``experiment`` (another store
    key: sampled again), ``statement`` (a predicted value), ``rate`` (a stated rate),
    ``verdict``; ``["new"]`` for a claim ``before`` did not judge; ``{}`` without
    ``before``."""
    if before is None:
        return {}
    old = {c["claim"]: c for c in before.get("claims") or []}
    out = {}
    for claim in after.get("claims") or []:
        was = old.get(claim["claim"])
        if was is None:
            out[claim["claim"]] = ["new"]
            continue
        moved = []
        if was.get("experiment") != claim.get("experiment"):
            moved.append("experiment")
        then, now = _checks(was), _checks(claim)
        shared = set(then) & set(now)
        if set(then) != set(now) or any(then[k].get("predicted") != now[k].get("predicted")
                                        for k in shared):
            moved.append("statement")
        if any(then[k].get("rate") != now[k].get("rate") for k in shared):
            moved.append("rate")
        if was.get("verdict") != claim.get("verdict"):
            moved.append(f"verdict (was {was.get('verdict')})")
        out[claim["claim"]] = moved
    return out


def previous_run(runs: list[Mapping[str, Any]], store, latest: Mapping[str, Any]):
    """The run before ``latest`` in ``store`` of the same profile, judged as stated
    (``None`` when there is none)."""
    mine = [r for r in runs if r.get("profile") == latest.get("profile")
            and not r.get("perturbations")]
    return store.get_run(mine[-2]["id"]) if len(mine) >= 2 else None


def job_summary(run: Mapping[str, Any], before: Mapping[str, Any] | None) -> str:
    """The Markdown page: the summary table, then what changed per claim since the stored
    run (or a line saying there was none to compare with)."""
    moved = changes(before, run)
    if before is None:
        tail = "\nNo earlier run of this profile in the store: nothing to compare with.\n"
    else:
        rows = [[f"`{c['claim']}`", str(c.get("verdict", "")),
                 ", ".join(moved.get(c["claim"]) or ["nothing"])]
                for c in run.get("claims") or []]
        tail = ("\n## Changed since the stored run\n\nAgainst the store's previous run of the "
                f"`{run.get('profile')}` profile (experiment: sampled again; statement, rate: "
                "judged again on the stored samples).\n\n"
                + pipe_table([("claim", "claim"), ("verdict", "verdict"),
                              ("changed", "changed")], rows))
    return summary_markdown(run) + tail
