"""Opening and listing a foreign file decodes nothing (issue 37.6): zt ls,
zt info and zt verify on a 2 MB .npz whose deflated members inflate to
2 GiB stay within a few tens of MB (the child's own ru_maxrss); a member is
inflated on its first read, and all reads of one file together stay within
a default bound of a small multiple of the file's size, which
--max-decoded-size raises (docs/foreign.md, docs/limits.md)."""
import os
import subprocess
import sys
import unittest
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ztcli  # noqa: E402
from ztcli import ZT, needs_npz  # noqa: E402

MIB = 1 << 20
MAX_LISTING_RSS_MB = 64


def npy_header(dtype, shape):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        dtype, "".join("%d," % n for n in shape))
    d += " " * (63 - (10 + len(d)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(d).to_bytes(2, "little") + d.encode()


def write_zero_npz(path, members):
    """An .npz of deflated u8 zero arrays: {name: element count}."""
    zero = bytes(16 * MIB)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, n in members.items():
            with z.open(name + ".npy", "w", force_zip64=True) as f:
                f.write(npy_header("|u1", (n,)))
                left = n
                while left:
                    k = min(left, len(zero))
                    f.write(zero[:k])
                    left -= k


def child_peak_rss_mb(*args):
    """Runs zt ARGS in a child and returns (exit code, its own peak RSS in MB, stdout, stderr)."""
    p = subprocess.Popen([ZT, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = b"", b""
    while True:
        chunk = p.stdout.read(MIB)
        if not chunk:
            break
        out += chunk[:4096] if len(out) < 4096 else b""
    err = p.stderr.read().decode(errors="replace")
    p.stdout.close()
    p.stderr.close()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, usage.ru_maxrss / 1024.0, out, err


@needs_npz
class ListingInflatesNothingTest(ztcli.TmpCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.dir = tempfile.mkdtemp(prefix="zt_listing_")
        cls.bomb = os.path.join(cls.dir, "bomb.npz")
        write_zero_npz(cls.bomb, {"a": 1 << 30, "b": 1 << 30})

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_fixture_is_a_bomb(self):
        self.assertLess(os.path.getsize(self.bomb), 8 * MIB)

    def test_listing_decodes_nothing(self):
        for args in (("ls", self.bomb), ("info", self.bomb), ("info", "--json", self.bomb)):
            with self.subTest(args):
                code, rss, out, err = child_peak_rss_mb(*args)
                self.assertEqual(code, 0, err)
                self.assertIn(b"a", out)
                self.assertLess(rss, MAX_LISTING_RSS_MB, args)

    def test_reading_is_bounded_by_a_multiple_of_the_file_size(self):
        code, rss, _, err = child_peak_rss_mb("cat", self.bomb, "a")
        self.assertEqual(code, 1, err)
        self.assertIn("max-decoded-size", err)
        self.assertIn("bomb.npz", err)
        self.assertLess(rss, MAX_LISTING_RSS_MB)


@needs_npz
class DecodeOnFirstReadTest(ztcli.TmpCase):
    def test_members_read_right_and_bound_is_raised_by_the_limit(self):
        path = self.path("z.npz")
        write_zero_npz(path, {"big": 200 * MIB})
        # Default bound: a multiple of the file's few hundred KB (at least
        # 64 MiB) is less than the 200 MiB member.
        p = ztcli.run("cat", path, "big", check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("--max-decoded-size", p.stderr)
        code, _, _, err = child_peak_rss_mb("--max-decoded-size", "300M", "cat", path, "big")
        self.assertEqual(code, 0, err)
        # Several members, read in another order than stored, match numpy.
        a = np.arange(1000, dtype=np.float32).reshape(10, 100)
        b = np.arange(30, dtype=np.int16)
        c = np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4))
        np.savez_compressed(self.path("m.npz"), a=a, b=b, c=c)
        for name, want in (("c", c), ("a", a), ("b", b), ("a", a)):
            out = subprocess.run([ZT, "cat", self.path("m.npz"), name], capture_output=True, check=True).stdout
            got = np.frombuffer(out, ztcli.host_dtype(want.dtype)).reshape(want.shape)
            self.assertEqual(got.tolist(), want.tolist(), name)
        ztcli.run("verify", self.path("m.npz"))

    def test_a_corrupt_member_fails_its_read_not_the_listing(self):
        path = self.path("bad.npz")
        np.savez_compressed(path, good=np.arange(4096, dtype=np.int32), bad=np.arange(4096, dtype=np.int32))
        with open(path, "rb") as f:
            data = bytearray(f.read())
        with zipfile.ZipFile(path) as z:
            info = z.getinfo("bad.npy")
        # Damage the second half of bad.npy's deflate stream: its .npy
        # header (the stream's start) still inflates, its data does not.
        start = info.header_offset + 30 + len(info.filename) + len(info.extra)
        for k in range(start + info.compress_size // 2, start + info.compress_size - 8):
            data[k] ^= 0x5A
        with open(path, "wb") as f:
            f.write(bytes(data))
        p = ztcli.run("ls", path)
        self.assertIn("bad", p.stdout)
        p = ztcli.run("cat", path, "bad", check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("bad", p.stderr)
        out = subprocess.run([ZT, "cat", path, "good"], capture_output=True, check=True).stdout
        self.assertEqual(np.frombuffer(out, ztcli.host_dtype("i4")).tolist(), list(range(4096)))


if __name__ == "__main__":
    unittest.main()
