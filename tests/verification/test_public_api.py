"""tests for the public names of gapverify (gapverify/__init__.py, lazily imported) and of
the claim-authoring module (verification/claims/authoring.py): each resolves, the
finite-size model families are among them, and importing the authoring names first does
not break the plug-ins (which import those names while the registry loads)."""
import subprocess
import sys

import numpy as np

import gapverify
from gapverify.verification.claims import authoring

AUTHORING = ["Claim", "Prediction", "Check", "Profile", "Parameter", "PARAMETERS",
             "geometric_sizes", "profiles", "FiniteSizeModel", "UNBIASED", "ONE_OVER_T",
             "ONE_OVER_T_SERIES", "ONE_OVER_LOG_T"]


def test_every_public_name_resolves():
    for name in gapverify.__all__:
        assert getattr(gapverify, name) is not None, name
    for name in authoring.__all__:
        assert getattr(authoring, name) is not None, name


def test_authoring_names_are_exported_from_gapverify():
    assert set(AUTHORING) <= set(authoring.__all__)
    assert set(authoring.__all__) <= set(gapverify.__all__)  # every authoring name, POWER_TARGETS too
    for name in authoring.__all__:
        assert getattr(gapverify, name) is getattr(authoring, name), name


def test_finite_size_model_families_are_the_judging_ones():
    from gapverify.verification.judging.inference import FiniteSizeModel, family_limit

    assert gapverify.FiniteSizeModel is FiniteSizeModel
    assert [m.formula for m in gapverify.ONE_OVER_T_SERIES] == ["L + c/T", "L + c/T + e/T^2"]
    # a member family of one's own goes into a Check and into the judging's fit
    member = gapverify.FiniteSizeModel("1/T^2", "L + c/T^2", lambda T, L, c: L + c / T ** 2,
                                       (0.0,))
    check = gapverify.Check("p", "p", "limit", models=(member,) + gapverify.ONE_OVER_T)
    assert len(check.models) == 2
    T = np.array([64.0, 128.0, 256.0, 512.0])
    fit = family_limit(T, 2.0 + 3.0 / T ** 2, np.full(4, 1e-3), check.models, q=3.0,
                       n=np.full(4, 24))
    assert fit.accepts(2.0)


def test_importing_the_authoring_names_first_loads_the_plugins():
    """``from gapverify import Check`` first, as a claim file does: the registry (and the
    plug-ins, which import ``profiles`` from gapverify) loads without a warning."""
    out = subprocess.run([sys.executable, "-c", "from gapverify import Check, FiniteSizeModel\n"
                          "import gapverify\nprint(len(gapverify.CLAIMS))"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "plug-in not loaded" not in out.stderr, out.stderr


def test_the_version_is_the_installed_distributions():
    from importlib.metadata import version

    assert gapverify.__version__ == version("gapverify")
    assert "__version__" in dir(gapverify)
