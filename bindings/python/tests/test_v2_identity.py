"""The content digest of a zTensor v2 model from Python (v2 spec §6.4):
Reader.content_digest() is the same for the same tensors at 64 KiB or
4 KiB placement, in any order, raw or zstd-seekable; different tensors
differ; a part without a digest makes it undefined (an error naming it)."""
import numpy as np
import pytest

import ztensor

MODEL = {"a": np.arange(4, dtype=np.float32), "b": np.full(300, 9, np.uint8)}


def digest(path, algorithm="sha256"):
    with ztensor.Reader(str(path)) as r:
        return r.content_digest(algorithm)


def test_same_tensors_same_digest(tmp_path):
    ztensor.save_file(MODEL, tmp_path / "c.zt", format=2)
    with ztensor.Writer(tmp_path / "f.zt", format=2, canonical=False, alignment=4096) as w:
        for k in reversed(list(MODEL)):
            w.add(k, MODEL[k])
    with ztensor.Writer(tmp_path / "z.zt", format=2, canonical=False, zstd=3) as w:
        for k, v in MODEL.items():
            w.add(k, v)
    files = [(tmp_path / n).read_bytes() for n in ("c.zt", "f.zt", "z.zt")]
    assert len(set(files)) == 3
    for alg, prefix, hexlen in (("sha256", "sha256:", 64), ("xxh3", "xxh3:", 16)):
        d = digest(tmp_path / "c.zt", alg)
        assert d.startswith(prefix) and len(d) == len(prefix) + hexlen
        assert d == digest(tmp_path / "f.zt", alg) == digest(tmp_path / "z.zt", alg)


def test_different_tensors_differ(tmp_path):
    ztensor.save_file(MODEL, tmp_path / "c.zt", format=2)
    ztensor.save_file({**MODEL, "a": MODEL["a"] + 1}, tmp_path / "d.zt", format=2)
    ztensor.save_file({"a2": MODEL["a"], "b": MODEL["b"]}, tmp_path / "e.zt", format=2)
    d = digest(tmp_path / "c.zt")
    assert d != digest(tmp_path / "d.zt")
    assert d != digest(tmp_path / "e.zt")


def test_undefined_without_part_digests(tmp_path):
    with ztensor.Writer(tmp_path / "n.zt", format=2, canonical=False, digest="none") as w:
        w.add("w", MODEL["a"])
    with ztensor.Reader(str(tmp_path / "n.zt")) as r:
        with pytest.raises(ztensor.ZTensorError, match="'w' part 'data' carries no digest"):
            r.content_digest()
        with pytest.raises(ValueError, match="algorithm"):
            r.content_digest("md5")


def test_canonical_form(tmp_path):
    # spec §6.3: the canonical writer's file is canonical; 4 KiB placement
    # misses rule 2, zstd or a sha256 digest rule 4; a 1.x file has no
    # canonical form (an error, not an answer).
    ztensor.save_file(MODEL, tmp_path / "c.zt", format=2)
    with ztensor.Reader(str(tmp_path / "c.zt")) as r:
        form = r.canonical()
        assert form == (True, 0, ()) and form.canonical and form.rule == 0
    cases = {"f.zt": dict(alignment=4096), "z.zt": dict(zstd=3), "s.zt": dict(digest="sha256")}
    for name, options in cases.items():
        with ztensor.Writer(tmp_path / name, format=2, canonical=False, **options) as w:
            for k, v in MODEL.items():
                w.add(k, v)
        with ztensor.Reader(str(tmp_path / name)) as r:
            form = r.canonical()
        assert not form.canonical
        assert form.rule == (2 if name == "f.zt" else 4), (name, form)
        assert form.misses and all(m.startswith("rule ") for m in form.misses)
        assert any(("'a'" in m or "'b'" in m) for m in form.misses), form.misses
    ztensor.save_file(MODEL, tmp_path / "v1.zt")
    with ztensor.Reader(str(tmp_path / "v1.zt")) as r:
        with pytest.raises(ztensor.ZTensorError, match="v2 files only"):
            r.canonical()
