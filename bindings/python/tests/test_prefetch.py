"""The prefetch open option from Python: Reader(prefetch=True) reaches the
library (a cold file's data comes into the page cache with nothing but the
open), and the whole-file loaders ask for it."""
import ctypes
import mmap
import os
import sys
import time

import numpy as np
import pytest

import ztensor
import ztensor.numpy as ztnp
import ztensor.reader as ztreader

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="eviction and mincore are Linux's")


def write_file(path, n=24, size=1 << 20):
    rng = np.random.default_rng(5)
    tensors = {f"t{i:03d}": rng.integers(0, 255, size, dtype=np.uint8) for i in range(n)}
    ztnp.save_file(tensors, str(path))
    return tensors


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def resident_fraction(path):
    """The share of the file's pages in the page cache (mincore(2) over a
    map made with libc: Python's mmap does not give its address)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    finally:
        os.close(fd)
    assert addr is not None and addr != ctypes.c_void_p(-1).value, ctypes.get_errno()
    try:
        pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
        vec = ctypes.create_string_buffer(pages)
        assert libc.mincore(addr, size, vec) == 0, ctypes.get_errno()
        return sum(b & 1 for b in vec.raw) / pages
    finally:
        libc.munmap(addr, size)


@linux_only
@pytest.mark.parametrize("use_mmap", [True, False])
def test_the_open_alone_brings_a_cold_file_in(tmp_path, use_mmap):
    path = str(tmp_path / "m.zt")
    tensors = write_file(path)
    evict(path)
    if resident_fraction(path) > 0.5:
        pytest.skip("this file system keeps the file's pages (tmpfs?)")
    with ztensor.Reader(path, mmap=use_mmap, prefetch=True) as r:
        assert r.prefetching
        deadline = time.monotonic() + 20
        while resident_fraction(path) < 0.95 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert resident_fraction(path) >= 0.95
        for name, t in tensors.items():
            np.testing.assert_array_equal(r[name], t)


@linux_only
def test_without_the_option_the_open_reads_little(tmp_path):
    path = str(tmp_path / "m.zt")
    write_file(path)
    evict(path)
    if resident_fraction(path) > 0.5:
        pytest.skip("this file system keeps the file's pages (tmpfs?)")
    with ztensor.Reader(path) as r:
        assert not r.prefetching
        time.sleep(0.3)
        assert resident_fraction(path) < 0.5


def test_the_whole_file_loaders_ask_for_it(tmp_path, monkeypatch):
    path = str(tmp_path / "m.zt")
    tensors = write_file(path, n=3, size=1000)
    asked = []
    real = ztreader.Reader._open_options

    def spy(self, mmap, strict, verify, prefetch=False):
        if prefetch:
            asked.append(True)
        return real(self, mmap, strict, verify, prefetch)

    monkeypatch.setattr(ztreader.Reader, "_open_options", spy)
    loaders = [lambda: ztnp.load_file(path), lambda: ztensor.load_file(path),
               lambda: ztensor.load_file(path, copy=False)]
    try:
        import ztensor.torch as ztpt
        loaders += [lambda: ztpt.load_file(path), lambda: ztpt.load_file(path, copy=False)]
    except ImportError:
        pass
    for load in loaders:
        asked.clear()
        out = load()
        assert asked, "a whole-file loader opened without prefetch"
        for name, t in tensors.items():
            np.testing.assert_array_equal(np.asarray(out[name]), t)
    # A lazy open does not.
    asked.clear()
    with ztensor.Reader(path) as r:
        r["t000"]
    assert not asked
