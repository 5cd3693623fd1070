"""Code written for safetensors runs with only the import changed: each name
issue 23 lists, against safetensors' documented behaviour (safetensors
itself is not installed; its behaviour is written down here as cases)."""
import io
import os

import numpy as np
import pytest

import ztensor
import ztensor.numpy as ztnp


def _torch():
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    return torch, ztpt


# -- backend= ---------------------------------------------------------------
def test_backend_mmap_and_pread_read_the_same_and_others_raise(tmp_path):
    p = tmp_path / "m.zt"
    ztnp.save_file({"a": np.arange(6, dtype=np.float32).reshape(2, 3)}, p)
    for backend in ("mmap", "pread"):
        np.testing.assert_array_equal(ztnp.load_file(p, backend=backend)["a"], np.arange(6).reshape(2, 3))
        with ztnp.safe_open(p, "np", backend=backend) as f:
            np.testing.assert_array_equal(f.get_slice("a")[1], [3, 4, 5])
        with ztensor.safe_open(p, framework="np", backend=backend) as f:
            assert f.reader._h is not None
    for bad in ("mmap2", "", None, 1):
        with pytest.raises(ValueError, match="backend"):
            ztnp.load_file(p, backend=bad)
        with pytest.raises(ValueError, match="backend"):
            ztnp.safe_open(p, "np", backend=bad)


def test_torch_backend_on_load_file_safe_open_and_load_model(tmp_path):
    torch, ztpt = _torch()
    model = torch.nn.Linear(3, 2)
    p = tmp_path / "m.zt"
    ztpt.save_model(model, p)
    for backend in ("mmap", "pread"):
        assert torch.equal(ztpt.load_file(p, backend=backend)["weight"], model.weight.detach())
        other = torch.nn.Linear(3, 2)
        assert ztpt.load_model(other, p, backend=backend) == ([], [])
        assert torch.equal(other.bias, model.bias)
        with ztpt.safe_open(p, "pt", backend=backend) as f:
            assert f.get_tensor("bias").shape == (2,)
    with pytest.raises(ValueError, match="backend"):
        ztpt.load_file(p, backend="direct")
    with pytest.raises(ValueError, match="backend"):
        ztpt.load_model(torch.nn.Linear(3, 2), p, backend="direct")
    with pytest.raises(ValueError, match="backend"):
        ztpt.safe_open(p, "pt", backend="direct")


# -- get_tensors, file objects, missing files -------------------------------------
def test_get_tensors_returns_every_tensor(tmp_path):
    p = tmp_path / "m.zt"
    data = {"b": np.ones((2, 2), np.float32), "a": np.arange(3, dtype=np.int64), "s": np.array(True)}
    ztnp.save_file(data, p)
    with ztnp.safe_open(p, "np") as f:
        got = f.get_tensors()
    assert sorted(got) == ["a", "b", "s"]
    for k, v in data.items():
        np.testing.assert_array_equal(got[k], v)
        assert got[k].dtype == v.dtype and got[k].shape == v.shape
    got["a"] += 1  # writable: the file is not touched
    with ztnp.safe_open(p, "np", copy=False) as f:
        assert f.get_tensors()["a"].tolist() == [0, 1, 2]


def test_torch_get_tensors(tmp_path):
    torch, ztpt = _torch()
    p = tmp_path / "m.zt"
    ztpt.save_file({"x": torch.arange(4, dtype=torch.bfloat16), "y": torch.zeros(2, 2)}, p)
    with ztpt.safe_open(p, "pt", device="cpu") as f:
        got = f.get_tensors()
    assert got["x"].dtype == torch.bfloat16 and got["x"].tolist() == [0, 1, 2, 3]
    assert got["y"].shape == (2, 2)


def test_safe_open_reads_a_python_file_object(tmp_path):
    data = ztnp.save({"w": np.arange(12, dtype=np.float32).reshape(3, 4), "b": np.ones(2)})
    calls = []

    class Tracked(io.BytesIO):  # an fsspec file has read/seek and no fileno
        def read(self, n=-1):
            calls.append(n)
            return super().read(n)

    with ztnp.safe_open(Tracked(data), "np") as f:
        assert f.keys() == ["b", "w"]
        np.testing.assert_array_equal(f.get_tensor("w")[2], [8, 9, 10, 11])
        np.testing.assert_array_equal(f.get_slice("w")[1:, 1], [5, 9])
    assert calls  # bytes came through read(), not a path
    p = tmp_path / "m.zt"
    p.write_bytes(data)
    with open(p, "rb") as fh, ztensor.Reader(fh) as r:
        np.testing.assert_array_equal(r["b"], [1, 1])

    class Failing(io.BytesIO):
        def read(self, n=-1):
            if self.tell() > 64:
                raise OSError("network gone")
            return super().read(n)

    with pytest.raises(ztensor.ZTensorError, match="network gone"):
        with ztnp.safe_open(Failing(data), "np") as f:
            f.get_tensor("w")


def test_missing_file_is_file_not_found(tmp_path):
    missing = tmp_path / "notafile"
    with pytest.raises(FileNotFoundError) as e:
        ztnp.safe_open(missing, "np")
    assert isinstance(e.value, ztensor.ZTensorError)  # still the base of our errors
    assert e.value.filename == str(missing)
    with pytest.raises(FileNotFoundError):
        ztnp.load_file(missing)
    with pytest.raises(FileNotFoundError):
        ztensor.Reader(missing)
    # A file that exists but is not a zTensor file is not "not found".
    (tmp_path / "junk").write_bytes(b"not a tensor file at all")
    with pytest.raises(ztensor.ZTensorError) as e:
        ztensor.Reader(tmp_path / "junk")
    assert not isinstance(e.value, FileNotFoundError)


# -- exception types ------------------------------------------------------------
def test_non_dict_raises_value_error_for_torch_type_error_for_numpy(tmp_path):
    with pytest.raises(TypeError):
        ztnp.save_file([("a", np.ones(2))], tmp_path / "n.zt")
    torch, ztpt = _torch()
    with pytest.raises(ValueError, match="Expected a dict"):
        ztpt.save_file([("a", torch.ones(2))], tmp_path / "t.zt")
    with pytest.raises(ValueError, match="Expected a dict"):
        ztpt.save([("a", torch.ones(2))])
    with pytest.raises(RuntimeError):
        ztpt.save_file({"m": torch.empty(3, device="meta")}, tmp_path / "m.zt")


def test_closed_handle_raises_and_keys_too(tmp_path):
    p = tmp_path / "m.zt"
    ztnp.save_file({"a": np.ones(2)}, p)
    with ztnp.safe_open(p, "np") as f:
        pass
    for call in (f.keys, f.metadata, f.offset_keys, f.get_tensors, lambda: f.get_tensor("a"),
                 lambda: f.get_slice("a")):
        with pytest.raises(ztensor.SafetensorError, match="File is closed"):
            call()
    assert issubclass(ztensor.SafetensorError, ztensor.ZTensorError)


# -- get_slice --------------------------------------------------------------------
@pytest.mark.parametrize("framework", ["np", "pt"])
def test_get_slice_follows_safetensors(tmp_path, framework):
    if framework == "pt":
        _torch()
    a = np.random.default_rng(0).random((10, 5))
    p = tmp_path / "s.zt"
    ztnp.save_file({"a": a}, p)
    with ztensor.safe_open(p, framework=framework) as f:
        s = f.get_slice("a")
        as_np = (lambda t: t.numpy()) if framework == "pt" else np.asarray
        # cases from safetensors' own test_numpy_slice
        for idx, shape in ((np.s_[:], [10, 5]), ((), [10, 5]), (np.s_[:2], [2, 5]), (np.s_[:, :2], [10, 2]),
                           (np.s_[0, :2], [2]), (np.s_[2:, 0], [8]), (np.s_[2:, -1], [8]), (np.s_[2:, -5], [8])):
            got = as_np(s[idx])
            assert list(got.shape) == shape, idx
            np.testing.assert_array_equal(got, a[idx])
        empty = as_np(s[[]])
        assert list(empty.shape) == [0, 5] and empty.dtype == a.dtype
        if framework == "pt":
            return  # torch's rules: test_safetensors_round2.py
        # safetensors' test_numpy_slice, message for message
        with pytest.raises(ztensor.SafetensorError) as e:
            s[2:, -6]
        assert str(e.value) == "Invalid index -6 for dimension 1 of size 5"
        with pytest.raises(ztensor.SafetensorError) as e:
            s[[0, 1]]
        assert str(e.value) == "Non empty lists are not implemented"
        with pytest.raises(ztensor.SafetensorError) as e:
            s[2:, 20]
        assert str(e.value) == ("Error during slicing [2:, 20] with shape [10, 5]: index 20 out of bounds for tensor "
                                "dimension #1 of size 5")
        with pytest.raises(ztensor.SafetensorError) as e:
            s[:20]
        assert str(e.value) == ("Error during slicing [:20] with shape [10, 5]: index 19 out of bounds for tensor "
                                "dimension #0 of size 10")
        with pytest.raises(ztensor.SafetensorError) as e:
            s[:, :20]
        assert str(e.value) == ("Error during slicing [:, :20] with shape [10, 5]: index 19 out of bounds for "
                                "tensor dimension #1 of size 5")
        with pytest.raises(TypeError):
            s["x"]
        with pytest.raises(TypeError):
            s[1.5]


# -- shared tensors -----------------------------------------------------------------
def test_find_shared_tensors_and_remove_duplicate_names_as_safetensors():
    torch, ztpt = _torch()
    base = torch.zeros(10)
    sd = {"a": base, "b": base[:5], "c": torch.ones(3), "d": base[5:], "m": torch.empty(2, device="meta")}
    groups = ztpt._find_shared_tensors(sd)
    # single tensors are one-element groups; meta tensors are left out
    assert sorted(sorted(g) for g in groups) == [["a", "b", "d"], ["c"]]
    # disjoint views of one storage are separate groups
    halves = {"x": base[:5], "y": base[5:]}
    assert sorted(sorted(g) for g in ztpt._find_shared_tensors(halves)) == [["x"], ["y"]]
    tied = {"emb": base, "head": base, "other": torch.ones(2)}
    assert dict(ztpt._remove_duplicate_names(tied)) == {"emb": ["head"]}
    assert dict(ztpt._remove_duplicate_names(tied, preferred_names=["head"])) == {"head": ["emb"]}
    assert dict(ztpt._remove_duplicate_names(tied, discard_names=["emb"])) == {"head": ["emb"]}
    with pytest.raises(RuntimeError, match="None is covering the entire storage"):
        ztpt._remove_duplicate_names({"p": base[:6], "q": base[4:]})


def test_storage_ptr_and_size():
    torch, ztpt = _torch()
    t = torch.arange(8, dtype=torch.float32)
    assert ztpt.storage_ptr(t[2:]) == t.data_ptr()
    assert ztpt.storage_size(t[2:]) == 32
    assert ztpt.storage_ptr(torch.empty(2, device="meta")) == 0


# -- canonical order ------------------------------------------------------------------
def test_save_bytes_do_not_depend_on_insertion_order(tmp_path):
    a, b, c = np.ones(3, np.float32), np.arange(4, dtype=np.int64), np.zeros((2, 2))
    one = ztnp.save({"a": a, "b": b, "c": c}, metadata={"x": "1"})
    other = ztnp.save({"c": c, "a": a, "b": b}, metadata={"x": "1"})
    assert one == other
    ztnp.save_file({"b": b, "a": a, "c": c}, tmp_path / "1.zt")
    ztnp.save_file({"c": c, "b": b, "a": a}, tmp_path / "2.zt")
    assert (tmp_path / "1.zt").read_bytes() == (tmp_path / "2.zt").read_bytes()
    torch, ztpt = _torch()
    assert ztpt.save({"p": torch.ones(2), "q": torch.zeros(1)}) == ztpt.save({"q": torch.zeros(1), "p": torch.ones(2)})


# -- batched loading keeps every tensor right ------------------------------------------
def test_load_file_groups_keep_order_types_and_shapes(tmp_path):
    # Tensors of many types and shapes, interleaved, plus scalars, empties and
    # zstd: grouped by (type, shape) into one owned buffer, returned in file order.
    rng = np.random.default_rng(3)
    data = {}
    for i in range(60):
        kind = i % 6
        if kind == 0:
            data[f"t{i:02d}"] = rng.random((4, 3)).astype(np.float32)
        elif kind == 1:
            data[f"t{i:02d}"] = rng.integers(-9, 9, size=5).astype(np.int64)
        elif kind == 2:
            data[f"t{i:02d}"] = np.array(i, np.int16)
        elif kind == 3:
            data[f"t{i:02d}"] = np.zeros((0, 3), np.float64)
        elif kind == 4:
            data[f"t{i:02d}"] = (rng.random(2) + 1j).astype(np.complex64)
        else:
            data[f"t{i:02d}"] = rng.random((3, 4)).astype(np.float32)
    for zstd in (None, 3):
        p = tmp_path / f"m{zstd}.zt"
        ztnp.save_file(data, p, zstd=zstd)
        got = ztnp.load_file(p)
        assert list(got) == sorted(data)
        for k, v in data.items():
            assert got[k].dtype == v.dtype and got[k].shape == v.shape, k
            np.testing.assert_array_equal(got[k], v)
        got["t00"][0, 0] = 99  # writable, and its neighbours in the buffer are not touched
        np.testing.assert_array_equal(got["t06"], data["t06"])
    with ztensor.Reader(tmp_path / "mNone.zt") as r:
        part = r.read_many(["t05", "t01"])
        assert list(part) == ["t05", "t01"]
        with pytest.raises(KeyError):
            r.read_many(["nope"])


# -- serialize / deserialize / TensorSpec ----------------------------------------------
def test_serialize_tensor_spec_and_deserialize(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1, -2, 3], np.int64)
    specs = {"w": ztensor.TensorSpec(dtype="float32", shape=[2, 3], data_ptr=a.ctypes.data, data_len=a.nbytes),
             "b": ztensor.TensorSpec(dtype="I64", shape=(3,), data_ptr=b.ctypes.data, data_len=b.nbytes)}
    assert specs["w"].dtype == "F32" and specs["b"].shape == [3] and specs["w"].data_len == 24
    data = ztensor.serialize(specs, metadata={"k": "v"})
    back = ztnp.load(data)
    np.testing.assert_array_equal(back["w"], a)
    np.testing.assert_array_equal(back["b"], b)
    assert ztensor.serialize(dict(reversed(list(specs.items()))), metadata={"k": "v"}) == data  # canonical order
    ztensor.serialize_file(specs, tmp_path / "s.zt", metadata={"k": "v"})
    assert (tmp_path / "s.zt").read_bytes() == data
    assert ztensor.deserialize(data) == [("b", {"shape": [3], "dtype": "I64", "data": b.tobytes()}),
                                         ("w", {"shape": [2, 3], "dtype": "F32", "data": a.tobytes()})]
    with pytest.raises(ztensor.SafetensorError):
        ztensor.TensorSpec(dtype="nonsense", shape=[1], data_ptr=0, data_len=0)
    with pytest.raises(ztensor.SafetensorError):
        ztensor.TensorSpec(dtype="F32", shape=[2], data_ptr=a.ctypes.data, data_len=4)  # not the shape's size
    with pytest.raises(TypeError):  # raw dicts are not specs (safetensors >= 0.8)
        ztensor.serialize({"t": {"dtype": "float32", "shape": [1], "data_ptr": 0, "data_len": 0}})
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    spec = ztensor.TensorSpec(dtype=str(t.dtype).split(".")[-1], shape=t.shape, data_ptr=t.data_ptr(), data_len=4)
    import ztensor.torch as ztpt
    assert torch.equal(ztpt.load(ztensor.serialize({"t": spec}))["t"], t)
