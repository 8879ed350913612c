"""``gapverify paper-figure``: the paper's depth experiment next to our limits
(:mod:`gapverify.verification.tools.paper`), printed and drawn."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gapverify.verification.claims.inputs import UsageError, _int_in, parse_float

# the experiment (numpy, sympy) is imported when the command runs (fast --help)
if TYPE_CHECKING:
    from gapverify.verification.tools.paper import DepthProfile


def _print(profile: DepthProfile) -> None:
    from rich.table import Table

    from gapverify.cli.display import console

    t = Table(title=f"sr(Sigma_l) against depth: T={profile.T}, d={profile.d}, "
                    f"{profile.seeds} seeds, root seed {profile.root_seed}")
    for col in ("l", "standard", "limit", "fixed (A perp)", "limit", "fixed / limit - 1", "departs"):
        t.add_column(col, justify="right")
    for r in profile.rows():
        t.add_row(str(r["layer"]), f"{r['standard_mean']:.4f}±{r['standard_sd']:.1e}",
                  f"{r['limit_standard']:g}", f"{r['fixed_mean']:.3f}±{r['fixed_sd']:.2f}",
                  f"{r['limit_fixed']:.3f}", f"{r['relative_departure']:+.1%}",
                  "yes" if r["departs"] else "no")
    console.print(t)
    console.print("departs: |mean - limit| > 3 standard errors of the seeds' mean: finite T "
                  "departs from the T -> infinity limit there.")


def _progress(step: str, done: int, total: int, seconds: float) -> None:
    # one line a seed or layer on stderr, with the time left estimated; a layer's limit
    # (sympy) costs about in proportion to its depth, so the layers left are weighted so
    import sys

    if step == "limits":
        left = seconds * (sum(range(done + 1, total + 1)) / max(1, sum(range(1, done + 1))))
        what = f"limit at layer {done} of {total}"
    else:
        left = seconds / done * (total - done)
        what = f"seed {done} of {total} sampled"
    print(f"paper-figure: {what} in {seconds:.1f} s, about {left:.0f} s left",
          file=sys.stderr, flush=True)


def _say_plan(args) -> None:
    """The figure's plan on stderr before it starts: size, depth, seeds and the time it
    should take (:func:`~gapverify.verification.tools.paper.planned_seconds`)."""
    import sys

    from gapverify.numerics.common import width_of
    from gapverify.verification.tools.paper import about, planned_seconds

    d = width_of(args.T, args.gamma)
    seconds = planned_seconds(args.T, args.depth, args.seeds, args.gamma)
    print(f"paper-figure: T = {args.T}, d = {d}, depth {args.depth}, {args.seeds} seeds: "
          f"{2 * args.seeds} networks (standard and fixed) of {args.depth} layers, then the "
          f"limits at {args.depth} layers; {about(seconds)} on 2 cores (a line a seed and a "
          "layer follows, with the time left)", file=sys.stderr, flush=True)


def _cmd(args) -> int:
    from gapverify.cli.reports import out_folder

    out_folder(args.out)
    from gapverify.verification.tools.paper import depth_profile, write_outputs

    if args.depth < 1 or args.depth > 64:
        raise UsageError(f"parameter '--depth' must be an integer in [1, 64], got {args.depth}")
    _say_plan(args)
    profile = depth_profile(args.T, args.depth, args.seeds, args.gamma, args.seed,
                            progress=_progress)
    _print(profile)
    for path in write_outputs(profile, Path(args.out)):
        print(f"wrote {path}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("paper-figure", help="the paper's depth experiment: sr(Sigma_l), l = 1..10")
    p.add_argument("--T", type=_int_in("--T", 16, 4096), default=150)
    p.add_argument("--depth", type=_int_in("--depth", 1, 64), default=10)
    p.add_argument("--seeds", type=_int_in("--seeds", 2, 1000), default=5)
    p.add_argument("--gamma", type=parse_float("--gamma", 0.0, 1.0000001), default=1.0)
    p.add_argument("--seed", type=_int_in("--seed", 0, 2**63 - 1), default=None)
    p.add_argument("--out", default="reports/out")


COMMANDS = {"paper-figure": _cmd}
