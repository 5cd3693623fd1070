"""The C++ extension (ztensor._ext) against the ctypes path it replaces:
which one is in use, and that both give the same tensors, owning their
memory, for every kind of file load_file meets.

meson's `python` test runs this with the extension it built
(ZTENSOR_REQUIRE_EXTENSION=1), `python_pure` with ZTENSOR_PURE_PYTHON=1;
the tests comparing both paths turn the extension off in-process."""
import os

import numpy as np
import pytest

import ztensor
import ztensor.numpy as ztnp
from ztensor import _bulk, _native


def test_the_expected_path_is_in_use():
    assert ztensor.extension_path == _native.extension_path
    if os.environ.get("ZTENSOR_PURE_PYTHON", "") not in ("", "0"):
        assert _native.ext is None and ztensor.extension_path is None
        assert "ZTENSOR_PURE_PYTHON" in _native.pure_python_reason
    elif os.environ.get("ZTENSOR_REQUIRE_EXTENSION") == "1":
        # Built by meson (or installed by pip): it must be the one loaded.
        assert _native.ext is not None, _native.pure_python_reason
        wanted = os.environ.get("ZTENSOR_EXTENSION")
        if wanted:
            assert os.path.samefile(_native.extension_path, wanted)
        else:
            assert os.path.dirname(_native.extension_path) == os.path.dirname(ztensor.__file__)
    else:
        pytest.skip("neither ZTENSOR_REQUIRE_EXTENSION nor ZTENSOR_PURE_PYTHON is set")


@pytest.fixture
def pure(monkeypatch):
    """A function running its argument on the ctypes backend (the one
    ztensor._bulk takes when no extension could be built)."""
    def run(fn, *args, **kwargs):
        with monkeypatch.context() as m:
            m.setattr(_bulk, "read_dense", _bulk._read_dense_ctypes)
            m.setattr(_bulk, "mapped_views", _bulk._mapped_views_ctypes)
            return fn(*args, **kwargs)
    return run


def requires_extension():
    if _native.ext is None:
        pytest.skip(f"ztensor._ext is not in use: {_native.pure_python_reason}")


def mixed_file(path, fp8=True):
    rng = np.random.default_rng(5)
    tensors = {}
    # Shapes repeating out of order (grouped by type and shape, not by
    # neighbours), a 0-d tensor, empty ones, several element types.
    for i in range(40):
        tensors[f"w{i}"] = rng.random((3, 5), dtype=np.float32)
        tensors[f"b{i}"] = rng.random(5).astype(np.float64)
        if i % 7 == 0:
            tensors[f"c{i}"] = rng.integers(-9, 9, (2, 2, 2), dtype=np.int8)
    tensors["scalar"] = np.array(3.5, np.float32)
    tensors["scalar2"] = np.array(-1.5, np.float32)
    tensors["empty"] = np.zeros((0, 4), np.float32)
    tensors["flags"] = np.array([True, False, True])
    tensors["cplx"] = np.array([1 + 2j, 3 - 4j], np.complex64)
    with ztensor.Writer(path, sync=False) as w:
        for name, value in tensors.items():
            w.add(name, value, zstd=name.startswith("c"))  # some compressed
        w.add("half", np.array([1.0, -2.0, 0.5], np.float32), dtype="bf16")
        if fp8:  # a logical type (torch before 2.1 has no float8 dtype)
            w.add("fp8", np.array([0x38, 0x40], np.uint8), dtype="f8_e4m3fn")
    return tensors


def test_numpy_load_file_matches_the_ctypes_path(tmp_path, pure):
    requires_extension()
    path = str(tmp_path / "m.zt")
    tensors = mixed_file(path)
    fast = ztnp.load_file(path)
    slow = pure(ztnp.load_file, path)
    assert list(fast) == list(slow)  # file order
    for name in slow:
        assert fast[name].dtype == slow[name].dtype, name
        assert fast[name].shape == slow[name].shape, name
        np.testing.assert_array_equal(fast[name], slow[name])
    for name, value in tensors.items():
        np.testing.assert_array_equal(fast[name], value)
    assert fast["half"].dtype == np.uint16 and fast["fp8"].dtype == np.uint8  # raw bits, as documented


def test_torch_load_file_matches_the_ctypes_path(tmp_path, pure):
    requires_extension()
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    path = str(tmp_path / "m.zt")
    mixed_file(path, fp8=hasattr(torch, "float8_e4m3fn"))
    for copy in (True, False):
        fast = ztpt.load_file(path, copy=copy)
        slow = pure(ztpt.load_file, path, copy=copy)
        assert list(fast) == list(slow)
        for name in slow:
            assert fast[name].dtype == slow[name].dtype, name
            assert fast[name].shape == slow[name].shape, name
            assert torch.equal(fast[name], slow[name]), name
        assert fast["half"].dtype == torch.bfloat16
        assert fast["half"].tolist() == [1.0, -2.0, 0.5]


def test_read_many_subsets_keep_the_order_asked(tmp_path, pure):
    requires_extension()
    path = str(tmp_path / "m.zt")
    mixed_file(path)
    names = ["b3", "scalar", "w0", "half", "c7", "w39", "empty", "flags"]  # few: read one by one
    with ztensor.Reader(path) as r:
        fast = r.read_many(names)
        slow = pure(r.read_many, names)
        views = r.mapped_views(names)
        with pytest.raises(KeyError):
            r.read_many(["w0", "nope"])
    assert list(fast) == names == list(views)
    for name in names:
        np.testing.assert_array_equal(fast[name], slow[name])
        np.testing.assert_array_equal(views[name], slow[name])


def test_loaded_arrays_own_one_arena(tmp_path):
    requires_extension()
    path = str(tmp_path / "m.zt")
    mixed_file(path)
    loaded = ztnp.load_file(path)
    bases = {id(a.base) for name, a in loaded.items() if not name.startswith("c")}
    assert len(bases) == 1  # one new allocation of this process, kept alive by every array
    arena = loaded["w0"].base
    assert arena.flags.owndata and arena.dtype == np.uint8
    assert all(a.flags.writeable for a in loaded.values())
    loaded["w0"] += 1  # the file is not touched
    np.testing.assert_array_equal(ztnp.load_file(path)["w0"] + 1, loaded["w0"])


def test_mapped_views_keep_the_file_open(tmp_path):
    requires_extension()
    path = str(tmp_path / "m.zt")
    tensors = mixed_file(path)
    r = ztensor.Reader(path)
    views = r.mapped_views(["w1", "c0"])
    r.close()
    del r
    assert not views["w1"].flags.writeable  # the file's mapping
    assert views["c0"].flags.writeable  # zstd: decoded into a copy
    np.testing.assert_array_equal(views["w1"], tensors["w1"])
    np.testing.assert_array_equal(views["c0"], tensors["c0"])


def corrupt_zstd_file(tmp_path):
    path = str(tmp_path / "bad.zt")
    with ztensor.Writer(path, sync=False) as w:
        w.add("good", np.arange(6, dtype=np.float32).reshape(2, 3))
        w.add("bad", np.arange(4096, dtype=np.float32), zstd=True)
        w.add("good2", np.arange(6, dtype=np.float32).reshape(2, 3))
        for i in range(12):  # more than the extension reads one by one: zt_file_read_many's statuses too
            w.add(f"more{i}", np.full(3, i, np.int32))
    with ztensor.Reader(path) as r:
        meta = r.metadata("bad")
    with open(path, "r+b") as f:  # no zstd frame there any more
        f.seek(meta.offset)
        f.write(b"\0" * 8)
    return path


def test_a_damaged_tensor_raises_with_its_name_on_both_paths(tmp_path, pure):
    path = corrupt_zstd_file(tmp_path)
    for load in (ztnp.load_file, lambda p: pure(ztnp.load_file, p)):
        with pytest.raises(ztensor.ZTensorError):
            load(path)
    with ztensor.Reader(path) as r:
        np.testing.assert_array_equal(r.read_many(["good2"])["good2"], np.arange(6).reshape(2, 3))
        with pytest.raises(ztensor.ZTensorError):
            r.read_many(["good", "bad"])  # read one by one


def test_objects_that_are_not_dense_are_refused_by_name(tmp_path):
    path = str(tmp_path / "s.zt")
    with ztensor.Writer(path, sync=False) as w:
        w.add("d", np.ones(3, np.float32))
        w.add_sparse_coo("s", np.array([1.0], np.float32), np.array([[0], [1]], np.int64), (2, 2))
    with pytest.raises(ValueError, match="'s'"):
        ztnp.load_file(path)
    with ztensor.Reader(path) as r:
        with pytest.raises(ValueError, match="'s'"):
            r.read_many(["d", "s"])


def test_the_extension_rejects_a_closed_reader(tmp_path):
    path = str(tmp_path / "m.zt")
    mixed_file(path)
    r = ztensor.Reader(path)
    r.close()
    with pytest.raises(ValueError, match="closed"):
        r.read_many()


def child(code, **env_changes):
    import subprocess
    import sys
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in sys.path if p)
    if env.get("ZTENSOR_LIBRARY"):
        env["ZTENSOR_LIBRARY"] = os.path.abspath(env["ZTENSOR_LIBRARY"])
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_without_the_extension_the_package_falls_back_to_ctypes(tmp_path):
    import glob
    if glob.glob(os.path.join(os.path.dirname(ztensor.__file__), "_ext*")):
        pytest.skip("an installed package: its extension is always there")
    path = str(tmp_path / "m.zt")
    ztnp.save_file({"a": np.arange(3, dtype=np.float32)}, path)
    proc = child("import sys, ztensor, ztensor.numpy as z; from ztensor import _native; "
                 f"print(ztensor.extension_path, _native.pure_python_reason, z.load_file({path!r})['a'].sum())",
                 ZTENSOR_EXTENSION=None, ZTENSOR_PURE_PYTHON=None)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("None ztensor._ext is not installed") and proc.stdout.split()[-1] == "3.0"


def test_a_named_extension_that_does_not_load_is_an_error(tmp_path):
    bad = tmp_path / "_ext.so"
    bad.write_bytes(b"not a shared object")
    proc = child("import ztensor", ZTENSOR_EXTENSION=str(bad), ZTENSOR_PURE_PYTHON=None)
    assert proc.returncode != 0 and "ImportError" in proc.stderr
