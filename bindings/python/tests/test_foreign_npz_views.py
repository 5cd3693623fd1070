"""Zero-copy views of .npz members numpy.savez left misaligned (issue 35,
docs/foreign.md "Misaligned tensors"): numpy.savez stores each member at
whatever offset the zip's local header and the member's name give it, so
most typed members are not at a multiple of their element size. The numpy
views lend them in place anyway (flags.aligned False, which numpy allows);
torch gets aligned copies; values always equal numpy.load's."""
import numpy as np
import pytest

import ztensor

# Every dtype numpy.savez writes that zTensor has a type for.
DTYPES = ["?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"]


def arrays():
    rng = np.random.default_rng(7)
    out = {}
    for dt in DTYPES:
        for n in range(8):  # names of 8 lengths: members at every residue of the element size
            name = "%s_%s" % (dt.replace("?", "b"), "x" * n)
            out[name] = (rng.standard_normal(3 * 5) * 100).astype(dt).reshape(3, 5)
    return out


def mapped_range(reader):
    """[lo, hi) addresses of every in-place view the reader lends."""
    ptrs = [reader.read(k, copy=False).ctypes.data for k in reader.keys()]
    return min(ptrs), max(ptrs)


@pytest.fixture
def npz(tmp_path):
    path = tmp_path / "m.npz"
    data = arrays()
    np.savez(path, **data)
    return str(path), data


def test_misaligned_members_are_zero_copy_views(npz):
    path, data = npz
    misaligned = {}
    with np.load(path) as z, ztensor.Reader(path) as r:
        for name in z.files:
            expected = z[name]
            view = r.read(name, copy=False)
            again = r.read(name, copy=False)
            # In place: two reads lend the same bytes of the file's mapping
            # (a copy-read would give two separate buffers).
            assert np.shares_memory(view, again), name
            assert view.ctypes.data == again.ctypes.data, name
            assert view.dtype == expected.dtype, name
            np.testing.assert_array_equal(view, expected.ravel(), err_msg=name)
            shaped = r[name]
            assert shaped.shape == expected.shape and np.shares_memory(shaped, view), name
            np.testing.assert_array_equal(shaped, expected, err_msg=name)
            misaligned[name] = view.ctypes.data % expected.dtype.alignment != 0
            assert view.flags.aligned == (not misaligned[name]), name
            # numpy computes on them (buffered for misaligned data).
            np.testing.assert_array_equal(shaped * 2, expected * 2, err_msg=name)
    # The test means something: most typed members are misaligned.
    for dt in DTYPES:
        if np.dtype(dt).alignment > 1:
            assert any(v for k, v in misaligned.items() if k.startswith(dt.replace("?", "b") + "_")), dt


def test_views_stay_copies_where_bytes_cannot_be_lent(tmp_path):
    """Deflated members and big-endian data are still decoded copies."""
    x = np.arange(15, dtype=">f4").reshape(3, 5)
    np.savez(tmp_path / "be.npz", a_=x)
    np.savez_compressed(tmp_path / "z.npz", a_=x.astype("<f4"))
    for name in ("be.npz", "z.npz"):
        with ztensor.Reader(str(tmp_path / name)) as r:
            a, b = r.read("a_", copy=False), r.read("a_", copy=False)
            np.testing.assert_array_equal(a, x.ravel())
            assert a.flags.aligned
            if name == "be.npz":
                assert not np.shares_memory(a, b)


def test_mapped_views_lend_misaligned_members(npz):
    path, data = npz
    with ztensor.Reader(path) as r:
        views = r.mapped_views(list(data))
        lo, hi = mapped_range(r)
        for name, expected in data.items():
            np.testing.assert_array_equal(views[name], expected, err_msg=name)
            assert lo <= views[name].ctypes.data <= hi, name  # in the mapping, not a copy


def test_torch_gets_aligned_copies_of_misaligned_members(npz):
    torch = pytest.importorskip("torch")
    import ztensor.torch as zt_torch
    _, every = npz
    # Unsigned types past 8 bits are missing from older torch (1.13).
    data = {k: v for k, v in every.items() if v.dtype.kind != "u" or v.dtype.itemsize == 1}
    path = npz[0][:-4] + "_torch.npz"
    np.savez(path, **data)
    tensors = zt_torch.load_file(path, copy=False)
    for name, expected in data.items():
        t = tensors[name]
        assert t.data_ptr() % t.element_size() == 0, name
        if expected.dtype.kind != "c":
            np.testing.assert_array_equal(t.numpy(), expected, err_msg=name)
        else:
            np.testing.assert_array_equal(torch.view_as_real(t).numpy(), expected.view(expected.real.dtype).reshape(
                expected.shape + (2,)), err_msg=name)
    with ztensor.Reader(path) as r:
        for name, expected in data.items():
            t = torch.from_dlpack(r.tensor(name, copy=False))
            assert t.data_ptr() % t.element_size() == 0, name
