"""safetensors behaviours of issue 36 (§1), each from safetensors' own
source or tests (huggingface/safetensors: bindings/python/tests/
test_simple.py, test_pt_comparison.py, test_pt_model.py, test_handle.py;
py_src/safetensors/torch.py; src/lib.rs; safetensors/src/tensor.rs).
The exact bytes below are the fixtures of test_simple.py."""

import io
import os
import struct

import numpy as np
import pytest

import ztensor
import ztensor.numpy as ztnp

# test_simple.py: test_serialization / test_serialization_forces_alignment /
# test_serialization_metadata, byte for byte.
ZEROS_I32 = (b'@\x00\x00\x00\x00\x00\x00\x00{"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}   '
             b" \x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
ONE_I32 = (b'@\x00\x00\x00\x00\x00\x00\x00{"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}   '
           b" \x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00")
ALIGNED = (b'\x80\x00\x00\x00\x00\x00\x00\x00{"test1":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]},'
           b'"test2":{"dtype":"F16","shape":[2,2],"data_offsets":[16,24]}}'
           b"      \x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
WITH_METADATA = (b'`\x00\x00\x00\x00\x00\x00\x00{"__metadata__":{"framework":"pt"},"test1":{"dtype":"I32","shape":[2,2],'
                 b'"data_offsets":[0,16]}}'
                 b" \x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")


def _torch():
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    return torch, ztpt


# -- the path's extension picks the bytes --------------------------------------------
def test_save_file_to_dot_safetensors_writes_safetensors_bytes(tmp_path):
    data = np.zeros((2, 2), dtype=np.int32)
    p = tmp_path / "serialization.safetensors"
    ztnp.save_file({"test": data}, p)
    assert p.read_bytes() == ZEROS_I32
    data[1, 1] = 1
    ztnp.save_file({"test": data}, str(p))
    assert p.read_bytes() == ONE_I32
    assert ztnp.save({"test": data}, format="safetensors") == ONE_I32
    ztensor.save_file({"test": data}, tmp_path / "top.safetensors")  # the package's own save_file too
    assert (tmp_path / "top.safetensors").read_bytes() == ONE_I32


def test_alignment_order_metadata_and_big_endian(tmp_path):
    d32, d16 = np.zeros((2, 2), np.int32), np.zeros((2, 2), np.float16)
    for order in ({"test1": d32, "test2": d16}, {"test2": d16, "test1": d32}):
        ztnp.save_file(order, tmp_path / "a.safetensors")
        assert (tmp_path / "a.safetensors").read_bytes() == ALIGNED
    assert ztnp.save({"test1": d32}, metadata={"framework": "pt"}, format="safetensors") == WITH_METADATA
    big = np.zeros((2, 2), dtype=">i4")  # test_serialization_no_big_endian
    assert ztnp.save({"test1": big}, metadata={"framework": "pt"}, format="safetensors") == WITH_METADATA


def _expected(tensors, metadata=None):
    """The bytes safetensors' prepare() gives, built from its rules
    (tensor.rs): sort by Dtype enum order descending then name; compact
    JSON; __metadata__ first; spaces to a multiple of 8."""
    order = ["BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ",
             "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64", "F64", "I64", "U64"]
    items = sorted(tensors, key=lambda t: (-order.index(t[1]), t[0].encode()))
    import json
    parts, off, blobs = [], 0, []
    if metadata is not None:
        parts.append('"__metadata__":' + json.dumps(dict(sorted(metadata.items())), separators=(",", ":"),
                                                    ensure_ascii=False))
    for name, dtype, shape, data in items:
        parts.append(json.dumps(name, ensure_ascii=False) + ':{"dtype":"%s","shape":%s,"data_offsets":[%d,%d]}'
                     % (dtype, json.dumps(shape, separators=(",", ":")), off, off + len(data)))
        off += len(data)
        blobs.append(data)
    head = ("{" + ",".join(parts) + "}").encode()
    head += b" " * (-len(head) % 8)
    return struct.pack("<Q", len(head)) + head + b"".join(blobs)


def test_every_numpy_type_names_and_escapes(tmp_path):
    rng = np.random.default_rng(1)
    arrays = {"b": np.array([True, False]), "u8": np.arange(3, dtype=np.uint8), "i64": np.arange(2, dtype=np.int64),
              "f64": rng.random(3), "c64": np.array([1 + 2j], np.complex64), "u16": np.arange(4, dtype=np.uint16),
              'quo"te\\é\n': np.ones(1, np.float32), "": np.zeros((0, 3), np.float32), "s": np.float32(2.5)}
    names = {"b": "BOOL", "u8": "U8", "i64": "I64", "f64": "F64", "c64": "C64", "u16": "U16", 'quo"te\\é\n': "F32",
             "": "F32", "s": "F32"}
    meta = {"zeta": "1", "alpha": "ü\t"}
    want = _expected([(k, names[k], list(np.shape(v)), np.asarray(v).tobytes()) for k, v in arrays.items()], meta)
    ztnp.save_file(arrays, tmp_path / "m.safetensors", metadata=meta)
    assert (tmp_path / "m.safetensors").read_bytes() == want
    back = ztnp.load_file(tmp_path / "m.safetensors")  # and we read it back through the library
    for k, v in arrays.items():
        np.testing.assert_array_equal(back[k], v)
    with ztnp.safe_open(tmp_path / "m.safetensors", "np") as f:
        assert f.metadata() == meta
    with pytest.raises(ztensor.SafetensorError, match="complex128"):
        ztnp.save_file({"c": np.ones(1, np.complex128)}, tmp_path / "c.safetensors")
    assert not (tmp_path / "c.safetensors").exists()


def test_format_keyword_overrides_and_bytes_stay_zt(tmp_path):
    a = {"x": np.arange(3, dtype=np.float32)}
    ztnp.save_file(a, tmp_path / "m.zt")
    ztnp.save_file(a, tmp_path / "m.bin")
    ztnp.save_file(a, tmp_path / "forced.safetensors", format="zt")
    ztnp.save_file(a, tmp_path / "forced.zt", format="safetensors")
    for name, st in (("m.zt", False), ("m.bin", False), ("forced.safetensors", False), ("forced.zt", True)):
        head = (tmp_path / name).read_bytes()[:8]
        assert (head[:4] != b"ZTEN" and struct.unpack("<Q", head)[0] < 1 << 20) == st, name
        np.testing.assert_array_equal(ztnp.load_file(tmp_path / name)["x"], a["x"])
    assert ztnp.save(a) == (tmp_path / "m.zt").read_bytes()  # save() to bytes: zTensor
    assert ztnp.save(a, format="safetensors") == (tmp_path / "forced.zt").read_bytes()
    with pytest.raises(ValueError, match="format"):
        ztnp.save(a, format="gguf")
    with pytest.raises(ValueError, match="zstd"):
        ztnp.save_file(a, tmp_path / "z.safetensors", zstd=3)


def test_torch_save_file_bytes_and_save_model(tmp_path):
    torch, ztpt = _torch()
    t = {"w": torch.arange(6, dtype=torch.bfloat16).reshape(2, 3), "b": torch.ones(2), "i": torch.tensor([7])}
    ztpt.save_file(t, tmp_path / "m.safetensors", metadata={"format": "pt"})
    want = _expected([("w", "BF16", [2, 3], t["w"].view(torch.int16).numpy().tobytes()),
                      ("b", "F32", [2], t["b"].numpy().tobytes()), ("i", "I64", [1], t["i"].numpy().tobytes())],
                     {"format": "pt"})
    assert (tmp_path / "m.safetensors").read_bytes() == want
    back = ztpt.load_file(tmp_path / "m.safetensors")
    assert all(torch.equal(back[k], v) for k, v in t.items())
    assert ztpt.save(t, metadata={"format": "pt"}, format="safetensors") == want

    class NonContiguous(torch.nn.Module):  # test_pt_model.py
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(10, 10)
            self.linear.weight = torch.nn.Parameter(torch.randn(10, 10).t())
    model = NonContiguous()
    with pytest.raises(ValueError) as e:
        ztpt.save_model(model, tmp_path / "c.safetensors", force_contiguous=False)
    assert "use save_model(..., force_contiguous=True)" in str(e.value)
    with pytest.raises(ValueError, match="non contiguous"):
        ztpt.save_model(model, tmp_path / "c.zt", force_contiguous=False)
    ztpt.save_model(model, tmp_path / "c.safetensors")  # force_contiguous defaults to True, as safetensors
    model2 = NonContiguous()
    ztpt.load_model(model2, tmp_path / "c.safetensors")
    assert torch.equal(model2.linear.weight, model.linear.weight)


# -- exceptions and messages ---------------------------------------------------------
def test_unknown_name_is_safetensor_error_and_key_error(tmp_path):
    ztnp.save_file({"a": np.ones(1)}, tmp_path / "m.zt")
    with ztnp.safe_open(tmp_path / "m.zt", "np") as f:
        for catch in (ztensor.SafetensorError, KeyError, ztensor.ZTensorError):
            with pytest.raises(catch) as e:
                f.get_tensor("nope")
            assert str(e.value) == "File does not contain tensor nope"
        with pytest.raises(ztensor.SafetensorError):
            f.get_slice("nope")


@pytest.mark.parametrize("damage", ["truncated", "garbage", "bad_header"])
def test_damaged_files_are_safetensor_error_and_os_error(tmp_path, damage):
    good = ztnp.save({"a": np.arange(100, dtype=np.float32)}, format="safetensors")
    data = {"truncated": good[:len(good) // 2], "garbage": b"\x00not a tensor file" * 4,
            "bad_header": struct.pack("<Q", 16) + b"{not json at all" + good[24:]}[damage]
    p = tmp_path / "bad.safetensors"
    p.write_bytes(data)
    for load in (lambda: ztnp.load_file(p), lambda: ztnp.safe_open(p, "np"), lambda: ztnp.load(data)):
        with pytest.raises(ztensor.SafetensorError) as e:
            load()
        assert isinstance(e.value, OSError) and isinstance(e.value, ztensor.ZTensorError)
        try:  # diffusers: except (IOError, SafetensorError)
            load()
        except (IOError, ztensor.SafetensorError):
            pass


def test_file_not_found_message(tmp_path):
    # test_simple.py ErrorsTestCase.test_file_not_found
    os.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as e:
        with ztensor.safe_open("notafile", framework="np"):
            pass
    assert str(e.value) == "No such file or directory: notafile"


def test_framework_names(tmp_path):
    ztnp.save_file({"a": np.ones(2, np.float32)}, tmp_path / "m.zt")
    for name in ("np", "numpy"):
        with ztensor.safe_open(tmp_path / "m.zt", framework=name) as f:
            assert isinstance(f.get_tensor("a"), np.ndarray)
    with pytest.raises(ztensor.SafetensorError) as e:
        ztensor.safe_open(tmp_path / "m.zt", framework="caffe")
    assert str(e.value) == "framework caffe is invalid" and isinstance(e.value, ValueError)
    packages = {"tf": "tensorflow", "tensorflow": "tensorflow", "flax": "jax", "jax": "jax", "mlx": "mlx",
                "paddle": "paddle"}
    import importlib.util
    for name, package in packages.items():
        if importlib.util.find_spec(package) is not None:
            continue
        with pytest.raises(ImportError, match=repr(package)) as ie:
            ztensor.safe_open(tmp_path / "m.zt", framework=name)
        assert ie.value.name == package
    torch = pytest.importorskip("torch")
    for name in ("pt", "torch", "pytorch"):  # text-generation-inference passes "pytorch"
        with ztensor.safe_open(tmp_path / "m.zt", framework=name) as f:
            assert isinstance(f.get_tensor("a"), torch.Tensor)


def test_safe_open_handle(tmp_path):
    # test_handle.py: a file opened (even in text mode) by name, and a file object without one
    tensors = {"a": np.zeros((2, 2)), "b": np.zeros((2, 3), dtype=np.uint8)}
    p = tmp_path / "out_np.safetensors"
    ztnp.save_file(tensors, p)
    with open(p, "r") as f:
        with ztensor._safe_open_handle(f, framework="np", device="cpu") as g:
            loaded = {k: g.get_tensor(k) for k in g.keys()}
    assert loaded.keys() == tensors.keys() and all(np.array_equal(loaded[k], tensors[k]) for k in tensors)
    with ztensor._safe_open_handle(io.BytesIO(ztnp.save(tensors)), "np") as g:
        assert g.keys() == ["a", "b"]
    with pytest.raises(TypeError):
        ztensor._safe_open_handle(42, "np")


# -- slicing with framework="pt": torch's rules ------------------------------------
def test_pt_slices_follow_torch_indexing(tmp_path):
    torch, ztpt = _torch()
    A = torch.randn((10, 5))
    ztpt.save_file({"a": A}, tmp_path / "s.safetensors")
    with ztensor.safe_open(tmp_path / "s.safetensors", framework="pt") as f:
        s = f.get_slice("a")
        # test_simple.py test_torch_slice
        for idx in (np.s_[:], (), np.s_[:2], np.s_[:, :2], np.s_[0, :2], np.s_[2:, 0], np.s_[2:, 1], np.s_[2:, -1]):
            assert torch.equal(s[idx], A[idx]), idx
        assert list(s[[]].shape) == [0, 5]
        # what tensor-parallel loaders rely on: clamping, lists, None, tensors, masks
        for idx in (np.s_[8:20], np.s_[:, 3:100], np.s_[-100:3], np.s_[None, 2:4], np.s_[:, None, 1],
                    np.s_[..., None], [0, 3, 3], np.s_[[1, 2], 1:3], torch.tensor([4, 0]),
                    A[:, 0] > 0, np.s_[1:7:2, ::3], np.s_[-1], np.s_[..., -2]):
            assert torch.equal(s[idx], A[idx]), idx
        with pytest.raises(IndexError):
            s[10]
        with pytest.raises(IndexError):
            s[2:, -6]


def test_find_shared_tensors_order():
    torch, ztpt = _torch()
    from ztensor.torch import _find_shared_tensors
    # test_pt_model.py
    A = torch.zeros((4,))
    assert _find_shared_tensors({"B": A[:2], "C": A[2:]}) == [{"B"}, {"C"}]
    assert _find_shared_tensors({"B": A[:2], "C": A[2:], "D": A[:1]}) == [{"B", "D"}, {"C"}]
    # groups of different storages keep the order of first appearance (sorted() on sets keeps it)
    x, y, z = torch.zeros(2), torch.zeros(3), torch.zeros(1)
    assert _find_shared_tensors({"z": y, "a": x, "m": z}) == [{"z"}, {"a"}, {"m"}]
    assert _find_shared_tensors({"m": z, "z": y, "b": y[:1], "a": x}) == [{"m"}, {"z", "b"}, {"a"}]


def test_torch_save_refusals_match_safetensors_messages(tmp_path):
    torch, ztpt = _torch()
    # test_pt_comparison.py test_sparse / test_bogus / test_cannot_serialize_*
    with pytest.raises(ValueError) as e:
        ztpt.save_file({"test": torch.sparse_coo_tensor(size=(2, 3))}, tmp_path / "x.safetensors")
    assert str(e.value) == ("You are trying to save a sparse tensors: `['test']` which this library does not support. "
                            "You can make it a dense tensor before saving with `.to_dense()` but be aware this might "
                            "make a much larger file than needed.")
    with pytest.raises(ValueError) as e:
        ztpt.save_file({"test": {"some": "thing"}}, tmp_path / "x.safetensors")
    assert str(e.value) == "Key `test` is invalid, expected torch.Tensor but received <class 'dict'>"
    with pytest.raises(ValueError) as e:
        ztpt.save_file("notadict", tmp_path / "x.safetensors")
    assert str(e.value) == "Expected a dict of [str, torch.Tensor] but received <class 'str'>"
    x = torch.arange(6, dtype=torch.float32).reshape((1, 2, 3))[:, :, 1]
    with pytest.raises(ValueError):
        ztpt.save_file({"test": x}, tmp_path / "x.safetensors")
    A = torch.arange(6, dtype=torch.float32).reshape((2, 3))
    for B in (A[:1], A[1:]):
        with pytest.raises(RuntimeError) as e:
            ztpt.save_file({"A": A, "B": B}, tmp_path / "x.safetensors")
        assert isinstance(e.value, ValueError)  # the original zTensor package's class
    with pytest.raises(NotImplementedError):  # a meta tensor: torch's error, as safetensors lets it through
        ztpt.save_file({"m": torch.empty(2, device="meta")}, tmp_path / "x.safetensors")
    assert not (tmp_path / "x.safetensors").exists()


def test_reads_safetensors_bytes_from_safetensors_tests(tmp_path):
    # test_simple.py test_deserialization / test_deserialization_metadata
    serialized = (b'<\x00\x00\x00\x00\x00\x00\x00{"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}'
                  b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
    out = ztnp.load(serialized)
    assert list(out) == ["test"]
    np.testing.assert_array_equal(out["test"], np.zeros((2, 2), dtype=np.int32))
    p = tmp_path / "m.safetensors"
    p.write_bytes(b'f\x00\x00\x00\x00\x00\x00\x00{"__metadata__":{"framework":"pt"},"test1":{"dtype":"I32","shape":'
                  b'[2,2],"data_offsets":[0,16]}}       ' + b"\x00" * 16)
    with ztensor.safe_open(p, framework="np") as g:
        assert g.metadata() == {"framework": "pt"}


def test_f8_e8m0_files_open_and_save(tmp_path):
    # safetensors' Dtype::F8_E8M0 (float8_e8m0fnu): one byte, a power-of-two scale
    header = b'{"s":{"dtype":"F8_E8M0","shape":[4],"data_offsets":[0,4]}}'
    header += b" " * (-len(header) % 8)
    p = tmp_path / "e8m0.safetensors"
    p.write_bytes(struct.pack("<Q", len(header)) + header + bytes([127, 128, 0, 255]))
    with ztensor.safe_open(p, framework="np") as f:
        s = f.get_slice("s")
        assert s.get_dtype() == "F8_E8M0" and s.get_shape() == [4]
        bits = f.get_tensor("s")
        assert bits.dtype == np.uint8 and bits.tolist() == [127, 128, 0, 255]  # numpy has no such type: its bits
    out = tmp_path / "copy.safetensors"
    with ztensor.Writer(tmp_path / "e.zt") as w:
        w.add("s", bits, dtype="f8_e8m0fnu")
    with ztensor.Reader(tmp_path / "e.zt") as r:
        import ztensor._safetensors_format as stf
        entries = stf.entries_of([("s", r.read_many(["s"])["s"], r.element_type("s"))])
        stf.write_file(entries, out, None)
    assert out.read_bytes() == p.read_bytes()  # the same bytes safetensors wrote
    # F4 (and F6, test_sub_byte_dtypes.py) open too; 3 F4 elements are not
    # a whole number of bytes, which safetensors refuses (MisalignedSlice)
    with pytest.raises(ztensor.SafetensorError, match="3 F4 elements of 4 bits are not a whole number of bytes"):
        bad = b'{"f":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}'
        bad += b" " * (-len(bad) % 8)
        (tmp_path / "f4.safetensors").write_bytes(struct.pack("<Q", len(bad)) + bad + b"\x00\x00")
        ztnp.load_file(tmp_path / "f4.safetensors")
