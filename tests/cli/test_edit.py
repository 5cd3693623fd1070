"""zt compress/decompress/append/remove/merge: everything a component stored
survives; clashes are errors that change nothing; an interrupted append or
remove (kill -9 mid-write) leaves the old complete file or the new one."""
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import ztcli  # noqa: E402
from ztcli import (ZT, GGUF_STRING, GGUF_U32, cat, gguf_bytes, info, objects, run,  # noqa: E402
                   safetensors_bytes)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def sha(path):
    return hashlib.sha256(read_bytes(path)).hexdigest()


def component_facts(path):
    """name -> (format, shape, attributes, [(role, dtype, type, encoding, digest alg)])"""
    out = {}
    for o in info(path)["objects"]:
        comps = [(c["role"], c["dtype"], c["type"], c["encoding"], (c["digest"] or "").split(":")[0])
                 for c in o["components"]]
        out[o["name"]] = (o["format"], o["shape"], o["attributes"], comps)
    return out


class EditTest(ztcli.TmpCase):
    def make_inputs(self):
        """a.zt: safetensors with fp8 and metadata, raw, sha256; b.zt: GGUF with
        a quantized tensor, zstd, crc32c."""
        st = self.path("a.safetensors")
        with open(st, "wb") as f:
            f.write(safetensors_bytes([("w", "F32", [4, 4], np.arange(16, dtype="<f4").tobytes()),
                                       ("f8", "F8_E4M3", [8], bytes(range(8))),
                                       ("c", "C64", [2], np.array([1 + 2j, 3 + 4j], "<c8").tobytes())],
                                      {"format": "pt", "shared": "same"}))
        gg = self.path("b.gguf")
        with open(gg, "wb") as f:
            f.write(gguf_bytes([("general.architecture", GGUF_STRING, "llama"), ("shared", GGUF_STRING, "same"),
                                ("n", GGUF_U32, 7)],
                               [("q", [32, 2], 2, bytes(range(36))), ("e", [3], 0, np.ones(3, "<f4").tobytes())]))
        run("convert", st, "-o", self.path("a.zt"), "--digest", "sha256")
        run("convert", gg, "-o", self.path("b.zt"), "--zstd", "3", "--digest", "crc32c")
        os.remove(st)
        os.remove(gg)
        return self.path("a.zt"), self.path("b.zt")

    def assert_same_objects(self, dst, src, names=None):
        d, s = component_facts(dst), component_facts(src)
        for name in names or s:
            self.assertEqual(d[name], s[name], name)
            for role, *_ in s[name][3]:
                self.assertEqual(cat(dst, name, role), cat(src, name, role), name)

    def test_compress_decompress_keep_everything(self):
        a, b = self.make_inputs()
        run("compress", a, "-o", self.path("az.zt"), "--zstd", "9")
        facts = component_facts(self.path("az.zt"))
        for name, (_, _, _, comps) in facts.items():
            for role, dtype, typ, enc, dig in comps:
                self.assertEqual((enc, dig), ("zstd", "sha256"), name)
        self.assertEqual(info(self.path("az.zt"))["attributes"], info(a)["attributes"])
        self.assertEqual(facts["f8"][3][0][2], "f8_e4m3fn")
        for name in facts:
            self.assertEqual(cat(self.path("az.zt"), name), cat(a, name))
        p = run("decompress", b, "-o", self.path("braw.zt"), "--json")
        self.assertIn('"command":"decompress"', p.stdout.replace(" ", ""))
        for name, (fmt, shape, attrs, comps) in component_facts(self.path("braw.zt")).items():
            self.assertEqual([c[3] for c in comps], ["raw"])
            self.assertEqual(cat(self.path("braw.zt"), name), cat(b, name))
        self.assertEqual(component_facts(self.path("braw.zt"))["q"][2]["ggml_type"], "q4_0")
        run("verify", self.path("az.zt"))
        run("verify", self.path("braw.zt"))
        p = run("compress", a, "-o", a, check=False)
        self.assertNotEqual(p.returncode, 0)

    def test_append_keeps_stored_semantics(self):
        a, b = self.make_inputs()
        a_before, b_before = self.path("a0.zt"), self.path("b0.zt")
        shutil.copy(a, a_before)  # raw + sha256
        shutil.copy(b, b_before)  # zstd + crc32c, object attributes
        p = run("append", a, "--from", b, "--json")
        self.assertIn('"added"', p.stdout)
        self.assertEqual(sorted(objects(a)), ["c", "e", "f8", "q", "w"])
        self.assert_same_objects(a, a_before)
        self.assert_same_objects(a, b_before)
        attrs = info(a)["attributes"]
        self.assertEqual((attrs["format"], attrs["general.architecture"], attrs["shared"], attrs["n"]),
                         ("pt", "llama", "same", 7))
        run("verify", a)

    def test_append_clash_changes_nothing(self):
        a, b = self.make_inputs()
        before = sha(a)
        copy = self.path("a-copy.zt")  # the same names in another file (a itself is refused earlier)
        shutil.copyfile(a, copy)
        p = run("append", a, "--from", copy, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("names must be unique", p.stderr)
        self.assertEqual(sha(a), before)
        self.assert_no_leftovers(["a.zt", "a-copy.zt", "b.zt"])

    def test_remove(self):
        a, _ = self.make_inputs()
        before = sha(a)
        p = run("remove", a, "nope", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(sha(a), before)
        shutil.copy(a, self.path("orig.zt"))
        run("remove", a, "w", "c", "--quiet")
        self.assertEqual(sorted(objects(a)), ["f8"])
        self.assert_same_objects(a, self.path("orig.zt"), ["f8"])
        self.assertEqual(info(a)["attributes"], info(self.path("orig.zt"))["attributes"])
        run("verify", a)
        self.assert_no_leftovers(["a.zt", "b.zt", "orig.zt"])

    def test_merge_and_attribute_clash(self):
        a, b = self.make_inputs()
        out = self.path("m.zt")
        run("merge", a, b, "-o", out)
        self.assert_same_objects(out, a)
        self.assert_same_objects(out, b)
        np.save(self.path("x.npy"), np.zeros(2))
        with open(self.path("x.safetensors"), "wb") as f:
            f.write(safetensors_bytes([("x", "F32", [1], b"\0" * 4)], {"shared": "different"}))
        run("convert", self.path("x.safetensors"), "-o", self.path("x.zt"))
        os.remove(out)
        p = run("merge", a, self.path("x.zt"), "-o", out, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("shared", p.stderr)
        self.assertFalse(os.path.exists(out))
        p = run("merge", a, a, "-o", out, check=False)
        self.assertEqual(p.returncode, 1)
        self.assert_no_leftovers(["a.zt", "b.zt", "x.npy", "x.safetensors", "x.zt"])

    def test_damaged_source_is_not_copied(self):
        a, b = self.make_inputs()
        data = bytearray(read_bytes(b))
        data[70] ^= 0xFF  # inside the first blob (offset 64): the crc32c no longer matches
        with open(b, "wb") as f:
            f.write(bytes(data))
        before = sha(a)
        p = run("append", a, "--from", b, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(sha(a), before)


class InterruptTest(ztcli.TmpCase):
    """kill -9 in the middle of the rewrite: the destination is the old
    complete file or the new complete file, never anything else."""

    def setUp(self):
        super().setUp()
        # 64 MiB in four .npy files (not one .npz: cross builds read none).
        parts = [self.path("big%d.npy" % i) for i in range(4)]
        for i, part in enumerate(parts):
            np.save(part, np.full((4 << 20,), i, dtype="<f4"))
        self.big = self.path("big.zt")
        run("convert", *parts, "-o", self.big, "--digest", "sha256")
        for part in parts:
            os.remove(part)
        np.save(self.path("small.npy"), np.arange(5))
        run("convert", self.path("small.npy"), "-o", self.path("small.zt"))

    def interrupt(self, args):
        before = sha(self.big)
        proc = subprocess.Popen([ZT, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        killed_mid_write = False
        while time.time() < deadline and proc.poll() is None:
            # The temporary usually has no name (O_TMPFILE): seen through /proc.
            if ztcli.temp_being_written(proc.pid, self.tmp) > (1 << 20):
                os.kill(proc.pid, signal.SIGKILL)
                killed_mid_write = True
                break
            time.sleep(0.001)
        proc.wait()
        self.assertTrue(killed_mid_write, "the rewrite finished before it could be interrupted")
        self.assertEqual(proc.returncode, -signal.SIGKILL)
        self.assertEqual(sha(self.big), before, "the destination changed although the rewrite was killed")
        run("verify", self.big)
        # Unnamed, the killed writer's temporary vanished with it; named (a
        # filesystem without O_TMPFILE), the next writer removes it.

    def test_append_interrupted(self):
        self.interrupt(["append", self.big, "--from", self.path("small.zt")])
        run("append", self.big, "--from", self.path("small.zt"))  # and uninterrupted it completes
        self.assertIn("small", objects(self.big))
        self.assertEqual([f for f in os.listdir(self.tmp) if ".zt-tmp-" in f], [])
        run("verify", self.big)

    def test_remove_interrupted(self):
        self.interrupt(["remove", self.big, "big0"])
        run("remove", self.big, "big0")
        self.assertEqual(sorted(objects(self.big)), ["big1", "big2", "big3"])
        self.assertEqual([f for f in os.listdir(self.tmp) if ".zt-tmp-" in f], [])
        run("verify", self.big)


if __name__ == "__main__":
    import unittest
    unittest.main()
