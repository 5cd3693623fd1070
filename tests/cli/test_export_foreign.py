"""zt export --to safetensors / --to gguf: round trips through zt that give
back the same header content and tensor bytes, and refusals (naming the
object or attribute) that leave no output behind."""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import ztcli  # noqa: E402
from ztcli import (GGUF_ARRAY, GGUF_BOOL, GGUF_F32, GGUF_F64, GGUF_I32, GGUF_STRING, GGUF_U32, GGUF_U64,  # noqa: E402
                   gguf_bytes, run, safetensors_bytes)

INTEROP = os.environ.get("ZT_INTEROP_DIR", "")


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def parse_safetensors(b):
    """(header dict, data section, header length)"""
    n = struct.unpack("<Q", b[:8])[0]
    return json.loads(b[8:8 + n]), b[8 + n:], n


def parse_gguf(b):
    """(version, {key: (type, value)}, {name: (ne, type, bytes)}, alignment) — an independent reader."""
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, b, pos)
        pos += struct.calcsize("<" + fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take("Q")
        s = b[pos:pos + n]
        pos += n
        return s

    fmts = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def value(t):
        if t == GGUF_STRING:
            return string()
        if t == GGUF_ARRAY:
            et, n = take("I"), take("Q")
            return (et, [value(et) for _ in range(n)])
        return take(fmts[t])

    assert b[:4] == b"GGUF"
    pos = 4
    version, n_t, n_kv = take("I"), take("Q"), take("Q")
    kv = {}
    for _ in range(n_kv):
        k = string().decode()
        t = take("I")
        kv[k] = (t, value(t))
    align = kv.get("general.alignment", (GGUF_U32, 32))[1]
    infos = []
    for _ in range(n_t):
        name = string().decode()
        ne = [take("Q") for _ in range(take("I"))]
        infos.append((name, ne, take("I"), take("Q")))
    start = pos + (-pos % align)
    tensors = {}
    for name, ne, t, off in infos:
        assert off % align == 0
        n = ztcli.ggml_nbytes(t, ne)
        tensors[name] = (ne, t, b[start + off:start + off + n])
    return version, kv, tensors, align


# Laid out as the safetensors library writes: larger dtypes first, then by name.
CANONICAL = [("w", "F64", [2], np.arange(2.0).tobytes()),
             ("c", "C64", [1], np.complex64(1 + 2j).tobytes()),
             ("a", "F32", [2, 3], np.arange(6, dtype=np.float32).tobytes()),
             ("b", "F32", [1], np.float32(1).tobytes()),
             ("h", "BF16", [2], b"\1\2\3\4"),
             ("s", "I16", [2, 0], b""),
             ("e", "F8_E4M3", [3], b"abc"),
             ("u", "U8", [], b"\x07"),
             ("z", "BOOL", [2], b"\0\1")]


class ExportTest(ztcli.TmpCase):
    def write(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)
        return self.path(name)

    def refused(self, src, to, out, *needles):
        p = run("export", src, "--to", to, "-o", out, check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        for n in needles:
            self.assertIn(n, p.stderr)
        self.assertIn("nothing written", p.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertEqual([f for f in os.listdir(os.path.dirname(out)) if "zt-export" in f], [])
        return p.stderr

    # ------------------------------------------------------------ safetensors
    def test_safetensors_round_trip_is_identical(self):
        src = self.write("in.safetensors", safetensors_bytes(CANONICAL, metadata={"format": "pt", "x": "y"}))
        for zstd in ([], ["--zstd", "3"]):
            run("convert", src, "-o", self.path("m.zt"), "--quiet", *zstd)
            run("export", self.path("m.zt"), "--to", "safetensors", "-o", self.path("out.safetensors"), "--quiet")
            h0, d0, _ = parse_safetensors(read_bytes(src))
            h1, d1, n1 = parse_safetensors(read_bytes(self.path("out.safetensors")))
            self.assertEqual(h1, h0)
            self.assertEqual(d1, d0)  # the whole data section, byte for byte
            self.assertEqual(n1 % 8, 0)
            os.remove(self.path("m.zt"))

    def test_safetensors_sub_byte_and_fnuz_dtypes_round_trip(self):
        # safetensors' Dtype enum (tensor.rs): F4 packs two elements a byte,
        # F6_* four in three; listed in its serialization order (larger
        # dtypes first, the enum's order). zt reads them (u8 under a logical
        # type) and writes them back as they were; through a v2 file too,
        # which knows f4_e2m1 (F6 has no v2 logical type).
        sub = [("n5", "F8_E5M2FNUZ", [1], b"\x05"), ("n4", "F8_E4M3FNUZ", [1], b"\x04"),
               ("e8", "F8_E8M0", [2], b"\x7f\x80"), ("g", "F6_E3M2", [2, 4], bytes(range(6))),
               ("f", "F4", [2, 4], b"\x21\x43\x65\x07")]
        src = self.write("sub.safetensors", safetensors_bytes(sub))
        run("export", src, "--to", "safetensors", "-o", self.path("out.safetensors"), "--quiet")
        out = read_bytes(self.path("out.safetensors"))
        self.assertEqual(parse_safetensors(out)[:2], parse_safetensors(read_bytes(src))[:2])
        self.assertEqual(list(parse_safetensors(out)[0]), ["n5", "n4", "e8", "g", "f"])  # its order
        no_f6 = [t for t in sub if t[0] != "g"]
        src = self.write("v2.safetensors", safetensors_bytes(no_f6))
        run("convert", src, "-o", self.path("m.zt"), "--format", "2", "--quiet")
        info = run("info", self.path("m.zt")).stdout
        self.assertIn("u8 as f4_e2m1", info)
        run("export", self.path("m.zt"), "--to", "safetensors", "-o", self.path("out2.safetensors"), "--quiet")
        self.assertEqual(parse_safetensors(read_bytes(self.path("out2.safetensors")))[:2],
                         parse_safetensors(read_bytes(src))[:2])

    def test_safetensors_from_another_order_keeps_every_tensor(self):
        shuffled = list(reversed(CANONICAL))
        src = self.write("in.safetensors", safetensors_bytes(shuffled))
        run("convert", src, "-o", self.path("m.zt"), "--quiet")
        run("export", self.path("m.zt"), "--to", "safetensors", "-o", self.path("out.safetensors"))
        h0, d0, _ = parse_safetensors(read_bytes(src))
        h1, d1, _ = parse_safetensors(read_bytes(self.path("out.safetensors")))
        self.assertNotIn("__metadata__", h1)
        self.assertEqual(set(h1), set(h0))
        end = 0
        for name in sorted(h1, key=lambda k: h1[k]["data_offsets"]):
            e0, e1 = h0[name], h1[name]
            self.assertEqual((e1["dtype"], e1["shape"]), (e0["dtype"], e0["shape"]))
            self.assertEqual(e1["data_offsets"][0], end)  # no gaps
            end = e1["data_offsets"][1]
            self.assertEqual(d1[slice(*e1["data_offsets"])], d0[slice(*e0["data_offsets"])], name)
        self.assertEqual(end, len(d1))

    def test_safetensors_refusals(self):
        out = self.path("out.safetensors")
        gguf = self.write("in.gguf", gguf_bytes([("n", GGUF_U32, 3)], [("t", [2], 0, b"\0" * 8)]))
        run("convert", gguf, "-o", self.path("g.zt"), "--quiet")
        self.refused(self.path("g.zt"), "safetensors", out, "attribute 'n'", "only strings")
        gguf = self.write("q.gguf", gguf_bytes([], [("q", [32], 2, bytes(18))]))
        run("convert", gguf, "-o", self.path("q.zt"), "--quiet")
        self.refused(self.path("q.zt"), "safetensors", out, "object 'q'", "ggml_quantized")
        for name, obj in (("sparse_csr.zt", "format 'sparse_csr'"), ("quantized_group.zt", "format 'quantized_group'")):
            self.refused(os.path.join(INTEROP, "v1", name), "safetensors", out, obj)
        # an existing output is left as it was
        with open(out, "wb") as f:
            f.write(b"keep me")
        p = run("export", self.path("q.zt"), "--to", "safetensors", "-o", out, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(read_bytes(out), b"keep me")

    # ------------------------------------------------------------------ GGUF
    def test_gguf_round_trip_keeps_kv_and_tensor_data(self):
        kvs = [("general.architecture", GGUF_STRING, "llama"), ("llama.block_count", GGUF_U32, 2),
               ("llama.rope.freq_base", GGUF_F32, 10000.0), ("eps", GGUF_F32, 1e-5), ("big", GGUF_U64, 1 << 40),
               ("precise", GGUF_F64, 0.1), ("flag", GGUF_BOOL, True), ("neg", GGUF_I32, -7),
               ("tokenizer.ggml.token_type", GGUF_ARRAY, (GGUF_I32, [1, 2, 3])),
               ("tokenizer.ggml.scores", GGUF_ARRAY, (GGUF_F32, [0.0, -1.5])),
               ("tokenizer.ggml.tokens", GGUF_ARRAY, (GGUF_STRING, ["a", "b"])),
               ("raw", GGUF_STRING, b"\xff\xfe"), ("general.alignment", GGUF_U32, 64)]
        tensors = [("tok_embd.weight", [4, 2], 0, np.arange(8, dtype=np.float32).tobytes()),
                   ("blk.0.attn_q.weight", [32, 2], 2, bytes(range(36))),
                   ("blk.0.ffn.weight", [256], 12, bytes(range(144))),
                   ("half", [3], 1, np.arange(3, dtype=np.float16).tobytes()),
                   ("ints", [3], 26, np.array([1, -2, 3], np.int32).tobytes())]
        src = self.write("in.gguf", gguf_bytes(kvs, tensors, alignment=64))
        run("convert", src, "-o", self.path("m.zt"), "--quiet", "--zstd", "1")
        run("export", self.path("m.zt"), "--to", "gguf", "-o", self.path("out.gguf"), "--quiet")
        v0, kv0, t0, _ = parse_gguf(read_bytes(src))
        v1, kv1, t1, align = parse_gguf(read_bytes(self.path("out.gguf")))
        self.assertEqual((v1, align), (3, 64))
        self.assertEqual(t1, t0)  # names, dims, ggml types and bytes
        self.assertEqual(kv1, kv0)  # values and, for these, their GGUF types
        # and again through zt: the same objects
        run("convert", self.path("out.gguf"), "-o", self.path("again.zt"), "--quiet")
        self.assertEqual(ztcli.info(self.path("again.zt"))["attributes"], ztcli.info(self.path("m.zt"))["attributes"])

    def test_gguf_default_alignment_is_32(self):
        src = self.write("in.safetensors", safetensors_bytes([("x", "F32", [3], bytes(12)),
                                                              ("y", "I8", [5], bytes(range(5)))]))
        run("convert", src, "-o", self.path("m.zt"), "--quiet")
        run("export", self.path("m.zt"), "--to", "gguf", "-o", self.path("out.gguf"))
        _, kv, t, align = parse_gguf(read_bytes(self.path("out.gguf")))
        self.assertEqual((kv, align), ({}, 32))
        self.assertEqual(t, {"x": ([3], 0, bytes(12)), "y": ([5], 24, bytes(range(5)))})

    def test_gguf_refusals(self):
        out = self.path("out.gguf")
        for dt, data, why in (("U32", bytes(4), "dtype u32"), ("BOOL", b"\1", "dtype bool"),
                              ("F8_E4M3", b"\1", "logical type f8_e4m3fn")):
            src = self.write("in.safetensors", safetensors_bytes([("t", dt, [1], data)]))
            run("convert", src, "-o", self.path("m.zt"), "--quiet")
            self.refused(self.path("m.zt"), "gguf", out, "object 't'", why)
            os.remove(self.path("m.zt"))
        for shape, why in (([], "0-dimensional"), ([1, 1, 1, 1, 1], "5 dimensions")):
            src = self.write("in.safetensors", safetensors_bytes([("t", "F32", shape, bytes(4))]))
            run("convert", src, "-o", self.path("m.zt"), "--quiet")
            self.refused(self.path("m.zt"), "gguf", out, "object 't'", why)
            os.remove(self.path("m.zt"))
        long_name = "n" * 64
        src = self.write("in.safetensors", safetensors_bytes([(long_name, "F32", [1], bytes(4))]))
        run("convert", src, "-o", self.path("m.zt"), "--quiet")
        self.refused(self.path("m.zt"), "gguf", out, "allow 63")
        self.refused(os.path.join(INTEROP, "v1", "sparse_coo.zt"), "gguf", out, "format 'sparse_coo'")
        # attributes GGUF cannot type: a map, a null, a mixed array
        for attrs, why in (({"m": {"k": 1}}, "attribute 'm' is a map"), ({"n": None}, "attribute 'n' is a null"),
                           ({"a": [1, "x"]}, "attribute 'a': an array mixes")):
            path = self.path("attrs.zt")
            with ztensor().Writer(path, sync=False) as w:
                w.add("t", np.zeros(2, np.float32))
                w.attributes = attrs
            self.refused(path, "gguf", out, why)
            os.remove(path)


class ForeignInfoTest(ztcli.TmpCase):
    """zt info / zt ls read .safetensors, .npy, .npz and .gguf directly."""

    def check_info(self, path, expect_format, expect):
        """expect: {name: (shape, dtype, logical type, bytes or None if not contiguous)}"""
        doc = json.loads(run("info", "--json", path).stdout)
        self.assertIsNone(doc["version"])
        self.assertEqual(doc["source_format"], expect_format)
        raw = read_bytes(path)
        got = {}
        for o in doc["objects"]:
            (c,) = o["components"]
            self.assertEqual((c["role"], c["encoding"], c["length"], c["decoded_length"]),
                             ("data", "raw", c["length"], c["length"]))
            data = None if c["offset"] is None else raw[c["offset"]:c["offset"] + c["length"]]
            got[o["name"]] = (o["shape"], c["dtype"], c["type"], data)
        self.assertEqual(got, expect)
        lines = run("ls", path).stdout.splitlines()
        self.assertEqual(sorted(line.split("\t")[0] for line in lines), sorted(expect))
        text = run("info", path).stdout
        self.assertIn("version:    none (%s file" % expect_format, text)
        return doc

    def test_safetensors(self):
        path = self.path("m.safetensors")
        with open(path, "wb") as f:
            f.write(safetensors_bytes(CANONICAL[:3], metadata={"k": "v"}))
        doc = self.check_info(path, "safetensors", {n: (sh, {"F64": "f64", "C64": "f32", "F32": "f32"}[dt],
                                                       "complex64" if dt == "C64" else None, d)
                                                   for n, dt, sh, d in CANONICAL[:3]})
        self.assertEqual(doc["attributes"], {"k": "v"})

    def test_npy_npz_gguf(self):
        a = np.arange(6, dtype=np.int16).reshape(2, 3)
        np.save(self.path("a.npy"), a)
        self.check_info(self.path("a.npy"), "npy", {"a": ([2, 3], "i16", None, a.tobytes())})
        np.savez_compressed(self.path("z.npz"), x=a, y=np.ones(2, np.float32))
        self.check_info(self.path("z.npz"), "npz", {"x": ([2, 3], "i16", None, None), "y": ([2], "f32", None, None)})
        with open(self.path("m.gguf"), "wb") as f:
            f.write(gguf_bytes([("general.name", GGUF_STRING, "m")],
                               [("w", [4, 2], 0, bytes(range(32))), ("q", [32], 2, bytes(range(18)))]))
        doc = self.check_info(self.path("m.gguf"), "gguf v3", {"w": ([2, 4], "f32", None, bytes(range(32))),
                                                               "q": ([32], "u8", "ggml.q4_0", bytes(range(18)))})
        self.assertEqual(doc["attributes"], {"general.name": "m"})

    def test_hostile_foreign_files_fail_cleanly(self):
        for name, data in (("t.safetensors", b"\x10"), ("h.safetensors", struct.pack("<Q", 1 << 60) + b"{}"),
                           ("o.safetensors", safetensors_bytes([], raw_header=b'{"a": {"dtype": "F32", "shape": [4], '
                                                                          b'"data_offsets": [0, 16]}}')),
                           ("g.gguf", b"GGUF" + struct.pack("<IQQ", 3, 1 << 62, 0)), ("n.npy", b"\x93NUMPY\x01\x00"),
                           ("z.npz", b"PK\x03\x04" + bytes(10))):
            path = self.path(name)
            with open(path, "wb") as f:
                f.write(data)
            for cmd in ("info", "ls"):
                p = run(cmd, path, check=False)
                self.assertEqual(p.returncode, 1, (name, cmd, p.stderr))
                self.assertIn(path, p.stderr)


def ztensor():
    """The Python binding over the library just built (for fixtures the CLI cannot make)."""
    import glob
    root, build = os.environ["ZT_SOURCE_ROOT"], os.environ["ZT_BUILD_ROOT"]
    # Files only: a build dir that went through a version bump keeps the old
    # version's object directory (libztensor.so.1.2.0.p).
    libs = [p for p in sorted(glob.glob(os.path.join(build, "libztensor.so.*.*.*"))) if os.path.isfile(p)]
    os.environ.setdefault("ZTENSOR_LIBRARY", libs[-1])
    sys.path.insert(0, os.path.join(root, "bindings", "python"))
    import ztensor as zt
    return zt


if __name__ == "__main__":
    import unittest
    unittest.main()
