"""Embedded result store (SQLite): measurements keyed by experiment, parameters, size,
replicate, root seed and code version, plus the judged runs.

Each finished replicate is committed on its own, so an interrupted sweep keeps everything
it finished and a rerun of the same command computes only what is missing. Writes happen
in the coordinating process only; workers return payloads.
"""
from __future__ import annotations

import hashlib
import io
import json
import sqlite3
import time
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

__all__ = ["Store", "code_version", "encode", "decode", "parameters_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS measurements (
    experiment TEXT NOT NULL,
    params TEXT NOT NULL,
    T INTEGER NOT NULL,
    replicate INTEGER NOT NULL,
    root_seed INTEGER NOT NULL,
    code_version TEXT NOT NULL,
    payload BLOB NOT NULL,
    seconds REAL NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (experiment, params, T, replicate, root_seed, code_version)
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created REAL NOT NULL,
    command TEXT NOT NULL,
    results TEXT NOT NULL
);
"""


def code_version() -> str:
    """Hash of the sampling code (``numerics/*.py``): a changed sampler never reuses old data."""
    import numerics

    h = hashlib.sha256()
    for path in sorted(Path(numerics.__file__).parent.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def parameters_key(params: Mapping[str, float]) -> str:
    """Canonical text of the parameters: sorted keys, ``repr`` of floats (round-trip exact)."""
    return json.dumps({k: float(v) for k, v in sorted(params.items())}, sort_keys=True)


def encode(measurement: Mapping[str, object]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **{k: np.asarray(v) for k, v in measurement.items()})
    return buf.getvalue()


def decode(payload: bytes) -> dict[str, object]:
    with np.load(io.BytesIO(payload)) as z:
        return {k: (z[k].item() if z[k].ndim == 0 else z[k]) for k in z.files}


class Store:
    """A SQLite file (``:memory:`` for tests)."""

    def __init__(self, path: str | Path = "gapverify.sqlite") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path)
            self.db.executescript(_SCHEMA)
            columns = {row[1] for row in self.db.execute("PRAGMA table_info(measurements)")}
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"parameter '--store' must be a SQLite file: {self.path}: {exc}") from None
        if "experiment" not in columns:
            self.db.close()
            raise ValueError(f"parameter '--store': {self.path} was written by an older version "
                             "of gapverify (no 'experiment' column); give a new --store path")

    def close(self) -> None:
        self.db.close()

    def existing(self, experiment: str, params: str, root_seed: int, version: str
                 ) -> set[tuple[int, int]]:
        rows = self.db.execute(
            "SELECT T, replicate FROM measurements WHERE experiment=? AND params=? AND "
            "root_seed=? AND code_version=?", (experiment, params, root_seed, version))
        return {(int(T), int(r)) for T, r in rows}

    def put(self, experiment: str, params: str, T: int, replicate: int, root_seed: int,
            version: str, payload: bytes, seconds: float) -> None:
        with self.db:  # one transaction per replicate: atomic, durable
            self.db.execute(
                "INSERT OR REPLACE INTO measurements VALUES (?,?,?,?,?,?,?,?,?)",
                (experiment, params, T, replicate, root_seed, version, payload, seconds, time.time()))

    def load(self, experiment: str, params: str, root_seed: int, version: str,
             sizes: Iterable[int], replicates: int) -> dict[int, list[dict[str, object]]]:
        out: dict[int, list[dict[str, object]]] = {}
        for T in sizes:
            rows = self.db.execute(
                "SELECT payload FROM measurements WHERE experiment=? AND params=? AND "
                "root_seed=? AND code_version=? AND T=? AND replicate<? ORDER BY replicate",
                (experiment, params, root_seed, version, int(T), replicates)).fetchall()
            if len(rows) < replicates:
                raise RuntimeError(f"{experiment}: {len(rows)} of {replicates} replicates stored at "
                                   f"T={T} (code version {version}); the sweep did not finish")
            out[int(T)] = [decode(p) for (p,) in rows]
        return out

    def add_run(self, command: str, results: Mapping[str, object]) -> int:
        with self.db:
            cur = self.db.execute("INSERT INTO runs (created, command, results) VALUES (?,?,?)",
                                  (time.time(), command, json.dumps(results, sort_keys=True)))
        return int(cur.lastrowid)

    def last_run(self) -> dict | None:
        row = self.db.execute("SELECT results FROM runs ORDER BY id DESC LIMIT 1").fetchone()
        return json.loads(row[0]) if row else None

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0])
