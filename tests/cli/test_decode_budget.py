"""One decode budget per command (--max-total-decoded), counted as what the
command decodes: over all inputs of a merge or append and every shard of a
set; a blob shared by n objects n times when each object is written
(decompress, export), once when it is verified. Objects sharing one zstd
frame while declaring different sizes are verified with one decode, each
mismatch reported. compress/decompress/migrate refuse the read options
they cannot honour."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rawzt  # noqa: E402
import ztcli  # noqa: E402

MIB = 1 << 20


def zeros_file(path, size, names=("z",)):
    """Objects `names`, each a dense u8 [size] sharing one zstd frame of
    `size` zeros."""
    rawzt.build(path, [rawzt.zstd_zeros(size)], {
        n: {"shape": [size], "format": "dense", "components": {
            "data": {"dtype": "u8", "encoding": "zstd", "uncompressed_length": size, "blob": 0}}}
        for n in names})
    return path


def refused(test, p):
    test.assertEqual(p.returncode, 1, p.stderr)
    test.assertIn("--max-total-decoded", p.stderr)


class OneBudgetPerCommand(ztcli.TmpCase):
    def test_merge_counts_all_inputs_together(self):
        a = zeros_file(self.path("a.zt"), 6 * MIB, ["a"])
        b = zeros_file(self.path("b.zt"), 6 * MIB, ["b"])
        out = self.path("m.zt")
        # Each input alone fits in 10M; both together do not.
        for f in (a, b):
            self.assertEqual(ztcli.run("--max-total-decoded", "10M", "verify", f, check=False).returncode, 0)
        p = ztcli.run("--max-total-decoded", "10M", "merge", a, b, "-o", out, check=False)
        refused(self, p)
        self.assertIn(str(12 * MIB), p.stderr)
        self.assertFalse(os.path.exists(out))
        ztcli.run("--max-total-decoded", "12M", "merge", a, b, "-o", out, "--quiet")

    def test_append_counts_both_files(self):
        a = zeros_file(self.path("a.zt"), 6 * MIB, ["a"])
        b = zeros_file(self.path("b.zt"), 6 * MIB, ["b"])
        before = open(a, "rb").read()
        refused(self, ztcli.run("--max-total-decoded", "10M", "append", a, "--from", b, check=False))
        self.assertEqual(open(a, "rb").read(), before)

    def test_merge_of_a_set_counts_every_shard(self):
        src = zeros_file(self.path("src.zt"), 4 * MIB, ["s%d" % i for i in range(4)])
        # Unshared copies, so that the split gives shards of one object each.
        raw = self.path("raw.zt")
        ztcli.run("decompress", src, "-o", raw, "--quiet")
        packed = self.path("packed.zt")
        ztcli.run("compress", raw, "-o", packed, "--quiet")
        ztcli.run("split", packed, "--max-shard-size", "1000", "-o", self.path("set"), "--prefix", "m", "--quiet")
        index = self.path("set/m.zt.index.json")
        out = self.path("m.zt")
        p = ztcli.run("--max-total-decoded", "10M", "merge", index, "-o", out, check=False)
        refused(self, p)
        self.assertIn(str(16 * MIB), p.stderr)
        self.assertFalse(os.path.exists(out))
        ztcli.run("--max-total-decoded", "16M", "merge", index, "-o", out, "--quiet")

    def test_a_shared_blob_counts_once_per_object_written(self):
        # 100 objects share one 1 MiB frame: a rewrite or an export decodes
        # it 100 times (100 MiB); verify decodes it once.
        f = zeros_file(self.path("shared.zt"), MIB, ["o%03d" % i for i in range(100)])
        self.assertLess(os.path.getsize(f), 64 << 10)
        for args in (["decompress", f, "-o", self.path("d.zt")],
                     ["compress", f, "-o", self.path("c.zt")],
                     ["migrate", f, "-o", self.path("m.zt")],
                     ["export", f, "--to", "safetensors", "-o", self.path("e.safetensors")],
                     ["merge", f, zeros_file(self.path("x.zt"), 16, ["x"]), "-o", self.path("g.zt")]):
            p = ztcli.run("--max-total-decoded", "50M", *args, check=False)
            refused(self, p)
            self.assertIn(str(100 * MIB + (16 if args[0] == "merge" else 0)), p.stderr, args)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["shared.zt", "x.zt"])
        self.assertEqual(ztcli.run("--max-total-decoded", "2M", "verify", f, check=False).returncode, 0)
        ztcli.run("--max-total-decoded", "100M", "decompress", f, "-o", self.path("d.zt"), "--quiet")

    def test_single_object_export_is_counted(self):
        f = zeros_file(self.path("one.zt"), 6 * MIB)
        refused(self, ztcli.run("--max-total-decoded", "4M", "export", f, "z", "-o", self.path("z.npy"), check=False))
        self.assertFalse(os.path.exists(self.path("z.npy")))


class SharedFrameDeclaredSizes(ztcli.TmpCase):
    def test_each_mismatch_is_reported_precisely(self):
        size = 64 << 10
        names = ["o%d" % i for i in range(5)]
        objects = {n: {"shape": [size + 64 * (i - 2)], "format": "dense", "components": {
            "data": {"dtype": "u8", "encoding": "zstd", "uncompressed_length": size + 64 * (i - 2), "blob": 0}}}
            for i, n in enumerate(names)}
        f = self.path("f.zt")
        rawzt.build(f, [rawzt.zstd_zeros(size)], objects)
        p = ztcli.run("verify", f, check=False)
        self.assertEqual(p.returncode, 1)
        lines = [line for line in p.stdout.splitlines() if line.startswith("FAIL")]
        self.assertEqual(len(lines), 4, p.stdout)
        self.assertNotIn("o2", p.stdout)  # the one that declares the right size
        # One decode, bounded by the largest size declared, gives the frame's
        # size: every other declaration is compared with it.
        for i in (0, 1, 3, 4):
            self.assertIn("object 'o%d', component 'data': zstd data decodes to %d bytes, but %d are declared"
                          % (i, size, size + 64 * (i - 2)), p.stdout)

    def test_the_largest_declaration_bounds_the_decode(self):
        # Every object declares less than the frame holds: the decode stops
        # past the largest declaration; each says how much it declares.
        size = 64 << 10
        f = self.path("f.zt")
        rawzt.build(f, [rawzt.zstd_zeros(size)], {
            "o%d" % i: {"shape": [1024 * (i + 1)], "format": "dense", "components": {
                "data": {"dtype": "u8", "encoding": "zstd", "uncompressed_length": 1024 * (i + 1), "blob": 0}}}
            for i in range(3)})
        p = ztcli.run("verify", f, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stdout.count("FAIL"), 3, p.stdout)
        for i in range(2):
            self.assertIn("object 'o%d', component 'data': zstd data decodes to more than 3072 bytes, but %d are "
                          "declared" % (i, 1024 * (i + 1)), p.stdout)
        self.assertIn("object 'o2', component 'data': zstd data decodes to more than the 3072 bytes declared",
                      p.stdout)


class ReadOptionsOfRewrites(ztcli.TmpCase):
    def test_pread_and_max_decoded_size_are_refused_not_ignored(self):
        f = zeros_file(self.path("f.zt"), 4096)
        for opt in (["--pread"], ["--max-decoded-size", "1M"]):
            for cmd in ("compress", "decompress", "migrate"):
                out = self.path("o.zt")
                p = ztcli.run(*opt, cmd, f, "-o", out, check=False)
                self.assertEqual(p.returncode, 2, (opt, cmd, p.stderr))
                self.assertIn(opt[0], p.stderr)
                self.assertIn("does not apply", p.stderr)
                self.assertFalse(os.path.exists(out))
        # (--max-memory, which implies pread, still lets a rewrite run:
        # test_stream_memory.py, outside the sanitizer run that RLIMIT_DATA
        # would break.)


if __name__ == "__main__":
    import unittest
    unittest.main(verbosity=2)
