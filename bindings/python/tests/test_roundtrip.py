"""Writer → Reader: dtypes, encodings, digests, attributes, atomicity, helpers."""
import gc
import math
import os

import numpy as np
import pytest

import ztensor

ALL_NUMPY = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32,
             np.uint16, np.uint8]


def sample(dtype, shape=(3, 4)):
    n = int(np.prod(shape))
    return (np.arange(n) % 100 - (0 if np.dtype(dtype).kind == "u" else 50)).astype(dtype).reshape(shape)


@pytest.mark.parametrize("zstd", [None, 5])
@pytest.mark.parametrize("digest", [None, "crc32c", "sha256"])
def test_every_numpy_dtype_round_trips(tmp_path, zstd, digest):
    path = tmp_path / "all.zt"
    arrays = {np.dtype(t).name: sample(t) for t in ALL_NUMPY}
    arrays["bool"] = np.array([[True, False], [False, True]])
    arrays["scalar"] = np.float32(2.5) * np.ones((), np.float32)
    arrays["empty"] = np.zeros((0, 3), np.int32)
    with ztensor.Writer(path, zstd=zstd, digest=digest, sync=False) as w:
        for k, v in arrays.items():
            w.add(k, v)
    with ztensor.Reader(path) as r:
        assert set(r) == set(arrays) and len(r) == len(arrays)
        for k, v in arrays.items():
            got = r[k]
            assert got.dtype == v.dtype.newbyteorder("<") and got.shape == v.shape, k
            np.testing.assert_array_equal(got, v)
            comp = r.info(k).components[0]
            assert comp.encoding == ("zstd" if zstd else "raw")
            assert (comp.digest or "").startswith(digest or "")
            assert (comp.digest is None) == (digest is None)
        r.verify(strict=True)


def test_zero_copy_for_raw_mapped_data_and_copies_otherwise(tmp_path):
    path = tmp_path / "zc.zt"
    a = np.arange(1000, dtype=np.float32)
    with ztensor.Writer(path, sync=False) as w:
        w.add("raw", a)
        w.add("packed", a, zstd=True)
    r = ztensor.Reader(path)
    raw, packed = r["raw"], r["packed"]
    # Zero-copy: inside the file's private copy-on-write mapping (two reads
    # share it), writable as the original 1.x package's (test_original_1x).
    assert raw.flags.writeable
    assert r["raw"].ctypes.data == raw.ctypes.data
    assert np.shares_memory(r["raw"], raw)
    # Decoded: a private writable copy.
    assert packed.flags.writeable
    assert r["packed"].ctypes.data != packed.ctypes.data
    np.testing.assert_array_equal(raw, packed)
    with ztensor.Reader(path, mmap=False) as p:
        copy = p["raw"]
        assert copy.flags.writeable
        np.testing.assert_array_equal(copy, a)


def test_zero_copy_array_keeps_the_file_mapped_after_close(tmp_path):
    path = tmp_path / "alive.zt"
    a = np.linspace(0, 1, 4096, dtype=np.float64)
    ztensor.save_file({"x": a}, path)
    r = ztensor.Reader(path)
    view = r["x"][10:20]
    r.close()
    del r
    gc.collect()
    np.testing.assert_array_equal(view, a[10:20])
    closed = ztensor.Reader(path)
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        closed["x"]


def test_attributes_of_every_kind(tmp_path):
    path = tmp_path / "attrs.zt"
    attrs = {"s": "text", "i": -7, "big": 2**70, "f": 0.5, "nan": float("nan"), "inf": float("-inf"),
             "b": b"\x00\xff", "list": [1, [2, "x"]], "nested": {"k": True, "n": None},
             "tag": ztensor.Tagged(1, 1700000000), "intkeys": {1: "one", 2: "two"}}
    with ztensor.Writer(path, sync=False) as w:
        w.add("t", np.zeros(2, np.uint8), attributes={"unit": "m", "scale": 1.5})
        w.attributes = attrs
    with ztensor.Reader(path) as r:
        got = r.attributes
        assert math.isnan(got.pop("nan"))
        expect = dict(attrs)
        expect.pop("nan")
        assert got == expect
        assert r.info("t").attributes == {"unit": "m", "scale": 1.5}
    with ztensor.Reader(tmp_path / "attrs.zt") as r:
        assert r.info("t").format == "dense"
    ztensor.save_file({"a": np.ones(1)}, tmp_path / "none.zt")
    with ztensor.Reader(tmp_path / "none.zt") as r:
        assert r.attributes is None and r.info("a").attributes is None


def test_maps_with_dollar_keys_stay_maps(tmp_path):
    # A dict whose key is "$bytes" (or any "$" key) is a map, not a byte
    # string, a float or a nested $map: stored and read back as the dict.
    path = tmp_path / "dollar.zt"
    attrs = {"$bytes": "6869", "m": {"$bytes": "6869"}, "f": {"$float": "nan"}, "n": {"$map": [[1, 2]]},
             "b": b"hi"}
    with ztensor.Writer(path, sync=False) as w:
        w.add("t", np.zeros(2, np.uint8), attributes={"$x": {"$undefined": True}})
        w.attributes = attrs
    with ztensor.Reader(path) as r:
        assert r.attributes == attrs
        assert r.info("t").attributes == {"$x": {"$undefined": True}}


def test_exception_inside_with_leaves_nothing_on_disk(tmp_path):
    path = tmp_path / "never.zt"
    with pytest.raises(RuntimeError, match="boom"):
        with ztensor.Writer(path, sync=False) as w:
            w.add("x", np.ones(10))
            raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []
    # A failing add (duplicate name) inside the block: same outcome.
    with pytest.raises(ztensor.ZTensorError) as info:
        with ztensor.Writer(path, sync=False) as w:
            w.add("x", np.ones(10))
            w.add("x", np.ones(10))
    assert info.value.status == -10  # ZT_E_EXISTS
    assert os.listdir(tmp_path) == []


def test_existing_file_is_replaced_only_on_finish(tmp_path):
    path = tmp_path / "f.zt"
    ztensor.save_file({"old": np.ones(3)}, path)
    w = ztensor.Writer(path, sync=False)
    w.add("new", np.zeros(3))
    assert set(ztensor.load_file(path)) == {"old"}
    w.finish()
    assert set(ztensor.load_file(path)) == {"new"}


def test_bf16_fp8_and_complex(tmp_path):
    path = tmp_path / "lt.zt"
    floats = np.array([1.0, -2.5, 3.140625, 0.0], np.float32)
    bits = ztensor.float32_to_bf16(floats)
    cx = np.array([1 + 2j, -3.5j], np.complex64)
    cx128 = np.array([[1 + 1j], [2 - 2j]], np.complex128)
    fp8 = np.array([0x38, 0x40, 0xC0], np.uint8)
    with ztensor.Writer(path, sync=False) as w:
        w.add("bf16_bits", bits, dtype="bf16")
        w.add("bf16_floats", floats, dtype="bf16")
        w.add("cx", cx)
        w.add("cx128", cx128)
        w.add("fp8", fp8, dtype="f8_e4m3fn")
        with pytest.raises(TypeError):
            w.add("bad", np.ones(3, np.float32), dtype="f8_e4m3fn")
    with ztensor.Reader(path) as r:
        assert r.info("bf16_bits").dtype == "bf16"
        np.testing.assert_array_equal(r["bf16_bits"], bits)
        np.testing.assert_array_equal(ztensor.bf16_to_float32(r["bf16_floats"]), floats)
        assert r["cx"].dtype == np.complex64 and r["cx"].shape == (2,)
        np.testing.assert_array_equal(r["cx"], cx)
        np.testing.assert_array_equal(r["cx128"], cx128)
        info = r.info("fp8")
        assert info.components[0].logical_type == "f8_e4m3fn" and info.dtype == "u8"
        np.testing.assert_array_equal(r["fp8"], fp8)


def test_big_endian_input_is_stored_little_endian(tmp_path):
    a = np.arange(5, dtype=">i4")
    ztensor.save_file({"a": a}, tmp_path / "be.zt")
    got = ztensor.load_file(tmp_path / "be.zt")["a"]
    assert got.dtype == np.dtype("<i4")
    np.testing.assert_array_equal(got, a)


def test_sparse_helpers_round_trip(tmp_path):
    path = tmp_path / "sp.zt"
    dense = np.array([[0, 1.5, 0], [0, 0, 0], [2.0, 0, -1]], np.float32)
    rows, cols = np.nonzero(dense)
    with ztensor.Writer(path, sync=False) as w:
        indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(axis=1))])
        w.add_sparse_csr("csr", dense[rows, cols], cols, indptr, dense.shape)
        w.add_sparse_coo("coo", dense[rows, cols], np.stack([rows, cols]), dense.shape, zstd=True)
        with pytest.raises(ztensor.ZTensorError) as bad:
            w.add_sparse_csr("bad", [1.0], [7], [0, 1, 1, 1], (3, 3))  # column 7 >= 3
        assert bad.value.status == -62  # ZT_E_SPARSE_INDEX
    with ztensor.Reader(path) as r:
        assert "bad" not in r
        values, indices, indptr, shape = r["csr"]
        assert shape == (3, 3)
        rebuilt = np.zeros(shape, np.float32)
        for i in range(shape[0]):
            rebuilt[i, indices[indptr[i]:indptr[i + 1]]] = values[indptr[i]:indptr[i + 1]]
        np.testing.assert_array_equal(rebuilt, dense)
        coo = r["coo"]
        back = np.zeros(coo.shape, np.float32)
        back[tuple(coo.coords)] = coo.values
        np.testing.assert_array_equal(back, dense)
        r.verify(strict=True)


def test_sparse_scipy_in_and_out(tmp_path):
    sp = pytest.importorskip("scipy.sparse")
    m = sp.random(20, 30, density=0.1, format="csr", dtype=np.float64, random_state=1)
    with ztensor.Writer(tmp_path / "s.zt", sync=False) as w:
        w.add_sparse_csr("m", matrix=m)
        w.add_sparse_coo("c", m.tocoo().data, np.stack([m.tocoo().row, m.tocoo().col]), m.shape)
    with ztensor.Reader(tmp_path / "s.zt", sparse="scipy") as r:
        got = r["m"]
        assert isinstance(got, sp.csr_matrix)
        np.testing.assert_array_equal(got.toarray(), m.toarray())
        assert isinstance(r["c"], sp.coo_matrix)
        np.testing.assert_array_equal(r["c"].toarray(), m.toarray())


def test_quantized_helper_and_dequantize(tmp_path):
    rows, cols, group = 2, 16, 8
    q = (np.arange(rows * cols) % 16).astype(np.uint32).reshape(rows, cols)
    words = np.zeros((rows, cols // 8), np.uint32)
    for k in range(8):
        words |= q[:, k::8] << (4 * k)
    scales = np.array([[0.5, 2.0], [1.0, 0.25]], np.float16)
    zeros = np.array([[8, 8], [0, 1]], np.float16)
    with ztensor.Writer(tmp_path / "q.zt", sync=False) as w:
        w.add_quantized("w", words.view(np.int32), scales, zeros, (rows, cols), bits=4, group_size=group,
                        packing="8_per_i32")
    with ztensor.Reader(tmp_path / "q.zt") as r:
        got = r["w"]
        assert got.bits == 4 and got.group_size == group and got.packing == "8_per_i32"
        np.testing.assert_array_equal(got.packed_weight.view(np.uint32), words.reshape(-1))
        want = (q.astype(np.float32) - np.repeat(zeros, group, axis=1)) * np.repeat(scales, group, axis=1)
        np.testing.assert_array_equal(r.dequantize("w"), want.astype(np.float32))
        r.verify(strict=True)


def test_generic_objects_and_verify_reports_damage(tmp_path):
    path = tmp_path / "g.zt"
    with ztensor.Writer(path, digest="sha256", sync=False) as w:
        w.add_object("custom", "my_format", (2,), {"a": np.array([1, 2], np.int8), "b": np.ones(3, np.float32)})
        w.add("ok", np.arange(64, dtype=np.uint8))
    with ztensor.Reader(path) as r:
        parts = r["custom"]
        assert set(parts) == {"a", "b"}
        np.testing.assert_array_equal(parts["a"], [1, 2])
        r.verify()
        offset = r.info("ok").components[0].offset
    raw = bytearray(path.read_bytes())
    raw[offset] ^= 0xFF
    path.write_bytes(bytes(raw))
    with ztensor.Reader(path) as r:
        with pytest.raises(ztensor.ZTensorError) as info:
            r.verify()
        assert info.value.status == -51  # ZT_E_DIGEST_MISMATCH
        assert [f[0] for f in info.value.failures] == ["ok"]
        assert "ok" in str(info.value)


def test_mapping_interface_and_errors(tmp_path):
    tensors = {"b": np.ones(2), "a": np.zeros(3, np.int16), "ü name": np.arange(2)}
    ztensor.save_file(tensors, tmp_path / "m.zt", metadata={"k": "v"})
    r = ztensor.Reader(tmp_path / "m.zt")
    assert sorted(r.keys()) == sorted(tensors) and len(r) == 3
    assert "a" in r and "zz" not in r
    assert dict(r.items()).keys() == set(tensors)
    assert [k for k in r] == list(r.keys())
    assert r.get("zz") is None
    with pytest.raises(KeyError):
        r["zz"]
    with pytest.raises(ztensor.ZTensorError) as info:
        ztensor.Reader(tmp_path / "missing.zt")
    assert info.value.status == -4 and "missing.zt" in str(info.value)
    loaded = ztensor.load_file(tmp_path / "m.zt")
    for k, v in tensors.items():
        np.testing.assert_array_equal(loaded[k], v)
    assert ztensor.library_version().count(".") == 2
