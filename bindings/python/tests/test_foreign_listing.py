"""Opening a foreign file and listing it decodes nothing (issue 37.6): a
Reader over a ~0.5 MB .npz whose deflated member inflates to 512 MiB lists
its keys and shapes in a few tens of MB; the member is inflated when read,
within a bound of a multiple of the file's size (docs/foreign.md)."""
import os
import subprocess
import sys
import zipfile

import pytest

import ztensor

MIB = 1 << 20


def zero_npz(path, n):
    d = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % n
    d += " " * (63 - (10 + len(d)) % 64) + "\n"
    zero = bytes(16 * MIB)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open("a.npy", "w", force_zip64=True) as f:
            f.write(b"\x93NUMPY\x01\x00" + len(d).to_bytes(2, "little") + d.encode())
            for _ in range(n // len(zero)):
                f.write(zero)


LIST_AND_MEASURE = """
import resource, sys, ztensor
r = ztensor.Reader(sys.argv[1])
keys = list(r.keys())
assert keys == ["a"], keys
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB is Linux's")
def test_keys_of_a_deflate_bomb_inflate_nothing(tmp_path):
    path = str(tmp_path / "bomb.npz")
    zero_npz(path, 512 * MIB)
    assert os.path.getsize(path) < 2 * MIB
    base = subprocess.run([sys.executable, "-c", "import resource, ztensor, numpy;"
                           "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)"],
                          capture_output=True, text=True, check=True)
    p = subprocess.run([sys.executable, "-c", LIST_AND_MEASURE, path], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert int(p.stdout) - int(base.stdout) < 48, (p.stdout, base.stdout)
    # Reading it passes the default bound (8 times the file's size, at
    # least 64 MiB): refused with a message naming the limit to raise.
    r = ztensor.Reader(path)
    with pytest.raises(Exception, match="max_decoded_size"):
        r["a"]


def test_format_names_the_source(tmp_path):
    import numpy as np
    np.savez(str(tmp_path / "a.npz"), x=np.arange(3))
    np.save(str(tmp_path / "b.npy"), np.arange(3))
    with ztensor.Writer(str(tmp_path / "c.zt")) as w:
        w.add("x", np.arange(3))
    assert ztensor.Reader(str(tmp_path / "a.npz")).format == "npz"
    assert ztensor.Reader(str(tmp_path / "b.npy")).format == "npy"
    assert ztensor.Reader(str(tmp_path / "c.zt")).format == "zt"
    # tests/data/foreign beside the interop vectors (tests/data/interop).
    data = os.path.join(os.environ["ZT_INTEROP_DIR"], "..", "foreign", "state_dict.pth")
    r = ztensor.Reader(data)
    assert r.format == "pickle"
    assert "0.weight" in r.keys()
