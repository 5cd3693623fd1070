"""Foreign files through the one Reader (docs/foreign.md): zt_open reads
.safetensors, .npy, .npz and GGUF files (recognised by their bytes) as
read-only files of dense objects, their metadata as attributes."""
import json
import os
import struct
import sys

import numpy as np
import pytest

import ztensor


def safetensors_bytes(tensors, metadata=None):
    header, buf = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dt, arr) in tensors.items():
        data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [len(buf), len(buf) + len(data)]}
        buf += data
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + buf


def gguf_str(s):
    return struct.pack("<Q", len(s)) + s.encode()


def test_safetensors(tmp_path):
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = np.array([-1, 2**40], dtype=np.int64)
    h = np.array([0.5, -2], dtype=np.float16)
    path = tmp_path / "model.safetensors"
    path.write_bytes(safetensors_bytes({"w": ("F32", w), "i": ("I64", i), "h": ("F16", h)}, {"format": "pt"}))
    with ztensor.Reader(str(path)) as r:
        assert r.version == "safetensors"
        assert sorted(r.keys()) == ["h", "i", "w"]
        assert r.attributes == {"format": "pt"}
        np.testing.assert_array_equal(r["w"], w)
        np.testing.assert_array_equal(r["i"], i)
        np.testing.assert_array_equal(r["h"], h)
        assert r["w"].dtype == np.float32 and r["w"].shape == (3, 4)
        r.verify()
        # Read-only: a foreign file's view never writes back to it.
        np.testing.assert_array_equal(r.get_slice("w")[1:, 2], w[1:, 2])
    assert path.read_bytes() == safetensors_bytes({"w": ("F32", w), "i": ("I64", i), "h": ("F16", h)},
                                                  {"format": "pt"})


def test_npy_orders(tmp_path):
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    cases = {"c": a, "fortran": np.asfortranarray(a), "big": a.astype(">f8"), "c64": (a + 1j * a).astype(np.complex64)}
    for name, arr in cases.items():
        np.save(tmp_path / (name + ".npy"), arr)
        with ztensor.Reader(str(tmp_path / (name + ".npy"))) as r:
            assert r.version == "npy"
            assert list(r.keys()) == [name]
            np.testing.assert_array_equal(r[name], arr)


def test_npz(tmp_path):
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    y = np.linspace(0, 1, 5, dtype=np.float32)
    np.savez(tmp_path / "plain.npz", x=x, y=y)
    np.savez_compressed(tmp_path / "packed.npz", x=x, y=np.asfortranarray(np.outer(y, y)))
    with ztensor.Reader(str(tmp_path / "plain.npz")) as r:
        assert r.version == "npz"
        np.testing.assert_array_equal(r["x"], x)
        np.testing.assert_array_equal(r["y"], y)
    with ztensor.Reader(str(tmp_path / "packed.npz")) as r:
        np.testing.assert_array_equal(r["x"], x)
        np.testing.assert_array_equal(r["y"], np.outer(y, y))


def test_gguf(tmp_path):
    w = np.arange(8, dtype=np.float32).reshape(2, 4)
    b = b"GGUF" + struct.pack("<IQQ", 3, 1, 2)
    b += gguf_str("general.name") + struct.pack("<I", 8) + gguf_str("tiny")
    b += gguf_str("llama.context_length") + struct.pack("<II", 4, 2048)
    b += gguf_str("w") + struct.pack("<IQQIQ", 2, 4, 2, 0, 0)  # f32, ne = [4, 2]
    b += b"\0" * (-len(b) % 32) + w.tobytes()
    path = tmp_path / "m.bin"  # no extension: the magic says GGUF
    path.write_bytes(b)
    with ztensor.Reader(str(path)) as r:
        assert r.version == "gguf v3"
        assert r.attributes == {"general.name": "tiny", "llama.context_length": 2048}
        np.testing.assert_array_equal(r["w"], w)


@pytest.mark.parametrize("name,data", [
    ("cut.safetensors", safetensors_bytes({"w": ("F32", np.zeros(4, np.float32))})[:-3]),
    ("dtype.safetensors", safetensors_bytes({"w": ("F32", np.zeros(4, np.float32))}).replace(b'"F32"', b'"X32"')),
    ("short.npy", b"\x93NUMPY\x01\x00"),
    ("count.gguf", b"GGUF" + struct.pack("<IQQ", 3, 1 << 60, 0)),
])
def test_hostile_files_raise(tmp_path, name, data):
    (tmp_path / name).write_bytes(data)
    with pytest.raises(ztensor.ZTensorError):
        ztensor.Reader(str(tmp_path / name))


def mapped_ranges(path):
    """(start, end) of this process's mappings of the file `path`."""
    real = os.path.realpath(str(path))
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].strip() == real:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi))
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux") or sys.byteorder != "little",
                    reason="reads /proc/self/maps; views need little-endian data")
def test_onnx_raw_data_is_read_in_place(tmp_path):
    """An initializer's raw_data stays in the file (src/foreign/onnx_layout.cc):
    a view of one whose offset suits its element size is the file's mapped
    bytes, not a parsed copy; a misaligned one is still read right. (A
    model that also has typed-field initializers is decoded on read whole,
    as an .npz with a deflated member: tests/cli/test_onnx.py.)"""
    onnx = pytest.importorskip("onnx")
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(5)
    w = rng.standard_normal((64, 32)).astype(np.float32)
    h = rng.standard_normal(33).astype(np.float16)
    path = tmp_path / "m.onnx"
    for pad in range(8):  # doc_string comes before the graph: it moves w's raw_data
        m = helper.make_model(helper.make_graph([], "g", [], [], initializer=[
            numpy_helper.from_array(w, "w"), numpy_helper.from_array(h, "h")]))
        m.doc_string = "x" * pad
        data = m.SerializeToString()
        if data.find(w.tobytes()) % 4 == 0:
            break
    else:
        pytest.fail("no padding put w's raw_data at a multiple of 4")
    path.write_bytes(data)
    with ztensor.Reader(str(path)) as r:
        assert r.format == "onnx"
        v = r.read("w", copy=False)  # flat, as every read
        np.testing.assert_array_equal(v, w.ravel())
        addr = v.__array_interface__["data"][0]
        assert any(lo <= addr < hi for lo, hi in mapped_ranges(path)), "the view of 'w' is not the file's bytes"
        np.testing.assert_array_equal(r.read("h", copy=False), h)
        want = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}
        got = r.read_many()
        assert sorted(got) == sorted(want)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k])
