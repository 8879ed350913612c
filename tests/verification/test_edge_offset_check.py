"""The edges' Tracy-Widom offset is judged, not only subtracted (issue 38, item 7): the
offset of sqrt(T) s_2(A) (markov.singular_law's edge; the same statistic and offset as
markov.outliers' sqrtT_s2, and the offset of fix.spectrum's sqrt(T) s_1(Aperp)) and the
fixed Jacobian's two offsets each have a second check, ``x_T - offset = L + c/T`` for
``s2 <= 1/4``, and a sign-flipped offset (``theory.edge_offset``, monkeypatched) fails it
on real samples where the true offset passes. The samples are drawn here for one case
(seconds), not read from a quick run."""
import math

import numpy as np
import pytest

from gapverify.numerics import experiments
from gapverify.numerics.statistics import top_singular_values
from gapverify.theory import edge_offset
from gapverify.verification.claims.registry import REGISTRY
from gapverify.verification.judging.inference import two_sided_quantile
from gapverify.verification.judging.verdict import count_tests, judge_claim

#: claim -> the edge prediction whose offset is judged (its statistic has the same name)
EDGES = {"markov.singular_law": "edge", "gradient.input_jacobian": "jacobian_fix"}
#: the edges that subtract the same offset as markov.singular_law's, judged there
SHARED = {"markov.outliers": "sqrtT_s2", "fix.spectrum": "sqrtT_s1_Aperp"}
#: root seed of the samples below: chosen before these tests were first run, never changed
SEED = 31415


@pytest.mark.parametrize("claim_id", sorted(EDGES))
def test_every_edge_judges_its_offset_with_a_one_over_T_model(claim_id):
    claim = REGISTRY.get(claim_id)
    mine = [c for c in claim.checks if c.prediction == EDGES[claim_id]]
    ranged = [c for c in mine if c.rate_range is not None]
    offset = [c for c in mine if c.models]
    assert len(ranged) == 1 and len(offset) == 1
    assert ranged[0].correction is offset[0].correction  # the same offset, judged
    assert [m.formula for m in offset[0].models] == ["L + c/T"]
    assert offset[0].applies({"s2": 0.25})
    assert not offset[0].applies({"s2": 0.35}) and not offset[0].applies({"s2": 0.5})


@pytest.mark.parametrize("claim_id", sorted(SHARED))
def test_the_other_edges_of_A_subtract_the_offset_judged_by_the_singular_law(claim_id):
    edge = next(c for c in REGISTRY.get("markov.singular_law").checks if c.models)
    (check,) = [c for c in REGISTRY.get(claim_id).checks if c.prediction == SHARED[claim_id]]
    assert check.correction is edge.correction and check.rate_range is not None


def _judge(claim, case, data, prediction, profile="quick"):
    """The checks of ``prediction`` at ``case``, at the claim's Bonferroni level."""
    prof = claim.profiles[profile]
    cases = claim.cases_for(profile)
    q = two_sided_quantile(0.01, sum(count_tests([claim], {claim.id: len(prof.sizes)},
                                                 {claim.id: c}) for c in cases))
    res = judge_claim(claim, data, case, q=q, root_seed=SEED, power_target=prof.power,
                      measure=False, only=[prediction])
    return [c for c in res.checks if c.verdict != "outside domain"]


def _flip(monkeypatch):
    right = edge_offset.tracy_widom_coefficient()
    monkeypatch.setattr(edge_offset, "tracy_widom_coefficient", lambda: -right)
    assert float(edge_offset.tracy_widom_offset(0.5, 64.0)) > 0


def _assert_flip_fails(monkeypatch, claim, case, data, prediction, profile="quick"):
    true = _judge(claim, case, data, prediction, profile)
    assert len(true) == 2 and all(c.verdict == "pass" for c in true), [c.reason for c in true]
    _flip(monkeypatch)
    flipped = _judge(claim, case, data, prediction, profile)
    failed = [c for c in flipped if c.verdict == "fail"]
    assert failed and all(c.models for c in failed), [c.reason for c in flipped]


@pytest.mark.slow
def test_a_sign_flipped_offset_fails_the_fixed_jacobian(monkeypatch):
    # ||W_1||_2^2 ||Aperp||_2^2 at gamma = 1, s2 = 1/4: both squared edges' offsets
    claim = REGISTRY.get("gradient.input_jacobian")
    case = claim.cases_for("quick")[0]
    assert case["s2"] == 0.25 and case["gamma"] == 1.0
    prof = claim.profiles["quick"]
    # 24 draws per size (the hand-typed quick count before the draws were sized by the run)
    data = {T: [experiments.input_jacobian(np.random.default_rng([SEED, T, r]), T, case)
                for r in range(24)] for T in prof.sizes}
    _assert_flip_fails(monkeypatch, claim, case, data, "jacobian_fix")


@pytest.mark.slow
def test_a_sign_flipped_offset_fails_the_edge_of_A(monkeypatch):
    # sqrt(T) s_2(A) at s2 = 1/4 (markov.singular_law's edge), by Lanczos rather than the
    # experiment's full spectrum, at the standard profile's sizes and replicates: the quick
    # profile's 48 draws reject the flipped offset in most seeds, not all (docs/power.md,
    # item 10)
    claim = REGISTRY.get("markov.singular_law")
    case = claim.cases_for("standard")[0]
    assert case["s2"] == 0.25
    prof = claim.profiles["standard"]
    data = {}
    for T in prof.sizes:
        data[T] = []
        for r in range(64):  # the hand-typed standard count before the draws were sized
            A = experiments._attention(np.random.default_rng([SEED, T, r]), T, case)
            data[T].append({"edge": float(top_singular_values(A, 2)[1] * math.sqrt(T))})
    _assert_flip_fails(monkeypatch, claim, case, data, "edge", profile="standard")
