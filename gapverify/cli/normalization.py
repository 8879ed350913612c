"""``gapverify normalization-figure``: LayerNorm and skip connections against depth
(:mod:`gapverify.verification.tools.normalization`), printed and drawn."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from gapverify.verification.claims.inputs import UsageError, _int_in, parse_sizes

#: The attention matrices the figure compares (tools.normalization builds them).
ATTENTIONS = ("markov", "xavier")


def _print(profiles, attention: str) -> None:
    from rich.table import Table

    from gapverify.verification.tools.normalization import exponents

    from gapverify.cli.display import console

    for T, prof in sorted(profiles.items()):
        depth = next(iter(prof.values())).shape[2]
        t = Table(title=f"sr(Sigma_l), {attention} attention, T = d = {T}: A / Aperp (mean of seeds)")
        t.add_column("variant")
        for l in range(depth):
            t.add_column(f"l={l + 1}", justify="right")
        for label, sr in prof.items():
            m = sr.mean(axis=1)
            t.add_row(label, *[f"{m[0, l]:.2f} / {m[1, l]:.1f}" for l in range(depth)])
        console.print(t)
    if len(profiles) >= 3:
        t = Table(title="exponent b of sr(Sigma_L) ~ T^b at the last layer (95% interval)")
        for col in ("variant", "A", "Aperp", "advantage Aperp/A"):
            t.add_column(col, justify="right")
        for row in exponents(profiles):
            t.add_row(row["variant"], *[f"{row[k][0]:+.3f} ± {row[k][1]:.3f}"
                                        for k in ("A", "Aperp", "advantage")])
        console.print(t)
    console.print("empirical: no limit is proven for these variants (claim "
                  "variants.normalization, docs/claims.md); nan: the network's output vanished to round-off")


def _networks(T: int, args) -> float:
    """Estimated seconds of one size: a pair of networks (A, Aperp) per variant and seed."""
    from gapverify.verification.tools.normalization import VARIANTS
    from gapverify.verification.tools.paper import network_seconds

    return len(VARIANTS) * args.seeds * network_seconds(T, T, args.depth)


def _say_plan(sizes: list[int], args) -> list[int]:
    """The figure's plan on stderr before it starts (sizes x seeds x variants, and the
    time it should take); the sizes, in the order they are drawn."""
    from gapverify.verification.tools.normalization import VARIANTS
    from gapverify.verification.tools.paper import about

    count = 2 * len(VARIANTS) * args.seeds * len(sizes)
    print(f"normalization-figure: {len(sizes)} size(s) (T = d = {', '.join(map(str, sizes))}) x "
          f"{args.seeds} seeds x {len(VARIANTS)} variants x (A, Aperp): {count} networks of "
          f"{args.depth} layers; {about(sum(_networks(T, args) for T in sizes))} on 2 cores (a "
          "line a size follows, with the time left)", file=sys.stderr, flush=True)
    return list(sizes)


def _say_size(i: int, sizes: list[int], args, seconds: float) -> None:
    """One line a size: its seconds, and the time left at this machine's speed on it."""
    from gapverify.verification.tools.paper import about

    done, left = sizes[:i], sizes[i:]
    speed = seconds / max(_networks(sizes[i - 1], args), 1e-9)
    rest = speed * sum(_networks(T, args) for T in left)
    print(f"normalization-figure: T = {sizes[i - 1]} ({len(done)} of {len(sizes)} sizes) in "
          f"{seconds:.1f} s" + (f", {about(rest)} left" if left else ""), file=sys.stderr,
          flush=True)


def _cmd(args) -> int:
    from gapverify.cli.reports import out_folder

    out_folder(args.out)
    from gapverify.verification.tools.normalization import normalization_profile, write_outputs

    if args.attention not in ATTENTIONS:
        raise UsageError(f"parameter '--attention' must be one of {', '.join(ATTENTIONS)}, "
                         f"got {args.attention!r}")
    sizes = parse_sizes(args.T)
    profiles = {}
    for i, T in enumerate(_say_plan(sizes, args), 1):
        start = time.perf_counter()
        profiles[T] = normalization_profile(T, args.depth, args.seeds, args.attention, args.seed)
        _say_size(i, sizes, args, time.perf_counter() - start)
    _print(profiles, args.attention)
    for path in write_outputs(profiles, args.attention, Path(args.out)):
        print(f"wrote {path}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("normalization-figure",
                       help="LayerNorm and skip connections: sr(Sigma_l) against depth, A vs Aperp")
    p.add_argument("--T", default="150", help="context lengths T1,T2,... (d = T)")
    p.add_argument("--depth", type=_int_in("--depth", 1, 64), default=10)
    p.add_argument("--seeds", type=_int_in("--seeds", 2, 1000), default=5)
    p.add_argument("--attention", default="markov", help="markov | xavier")
    p.add_argument("--seed", type=_int_in("--seed", 0, 2**63 - 1), default=None)
    p.add_argument("--out", default="reports/out")


COMMANDS = {"normalization-figure": _cmd}
