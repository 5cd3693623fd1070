"""zt info, ls, verify and cat read .safetensors, .npy, .npz and GGUF files
through zt_open (the library's parsers, docs/foreign.md), recognised by
their bytes; such files are never rewritten in place; and an allocation
failure while parsing one ends in "out of memory", exit 1."""
import os
import struct
import subprocess
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ztcli  # noqa: E402
from ztcli import GGUF_STRING, ZT, gguf_bytes, run, safetensors_bytes  # noqa: E402


def asan_instrumented(path):
    """Whether `path` links AddressSanitizer's runtime (the .ci/sanitize.sh build)."""
    try:
        return "libasan" in subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    except OSError:
        return False


class ForeignOpenTest(ztcli.TmpCase):
    def write(self, name, data):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def fixtures(self):
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        files = {
            "m.safetensors": (self.write("m.safetensors", safetensors_bytes([("w", "F32", [3, 4], a.tobytes())],
                                                                            {"k": "v"})), "w"),
            "noext": (self.write("noext", safetensors_bytes([("w", "F32", [3, 4], a.tobytes())])), "w"),
            "m.gguf": (self.write("m.gguf", gguf_bytes([("general.name", GGUF_STRING, "m")],
                                                       [("w", [4, 3], 0, a.tobytes())])), "w"),
        }
        np.save(self.path("le.npy"), a)
        np.save(self.path("be.npy"), a.astype(">f4"))
        np.save(self.path("fo.npy"), np.asfortranarray(a))
        for name in ("le.npy", "be.npy", "fo.npy"):
            files[name] = (self.path(name), name[:-4])
        if ztcli.HAVE_NPZ:  # builds without libzip (-Dlibzip=disabled) refuse .npz
            np.savez_compressed(self.path("z.npz"), w=a)
            files["z.npz"] = (self.path("z.npz"), "w")
        return a, files

    def test_info_ls_verify_cat(self):
        a, files = self.fixtures()
        for label, (path, obj) in files.items():
            with self.subTest(label):
                self.assertIn("OK", run("verify", path).stdout)
                run("verify", "--strict", path)
                doc = ztcli.info(path)
                self.assertIsNone(doc["version"])
                self.assertIn(doc["source_format"], ("safetensors", "npy", "npz", "gguf v3"))
                (o,) = doc["objects"]
                self.assertEqual((o["name"], o["shape"], o["components"][0]["dtype"]), (obj, [3, 4], "f32"))
                self.assertIn("read-only", run("info", path).stdout)
                self.assertEqual(run("ls", path).stdout.split("\t")[0], obj)
                out = ztcli.subprocess.run([ztcli.ZT, "cat", path, obj], capture_output=True, check=True).stdout
                self.assertEqual(np.frombuffer(out, ztcli.host_dtype("f4")).reshape(3, 4).tolist(), a.tolist())

    def test_never_rewritten_in_place(self):
        _, files = self.fixtures()
        other = self.path("other.zt")
        run("convert", files["le.npy"][0], "-o", other, "--quiet")
        for label in [k for k in ("m.safetensors", "z.npz", "m.gguf") if k in files]:
            path = files[label][0]
            before = open(path, "rb").read()
            for args in (("append", path, "--from", other), ("remove", path, files[label][1])):
                p = run(*args, check=False)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn("never rewrites in place", p.stderr)
            self.assertEqual(open(path, "rb").read(), before, label)

    def test_damaged_files_are_reported(self):
        good = safetensors_bytes([("w", "F32", [4], bytes(16))])
        for name, data, why in (("cut.safetensors", good[:-4], "outside"),
                                ("bad.gguf", b"GGUF" + struct.pack("<IQQ", 3, 1 << 60, 0), "tensor count"),
                                ("bad.npy", b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'", "past the end")):
            path = self.write(name, data)
            for cmd in ("verify", "info", "ls"):
                p = run(cmd, path, check=False)
                self.assertEqual(p.returncode, 1, (name, cmd, p.stderr))
                self.assertIn(why, p.stderr, (name, cmd))

    @unittest.skipIf(asan_instrumented(ZT), "--max-memory sets RLIMIT_DATA, which AddressSanitizer's own "
                     "mappings also count against; the plain build runs this test")
    @unittest.skipIf(ztcli.EMULATOR, "qemu-user ignores a guest's setrlimit(RLIMIT_DATA) (the limit would bound "
                     "the emulator's own heap): --max-memory has no effect under it")
    def test_out_of_memory_while_parsing_ends_cleanly(self):
        # ~10 MB of header: its entries cannot be held under a 24 MiB heap.
        big = self.write("big.safetensors",
                         safetensors_bytes([("t%07d" % i, "F32", [0], b"") for i in range(150000)]))
        for args in (("verify", big), ("info", big), ("convert", big, "-o", self.path("o.zt"), "--no-sync")):
            p = run("--max-memory", "24M", *args, check=False)
            self.assertEqual(p.returncode, 1, (args, p.stderr))
            self.assertIn("out of memory", p.stderr, args)
            self.assertNotIn("terminate", p.stderr, args)
        # The same input does open without the limit.
        run("verify", "--quiet", big)


if __name__ == "__main__":
    unittest.main()
