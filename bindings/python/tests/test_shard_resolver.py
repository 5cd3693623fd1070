"""Reader(path, shard_resolver=...): a zTensor v2 root whose shards are
found by the caller's convention (zt_open_sharded; docs/v2.md "Shards"), or
by the library's identity scan (ztensor.IdentityScan). The original 2.x
package exposes no resolver (its shards resolve positionally only)."""

import os
import shutil
from ctypes import c_char_p, c_size_t, c_uint32, c_int

import numpy as np
import pytest

import ztensor
from ztensor._lib import check, lib

ZT_DIGEST_XXH3 = 4


def make_model(folder):
    """root.zt naming two data shards "a" and "b" (Appendix B positional
    names root-a.zt, root-b.zt), each holding one tensor."""
    paths = []
    for name, value in (("a", 1.0), ("b", 2.0)):
        p = os.path.join(folder, f"root-{name}.zt")
        with ztensor.Writer(p, format=2) as w:
            w.add(f"t.{name}", np.full((4, 8), value, dtype=np.float32))
        paths.append(p)
    root = os.path.join(folder, "root.zt")
    arr = c_char_p * 2
    lib.zt_v2_make_sharded.argtypes = [c_char_p, arr, arr, c_size_t, c_int, c_uint32]
    lib.zt_v2_make_sharded.restype = c_int
    check(lib.zt_v2_make_sharded(root.encode(), arr(*(p.encode() for p in paths)), arr(b"a", b"b"), 2,
                                 ZT_DIGEST_XXH3, 0))
    return root


def test_a_callable_resolver_finds_renamed_shards(tmp_path):
    root = make_model(str(tmp_path))
    store = tmp_path / "store"
    store.mkdir()
    shutil.move(str(tmp_path / "root-a.zt"), str(store / "first"))
    shutil.move(str(tmp_path / "root-b.zt"), str(store / "second"))
    asked = []

    def resolve(name, size, digest):
        asked.append((name, size, digest[:5]))
        return {"a": str(store / "first")}.get(name)  # "b": None, not found

    with ztensor.Reader(root, shard_resolver=resolve) as r:
        assert sorted(asked) == [("a", os.path.getsize(store / "first"), "xxh3:"),
                                 ("b", os.path.getsize(store / "second"), "xxh3:")]
        np.testing.assert_array_equal(r["t.a"], np.full((4, 8), 1.0, dtype=np.float32))
        with pytest.raises(ztensor.ZTensorError) as e:
            r["t.b"]
        assert e.value.status == -5 and "shard" in str(e.value)  # ZT_E_NOT_FOUND
    with ztensor.Reader(root) as r:  # positional: the files were renamed away
        with pytest.raises(ztensor.ZTensorError):
            r["t.a"]


def test_an_exception_in_the_resolver_propagates(tmp_path):
    root = make_model(str(tmp_path))

    def broken(name, size, digest):
        raise LookupError("catalogue down")

    with pytest.raises(LookupError, match="catalogue down"):
        ztensor.Reader(root, shard_resolver=broken)
    with pytest.raises(TypeError):
        ztensor.Reader(root, shard_resolver=42)
    with pytest.raises(ValueError):
        ztensor.Reader(open(root, "rb").read(), shard_resolver=broken)


def test_identity_scan_survives_any_renaming(tmp_path):
    root = make_model(str(tmp_path))
    store = tmp_path / "store"
    store.mkdir()
    shutil.move(str(tmp_path / "root-a.zt"), str(store / "x.zt"))
    shutil.move(str(tmp_path / "root-b.zt"), str(store / "y.zt"))
    with ztensor.IdentityScan(store) as scan:
        with ztensor.Reader(root, shard_resolver=scan) as r:
            np.testing.assert_array_equal(r["t.b"], np.full((4, 8), 2.0, dtype=np.float32))
            np.testing.assert_array_equal(r["t.a"], np.full((4, 8), 1.0, dtype=np.float32))
    with pytest.raises(ValueError):
        ztensor.Reader(root, shard_resolver=scan)  # closed
