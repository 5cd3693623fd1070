"""Writing zTensor v2 from Python (docs/v2.md, Writing): Writer(format=2),
save_file(format=2) for numpy and torch; canonical by default, so the same
tensors give the same bytes whatever order they are given in."""
import os

import numpy as np
import pytest

import ztensor
import ztensor.numpy

MAGIC_V2 = b"\x89ZT2\r\n\x1a\n"
GOLDEN = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "data", "v2-golden")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_writer_format_2_is_canonical_in_any_order(tmp_path):
    a = {"b": np.arange(6, dtype=np.float32).reshape(2, 3), "a": np.ones(4, np.int16), "c": np.arange(6, dtype=np.float32).reshape(2, 3)}
    ztensor.save_file(a, tmp_path / "x.zt", format=2)
    ztensor.save_file(dict(reversed(list(a.items()))), tmp_path / "y.zt", format=2)
    x = read(tmp_path / "x.zt")
    assert x[:8] == MAGIC_V2 and x[-8:] == MAGIC_V2
    assert x == read(tmp_path / "y.zt")
    assert x[65536:65536 + 8] == np.ones(4, np.int16).tobytes()  # "a" first, at 64 KiB


def test_many_golden_from_python(tmp_path):
    # tests/data/v2-golden/many.zt, written by the original's writer.
    golden = os.path.join(GOLDEN, "many.zt")
    if not os.path.exists(golden):
        pytest.skip("no golden files beside this checkout")
    with ztensor.Writer(tmp_path / "m.zt", format=2) as w:
        for k in reversed(range(30)):
            kk = 0 if k % 10 == 0 else k
            data = np.array([(i * 7 + kk * 13) & 0xFF for i in range(6)], np.uint8).view(np.float16)
            w.add("t%03d" % k, data)
    assert read(tmp_path / "m.zt") == read(golden)


def test_non_canonical_options(tmp_path):
    with ztensor.Writer(tmp_path / "z.zt", zstd=3, digest="sha256", format=2, canonical=False, alignment=4096) as w:
        w.add("a", np.zeros(1000, np.float32))
    data = read(tmp_path / "z.zt")
    assert data[:8] == MAGIC_V2
    assert b"zt.zstd-seekable/1" in data and b"sha256:" in data
    with pytest.raises(ValueError, match="canonical"):
        ztensor.Writer(tmp_path / "bad.zt", zstd=3, format=2, digest="sha256")
    with pytest.raises(ValueError, match="crc32c"):
        ztensor.Writer(tmp_path / "bad.zt", format=2, canonical=False, digest="crc32c")
    with pytest.raises(ValueError, match="format"):
        ztensor.Writer(tmp_path / "bad.zt", format=3)


def test_numpy_save_file_format_2(tmp_path):
    ztensor.numpy.save_file({"w": np.eye(3, dtype=np.float32)}, tmp_path / "n.zt", format=2)
    assert read(tmp_path / "n.zt")[:8] == MAGIC_V2


def test_torch_save_file_format_2(tmp_path):
    torch = pytest.importorskip("torch")
    import ztensor.torch as zt_torch
    zt_torch.save_file({"w": torch.zeros(2, 3), "b": torch.ones(3, dtype=torch.bfloat16)}, tmp_path / "t.zt", format=2)
    assert read(tmp_path / "t.zt")[:8] == MAGIC_V2


def test_default_stays_1_2(tmp_path):
    ztensor.save_file({"w": np.ones(2, np.float32)}, tmp_path / "d.zt")
    assert read(tmp_path / "d.zt")[:4] == b"ZTEN"
