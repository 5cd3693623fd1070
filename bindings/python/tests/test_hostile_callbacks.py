"""No Python code can corrupt memory through the binding: every length a
Python callback or argument hands the library is checked first, and a bad
one raises a Python exception.

Each scenario runs in a child interpreter, so a regression (a SIGSEGV or
SIGABRT) fails its test instead of killing the test run. The child prints
the exception it got; the test checks it is the expected Python one."""
import os
import subprocess
import sys
import textwrap

import pytest

# A file object over a real .zt file's bytes that misbehaves as told.
PRELUDE = """
import io, sys
import numpy as np
import ztensor

with ztensor.Writer("f.zt") as w:
    w.add("a", np.arange(4096, dtype=np.float32))
    w.add("b", np.arange(16, dtype=np.int64))
data = open("f.zt", "rb").read()

class Hostile(io.RawIOBase):
    def __init__(self, read=None, seek=None, tell=None):
        self.inner = io.BytesIO(data)
        self._read, self._seek, self._tell = read, seek, tell
    def readable(self): return True
    def seekable(self): return True
    def seek(self, offset, whence=0):
        pos = self.inner.seek(offset, whence)
        return self._seek(offset, whence, pos) if self._seek else pos
    def tell(self):
        pos = self.inner.tell()
        return self._tell(pos) if self._tell else pos
    def read(self, n=-1):
        got = self.inner.read(n)
        return self._read(n, got) if self._read else got

def attempt(make):
    try:
        r = make()
        for name in r.keys():
            r[name]
        print("OK", sorted(r.keys()))
    except Exception as e:
        print("RAISED", type(e).__name__, str(e)[:200])
"""


def run_child(code, tmp_path, timeout=120):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in sys.path if p)
    if env.get("ZTENSOR_LIBRARY"):
        env["ZTENSOR_LIBRARY"] = os.path.abspath(env["ZTENSOR_LIBRARY"])
    proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (f"child ended with {proc.returncode} (negative: killed by that signal)\n"
                                  f"stdout: {proc.stdout}\nstderr: {proc.stderr}")
    return proc.stdout.strip().splitlines()[-1]


# read(n) results: (code of the replacement, what the reader must do)
HOSTILE_READS = {
    "too_much": "lambda n, got: got + b'\\xff' * (1 << 20)",  # overflowed the library's buffer: SIGSEGV
    "too_much_bytearray": "lambda n, got: bytearray(got) + bytearray(1 << 16)",
    "too_much_memoryview": "lambda n, got: memoryview(got + bytes(1 << 16))",
    "too_much_numpy": "lambda n, got: np.zeros(n + 4096, np.uint8)",
    "int": "lambda n, got: 1 << 40",  # bytes(int) would allocate that many zeros
    "huge_int": "lambda n, got: 1 << 100",
    "negative_int": "lambda n, got: -5",
    "str": "lambda n, got: 'x' * n",
    "none": "lambda n, got: None",
    "list": "lambda n, got: list(got)",
    "strided": "lambda n, got: memoryview(np.zeros(2 * n + 2, np.uint8))[::2]",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_READS))
@pytest.mark.parametrize("opener", ["Reader", "safe_open"])
def test_hostile_read_raises(tmp_path, kind, opener):
    make = ("ztensor.Reader(f)" if opener == "Reader" else "ztensor.safe_open(f, 'numpy')")
    last = run_child(f"""
        f = Hostile(read={HOSTILE_READS[kind]})
        attempt(lambda: {make})
    """, tmp_path)
    assert last.startswith("RAISED"), last


def test_lying_len_is_ignored(tmp_path):
    # The bytes' buffer is what counts, not what __len__ claims (a claimed
    # 1 GiB was copied out of a few bytes' object).
    last = run_child("""
        Liar = type("Liar", (bytes,), {"__len__": lambda self: 1 << 30})
        f = Hostile(read=lambda n, got: Liar(got))
        r = ztensor.Reader(f)
        assert (r["a"] == np.arange(4096, dtype=np.float32)).all()
        print("OK", sorted(r.keys()))
    """, tmp_path)
    assert last == "OK ['a', 'b']"


def test_short_reads_are_completed(tmp_path):
    # A file object that gives at most 7 bytes per read is legal (a pipe-like
    # source): the library asks again for the rest.
    last = run_child("""
        f = Hostile(read=lambda n, got: got[:7])
        r = ztensor.Reader(f)
        assert (r["a"] == np.arange(4096, dtype=np.float32)).all()
        print("OK", sorted(r.keys()))
    """, tmp_path)
    assert last == "OK ['a', 'b']"


def test_read_of_nothing_is_an_error(tmp_path):
    last = run_child("""
        f = Hostile(read=lambda n, got: b"")
        attempt(lambda: ztensor.Reader(f))
    """, tmp_path)
    assert last.startswith("RAISED ZTensorError"), last


@pytest.mark.parametrize("tell", ["-1", "-(1 << 70)", "1 << 64", "1 << 100", "'12'", "1.5", "None"])
def test_hostile_tell_raises(tmp_path, tell):
    # A size that does not fit in uint64_t would be wrapped silently by ctypes.
    last = run_child(f"""
        f = Hostile(tell=lambda pos: {tell})
        attempt(lambda: ztensor.Reader(f))
    """, tmp_path)
    assert last.startswith("RAISED"), last


@pytest.mark.parametrize("seek", ["-1", "pos + 1", "1 << 100", "'0'"])
def test_hostile_seek_result_raises(tmp_path, seek):
    # seek() reporting a position other than the one asked for: the bytes
    # read next are not the ones the library asked for.
    last = run_child(f"""
        f = Hostile(seek=lambda off, whence, pos: {seek} if whence == 0 else pos)
        attempt(lambda: ztensor.Reader(f))
    """, tmp_path)
    assert last.startswith("RAISED"), last


def test_seek_returning_none_is_accepted(tmp_path):
    # Duck-typed file objects whose seek returns None (older fsspec files) still work.
    last = run_child("""
        f = Hostile(seek=lambda off, whence, pos: None)
        attempt(lambda: ztensor.Reader(f))
    """, tmp_path)
    assert last == "OK ['a', 'b']", last


# Other entry points that hand the library a buffer and its size.
@pytest.mark.parametrize("dest", [
    "bytearray(10)",                      # too small
    "bytes(1 << 16)",                     # read-only
    "memoryview(bytearray(1 << 16))[::2]",  # not contiguous
    "np.zeros(1 << 14, np.float32)[::2]",  # not contiguous
    "np.zeros(1 << 14, np.float32)[:0]",  # empty
    "np.zeros((0,), np.uint8)",
    "memoryview(bytearray(1 << 16)).toreadonly()",
    "np.frombuffer(bytes(1 << 16), np.uint8)",  # read-only numpy
    "12345",
    "None",
])
def test_read_into_bad_destination_raises(tmp_path, dest):
    last = run_child(f"""
        r = ztensor.Reader("f.zt")
        try:
            r.read_into("a", {dest})
            print("OK")
        except Exception as e:
            print("RAISED", type(e).__name__, e)
    """, tmp_path)
    assert last.startswith("RAISED"), last


def test_read_into_exact_destination_works(tmp_path):
    last = run_child("""
        r = ztensor.Reader("f.zt")
        out = bytearray(4096 * 4)
        r.read_into("a", out)
        assert np.frombuffer(out, np.float32).tolist() == list(range(4096))
        print("OK")
    """, tmp_path)
    assert last == "OK"


@pytest.mark.parametrize("args", [
    "[1.0, 2.0, 3.0], [0], [0, 3], (1, 3)",                 # indices shorter than values
    "[1.0, 2.0], [0, 1], [0, 2], (1 << 20, 3)",             # indptr shorter than rows + 1
    "[1.0, 2.0], [0, 1], [0, 1, 2, 2, 2], (2, 3)",          # indptr longer than rows + 1
    "[1.0, 2.0], [0, 1], [0, 2], (-1, 3)",                  # negative rows
    "[1.0, 2.0], [0, 1], [0, 2], ((1 << 64) + 1, 3)",       # rows that wrap in uint64_t
])
def test_sparse_csr_lengths_checked(tmp_path, args):
    last = run_child(f"""
        w = ztensor.Writer.memory()
        try:
            w.add_sparse_csr("s", {args})
            print("OK")
        except Exception as e:
            print("RAISED", type(e).__name__, e)
    """, tmp_path)
    assert last.startswith("RAISED"), last


@pytest.mark.parametrize("coords", ["[[0], [1]]", "[0]", "np.zeros((3, 2), np.uint64)"])
def test_sparse_coo_lengths_checked(tmp_path, coords):
    last = run_child(f"""
        w = ztensor.Writer.memory()
        try:
            w.add_sparse_coo("c", [5.0, 7.0], {coords}, (1 << 20, 1 << 20))
            print("OK")
        except Exception as e:
            print("RAISED", type(e).__name__, e)
    """, tmp_path)
    assert last.startswith("RAISED"), last


def test_sparse_coo_shape_that_wraps_raises(tmp_path):
    # (2**64 + 3,) was handed to the library as (3,).
    last = run_child(f"""
        w = ztensor.Writer.memory()
        try:
            w.add_sparse_coo("c", [5.0], [[2]], ((1 << 64) + 3,))
            print("OK")
        except Exception as e:
            print("RAISED", type(e).__name__, e)
    """, tmp_path)
    assert last.startswith("RAISED"), last


def test_stream_writer_callback_survives_bad_stream(tmp_path):
    # A stream whose write raises or returns nonsense fails the writer with a
    # Python exception (never a crash).
    last = run_child("""
        class Bad:
            def write(self, b): raise OSError("disk on fire")
        try:
            with ztensor.Writer.to_stream(Bad()) as w:
                w.add("x", np.ones(1 << 16, np.float32))
            print("OK")
        except Exception as e:
            print("RAISED", type(e).__name__, e)
    """, tmp_path)
    assert last.startswith("RAISED"), last


def test_extension_refuses_rebinding(tmp_path):
    last = run_child("""
        from ztensor import _native
        if _native.ext is None:
            print("SKIP no extension")
            sys.exit(0)
        try:
            _native.ext.bind(1, 2, 3, 4, 5, 6)  # would make every later load jump to address 1
            print("OK")
        except Exception as e:
            print("RAISED", type(e).__name__, e)
        r = ztensor.Reader("f.zt")
        assert (r.read_many(["a"])["a"] == np.arange(4096, dtype=np.float32)).all()
    """, tmp_path)
    if last.startswith("SKIP"):
        pytest.skip("the C++ extension is not built")
    assert last.startswith("RAISED RuntimeError"), last


def test_extension_refuses_object_dtypes(tmp_path):
    # type_of is the binding's own, but a dtype holding PyObject pointers
    # must never be laid over file bytes, whoever asks.
    last = run_child("""
        from ztensor import _native
        if _native.ext is None:
            print("SKIP no extension")
            sys.exit(0)
        r = ztensor.Reader("f.zt")
        t = r._table
        try:
            out = _native.ext.mapped_views(r._h.ptr, t.raw_rows, t.row_size, t.raw_dims, t.names,
                                           None, lambda code, logical: (np.dtype(object), "obj"), r._h, None)
            print("OK", out)
        except Exception as e:
            print("RAISED", type(e).__name__, e)
    """, tmp_path)
    if last.startswith("SKIP"):
        pytest.skip("the C++ extension is not built")
    assert last.startswith("RAISED TypeError"), last


# Names, roles and formats holding NUL (1.x allows any UTF-8 text): "a\0b" is
# its own object, "r\0s" its own role, "dense\0x" not "dense".
NUL_FILE = """
import struct, cbor2
def f32(v): return struct.pack("<f", v)
blobs = [f32(1.0), f32(2.0), f32(3.0), f32(4.0), f32(5.0)]
body, offs = bytearray(b"ZTEN1000"), []
for b in blobs:
    body += bytes(-len(body) % 64); offs.append(len(body)); body += b
def comp(i, **extra): return dict(dtype="f32", offset=offs[i], length=4, **extra)
man = {"version": "1.2.0", "objects": {
    "a": {"shape": [1], "format": "dense", "components": {"data": comp(0)}},
    "a\\x00b": {"shape": [1], "format": "dense", "components": {"data": comp(1, digest="sha256:" + "0" * 64)}},
    "mine": {"shape": [1], "format": "mine", "components": {"r": comp(2), "r\\x00s": comp(3)}},
    "d": {"shape": [1], "format": "dense\\x00x", "components": {"data": comp(4)}}}}
enc = cbor2.dumps(man)
open("nul.zt", "wb").write(bytes(body) + enc + struct.pack("<Q", len(enc)) + b"ZTEN1000")
"""


def test_names_roles_and_formats_with_nul(tmp_path):
    pytest.importorskip("cbor2")
    last = run_child(NUL_FILE + textwrap.dedent("""
        r = ztensor.Reader("nul.zt")
        assert sorted(r.keys()) == ["a", "a\\x00b", "d", "mine"], r.keys()
        assert r["a"].tolist() == [1.0] and r["a\\x00b"].tolist() == [2.0]
        info = r.info("mine")
        assert [c.role for c in info.components] == ["r", "r\\x00s"], info.components
        assert r.read("mine", role="r\\x00s").tolist() == [4.0]
        assert r.read("mine", role="r").tolist() == [3.0]
        assert r.format_of("d") == "dense\\x00x", r.format_of("d")
        try:
            r.verify()
            raise AssertionError("verify passed")
        except ztensor.ZTensorError as e:
            assert [f[:2] for f in e.failures] == [("a\\x00b", "data")], e.failures
        print("OK")
    """), tmp_path)
    assert last == "OK", last


@pytest.mark.parametrize("spoil", [
    "spec.data_len = 1 << 30",                       # reassigned after the check: the library read 1 GiB
    "spec.shape = [1 << 20, 1 << 10]",
    "spec.data_ptr = -1",
])
def test_tensor_spec_rechecked_at_serialize(tmp_path, spoil):
    last = run_child(f"""
        arr = np.arange(6, dtype=np.float32)
        spec = ztensor.TensorSpec(dtype="float32", shape=[2, 3], data_ptr=arr.ctypes.data, data_len=arr.nbytes)
        {spoil}
        try:
            ztensor.serialize({{"w": spec}})
            print("OK")
        except Exception as e:
            print("RAISED", type(e).__name__, e)
    """, tmp_path)
    assert last.startswith("RAISED"), last


@pytest.mark.parametrize("args", ["shape=[-2, -3], data_len=24", "shape=[-1, 4], data_len=-16",
                                  "shape=[2, 3], data_len=24, data_ptr=-8"])
def test_tensor_spec_refuses_negative_sizes(tmp_path, args):
    last = run_child(f"""
        arr = np.arange(6, dtype=np.float32)
        kw = dict(dtype="float32", data_ptr=arr.ctypes.data)
        kw.update(dict({args}))
        try:
            ztensor.serialize({{"w": ztensor.TensorSpec(**kw)}})
            print("OK")
        except Exception as e:
            print("RAISED", type(e).__name__, e)
    """, tmp_path)
    assert last.startswith("RAISED"), last


@pytest.mark.parametrize("call", [
    'w.add_object("o", "mine", (1,), {"r\\x00s": np.ones(1, np.float32)})',
    'w.add_object("o", "mi\\x00ne", (1,), {"r": np.ones(1, np.float32)})',
    'w.begin_object("o", "mine", (1,)); w.write_blob_begin("o", "r\\x00s", "f32")',
])
def test_writer_refuses_roles_and_formats_it_would_cut(tmp_path, call):
    # The writer takes roles and formats as C strings: "r\0s" was written as "r".
    last = run_child(f"""
        w = ztensor.Writer.memory()
        try:
            {call}
            print("OK")
        except ValueError as e:
            print("RAISED", e)
    """, tmp_path)
    assert last.startswith("RAISED"), last
