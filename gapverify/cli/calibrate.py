"""``gapverify calibrate``: the false-failure rate per claim over root seeds
(:mod:`gapverify.verification.tools.calibrate`), printed as a table and written as JSON."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from gapverify.verification.claims.inputs import _int_in
from gapverify.cli.args import add_run_options, run_options_claims, write_json
from gapverify.verification.running.defaults import DEFAULT_SEED

# the calibration's machinery is imported when the command runs (fast --help)
if TYPE_CHECKING:
    from gapverify.verification.tools.calibrate import ClaimCalibration


def _print(results: list[ClaimCalibration], level: float, profile: str, n: int) -> None:
    from rich import box
    from rich.table import Table

    from gapverify.cli.display import console

    t = Table(title=f"Calibration: {n} root seeds, profile {profile}, level {level:g} per claim",
              box=box.SIMPLE_HEAVY)
    for col in ("claim", "seeds", "failed", "false-failure rate", "95% CI (exact)",
                "not verified (predictions lacking power)", "failing checks"):
        t.add_column(col)
    for r in results:
        low, high = r.interval()
        checks = ", ".join(f"{k} ({v})" for k, v in sorted(r.failing_checks.items())) or "-"
        weak = ", ".join(f"{k} ({v})" for k, v in sorted(r.unverified.items()))
        t.add_row(r.claim, str(r.seeds), str(r.failed), f"{r.failed / r.seeds:.1%}",
                  f"[{low:.1%}, {high:.1%}]", f"{r.not_verified}" + (f": {weak}" if weak else ""),
                  checks)
    console.print(t)


def _cmd_calibrate(args) -> int:
    from gapverify.verification.running.store import Store
    from gapverify.verification.tools.calibrate import calibrate, calibration_seeds

    claims, workers = run_options_claims(args)
    seeds = calibration_seeds(args.seeds, args.seed)
    store = Store(args.store)

    def progress(i, seed, results):
        failed = sum(r.failed for r in results.values())
        print(f"seed {i + 1}/{len(seeds)} ({seed}) done: {failed} claim failures so far",
              file=sys.stderr, flush=True)

    try:
        results = calibrate(claims, seeds, store, profile=args.profile, workers=workers,
                            level=args.level, on_seed=None if args.quiet else progress,
                            entries=args.entries, scheduler=args.scheduler)
    except KeyboardInterrupt:
        print(f"\ninterrupted: {store.count()} measurements are kept in {args.store}; "
              "rerun the same command to resume", file=sys.stderr)
        return 130
    _print(results, args.level, args.profile, len(seeds))
    if args.json:
        write_json(args.json, {"profile": args.profile, "level": args.level,
                               "base_seed": args.seed, "seeds": seeds,
                               "claims": [r.to_dict() for r in results]})
    return 0


def register(subparsers) -> None:
    c = subparsers.add_parser("calibrate", help="false-failure rate per claim over N root seeds")
    c.add_argument("claims", nargs="*", metavar="CLAIM")
    c.add_argument("--seeds", type=_int_in("--seeds", 1, 10000), default=20,
                   help="number of root seeds (default 20)")
    c.add_argument("--seed", type=_int_in("--seed", 0, 2**63 - 1), default=DEFAULT_SEED,
                   help=f"base seed the root seeds are derived from (default {DEFAULT_SEED})")
    c.add_argument("--profile", choices=("quick", "standard"), default="quick",
                   help="sweep profile (default: quick)")
    add_run_options(c, quiet_help="no per-seed progress lines")


COMMANDS = {"calibrate": _cmd_calibrate}
