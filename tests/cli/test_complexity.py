"""zt convert stays O(n log n) in the number of metadata keys of its inputs:
from n to 8n keys, the time the keys add (over an input of the same size
whose metadata is one key, measured in the same run) may grow about 8x
(n log n: ~10x), not 64x. Ratios, not seconds."""
import json
import os
import resource
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ztcli  # noqa: E402
from ztcli import GGUF_STRING, ZT, gguf_bytes, safetensors_bytes  # noqa: E402

# Growth of the keys' own time from n to 8n keys: n log n gives ~10, a
# quadratic parser ~64. (Comparing whole run times instead, as this test
# once did, let process start-up flatten the one-key side: a linear parser
# then showed an "excess" anywhere from 2 to 8 depending on the machine.)
MAX_KEY_GROWTH = 24.0
# Below this the keys' time at n is too small to divide by reliably.
MIN_KEY_SECONDS = 0.004


def best_seconds(args, reps=3):
    """The child's own CPU time (user + system), best of reps. Wall time
    counts the time a busy machine leaves the child waiting for a core: on
    two cores with a parallel build beside it, that made a linear parser
    look quadratic (x124 for 8x the keys, where the CPU time grew x9)."""
    best = 1e30
    for _ in range(reps):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([ZT, *args], check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = min(best, cpu)
    return best


class ConvertMetadataComplexity(ztcli.TmpCase):
    def growth(self, make, n):
        times = []
        for count in (n, 8 * n):
            src = make(count)
            times.append(best_seconds(["convert", src, "-o", self.path("out.zt"), "--no-sync", "--quiet"]))
        return times[1] / times[0], times

    def check(self, what, hostile, benign, n):
        gh, th = self.growth(hostile, n)
        gb, tb = self.growth(benign, n)
        keys_small = max(th[0] - tb[0], MIN_KEY_SECONDS)
        keys_big = th[1] - tb[1]
        print("%s: many keys %.3fs -> %.3fs (x%.1f); one key %.3fs -> %.3fs (x%.1f); keys' own time %.3fs -> %.3fs "
              "(x%.1f for 8x the keys)" % (what, th[0], th[1], gh, tb[0], tb[1], gb, keys_small, keys_big,
                                          keys_big / keys_small))
        self.assertLess(keys_big / keys_small, MAX_KEY_GROWTH,
                        "%s: convert grows faster than n log n in metadata keys" % what)

    def test_safetensors_metadata_keys(self):
        def many(n):
            p = self.path("many%d.safetensors" % n)
            with open(p, "wb") as f:
                f.write(safetensors_bytes([], {"key%07d" % i: "v" for i in range(n)}))
            return p

        def one(n):
            p = self.path("one%d.safetensors" % n)
            with open(p, "wb") as f:
                f.write(safetensors_bytes([], {"key": "v" * (n * len('"key0000000": "v", '))}))
            return p

        self.check("safetensors __metadata__", many, one, 16384)

    def test_gguf_metadata_keys(self):
        def many(n):
            p = self.path("many%d.gguf" % n)
            with open(p, "wb") as f:
                f.write(gguf_bytes([("key%07d" % i, GGUF_STRING, "v") for i in range(n)], []))
            return p

        def one(n):
            p = self.path("one%d.gguf" % n)
            with open(p, "wb") as f:
                f.write(gguf_bytes([("key", GGUF_STRING, "v" * (n * 20))], []))
            return p

        self.check("GGUF key/values", many, one, 16384)


# Issue 27: nlohmann's callback parser rescanned a parent object each time a
# nested one closed, so every JSON input was quadratic in its nested
# objects. Growth of the entries' own time from n to 8n: n log n gives ~10.
MAX_JSON_GROWTH = 12.0
# An index's metadata objects cost a few ms at n, at the noise of process
# start-up on a busy machine: below this they are not divided by. (The
# callback parser took over a minute at 8n, far above any floor.)
INDEX_FLOOR_SECONDS = 0.03


class JsonNestedObjectsComplexity(ztcli.TmpCase):
    """Every JSON input (safetensors header, safetensors index, zt set index)
    stays O(n log n) in its number of nested objects."""

    def seconds(self, args, before):
        best = 1e30
        for _ in range(3):
            before()
            best = min(best, best_seconds(args, reps=1))
        return best

    def growth(self, what, command, hostile, benign, n, before=lambda: None, floor=MIN_KEY_SECONDS):
        """command(path) -> zt arguments; hostile/benign(count) -> path of an
        input with `count` nested objects / one key of the same size;
        before() runs ahead of each run (removing its output)."""
        th, tb = [], []
        for count in (n, 8 * n):
            th.append(self.seconds(command(hostile(count)), before))
            tb.append(self.seconds(command(benign(count)), before))
        small = max(th[0] - tb[0], floor)
        big = th[1] - tb[1]
        print("%s: %d -> %d nested objects: %.3fs -> %.3fs; same size, one key: %.3fs -> %.3fs; the objects' own "
              "time x%.1f" % (what, n, 8 * n, th[0], th[1], tb[0], tb[1], big / small))
        self.assertLess(big / small, MAX_JSON_GROWTH, "%s: parsing grows faster than n log n" % what)

    def write(self, name, data):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def test_safetensors_header_entries(self):
        # n (empty) tensors: each header entry is an object.
        def many(n):
            return self.write("many%d.safetensors" % n,
                              safetensors_bytes([("t%07d" % i, "F32", [0], b"") for i in range(n)]))

        def one(n):
            entry = len(json.dumps({"t0000000": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}}))
            return self.write("one%d.safetensors" % n, safetensors_bytes([], {"k": "v" * (n * entry)}))

        # zt_open (the library) and zt convert (the tool) share the parser;
        # enough entries that both sizes are past the caches.
        self.growth("safetensors header (zt verify)", lambda p: ["verify", "--quiet", p], many, one, 32768)
        self.growth("safetensors header (zt convert)",
                    lambda p: ["convert", p, "-o", self.path("out.zt"), "--no-sync", "--quiet"], many, one, 16384)

    def test_safetensors_metadata_objects(self):
        # __metadata__ values that are objects (the format asks for strings;
        # the reader keeps whatever JSON they are, as CBOR).
        def many(n):
            return self.write("many%d.safetensors" % n,
                              safetensors_bytes([], {"k%07d" % i: {"a": "v"} for i in range(n)}))

        def one(n):
            return self.write("one%d.safetensors" % n, safetensors_bytes([], {"k": "v" * (n * 24)}))

        self.growth("safetensors __metadata__ objects (zt ls)", lambda p: ["ls", p], many, one, 32768)

    def index_pair(self, kind, n, nested):
        """A one-tensor index whose "metadata" holds n objects (or one long
        string), and its shard."""
        folder = self.path("%s%s%d" % (kind, "many" if nested else "one", n))
        os.makedirs(folder, exist_ok=True)
        meta = {"k%07d" % i: {"a": "v"} for i in range(n)} if nested else {"k": "v" * (n * 24)}
        with open(os.path.join(folder, "s.safetensors"), "wb") as f:
            f.write(safetensors_bytes([("t", "F32", [1], bytes(4))]))
        if kind == "safetensors":
            index = os.path.join(folder, "m.safetensors.index.json")
            shard = "s.safetensors"
        else:
            ztcli.run("convert", os.path.join(folder, "s.safetensors"), "-o", os.path.join(folder, "s.zt"), "--quiet")
            index = os.path.join(folder, "m.zt.index.json")
            shard = "s.zt"
        with open(index, "w") as f:
            json.dump({"metadata": meta, "weight_map": {"t": shard}}, f)
        return index

    def test_safetensors_index_metadata_objects(self):
        out = self.path("out")

        self.growth("safetensors index (zt convert)", lambda index: ["convert", index, "-o", out, "--no-sync", "--quiet"],
                    lambda n: self.index_pair("safetensors", n, True),
                    lambda n: self.index_pair("safetensors", n, False), 65536,
                    before=lambda: shutil.rmtree(out, ignore_errors=True), floor=INDEX_FLOOR_SECONDS)

    def test_zt_set_index_metadata_objects(self):
        self.growth("zt set index (zt merge)",
                    lambda index: ["merge", index, "-o", self.path("merged.zt"), "--no-sync", "--quiet"],
                    lambda n: self.index_pair("zt", n, True), lambda n: self.index_pair("zt", n, False), 65536,
                    floor=INDEX_FLOOR_SECONDS)


def peak_rss_kib(args):
    """Peak resident set of one zt run, read by a fresh Python parent so no
    earlier child's peak is counted."""
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, capture_output=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, ZT, *args], check=True, capture_output=True, text=True)
    return int(out.stdout)


class ConvertMetadataMemory(ztcli.TmpCase):
    def test_gguf_array_costs_about_its_size(self):
        # An 8 MiB u8 array against an 8 MiB string: both become 8 MiB of
        # attributes. Held as JSON values, the array cost ~70 times its size.
        n = 8 << 20

        def gguf_one_kv(value_type_and_payload):
            body = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 3) + b"key" + value_type_and_payload
            return body + b"\0" * (-len(body) % 32)

        arr, text = self.path("arr.gguf"), self.path("text.gguf")
        with open(arr, "wb") as f:
            f.write(gguf_one_kv(struct.pack("<IIQ", 9, 0, n) + bytes(range(256)) * (n // 256)))
        with open(text, "wb") as f:
            f.write(gguf_one_kv(struct.pack("<IQ", 8, n) + b"v" * n))
        out = {arr: self.path("arr.zt"), text: self.path("text.zt")}
        m_arr, m_text = (peak_rss_kib(["convert", "-o", out[src], "--no-sync", "--quiet", src]) for src in (arr, text))
        print("convert: GGUF 8 MiB u8 array: peak %d KiB; 8 MiB string: peak %d KiB (x%.2f)"
              % (m_arr, m_text, m_arr / m_text))
        self.assertLess(m_arr / m_text, 2.5, "a GGUF metadata array costs far more memory than its size")
        # Opening the result: the attributes are checked, not held as a tree.
        o_arr, o_text = (peak_rss_kib(["ls", out[src]]) for src in (arr, text))
        print("open: 8 Mi-element attribute array: peak %d KiB; 8 MiB string: peak %d KiB (x%.2f)"
              % (o_arr, o_text, o_arr / o_text))
        self.assertLess(o_arr / o_text, 2.5, "opening a file costs far more memory than its attributes' size")

    def test_fortran_npz_member_is_held_once(self):
        # A Fortran-order member must be read whole (zip members are
        # sequential) but transposed piece by piece: its peak over a C-order
        # member of the same size is about one array, not two.
        import numpy as np
        a = np.arange(4096 * 2048, dtype="<f8").reshape(4096, 2048)  # 64 MiB
        fortran, c_order = self.path("f.npz"), self.path("c.npz")
        np.savez(fortran, a=np.asfortranarray(a))
        np.savez(c_order, a=a)
        peak = {}
        for src in (fortran, c_order):
            peak[src] = peak_rss_kib(["convert", "-o", self.path("o.zt"), "--no-sync", "--quiet", src])
        extra = (peak[fortran] - peak[c_order]) * 1024 / a.nbytes
        print("npz 64 MiB member: Fortran peak %d KiB, C peak %d KiB: %.2f arrays extra"
              % (peak[fortran], peak[c_order], extra))
        self.assertLess(extra, 1.5, "a Fortran-order npz member is held more than once")
        out = ztcli.export(self.path("o.zt"), "a", self.tmp)
        self.assertTrue(np.array_equal(out, a))


if __name__ == "__main__":
    import unittest
    unittest.main()
