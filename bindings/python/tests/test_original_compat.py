"""Code written for the original zTensor Python package (1.x) runs here:
each name issue 23 lists, with the behaviour that package's own tests show."""
import os

import numpy as np
import pytest

import ztensor
from ztensor import Reader, Writer


def test_reader_keys_is_a_list_and_repr(tmp_path):
    p = str(tmp_path / "m.zt")
    with Writer(p) as w:
        assert "open" in repr(w)
        w.add("t", np.array([1.0], dtype=np.float32))
    assert "finished" in repr(w)
    with Writer(str(tmp_path / "e.zt")):
        pass
    assert Reader(str(tmp_path / "e.zt")).keys() == []
    r = Reader(p)
    assert r.keys() == ["t"] and isinstance(r.keys(), list)
    assert "1 tensor" in repr(r) and "zt" in repr(r)
    assert ztensor.open(p).keys() == ["t"]


def test_metadata_and_tensor_metadata(tmp_path):
    p = tmp_path / "m.zt"
    data = np.random.default_rng(0).standard_normal((32, 64)).astype(np.float32)
    with Writer(p) as w:
        w.add("test", data)
        w.add("z", np.ones(1000, np.int64), compress=True)
    r = Reader(p)
    meta = r.metadata("test")
    assert isinstance(meta, ztensor.TensorMetadata)
    assert meta.name == "test" and list(meta.shape) == [32, 64] and meta.dtype == "float32"
    assert meta.format == "dense" and meta.encoding == "raw" and meta.size == data.nbytes and meta.offset > 0
    z = r.metadata("z")
    assert z.dtype == "int64" and z.encoding == "zstd" and z.size < 8000


def test_read_numpy_torch_into_tensors_and_read_copy(tmp_path):
    p = tmp_path / "m.zt"
    tensors = {f"t{i}": np.arange(10, dtype=np.float32) * i for i in range(5)}
    with Writer(p) as w:
        for name, t in tensors.items():
            w.write_numpy(name, t)
    r = Reader(p)
    got = r.read_tensors(list(tensors))
    assert list(got) == list(tensors)
    for name in tensors:
        np.testing.assert_array_equal(got[name], tensors[name])
    a = r.read_numpy("t3")
    a += 1  # owned
    np.testing.assert_array_equal(r.read_numpy("t3"), tensors["t3"])
    out = np.zeros(10, np.float32)
    assert r.read_into("t2", out) is out
    np.testing.assert_array_equal(out, tensors["t2"])
    raw = bytearray(40)
    r.read_into("t4", raw)
    np.testing.assert_array_equal(np.frombuffer(raw, np.float32), tensors["t4"])
    with pytest.raises(ValueError, match="shape"):
        r.read_into("t1", np.zeros(3, np.float32))  # too small: refused, nothing overrun
    view = r.read("t1")
    assert not view.flags.owndata  # zero-copy (writable: the mapping is copy-on-write)
    copied = r.read("t1", copy=True)
    assert copied.flags.writeable and copied.flags.owndata
    torch = pytest.importorskip("torch")
    t = r.read_torch("t2")
    assert isinstance(t, torch.Tensor) and t.tolist() == tensors["t2"].tolist()
    into = torch.zeros(10)
    r.read_into("t3", into)
    assert into.tolist() == tensors["t3"].tolist()


def test_writer_aliases_append_and_finish_size(tmp_path):
    p = str(tmp_path / "m.zt")
    w = Writer(p)
    w.add("a", np.arange(4, dtype=np.int32), compress=5, checksum="sha256")
    w.add("b", np.ones(3), checksum="crc32c", compress=False)
    size = w.finish()
    assert size == os.path.getsize(p)
    with pytest.raises(RuntimeError):  # as the original: add after finish
        w.add("c", np.ones(1))
    info = Reader(p).info("a")
    assert info.components[0].encoding == "zstd" and info.components[0].digest.startswith("sha256:")
    with Writer(p, mode="a") as w:
        w.add("c", np.zeros(2, np.float32))
        with pytest.raises(ztensor.ZTensorError):
            w.add("a", np.ones(1))  # already there
    r = Reader(p)
    assert r.keys() == ["a", "b", "c"]
    np.testing.assert_array_equal(r["a"], np.arange(4))
    assert r.info("a").components[0].digest.startswith("sha256:")
    with Writer(str(tmp_path / "new.zt"), mode="a") as w:  # append to nothing: a new file
        w.add("x", np.ones(1))
    assert Reader(str(tmp_path / "new.zt")).keys() == ["x"]
    with pytest.raises(ValueError):
        Writer(str(tmp_path / "q.zt"), mode="r")
    torch = pytest.importorskip("torch")
    with Writer(p, mode="a") as w:
        w.write_torch("bf", torch.tensor([1.5, 2.0], dtype=torch.bfloat16))
    import ztensor.torch as ztpt
    assert ztpt.load_file(p)["bf"].dtype == torch.bfloat16


def test_numpy_save_file_compression(tmp_path):
    import ztensor.numpy as ztnp
    p = tmp_path / "c.zt"
    data = {"data": np.zeros((100, 100), np.float32)}
    ztnp.save_file(data, p, compression=True)
    assert Reader(p).metadata("data").encoding == "zstd"
    np.testing.assert_array_equal(ztnp.load_file(p)["data"], data["data"])


def test_remove_tensors_and_replace_tensor(tmp_path):
    p = tmp_path / "m.zt"
    with Writer(p) as w:
        for i in range(4):
            w.add(f"t{i}", np.full(3, i, np.int64))
        w.attributes = {"step": 7}
    ztensor.remove_tensors(p, tmp_path / "out.zt", ["t1", "t3"])
    assert Reader(tmp_path / "out.zt").keys() == ["t0", "t2"]
    assert Reader(tmp_path / "out.zt").attributes == {"step": 7}
    ztensor.remove_tensors(p, None, "t0")
    assert Reader(p).keys() == ["t1", "t2", "t3"]
    with pytest.raises(KeyError):
        ztensor.remove_tensors(p, None, ["nope"])
    assert Reader(p).keys() == ["t1", "t2", "t3"]
    ztensor.replace_tensor(p, "t2", np.arange(6, dtype=np.float32).reshape(2, 3))
    r = Reader(p)
    assert r.keys() == ["t1", "t2", "t3"] and r["t2"].shape == (2, 3) and r["t2"].dtype == np.float32
    np.testing.assert_array_equal(r["t3"], [3, 3, 3])
    with pytest.raises(KeyError):
        ztensor.replace_tensor(p, "nope", np.ones(1))


def test_errors_match_the_original(tmp_path):
    with pytest.raises((OSError, RuntimeError)):
        Reader("/nonexistent/path/file.zt")
    bad = tmp_path / "bad.zt"
    bad.write_bytes(b"GARBAGE_DATA_NOT_ZTENSOR")
    with pytest.raises((RuntimeError, OSError)):
        Reader(bad)
    with Writer(tmp_path / "k.zt") as w:
        w.add("exists", np.array([1.0], np.float32))
    with pytest.raises(KeyError):
        Reader(tmp_path / "k.zt")["does_not_exist"]


def test_pytorch_checkpoints_read_through_weights_only(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "model.pt"
    model = torch.nn.Linear(10, 5)
    torch.save(model.state_dict(), path)
    r = Reader(path)
    assert set(r.keys()) == {"weight", "bias"}
    np.testing.assert_allclose(r["weight"], model.weight.detach().numpy())
    import ztensor.numpy as ztnp
    import ztensor.torch as ztpt
    assert torch.equal(ztpt.load_file(path)["bias"], model.bias.detach())
    np.testing.assert_array_equal(ztnp.load_file(path)["bias"], model.bias.detach().numpy())

    # A pickle that would run code is refused by weights_only, never executed.
    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {tmp_path / 'pwned'}",))

    torch.save({"x": Evil()}, tmp_path / "evil.pt")
    with pytest.raises(ztensor.ZTensorError, match="weights_only"):
        Reader(tmp_path / "evil.pt")
    assert not (tmp_path / "pwned").exists()
