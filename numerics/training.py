r"""Trainability with and without the fix (claim ``training.fix``, empirical).

A small attention-only network, key-query softmax attention, no skip connection and no
LayerNorm (the setting of the paper's theory), trained with Adam on a token-wise linear
regression: inputs ``X`` (``T`` tokens of width ``d``, i.i.d. Gaussian, centred over the
tokens), target ``Y = X B`` with a fixed random ``B`` (one per seed). Layer ``l``:

.. math::

    X_\ell = \rho\big(P_\ell X_{\ell-1} W^V_\ell\big),\qquad
    P_\ell = A_\ell \ \text{(standard)}\ \text{or}\ A_\ell - \tfrac1T\mathbf 1\mathbf 1^\top
    \ \text{(fix)},\qquad
    A_\ell = \mathrm{softmax}\big(X_{\ell-1} W^Q_\ell (X_{\ell-1} W^K_\ell)^\top/\sqrt d\big),

``rho`` a parameter-free RMS normalisation of each token (``x / rms(x)``): it keeps the
signal of order one at every depth for both variants (the fixed ``P`` has singular values
of order ``T^{-1/2}``) and cannot undo rank collapse (it rescales tokens, it does not
separate equal ones). Output ``X_L W^O``. Weights ``N(0, 1/d)`` (logit variance about 1).
The target is reachable by both variants (``A = I`` gives ``X W``, and with the fix
``(I - 11^T/T) X = X`` for centred ``X``).

A seed *trains* when its loss falls below :data:`TrainingConfig.threshold` times its
initial loss within ``steps`` Adam steps (loss: mean squared error over fresh batches,
divided by the mean square of the targets). The two variants of a seed share their
initial weights and every batch. Fisher's exact test (two-sided,
:func:`scipy.stats.fisher_exact`) compares the numbers of seeds that train.

Randomness: one ``numpy.random.Generator`` per replicate (the suite's stream); seed ``k``
uses ``torch.manual_seed(int(child_k.integers(2**63)))``, ``child_k`` the ``k``-th stream
spawned from it, inside :func:`torch.random.fork_rng`.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Mapping

import numpy as np

__all__ = ["TrainingConfig", "train_seed", "training_experiment", "seeds_table", "seeds_json",
           "fisher_test", "QUICK", "LEVEL"]


@dataclass(frozen=True)
class TrainingConfig:
    T: int = 16
    d: int = 32
    depth: int = 6
    steps: int = 150
    batch: int = 16
    lr: float = 1e-2
    seeds: int = 12
    #: a seed trains when its loss < threshold x its initial loss within ``budget`` steps
    threshold: float = 0.1
    #: the steps within which a seed must train (the curves run ``steps``; the fractions
    #: and Fisher's test at ``steps`` are kept too)
    budget: int = 60
    #: skip connection X + P X W^V (then the RMS normalisation), W^V ~ N(0, sigma_V^2)
    skip: bool = True
    #: value weights' standard deviation; ``None``: ``1/sqrt(d)`` (the skip path dominates
    #: at initialisation; measured: with 0.5 or 1 neither variant trains in 300 steps)
    sigma_V: float | None = None
    #: the loss curve is kept every ``record_every`` steps
    record_every: int = 5


QUICK = TrainingConfig()


def _rms(X, eps: float = 1e-6):
    return X / (X.pow(2).mean(dim=-1, keepdim=True) + eps).sqrt()


def _network(torch, cfg: TrainingConfig, fixed: bool):
    d, L, T = cfg.d, cfg.depth, cfg.T
    nn = torch.nn

    class AttentionOnly(nn.Module):
        def __init__(self):
            super().__init__()
            std = 1.0 / math.sqrt(d)
            self.Wq = nn.Parameter(torch.randn(L, d, d) * std)
            self.Wk = nn.Parameter(torch.randn(L, d, d) * std)
            # N(0, 1) value weights, as the suite's skip variant (variants.normalization):
            # the attention branch outweighs the skip by sqrt(d) at initialisation
            self.Wv = nn.Parameter(torch.randn(L, d, d) * (cfg.sigma_V or std))
            self.Wo = nn.Parameter(torch.randn(d, d) * std)

        def forward(self, X):
            for l in range(L):
                M = (X @ self.Wq[l]) @ (X @ self.Wk[l]).transpose(-1, -2) / math.sqrt(d)
                P = torch.softmax(M, dim=-1)
                if fixed:
                    P = P - 1.0 / T
                branch = P @ X @ self.Wv[l]
                X = _rms(X + branch if cfg.skip else branch)
            return X @ self.Wo

    return AttentionOnly()


def train_seed(seed: int, cfg: TrainingConfig, fixed: bool) -> np.ndarray:
    """Loss curve (relative to the targets' mean square) of one seed, every
    ``record_every`` steps and at the end. Same ``seed``: same initial weights (the fixed
    and standard networks have the same parameters) and same batches."""
    import torch

    torch.set_num_threads(1)
    curve = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        net = _network(torch, cfg, fixed)
        B = torch.randn(cfg.d, cfg.d) / math.sqrt(cfg.d)
        data = torch.Generator().manual_seed(int(seed) ^ 0x5EED)
        opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
        for step in range(cfg.steps + 1):
            X = torch.randn(cfg.batch, cfg.T, cfg.d, generator=data)
            Y = (X - X.mean(dim=1, keepdim=True)) @ B  # centred over the tokens
            loss = ((net(X) - Y) ** 2).mean() / (Y ** 2).mean()
            if step % cfg.record_every == 0 or step == cfg.steps:
                curve.append(float(loss.detach()))
            if step == cfg.steps:
                break
            opt.zero_grad()
            loss.backward()
            opt.step()
    return np.array(curve)


def fisher_test(trained_fix: np.ndarray, trained_std: np.ndarray) -> tuple[float, float]:
    """Two-sided Fisher exact test on the 2x2 table (fix, standard) x (trained, not):
    ``(p_value, odds_ratio)``."""
    from scipy.stats import fisher_exact

    a, b = int(np.sum(trained_fix)), int(np.size(trained_fix) - np.sum(trained_fix))
    c, d = int(np.sum(trained_std)), int(np.size(trained_std) - np.sum(trained_std))
    res = fisher_exact([[a, b], [c, d]], alternative="two-sided")
    return float(res.pvalue), float(res.statistic)


#: Fisher's test is significant below this (two-sided), the suite's default level
LEVEL = 0.01


def training_experiment(rng: np.random.Generator, T: int, p: Mapping[str, float],
                        cfg: TrainingConfig | None = None) -> dict:
    """Train ``cfg.seeds`` seeds standard and fixed at sequence length ``T`` and depth
    ``p["depth"]``; the seeds table as arrays, the fractions that train, Fisher's test."""
    base = cfg or QUICK
    cfg = TrainingConfig(**{**asdict(base), "T": int(T), "depth": int(p["depth"])})
    seeds = [int(g.integers(2**63)) for g in rng.spawn(cfg.seeds)]
    out: dict = {"seeds": np.array([s % 2**52 for s in seeds], dtype=float)}
    for name, fixed in (("std", False), ("fix", True)):
        curves = np.array([train_seed(s, cfg, fixed) for s in seeds])
        initial = curves[:, 0]
        final = curves[:, -1]
        below = curves < cfg.threshold * initial[:, None]
        ever = below.any(axis=1)
        first = np.where(ever, below.argmax(axis=1) * cfg.record_every, -1)
        trained = ever & (first <= cfg.budget)
        out.update({f"curves_{name}": curves, f"trained_{name}": trained.astype(float),
                    f"trained_full_{name}": ever.astype(float),
                    f"fraction_full_{name}": float(ever.mean()),
                    f"initial_{name}": initial, f"final_{name}": final,
                    f"steps_to_train_{name}": first.astype(float),
                    f"fraction_{name}": float(trained.mean()),
                    f"final_ratio_{name}": float(np.median(final / initial))})
    pval, odds = fisher_test(out["trained_fix"], out["trained_std"])
    out["fisher_p"], out["fisher_odds"] = pval, odds
    out["fisher_p_full"], out["fisher_odds_full"] = fisher_test(out["trained_full_fix"],
                                                                out["trained_full_std"])
    out["fix_trains_more"] = float(pval < LEVEL and out["fraction_fix"] > out["fraction_std"])
    out["config"] = np.array([cfg.T, cfg.d, cfg.depth, cfg.steps, cfg.batch, cfg.lr, cfg.seeds,
                              cfg.threshold, cfg.record_every, cfg.budget], dtype=float)
    return out


def seeds_table(m: Mapping[str, object]) -> str:
    """The seeds table of one measurement, as text."""
    budget = int(np.asarray(m["config"])[9])
    rows = [f"seed  standard: trained  step  final/initial | fix: trained  step  final/initial "
            f"(trained: loss < {float(np.asarray(m['config'])[7]):g} x initial within {budget} steps; "
            "step: first step below it)"]
    for k in range(len(m["seeds"])):
        cells = []
        for name in ("std", "fix"):
            tr = bool(np.asarray(m[f"trained_{name}"])[k])
            step = int(np.asarray(m[f"steps_to_train_{name}"])[k])
            ratio = float(np.asarray(m[f"final_{name}"])[k] / np.asarray(m[f"initial_{name}"])[k])
            cells.append(f"{'yes' if tr else 'no':>7}  {step if step >= 0 else '-':>5}  {ratio:13.4f}")
        rows.append(f"{k:4d}  {cells[0]:>31} | {cells[1]}")
    n, steps = len(m["seeds"]), int(np.asarray(m["config"])[3])
    rows.append(f"within {budget} steps: trained standard {int(np.sum(m['trained_std']))}/{n}, "
                f"fix {int(np.sum(m['trained_fix']))}/{n}; Fisher exact test (two-sided) "
                f"p = {float(m['fisher_p']):.3g}, odds ratio {float(m['fisher_odds']):.3g}")
    rows.append(f"within {steps} steps: trained standard {int(np.sum(m['trained_full_std']))}/{n}, "
                f"fix {int(np.sum(m['trained_full_fix']))}/{n}; Fisher exact test (two-sided) "
                f"p = {float(m['fisher_p_full']):.3g}")
    return "\n".join(rows)


def seeds_json(m: Mapping[str, object]) -> dict:
    """The seeds table as plain data."""
    n = len(m["seeds"])
    return {"seeds": [{"seed": int(np.asarray(m["seeds"])[k]),
                       **{f"{key}_{name}": (bool(np.asarray(m[f"{key}_{name}"])[k]) if key.startswith("trained")
                                            else float(np.asarray(m[f"{key}_{name}"])[k]))
                          for name in ("std", "fix")
                          for key in ("trained", "trained_full", "steps_to_train", "initial", "final")}}
                      for k in range(n)],
            "budget": int(np.asarray(m["config"])[9]), "steps": int(np.asarray(m["config"])[3]),
            "threshold": float(np.asarray(m["config"])[7]),
            **{k: _finite(m[k]) for k in ("fraction_std", "fraction_fix", "fisher_p", "fisher_odds",
                                          "fraction_full_std", "fraction_full_fix", "fisher_p_full")}}


def _finite(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None
