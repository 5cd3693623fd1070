"""Foreign files through the one Reader (docs/foreign.md): zt_open reads
.safetensors, .npy, .npz and GGUF files (recognised by their bytes) as
read-only files of dense objects, their metadata as attributes."""
import json
import struct

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
