"""``gapverify calibrate``: the false-failure rate per claim over root seeds
(:mod:`gapverify.verification.tools.calibrate`) and the coverage of the limit checks'
intervals (:mod:`gapverify.verification.tools.coverage`), printed as tables and written as
JSON; ``--figure`` draws the ECDF of the coverage's probability integral transforms."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from gapverify.verification.claims.inputs import MAX_T, _int_in, parse_sizes
from gapverify.cli.args import add_run_options, output_path, run_options_claims, write_json
from gapverify.verification.running.defaults import DEFAULT_SEED

# the calibration's machinery is imported when the command runs (fast --help)
if TYPE_CHECKING:
    from gapverify.verification.tools.calibrate import ClaimCalibration


def _print(results: list[ClaimCalibration], level: float, profile: str, n: int,
           sizes: list[int] | None = None) -> None:
    from rich import box
    from rich.table import Table

    from gapverify.cli.display import console

    grid = "" if not sizes else f" at T = {', '.join(map(str, sizes))}"
    t = Table(title=f"Calibration: {n} root seeds, profile {profile}{grid}, level {level:g} per claim",
              box=box.SIMPLE_HEAVY)
    # short headers and whole claim ids: the table must read at 80 columns (the false-
    # failure rate with its exact 95% CI; not verified: how many seeds, why, which
    # predictions)
    t.add_column("claim", no_wrap=True)
    for col in ("seeds", "failed"):
        t.add_column(col)
    for col in ("rate (95% CI)", "not verified", "failing checks"):
        t.add_column(col, overflow="fold")  # folded, never cut: every name stays readable
    for r in results:
        low, high = r.interval()
        checks = ", ".join(f"{k} ({v})" for k, v in sorted(r.failing_checks.items())) or "-"
        weak = ", ".join(f"{k} ({v})" for k, v in sorted(r.unverified.items()))
        why = ", ".join(f"{k} {v}" for k, v in sorted(r.reasons.items()))
        t.add_row(r.claim, str(r.seeds), str(r.failed),
                  f"{r.failed / r.seeds:.1%} ({100 * low:.1f}-{100 * high:.1f}%)",
                  f"{r.not_verified}" + (f" ({why})" if why else "") + (f": {weak}" if weak else ""),
                  checks)
    console.print(t)


def _rate(d: dict | None) -> str:
    if not d or not d.get("n"):
        return "-"
    low, high = d["ci95"]
    return f"{d['rate']:.0%} [{100 * low:.0f}-{100 * high:.0f}]"


def _print_coverage(report: dict) -> None:
    """The coverage of the limit checks' central intervals and their uniformity, then the
    operating characteristic, per claim and pooled."""
    from rich import box
    from rich.table import Table

    from gapverify.cli.display import console
    from gapverify.verification.tools.coverage import LEVELS, MULTIPLES

    rows = [*report["claims"].items(),
            *((f"all {form} checks", r) for form, r in report["forms"].items()),
            ("pooled", report["pooled"])]
    t = Table(title="Coverage of the limit checks' central intervals, u = F((L_hat - L)/se) "
                    "(exact 95% CI)", box=box.SIMPLE_HEAVY)
    for col in ("claim", "checks (t/normal)", *(f"{c:.0%}" for c in LEVELS),
                "verdict's level", "KS D (p)", "mean u"):
        t.add_column(col)
    for name, s in rows:
        u = s["uniformity"] or {}
        t.add_row(name, f"{s['n']} ({s['student_t']}/{s['normal']})",
                  *(_rate(c) for c in s["coverage"]), _rate(s["verdict_coverage"]),
                  f"{u['ks']:.3f} ({u['p']:.2g})" if u else "-",
                  f"{u['mean_u']:.3f}" if u else "-")
    console.print(t)
    oc = Table(title="Rejection rate of L(1 +- e), e = m x power target (limit test only, "
                     "both signs pooled)", box=box.SIMPLE_HEAVY)
    for col in ("claim", "checks", "m = 0 (truth)", *(f"m = {m:g}" for m in MULTIPLES)):
        oc.add_column(col)
    for name, s in rows:
        cells = s["operating_characteristic"]
        oc.add_row(name, str(cells[0]["n"]), *(_rate({**c, "n": 2 * c["n"]}) for c in cells))
    console.print(oc)


def _report(args, results, seeds) -> None:
    from gapverify.verification.tools.coverage import coverage_report, plot_coverage

    samples = [s for r in results for s in r.limits]
    report = coverage_report(samples)
    sizes = getattr(args, "sizes", None)  # None: the profile's
    _print(results, args.level, args.profile, len(seeds), sizes)
    if samples:
        _print_coverage(report)
    if args.figure:
        if samples:
            plot_coverage(samples, args.figure)
            print(f"coverage figure: {args.figure}", file=sys.stderr)
        else:
            print("no limit check judged: no coverage figure", file=sys.stderr)
    if args.json:
        write_json(args.json, {"profile": args.profile, "sizes": sizes, "level": args.level,
                               "base_seed": args.seed, "seeds": seeds,
                               "claims": [r.to_dict() for r in results], "coverage": report})


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
                            entries=args.entries, scheduler=args.scheduler, sizes=args.sizes)
    except KeyboardInterrupt:
        print(f"\ninterrupted: {store.count()} measurements are kept in {args.store}; "
              "rerun the same command to resume", file=sys.stderr)
        return 130
    _report(args, results, seeds)
    return 0


def register(subparsers) -> None:
    c = subparsers.add_parser("calibrate", help="false-failure rate per claim and coverage of the limit "
                                       "checks over N root seeds")
    c.add_argument("claims", nargs="*", metavar="CLAIM")
    c.add_argument("--seeds", type=_int_in("--seeds", 1, 10000), default=20,
                   help="number of root seeds (default 20)")
    c.add_argument("--seed", type=_int_in("--seed", 0, 2**63 - 1), default=DEFAULT_SEED,
                   help=f"base seed the root seeds are derived from (default {DEFAULT_SEED})")
    c.add_argument("--profile", choices=("quick", "standard"), default="quick",
                   help="sweep profile (default: quick)")
    c.add_argument("--sizes", type=parse_sizes, default=None,
                   help=f"sizes T1,T2,... in [16, {MAX_T}] instead of the profile's, every seed "
                        "(a small or shifted grid: checks whose finite-size model is not shown "
                        "to hold there read 'outside domain') (default: the profile's)")
    c.add_argument("--figure", metavar="PNG", type=output_path("--figure"), default=None,
                   help="write the coverage plot (ECDF of u minus the uniform CDF with a "
                        "simultaneous 95%% band, pooled and per claim) as PNG (no file unless given)")
    add_run_options(c, quiet_help="no per-seed progress lines")


COMMANDS = {"calibrate": _cmd_calibrate}
