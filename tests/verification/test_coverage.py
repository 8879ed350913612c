"""Coverage of the limit checks over root seeds (verification/tools/coverage.py): the
probability integral transforms of a calibrated estimator are uniform and cover at their
levels, a biased or over-confident one is detected, the ECDF band holds its level, the
operating characteristic counts the limit test's rejections, and the degrees of freedom
of a rated check are recomputed from its rows."""
from __future__ import annotations

import json
import math
import types

import numpy as np
import pytest
from scipy import stats

from gapverify.verification.judging.checks import CheckResult, ClaimResult, SizeRow
from gapverify.verification.judging.inference import extrapolate_limit, two_sided_quantile
from gapverify.verification.judging.outcomes import Outcome
from gapverify.verification.tools.coverage import (
    LEVELS, LimitSample, central_coverage, coverage_report, ecdf_band, limit_samples,
    operating_characteristic, plot_coverage, rated_dof, uniformity)

Q = two_sided_quantile(0.01, 6)


def _samples(n: int, shift: float = 0.0, se_factor: float = 1.0, dof: float = 10.0,
             seed: int = 0, claim: str = "c") -> list[LimitSample]:
    """``n`` limit estimates L_hat = L + se (t_dof + shift), reported with the error
    ``se * se_factor`` (a factor below 1: over-confident)."""
    rng = np.random.default_rng(seed)
    z = rng.standard_t(dof, n) if math.isfinite(dof) else rng.standard_normal(n)
    se = 0.01
    return [LimitSample(claim=claim, label="x", seed=i, form="rated", predicted=1.0,
                        limit_hat=1.0 + se * (zi + shift), limit_se=se * se_factor, dof=dof,
                        q=Q, scale=1.0, power_target=0.05) for i, zi in enumerate(z)]


def test_a_calibrated_estimator_covers_at_every_level_and_is_uniform():
    u = np.array([s.u for s in _samples(2000)])
    for c in central_coverage(u):
        low, high = c["ci95"]
        assert low <= c["level"] <= high, c
    assert uniformity(u)["p"] > 0.01
    assert abs(uniformity(u)["mean_u"] - 0.5) < 3 * uniformity(u)["mean_u_se"]


def test_a_biased_or_overconfident_estimator_is_detected():
    biased = np.array([s.u for s in _samples(1000, shift=0.4)])
    assert uniformity(biased)["p"] < 1e-4 and uniformity(biased)["mean_u"] > 0.55
    narrow = np.array([s.u for s in _samples(1000, se_factor=0.7)])
    c95 = central_coverage(narrow, [0.95])[0]
    assert c95["ci95"][1] < 0.95 and uniformity(narrow)["p"] < 1e-4
    # the normal read for a t statistic over-disperses u: too few inside the 99% interval
    normal = [LimitSample(**{**s.__dict__, "dof": math.inf}) for s in _samples(1000, dof=3)]
    assert central_coverage(np.array([s.u for s in normal]), [0.99])[0]["ci95"][1] < 0.99


def test_the_simulated_band_holds_its_level_and_is_narrower_than_dkw_at_the_ends():
    n = 100
    x, low, high = ecdf_band(n, 0.05, draws=2000, seed=1)
    rng = np.random.default_rng(2)
    left = 0
    for _ in range(400):
        F = np.searchsorted(np.sort(rng.random(n)), x, side="right") / n
        left += bool(np.any((F < low) | (F > high)))
    assert 0.02 <= left / 400 <= 0.09
    _, dlow, dhigh = ecdf_band(n, 0.05, method="dkw")
    assert dhigh[50] - x[50] == pytest.approx(math.sqrt(math.log(40) / 200))
    assert (high - low)[0] < (dhigh - dlow)[0] and (high - low)[-1] < (dhigh - dlow)[-1]
    with pytest.raises(ValueError, match="method"):
        ecdf_band(n, method="nonsense")


def test_operating_characteristic_counts_the_limit_tests_rejections():
    samples = _samples(400, dof=math.inf)  # se = 1% of L: 2.5% off is 2.5 se, 10% is 10 se
    rows = {r["multiple"]: r for r in operating_characteristic(samples)}
    assert rows[0.0]["rate"] < 0.01  # the truth: the test's level (1% over 6 tests)
    assert rows[0.5]["rate"] < rows[1.0]["rate"] <= rows[2.0]["rate"] == 1.0
    expected = stats.norm.sf(Q + 2.5) + stats.norm.cdf(2.5 - Q)  # P(|z - 2.5| > q), z ~ N(0, 1)
    assert rows[0.5]["rate"] == pytest.approx(expected, abs=0.06)
    # a recorded interval is what the verdict reads: outside it is rejected
    boxed = LimitSample("c", "x", 0, "rate range", 1.0, 1.0, 0.01, math.inf, Q, 1.0, 0.05,
                        (0.99, 1.03))
    assert not boxed.rejects(1.0) and boxed.rejects(0.975) and not boxed.rejects(1.025)
    assert operating_characteristic([boxed], [0.5])[0]["rejected_down"] == 1


def test_the_limit_tests_resolution_is_read_as_the_verdict_reads_it():
    # 1.0011 +- 0.0003: the interval alone rejects 1; the resolution (1.25% of L_hat) not,
    # and still rejects a limit 2.5% (half the 5% target) off
    fine = LimitSample("c", "x", 0, "rated", 1.0, 1.0011, 0.0003, math.inf, Q, 1.0, 0.05)
    assert fine.rejects(1.0)
    rho = 0.25 * 0.05 * 1.0011
    fine = LimitSample("c", "x", 0, "rated", 1.0, 1.0011, 0.0003, math.inf, Q, 1.0, 0.05,
                       resolution=rho)
    assert not fine.rejects(1.0) and fine.rejects(0.975) and fine.rejects(1.025 + 0.0011)
    boxed = LimitSample("c", "x", 0, "rate range", 1.0, 1.0011, 0.0003, math.inf, Q, 1.0,
                        0.05, (1.0005, 1.0017), resolution=rho)
    assert not boxed.rejects(1.0) and boxed.rejects(0.975)
    assert LimitSample.from_dict(boxed.to_dict()) == boxed


def _rated_check(rng, corrected=False, **kw) -> CheckResult:
    T = np.array([16, 23, 32, 45, 64])
    n = np.array([8, 6, 5, 4, 4])
    means = 1 + 0.5 / T + rng.normal(0, 0.01, T.size) / np.sqrt(n)
    se = 0.01 / np.sqrt(n) * rng.uniform(0.7, 1.3, T.size)
    fit = extrapolate_limit(T, means, se, 1.0, n)
    rows = [SizeRow(int(t), int(k), float(m), float(s), abs(m - 1), s)
            for t, k, m, s in zip(T, n, means, se)]
    base = dict(claim="c", label="x @ s2=1", statistic="x", kind="limit", status="derived",
                predicted=1.0, rate=1.0, verdict=Outcome.PASS, reason="", rows=rows, beta=0.5,
                limit_hat=fit.a, limit_se=fit.se_a, power_class="rated", power_target=0.05,
                corrected=corrected)
    return CheckResult(**{**base, **kw}), fit


def test_rated_dof_is_the_judgings_and_only_judged_limit_checks_are_kept():
    rng = np.random.default_rng(3)
    check, fit = _rated_check(rng)
    assert rated_dof(check) == pytest.approx(fit.dof_a) and 3 <= fit.dof_a <= 23
    wrong = CheckResult(**{**check.__dict__, "limit_se": 2 * fit.se_a})
    assert rated_dof(wrong) == math.inf  # not the judging's error: the normal
    skipped = [CheckResult(**{**check.__dict__, **kw}) for kw in (
        {"kind": "distance"}, {"verdict": Outcome.RECORDED}, {"power_class": "exact"},
        {"verdict": Outcome.OUTSIDE_DOMAIN}, {"limit_se": math.inf}, {"limit_hat": None},
        {"rows": [SizeRow(r.T, r.n, r.mean, 0.0, r.error, 0.0) for r in check.rows]})]
    claim = ClaimResult("c", "derived", Outcome.PASS, [check, *skipped], {}, [16], 4, 1, q=Q)
    (sample,) = limit_samples(claim, seed=7)
    assert sample.dof == pytest.approx(fit.dof_a) and sample.seed == 7 and sample.q == Q
    assert sample.u == pytest.approx(stats.t.cdf(sample.z, fit.dof_a))


def test_report_round_trips_through_strict_json_and_draws_its_figure(tmp_path):
    from gapverify.verification.running.suite import json_safe

    samples = _samples(60, claim="a") + _samples(40, dof=math.inf, seed=5, claim="b")
    report = coverage_report(samples)
    assert set(report["claims"]) == {"a", "b"} and report["pooled"]["n"] == 100
    assert set(report["forms"]) == {"rated"} and report["forms"]["rated"]["n"] == 100
    assert report["pooled"]["student_t"] == 60 and report["pooled"]["normal"] == 40
    assert [c["level"] for c in report["pooled"]["coverage"]] == list(LEVELS)
    doc = json.loads(json.dumps(json_safe(report), allow_nan=False))
    back = [LimitSample.from_dict(d) for d in doc["samples"]]
    assert [s.u for s in back] == pytest.approx([s.u for s in samples])
    path = tmp_path / "coverage.png"
    plot_coverage(samples, str(path))
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_cli_prints_the_coverage_and_writes_json_and_figure(tmp_path, capsys):
    from gapverify.cli.calibrate import _report
    from gapverify.verification.tools.calibrate import ClaimCalibration

    cal = ClaimCalibration("a", seeds=20, limits=_samples(40, claim="a"))
    args = types.SimpleNamespace(level=0.01, profile="quick", seed=1, json=str(tmp_path / "c.json"),
                                 figure=None)  # the figure: the test above
    _report(args, [cal], list(range(20)))
    out = capsys.readouterr().out
    assert "Coverage of the limit checks" in out and "pooled" in out and "m = 2" in out
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["coverage"]["pooled"]["n"] == 40 and doc["claims"][0]["claim"] == "a"


def test_a_judged_rated_check_records_the_degrees_of_freedom_coverage_uses():
    # the judging writes limit_dof; coverage reads it, and it is the recomputed one
    from gapverify.verification.claims.model import Check, Claim, Prediction, Profile
    from gapverify.verification.judging.verdict import judge_claim

    rng = np.random.default_rng(5)
    sizes = (64, 128, 256, 512)
    claim = Claim(id="toy.dof", title="toy", parameters=("s2",), experiment="none",
                  predictions=(Prediction("x", "derived", lambda p: 1, "x"),),
                  checks=(Check("x", "x", "limit", rate=1.0, rate_status="derived"),),
                  references=(), profiles={"quick": Profile(sizes, 6, 0.05)})
    data = {T: [{"x": 1 + 2 / T + 0.01 * rng.standard_normal()} for _ in range(6)] for T in sizes}
    (check,) = judge_claim(claim, data, {"s2": 1.0}, q=Q, root_seed=0).checks
    assert check.limit_dof is not None and 3 <= check.limit_dof <= 23
    recomputed = rated_dof(CheckResult(**{**check.__dict__, "limit_dof": None}))
    assert rated_dof(check) == check.limit_dof == pytest.approx(recomputed)
