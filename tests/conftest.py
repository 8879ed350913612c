"""Session-wide test settings.

No test writes the checkout's default store (``reports/gapverify.sqlite``, which
``make verify`` then reuses): a test that names no ``--store`` gets one under pytest's
temporary folder through ``$GAPVERIFY_STORE`` (tests of the variable set their own).
"""
import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _default_store_outside_the_checkout(tmp_path_factory):
    before = os.environ.get("GAPVERIFY_STORE")
    os.environ["GAPVERIFY_STORE"] = str(tmp_path_factory.mktemp("store") / "gapverify.sqlite")
    yield
    if before is None:
        os.environ.pop("GAPVERIFY_STORE", None)
    else:
        os.environ["GAPVERIFY_STORE"] = before


@pytest.fixture(autouse=True)
def _registry_as_it_was():
    """Claims a test registers (gapverify.load_claims, a claim file run in-process) leave
    with it: the next test, and the docs it compares, see the registry (and the
    ``$GAPVERIFY_CLAIMS``) it saw."""
    from gapverify.verification.claims.registry import REGISTRY

    saved, claims = REGISTRY.state(), os.environ.get("GAPVERIFY_CLAIMS")
    yield
    # --claims-from sets $GAPVERIFY_CLAIMS for the run's workers: put it back as well
    if claims is None:
        os.environ.pop("GAPVERIFY_CLAIMS", None)
    else:
        os.environ["GAPVERIFY_CLAIMS"] = claims
    REGISTRY.restore(saved)
