"""tests for verification/tools/paper.py: the paper's depth experiment (rebuttal Figure VII)."""
import numpy as np
import pytest

from gapverify.verification.tools.paper import depth_profile, write_outputs


@pytest.fixture(scope="module")
def profile():
    return depth_profile(T=60, depth=4, seeds=4, gamma=1.0, root_seed=3)


def test_standard_collapses_and_fixed_does_not(profile):
    rows = profile.rows()
    # standard attention: sr(Sigma_l) -> 1 from layer 2 on (rank collapse in depth)
    assert all(abs(r["standard_mean"] - 1) < 1e-3 for r in rows[1:])
    # the fix keeps the stable rank of order T * (1 + l(1+gamma)) / x*_l^2 (3.95 at l = 1
    # for T = 60), above the collapsed standard value at every layer
    assert rows[0]["fixed_mean"] > 0.5 * rows[0]["limit_fixed"] > 1.5
    assert all(r["fixed_mean"] > r["standard_mean"] + 0.4 for r in rows)


def test_limits_come_from_the_engine(profile):
    # depth 1, gamma 1: T * 16/243; depth 2: T * 4^4 ... FC_4: sr(Sigma)/T = 4^8 / 5^9
    assert profile.limit_fixed[0] == pytest.approx(60 * 16 / 243, rel=1e-12)
    assert profile.limit_fixed[1] == pytest.approx(60 * 4**8 / 5**9, rel=1e-12)
    assert np.all(profile.limit_standard == 1.0)


def test_same_seed_same_numbers():
    a = depth_profile(T=32, depth=2, seeds=2, root_seed=5)
    b = depth_profile(T=32, depth=2, seeds=2, root_seed=5)
    np.testing.assert_array_equal(a.fixed, b.fixed)
    assert not np.array_equal(a.fixed, depth_profile(T=32, depth=2, seeds=2, root_seed=6).fixed)


def test_outputs_are_written(profile, tmp_path):
    paths = write_outputs(profile, tmp_path)
    assert {p.name for p in paths} == {"depth_profile.csv", "depth_profile.png", "depth_profile.pdf"}
    lines = (tmp_path / "depth_profile.csv").read_text().splitlines()
    assert lines[0].startswith("layer,") and len(lines) == 1 + 4
