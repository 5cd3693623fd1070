"""zt cat, zt export and zt decompress stream components: on a small zstd
file that decodes to 1 GiB, each one's peak memory (the child's own
ru_maxrss, from wait4) stays far below the component's size, and the output
is right. zt cat --verify and zt export --verify refuse a damaged file
before anything reaches stdout or OUT; without --verify cat still reads it.

The fixtures are written with libztensor itself (ctypes), not with zt."""
import ctypes
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ztcli  # noqa: E402
from ztcli import ZT  # noqa: E402

GIB = 1 << 30
MAX_RSS_MB = 200
LIB = ctypes.CDLL(os.path.join(os.environ["ZT_BUILD_ROOT"], "libztensor.so.1"))
ZT_U8, ZT_F32 = 12, 2
ZT_ENCODING_ZSTD = 2
ZT_DIGEST_SHA256 = 2


class WriterOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("digest", ctypes.c_uint32), ("encoding", ctypes.c_uint32),
                ("zstd_level", ctypes.c_int32), ("threads", ctypes.c_uint32), ("sync", ctypes.c_uint32),
                ("validate", ctypes.c_uint32),
                # 1.1: the default zt_writer_options_init fills this field too
                ("verify_before_replace", ctypes.c_uint32),
                # 1.3: and these (ctypes binds the default symbol version,
                # which fills the newest struct)
                ("format", ctypes.c_uint32), ("canonical", ctypes.c_uint32), ("v2_digest", ctypes.c_uint32),
                ("reserved_", ctypes.c_uint32), ("alignment", ctypes.c_uint64)]


def ok(status):
    if status != 0:
        raise AssertionError("libztensor: %s" % LIB.zt_last_error().decode())


LIB.zt_last_error.restype = ctypes.c_char_p


def write_zt(path, name, shape, dtype, chunks, zstd=False, digest=0):
    """One dense object whose data is streamed from the `chunks` iterable."""
    wo = WriterOptions()
    LIB.zt_writer_options_init(ctypes.byref(wo))
    wo.sync = 0
    wo.threads = 1
    wo.digest = digest
    if zstd:
        wo.encoding = ZT_ENCODING_ZSTD
        wo.zstd_level = 1
    w = ctypes.c_void_p()
    ok(LIB.zt_writer_create(path.encode(), ctypes.byref(wo), ctypes.byref(w)))
    nb = name.encode()
    dims = (ctypes.c_uint64 * len(shape))(*shape)
    ok(LIB.zt_writer_begin_object(w, nb, ctypes.c_size_t(len(nb)), None, dims, ctypes.c_size_t(len(shape))))
    ok(LIB.zt_write_blob_begin(w, nb, ctypes.c_size_t(len(nb)), b"data", dtype, None))
    for c in chunks:
        ok(LIB.zt_write_blob_append(w, c, ctypes.c_size_t(len(c))))
    ok(LIB.zt_write_blob_end(w))
    ok(LIB.zt_writer_finish(w))


def run_measured(args, consume=None):
    """Runs zt with stdout piped to consume(chunk); returns (exit code, peak
    RSS in MB of that child alone, stderr)."""
    p = subprocess.Popen([ZT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while True:
        chunk = p.stdout.read(1 << 20)
        if not chunk:
            break
        if consume:
            consume(chunk)
    err = p.stderr.read().decode(errors="replace")
    p.stdout.close()
    p.stderr.close()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped here; keep Popen from waiting again
    return p.returncode, usage.ru_maxrss / 1024.0, err


def check_zeros(path, offset, length, test):
    with open(path, "rb") as f:
        f.seek(offset)
        left = length
        while left:
            chunk = f.read(min(left, 8 << 20))
            test.assertTrue(chunk, "file ends early")
            test.assertEqual(chunk.count(0), len(chunk))
            left -= len(chunk)
        test.assertEqual(f.read(1), b"")


class StreamedCommands(ztcli.TmpCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.dir = tempfile.mkdtemp(prefix="zt-cli-big-")
        cls.big = os.path.join(cls.dir, "big.zt")
        zeros = bytes(16 << 20)
        write_zt(cls.big, "zeros", [GIB // 4], ZT_F32, (zeros for _ in range(GIB // len(zeros))), zstd=True)

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_fixture_is_small(self):
        self.assertLess(os.path.getsize(self.big), 1 << 20)

    def test_cat(self):
        seen = [0, 0]

        def consume(chunk):
            seen[0] += len(chunk)
            seen[1] += len(chunk) - chunk.count(0)

        rc, rss, err = run_measured(["cat", self.big, "zeros"], consume)
        print("zt cat of 1 GiB: peak RSS %.1f MB" % rss)
        self.assertEqual(rc, 0, err)
        self.assertEqual(seen, [GIB, 0])
        self.assertLess(rss, MAX_RSS_MB)

    def test_export(self):
        out = self.path("zeros.npy")
        rc, rss, err = run_measured(["export", self.big, "zeros", "-o", out, "--quiet"])
        print("zt export of 1 GiB: peak RSS %.1f MB" % rss)
        self.assertEqual(rc, 0, err)
        self.assertLess(rss, MAX_RSS_MB)
        with open(out, "rb") as f:
            head = f.read(128)
        self.assertTrue(head.startswith(b"\x93NUMPY"))
        header_len = 10 + int.from_bytes(head[8:10], "little")
        self.assertIn(b"'shape': (%d,)" % (GIB // 4), head[:header_len])
        check_zeros(out, header_len, GIB, self)

    def test_total_decoded_budget(self):
        # 1 GiB of zstd in a file under 1 MiB: refused before any decoding by a
        # smaller budget, for every whole-file command; allowed by a larger one.
        write_zt(self.path("dest.zt"), "x", [1], ZT_F32, [bytes(4)])
        dest_before = open(self.path("dest.zt"), "rb").read()
        for args in (["verify", self.big], ["migrate", self.big, "-o", self.path("m.zt")],
                     ["decompress", self.big, "-o", self.path("d.zt")],
                     ["append", self.path("dest.zt"), "--from", self.big]):
            p = ztcli.run("--max-total-decoded", "512M", *args, check=False)
            self.assertEqual(p.returncode, 1, (args, p.stderr))
            self.assertIn("--max-total-decoded", p.stderr)
            self.assertIn(str(GIB), p.stderr)
        self.assertFalse(os.path.exists(self.path("m.zt")) or os.path.exists(self.path("d.zt")))
        self.assertEqual(open(self.path("dest.zt"), "rb").read(), dest_before)
        p = ztcli.run("--max-total-decoded", "2G", "verify", self.big, check=False)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_decompress(self):
        out = self.path("raw.zt")
        rc, rss, err = run_measured(["decompress", self.big, "-o", out, "--quiet", "--no-sync"])
        print("zt decompress of 1 GiB: peak RSS %.1f MB" % rss)
        self.assertEqual(rc, 0, err)
        self.assertLess(rss, MAX_RSS_MB)
        o = ztcli.objects(out)["zeros"]
        self.assertEqual(o["shape"], [GIB // 4])
        c = o["components"][0] if isinstance(o["components"], list) else o["components"]["data"]
        self.assertEqual(c["encoding"], "raw")
        self.assertGreater(os.path.getsize(out), GIB)


def v11_csr_file(path, nnz, cols):
    """A spec 1.1 sparse_csr [1, cols] of nnz zeros at column 0: values f32
    and indices u8 as zstd frames without a declared decoded size (1.1
    allowed both), indptr raw u64. Built from the spec's layout with
    python3-zstandard and python3-cbor2, not with our writer (it writes 1.2)."""
    import struct

    import cbor2
    import zstandard

    def frame(n):
        c = zstandard.ZstdCompressor(level=1, write_content_size=False).compressobj()
        zeros = bytes(8 << 20)
        out = [c.compress(zeros) for _ in range(n // len(zeros))]
        out.append(c.compress(bytes(n % len(zeros))))
        return b"".join(out) + c.flush()

    blobs = [("values", "f32", frame(4 * nnz), True), ("indices", "u8", frame(nnz), True),
             ("indptr", "u64", struct.pack("<QQ", 0, nnz), False)]
    body = bytearray(b"ZTEN1000")
    components = {}
    for role, dtype, data, zstd in blobs:
        body += bytes(-len(body) % 64)
        comp = {"dtype": dtype, "offset": len(body), "length": len(data)}
        if zstd:
            comp["encoding"] = "zstd"
        components[role] = comp
        body += data
    manifest = cbor2.dumps({"version": "1.1.0", "objects": {
        "csr": {"shape": [1, cols], "format": "sparse_csr", "components": components}}})
    with open(path, "wb") as f:
        f.write(bytes(body) + manifest + struct.pack("<Q", len(manifest)) + b"ZTEN1000")


class MigrateWidensIndicesInPieces(ztcli.TmpCase):
    def test_u8_zstd_indices_become_u64_in_bounded_memory(self):
        # 64 Mi u8 indices (a few KB of zstd) are 512 MiB once widened to u64:
        # copied whole (decoded, widened, encoded) that was over 1 GB.
        nnz = 64 << 20
        src, out = self.path("v11.zt"), self.path("v12.zt")
        v11_csr_file(src, nnz, 256)
        self.assertLess(os.path.getsize(src), 1 << 20)
        rc, rss, err = run_measured(["migrate", src, "-o", out, "--no-sync"])
        print("zt migrate of a 1.1 CSR, 64 Mi u8 indices: peak RSS %.1f MB" % rss)
        self.assertEqual(rc, 0, err)
        self.assertLess(rss, MAX_RSS_MB)
        comps = ztcli.objects(out)["csr"]["components"]
        by_role = {c["role"]: c for c in comps} if isinstance(comps, list) else comps
        self.assertEqual(by_role["indices"]["dtype"], "u64")
        self.assertEqual(ztcli.run("verify", "--strict", out).returncode, 0)


class MaxMemory(ztcli.TmpCase):
    """zt --max-memory bounds the heap: what fits still works, what does not
    ends in a clear 'out of memory' and exit 1, never a crash."""

    def test_streaming_fits_and_a_whole_index_does_not(self):
        src, out = self.path("v11.zt"), self.path("v12.zt")
        v11_csr_file(src, 64 << 20, 256)
        # Migration streams: it fits in 128 MiB.
        p = ztcli.run("--max-memory", "128M", "migrate", src, "-o", out, "--no-sync", check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        # A strict verify validates the CSR with its 64 Mi indices held as u64
        # (512 MiB): refused with a message, not killed.
        p = ztcli.run("--max-memory", "128M", "verify", "--strict", out, check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("memory", p.stderr.lower())
        # Without the limit it passes.
        self.assertEqual(ztcli.run("verify", "--strict", out).returncode, 0)

    def test_implied_pread_does_not_make_rewrites_refuse(self):
        # migrate/compress/decompress refuse an explicit --pread (they map
        # their input); the pread --max-memory implies does not count.
        src = self.path("small.zt")
        write_zt(src, "x", [4], ZT_F32, [bytes(16)], zstd=True)
        for cmd in ("migrate", "compress", "decompress"):
            out = self.path(cmd + ".zt")
            p = ztcli.run("--max-memory", "256M", cmd, src, "-o", out, "--no-sync", check=False)
            self.assertEqual(p.returncode, 0, (cmd, p.stderr))
        p = ztcli.run("--pread", "migrate", src, "-o", self.path("p.zt"), check=False)
        self.assertEqual(p.returncode, 2, p.stderr)

    def test_bad_values_are_usage_errors(self):
        for v in ("0", "-1", "lots", ""):
            p = ztcli.run("--max-memory", v, "ls", "x.zt", check=False)
            self.assertEqual(p.returncode, 2, (v, p.stderr))


class VerifyFlag(ztcli.TmpCase):
    def damaged(self):
        p = self.path("sha.zt")
        data = bytes(range(256)) * 64
        write_zt(p, "w", [len(data)], ZT_U8, [data], digest=ZT_DIGEST_SHA256)
        with open(p, "r+b") as f:  # the blob starts at 64; flip two bytes in it
            for at in (64 + 10, 64 + 5000):
                f.seek(at)
                b = f.read(1)[0]
                f.seek(at)
                f.write(bytes([b ^ 0xFF]))
        return p, len(data)

    def test_cat_verify_refuses_before_writing(self):
        p, n = self.damaged()
        r = subprocess.run([ZT, "cat", "--verify", p, "w"], capture_output=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, b"")
        self.assertIn(b"digest", r.stderr)
        self.assertIn(b"'w'", r.stderr)
        r = subprocess.run([ZT, "cat", p, "w"], capture_output=True)  # off: the bytes as stored
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout), n)

    def test_export_verify_leaves_nothing(self):
        p, _ = self.damaged()
        out = self.path("w.npy")
        r = subprocess.run([ZT, "export", p, "w", "-o", out, "--verify", "--quiet"], capture_output=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(b"sha256 digest mismatch", r.stderr)
        self.assert_no_leftovers(["sha.zt"])

    def test_verify_passes_clean_files(self):
        p = self.path("clean.zt")
        data = bytes(range(256)) * 4
        write_zt(p, "w", [len(data)], ZT_U8, [data], digest=ZT_DIGEST_SHA256)
        r = subprocess.run([ZT, "cat", "--verify", p, "w"], capture_output=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, data)
        out = self.path("w.npy")
        r = subprocess.run([ZT, "export", "--verify", p, "w", "-o", out, "--quiet"], capture_output=True)
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    import unittest
    unittest.main(verbosity=2)
