"""zt info, ls, verify, cat and export on format v2 files: the original
implementation's conformance corpus (tests/data/v2-conformance), read through
zt_open like any other generation; rejections name the v2 rule."""
import json
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ztcli  # noqa: E402
from ztcli import run  # noqa: E402

CORPUS = os.path.join(os.environ.get("ZT_SOURCE_ROOT", "."), "tests", "data", "v2-conformance")


def corpus(kind, name):
    return os.path.join(CORPUS, kind, name + ".zt")


class V2Test(ztcli.TmpCase):
    def test_info_json_reports_version_layouts_and_parts(self):
        j = json.loads(run("info", "--json", corpus("valid", "csr-metadata-valid")).stdout)
        self.assertEqual(j["version"], "2")
        (m,) = j["objects"]
        self.assertEqual(m["format"], "zt.sparse_csr/1")
        parts = {c["role"]: c for c in m["components"]}
        self.assertEqual(set(parts), {"indices", "indptr", "values"})
        self.assertEqual(parts["indices"]["blob"], [4096, 24])
        self.assertEqual(parts["values"]["dtype"], "f32")
        j = json.loads(run("info", "--json", corpus("valid", "shards-table")).stdout)
        self.assertEqual(j["shards"], {"base": {"size": 1 << 20, "digest": "xxh3:00112233445566aa"}})
        self.assertEqual(j["objects"][0]["components"][0]["shard"], "base")
        j = json.loads(run("info", "--json", corpus("valid", "unknown-layout-structural")).stdout)
        self.assertEqual(j["objects"][0]["format"], "x.custom/1")

    def test_info_names_a_data_shard(self):
        out = run("info", corpus("valid", "data-shard")).stdout
        self.assertIn("version:    2", out)
        self.assertIn("data shard: yes", out)
        self.assertTrue(json.loads(run("info", "--json", corpus("valid", "data-shard")).stdout)["data_shard"])

    def test_rejections_name_the_rule(self):
        for name, rule in [("manifest-hash-mismatch", "ManifestHash"), ("cbor-unsorted-keys", "CborDeterminism"),
                           ("blob-partial-overlap", "BlobOverlap"), ("dense-size-mismatch", "DenseSize")]:
            for cmd in ("info", "verify"):
                p = run(cmd, corpus("reject", name), check=False)
                self.assertNotEqual(p.returncode, 0, name)
                self.assertIn("rejected (%s)" % rule, p.stderr, name)

    def test_ls_verify_cat_export(self):
        ls = run("ls", corpus("valid", "canonical-basic")).stdout
        self.assertEqual(sorted(line.split("\t")[0] for line in ls.splitlines()), ["a.bias", "a.weight", "tied"])
        self.assertIn("OK", run("verify", corpus("valid", "verify-ok")).stdout)
        p = run("verify", corpus("reject", "verify-digest-mismatch"), check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("rejected (Digest)", p.stdout + p.stderr)
        p = run("verify", corpus("reject", "bool-invalid-byte"), check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("rejected (LayoutData)", p.stdout + p.stderr)
        self.assertEqual(ztcli.cat(corpus("valid", "minimal"), "t"), b"\xab" * 8)
        bias = ztcli.export(corpus("valid", "canonical-basic"), "a.bias", self.tmp)
        self.assertEqual(bias.dtype, ztcli.host_dtype(np.float32))  # ">f4" on a big-endian host
        self.assertEqual(bias.shape, (4,))
        self.assertEqual(bias.tobytes(), b"\x01" * 16)
        out = os.path.join(self.tmp, "all.safetensors")
        run("export", corpus("valid", "canonical-basic"), "--to", "safetensors", "-o", out)
        j = json.loads(run("info", "--json", out).stdout)
        self.assertEqual(sorted(o["name"] for o in j["objects"]), ["a.bias", "a.weight", "tied"])

    def test_unknown_vocabulary_is_refused_not_reinterpreted(self):
        p = run("cat", corpus("valid", "unknown-ltype-structural"), "t", check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("x.future/1", p.stderr)
        p = run("cat", corpus("valid", "view-unknown-encoding-refused"), "t", check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("x.z/1", p.stderr)


if __name__ == "__main__":
    unittest.main()
