"""Sharded checkpoints (docs/sharding.md): ShardedReader and load_sharded."""
import json

import numpy as np
import pytest

import ztensor


def make_set(tmp_path, weight_map=None):
    ztensor.save_file({"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, 2], np.int16)},
                      tmp_path / "m-00001-of-00002.zt", metadata={"framework": "pt"})
    (tmp_path / "sub").mkdir(exist_ok=True)
    ztensor.save_file({"c": np.ones(4, np.uint8)}, tmp_path / "sub" / "m-00002-of-00002.zt",
                      metadata={"framework": "pt"})
    index = tmp_path / "m.zt.index.json"
    wm = weight_map or {"a": "m-00001-of-00002.zt", "b": "m-00001-of-00002.zt", "c": "sub/m-00002-of-00002.zt"}
    index.write_text(json.dumps({"metadata": {"total_size": 32}, "weight_map": wm}))
    return index


def test_load_sharded_reads_every_shard(tmp_path):
    tensors = ztensor.load_sharded(make_set(tmp_path))
    assert list(tensors) == ["a", "b", "c"]
    np.testing.assert_array_equal(tensors["a"], np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(tensors["b"], [1, 2])
    np.testing.assert_array_equal(tensors["c"], np.ones(4, np.uint8))


def test_sharded_reader_is_a_reader(tmp_path):
    with ztensor.ShardedReader(make_set(tmp_path)) as r:
        assert isinstance(r, ztensor.Reader) and len(r) == 3 and "c" in r and "z" not in r
        assert r.metadata == {"total_size": 32}
        assert r.shards == ["m-00001-of-00002.zt", "sub/m-00002-of-00002.zt"]
        assert r.attributes == {"framework": "pt"}
        assert r.version == "1.2.0"
        assert r.info("c").shape == (4,)
        np.testing.assert_array_equal(np.from_dlpack(r.tensor("a")), np.arange(6, dtype=np.float32).reshape(2, 3))
        r.verify()
        with pytest.raises(KeyError):
            r["z"]
        kept = r["c"]
    assert kept.sum() == 4  # a zero-copy array outlives the reader


def test_bad_sets_raise_with_the_reason(tmp_path):
    index = make_set(tmp_path, {"a": "m-00001-of-00002.zt", "b": "sub/m-00002-of-00002.zt",
                                "c": "sub/m-00002-of-00002.zt"})
    with pytest.raises(ztensor.ZTensorError) as e:
        ztensor.load_sharded(index)
    assert "tensor 'b'" in str(e.value) and e.value.status == -5
    index.write_text(json.dumps({"weight_map": {"a": "../m-00001-of-00002.zt"}}))
    with pytest.raises(ztensor.ZTensorError, match="relative paths"):
        ztensor.ShardedReader(index)


def test_sharded_read_many_batches_per_shard_in_the_order_asked(tmp_path, monkeypatch):
    from ztensor import _native
    with ztensor.ShardedReader(make_set(tmp_path)) as r:
        assert len(r._shard_tables) == 2  # names listed from each shard's table
        got = r.read_many(["c", "a", "b"])
        every = r.read_many()
        with pytest.raises(KeyError):
            r.read_many(["a", "z"])
        monkeypatch.setattr(_native, "ext", None)  # the ctypes path gives the same
        slow = r.read_many(["c", "a", "b"])
    assert list(got) == ["c", "a", "b"] == list(slow) and list(every) == ["a", "b", "c"]
    for name in got:
        assert got[name].flags.writeable and got[name].dtype == slow[name].dtype
        np.testing.assert_array_equal(got[name], slow[name])
        np.testing.assert_array_equal(every[name], slow[name])


def make_v2_sharded(tmp_path, stem="model"):
    """A zTensor v2 root plus two data shards (spec §7), made with
    zt_v2_make_sharded (what `zt split --format 2` does): shard names 00001
    and 00002, files <stem>-00001.zt and <stem>-00002.zt beside <stem>.zt."""
    import ctypes
    from ztensor._lib import check, lib
    parts = {"00001": {"a": np.arange(6, dtype=np.float32).reshape(2, 3)},
             "00002": {"b": np.array([1, 2], np.int16), "c": np.ones(4, np.uint8)}}
    paths, names = [], []
    for name, tensors in parts.items():
        path = tmp_path / f"{stem}-{name}.zt"
        ztensor.save_file(tensors, path, metadata={"framework": "pt"}, format=2)
        paths.append(str(path).encode())
        names.append(name.encode())
    arr = ctypes.c_char_p * 2
    lib.zt_v2_make_sharded.restype = ctypes.c_int
    lib.zt_v2_make_sharded.argtypes = [ctypes.c_char_p, arr, arr, ctypes.c_size_t, ctypes.c_int, ctypes.c_uint32]
    check(lib.zt_v2_make_sharded(str(tmp_path / f"{stem}.zt").encode(), arr(*paths), arr(*names), 2, 2, 0))
    return tmp_path / f"{stem}.zt", {k: v for t in parts.values() for k, v in t.items()}


def test_v2_sharded_root_opens_by_path(tmp_path):
    root, want = make_v2_sharded(tmp_path)
    with ztensor.Reader(root) as r:
        assert sorted(r) == ["a", "b", "c"]
        for name, value in want.items():
            np.testing.assert_array_equal(r[name], value)
        r.verify()
    loaded = ztensor.load_file(root)
    assert sorted(loaded) == ["a", "b", "c"]
    np.testing.assert_array_equal(loaded["c"], want["c"])


def test_v2_sharded_root_missing_shard(tmp_path):
    root, want = make_v2_sharded(tmp_path)
    (tmp_path / "model-00002.zt").unlink()
    with ztensor.Reader(root) as r:
        np.testing.assert_array_equal(r["a"], want["a"])
        with pytest.raises(ztensor.ZTensorError, match="shard '00002'"):
            r["b"]
