"""zt writing zTensor v2 (docs/v2.md, Writing): convert --format 2 (GGUF
block arrays as gguf.<type>/1, safetensors F8_E8M0 as f8_e8m0), migrate
--to 2 of 1.2 files (crc32c → xxh3, sparse → the profiles' ids, zstd →
zt.zstd-seekable/1 when not canonical), compress --format 2. The files are
read back raw here (footer, xxh3-checked manifest, blobs): the v2 reader is
another piece of work."""
import os
import struct
import unittest

import cbor2
import numpy as np

import ztcli

MAGIC = b"\x89ZT2\r\n\x1a\n"


def xxh3_available():
    try:
        import xxhash  # noqa: F401
        return True
    except ImportError:
        return False


def read_v2(path):
    with open(path, "rb") as f:
        b = f.read()
    assert b[:8] == MAGIC, b[:8]
    assert b[-8:] == MAGIC
    at, length, _hash, version, _res = struct.unpack("<QQQII", b[-40:-8])
    assert version == 2
    assert at % 65536 == 0 or at % 4096 == 0
    assert at + length + 40 == len(b)
    return b, cbor2.loads(b[at:at + length])


def blob(b, part):
    off, n = part["blob"]
    return b[off:off + n]


class V2WriteTest(ztcli.TmpCase):
    def test_convert_gguf_to_v2_canonical(self):
        q = bytes(range(68))  # q8_0: 2 blocks of 32 elements, 34 bytes each
        f = np.arange(12, dtype="<f4")
        tensors = [("blk.q", [32, 2], 8, q), ("blk.f", [4, 3], 0, f.tobytes())]
        src = self.path("m.gguf")
        with open(src, "wb") as fh:
            fh.write(ztcli.gguf_bytes([("general.architecture", 8, "llama")], tensors))
        out = self.path("m.zt")
        ztcli.run("convert", src, "-o", out, "--format", "2")
        b, m = read_v2(out)
        gq = m["objects"]["blk.q"]
        self.assertEqual("gguf.q8_0/1", gq["layout"])
        self.assertEqual({"elems_per_block": 32, "block_bytes": 34}, gq["attributes"])
        self.assertEqual([2, 32], gq["shape"])
        self.assertNotIn("type", gq["parts"]["data"])
        self.assertEqual(q, blob(b, gq["parts"]["data"]))
        gf = m["objects"]["blk.f"]
        self.assertEqual("dense", gf["layout"])
        self.assertEqual("f32", gf["parts"]["data"]["dtype"])
        self.assertEqual(f.tobytes(), blob(b, gf["parts"]["data"]))
        self.assertEqual("llama", m["attributes"]["general.architecture"])
        # Canonical: 64 KiB placement, name order (blk.f before blk.q), xxh3.
        self.assertEqual(65536, gf["parts"]["data"]["blob"][0])
        self.assertEqual(131072, gq["parts"]["data"]["blob"][0])
        self.assertTrue(gq["parts"]["data"]["digest"].startswith("xxh3:"))

    def test_convert_refuses_sub_byte_types_the_target_cannot_hold(self):
        f4 = self.path("f4.safetensors")  # 16 f4_e2m1 elements, 8 bytes
        with open(f4, "wb") as fh:
            fh.write(ztcli.safetensors_bytes([("w.fp4", "F4", [4, 4], bytes(range(8)))]))
        f6 = self.path("f6.safetensors")  # 16 f6_e3m2 elements, 12 bytes
        with open(f6, "wb") as fh:
            fh.write(ztcli.safetensors_bytes([("w.fp6", "F6_E3M2", [4, 4], bytes(range(12)))]))
        for src, fmt, why in [(f4, "1.2", "use --format 2"), (f6, "1.2", "no zTensor version holds it"),
                              (f6, "2", "registers no f6 logical type")]:
            out = self.path("o.zt")
            p = ztcli.run("convert", src, "-o", out, "--format", fmt, check=False)
            self.assertEqual(1, p.returncode, p.stderr)
            name = "w.fp4" if src == f4 else "w.fp6"
            self.assertIn("tensor '%s' is packed" % name, p.stderr)
            self.assertIn(why, p.stderr)
            self.assertNotIn("does not match", p.stderr)  # not the writer's bare size check
            self.assertFalse(os.path.exists(out))
        out = self.path("f4.zt")  # v2 holds f4_e2m1: written and read back typed
        ztcli.run("convert", f4, "-o", out, "--format", "2")
        b, m = read_v2(out)
        part = m["objects"]["w.fp4"]["parts"]["data"]
        self.assertEqual("f4_e2m1", part["type"])
        self.assertEqual(bytes(range(8)), blob(b, part))

    def write_12(self, path, digest="crc32c", zstd=False):
        """A 1.2 file with a dense tensor, a CSR matrix and attributes."""
        src = self.path("src.npy")
        np.save(src, np.arange(6, dtype="<f4").reshape(2, 3))
        args = ["convert", src, "-o", path, "--digest", digest]
        if zstd:
            args += ["--zstd", "3"]
        ztcli.run(*args)

    def test_migrate_12_to_v2(self):
        one = self.path("one.zt")
        self.write_12(one)
        two = self.path("two.zt")
        ztcli.run("migrate", one, "-o", two, "--to", "2")
        b, m = read_v2(two)
        p = m["objects"]["src"]["parts"]["data"]
        self.assertEqual(np.arange(6, dtype="<f4").tobytes(), blob(b, p))
        self.assertTrue(p["digest"].startswith("xxh3:"), p)  # crc32c is no v2 algorithm
        self.assertEqual(65536, p["blob"][0])
        # Migrating again gives the same bytes: canonical output is a
        # function of the tensors.
        two_b = self.path("two_b.zt")
        ztcli.run("migrate", one, "-o", two_b, "--to", "2")
        with open(two, "rb") as x, open(two_b, "rb") as y:
            self.assertEqual(x.read(), y.read())

    def test_migrate_zstd_to_v2_non_canonical(self):
        one = self.path("one.zt")
        self.write_12(one, digest="sha256", zstd=True)
        two = self.path("two.zt")
        ztcli.run("migrate", one, "-o", two, "--to", "2", "--no-canonical", "--digest", "sha256")
        b, m = read_v2(two)
        p = m["objects"]["src"]["parts"]["data"]
        self.assertEqual("zt.zstd-seekable/1", p["encoding"])
        self.assertEqual(24, p["decoded_length"])
        self.assertTrue(p["digest"].startswith("sha256:"), p)
        # Canonical v2 refuses a zstd request with a clear message.
        r = ztcli.run("migrate", one, "-o", self.path("x.zt"), "--to", "2", "--zstd", "3", check=False)
        self.assertNotEqual(0, r.returncode)
        self.assertIn("--no-canonical", r.stderr)

    def test_compress_format_2(self):
        one = self.path("one.zt")
        self.write_12(one, digest="none")
        two = self.path("two.zt")
        ztcli.run("compress", one, "-o", two, "--format", "2")
        _b, m = read_v2(two)
        self.assertEqual("zt.zstd-seekable/1", m["objects"]["src"]["parts"]["data"]["encoding"])

    def test_merge_and_append_format_2(self):
        # Two 1.2 inputs whose names interleave: the v2 result has every
        # object, in name order on 64 KiB boundaries.
        a, b = self.path("a.npy"), self.path("b.npy")
        np.save(a, np.arange(3, dtype="<i4"))
        np.save(b, np.arange(5, dtype="<i2"))
        za, zb = self.path("a.zt"), self.path("b.zt")
        ztcli.run("convert", a, "-o", za)
        ztcli.run("convert", b, "-o", zb)
        out = self.path("m.zt")
        ztcli.run("merge", zb, za, "-o", out, "--format", "2")
        blob_bytes, m = read_v2(out)
        self.assertEqual(["a", "b"], sorted(m["objects"]))
        self.assertEqual(65536, m["objects"]["a"]["parts"]["data"]["blob"][0])
        self.assertEqual(np.arange(5, dtype="<i2").tobytes(), blob(blob_bytes, m["objects"]["b"]["parts"]["data"]))
        ztcli.run("append", za, "--from", zb, "--format", "2")
        _b, m2 = read_v2(za)
        self.assertEqual(["a", "b"], sorted(m2["objects"]))

    def test_migrate_v2_to_12(self):
        # What 1.2 cannot hold is refused naming object and profile, and
        # nothing is written; what it can is mapped (docs/v2.md, Migration).
        golden = os.path.join(os.environ.get("ZT_SOURCE_ROOT", "."), "tests", "data", "v2-golden")
        out = self.path("out.zt")
        r = ztcli.run("migrate", os.path.join(golden, "layouts.zt"), "-o", out, "--to", "1.2", check=False)
        self.assertEqual(1, r.returncode, r.stderr)
        self.assertIn("object 'gg'", r.stderr)
        self.assertIn("gguf.q8_0/1", r.stderr)
        self.assertIn("no spec 1.2 form", r.stderr)
        self.assertFalse(os.path.exists(out))
        ztcli.run("migrate", os.path.join(golden, "many.zt"), "-o", out, "--to", "1.2")
        info = ztcli.info(out)
        self.assertEqual("1.2.0", info["version"])
        self.assertEqual(30, len(info["objects"]))
        self.assertTrue(info["objects"][0]["components"][0]["digest"].startswith("crc32c:"))
        back = self.path("back.zt")
        ztcli.run("migrate", out, "-o", back, "--to", "2")
        with open(os.path.join(golden, "many.zt"), "rb") as x, open(back, "rb") as y:
            self.assertEqual(x.read(), y.read())

    def test_no_canonical_needs_format_2(self):
        one = self.path("one.zt")
        self.write_12(one)
        r = ztcli.run("migrate", one, "-o", self.path("x.zt"), "--no-canonical", check=False)
        self.assertNotEqual(0, r.returncode)
        self.assertIn("v2 only", r.stderr)


if __name__ == "__main__":
    unittest.main()
