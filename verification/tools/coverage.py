r"""Coverage of the limit tests over root seeds: simulation-based calibration.

A limit check estimates the limit :math:`L` of a statistic by :math:`\hat L` with a
standard error :math:`s` (``limit_hat``, ``limit_se`` of its result) and accepts the
prediction when :math:`|\hat L - L| \le t\,s`. When the prediction is true and the
interval is calibrated, :math:`z = (\hat L - L)/s` has the distribution :math:`F` the
test refers it to, so the probability integral transform

.. math:: u = F(z) = F\!\left(\frac{\hat L - L}{s}\right)

is uniform on :math:`(0, 1)` over root seeds: the simulation-based calibration of Talts
et al. [1]_, here with the theorem's limit in place of a prior draw. Every central
interval :math:`\hat L \pm F^{-1}(\tfrac{1+c}{2})\,s` then covers :math:`L` with
probability :math:`c` (:func:`central_coverage`, with Clopper-Pearson bounds [3]_);
:math:`u` piling up at both ends means intervals too narrow, in the middle too wide, on
one side a bias. Uniformity is tested by Kolmogorov-Smirnov (:func:`uniformity`) and seen
in the ECDF of :math:`u` minus the uniform CDF with a simultaneous 95% band
(:func:`ecdf_band`: the pointwise-adjusted band of Säilynoja et al. [2]_, by simulation,
or the DKW band [4]_), the plot of the R package SBC (:func:`plot_coverage`).

:math:`F` is the verdict's: for a *rated* check (``x_T = L + c T^{-r}`` at a stated or
fitted rate) Student-t at the Welch-Satterthwaite degrees of freedom of :math:`\hat L`,
which the results do not record: they are recomputed from the recorded per-size rows
(:func:`rated_dof`, with :func:`~verification.judging.inference.extrapolate_limit` on the
sizes the judging used), and kept only when the recomputed error is the recorded one
(else the normal). For a *rate range* or *model family* check :math:`F` is the normal:
their verdict is a union of intervals over rates or members (``limit_interval``), and
:math:`u` is that of the best fit alone; what their verdicts cover is counted apart
(``interval_coverage``).

The operating characteristic (:func:`operating_characteristic`) is the rejection rate of
the prediction made wrong, :math:`L(1 \pm e)` (:math:`\pm e` times the check's zero scale
at :math:`L = 0`) with :math:`e` a multiple of the profile's power target (quick 5%,
standard 3%), recomputed from the recorded results: :math:`|\hat L - L'| > \max(t\,s, \rho)`
with the verdict's :math:`t` and resolution :math:`\rho`, or :math:`L'` outside the
recorded interval widened to the resolution. It is the *limit test only*: a rated check also judges its rate and goodness of fit against the wrong value's
errors, which can only reject more.

The samples of one seed are not independent across a claim's checks (cases may share
draws), so the tests' nominal levels hold per check and only approximately pooled.

References
----------
.. [1] S. Talts, M. Betancourt, D. Simpson, A. Vehtari, A. Gelman, "Validating Bayesian
   inference algorithms with simulation-based calibration", arXiv:1804.06788 (2018).
.. [2] T. Säilynoja, P.-C. Bürkner, A. Vehtari, "Graphical test for discrete uniformity and
   its applications in goodness-of-fit evaluation and multiple sample comparison",
   Statistics and Computing 32, 32 (2022); the R package SBC's ``plot_ecdf_diff``.
.. [3] C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated
   in the case of the binomial", Biometrika 26 (1934) 404.
.. [4] A. Dvoretzky, J. Kiefer, J. Wolfowitz, Ann. Math. Statist. 27 (1956) 642, with
   P. Massart's constant, Ann. Probab. 18 (1990) 1269:
   :math:`P(\sup|F_n - F| > \varepsilon) \le 2 e^{-2 n \varepsilon^2}`.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

import numpy as np
from scipy import stats

from gapverify.verification.judging.checks import ROUNDOFF, CheckResult, ClaimResult
from gapverify.verification.judging.inference import extrapolate_limit, student_quantile
from gapverify.verification.judging.outcomes import Outcome
from gapverify.verification.judging.resolution import judged_scale, widened_interval

__all__ = ["FORMS", "LEVELS", "MULTIPLES", "LimitSample", "limit_samples", "rated_dof",
           "central_coverage", "uniformity", "ecdf_band", "operating_characteristic",
           "summarise", "coverage_report", "plot_coverage"]

#: The power classes of a limit check that has an estimate and a standard error.
FORMS = ("rated", "rate range", "model family")
#: Central intervals whose coverage is reported.
LEVELS = (0.5, 0.8, 0.95, 0.99)
#: Wrong predictions of the operating characteristic, in multiples of the power target.
MULTIPLES = (0.5, 1.0, 2.0)
_JUDGED = (Outcome.PASS, Outcome.FAIL, Outcome.LACKS_POWER)


@dataclass(frozen=True)
class LimitSample:
    """One asserted limit check of one root seed, as its verdict saw it. ``dof``: the
    degrees of freedom of ``limit_se`` (``inf``: the normal); ``scale``: what a relative
    error of the prediction is relative to (``|L|``, or the check's zero scale at 0);
    ``interval``: the accepted limits of a rate-range or model-family check;
    ``resolution``: the check's resolution (:func:`~verification.judging.resolution.resolution`),
    below which its limit test does not narrow."""

    claim: str
    label: str
    seed: int
    form: str
    predicted: float
    limit_hat: float
    limit_se: float
    dof: float
    q: float
    scale: float | None = None
    power_target: float | None = None
    interval: tuple[float, float] | None = None
    resolution: float | None = None

    @property
    def z(self) -> float:
        r""":math:`(\hat L - L)/s`."""
        return (self.limit_hat - self.predicted) / self.limit_se

    @property
    def u(self) -> float:
        r""":math:`F(z)`: Student-t at ``dof``, the normal when ``dof`` is infinite."""
        if math.isfinite(self.dof):
            return float(stats.t.cdf(self.z, self.dof))
        return float(stats.norm.cdf(self.z))

    @property
    def t(self) -> float:
        """The verdict's quantile: :func:`student_quantile` of the claim's ``q`` at ``dof``."""
        return student_quantile(self.q, self.dof)

    def rejects(self, value: float) -> bool:
        r"""Whether the limit test rejects the limit ``value``: outside the recorded
        interval, or :math:`|\hat L - \text{value}| > \max(t\,s, \rho)`; an interval
        widened, as the verdict widens it, to at least :math:`\hat L \pm \rho`."""
        if self.interval is not None:
            low, high = widened_interval(*self.interval, self.limit_hat, self.resolution)
            return not bool(low <= value <= high)
        return bool(abs(self.limit_hat - value) > max(self.t * self.limit_se,
                                                       self.resolution or 0.0))

    def to_dict(self) -> dict:
        out = asdict(self)
        out["interval"] = list(self.interval) if self.interval else None
        out.update(z=self.z, u=self.u)
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "LimitSample":
        fields = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        if fields.get("interval") is not None:
            fields["interval"] = tuple(fields["interval"])
        # strict JSON (verification.running.suite.json_safe) writes inf as "inf" or null
        fields["dof"] = math.inf if fields.get("dof") is None else float(fields["dof"])
        return cls(**fields)


def rated_dof(check: CheckResult) -> float:
    r"""The Welch-Satterthwaite degrees of freedom of a rated check's :math:`\hat L`,
    recomputed from its recorded rows: the sizes the judging kept (mean error above
    round-off), :math:`x_T = L + c\,T^{-r}` at :math:`r = \max(\text{rate}, \hat\beta)`
    (:func:`~verification.judging.inference.extrapolate_limit`). The degrees of freedom do
    not depend on the means, so a check whose means the theory's correction moved is
    recomputed all the same; the recomputed error must be the recorded one (up to the
    Birge factor, which the correction changes), else ``inf`` (the normal). A result that
    records its ``limit_dof`` (judged since that field exists) gives it directly."""
    if getattr(check, "limit_dof", None) is not None:
        return float(check.limit_dof)
    if check.rate is None or check.beta is None or not check.rows:
        return math.inf
    floor = ROUNDOFF * max(1.0, abs(check.predicted))
    rows = [r for r in check.rows if r.error > floor]
    if len(rows) < 3:
        return math.inf
    T, mean, se, n = (np.array([getattr(r, k) for r in rows], dtype=float)
                      for k in ("T", "mean", "se", "n"))
    try:
        fit = extrapolate_limit(T, mean, se, max(check.rate, check.beta), n)
    except (ValueError, np.linalg.LinAlgError):
        return math.inf
    if check.corrected:
        same = fit.se_a / fit.birge <= check.limit_se * (1 + 1e-6)
    else:
        same = math.isclose(fit.se_a, check.limit_se, rel_tol=1e-6)
    return float(fit.dof_a) if same else math.inf


def _sampled(check: CheckResult) -> bool:
    """Whether the check's estimate carries sampling error: a model family judges a
    statistic with a zero error at some size as deterministic (its ``limit_se`` is then
    the finite-size models' spread, the same in every seed: no draw to calibrate), and a
    rated or rate-range check needs some size with an error."""
    ok = [math.isfinite(r.se) and r.se > 0 for r in check.rows]
    return bool(ok) and (all(ok) if check.power_class == "model family" else any(ok))


def _sample(check: CheckResult, claim: ClaimResult, seed: int) -> LimitSample | None:
    if (check.kind != "limit" or check.power_class not in FORMS or check.verdict not in _JUDGED
            or not _sampled(check) or check.limit_hat is None or check.limit_se is None
            or not math.isfinite(check.limit_hat)
            or not (math.isfinite(check.limit_se) and check.limit_se > 0)):
        return None
    dof = rated_dof(check) if check.power_class == "rated" else math.inf
    if dof < 1:  # no error estimate: a test that cannot reject has no coverage to measure
        return None
    scale = judged_scale(check)
    interval = tuple(check.limit_interval) if check.limit_interval else None
    return LimitSample(claim=claim.claim, label=check.label, seed=int(seed),
                       form=check.power_class, predicted=float(check.predicted),
                       limit_hat=float(check.limit_hat), limit_se=float(check.limit_se),
                       dof=float(dof), q=float(claim.q), scale=scale,
                       power_target=check.power_target, interval=interval,
                       resolution=check.resolution)


def limit_samples(result: ClaimResult, seed: int) -> list[LimitSample]:
    """The asserted, judged limit checks of one claim's result (kind ``limit``, a rated,
    rate-range or model-family check with an estimate and a finite error; not exact,
    recorded, outside its domain or not assessed, nor a deterministic statistic), at root
    seed ``seed``."""
    return [s for c in result.checks if (s := _sample(c, result, seed)) is not None]


def _clopper_pearson(k: int, n: int, confidence: float = 0.95) -> list[float]:
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence, method="exact")
    return [float(ci.low), float(ci.high)]


def central_coverage(u: np.ndarray, levels: Sequence[float] = LEVELS) -> list[dict]:
    r"""For each ``level`` :math:`c`, how many :math:`u` lie in the central interval
    :math:`[\tfrac{1-c}{2}, \tfrac{1+c}{2}]` (:math:`|2u - 1| \le c`: the central
    :math:`c` interval of :math:`\hat L` covers :math:`L`), with the exact
    (Clopper-Pearson) 95% interval of that rate [3]_."""
    u = np.asarray(u, dtype=float)
    out = []
    for c in levels:
        k, n = int(np.sum(np.abs(2 * u - 1) <= c)), int(u.size)
        out.append({"level": c, "covered": k, "n": n, "rate": k / n if n else None,
                    "ci95": _clopper_pearson(k, n) if n else None})
    return out


def uniformity(u: np.ndarray) -> dict | None:
    r"""Kolmogorov-Smirnov test of :math:`u \sim U(0, 1)`: the statistic
    :math:`D = \sup_x |F_n(x) - x|` and its exact p-value (``scipy.stats.kstest``), and
    the mean of :math:`u` (1/2 when unbiased, standard error :math:`1/\sqrt{12 n}`)."""
    u = np.asarray(u, dtype=float)
    if u.size == 0:
        return None
    res = stats.kstest(u, "uniform")
    return {"ks": float(res.statistic), "p": float(res.pvalue), "mean_u": float(u.mean()),
            "mean_u_se": 1 / math.sqrt(12 * u.size)}


def _pointwise_p(counts: np.ndarray, n: int, x: np.ndarray) -> np.ndarray:
    # two-sided binomial tail of each ECDF count under U(0, 1) (Säilynoja et al. eq. 4)
    low = stats.binom.cdf(counts, n, x)
    high = stats.binom.sf(counts - 1, n, x)
    return np.minimum(1.0, 2 * np.minimum(low, high))


def ecdf_band(n: int, alpha: float = 0.05, points: int = 99, method: str = "simulated",
              draws: int = 2000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""A simultaneous :math:`1 - \alpha` band for the ECDF of ``n`` uniforms at the grid
    :math:`x_k = k/(\text{points} + 1)`: returns ``(x, low, high)``, the band of the ECDF
    itself (subtract ``x`` to plot the difference).

    ``simulated`` [2]_: the band of pointwise binomial intervals at one level
    :math:`\gamma`, chosen by simulation so that a uniform sample's ECDF leaves it at some
    grid point with probability :math:`\alpha` (``draws`` samples: :math:`\gamma` is the
    :math:`\alpha` quantile of each sample's smallest pointwise two-sided tail). Narrower
    than DKW near 0 and 1, where the ECDF's variance :math:`x(1-x)/n` is small.
    ``dkw`` [4]_: :math:`x \pm \varepsilon`, :math:`\varepsilon = \sqrt{\log(2/\alpha)/2n}`
    (conservative)."""
    x = np.arange(1, points + 1) / (points + 1)
    if method == "dkw":
        eps = math.sqrt(math.log(2 / alpha) / (2 * n))
        return x, np.clip(x - eps, 0, 1), np.clip(x + eps, 0, 1)
    if method != "simulated":
        raise ValueError(f"parameter 'method' must be 'simulated' or 'dkw', got {method!r}")
    rng = np.random.default_rng(seed)
    sims = np.sort(rng.random((draws, n)), axis=1)
    counts = np.stack([np.searchsorted(s, x, side="right") for s in sims])
    gamma = float(np.quantile(_pointwise_p(counts, n, x).min(axis=1), alpha))
    low = stats.binom.ppf(gamma / 2, n, x) / n
    high = stats.binom.isf(gamma / 2, n, x) / n
    return x, low, high


def operating_characteristic(samples: Sequence[LimitSample],
                             multiples: Sequence[float] = (0.0, *MULTIPLES)) -> list[dict]:
    r"""Rejection rate of the prediction made wrong by :math:`e = m \cdot` (the check's
    power target) for each multiple ``m``, both signs: :math:`L' = L \pm e\,\text{scale}`,
    rejected when :meth:`LimitSample.rejects` (the limit test only, recomputed from the
    recorded estimate; ``m = 0`` is the truth: the limit test's false-failure rate).
    Samples without a power target or a scale are left out."""
    usable = [s for s in samples if s.power_target and s.scale]
    out = []
    for m in multiples:
        up = sum(s.rejects(s.predicted + m * s.power_target * s.scale) for s in usable)
        down = sum(s.rejects(s.predicted - m * s.power_target * s.scale) for s in usable)
        n = len(usable)
        both = up + down
        out.append({"multiple": m, "n": n, "rejected_up": up, "rejected_down": down,
                    "rate": both / (2 * n) if n else None,
                    "ci95": _clopper_pearson(both, 2 * n) if n else None})
    return out


def _covered(samples: Sequence[LimitSample]) -> dict | None:
    # the verdict's own interval (t s at the claim's level, or the recorded interval)
    # contains the true prediction
    if not samples:
        return None
    k = sum(not s.rejects(s.predicted) for s in samples)
    return {"covered": k, "n": len(samples), "rate": k / len(samples),
            "ci95": _clopper_pearson(k, len(samples))}


def summarise(samples: Sequence[LimitSample], levels: Sequence[float] = LEVELS) -> dict:
    """Coverage, uniformity and operating characteristic of ``samples`` (one claim's, or
    all pooled)."""
    u = np.array([s.u for s in samples], dtype=float)
    forms = {f: sum(s.form == f for s in samples) for f in FORMS}
    student = sum(math.isfinite(s.dof) for s in samples)
    dofs = [s.dof for s in samples if math.isfinite(s.dof)]
    return {"n": len(samples), "forms": {f: k for f, k in forms.items() if k},
            "student_t": student, "normal": len(samples) - student,
            "dof_range": [min(dofs), max(dofs)] if dofs else None,
            "coverage": central_coverage(u, levels), "uniformity": uniformity(u),
            "verdict_coverage": _covered(samples),
            "interval_coverage": _covered([s for s in samples if s.interval is not None]),
            "operating_characteristic": operating_characteristic(samples)}


def coverage_report(samples: Iterable[LimitSample]) -> dict:
    """Pooled, per-claim and per-form (rated, rate range, model family) :func:`summarise`,
    with every sample (JSON-ready)."""
    samples = list(samples)
    claims = sorted({s.claim for s in samples})
    return {"pooled": summarise(samples),
            "claims": {c: summarise([s for s in samples if s.claim == c]) for c in claims},
            "forms": {f: summarise([s for s in samples if s.form == f])
                      for f in FORMS if any(s.form == f for s in samples)},
            "samples": [s.to_dict() for s in samples]}


def _panel(ax, u: np.ndarray, title: str, alpha: float = 0.05) -> None:
    x, low, high = ecdf_band(u.size, alpha)
    u = np.sort(u)
    fine = np.linspace(0, 1, 1001)
    ax.fill_between(x, low - x, high - x, step="mid", color="0.85",
                    label=f"simultaneous {1 - alpha:.0%} band (uniform u)")
    ax.axhline(0, color="0.5", lw=0.8)
    ax.plot(fine, np.searchsorted(u, fine, side="right") / u.size - fine, color="C0", lw=1.3,
            label="ECDF(u) - u")
    at = np.searchsorted(u, x, side="right") / u.size
    outside = (at < low) | (at > high)
    if outside.any():
        ax.plot(x[outside], at[outside] - x[outside], "o", color="C3", ms=3,
                label="outside the band")
    p = stats.kstest(u, "uniform").pvalue
    ax.set_title(f"{title}\nn = {u.size}, KS p = {p:.2g}, mean u = {u.mean():.3f}", fontsize=9)
    ax.set_xlim(0, 1)
    ax.set_xlabel("u = F((L_hat - L)/se)", fontsize=8)
    ax.tick_params(labelsize=7)


def plot_coverage(samples: Sequence[LimitSample], path: str, per_claim: bool = True,
                  alpha: float = 0.05) -> None:
    """The ECDF of ``u`` minus the uniform CDF with its simultaneous band
    (:func:`ecdf_band`, simulated): pooled, per form (rated, rate range, model family) and,
    with ``per_claim``, per claim; written as a PNG to ``path`` (matplotlib, Agg)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [("all limit checks, pooled", list(samples))]
    groups += [(f"{f} checks ({'Student-t' if f == 'rated' else 'normal'} F)",
                [s for s in samples if s.form == f]) for f in FORMS]
    if per_claim:
        groups += [(c, [s for s in samples if s.claim == c])
                   for c in sorted({s.claim for s in samples})]
    groups = [(t, g) for t, g in groups if g]
    if not groups:
        raise ValueError("no limit check to plot")
    cols = min(len(groups), 4)
    rows = math.ceil(len(groups) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 2.9 * rows), squeeze=False)
    for ax, (title, group) in zip(axes.flat, groups):
        _panel(ax, np.array([s.u for s in group]), title, alpha)
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    axes[0, 0].set_ylabel("ECDF - uniform CDF", fontsize=8)
    legend = {}
    for ax in axes.flat:
        for h, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, h)
    fig.legend(list(legend.values()), list(legend), loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.06 if rows == 1 else 0.03, 1, 1))
    fig.savefig(path, dpi=130)
    plt.close(fig)
