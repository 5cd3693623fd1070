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
