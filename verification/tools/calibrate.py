r"""``gapverify calibrate``: the measured false-failure rate of each claim.

A true statement judged at a false-alarm level of 1% per claim should fail on at most 1%
of root seeds. This command runs a profile on ``N`` root seeds, without the replay that
``run`` does after a failure (a replayed failure that does not recur is reported as
flaky; here every first failure counts), and reports per claim the fraction of seeds on
which the claim failed, with its exact (Clopper-Pearson) 95% confidence interval
(:meth:`scipy.stats.binomtest`), and how often it was not verified for lack of power.

Root seeds: seed ``i`` of a calibration from base seed ``b`` is the first word of
``SeedSequence([i, b])`` (ids first, the recorded base last), never ``b + i``. Samples go
to the store as in ``run``: an interrupted calibration keeps what it finished, and the
same command resumes it.

Coverage: every asserted limit check of every seed is kept as a
:class:`~verification.tools.coverage.LimitSample` (``ClaimCalibration.limits``), whose
pooled probability integral transforms :func:`~verification.tools.coverage.coverage_report`
turns into the empirical coverage of central intervals, a uniformity test, an ECDF plot
and the rejection rate of wrong predictions (``docs/power.md``, "Coverage").
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from gapverify.verification.judging.outcomes import Outcome
from gapverify.verification.running.defaults import DEFAULT_SEED
from gapverify.verification.tools.coverage import LimitSample, limit_samples

__all__ = ["calibration_seeds", "ClaimCalibration", "calibrate"]


def calibration_seeds(n: int, base: int = DEFAULT_SEED) -> list[int]:
    """``n`` root seeds derived from ``base`` (63-bit, so any of them can be passed to ``--seed``)."""
    return [int(np.random.SeedSequence([i, base]).generate_state(1, dtype=np.uint64)[0] >> 1)
            for i in range(n)]


@dataclass
class ClaimCalibration:
    claim: str
    seeds: int = 0
    failed: int = 0
    not_verified: int = 0
    failing_checks: dict[str, int] = field(default_factory=dict)
    failing_seeds: list[int] = field(default_factory=list)
    #: prediction -> seeds on which it lacked power (or was not judged)
    unverified: dict[str, int] = field(default_factory=dict)
    #: why the claim was not verified -> seeds (lacks power, outside domain, not assessed,
    #: recorded): a size grid below a claim's sizes reads "outside domain", not a failure
    reasons: dict[str, int] = field(default_factory=dict)
    #: every asserted limit check of every seed (the coverage's samples)
    limits: list[LimitSample] = field(default_factory=list)

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        from scipy.stats import binomtest

        ci = binomtest(self.failed, self.seeds).proportion_ci(confidence, method="exact")
        return float(ci.low), float(ci.high)

    def to_dict(self) -> dict:
        low, high = self.interval()
        return {"claim": self.claim, "seeds": self.seeds, "failed": self.failed,
                "rate": self.failed / self.seeds if self.seeds else None,
                "ci95": [low, high], "not_verified": self.not_verified,
                "unverified_predictions": self.unverified, "not_verified_reasons": self.reasons,
                "failing_checks": self.failing_checks, "failing_seeds": self.failing_seeds}


def calibrate(claims: Sequence[str], seeds: Sequence[int], store, *, profile: str = "quick",
              workers: int = 1, level: float = 0.01, on_seed=None, entries: str | None = None,
              scheduler: str | None = None, sizes: Sequence[int] | None = None,
              replicates: int | None = None) -> list[ClaimCalibration]:
    """Run ``claims`` at ``profile`` once per root seed (entries of law ``entries``, on a
    Dask ``scheduler`` if given; ``sizes``/``replicates`` override the profile's, as
    ``run --sizes/--replicates`` do); count the first-run failures and keep every
    asserted limit check (:func:`~verification.tools.coverage.limit_samples`)."""
    from gapverify.verification.running.executors import make_engine
    from gapverify.verification.running.suite import RunOptions, verify

    out = {c: ClaimCalibration(c) for c in claims}
    executor = make_engine(workers, scheduler)
    aborted = True
    try:
        for i, seed in enumerate(seeds):
            opts = RunOptions(claims=list(claims), profile=profile, seed=seed, workers=workers,
                              level=level, replay=False, entries=entries, sizes=sizes,
                              replicates=replicates)
            for res in verify(opts, store, executor=executor):
                cal = out[res.claim]
                cal.seeds += 1
                cal.limits += limit_samples(res, seed)
                if res.verdict == Outcome.FAIL:
                    cal.failed += 1
                    cal.failing_seeds.append(seed)
                    for c in res.failed:
                        cal.failing_checks[c.label] = cal.failing_checks.get(c.label, 0) + 1
                elif res.verdict != Outcome.PASS:
                    cal.not_verified += 1
                    why = str(res.reason or res.verdict)
                    cal.reasons[why] = cal.reasons.get(why, 0) + 1
                    for why in res.unverified:
                        name = why.split(" ", 1)[0]
                        cal.unverified[name] = cal.unverified.get(name, 0) + 1
            if on_seed:
                on_seed(i, seed, out)
        aborted = False
    finally:
        executor.close(abort=aborted)
    return list(out.values())


