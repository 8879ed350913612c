r"""The paper's own experiment: stable rank of :math:`\Sigma_\ell` against depth.

The rebuttal's Figure VII (solid and dashed blue lines): Markov surrogate, ``d = T = 150``,
depth ``l = 1..10``, 5 seeds, standard attention against the fix
:math:`A^\perp = A - \mathbf 1\mathbf 1^\top/T` at every layer. Standard attention
collapses to :math:`\mathrm{sr}(\Sigma_\ell) = 1`; the fix keeps it near
:math:`T\cdot(1 + \ell(1+\gamma))/x_\ell^{*2}`, the free-probability limit of
``depth.stable_rank`` (:func:`theory.layers.sr_Sigmaperp_over_T`). This module measures
both at finite ``T``, sets them next to the limits, and says where finite ``T`` departs
from them (relative departure beyond the seeds' spread).

``gapverify paper-figure [--T 150] [--depth 10] [--seeds 5] [--gamma 1] [--seed ROOT]
[--out DIR]`` prints the table and writes ``depth_profile.{png,pdf,csv}``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gapverify.verification.tools.figure_files import save_png_pdf

__all__ = ["DepthProfile", "depth_profile", "network_seconds", "planned_seconds", "about"]

#: Seconds of one layer of a pair of networks (standard and fixed, or ``A`` and
#: :math:`A^\perp`, :func:`numerics.forward_pass.forward`) on the reference machine (2 cores,
#: one BLAS thread; measured at ``T = d`` from 150 to 1000, within 25%):
#: ``a + b (T^2 d + T d^2 + T^3) / 3``.
LAYER_SECONDS = (0.005, 5e-9)
#: The limits of depths ``1..L`` (sympy) take about ``c L^2`` seconds there (81 s at
#: ``L = 64``, ``gamma = 1``).
LIMIT_SECONDS = 0.02


def network_seconds(T: int, d: int, depth: int) -> float:
    """Estimated seconds of a pair of networks of ``depth`` layers at ``T x d``."""
    a, b = LAYER_SECONDS
    return depth * (a + b * (T * T * d + T * d * d + T ** 3) / 3)


def planned_seconds(T: int, depth: int, seeds: int, gamma: float = 1.0) -> float:
    """Estimated seconds of :func:`depth_profile` (``seeds`` pairs of networks, then the
    limits), on the reference machine: the figure's plan line says it before it starts."""
    from gapverify.numerics.common import width_of

    return seeds * network_seconds(T, width_of(T, gamma), depth) + LIMIT_SECONDS * depth ** 2


def about(seconds: float) -> str:
    """``about 40 s``, ``about 12 min``, ``about 3.5 h``, ``about 6 days``."""
    if seconds < 90:
        return f"about {max(1, round(seconds))} s"
    if seconds < 5400:
        return f"about {seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"about {seconds / 3600:.1f} h"
    return f"about {seconds / 86400:.0f} days"


@dataclass
class DepthProfile:
    T: int
    d: int
    gamma: float
    seeds: int
    root_seed: int
    standard: np.ndarray  # seeds x depth: sr(Sigma_l)
    fixed: np.ndarray  # seeds x depth: sr(Sigma_l perp)
    limit_fixed: np.ndarray  # depth: T * sr_Sigmaperp_over_T(l, gamma)
    limit_standard: np.ndarray  # depth: sr_Sigma(l) = 1

    def rows(self) -> list[dict]:
        out = []
        for l in range(self.standard.shape[1]):
            fx, st = self.fixed[:, l], self.standard[:, l]
            lim = self.limit_fixed[l]
            # departure from the limit, in units of the seeds' standard error
            se = fx.std(ddof=1) / math.sqrt(len(fx)) if len(fx) > 1 else math.inf
            out.append({
                "layer": l + 1,
                "standard_mean": float(st.mean()), "standard_sd": float(st.std(ddof=1)),
                "fixed_mean": float(fx.mean()), "fixed_sd": float(fx.std(ddof=1)),
                "limit_fixed": float(lim), "limit_standard": float(self.limit_standard[l]),
                "relative_departure": float(fx.mean() / lim - 1),
                "departs": bool(abs(fx.mean() - lim) > 3 * se),
            })
        return out


def depth_profile(T: int = 150, depth: int = 10, seeds: int = 5, gamma: float = 1.0,
                  root_seed: int | None = None, progress=None) -> DepthProfile:
    """Sample ``seeds`` standard and fixed networks (same draws) and the limits per layer.

    ``progress(step, done, total, seconds)``, when given, is called after each seed and
    each layer's limit (sympy: the limit at depth ``l`` costs more the deeper ``l``), with
    the seconds spent so far on that step, so that a caller can print an estimate."""
    import time
    import sympy as sp

    from gapverify.numerics.common import twin_streams, width_of
    from gapverify.numerics.forward_pass import forward
    from gapverify.numerics.networks import NetworkConfig
    from gapverify.theory import layers
    from gapverify.verification.running.defaults import DEFAULT_SEED

    root_seed = DEFAULT_SEED if root_seed is None else root_seed
    d = width_of(T, gamma)
    std, fix = np.empty((seeds, depth)), np.empty((seeds, depth))
    start = time.perf_counter()
    for s in range(seeds):
        a, b = twin_streams(np.random.default_rng([s, T, depth, root_seed]))
        std[s] = forward(a, NetworkConfig(T=T, d=d, depth=depth)).sr_Sigma
        fix[s] = forward(b, NetworkConfig(T=T, d=d, depth=depth, fixed=True)).sr_Sigma
        if progress:
            progress("seeds", s + 1, seeds, time.perf_counter() - start)
    g = sp.Rational(repr(float(T / d)))
    start, limits = time.perf_counter(), []
    for l in range(1, depth + 1):
        limits.append(T * float(layers.sr_Sigmaperp_over_T(l, g)))
        if progress:
            progress("limits", l, depth, time.perf_counter() - start)
    limit_fixed = np.array(limits)
    limit_standard = np.array([float(layers.sr_Sigma(l)) for l in range(1, depth + 1)])
    return DepthProfile(T, d, T / d, seeds, root_seed, std, fix, limit_fixed, limit_standard)


def write_outputs(profile: DepthProfile, out: Path) -> list[Path]:
    """``depth_profile.csv`` (the table) and the figure as PNG and PDF."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    rows = profile.rows()
    csv = out / "depth_profile.csv"
    keys = list(rows[0])
    csv.write_text("\n".join([",".join(keys)] + [",".join(f"{r[k]}" for k in keys) for r in rows]) + "\n")
    layers_ = np.arange(1, profile.standard.shape[1] + 1)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=150)
    for data, colour, style, label in ((profile.standard, "tab:blue", "-", "standard $A$"),
                                       (profile.fixed, "tab:blue", "--", r"fixed $A^\perp$")):
        m, sd = data.mean(axis=0), data.std(axis=0, ddof=1)
        ax.plot(layers_, m, style, color=colour, marker="o", ms=4, label=f"{label} (mean of {profile.seeds})")
        ax.fill_between(layers_, m - sd, m + sd, color=colour, alpha=0.15)
    ax.plot(layers_, profile.limit_fixed, ":", color="black", marker="x",
            label=r"limit $T\,(1+\ell(1+\gamma))/x_\ell^{*2}$")
    ax.plot(layers_, profile.limit_standard, "-.", color="grey", label="limit 1 (standard)")
    ax.set_yscale("log")
    ax.set_xlabel(r"layer $\ell$")
    ax.set_ylabel(r"stable rank of $\Sigma_\ell = X_\ell X_\ell^\top$")
    ax.set_title(f"Rank collapse in depth: Markov surrogate, T = {profile.T}, d = {profile.d}")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return [csv, *save_png_pdf(fig, out, "depth_profile")]


