"""Embedded result store (SQLite): measurements keyed by experiment, parameters, size,
replicate, root seed and code version, plus the judged runs.

Each finished replicate is committed on its own, so an interrupted sweep keeps everything
it finished and a rerun of the same command computes only what is missing. Writes happen
in the coordinating process only; workers return payloads.

Concurrent runs. A file store is opened in WAL mode (readers never block the writer) with
a busy timeout. A run leases each task before computing it (table ``leases``: the
measurement's key, the owner, an expiry time); :meth:`Store.claim` takes a lease inside a
``BEGIN IMMEDIATE`` transaction, so of two runs exactly one gets it, and a lease whose
run died expires. Storing a measurement drops its lease in the same transaction.
"""
from __future__ import annotations

import hashlib
import io
import json
import sqlite3
import time
from contextlib import contextmanager
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
CREATE TABLE IF NOT EXISTS leases (
    experiment TEXT NOT NULL,
    params TEXT NOT NULL,
    T INTEGER NOT NULL,
    replicate INTEGER NOT NULL,
    root_seed INTEGER NOT NULL,
    code_version TEXT NOT NULL,
    owner TEXT NOT NULL,
    expires REAL NOT NULL,
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
            # autocommit; transactions are explicit (_write); wait up to a minute for a lock
            self.db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            self.db.execute("PRAGMA busy_timeout = 60000")
            if self.path != ":memory:":
                self.db.execute("PRAGMA journal_mode = WAL")
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

    @contextmanager
    def _write(self):
        """One write transaction, taken at once (``BEGIN IMMEDIATE``): atomic, durable."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def put(self, experiment: str, params: str, T: int, replicate: int, root_seed: int,
            version: str, payload: bytes, seconds: float) -> None:
        """Store one replicate and drop its lease, in one transaction. A measurement
        already stored (by another run whose lease had expired) is kept, not replaced:
        the same task gives the same bytes."""
        key = (experiment, params, T, replicate, root_seed, version)
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO measurements VALUES (?,?,?,?,?,?,?,?,?)",
                       (*key, payload, seconds, time.time()))
            db.execute("DELETE FROM leases WHERE experiment=? AND params=? AND T=? AND "
                       "replicate=? AND root_seed=? AND code_version=?", key)

    def claim(self, key: tuple, owner: str, seconds: float) -> str:
        """Lease the task ``key`` to ``owner`` for ``seconds``: ``"mine"`` (leased now),
        ``"done"`` (already stored) or ``"busy"`` (another owner's lease is live)."""
        where = ("experiment=? AND params=? AND T=? AND replicate=? AND root_seed=? AND "
                 "code_version=?")
        now = time.time()
        with self._write() as db:
            if db.execute(f"SELECT 1 FROM measurements WHERE {where}", key).fetchone():
                return "done"
            row = db.execute(f"SELECT owner, expires FROM leases WHERE {where}", key).fetchone()
            if row and row[0] != owner and row[1] > now:
                return "busy"
            db.execute("INSERT OR REPLACE INTO leases VALUES (?,?,?,?,?,?,?,?)",
                       (*key, owner, now + seconds))
            return "mine"

    def renew(self, keys: Iterable[tuple], owner: str, seconds: float) -> None:
        """Extend ``owner``'s leases on ``keys`` by ``seconds`` from now."""
        keys = list(keys)
        if not keys:
            return
        with self._write() as db:
            db.executemany("UPDATE leases SET expires=? WHERE experiment=? AND params=? AND "
                           "T=? AND replicate=? AND root_seed=? AND code_version=? AND owner=?",
                           [(time.time() + seconds, *k, owner) for k in keys])

    def release(self, owner: str) -> None:
        """Drop every lease of ``owner`` (an interrupted run), so others take the tasks now."""
        with self._write() as db:
            db.execute("DELETE FROM leases WHERE owner=?", (owner,))

    def leases(self) -> list[tuple]:
        """Live and expired leases: ``(experiment, T, replicate, owner, expires)``."""
        return self.db.execute("SELECT experiment, T, replicate, owner, expires FROM leases "
                               "ORDER BY expires").fetchall()

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
        with self._write():
            cur = self.db.execute("INSERT INTO runs (created, command, results) VALUES (?,?,?)",
                                  (time.time(), command, json.dumps(results, sort_keys=True)))
        return int(cur.lastrowid)

    def last_run(self) -> dict | None:
        row = self.db.execute("SELECT results FROM runs ORDER BY id DESC LIMIT 1").fetchone()
        return json.loads(row[0]) if row else None

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0])
