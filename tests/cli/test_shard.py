"""zt split / zt merge of sharded sets (docs/sharding.md): round trips that
keep every byte, size units, tensors never split, and every refusal leaving
nothing behind."""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import ztcli  # noqa: E402
from ztcli import cat, info, objects, run, safetensors_bytes  # noqa: E402


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def read_json(path):
    with open(path) as f:
        return json.load(f)


def split_safetensors(b):
    """(parsed header, data section)"""
    n = struct.unpack("<Q", b[:8])[0]
    return json.loads(b[8:8 + n]), b[8 + n:]


class ShardTest(ztcli.TmpCase):
    def make_input(self, sizes=(100, 100, 300, 50, 100), digest="sha256"):
        """t0..tN f32 tensors of the given element counts, file attributes {"k": "v"}."""
        tensors = [("t%d" % i, "F32", [n], np.arange(n, dtype=np.float32).tobytes() + b"")
                   for i, n in enumerate(sizes)]
        st = self.path("in.safetensors")
        with open(st, "wb") as f:
            f.write(safetensors_bytes(tensors, metadata={"k": "v"}))
        path = self.path("model.zt")
        run("convert", st, "-o", path, "--digest", digest, "--quiet")
        os.remove(st)
        return path

    def test_split_then_merge_round_trips(self):
        src = self.make_input()
        out = self.path("out")
        p = run("split", src, "--max-shard-size", "800B", "-o", out, "--json")
        summary = json.loads(p.stdout)
        self.assertEqual(summary["shards"], 3)
        # greedy in order: 400 + 400 | 1200 (alone: larger than the limit) | 200 + 400
        index = read_json(os.path.join(out, "model.zt.index.json"))
        self.assertEqual(index["metadata"], {"total_size": 2600})
        self.assertEqual(index["weight_map"], {"t0": "model-00001-of-00003.zt", "t1": "model-00001-of-00003.zt",
                                               "t2": "model-00002-of-00003.zt", "t3": "model-00003-of-00003.zt",
                                               "t4": "model-00003-of-00003.zt"})
        self.assertEqual(sorted(os.listdir(out)), sorted(set(index["weight_map"].values())) + ["model.zt.index.json"])
        for shard in set(index["weight_map"].values()):
            run("verify", os.path.join(out, shard))  # each a complete file, digests kept
            self.assertEqual(info(os.path.join(out, shard))["attributes"], {"k": "v"})
        merged = self.path("merged.zt")
        run("merge", os.path.join(out, "model.zt.index.json"), "-o", merged, "--quiet")
        self.assertEqual(list(objects(merged)), ["t0", "t1", "t2", "t3", "t4"])
        self.assertEqual(info(merged)["attributes"], {"k": "v"})
        for name in objects(src):
            self.assertEqual(cat(merged, name), cat(src, name))
        run("verify", merged)

    def test_size_units(self):
        src = self.make_input(sizes=(300, 300, 300))  # 1200 bytes each
        for size, shards in (("1KB", 3), ("1KiB", 3), ("2400", 2), ("2.4KB", None), ("3 kb", 2), ("3600", 1), ("1GB", 1),
                             ("5GiB", 1), ("0", None), ("-1", None), ("5XB", None), ("99999999999999999999", None)):
            out = self.path("o-" + size.replace(" ", "_").replace(".", "_"))
            p = run("split", src, "--max-shard-size", size, "-o", out, "--quiet", check=False)
            if shards is None:
                self.assertEqual(p.returncode, 2, size)
                self.assertFalse(os.path.exists(out), size)
            else:
                self.assertEqual(p.returncode, 0, size + p.stderr)
                self.assertEqual(len(os.listdir(out)), shards + 1, size)

    def test_split_refuses_existing_names_and_changes_nothing(self):
        src = self.make_input()
        out = self.path("out")
        os.mkdir(out)
        with open(os.path.join(out, "model-00002-of-00003.zt"), "wb") as f:
            f.write(b"precious")
        p = run("split", src, "--max-shard-size", "800", "-o", out, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("already exists", p.stderr)
        self.assertEqual(os.listdir(out), ["model-00002-of-00003.zt"])
        self.assertEqual(read_bytes(os.path.join(out, "model-00002-of-00003.zt")), b"precious")

    def test_split_of_a_damaged_file_leaves_nothing(self):
        src = self.make_input()
        data = bytearray(read_bytes(src))
        t4 = objects(src)["t4"]["components"][0]
        data[t4["offset"] + 5] ^= 0xFF  # digest mismatch in the last object
        with open(src, "wb") as f:
            f.write(data)
        out = self.path("out")
        p = run("split", src, "--max-shard-size", "800", "-o", out, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("t4", p.stderr)
        self.assertFalse(os.path.exists(out))  # no shard, no index, no temporary folder, no OUTDIR it made

    def test_merge_refuses_bad_sets(self):
        src = self.make_input()
        out = self.path("out")
        run("split", src, "--max-shard-size", "800", "-o", out, "--quiet")
        index = os.path.join(out, "model.zt.index.json")
        # the output may not be one of the shards
        p = run("merge", index, "-o", os.path.join(out, "model-00003-of-00003.zt"), check=False)
        self.assertEqual(p.returncode, 2)
        # an index that escapes its folder, one with a tensor in the wrong shard
        for wm, want in (({"t0": "../model.zt"}, "relative paths"),
                         ({"t0": "model-00002-of-00003.zt", "t1": "model-00001-of-00003.zt"}, "tensor 't0'")):
            bad = os.path.join(out, "bad.json")
            with open(bad, "w") as f:
                json.dump({"weight_map": wm}, f)
            p = run("merge", bad, "-o", self.path("m.zt"), check=False)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(want, p.stderr)
            self.assertFalse(os.path.exists(self.path("m.zt")))
        # a set plus a file holding one of its names: a clash, nothing written
        p = run("merge", index, src, "-o", self.path("m.zt"), check=False)
        self.assertEqual(p.returncode, 1)
        self.assertFalse(os.path.exists(self.path("m.zt")))


    def test_v2_split_then_merge(self):
        """--format 2: data shards plus a root with the shard table (spec §7),
        found again beside the root; zt merge joins them back."""
        import hashlib
        src = self.make_input()
        out = self.path("out2")
        p = run("split", src, "--max-shard-size", "800B", "-o", out, "--format", "2", "--json")
        self.assertEqual(json.loads(p.stdout)["shards"], 3)
        names = ["model-0000%d-of-00003.zt" % i for i in (1, 2, 3)]
        self.assertEqual(sorted(os.listdir(out)), sorted(names + ["model.zt"]))  # no index
        root = os.path.join(out, "model.zt")
        meta = info(root)
        self.assertEqual(meta["version"], "2")
        self.assertEqual(meta["attributes"], {"k": "v"})
        table = meta["shards"]
        self.assertEqual(sorted(table), ["00001-of-00003", "00002-of-00003", "00003-of-00003"])
        for name, entry in table.items():
            data = read_bytes(os.path.join(out, "model-%s.zt" % name))
            self.assertEqual(entry["size"], len(data))
            self.assertEqual(entry["digest"], "sha256:" + hashlib.sha256(data).hexdigest())  # §6.5's default
            self.assertEqual(data[-40:-16], bytes(24))  # a data shard: no manifest (§7.2)
            self.assertTrue(info(os.path.join(out, "model-%s.zt" % name)).get("data_shard"))
        where = {o["name"]: {c["shard"] for c in o["components"]} for o in meta["objects"]}
        self.assertEqual(where, {"t0": {"00001-of-00003"}, "t1": {"00001-of-00003"}, "t2": {"00002-of-00003"},
                                 "t3": {"00003-of-00003"}, "t4": {"00003-of-00003"}})
        for name in objects(src):
            self.assertEqual(cat(root, name), cat(src, name))
        run("verify", root)
        text = run("info", root).stdout
        self.assertIn("shards:     3", text)
        self.assertIn("00002-of-00003: %d bytes, sha256:" % table["00002-of-00003"]["size"], text)
        self.assertIn("    in shard 00003-of-00003", text)
        # deep verify catches a shard whose bytes changed but not its size
        third = os.path.join(out, names[2])
        data = bytearray(read_bytes(third))
        data[10] ^= 1  # padding before the first blob: reads cannot see it
        with open(third, "wb") as f:
            f.write(data)
        self.assertEqual(cat(root, "t3"), cat(src, "t3"))
        p = run("verify", root, check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("ShardIdentity", p.stdout + p.stderr)
        data[10] ^= 1
        with open(third, "wb") as f:
            f.write(data)
        merged = self.path("merged2.zt")
        run("merge", root, "-o", merged, "--quiet")
        self.assertEqual(list(objects(merged)), ["t0", "t1", "t2", "t3", "t4"])
        self.assertEqual(info(merged)["attributes"], {"k": "v"})
        for name in objects(src):
            self.assertEqual(cat(merged, name), cat(src, name))
        run("verify", merged)
        # the output may not be one of the root's shards
        p = run("merge", root, "-o", os.path.join(out, names[0]), check=False)
        self.assertNotEqual(p.returncode, 0)
        # xxh3 identities on request; --shard-digest needs --format 2
        out3 = self.path("out3")
        run("split", src, "--max-shard-size", "800B", "-o", out3, "--format", "2", "--shard-digest", "xxh3", "--quiet")
        self.assertTrue(all(e["digest"].startswith("xxh3:") for e in info(os.path.join(out3, "model.zt"))["shards"].values()))
        p = run("split", src, "--max-shard-size", "800B", "-o", self.path("out4"), "--shard-digest", "xxh3", check=False)
        self.assertEqual(p.returncode, 2)


class ConvertShardedTest(ztcli.TmpCase):
    """zt convert of a sharded safetensors checkpoint (index + shards) into a zt set."""

    TENSORS = {"a": ("F32", [2], np.array([1, 2], np.float32).tobytes()),
               "b": ("I8", [3], b"\x01\x02\x03"),
               "c": ("F64", [1], np.float64(3).tobytes())}

    def make_checkpoint(self, weight_map=None, shards=None):
        src = self.path("ckpt")
        os.makedirs(src, exist_ok=True)
        shards = shards or {"model-00001-of-00002.safetensors": ["a", "b"], "model-00002-of-00002.safetensors": ["c"]}
        for shard, names in shards.items():
            with open(os.path.join(src, shard), "wb") as f:
                f.write(safetensors_bytes([(n,) + self.TENSORS[n] for n in names], metadata={"format": "pt"}))
        wm = weight_map or {n: s for s, names in shards.items() for n in names}
        with open(os.path.join(src, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": 21}, "weight_map": wm}, f)
        return src

    def test_folder_and_index_convert_to_a_zt_set(self):
        src = self.make_checkpoint()
        for given in (src, os.path.join(src, "model.safetensors.index.json")):
            out = self.path("out-%d" % len(given))
            run("convert", given, "-o", out, "--digest", "crc32c", "--quiet")
            self.assertEqual(sorted(os.listdir(out)), ["model-00001-of-00002.zt", "model-00002-of-00002.zt",
                                                       "model.zt.index.json"])
            index = read_json(os.path.join(out, "model.zt.index.json"))
            self.assertEqual(index, {"metadata": {"total_size": 21},
                                     "weight_map": {"a": "model-00001-of-00002.zt", "b": "model-00001-of-00002.zt",
                                                    "c": "model-00002-of-00002.zt"}})
            self.assertEqual(info(os.path.join(out, "model-00001-of-00002.zt"))["attributes"], {"format": "pt"})
            merged = self.path("merged-%d.zt" % len(given))
            run("merge", os.path.join(out, "model.zt.index.json"), "-o", merged, "--quiet")
            for name, (st, _, data) in self.TENSORS.items():
                # zt cat prints host-order elements (big-endian on s390x)
                values = np.frombuffer(data, {"F32": "<f4", "I8": "|i1", "F64": "<f8"}[st])
                self.assertEqual(cat(merged, name), ztcli.host_bytes(values))
            # and each shard goes back to the same safetensors content
            back = self.path("back.safetensors")
            run("export", os.path.join(out, "model-00001-of-00002.zt"), "--to", "safetensors", "-o", back)
            self.assertEqual(split_safetensors(read_bytes(back)),
                             split_safetensors(read_bytes(os.path.join(src, "model-00001-of-00002.safetensors"))))

    def test_inconsistent_checkpoints_write_nothing(self):
        cases = [
            ({"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors",
              "c": "model-00002-of-00002.safetensors"}, "tensor 'b'"),  # b is in shard 1
            ({"a": "model-00001-of-00002.safetensors", "c": "model-00002-of-00002.safetensors"},
             "holds tensor 'b'"),  # b unlisted
            ({"a": "../model-00001-of-00002.safetensors"}, "relative paths"),
            ({"a": "/etc/passwd"}, "relative paths"),
            ({"a": "missing.safetensors"}, "missing.safetensors"),
        ]
        for wm, want in cases:
            src = self.make_checkpoint(weight_map=wm)
            out = self.path("out")
            p = run("convert", src, "-o", out, check=False)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(want, p.stderr)
            self.assertFalse(os.path.exists(out))
        with open(os.path.join(src, "model.safetensors.index.json"), "w") as f:
            f.write('{"weight_map": {"a": "x", "a": "y"}}')
        p = run("convert", src, "-o", self.path("out"), check=False)
        self.assertIn("appears twice", p.stderr)
        with open(os.path.join(src, "other.safetensors.index.json"), "w") as f:
            f.write("{}")
        p = run("convert", src, "-o", self.path("out"), check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("name the index", p.stderr)



if __name__ == "__main__":
    import unittest
    unittest.main()
