"""The store's payload: every statistic comes back with its value, dtype and shape; rows
written as ``.npz`` archives by earlier versions are read as before; a damaged row is
named as such; a round of a run decodes only the rows it has not decoded yet."""
import io

import numpy as np
import pytest

from gapverify.verification.running.store import PAYLOAD_TAG, Store, StoreDamaged, decode, encode

MEASUREMENT = {"x": 1.5, "n": 3, "flag": True, "f32": np.float32(2.5),
               "spectrum": np.arange(6.0).reshape(2, 3).T, "eig": np.array([1 + 2j, -1j]),
               "empty": np.zeros((0, 3))}


def _same(a, b):
    return type(a) is type(b) and np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b)


def test_round_trip_keeps_values_dtypes_and_shapes():
    payload = encode(MEASUREMENT)
    assert payload.startswith(PAYLOAD_TAG) and encode(MEASUREMENT) == payload  # same bytes
    back = decode(payload)
    assert list(back) == list(MEASUREMENT)
    npz = io.BytesIO()
    np.savez(npz, **{k: np.asarray(v) for k, v in MEASUREMENT.items()})
    old = decode(npz.getvalue())  # what earlier stores hold
    for k in MEASUREMENT:
        assert _same(back[k], old[k]), k
    assert back["spectrum"].flags.writeable


def test_a_damaged_row_is_named(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    key = ("e", "{}", 16, 0, 1, "v")
    store.put(*key, encode({"x": np.arange(4.0)})[:-3], 0.1)  # truncated
    with pytest.raises(StoreDamaged, match="replicate 0"):
        store.load("e", "{}", 1, "v", [16], 1)


def test_rows_are_decoded_once_per_store(tmp_path, monkeypatch):
    import gapverify.verification.running.store as module

    store = Store(tmp_path / "s.sqlite")
    for r in range(4):
        store.put("e", "{}", 16, r, 1, "v", encode({"x": float(r)}), 0.1)
    calls = []
    monkeypatch.setattr(module, "decode", lambda p: calls.append(1) or decode(p))
    assert [m["x"] for m in store.load("e", "{}", 1, "v", [16], 2)[16]] == [0.0, 1.0]
    assert [m["x"] for m in store.load("e", "{}", 1, "v", [16], 4)[16]] == [0.0, 1.0, 2.0, 3.0]
    assert len(calls) == 4
    store.load("e", "{}", 1, "v", [16], 4)[16][0]["x"] = 9.0  # a caller's edit stays its own
    assert store.load("e", "{}", 1, "v", [16], 1)[16][0]["x"] == 0.0
