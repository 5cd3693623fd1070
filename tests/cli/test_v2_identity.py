"""zt info prints a zTensor v2 file's content digest (v2 spec §6.4): the
same for the same tensors at any placement or encoding, different for
different tensors, 'undefined' with the reason when a part has no digest,
and absent for 1.x files. zt verify --canonical checks canonical form
(§6.3) and names each rule missed."""
import re
import unittest

import numpy as np

import ztcli


def content_line(path):
    out = ztcli.run("info", path).stdout
    lines = [l for l in out.splitlines() if l.startswith("content:")]
    return lines[0][len("content:"):].strip() if lines else None


class V2IdentityTest(ztcli.TmpCase):
    def convert(self, arr, out, *extra):
        src = self.path("src.npy")
        np.save(src, arr)
        ztcli.run("convert", src, "-o", out, *extra)

    def test_info_prints_the_content_digest(self):
        a = np.arange(6, dtype="<f4")
        canonical, zstd, other = self.path("c.zt"), self.path("z.zt"), self.path("o.zt")
        self.convert(a, canonical, "--format", "2")
        self.convert(a, zstd, "--format", "2", "--no-canonical", "--zstd", "3")
        d = content_line(canonical)
        self.assertRegex(d, r"^sha256:[0-9a-f]{64}$")
        self.assertEqual(d, content_line(zstd), "raw and zstd-seekable hold the same model")
        with open(canonical, "rb") as f1, open(zstd, "rb") as f2:
            self.assertNotEqual(f1.read(), f2.read())
        self.convert(a + 1, other, "--format", "2")
        self.assertNotEqual(d, content_line(other), "different values")

    def test_undefined_without_part_digests(self):
        path = self.path("n.zt")
        self.convert(np.arange(3, dtype="u1"), path, "--format", "2", "--no-canonical", "--digest", "none")
        line = content_line(path)
        self.assertTrue(line.startswith("undefined"), line)
        self.assertTrue(re.search(r"part 'data' carries no digest", line), line)

    def test_not_printed_for_1x(self):
        path = self.path("one.zt")
        self.convert(np.arange(3, dtype="u1"), path)
        self.assertIsNone(content_line(path))

    def test_verify_canonical(self):
        a = np.arange(6, dtype="<f4")
        canonical, floor = self.path("c.zt"), self.path("f.zt")
        self.convert(a, canonical, "--format", "2")
        r = ztcli.run("verify", canonical, "--canonical")
        self.assertIn("OK (1 objects, canonical)", r.stdout)
        self.convert(a, floor, "--format", "2", "--no-canonical", "--digest", "sha256")
        r = ztcli.run("verify", floor, "--canonical", check=False)
        self.assertEqual(1, r.returncode, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"NOT CANONICAL rule 4: 'src'/'data' has a 'sha256:[0-9a-f]{64}' digest, not xxh3")
        self.assertIn("valid, not canonical (first miss: v2 spec §6.3 rule 4)", r.stdout)
        # Without --canonical the same file verifies.
        self.assertEqual(0, ztcli.run("verify", floor).returncode)
        one = self.path("one.zt")
        self.convert(a, one)
        r = ztcli.run("verify", one, "--canonical", check=False)
        self.assertNotEqual(0, r.returncode)
        self.assertIn("v2", r.stderr)


    def test_info_json_content_digest_and_canonical(self):
        a = np.arange(6, dtype="<f4")
        canonical, zstd, none = self.path("c.zt"), self.path("z.zt"), self.path("n.zt")
        self.convert(a, canonical, "--format", "2")
        self.convert(a, zstd, "--format", "2", "--no-canonical", "--zstd", "3")
        self.convert(a, none, "--format", "2", "--no-canonical", "--digest", "none")
        j = ztcli.info(canonical)
        self.assertEqual("2", j["version"])
        self.assertRegex(j["content_digest"]["sha256"], r"^sha256:[0-9a-f]{64}$")
        self.assertRegex(j["content_digest"]["xxh3"], r"^xxh3:[0-9a-f]{16}$")
        self.assertEqual(content_line(canonical), j["content_digest"]["sha256"])
        self.assertIs(True, j["canonical"])
        z = ztcli.info(zstd)
        self.assertEqual(j["content_digest"], z["content_digest"], "raw and zstd-seekable hold the same model")
        self.assertEqual(4, z["canonical"]["rule"])
        self.assertIn("rule 4: 'src'/'data'", z["canonical"]["misses"])
        n = ztcli.info(none)
        self.assertEqual(["undefined"], list(n["content_digest"]))
        self.assertIn("part 'data' carries no digest", n["content_digest"]["undefined"])
        # The text form: the verdict and the first rule missed.
        lines = ztcli.run("info", zstd).stdout.splitlines()
        self.assertIn("canonical:  no, v2 spec §6.3 rule 4: 'src'/'data'", "\n".join(lines))
        self.assertIn("canonical:  yes (v2 spec §6.3)", ztcli.run("info", canonical).stdout)
        # 1.x files have neither.
        one = self.path("one.zt")
        self.convert(a, one)
        j1 = ztcli.info(one)
        self.assertNotIn("content_digest", j1)
        self.assertNotIn("canonical", j1)
        self.assertNotIn("canonical:", ztcli.run("info", one).stdout)


if __name__ == "__main__":
    unittest.main()
