"""Human-readable output: a progress display on long sweeps and the verdict table (rich)."""
from __future__ import annotations

import math

import sys
from contextlib import nullcontext
from typing import Mapping, Sequence

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress as _RichProgress, TextColumn, \
    TimeElapsedColumn
from rich.markup import escape
from rich.table import Table

from gapverify.verification.judging.outcomes import Outcome

__all__ = ["Progress", "claims_table", "predictions_table", "verdict_table", "nullcontext"]

console = Console(stderr=False, width=None if sys.stdout.isatty() else 150)
_err = Console(stderr=True)



class Progress:
    """One bar per claim: replicates sampled out of those missing from the store, the time
    elapsed and the time left from the cost model of the tasks still to run
    (:class:`~verification.running.runner.TimeLeft`, refreshed at most once a second)."""

    def __init__(self) -> None:
        self._bar = _RichProgress(TextColumn("{task.description}"), BarColumn(),
                                  MofNCompleteColumn(), TimeElapsedColumn(),
                                  TextColumn("{task.fields[left]}"),
                                  console=_err, transient=False)
        self._task = None
        self._left = None
        self._start = self._shown = 0.0

    def __enter__(self):
        self._bar.__enter__()
        return self

    def __exit__(self, *exc):
        return self._bar.__exit__(*exc)

    def start(self, claim: str, todo: int, total: int, tasks=None) -> None:
        import time

        from gapverify.verification.running.runner import TimeLeft

        reused = total - todo
        label = f"{claim}" + (f" ({reused} reused)" if reused else "")
        self._left = TimeLeft(tasks) if tasks else None
        self._start = self._shown = time.monotonic()
        self._task = self._bar.add_task(label, total=max(todo, 1), completed=0 if todo else 1,
                                        left="")

    def advance(self, task, seconds: float) -> None:
        import time

        if self._left is not None:
            self._left.finished(task, seconds)
        now = time.monotonic()
        fields = {}
        if self._left is not None and now - self._shown >= 1.0:
            self._shown = now
            left = self._left.seconds(now - self._start)
            fields["left"] = "" if left is None else f"about {_duration(left)} left"
        self._bar.update(self._task, advance=1, **fields)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def claims_table(rows: Sequence[Mapping]) -> None:
    t = Table(title="Claims", box=box.SIMPLE_HEAVY)
    for col in ("id", "status", "statement"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["id"], r["status"], r["statement"])
    console.print(t)


def predictions_table(out: Mapping, statuses: Mapping[str, str]) -> None:
    t = Table(title=f"{out['claim']} ({out['status']}) at "
                    + ", ".join(f"{k}={v:g}" for k, v in out["parameters"].items()),
              box=box.SIMPLE_HEAVY)
    t.add_column("prediction"), t.add_column("value", justify="right"), t.add_column("status")
    for k, v in out["predictions"].items():
        t.add_row(k, f"{v:.10g}", statuses[k])
    console.print(t)


def _fmt(x, digits=4) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


#: The colour of a word by its exit-code contribution (outcomes): 0 green, 1 red, 3
#: yellow; words never asserted (recorded, outside domain) dim.
_CODE_STYLE = {0: "green", 1: "bold red", 3: "yellow"}
_DIM = (Outcome.RECORDED, Outcome.OUTSIDE_DOMAIN)


def _style(word: str, code: int) -> str:
    return "dim" if word in _DIM else _CODE_STYLE.get(code, "yellow")


def _model_text(c) -> str:
    """The finite-size model cell of the report's per-check table
    (:func:`gapverify.reports.model_cell.finite_size_model`), in the terminal's words: a
    stated rate with the fitted one beside it."""
    from gapverify.reports.model_cell import ModelKind, finite_size_model

    model = finite_size_model(c, recorded=False)
    if model.kind is ModelKind.EXACT:
        return "exact"
    if model.kind is ModelKind.FAMILY:
        return model.family
    if model.kind is ModelKind.RANGE:
        return (("corrected, " if model.corrected else "")
                + f"r in [{model.low:.3g}, {model.high:.3g}]")
    if model.kind is ModelKind.NONE:
        return "-"
    return f"{model.rate:.3g} / {_fmt(c.beta, 3)}±{_fmt(c.beta_se, 2)}"


def _measured_text(c) -> str:
    if not c.rows:
        return "-"
    last = c.rows[-1]
    if c.kind in ("exact", "matching"):
        return f"{last.error:.2e} (residual)"
    if c.kind == "distance":
        return f"D={last.error:.4f}±{last.error_se:.4f}"
    if last.n < 2 or not math.isfinite(last.se):  # one replicate: no standard error
        return f"{last.mean:.5g} (n={last.n})"
    return f"{last.mean:.5g}±{last.se:.2g}"


def verdict_table(results, opts) -> None:
    """Per check: prediction, measured at the largest size, finite-size model, power
    (smallest relative error the samples reject), verdict; then per claim its verdict,
    "k of n predictions verified with power" and what is not verified."""
    from gapverify.verification.judging.outcomes import (
        CHECK_VERDICTS, check_word, claim_exit_code, claim_word,
    )
    from gapverify.verification.judging.verdict import RULES, claim_reason, power_text

    check_codes = {v.word: v.exit_code for v in CHECK_VERDICTS}

    t = Table(title=f"Verdicts (root seed {opts.seed}, profile {opts.profile}"
                    + (f", {results[0].variant}" if results and results[0].variant != "as stated" else "")
                    + ")", box=box.SIMPLE_HEAVY, show_lines=False)
    for col, j in (("claim", "left"), ("check", "left"), ("status", "left"),
                   ("predicted", "right"), ("T max", "right"), ("measured ± se", "right"),
                   ("rate: stated / fitted", "right"), ("power", "right"), ("verdict", "left")):
        t.add_column(col, justify=j)
    for res in results:
        for i, c in enumerate(res.checks):
            word = check_word(c.verdict, c.status)
            style = _style(word, check_codes[word])
            t.add_row(res.claim if i == 0 else "", escape(c.label), c.status,
                      "law" if c.kind == "distance" else _fmt(c.predicted, 6),
                      str(c.rows[-1].T) if c.rows else "-", _measured_text(c),
                      escape(_model_text(c)), power_text(c.power), f"[{style}]{word}[/]")
        t.add_section()
    console.print(t)
    for res in results:
        # the claim's word of the one table (outcomes), in capitals; the JSON has it lower case
        word = claim_word(res.verdict, res.status,
                          claim_reason(res.verdict, res.unverified) or "lacks power")
        shown = f"[{_style(word, claim_exit_code(word))}]{escape(word.upper())}[/]"
        console.print(f"{res.claim} ({res.status}): {shown}; {res.power_summary}; "
                      f"q = {res.q:.3f} ({res.tests} tests, level {res.level:g} for this claim)",
                      highlight=False)
        for c in res.failed:
            console.print(f"  - {escape(c.label)}: {escape(c.reason)}", highlight=False)
        for why in res.unverified:
            console.print(f"  - {escape(why)}", highlight=False)
        if res.replay:
            console.print(f"  replayed with root seed {res.replay['root_seed']}: "
                          f"{res.replay['verdict']}")
    console.print("Rules: " + "; ".join(RULES), style="dim")
