"""zt export --to safetensors|gguf stays bounded: zstd components are
streamed (peak RSS far below the decoded size), GGUF's general.alignment is
capped (a tiny file cannot make GiBs of padding), and a CBOR map whose key is
"$bytes" (or any '$' key) is never taken for a byte string: GGUF refuses a
map attribute with a clear message."""
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rawzt  # noqa: E402
import ztcli  # noqa: E402
from ztcli import ZT  # noqa: E402

BOMB = 512 << 20
MAX_RSS_MB = 200


def peak_rss_mb(args):
    """Exit code, peak RSS (MB) of the zt child alone, stderr."""
    p = subprocess.Popen([ZT, *map(str, args)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, usage.ru_maxrss / 1024.0, err


def gguf_kvs(path):
    """The key/values of a GGUF file (strings and u32 only, as these tests
    write them): {key: (type, value)}."""
    with open(path, "rb") as f:
        b = f.read(1 << 20)
    assert b[:4] == b"GGUF"
    _, n_t, n_kv = struct.unpack_from("<IQQ", b, 4)
    pos, out = 24, {}

    def s(pos):
        n = struct.unpack_from("<Q", b, pos)[0]
        return b[pos + 8:pos + 8 + n], pos + 8 + n

    for _ in range(n_kv):
        k, pos = s(pos)
        t = struct.unpack_from("<I", b, pos)[0]
        pos += 4
        if t == 8:
            v, pos = s(pos)
        elif t == 4:
            v = struct.unpack_from("<I", b, pos)[0]
            pos += 4
        else:
            raise AssertionError("unexpected GGUF type %d" % t)
        out[k.decode()] = (t, v)
    return out


class ExportStreams(ztcli.TmpCase):
    def test_zstd_bomb_is_streamed_to_safetensors_and_gguf(self):
        src = self.path("bomb.zt")
        frame = rawzt.zstd_zeros(BOMB)
        rawzt.build(src, [frame], {"z": {"shape": [BOMB], "format": "dense", "components": {
            "data": {"dtype": "i8", "encoding": "zstd", "uncompressed_length": BOMB, "blob": 0}}}})
        self.assertLess(os.path.getsize(src), 1 << 20)
        for to in ("safetensors", "gguf"):
            out = self.path("o." + to)
            rc, rss, err = peak_rss_mb(["export", src, "--to", to, "-o", out, "--quiet"])
            print("zt export --to %s of %d MiB of zstd: peak RSS %.1f MB" % (to, BOMB >> 20, rss))
            self.assertEqual(rc, 0, err)
            self.assertLess(rss, MAX_RSS_MB, to)
            self.assertGreaterEqual(os.path.getsize(out), BOMB)
            with open(out, "rb") as f:
                f.seek(-4096, os.SEEK_END)
                self.assertEqual(f.read().count(0), 4096)
            os.unlink(out)

    def test_a_frame_that_decodes_short_fails_and_leaves_nothing(self):
        src = self.path("short.zt")
        rawzt.build(src, [rawzt.zstd_frame(bytes(1000))], {"z": {"shape": [4096], "format": "dense", "components": {
            "data": {"dtype": "i8", "encoding": "zstd", "uncompressed_length": 4096, "blob": 0}}}})
        for to in ("safetensors", "gguf"):
            p = ztcli.run("export", src, "--to", to, "-o", self.path("o." + to), check=False)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("'z'", p.stderr)
            self.assertFalse(os.path.exists(self.path("o." + to)))


class GgufAlignment(ztcli.TmpCase):
    def file_with_alignment(self, a):
        src = self.path("a%d.zt" % a)
        rawzt.build(src, [bytes(4)] * 4, {
            "t%d" % i: {"shape": [1], "format": "dense", "components": {"data": {"dtype": "f32", "blob": i}}}
            for i in range(4)}, attributes={"general.alignment": a})
        return src

    def test_huge_alignment_is_refused_before_writing(self):
        for a in (1 << 30, 1 << 17, 3 * 64):
            src = self.file_with_alignment(a)
            self.assertLess(os.path.getsize(src), 1024)
            out = self.path("o.gguf")
            p = ztcli.run("export", src, "--to", "gguf", "-o", out, check=False)
            self.assertEqual(p.returncode, 1, (a, p.stderr))
            self.assertIn("general.alignment", p.stderr)
            self.assertIn("65536", p.stderr)
            self.assertFalse(os.path.exists(out))

    def test_cap_and_default_are_written(self):
        src = self.file_with_alignment(1 << 16)
        out = self.path("o.gguf")
        ztcli.run("export", src, "--to", "gguf", "-o", out)
        self.assertEqual(gguf_kvs(out)["general.alignment"], (4, 1 << 16))
        self.assertEqual(os.path.getsize(out), 4 * (1 << 16) + (1 << 16))  # header block + 4 padded tensors


class DollarKeys(ztcli.TmpCase):
    def build(self, attributes):
        src = self.path("d.zt")
        rawzt.build(src, [bytes(4)], {"t": {"shape": [1], "format": "dense", "components": {
            "data": {"dtype": "f32", "blob": 0}}}}, attributes=attributes)
        return src

    def test_a_map_with_a_bytes_key_is_not_a_byte_string(self):
        # {"$bytes": "6869"} here is a CBOR map, not the bytes b"hi".
        src = self.build({"tokenizer.x": {"$bytes": "6869"}})
        j = ztcli.info(src)
        self.assertEqual(j["attributes"], {"tokenizer.x": {"$map": [["$bytes", "6869"]]}})
        p = ztcli.run("export", src, "--to", "gguf", "-o", self.path("o.gguf"), check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("attribute 'tokenizer.x' is a map, which GGUF metadata cannot hold", p.stderr)
        self.assertFalse(os.path.exists(self.path("o.gguf")))
        # A real byte string still goes to GGUF as a string.
        src = self.build({"tokenizer.x": b"hi"})
        ztcli.run("export", src, "--to", "gguf", "-o", self.path("b.gguf"))
        self.assertEqual(gguf_kvs(self.path("b.gguf"))["tokenizer.x"], (8, b"hi"))

    def test_dollar_keys_at_the_top_are_ordinary_keys(self):
        attrs = {"$bytes": "6869", "$map": "x", "plain": "y"}
        src = self.build(attrs)
        ztcli.run("export", src, "--to", "gguf", "-o", self.path("o.gguf"))
        kv = gguf_kvs(self.path("o.gguf"))
        self.assertEqual({k: v for k, (t, v) in kv.items()}, {k: v.encode() for k, v in attrs.items()})
        ztcli.run("export", src, "--to", "safetensors", "-o", self.path("o.safetensors"))
        with open(self.path("o.safetensors"), "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            import json
            header = json.loads(f.read(n))
        self.assertEqual(header["__metadata__"], attrs)

    def test_map_marker_inside_a_map_is_refused_by_gguf(self):
        src = self.build({"k": {"$map": [[1, 2]]}})
        p = ztcli.run("export", src, "--to", "gguf", "-o", self.path("o.gguf"), check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("attribute 'k' is a map", p.stderr)


if __name__ == "__main__":
    import unittest
    unittest.main(verbosity=2)
