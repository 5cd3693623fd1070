"""Truncated and malicious inputs: zt convert fails with a clear message and
exit code 1, never crashes, and leaves no output (or temp file) behind."""
import io
import os
import struct
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import ztcli  # noqa: E402
from ztcli import GGUF_STRING, GGUF_U32, gguf_bytes, gguf_str, run, safetensors_bytes  # noqa: E402


def npy_bytes(a):
    f = io.BytesIO()
    np.save(f, a)
    return f.getvalue()


def npz_bytes(members, compression=zipfile.ZIP_DEFLATED):
    f = io.BytesIO()
    with zipfile.ZipFile(f, "w", compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return f.getvalue()


def patch_zip_sizes(data, size):
    """Sets the declared uncompressed size in every local and central header."""
    b = bytearray(data)
    i = 0
    while (i := b.find(b"PK\x03\x04", i)) >= 0:
        struct.pack_into("<I", b, i + 22, size)
        i += 4
    i = 0
    while (i := b.find(b"PK\x01\x02", i)) >= 0:
        struct.pack_into("<I", b, i + 24, size)
        i += 4
    return bytes(b)


GOOD_ST = safetensors_bytes([("w", "F32", [2, 2], b"\0" * 16)])
GOOD_GGUF = gguf_bytes([("general.architecture", GGUF_STRING, "x")], [("t", [4], 0, b"\0" * 16)])


def gguf_header(n_tensors, n_kv, version=3):
    return b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv)


CASES = {
    # safetensors
    "short.safetensors": (b"\x05\0\0", "truncated"),
    "hugeheader.safetensors": (struct.pack("<Q", 1 << 62) + b"{}", "exceeds the limit"),
    "pastend.safetensors": (struct.pack("<Q", 1000) + b"{}", "past the end"),
    "notjson.safetensors": (struct.pack("<Q", 8) + b"{not js}", "not valid JSON"),
    "notobject.safetensors": (struct.pack("<Q", 8) + b"[1,2,3] ", "not a JSON object"),
    "deep.safetensors": (struct.pack("<Q", 2000) + b"[" * 1000 + b"]" * 1000, "deeper"),
    "dtype.safetensors": (safetensors_bytes([("w", "F4", [3], b"\0\0")]), "3 F4 elements of 4 bits are not a whole number of bytes"),
    "unknowndtype.safetensors": (safetensors_bytes([("w", "Q9", [4], b"\0" * 4)]), "Q9"),
    "offsets.safetensors": (GOOD_ST[:-4], "outside"),
    "span.safetensors": (safetensors_bytes([("w", "F32", [3], b"\0" * 16)]), "needs 12"),
    "negshape.safetensors": (safetensors_bytes([], raw_header=b'{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}'), "non-negative"),
    "overflow.safetensors": (safetensors_bytes([], raw_header=b'{"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,0]}}'), "overflows"),
    "dup.safetensors": (safetensors_bytes([], raw_header=b'{"w":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"w":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}'), "twice"),
    "meta.safetensors": (safetensors_bytes([], raw_header=b'{"__metadata__":[1]}'), "__metadata__"),
    # Tensors naming the same bytes: a few bytes of input must not become
    # many copies in the output.
    "overlap.safetensors": (safetensors_bytes([], raw_header=b'{"a":{"dtype":"U8","shape":[16],"data_offsets":[0,16]},'
                                                           b'"b":{"dtype":"U8","shape":[16],"data_offsets":[8,24]}}')
                            + b"\0" * 24, "overlap"),
    "sameblob.safetensors": (safetensors_bytes([], raw_header=("{" + ",".join(
        '"t%d":{"dtype":"U8","shape":[16],"data_offsets":[0,16]}' % i for i in range(50)) + "}").encode())
                             + b"\0" * 16, "overlap"),
    # npy
    "magic.npy": (b"\x93NUMPZ\x01\x00" + b"\0" * 20, "not a .npy"),
    "trunc.npy": (npy_bytes(np.arange(100, dtype="<f8"))[:-8], "truncated"),
    "bighdr.npy": (b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFF0) + b"{}", "exceeds"),
    "object.npy": (npy_bytes(np.array([1, "a"], dtype=object)), "'|O'"),
    "record.npy": (npy_bytes(np.zeros(3, dtype=[("a", "<i4"), ("b", "<f4")])), "structured"),
    "string.npy": (npy_bytes(np.array(["ab", "c"])), "no zTensor storage type"),
    "badshape.npy": (b"\x93NUMPY\x01\x00" + struct.pack("<H", 54) + b"{'descr': '<f4', 'fortran_order': False, 'shape': (x,), }\n".ljust(54), "shape"),
    "hugeshape.npy": (b"\x93NUMPY\x01\x00" + struct.pack("<H", 118) + b"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999), }".ljust(117) + b"\n", "overflows"),
    # npz
    "garbage.npz": (b"PK\x03\x04" + b"\xff" * 100, "not a readable zip"),
    "trunc.npz": (npz_bytes({"a.npy": npy_bytes(np.arange(1000))})[:-30], "not a readable zip"),
    "notnpy.npz": (npz_bytes({"readme.txt": b"hello"}), "not a .npy member"),
    "badmember.npz": (npz_bytes({"a.npy": b"\x93NUMPY\x01\x00\xff\xff"}), "header"),
    "bomb.npz": (patch_zip_sizes(npz_bytes({"a.npy": npy_bytes(np.zeros(100000))}), 0xFFFFFF00), "zip bomb"),
    "lie.npz": (patch_zip_sizes(npz_bytes({"a.npy": npy_bytes(np.zeros(1000))}), 500), "declares"),
    # gguf
    "magic.gguf": (b"GGUX" + GOOD_GGUF[4:], "not a GGUF"),
    "v1.gguf": (b"GGUF" + struct.pack("<I", 1) + GOOD_GGUF[8:], "version 1"),
    "trunc.gguf": (GOOD_GGUF[:50], "truncated"),
    "trunc2.gguf": (GOOD_GGUF[:40], "larger than the file"),
    "count.gguf": (gguf_header(1 << 60, 0), "tensor count"),
    "kvcount.gguf": (gguf_header(0, 1 << 60), "key/value count"),
    "strlen.gguf": (gguf_header(0, 1) + struct.pack("<Q", 1 << 62) + b"abc" * 10, "truncated"),
    "arrlen.gguf": (gguf_header(0, 1) + gguf_str("k") + struct.pack("<IIQ", 9, 0, 1 << 60) + b"\0" * 16, "array length"),
    "valtype.gguf": (gguf_header(0, 1) + gguf_str("k") + struct.pack("<I", 99) + b"\0" * 16, "unknown value type"),
    "ggmltype.gguf": (gguf_bytes([], [("t", [4], 77, b"\0" * 16)]), "unknown ggml type"),
    "bounds.gguf": (GOOD_GGUF[:-8], "past the end"),
    "block.gguf": (gguf_bytes([], [("t", [33], 2, b"\0" * 36)]), "block size"),
    "dims.gguf": (gguf_header(1, 0) + gguf_str("t") + struct.pack("<I", 9) + b"\0" * 200, "dimensions"),
    "align.gguf": (gguf_bytes([("general.alignment", GGUF_U32, 3)], []), "alignment"),
    "dupkey.gguf": (gguf_bytes([("a", GGUF_U32, 1), ("a", GGUF_U32, 2)], []), "twice"),
    "overlap.gguf": (gguf_header(2, 0) + b"".join(gguf_str(n) + struct.pack("<IQIQ", 1, 16, 0, 0) for n in ("a", "b"))
                     + b"\0" * 64 + b"\0" * 64, "overlap"),
    "unknown.bin": (b"hello world", "unknown input format"),
}


class MalformedTest(ztcli.TmpCase):
    def test_each_case_fails_cleanly(self):
        for fn, (data, needle) in CASES.items():
            with self.subTest(fn):
                src = self.path(fn)
                with open(src, "wb") as f:
                    f.write(data)
                try:
                    p = run("convert", src, "-o", self.path("out.zt"), check=False)
                    self.assertEqual(p.returncode, 1, "%s: %s" % (fn, p.stderr))
                    self.assertIn("zt convert:", p.stderr)
                    if fn.endswith(".npz") and not ztcli.HAVE_NPZ:
                        needle = ztcli.NPZ_DISABLED
                    self.assertIn(needle, p.stderr, fn)
                    self.assert_no_leftovers([fn])
                finally:
                    for leftover in os.listdir(self.tmp):
                        os.remove(self.path(leftover))

    def test_good_fixtures_convert(self):
        # The malformed cases are mutations of these: they must themselves pass.
        for fn, data in (("good.safetensors", GOOD_ST), ("good.gguf", GOOD_GGUF)):
            with open(self.path(fn), "wb") as f:
                f.write(data)
            run("convert", self.path(fn), "-o", self.path(fn + ".zt"))

    @ztcli.needs_npz
    def test_member_size_limit(self):
        src = self.path("big.npz")
        np.savez_compressed(src, a=np.zeros(1 << 20))
        p = run("convert", src, "-o", self.path("o.zt"), "--max-member-size", "100000", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("exceeds the limit", p.stderr)
        self.assert_no_leftovers(["big.npz"])

    def test_failure_midway_leaves_nothing(self):
        # A valid first input, then a bad one: nothing may be written.
        np.save(self.path("a.npy"), np.arange(10))
        with open(self.path("b.npy"), "wb") as f:
            f.write(npy_bytes(np.arange(10))[:-3])
        p = run("convert", self.path("a.npy"), self.path("b.npy"), "-o", self.path("o.zt"), check=False)
        self.assertEqual(p.returncode, 1)
        self.assert_no_leftovers(["a.npy", "b.npy"])

    def test_existing_output_kept_on_failure(self):
        np.save(self.path("a.npy"), np.arange(10))
        run("convert", self.path("a.npy"), "-o", self.path("o.zt"))
        before = open(self.path("o.zt"), "rb").read()
        with open(self.path("bad.safetensors"), "wb") as f:
            f.write(GOOD_ST[:-1])
        p = run("convert", self.path("bad.safetensors"), "-o", self.path("o.zt"), check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(open(self.path("o.zt"), "rb").read(), before)
        self.assert_no_leftovers(["a.npy", "o.zt", "bad.safetensors"])


if __name__ == "__main__":
    import unittest
    unittest.main()
