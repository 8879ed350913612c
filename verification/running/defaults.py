"""What a run uses unless told: the root seed, the store's default path and the
environment variable that moves it (no heavy import here: the command line reads these at start-up)."""
from __future__ import annotations

import os
from pathlib import Path

#: The root seed of a run unless ``--seed`` (or ``seed=``) is given.
DEFAULT_SEED = 20250713
DEFAULT_STORE = "reports/gapverify.sqlite"
#: The environment variable that moves the default store.
STORE_ENV = "GAPVERIFY_STORE"


def default_store() -> str:
    """``$GAPVERIFY_STORE`` when set (and not empty), else ``reports/gapverify.sqlite``."""
    return os.environ.get(STORE_ENV) or DEFAULT_STORE


#: The recorded statements ``gapverify snapshot`` compares the registry with.
SNAPSHOT_PATH = Path(__file__).resolve().parent.parent / "snapshots"
