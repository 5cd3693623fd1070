"""The original 1.x package's calls (pie-project/ztensor v1.2.x,
python/ztensor/_reader.py, _writer.py, numpy.py, torch.py): list forms
and copy= of read_numpy/read_torch (a dict in file order), writable
copy-on-write zero-copy arrays, Writer.append, compression=."""

import numpy as np
import pytest

import ztensor
import ztensor.numpy as ztnp


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "m.zt"
    with ztensor.Writer(p) as w:
        for name in ("c", "a", "b"):  # file order is not name order
            w.add(name, np.full((2, 3), ord(name), np.float32))
        w.add("z", np.arange(4, dtype=np.int64), zstd=True)
    return p


def test_read_numpy_name_or_list_in_file_order(path):
    with ztensor.Reader(path) as r:
        one = r.read_numpy("a")
        assert isinstance(one, np.ndarray) and one[0, 0] == ord("a")
        many = r.read_numpy(["b", "z", "c"])
        assert list(many) == ["c", "b", "z"]  # the original sorts by offset: file order
        assert many["z"].tolist() == [0, 1, 2, 3]
        for copy in (True, False):
            got = r.read_numpy(["a", "z"], copy=copy)
            assert all(a.flags.writeable for a in got.values())
        with pytest.raises(KeyError):
            r.read_numpy(["a", "nope"])
        with pytest.raises(TypeError):
            r.read_numpy(3)


def test_zero_copy_arrays_are_writable_copy_on_write(path):
    before = path.read_bytes()
    r = ztensor.Reader(path)
    view = r.read_numpy("a", copy=False)
    assert view.flags.writeable
    assert np.shares_memory(view, r.read("a"))  # zero-copy: the mapping itself
    view += 1  # copy-on-write: this process's pages only
    assert view[0, 0] == ord("a") + 1
    with ztensor.Reader(path) as other:
        assert other.read_numpy("a")[0, 0] == ord("a")
    del r  # the array keeps the mapping alive (the last round's lifetime rule)
    assert view.sum() == 6 * (ord("a") + 1)
    assert path.read_bytes() == before
    loaded = ztnp.load_file(path, copy=False)  # the original numpy.load_file(copy=False)
    assert all(a.flags.writeable for a in loaded.values())
    loaded["b"][:] = 0
    assert ztnp.load_file(path)["b"][0, 0] == ord("b")
    # a reader over a caller's bytes never writes them: a copy instead
    data = bytes(before)
    with ztensor.Reader(data) as m:
        arr = m.read_numpy("a", copy=False)
        arr[:] = 5
    assert data == before


def test_read_torch_list_copy_device(path):
    torch = pytest.importorskip("torch")
    with ztensor.Reader(path) as r:
        t = r.read_torch("a")
        assert isinstance(t, torch.Tensor) and t.shape == (2, 3)
        many = r.read_torch(["z", "a"], copy=False, device="cpu")
        assert list(many) == ["a", "z"] and many["z"].tolist() == [0, 1, 2, 3]
        many["a"].add_(1)  # writable, private to this process (and this reader's mapping)
    with ztensor.Reader(path) as r:
        assert r.read_torch("a")[0, 0].item() == ord("a")


def test_writer_append_keeps_what_was_there(path):
    with ztensor.Writer.append(path) as w:
        w.add("new", np.ones(2, np.float32))
    with ztensor.Reader(path) as r:
        assert set(r) == {"c", "a", "b", "z", "new"}
        assert list(r.read_numpy(list(r)))[-1] == "new"  # appended after what was there
        assert r.read_numpy("z").tolist() == [0, 1, 2, 3]
    fresh = path.parent / "fresh.zt"
    with ztensor.Writer.append(fresh) as w:  # no file yet: a new one
        w.add("x", np.zeros(1))
    assert list(ztensor.Reader(fresh)) == ["x"]


def test_compression_keyword_on_save_and_torch(tmp_path):
    a = {"x": np.zeros(4096, np.float32)}
    assert len(ztnp.save(a, compression=True)) < len(ztnp.save(a)) // 4
    ztnp.save_file(a, tmp_path / "c.zt", compression=5)
    assert (tmp_path / "c.zt").stat().st_size < 4096
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    ztpt.save_file({"x": torch.zeros(4096)}, tmp_path / "t.zt", compression=True)
    assert (tmp_path / "t.zt").stat().st_size < 4096
    assert len(ztpt.save({"x": torch.zeros(4096)}, compression=3)) < 4096


def test_shared_tensors_raise_runtime_and_value_error(tmp_path):
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    base = torch.zeros(4)
    for catch in (RuntimeError, ValueError):  # safetensors' and the original's
        with pytest.raises(catch, match="share memory"):
            ztpt.save_file({"a": base, "b": base[:2]}, tmp_path / "s.zt")
    assert issubclass(ztpt.SharedTensorsError, RuntimeError) and issubclass(ztpt.SharedTensorsError, ValueError)


def test_mapped_views_are_writable_copy_on_write(path, monkeypatch):
    # the original 1.x's test_memory_safety.py TestCOW: reader[name] of a
    # .zt file is writable (MAP_PRIVATE); a write never reaches the file
    # and another reader sees the original.
    before = path.read_bytes()
    r = ztensor.Reader(path)
    views = [r["a"], r.read("a", copy=False), ztensor.load_file(path, copy=False)["a"]]
    for v in views:
        assert v.flags.writeable and not v.flags.owndata
    views[0][...] = 0
    assert not views[1].any()  # the same mapping within this reader
    assert np.shares_memory(views[0], views[1])
    with ztensor.Reader(path) as other:
        assert other["a"][0, 0] == ord("a")
    r.close()  # the arrays keep the mapping alive
    views[2][...] = 1
    assert not views[0].any() and views[2].sum() == 6
    del r, views
    assert path.read_bytes() == before
    # a caller's buffer is not ours to write: its views stay read-only
    with ztensor.Reader(before) as mem:
        assert not mem["a"].flags.writeable
    # under strict overcommit the library may have mapped the file shared
    # and read-only (a write would fault): views stay read-only there
    from ztensor import _handle
    monkeypatch.setattr(_handle, "PRIVATE_MAPS", False)
    with ztensor.Reader(path) as strict:
        assert not strict["a"].flags.writeable
        assert strict.read_numpy("a", copy=False).flags.owndata  # promised writable: a copy
