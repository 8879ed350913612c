"""Embedded result store (SQLite): measurements keyed by experiment, parameters, size,
replicate, root seed and code version, plus the judged runs.

Each finished replicate is committed on its own, so an interrupted sweep keeps everything
it finished and a rerun of the same command computes only what is missing. Writes happen
in the coordinating process only; workers return payloads.

Durability. WAL with ``synchronous = NORMAL``: a committed measurement survives its run
being killed (any signal); an operating-system crash or power cut may lose the last
commits, never the file's consistency, and a rerun samples what was lost.

Concurrent runs. A file store is opened in WAL mode (readers never block the writer) with
a busy timeout. A run leases each task before computing it (table ``leases``: the
measurement's key, the owner, an expiry time); :meth:`Store.claim` takes a lease inside a
``BEGIN IMMEDIATE`` transaction, so of two runs exactly one gets it, and a lease whose
run died expires. Storing a measurement drops its lease in the same transaction.

Read-only stores. A store whose file (or folder, which SQLite's WAL files need) cannot be
written, or one opened with ``readonly=True``, is opened with SQLite's ``mode=ro``: a run
whose measurements are all stored still judges them (nothing needs writing; the run is
not recorded), and any write raises :class:`StoreReadOnly`, a ``ValueError`` naming
``--store`` (exit code 2 on the command line).

Schema. ``PRAGMA user_version`` holds :data:`SCHEMA_VERSION`. Version 2 added the run
columns ``profile``, ``claims``, ``root_seed``, ``code_version`` and ``provenance``
(filled for older runs from their stored results); version 3 the column ``perturbations``
(a JSON list of the run's ``--perturb``/``--perturb-parameter`` arguments, ``[]`` for a
run of the statements as stated). An older store is migrated when it is opened writable. A SQLite file whose tables are not gapverify's is refused, naming
``--store``.
"""
from __future__ import annotations

import functools
import hashlib
import io
import json
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from gapverify.verification.running.run_records import (
    perturbations_of, results_dict, run_fields, run_row,
)

__all__ = ["Store", "StoreReadOnly", "StoreDamaged", "SCHEMA_VERSION", "code_version", "encode", "decode",
           "parameters_key"]

#: Version of the store's tables (``PRAGMA user_version``); see the module docstring.
SCHEMA_VERSION = 3

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
    results TEXT NOT NULL,
    profile TEXT,
    claims TEXT,
    root_seed INTEGER,
    code_version TEXT,
    provenance TEXT,
    perturbations TEXT
);
"""

#: Columns each table must have (a file lacking them is not a gapverify store).
_REQUIRED = {
    "measurements": {"experiment", "params", "T", "replicate", "root_seed", "code_version",
                     "payload", "seconds", "created"},
    "leases": {"experiment", "params", "T", "replicate", "root_seed", "code_version", "owner",
               "expires"},
    "runs": {"id", "created", "command", "results"},
}
#: Columns schema versions 2 and 3 added to ``runs`` (name, SQL type).
_RUN_COLUMNS = (("profile", "TEXT"), ("claims", "TEXT"), ("root_seed", "INTEGER"),
                ("code_version", "TEXT"), ("provenance", "TEXT"), ("perturbations", "TEXT"))


class StoreReadOnly(ValueError):
    """A write to a store opened read-only (the message names ``--store``)."""


class StoreDamaged(ValueError):
    """A stored measurement or run that cannot be read (the message names ``--store``
    and the row; exit 2 on the command line)."""


@functools.cache
def code_version() -> str:
    """Hash of the sampling code (``numerics/*.py``): a changed sampler never reuses old data.
    Computed once per process: a run samples, stores and loads under one version even
    when the files are edited while it runs (the code it imported is the code it ran)."""
    from gapverify import numerics

    h = hashlib.sha256()
    for path in sorted(Path(numerics.__file__).parent.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def parameters_key(params: Mapping[str, float]) -> str:
    """Canonical text of the parameters: sorted keys, ``repr`` of floats (round-trip exact)."""
    return json.dumps({k: float(v) for k, v in sorted(params.items())}, sort_keys=True)


#: The payload format: this tag, a 4-byte little-endian header length, a JSON header (each
#: statistic's name, dtype and shape, in order) and the arrays' bytes one after another.
#: Decoding it is a slice per statistic; the ``.npz`` archive stores wrote before (and
#: still write for a dtype the header cannot describe) is read as it was: 3.6 ms a row.
PAYLOAD_TAG = b"GVM1"


def encode(measurement: Mapping[str, object]) -> bytes:
    arrays = {k: np.asarray(v) for k, v in measurement.items()}  # tobytes: C order
    if any(a.dtype.hasobject for a in arrays.values()):
        buf = io.BytesIO()
        np.savez(buf, **arrays)  # refused again when read (allow_pickle=False), as before
        return buf.getvalue()
    header = json.dumps([[k, a.dtype.str, list(a.shape)] for k, a in arrays.items()]).encode()
    return b"".join([PAYLOAD_TAG, len(header).to_bytes(4, "little"), header,
                     *(a.tobytes() for a in arrays.values())])


def decode(payload: bytes) -> dict[str, object]:
    if not payload.startswith(PAYLOAD_TAG):  # an .npz archive
        with np.load(io.BytesIO(payload)) as z:
            return {k: (z[k].item() if z[k].ndim == 0 else z[k]) for k in z.files}
    size = int.from_bytes(payload[4:8], "little")
    at, out = 8 + size, {}
    for name, dtype, shape in json.loads(payload[8:at]):
        dt = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        a = np.frombuffer(payload, dt, count, at).reshape(tuple(shape))
        at += count * dt.itemsize
        out[name] = a.item() if a.ndim == 0 else a.copy()  # writable, owns its memory
    if at != len(payload):
        raise ValueError(f"payload of {len(payload)} bytes, {at} described")
    return out


class Store:
    """A SQLite file (``:memory:`` for tests)."""

    def __init__(self, path: str | Path = "gapverify.sqlite", readonly: bool | None = None) -> None:
        self.path = str(path)
        memory = self.path == ":memory:"
        #: decoded measurements per (experiment, params, seed, version, T), replicates
        #: 0.. in order: a stored row never changes (INSERT OR IGNORE), so each is decoded once
        self._decoded: dict[tuple, list[dict]] = {}
        try:
            self._open(memory, readonly)
        except OSError as exc:  # e.g. a name too long for the file system
            raise ValueError(f"parameter '--store': cannot open {self.path}: "
                             f"{exc.strerror or exc}") from None

    def _open(self, memory: bool, readonly: bool | None) -> None:
        if readonly is None:
            readonly = not memory and _not_writable(Path(self.path))
        self.readonly = bool(readonly)
        if not memory and not self.readonly:
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ValueError(f"parameter '--store': cannot create the folder of {self.path}: "
                                 f"{exc.strerror or exc}") from None
        if Path(self.path).is_dir():
            raise ValueError(f"parameter '--store' must be a SQLite file, got the folder {self.path}")
        if self.readonly and not Path(self.path).is_file():
            raise ValueError(f"parameter '--store': no such store {self.path}, and it cannot be "
                             "created (read-only)")
        try:
            # autocommit; transactions are explicit (_write); wait up to a minute for a lock
            if self.readonly:
                uri = "file:" + Path(self.path).resolve().as_posix() + "?mode=ro"
                self.db = sqlite3.connect(uri, uri=True, timeout=60.0, isolation_level=None)
            else:
                self.db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            self.db.execute("PRAGMA busy_timeout = 60000")
            tables = {name for (name,) in self.db.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
            foreign = tables and not tables & set(_REQUIRED)
            if not foreign:
                self._check_columns(tables)
                if not self.readonly:
                    if not memory:
                        self.db.execute("PRAGMA journal_mode = WAL")
                        # a commit survives a killed process; only an OS crash or power cut
                        # may lose the last ones (which a rerun samples again): 0.08 ms a
                        # commit instead of 1.2 ms with FULL, four commits a task
                        self.db.execute("PRAGMA synchronous = NORMAL")
                    self.db.executescript(_SCHEMA)
                    self._migrate()
        except sqlite3.DatabaseError as exc:
            self.db.close() if hasattr(self, "db") else None
            raise ValueError(f"parameter '--store' must be a SQLite file: {self.path}: {exc}") from None
        except ValueError:
            self.db.close()
            raise
        if foreign:
            self.db.close()
            raise ValueError(f"parameter '--store': {self.path} is a SQLite file of another "
                             f"program (tables {', '.join(sorted(tables))}; a gapverify store has "
                             f"{', '.join(_REQUIRED)}); give a new --store path")

    def _check_columns(self, tables: set[str]) -> None:
        for table, needed in _REQUIRED.items():
            if table not in tables:
                continue
            have = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
            if table == "measurements" and "experiment" not in have:
                raise ValueError(f"parameter '--store': {self.path} was written by an older version "
                                 "of gapverify (no 'experiment' column); give a new --store path")
            if needed - have:
                raise ValueError(f"parameter '--store': {self.path} has a table '{table}' without "
                                 f"column(s) {', '.join(sorted(needed - have))}: not a gapverify "
                                 "store (or of another schema); give a new --store path")

    def _migrate(self) -> None:
        """Bring the ``runs`` table to :data:`SCHEMA_VERSION` (adds the run columns and fills
        them from each run's stored results)."""
        def state():
            have = {row[1] for row in self.db.execute("PRAGMA table_info(runs)")}
            missing = [(n, t) for n, t in _RUN_COLUMNS if n not in have]
            return missing, self.db.execute("PRAGMA user_version").fetchone()[0]

        missing, version = state()
        if not missing and version >= SCHEMA_VERSION:
            return
        with self._write() as db:
            missing, version = state()  # again, under the lock: another run may have migrated
            if not missing and version >= SCHEMA_VERSION:
                return
            for name, sqltype in missing:
                db.execute(f"ALTER TABLE runs ADD COLUMN {name} {sqltype}")
            rows = db.execute("SELECT id, results FROM runs WHERE profile IS NULL OR "
                              "perturbations IS NULL").fetchall()
            for run_id, text in rows:
                res = results_dict(text)
                if not res:  # unreadable results: left as they are (runs() says so)
                    continue
                db.execute("UPDATE runs SET profile=?, claims=?, root_seed=?, code_version=?, "
                           "provenance=?, perturbations=? WHERE id=?", (*run_fields(res), run_id))
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

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
        if self.readonly:
            raise StoreReadOnly(f"parameter '--store': {self.path} is read-only and this run needs "
                                "to write to it (missing measurements or leases); give a writable "
                                "--store, or run only what it holds")
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
        ``"done"`` (already stored), ``"busy"`` (another owner's lease is live) or
        ``"taken"`` (leased now from a run on this host whose process is gone: a killed
        run's lease is taken at once, not after it expires)."""
        where = ("experiment=? AND params=? AND T=? AND replicate=? AND root_seed=? AND "
                 "code_version=?")
        now = time.time()
        with self._write() as db:
            if db.execute(f"SELECT 1 FROM measurements WHERE {where}", key).fetchone():
                return "done"
            row = db.execute(f"SELECT owner, expires FROM leases WHERE {where}", key).fetchone()
            taken = False
            if row and row[0] != owner and row[1] > now:
                if not dead_owner(row[0]):
                    return "busy"
                taken = True
            db.execute("INSERT OR REPLACE INTO leases VALUES (?,?,?,?,?,?,?,?)",
                       (*key, owner, now + seconds))
            return "taken" if taken else "mine"

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
             sizes: Iterable[int], replicates: int | Mapping[int, int]
             ) -> dict[int, list[dict[str, object]]]:
        """The first ``replicates`` measurements at each size (a count, or one per size)."""
        out: dict[int, list[dict[str, object]]] = {}
        for T in sizes:
            n = int(replicates[T]) if isinstance(replicates, Mapping) else int(replicates)
            key = (experiment, params, root_seed, version, int(T))
            cached = self._decoded.setdefault(key, [])
            if len(cached) < n:  # rounds load the same rows again: decode each row once
                rows = self.db.execute(
                    "SELECT payload FROM measurements WHERE experiment=? AND params=? AND "
                    "root_seed=? AND code_version=? AND T=? AND replicate>=? AND replicate<? "
                    "ORDER BY replicate",
                    (experiment, params, root_seed, version, int(T), len(cached), n)).fetchall()
                if len(cached) + len(rows) < n:
                    raise RuntimeError(f"{experiment}: {len(cached) + len(rows)} of {n} replicates "
                                       f"stored at T={T} (code version {version}); the sweep did "
                                       "not finish")
                cached += [self._decode(p, experiment, T, len(cached) + r)
                           for r, (p,) in enumerate(rows)]
            out[int(T)] = [dict(m) for m in cached[:n]]
        return out

    def _decode(self, payload: bytes, experiment: str, T: int, replicate: int) -> dict:
        """:func:`decode`, a damaged payload named as such (``--store``, exit 2)."""
        try:
            return decode(payload)
        except Exception as exc:  # noqa: BLE001 - zipfile, numpy and OS errors alike
            raise StoreDamaged(
                f"parameter '--store': {self.path} is damaged: the measurement of {experiment} "
                f"at T={T}, replicate {replicate} cannot be read ({type(exc).__name__}: "
                f"{exc}); delete that row of table 'measurements' (a rerun samples it again) "
                "or give a new --store") from None

    def add_run(self, command: str, results: Mapping[str, object]) -> int:
        """Record a judged run; returns its id. On a read-only store nothing is recorded
        and ``0`` is returned (the verdict stands; the caller says so)."""
        if self.readonly:
            return 0
        with self._write():
            cur = self.db.execute(
                "INSERT INTO runs (created, command, results, profile, claims, root_seed, "
                "code_version, provenance, perturbations) VALUES (?,?,?,?,?,?,?,?,?)",
                (time.time(), command, json.dumps(results, sort_keys=True, allow_nan=False),
                 *run_fields(results)))
        return int(cur.lastrowid)

    def last_run(self, perturbed: bool = False) -> dict | None:
        """The results of the latest run of the statements as stated (``perturbed``: of
        any run, a perturbed one included); ``None`` when there is none. A perturbed run
        (``--perturb``) judges a wrong statement on purpose: reports of "the last run"
        never take it unless named with ``--run``."""
        for rid, text, pert in self.db.execute(
                f"SELECT id, results, {self._perturbations_sql()} FROM runs ORDER BY id DESC"):
            results = self._results(rid, text)
            if perturbed or not perturbations_of(pert, results):
                return results
        return None

    def get_run(self, run_id: int) -> dict | None:
        """The results of run ``run_id`` (``None`` when there is no such run)."""
        if not self.db.execute("PRAGMA table_info(runs)").fetchone():  # empty, read-only
            return None
        row = self.db.execute("SELECT results FROM runs WHERE id=?", (int(run_id),)).fetchone()
        return self._results(int(run_id), row[0]) if row else None

    def _perturbations_sql(self) -> str:
        have = {row[1] for row in self.db.execute("PRAGMA table_info(runs)")}
        return "perturbations" if "perturbations" in have else "NULL"

    def _results(self, run_id: int, text) -> dict:
        """A run's results JSON, damaged text named as such (``--store``, exit 2)."""
        try:
            out = json.loads(text)
        except (TypeError, json.JSONDecodeError) as exc:
            raise StoreDamaged(f"parameter '--store': {self.path} is damaged: the results of run "
                               f"{run_id} are not JSON ({exc}); name another run with --run, "
                               "delete that row of table 'runs', or give a new --store") from None
        if not isinstance(out, dict):
            raise StoreDamaged(f"parameter '--store': {self.path} is damaged: the results of run "
                               f"{run_id} are not a JSON object; name another run with --run, "
                               "delete that row of table 'runs', or give a new --store")
        return out

    def runs(self) -> list[dict]:
        """Every recorded run, oldest first: ``id``, ``created`` (Unix time), ``command``,
        ``profile``, ``claims`` (list), ``root_seed``, ``code_version``, ``provenance``
        (dict) and ``perturbations`` (list of ``--perturb`` arguments, empty for a run of
        the statements as stated), read from the columns (or, on an unmigrated read-only
        store, the results). A column that is not JSON is read from the run's results
        instead; a run whose results are damaged too keeps what its columns say, with
        ``damaged`` naming what cannot be read."""
        have = {row[1] for row in self.db.execute("PRAGMA table_info(runs)")}
        if not have:  # an empty file opened read-only: a store with no run yet
            return []
        columns = [n for n, _ in _RUN_COLUMNS if n in have]
        out = []
        for row in self.db.execute(f"SELECT id, created, command, results"
                                   f"{''.join(', ' + c for c in columns)} FROM runs ORDER BY id"):
            rid, created, command, results = row[:4]
            stored = dict(zip(columns, row[4:]))
            out.append(run_row(rid, created, command, results, stored))
        return out

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0])


def dead_owner(owner: str) -> bool:
    """Whether the lease owner ``host:pid:suffix`` (:func:`verification.running.runner.lease_owner`)
    is a process of this host that no longer exists (killed, SIGKILL included). A process
    of another host, or a pid that exists (perhaps reused), is taken as alive: its lease
    then expires on its own."""
    import os
    import socket

    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError):
        return False
    return False


def _not_writable(path: Path) -> bool:
    """Whether SQLite could not write ``path``: the file (if it exists) or its folder
    (WAL mode writes ``-wal`` and ``-shm`` beside it) is not writable."""
    import os

    folder = path.parent if str(path.parent) else Path(".")
    if path.exists():
        return not os.access(path, os.W_OK) or not os.access(folder, os.W_OK)
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    return not os.access(existing, os.W_OK)
