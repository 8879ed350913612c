"""training.fix (numerics/training.py): seeds table, Fisher's exact test, small and fast."""
import math

import numpy as np
import pytest

from gapverify.numerics.training import TrainingConfig, fisher_test, seeds_json, seeds_table


def test_fisher_test_matches_the_hypergeometric_tail():
    # 12/12 against 0/12: p = 2 / C(24, 12)
    p, _ = fisher_test(np.ones(12), np.zeros(12))
    assert p == pytest.approx(2 / math.comb(24, 12))
    p, _ = fisher_test(np.ones(12), np.ones(12))
    assert p == 1.0


def test_small_training_run_gives_a_table_and_a_test():
    pytest.importorskip("torch", reason="torch not installed (pip install gapverify[models])")
    from gapverify.numerics.training import training_experiment

    cfg = TrainingConfig(d=8, steps=10, batch=4, seeds=3, budget=5, record_every=5)
    m = training_experiment(np.random.default_rng(0), 8, {"depth": 2}, cfg)
    assert m["curves_std"].shape == (3, 3) and m["curves_fix"].shape == (3, 3)
    assert set(np.unique(m["trained_fix"])) <= {0.0, 1.0}
    assert 0 <= m["fisher_p"] <= 1 and m["fix_trains_more"] in (0.0, 1.0)
    text = seeds_table(m)
    assert "Fisher exact test" in text and len(text.splitlines()) == 1 + 3 + 2
    data = seeds_json(m)
    assert len(data["seeds"]) == 3 and data["budget"] == 5
    again = training_experiment(np.random.default_rng(0), 8, {"depth": 2}, cfg)
    np.testing.assert_array_equal(m["curves_fix"], again["curves_fix"])
    # the first layer of the two variants differs (inputs are not centred)
    assert not np.array_equal(m["curves_fix"], m["curves_std"])


def test_loss_curve_figure(tmp_path):
    from gapverify.reports.model_figures import loss_curves_figure

    curves = np.array([[2.0, 1.0, 0.1], [2.0, 1.5, 0.5]])
    m = {"config": np.array([8, 8, 2, 10, 4, 1e-2, 2, 0.1, 5, 5]), "curves_std": curves,
         "curves_fix": curves / 2, "trained_std": np.array([1.0, 0.0]),
         "trained_fix": np.array([1.0, 1.0]), "fisher_p": 1.0}
    loss_curves_figure(m, tmp_path / "loss")
    assert (tmp_path / "loss.png").stat().st_size > 0
