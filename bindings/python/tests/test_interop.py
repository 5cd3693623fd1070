"""Every accepted interop vector reads to the bytes expected.json records."""
import hashlib
import json

import numpy as np
import pytest

import ztensor
from ztensor import _attributes


def expected_files(interop_dir, sub):
    return json.loads((interop_dir / sub / "expected.json").read_text())["files"]


@pytest.mark.parametrize("sub", ["v1", "v0"])
def test_interop_vectors_match_expected_sha256(interop_dir, sub):
    files = expected_files(interop_dir, sub)
    assert files
    checked = 0
    for fname, exp in files.items():
        with ztensor.Reader(interop_dir / sub / fname) as r:
            assert r.version == exp["version"], fname
            assert sorted(r.keys()) == sorted(o["name"] for o in exp["objects"]), fname
            assert len(r) == len(exp["objects"])
            # Attributes compare in their JSON form (nan == nan there).
            assert _attributes.encode(r.attributes) == exp["attributes"], fname
            for o in exp["objects"]:
                name = o["name"]
                assert name in r
                info = r.info(name)
                assert info.format == o["format"], (fname, name)
                assert list(info.shape) == o["shape"], (fname, name)
                assert _attributes.encode(info.attributes) == o["attributes"], (fname, name)
                for c in o["components"]:
                    arr = r.read(name, c["role"])
                    digest = hashlib.sha256(arr.tobytes()).hexdigest()
                    assert digest == c["sha256"], (fname, name, c["role"])
                    ci = next(x for x in info.components if x.role == c["role"])
                    assert ci.dtype == c["dtype"] and ci.logical_type == c["type"], (fname, name, c["role"])
                    checked += 1
            r.verify()
    assert checked > 0


def test_interop_dense_objects_have_the_right_numpy_type(interop_dir):
    with ztensor.Reader(interop_dir / "v1" / "dense_all_dtypes.zt") as r:
        for name in r:
            info = r.info(name)
            arr = r[name]
            assert arr.shape == info.shape
            want = {"f64": "<f8", "f32": "<f4", "f16": "<f2", "bf16": "<u2", "i64": "<i8", "i32": "<i4",
                    "i16": "<i2", "i8": "|i1", "u64": "<u8", "u32": "<u4", "u16": "<u2", "u8": "|u1", "bool": "|b1"}
            assert arr.dtype.str == want[info.dtype], name


def test_interop_sparse_and_quantized(interop_dir):
    with ztensor.Reader(interop_dir / "v1" / "sparse_csr.zt") as r:
        for name in r:
            m = r[name]
            assert isinstance(m, ztensor.SparseCSR)
            assert len(m.indptr) == m.shape[0] + 1
            assert len(m.indices) == len(m.values) == m.indptr[-1]
    scipy_sparse = pytest.importorskip("scipy.sparse")
    with ztensor.Reader(interop_dir / "v1" / "sparse_csr.zt", sparse="scipy") as r:
        for name in r:
            assert isinstance(r[name], scipy_sparse.csr_matrix)
    with ztensor.Reader(interop_dir / "v1" / "sparse_coo.zt") as r:
        for name in r:
            m = r[name]
            assert isinstance(m, ztensor.SparseCOO)
            assert m.coords.shape == (len(m.shape), len(m.values))
            for d, extent in enumerate(m.shape):
                assert (m.coords[d] < extent).all()
    with ztensor.Reader(interop_dir / "v1" / "quantized_group.zt") as r:
        for name in r:
            q = r[name]
            assert isinstance(q, ztensor.Quantized)
            assert q.bits > 0 and q.group_size > 0
            w = r.dequantize(name)
            assert w.shape == tuple(q.shape) and w.dtype == np.float32 and np.isfinite(w).all()


def test_interop_negative_files_fail_open_or_verify(interop_dir):
    files = expected_files(interop_dir, "v1/negative")
    for fname, exp in files.items():
        path = interop_dir / "v1" / "negative" / fname
        try:
            r = ztensor.Reader(path)
        except ztensor.ZTensorError as e:
            assert e.status < 0
            continue
        assert exp["expect"] in ("reject_read", "reject_open"), fname
        with pytest.raises(ztensor.ZTensorError) as info:
            r.verify()
        assert info.value.failures, fname
        # A structurally damaged object refuses to read (digests are checked
        # by verify only, not by reads).
        bad = {f[0] for f in info.value.failures if f[2] not in (-51, -52)}
        for name in bad:
            with pytest.raises(ztensor.ZTensorError):
                for role in [c.role for c in r.info(name).components]:
                    r.read(name, role)
        r.close()
