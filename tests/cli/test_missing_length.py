"""Tolerance carried from the interop checks: a spec 1.2 zstd component
without uncompressed_length (which 1.2 requires, but the original
implementation reads) is read, with the size its shape implies, else the
size its frame records, else a decode bounded by --max-decoded-size; only
zt verify --strict flags it, and zt migrate writes the field."""
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rawzt  # noqa: E402
import ztcli  # noqa: E402
import numpy as np  # noqa: E402
from ztcli import ZT  # noqa: E402

DATA = bytes(range(256)) * 16  # 4096 bytes
# What zt cat prints of DATA stored as f32: host-order elements (docs/cross.md).
DATA_AS_F32 = ztcli.host_bytes(np.frombuffer(DATA, "<f4"))


def cat(path, name, role="data", *pre):
    return subprocess.run([ZT, *pre, "cat", path, name, "--component", role], capture_output=True)


class MissingUncompressedLength(ztcli.TmpCase):
    def dense(self):
        p = self.path("dense.zt")
        rawzt.build(p, [rawzt.zstd_frame(DATA, content_size=False)], {"w": {
            "shape": [1024], "format": "dense", "components": {
                "data": {"dtype": "f32", "encoding": "zstd", "blob": 0}}}})
        return p

    def csr(self, content_size):
        # A sparse [1, 1024] with 1024 values: its zstd values have no size
        # the shape implies.
        nnz = 1024
        p = self.path("csr%d.zt" % content_size)
        rawzt.build(p, [rawzt.zstd_frame(DATA, content_size=content_size),
                        struct.pack("<%dQ" % nnz, *range(nnz)), struct.pack("<QQ", 0, nnz)], {"s": {
                            "shape": [1, 1024], "format": "sparse_csr", "components": {
                                "values": {"dtype": "f32", "encoding": "zstd", "blob": 0},
                                "indices": {"dtype": "u64", "blob": 1},
                                "indptr": {"dtype": "u64", "blob": 2}}}})
        return p

    def test_dense_is_read_and_flagged_only_by_strict_verify(self):
        p = self.dense()
        self.assertEqual(ztcli.objects(p)["w"]["components"][0]["decoded_length"], 4096)
        r = cat(p, "w")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, DATA_AS_F32)
        self.assertEqual(ztcli.run("verify", p, check=False).returncode, 0)
        s = ztcli.run("verify", "--strict", p, check=False)
        self.assertEqual(s.returncode, 1)
        self.assertIn("FAIL w / data", s.stdout)
        self.assertIn("no uncompressed_length, which spec 1.2 requires", s.stdout)
        # migrate writes the field: the result passes a strict verify.
        out = self.path("fixed.zt")
        ztcli.run("migrate", p, "-o", out, "--no-sync")
        self.assertEqual(ztcli.manifest(out)["objects"]["w"]["components"]["data"]["uncompressed_length"], 4096)
        self.assertEqual(ztcli.run("verify", "--strict", out, check=False).returncode, 0)

    def test_dense_frame_of_the_wrong_size_is_still_an_error(self):
        p = self.path("short.zt")
        rawzt.build(p, [rawzt.zstd_frame(DATA[:4000])], {"w": {
            "shape": [1024], "format": "dense", "components": {
                "data": {"dtype": "f32", "encoding": "zstd", "blob": 0}}}})
        v = ztcli.run("verify", p, check=False)
        self.assertEqual(v.returncode, 1)
        self.assertIn("decodes to 4000 bytes, but 4096", v.stdout)

    def test_without_a_shape_size_the_frame_or_a_bounded_decode_gives_it(self):
        for content_size in (True, False):
            p = self.csr(content_size)
            r = cat(p, "s", "values")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, DATA_AS_F32)
            self.assertEqual(ztcli.run("verify", p, check=False).returncode, 0, content_size)
            self.assertEqual(ztcli.run("verify", "--strict", p, check=False).returncode, 1, content_size)
            # The decode stays bounded by --max-decoded-size.
            r = cat(p, "s", "values", "--max-decoded-size", "1K")
            self.assertEqual(r.returncode, 1, content_size)
            self.assertNotEqual(r.stderr, b"")
            self.assertLess(len(r.stdout), 4096)


if __name__ == "__main__":
    import unittest
    unittest.main(verbosity=2)
