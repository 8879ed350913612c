"""Human-readable output: a progress display on long sweeps (sampling, then judging), a
phase line for the steps after it (figures, the report) and the verdict table (rich).

The verdict table reads at any width: where its nine columns fit (a terminal of about 130
columns, or a log, 150) it is one row per check; narrower (``COLUMNS=80``) each check is
stacked into two lines, its label and its numbers, beside a verdict column that is never
wrapped or cut, so that every verdict word is shown whole.
"""
from __future__ import annotations

import math
import os
import sys
import time
from contextlib import contextmanager, nullcontext
from typing import Iterator, Mapping, Sequence

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.padding import Padding
from rich.progress import BarColumn, MofNCompleteColumn, Progress as _RichProgress, \
    SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from gapverify.verification.judging.outcomes import Outcome

__all__ = ["Progress", "phase", "claims_table", "predictions_table", "verdict_table",
           "nullcontext"]

#: The width of output that is not a terminal (a log, a pipe) unless ``COLUMNS`` says.
LOG_WIDTH = 150


def _stdout_width() -> int | None:
    """``None`` (rich's own: ``$COLUMNS``, else the terminal's size) on a terminal or when
    ``COLUMNS`` is set; :data:`LOG_WIDTH` for a log or pipe that names no width."""
    return None if sys.stdout.isatty() or os.environ.get("COLUMNS", "").isdigit() else LOG_WIDTH


console = Console(stderr=False, width=_stdout_width())
_err = Console(stderr=True)


class _Count(MofNCompleteColumn):
    """``done/total`` of a bar; nothing for a phase line of unknown length."""

    def render(self, task):
        return Text("") if task.total is None else super().render(task)


class Progress:
    """One bar per sweep: replicates sampled out of those missing from the store, the time
    elapsed and the time left from the cost model of the tasks still to run
    (:class:`~verification.running.runner.TimeLeft`, refreshed at most once a second).

    Then a phase line: once a sweep's last task is done its time left is cleared (it read
    ``0:00:00 left`` for the minutes the claims are judged) and a line *judging the
    claims* counts the judging's time; :meth:`judging` (a claim judged) makes it
    *judging 5 of 22 claims*, :meth:`phase` names any other step."""

    def __init__(self) -> None:
        self._bar = _RichProgress(SpinnerColumn(finished_text=" "),
                                  TextColumn("{task.description}"), BarColumn(),
                                  _Count(), TimeElapsedColumn(),
                                  TextColumn("{task.fields[left]}"),
                                  console=_err, transient=False)
        self._task = None
        self._phase = None  # the phase line's task, once there is one
        self._left = None
        self._start = self._shown = 0.0

    def __enter__(self):
        self._bar.__enter__()
        return self

    def __exit__(self, *exc):
        if exc[0] is None and self._phase is not None:
            task = next(t for t in self._bar.tasks if t.id == self._phase)
            if task.total is None or task.completed < task.total:
                self._bar.update(self._phase, total=1, completed=1,
                                 description=_done_text(task.description))
        return self._bar.__exit__(*exc)

    def start(self, claim: str, todo: int, total: int, tasks=None) -> None:
        from gapverify.verification.running.runner import TimeLeft

        reused = total - todo
        label = f"sampling {claim}" + (f" ({reused} reused)" if reused else "")
        self._left = TimeLeft(tasks) if tasks else None
        self._start = self._shown = time.monotonic()
        self._task = self._bar.add_task(label, total=max(todo, 1), completed=0 if todo else 1,
                                        left="")

    def advance(self, task, seconds: float) -> None:
        if self._left is not None:
            self._left.finished(task, seconds)
        now = time.monotonic()
        fields = {}
        if self._left is not None and now - self._shown >= 1.0:
            self._shown = now
            left = self._left.seconds(now - self._start)
            fields["left"] = "" if left is None else f"about {_duration(left)} left"
        self._bar.update(self._task, advance=1, **fields)
        bar = next(t for t in self._bar.tasks if t.id == self._task)
        if bar.total is not None and bar.completed >= bar.total:
            # the sweep is done: no "0:00:00 left" while the claims are judged
            self._bar.update(self._task, left="")
            if self._phase is None:
                self.phase("judging the claims")

    def phase(self, text: str, done: int | None = None, total: int | None = None) -> None:
        """Show ``text`` on the phase line (made on first use), with ``done`` of ``total``
        on its bar when they are given, else a pulsing bar; its time runs from its first
        use."""
        if self._phase is None:
            self._phase = self._bar.add_task(text, total=total, completed=done or 0, left="")
        else:
            self._bar.update(self._phase, description=text, total=total, completed=done or 0)

    def judging(self, done: int, total: int, claim: str = "") -> None:
        """``done`` of the run's ``total`` claims are judged (``claim``: the last one)."""
        text = (f"judged {total} claim(s)" if done >= total else
                f"judging {done + 1} of {total} claims")
        self.phase(text, done, total)


def _done_text(description: str) -> str:
    """A phase line's words once it is over: *judging the claims* -> *judged the claims*."""
    if description.startswith("judging "):
        return "judged " + description[len("judging "):]
    return f"{description}: done"


@contextmanager
def phase(text: str, stream=None) -> Iterator[None]:
    """One step of a long command said on stderr (``drawing figures``, ``writing the
    report``): on a terminal a spinner with the time elapsed, left as a line *text: done*;
    elsewhere (a log, CI) a line when it starts and one with its seconds when it ends."""
    if stream is None and _err.is_terminal:
        bar = _RichProgress(SpinnerColumn(finished_text="-"), TextColumn("{task.description}"),
                            TimeElapsedColumn(), console=_err, transient=False)
        with bar:
            task = bar.add_task(text, total=None)
            yield
            bar.update(task, total=1, completed=1, description=f"{text}: done")
        return
    out = stream or sys.stderr
    print(f"gapverify: {text} ...", file=out, flush=True)
    began = time.monotonic()
    yield
    print(f"gapverify: {text}: done in {time.monotonic() - began:.1f} s", file=out, flush=True)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def claims_table(rows: Sequence[Mapping]) -> None:
    """``gapverify claims``: id, status and statement; a long formula is folded at the
    width, never cut."""
    t = Table(title="Claims", box=box.SIMPLE_HEAVY)
    for col in ("id", "status", "statement"):
        t.add_column(col, overflow="fold", no_wrap=col != "statement")
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


def _check_cells(c) -> dict[str, str]:
    """One check's cells, as plain text (the verdict word is :func:`_word_cell`)."""
    from gapverify.verification.judging.verdict import power_text

    return {"check": c.label, "status": c.status,
            "predicted": "law" if c.kind == "distance" else _fmt(c.predicted, 6),
            "T max": str(c.rows[-1].T) if c.rows else "-", "measured": _measured_text(c),
            "rate": _model_text(c), "power": power_text(c.power)}


def _word_cell(c) -> tuple[str, str]:
    """A check's verdict word and its colour."""
    from gapverify.verification.judging.outcomes import CHECK_VERDICTS, check_word

    word = check_word(c.verdict, c.status)
    return word, _style(word, {v.word: v.exit_code for v in CHECK_VERDICTS}[word])


def _title(results, opts) -> str:
    variant = results[0].variant if results else "as stated"
    return (f"Verdicts (root seed {opts.seed}, profile {opts.profile}"
            + (f", {variant}" if variant != "as stated" else "") + ")")


def _wide_table(results, title: str) -> Table:
    """One row per check, nine columns: about 130 columns wide."""
    t = Table(title=title, box=box.SIMPLE_HEAVY, show_lines=False)
    for col, j in (("claim", "left"), ("check", "left"), ("status", "left"),
                   ("predicted", "right"), ("T max", "right"), ("measured ± se", "right"),
                   ("rate: stated / fitted", "right"), ("power", "right"), ("verdict", "left")):
        t.add_column(col, justify=j, no_wrap=col == "verdict")
    for res in results:
        for i, c in enumerate(res.checks):
            cells, (word, style) = _check_cells(c), _word_cell(c)
            t.add_row(res.claim if i == 0 else "", escape(cells["check"]), cells["status"],
                      cells["predicted"], cells["T max"], cells["measured"],
                      escape(cells["rate"]), cells["power"], f"[{style}]{word}[/]")
        t.add_section()
    return t


def _stacked_table(results, title: str) -> Table:
    """The same checks for a narrow terminal: a row per claim, then per check its label
    over its numbers (wrapped at spaces), beside a verdict column that is never wrapped."""
    words = [_word_cell(c)[0] for res in results for c in res.checks]
    t = Table(title=title, box=box.SIMPLE_HEAVY, show_lines=False)
    t.add_column("claim / check: status, predicted, measured ± se at T max, rate: stated / "
                 "fitted, power", overflow="fold", ratio=1)
    t.add_column("verdict", no_wrap=True, min_width=max(map(len, words), default=7))
    for res in results:
        t.add_row(Text.assemble((res.claim, "bold"), f" ({res.status})"), "")
        for c in res.checks:
            cells, (word, style) = _check_cells(c), _word_cell(c)
            numbers = (f"{cells['status']}, predicted {cells['predicted']}, measured "
                       f"{cells['measured']} at T={cells['T max']}, rate {cells['rate']}, "
                       f"power {cells['power']}")
            block = Text.assemble(cells["check"], "\n", (numbers, "dim"))
            t.add_row(Padding(block, (0, 0, 0, 2)), Text(word, style=style))
        t.add_section()
    return t


def _fits(table: Table) -> bool:
    """Whether ``table`` shows every cell unwrapped at the console's width (measured
    without that width: a measure within it is clamped to it)."""
    unbounded = console.options.update_width(10 ** 5)
    return Measurement.get(console, unbounded, table).maximum <= console.width


def verdict_table(results, opts) -> None:
    """Per check: prediction, measured at the largest size, finite-size model, power
    (smallest relative error the samples reject), verdict; then per claim its verdict,
    "k of n predictions verified with power" and what is not verified. Nine columns where
    they fit, else each check stacked on two lines (:func:`_stacked_table`): no verdict
    word is ever cut."""
    from gapverify.verification.judging.outcomes import claim_exit_code, claim_word
    from gapverify.verification.judging.verdict import RULES, claim_reason

    wide = _wide_table(results, _title(results, opts))
    console.print(wide if _fits(wide) else _stacked_table(results, _title(results, opts)))
    for res in results:
        # the claim's word of the one table (outcomes), in capitals; the JSON has it lower case
        word = claim_word(res.verdict, res.status,
                          claim_reason(res.verdict, res.unverified) or "lacks power")
        shown = f"[{_style(word, claim_exit_code(word))}]{escape(word.upper())}[/]"
        head = f"{res.claim} ({res.status}):"
        # the word on the claim's own line, or under it where the two do not fit together
        gap = " " if len(head) + len(word) + 2 <= console.width else "\n  "
        console.print(f"{escape(head)}{gap}{shown}; {res.power_summary}; "
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
