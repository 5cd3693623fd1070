"""DLPack: numpy.from_dlpack over zt_object_to_dlpack, capsule ownership."""
import gc
import numpy as np
import pytest

import ztensor


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "dl.zt"
    with ztensor.Writer(p, sync=False) as w:
        w.add("raw", np.arange(12, dtype=np.float32).reshape(3, 4))
        w.add("packed", np.arange(300, dtype=np.int64).reshape(30, 10), zstd=True)
        w.add("cx", np.array([1 + 2j, 3 - 4j], np.complex128))
        w.add_sparse_csr("csr", [1.0], [0], [0, 1], (1, 1))
    return p


def test_from_dlpack_is_zero_copy_for_raw_data(path):
    r = ztensor.Reader(path)
    t = r.tensor("raw", copy=False)
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    assert a.shape == (3, 4) and a.dtype == np.float32
    assert a.ctypes.data == r["raw"].ctypes.data  # the same bytes of the mapping
    # The DLPack tensor holds the file: closing the reader does not unmap it.
    r.close()
    del r, t
    gc.collect()
    np.testing.assert_array_equal(a, np.arange(12, dtype=np.float32).reshape(3, 4))


def test_from_dlpack_decodes_zstd_and_complex(path):
    with ztensor.Reader(path) as r:
        p = np.from_dlpack(r.tensor("packed"))
        np.testing.assert_array_equal(p, np.arange(300).reshape(30, 10))
        assert p.ctypes.data != r["packed"].ctypes.data
        c = np.from_dlpack(r.tensor("cx"))
        assert c.dtype == np.complex128
        np.testing.assert_array_equal(c, [1 + 2j, 3 - 4j])
        np.testing.assert_array_equal(np.asarray(r.tensor("raw")), r["raw"])


def mapped(path):
    """Whether the file is mapped into this process (Linux /proc/self/maps)."""
    with open("/proc/self/maps") as maps:
        return any(line.rstrip().endswith(str(path)) for line in maps)


def assert_array_holds_the_mapping(path, take):
    # The array `take` returns outlives its closed reader, keeping the file
    # mapped, and releases the mapping when it goes.
    r = ztensor.Reader(path)
    a = take(r)
    r.close()
    del r
    gc.collect()
    assert mapped(path)
    assert a[2, 3] == 11
    del a
    gc.collect()
    assert not mapped(path)


def test_capsules_hold_the_mapping_until_released(path):
    r = ztensor.Reader(path)
    assert mapped(path)
    cap = r.dlpack("raw")
    assert "dltensor" in repr(cap)
    r.close()
    del r
    gc.collect()
    assert mapped(path)  # the unconsumed capsule still holds the file
    del cap  # never consumed: its destructor runs the deleter
    gc.collect()
    assert not mapped(path)

    # consumed: numpy now owns the deleter
    assert_array_holds_the_mapping(path, lambda r: np.from_dlpack(r.tensor("raw", copy=False)))


def test_zero_copy_arrays_hold_the_mapping_until_released(path):
    assert_array_holds_the_mapping(path, lambda r: r["raw"])


def test_dlpack_refuses_non_dense_objects(path):
    with ztensor.Reader(path) as r:
        with pytest.raises(ztensor.ZTensorError) as info:
            r.dlpack("csr")
        assert info.value.status == -66  # ZT_E_WRONG_FORMAT
        with pytest.raises(BufferError):
            r.tensor("raw").__dlpack__(stream=1)


def test_torch_from_dlpack(path):
    # Debian's python3-torch; tools/dev.sh installs it so this runs in CI.
    torch = pytest.importorskip("torch")
    with ztensor.Reader(path) as r:
        t = torch.from_dlpack(r.tensor("raw", copy=False))
        assert tuple(t.shape) == (3, 4) and t.dtype == torch.float32
        assert t.data_ptr() == r["raw"].ctypes.data  # zero-copy from the mapping
        assert t.sum().item() == 66.0
        p = torch.from_dlpack(r.tensor("packed"))
        assert p.dtype == torch.int64
        assert p.tolist() == np.arange(300).reshape(30, 10).tolist()
        c = torch.from_dlpack(r.tensor("cx"))
        assert c.dtype == torch.complex128 and c.tolist() == [1 + 2j, 3 - 4j]
