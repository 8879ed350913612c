r"""Real transformers and trainability: depth profiles, exponents in ``T``, loss curves.

``depth_profiles``
    one replicate of each model's experiment (``models.bert``, ``models.roberta``,
    ``models.gpt2``: :func:`numerics.hf_models.measure_model`) on the suite's stream of
    replicate 0 at one ``T``: per-layer statistics, standard and with the fix, as a table
    (text and JSON) and as the figure :func:`depth_figure` (as the rebuttal's Figure 3:
    :math:`\mathrm{sr}(\Sigma_\ell)` and :math:`\mathrm{sr}(X_\ell)` against the layer, per
    model, standard against fix).
``exponents``
    from a run's JSON (``gapverify run models.bert ... --json R.json``): for every recorded
    statistic, the exponent ``a`` of ``mean ~ C T^a`` (weighted log-log fit,
    :func:`verification.judging.inference.power_law_fit`) with its 95% interval.
``loss_curves_figure``
    the loss curves of ``training.fix`` (every seed, standard and fixed).

``python -m gapverify.reports.model_figures depth [--T 512] [--depth 12] [--models bert,roberta,gpt2]
[--out DIR]``, ``python -m gapverify.reports.model_figures exponents R.json`` and
``python -m gapverify.reports.model_figures training [--profile quick] [--store PATH]`` (the seeds
tables of ``training.fix`` as the run stored them) print them.
Figures use an Agg canvas (no pyplot), as :mod:`reports.figures`.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gapverify.reports.claim_panels import log_ticks
from gapverify.reports.figures import STYLE

__all__ = ["depth_profiles", "layer_table", "depth_figure", "exponents", "exponents_table",
           "loss_curves_figure", "training_tables", "main"]

_STD, _FIX = "#C44E52", "#55A868"
_STATS = ("s1", "sqrtT_s2", "frob", "sr_X", "sr_Sigma")


def depth_profiles(T: int = 512, depth: int = 12, models: Sequence[str] = ("bert", "roberta", "gpt2"),
                   seed: int | None = None, initializer_range: float = 0.02) -> dict[str, dict]:
    """Per-layer statistics of each model on replicate 0 of the suite's stream."""
    from gapverify.numerics.hf_models import measure_model
    from gapverify.verification.running.defaults import DEFAULT_SEED
    from gapverify.verification.running.runner import stream, task_limits

    task_limits()
    root = DEFAULT_SEED if seed is None else seed
    out = {}
    for name in models:
        m = measure_model(name, stream(f"models.{name}", T, 0, root), T, depth, initializer_range,
                          keep_heads=False)
        out[name] = {k: (np.asarray(v).tolist() if np.ndim(v) else float(v)) for k, v in m.items()}
        out[name]["T"], out[name]["depth"], out[name]["root_seed"] = T, depth, root
    return out


def layer_table(profiles: Mapping[str, Mapping[str, Any]], inp: str = "tok") -> str:
    """Text table: per model and layer, the statistics standard / fix."""
    lines = []
    for name, m in profiles.items():
        T = m["T"]
        frob = "||A-C_T||_F^2/H_T" if name == "gpt2" else "||A-11^T/T||_F^2"
        lines.append(f"{name}, T = {T}, {m['depth']} layers, input {inp} (root seed {m['root_seed']}); "
                     f"std / fix; s1, sqrt(T) s2 of the matrix applied to the values (A, or A - E "
                     f"with the fix), {frob} of the softmax A; sr of the hidden states after the layer")
        lines.append(f"{'layer':>5} {'s1 std':>8} {'s1 fix':>8} {'√T s2 std':>10} {'√T s2 fix':>10} "
                     f"{'frob std':>9} {'frob fix':>9} {'sr(X) std':>10} {'sr(X) fix':>10} "
                     f"{'sr(Σ) std':>10} {'sr(Σ) fix':>10}")
        sr = {v: (m[f"{inp}_{v}_sr_X"], m[f"{inp}_{v}_sr_Sigma"]) for v in ("std", "fix")}
        lines.append(f"{0:>5} {'':>8} {'':>8} {'':>10} {'':>10} {'':>9} {'':>9} "
                     f"{sr['std'][0][0]:10.3f} {sr['fix'][0][0]:10.3f} {sr['std'][1][0]:10.3f} "
                     f"{sr['fix'][1][0]:10.3f}")
        for l in range(m["depth"]):
            row = [m[f"{inp}_{v}_{k}"][l] for k in ("s1", "sqrtT_s2", "frob") for v in ("std", "fix")]
            lines.append(f"{l + 1:>5} {row[0]:8.4f} {row[1]:8.4f} {row[2]:10.3f} {row[3]:10.3f} "
                         f"{row[4]:9.4f} {row[5]:9.4f} {sr['std'][0][l + 1]:10.3f} "
                         f"{sr['fix'][0][l + 1]:10.3f} {sr['std'][1][l + 1]:10.3f} "
                         f"{sr['fix'][1][l + 1]:10.3f}")
        lines.append("")
    return "\n".join(lines)


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def depth_figure(profiles: Mapping[str, Mapping[str, Any]]) -> Figure:
    """:math:`\\mathrm{sr}(\\Sigma_\\ell)` and :math:`\\mathrm{sr}(X_\\ell)` against the layer,
    one column per model, rows: token inputs, isometric inputs; standard and fix."""
    with rc_context(STYLE):
        names = list(profiles)
        fig = _figure(3.2 * len(names), 5.6)
        axes = fig.subplots(2, len(names), squeeze=False)
        for j, name in enumerate(names):
            m = profiles[name]
            for i, inp in enumerate(("tok", "iso")):
                ax = axes[i][j]
                layers = np.arange(len(m[f"{inp}_std_sr_Sigma"]))
                for var, colour, label in (("std", _STD, "standard"), ("fix", _FIX, "fix")):
                    ax.plot(layers, m[f"{inp}_{var}_sr_Sigma"], "o-", color=colour, ms=3,
                            label=rf"$\mathrm{{sr}}(\Sigma_\ell)$ {label}")
                    ax.plot(layers, m[f"{inp}_{var}_sr_X"], "s--", color=colour, ms=3, alpha=0.7,
                            label=rf"$\mathrm{{sr}}(X_\ell)$ {label}")
                ax.set_yscale("log")
                log_ticks(ax.yaxis, *ax.get_ylim())  # two labelled ticks at least
                ax.set_title(f"{name}, {'token ids' if inp == 'tok' else 'isometric embeds'}, $T = {m['T']}$")
                ax.set_xlabel(r"layer $\ell$")
                if j == 0:
                    ax.set_ylabel("stable rank")
        axes[0][0].legend(loc="best")
    return fig


def _save(fig: Figure, stem: Path) -> tuple[Path, Path]:
    stem.parent.mkdir(parents=True, exist_ok=True)
    png, pdf = stem.with_suffix(".png"), stem.with_suffix(".pdf")
    fig.savefig(png, metadata={"Software": None})
    fig.savefig(pdf, metadata={"CreationDate": None, "ModDate": None, "Producer": None,
                               "Creator": None})
    return png, pdf


def exponents(run: Mapping[str, Any], claims: Sequence[str] | None = None) -> list[dict]:
    """For each recorded check of the ``models.*`` claims (or ``claims``) in a run's JSON:
    ``mean ~ C T^a`` fitted on the per-size means, ``a`` with a 95% interval."""
    from gapverify.verification.judging.inference import power_law_fit

    out = []
    for claim in run["claims"]:
        if claims is not None and claim["claim"] not in claims:
            continue
        if claims is None and not claim["claim"].startswith("models."):
            continue
        for check in claim["checks"]:
            rows = check.get("rows") or []
            if len(rows) < 3:
                continue
            T = np.array([r["T"] for r in rows], float)
            mean = np.array([r["mean"] for r in rows], float)
            se = np.array([r["se"] if isinstance(r["se"], (int, float)) else math.inf for r in rows], float)
            if np.any(mean <= 0) or not np.all(np.isfinite(se)):
                continue
            fit = power_law_fit(T, mean, np.maximum(se, 1e-12 * mean))
            out.append({"claim": claim["claim"], "check": check["label"], "exponent": float(fit.b),
                        "se": float(fit.se_b), "low": float(fit.b - 1.96 * fit.se_b),
                        "high": float(fit.b + 1.96 * fit.se_b), "T": T.astype(int).tolist(),
                        "means": mean.tolist()})
    return out


def exponents_table(rows: Sequence[Mapping[str, Any]]) -> str:
    lines = [f"{'claim':<15} {'statistic':<28} {'exponent a (mean ~ T^a)':>24}  95% interval      T"]
    for r in rows:
        lines.append(f"{r['claim']:<15} {r['check']:<28} {r['exponent']:>+14.3f} ± {r['se']:.3f}"
                     f"     [{r['low']:+.3f}, {r['high']:+.3f}]  {min(r['T'])}..{max(r['T'])}")
    return "\n".join(lines)


def loss_curves_figure(m: Mapping[str, Any], stem: str | Path | None = None) -> Figure:
    """Loss (relative to the targets' mean square) against the step, every seed, standard
    and fixed (``training.fix``); saved as ``stem``.png/.pdf when given."""
    cfg = np.asarray(m["config"])
    every, budget = int(cfg[8]), int(cfg[9])
    with rc_context(STYLE):
        fig = _figure(5.0, 3.4)
        ax = fig.subplots()
        for var, colour, label in (("std", _STD, "standard"), ("fix", _FIX, "fix")):
            curves = np.asarray(m[f"curves_{var}"])
            steps = np.arange(curves.shape[1]) * every
            for k, c in enumerate(curves):
                ax.plot(steps, c, color=colour, alpha=0.45, lw=1,
                        label=f"{label} ({int(np.sum(m[f'trained_{var}']))}/{len(curves)} train)"
                        if k == 0 else None)
        ax.axvline(budget, color="grey", ls=":", lw=1)
        ax.set_yscale("log")
        log_ticks(ax.yaxis, *ax.get_ylim())
        ax.set_xlabel("Adam step")
        ax.set_ylabel("loss / mean square of targets")
        ax.set_title(f"$T = {int(cfg[0])}$, depth {int(cfg[2])}, $d = {int(cfg[1])}$: Fisher "
                     f"$p = {float(m['fisher_p']):.2g}$ at {budget} steps")
        ax.legend()
    if stem is not None:
        _save(fig, Path(stem))
    return fig


def training_tables(argv=None) -> int:
    """``python -m gapverify.reports.model_figures training [--profile quick] [--seed ROOT] [--store PATH] [--out DIR]``:
    the seeds table of every replicate of ``training.fix`` as ``gapverify run training.fix``
    stored it (what the store lacks is computed and stored, as the run would), printed,
    with the JSON and the loss-curve figure written to ``--out``."""
    import argparse

    from gapverify.numerics.training import seeds_json, seeds_table
    from gapverify.verification.claims.registry import get_claim
    from gapverify.verification.running.defaults import DEFAULT_SEED
    from gapverify.verification.running.runner import SerialExecutor
    from gapverify.verification.running.store import Store
    from gapverify.verification.running.suite import sample

    ap = argparse.ArgumentParser(prog="python -m gapverify.reports.model_figures training")
    ap.add_argument("--profile", choices=("quick", "standard"), default="quick")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--store", default="reports/gapverify.sqlite")
    ap.add_argument("--out", default="reports/out/training")
    args = ap.parse_args(argv)
    claim = get_claim("training.fix")
    profile = claim.profiles[args.profile]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    store = Store(args.store)
    tables = []
    for values in claim.cases_for(args.profile):
        data = sample(store, claim, values, profile, args.seed, SerialExecutor())
        for T, reps in sorted(data.items()):
            for r, m in enumerate(reps):
                if "unavailable" in m:
                    print("training.fix: not assessed: torch not installed (pip install gapverify[models])")
                    return 3
                tag = f"T{T}_depth{int(values['depth'])}_rep{r}"
                print(f"training.fix, T = {T}, depth {int(values['depth'])}, replicate {r} "
                      f"(root seed {args.seed}):")
                print(seeds_table(m) + "\n")
                tables.append({"T": T, "depth": int(values["depth"]), "replicate": r,
                               "root_seed": args.seed, **seeds_json(m)})
                loss_curves_figure(m, out / f"training_fix_loss_{tag}")
    (out / "training_fix_seeds.json").write_text(json.dumps(tables, indent=1))
    print(f"wrote {out / 'training_fix_seeds.json'} and {out}/training_fix_loss_*.png")
    return 0



def main(argv=None) -> int:
    import argparse
    import sys

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["training"]:
        return training_tables(argv[1:])

    ap = argparse.ArgumentParser(prog="python -m gapverify.reports.model_figures")
    sub = ap.add_subparsers(dest="what", required=True)
    d = sub.add_parser("depth", help="per-layer statistics of the three models at one T")
    d.add_argument("--T", type=int, default=512)
    d.add_argument("--depth", type=int, default=12)
    d.add_argument("--models", default="bert,roberta,gpt2")
    d.add_argument("--seed", type=int, default=None)
    d.add_argument("--out", default="reports/out/models")
    sub.add_parser("training", help="the seeds tables of training.fix (from the store)")
    e = sub.add_parser("exponents", help="exponents in T of a run's recorded statistics")
    e.add_argument("results")
    args = ap.parse_args(argv)
    if args.what == "exponents":
        print(exponents_table(exponents(json.loads(Path(args.results).read_text()))))
        return 0
    prof = depth_profiles(args.T, args.depth, args.models.split(","), args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for inp in ("tok", "iso"):
        text = layer_table(prof, inp)
        print(text)
        (out / f"layers_T{args.T}_{inp}.txt").write_text(text)
    (out / f"layers_T{args.T}.json").write_text(json.dumps(prof, indent=1))
    png, _ = _save(depth_figure(prof), out / f"depth_profiles_T{args.T}")
    print(f"wrote {out}/layers_T{args.T}_*.txt, layers_T{args.T}.json, {png.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
