"""Inputs that are not regular files, and sets that reach outside their
folder (issue 27): a FIFO, device or folder given as an input or a shard is
refused at once (every run here has a timeout: a blocking open would hang
on a FIFO nobody writes); symlinked shards are refused; no byte of a file
that is not a zTensor file is quoted; zt split never writes more shards
than readers accept."""
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import ztcli  # noqa: E402
from ztcli import ZT, run  # noqa: E402

TIMEOUT = 20


def zt(*args):
    return subprocess.run([ZT, *map(str, args)], capture_output=True, text=True, timeout=TIMEOUT)


class NonRegularInputTest(ztcli.TmpCase):
    def test_fifo_inputs_are_refused_at_once(self):
        for name in ("f.zt", "f.safetensors", "f.npy", "f.npz", "f.gguf", "f.bin", "f.safetensors.index.json"):
            os.mkfifo(self.path(name))
        cases = [("info", "f.zt"), ("ls", "f.zt"), ("verify", "f.zt"), ("info", "f.safetensors"),
                 ("info", "f.bin"), ("convert", "f.npy"), ("convert", "f.npz"), ("convert", "f.gguf"),
                 ("convert", "f.bin"), ("convert", "f.safetensors.index.json"), ("info", "f.safetensors.index.json")]
        for cmd, name in cases:
            with self.subTest(cmd=cmd, input=name):
                args = [cmd, self.path(name)] + (["-o", self.path("out.zt")] if cmd == "convert" else [])
                p = zt(*args)  # raises TimeoutExpired if it waits on the FIFO
                self.assertIn(p.returncode, (1, 3), p.stderr)
                self.assertIn("FIFO", p.stderr)
                self.assertFalse(os.path.exists(self.path("out.zt")))

    def test_devices_and_folders_are_refused(self):
        os.mkdir(self.path("d.zt"))
        for path, kind in ((self.path("d.zt"), "directory"), ("/dev/null", "character device")):
            with self.subTest(path=path):
                p = zt("info", path)
                self.assertNotEqual(p.returncode, 0)
                self.assertIn(kind, p.stderr)


class SetFolderTest(ztcli.TmpCase):
    def make_set(self):
        np.save(self.path("a.npy"), np.arange(6, dtype=np.float32))
        run("convert", self.path("a.npy"), "-o", self.path("a.zt"))
        os.mkdir(self.path("set"))
        run("split", self.path("a.zt"), "--max-shard-size", "1KB", "-o", self.path("set"), "--quiet")
        index = self.path("set/a.zt.index.json")
        with open(index) as f:
            shard = next(iter(json.load(f)["weight_map"].values()))
        return index, self.path("set/" + shard)

    def test_symlinked_shard_is_refused(self):
        index, shard = self.make_set()
        run("merge", index, "-o", self.path("m.zt"))
        os.rename(shard, self.path("moved.zt"))
        os.symlink(self.path("moved.zt"), shard)
        p = zt("merge", index, "-o", self.path("m2.zt"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("is a symbolic link", p.stderr)

    def test_fifo_shard_is_refused_at_once(self):
        index, shard = self.make_set()
        os.remove(shard)
        os.mkfifo(shard)
        p = zt("merge", index, "-o", self.path("m2.zt"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("FIFO", p.stderr)

    def test_no_byte_of_a_foreign_shard_is_quoted(self):
        index, shard = self.make_set()
        with open(shard, "wb") as f:
            f.write(b"PRIVATE KEY 0123456789abcdef\n")
        p = zt("merge", index, "-o", self.path("m2.zt"))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("not a zTensor file", p.stderr)
        for piece in ("PRIV", "RIVATE", "KEY", "0123"):
            self.assertNotIn(piece, p.stderr)


def zt_file_of_tiny_objects(path, n):
    """A spec-1.2 .zt file of n one-byte u8 objects, written directly (cbor2)
    so that no converter's cost is in the test."""
    import cbor2
    blobs = bytearray(b"ZTEN1000")
    objs = {}
    for i in range(n):
        off = (len(blobs) + 63) // 64 * 64
        blobs += b"\0" * (off - len(blobs)) + b"\x01"
        objs["t%06d" % i] = {"shape": [1], "format": "dense",
                             "components": {"data": {"dtype": "uint8", "offset": off, "length": 1}}}
    blobs = bytes(blobs)
    manifest = cbor2.dumps({"version": "1.2.0", "objects": objs})
    with open(path, "wb") as f:
        f.write(blobs + manifest + struct.pack("<Q", len(manifest)) + b"ZTEN1000")


class SplitLimitTest(ztcli.TmpCase):
    def test_split_refuses_more_shards_than_readers_accept(self):
        src = self.path("tiny.zt")
        zt_file_of_tiny_objects(src, 65537)  # ZT_SET_MAX_SHARDS + 1
        os.mkdir(self.path("out"))
        p = zt("split", src, "--max-shard-size", "1", "-o", self.path("out"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("65537 shards", p.stderr)
        self.assertIn("65536", p.stderr)
        self.assertEqual(os.listdir(self.path("out")), [])


if __name__ == "__main__":
    import unittest
    unittest.main()
