r"""``variants.normalization`` (empirical): LayerNorm and skip connections, with and without
the fix, against depth and context length.

The paper's code runs every configuration with :math:`A` and with
:math:`A^\perp = A - \mathbf 1\mathbf 1^\top/T` at every layer (the conventions
taken from the paper's code): LayerNorm after the attention block (per token, over the
width), skip :math:`X + AXW` ("skip"), skip :math:`X + AXW/\sqrt d` ("upscaled"), alone
and with LayerNorm; Markov-surrogate attention or key-query attention with Xavier
:math:`W^Q, W^K`. No limit is proven. Measured per layer: :math:`\mathrm{sr}(\Sigma_\ell)`,
:math:`\mathrm{sr}(\Sigma_\ell)/T` and the fix's advantage
:math:`\mathrm{sr}(\Sigma_\ell; A^\perp)/\mathrm{sr}(\Sigma_\ell; A)`, and, over several
``T``, the exponent :math:`b` of :math:`\mathrm{sr}(\Sigma_L) \propto T^{b}` at the last
layer (least squares on the seeds' logarithms, with a 95% interval).

``gapverify normalization-figure [--T 150] [--depth 10] [--seeds 5] [--attention
markov|xavier] [--seed ROOT] [--out DIR]`` prints the tables and writes
``normalization_<attention>.{png,pdf,csv}``; ``--T 64,128,256,512,1024`` adds the
exponents.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from gapverify.verification.tools.figure_files import save_png_pdf

__all__ = ["VARIANTS", "normalization_profile", "exponents"]

#: (label, residual, layer_norm)
VARIANTS: tuple[tuple[str, str, bool], ...] = (
    ("plain", "none", False), ("LN", "none", True), ("skip", "skip", False),
    ("skip+LN", "skip", True), ("upscaled skip", "upscaled", False),
    ("upscaled skip+LN", "upscaled", True),
)
_ATTENTION = {"markov": dict(attention="markov"),
              "xavier": dict(attention="kq_separate", init="xavier")}


def normalization_profile(T: int, depth: int, seeds: int, attention: str = "markov",
                          root_seed: int | None = None) -> dict[str, np.ndarray]:
    """``{variant: array (2, seeds, depth)}``: sr(Sigma_l) for A (index 0) and Aperp (1),
    the two on the same draws (twin streams), ``d = T``; ``nan`` for a network whose
    output vanished to round-off (reported as such)."""
    from gapverify.numerics.common import twin_streams
    from gapverify.numerics.forward_pass import forward
    from gapverify.numerics.networks import NetworkConfig
    from gapverify.verification.running.defaults import DEFAULT_SEED

    root_seed = DEFAULT_SEED if root_seed is None else root_seed
    out = {}
    for k, (label, residual, ln) in enumerate(VARIANTS):
        sr = np.empty((2, seeds, depth))
        for s in range(seeds):
            a, b = twin_streams(np.random.default_rng([s, T, depth, k, root_seed]))
            for i, (rng, fixed) in enumerate(((a, False), (b, True))):
                cfg = NetworkConfig(T=T, d=T, depth=depth, fixed=fixed, residual=residual,
                                    layer_norm=ln, **_ATTENTION[attention])
                try:
                    sr[i, s] = forward(rng, cfg).sr_Sigma
                except FloatingPointError:
                    # X_l = 0 to round-off: with Xavier heads A is uniform to machine
                    # precision in deep layers and A^perp = 0 (no skip to carry X)
                    sr[i, s] = np.nan
        out[label] = sr
    return out


def exponents(profiles: dict[int, dict[str, np.ndarray]]) -> list[dict]:
    r"""Per variant, the exponent :math:`b` of :math:`\mathrm{sr}(\Sigma_L)\propto T^b` at the
    last layer for :math:`A`, :math:`A^\perp` and their ratio: OLS of the seeds'
    :math:`\log\mathrm{sr}` on :math:`\log T`, 95% interval from the t quantile."""
    from scipy import stats

    Ts = sorted(profiles)
    rows = []
    for label, _, _ in VARIANTS:
        row = {"variant": label}
        for name, f in (("A", lambda sr: sr[0]), ("Aperp", lambda sr: sr[1]),
                        ("advantage", lambda sr: sr[1] / sr[0])):
            x = np.concatenate([np.full(profiles[T][label].shape[1], math.log(T)) for T in Ts])
            y = np.concatenate([np.log(f(profiles[T][label])[:, -1]) for T in Ts])
            fit = stats.linregress(x, y)
            half = stats.t.ppf(0.975, len(x) - 2) * fit.stderr
            row[name] = (float(fit.slope), float(half))
        rows.append(row)
    return rows


def write_outputs(profiles: dict[int, dict[str, np.ndarray]], attention: str, out: Path) -> list[Path]:
    """CSV of every (T, variant, A/Aperp, layer) mean and sd; the figure at the first T."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    csv = out / f"normalization_{attention}.csv"
    lines = ["T,variant,attention,layer,sr_Sigma_mean,sr_Sigma_sd,sr_Sigma_over_T,advantage"]
    for T, prof in sorted(profiles.items()):
        for label, sr in prof.items():
            adv = (sr[1] / sr[0]).mean(axis=0)
            for i, which in enumerate(("A", "Aperp")):
                m, sd = sr[i].mean(axis=0), sr[i].std(axis=0, ddof=1)
                lines += [f"{T},{label},{which},{l + 1},{m[l]:.6g},{sd[l]:.3g},{m[l] / T:.6g},{adv[l]:.6g}"
                          for l in range(len(m))]
    csv.write_text("\n".join(lines) + "\n")
    T0 = sorted(profiles)[0]
    fig, axes = plt.subplots(2, 3, figsize=(10, 6), dpi=150, sharey=True)
    for ax, (label, sr) in zip(axes.ravel(), profiles[T0].items()):
        layers = np.arange(1, sr.shape[2] + 1)
        for i, style, name in ((0, "-", "$A$"), (1, "--", r"$A^\perp$")):
            m, sd = sr[i].mean(axis=0), sr[i].std(axis=0, ddof=1)
            ax.plot(layers, m, style, marker="o", ms=3, color="tab:blue" if i == 0 else "tab:red", label=name)
            ax.fill_between(layers, m - sd, m + sd, alpha=0.15, color="tab:blue" if i == 0 else "tab:red")
        ax.set_yscale("log")
        ax.set_title(label, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xlabel(r"layer $\ell$")
    axes[0, 0].set_ylabel(r"$\mathrm{sr}(\Sigma_\ell)$")
    axes[1, 0].set_ylabel(r"$\mathrm{sr}(\Sigma_\ell)$")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"LayerNorm and skip connections ({attention} attention), T = d = {T0}, "
                 f"{profiles[T0]['plain'].shape[1]} seeds")
    fig.tight_layout()
    return [csv, *save_png_pdf(fig, out, f"normalization_{attention}")]


