"""tests for ``markov.edge`` (numerics.array_api.bulk_edge), the long profile's float32
experiment: every statistic against float64 LAPACK on the same draw, within its stated
tolerance (a Ritz value's residual ``1e-5 s_1``, plus float32 rounding of the entries)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import linalg

from gapverify.numerics import array_api
from gapverify.numerics.backends import Backend
from gapverify.numerics.edge import tracy_widom_edge
from gapverify.numerics.experiments import EXPERIMENTS


@pytest.mark.parametrize("T,s2", [(96, math.log(2)), (200, 0.5)])
def test_bulk_edge_matches_float64_lapack_on_the_same_draw(T, s2):
    p = {"s2": s2, "mu": -s2 / 2}
    m = EXPERIMENTS["markov.edge"](np.random.default_rng(7), T, p)
    # the same stream, the same float32 draw, decomposed in float64
    A32 = array_api.softmax_markov(Backend("numpy", "cpu", "float32"), np.random.default_rng(7),
                                   T, p["mu"], s2)
    A = A32.astype(np.float64)
    s = linalg.svdvals(A)
    perp = A - 1.0 / T
    sp = linalg.svdvals(perp)
    frob = float(np.sum(perp**2))
    root = math.sqrt(T)
    # Ritz values are accepted at residual <= 1e-5 s_1 (float32): |theta - s| <= 1e-5 s_1;
    # the float32 rows of A add T eps_32 relative at most
    tol = 1e-5 + T * float(np.finfo(np.float32).eps)
    assert m["s1"] == pytest.approx(s[0], rel=tol)
    assert m["sqrtT_s2"] == pytest.approx(s[1] * root, abs=tol * s[0] * root)
    assert m["sqrtT_s1_Aperp"] == pytest.approx(sp[0] * root, rel=tol)
    assert m["sr_Aperp_over_T"] == pytest.approx(frob / sp[0] ** 2 / T, rel=3 * tol)
    assert m["sr_Aperp_edge_over_T"] == pytest.approx(frob / tracy_widom_edge(sp) / T, rel=10 * tol)
    assert m["max_entry_Aperp"] == pytest.approx(np.max(np.abs(perp)) * root, rel=1e-12)
    assert m["lanczos_tol"] == 1e-5 and m["dtype_eps"] == float(np.finfo(np.float32).eps)


def test_bulk_edge_refuses_an_entry_law():
    with pytest.raises(ValueError, match="parameter '--entries'"):
        EXPERIMENTS["markov.edge"](np.random.default_rng(0), 32,
                                   {"s2": 0.5, "mu": 0.0, "entries": "exponential"})
