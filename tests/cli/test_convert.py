"""zt convert from .npy/.npz (written by numpy), .safetensors and .gguf (built
from their public descriptions): every dtype, read back element by element."""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
from ztcli import *  # noqa: E402,F401,F403
import ztcli  # noqa: E402

RNG = np.random.default_rng(7)

NPY_DTYPES = ["<f8", "<f4", "<f2", "<i8", "<i4", "<i2", "|i1", "<u8", "<u4", "<u2", "|u1", "|b1", "<c8", "<c16",
              ">f8", ">f4", ">f2", ">i8", ">i4", ">i2", ">u8", ">u4", ">u2", ">c8", ">c16"]
ZT_OF = {"f8": ("f64", None), "f4": ("f32", None), "f2": ("f16", None), "i8": ("i64", None), "i4": ("i32", None),
         "i2": ("i16", None), "i1": ("i8", None), "u8": ("u64", None), "u4": ("u32", None), "u2": ("u16", None),
         "u1": ("u8", None), "b1": ("bool", None), "c8": ("f32", "complex64"), "c16": ("f64", "complex128")}


def sample(dtype, shape):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return RNG.integers(0, 2, size=shape).astype(dt)
    if dt.kind == "c":
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dt)
    if dt.kind == "f":
        return RNG.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return RNG.integers(info.min, info.max, size=shape, dtype=dt.newbyteorder("=")).astype(dt)


class NumpyTest(ztcli.TmpCase):
    def check_object(self, zt, name, expected):
        o = objects(zt)[name]
        dtype, logical = ZT_OF[expected.dtype.str[1:]]
        c = o["components"][0]
        self.assertEqual((c["dtype"], c["type"]), (dtype, logical), name)
        self.assertEqual(o["shape"], list(expected.shape), name)
        got = export(zt, name, self.tmp)
        self.assertEqual(got.dtype, ztcli.host_dtype(expected.dtype), name)
        self.assertTrue(got.flags["C_CONTIGUOUS"])
        np.testing.assert_array_equal(got, expected, err_msg=name)
        self.assertEqual(got.tobytes(), ztcli.host_bytes(expected), name)

    def test_every_npy_dtype_and_byte_order(self):
        for i, dt in enumerate(NPY_DTYPES):
            a = sample(dt, (3, 5))
            src = self.path("t%d.npy" % i)
            np.save(src, a)
            zt = self.path("t%d.zt" % i)
            run("convert", src, "-o", zt, "--quiet")
            self.check_object(zt, "t%d" % i, a)

    def test_fortran_order_and_shapes(self):
        cases = {"f3": np.asfortranarray(sample("<f4", (2, 3, 4))), "fbig": np.asfortranarray(sample(">i2", (7, 5))),
                 "scalar": np.array(3.5), "empty": np.zeros((0, 4), "<f4"), "vec": sample("<u2", (9,)),
                 "fvec": np.asfortranarray(sample("<f8", (1, 6)))}
        for name, a in cases.items():
            np.save(self.path(name + ".npy"), a)
        zt = self.path("out.zt")
        run("convert", *[self.path(n + ".npy") for n in cases], "-o", zt, "--zstd", "5", "--digest", "sha256")
        for name, a in cases.items():
            self.check_object(zt, name, a)
        run("verify", zt)

    @unittest.skipIf(ztcli.HAVE_NPZ, "zt reads .npz here")
    def test_npz_without_libzip_names_the_build_option(self):
        np.savez(self.path("m.npz"), w=np.ones(3))
        p = run("convert", self.path("m.npz"), "-o", self.path("o.zt"), check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn(ztcli.NPZ_DISABLED, p.stderr)
        self.assert_no_leftovers(["m.npz"])

    @ztcli.needs_npz
    def test_npz_stored_and_deflated(self):
        arrays = {"w%d" % i: sample(dt, (4, 3)) for i, dt in enumerate(NPY_DTYPES)}
        arrays["nested/name"] = np.asfortranarray(sample(">f8", (3, 4)))
        for fn, compressed in (("s.npz", False), ("d.npz", True)):
            (np.savez_compressed if compressed else np.savez)(self.path(fn), **arrays)
            zt = self.path(fn + ".zt")
            run("convert", self.path(fn), "-o", zt)
            self.assertEqual(sorted(objects(zt)), sorted(arrays))
            for name, a in arrays.items():
                self.check_object(zt, name, a)

    @ztcli.needs_npz
    def test_name_clash_is_an_error(self):
        np.save(self.path("w.npy"), np.zeros(3))
        np.savez(self.path("m.npz"), w=np.ones(3))
        p = run("convert", self.path("w.npy"), self.path("m.npz"), "-o", self.path("o.zt"), check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("'w'", p.stderr)
        self.assert_no_leftovers(["w.npy", "m.npz"])


ST_DTYPES = {"F64": ("<f8", "f64", None), "F32": ("<f4", "f32", None), "F16": ("<f2", "f16", None),
             "BF16": ("<u2", "bf16", None), "I64": ("<i8", "i64", None), "I32": ("<i4", "i32", None),
             "I16": ("<i2", "i16", None), "I8": ("|i1", "i8", None), "U64": ("<u8", "u64", None),
             "U32": ("<u4", "u32", None), "U16": ("<u2", "u16", None), "U8": ("|u1", "u8", None),
             "BOOL": ("|b1", "bool", None), "F8_E4M3": ("|u1", "u8", "f8_e4m3fn"),
             "F8_E5M2": ("|u1", "u8", "f8_e5m2"), "F8_E8M0": ("|u1", "u8", "f8_e8m0fnu"),
             "C64": ("<c8", "f32", "complex64")}


class SafetensorsTest(ztcli.TmpCase):
    def test_every_dtype_and_metadata(self):
        tensors, expect = [], {}
        for i, (st, (npdt, _, _)) in enumerate(ST_DTYPES.items()):
            shape = (2, 3) if i % 2 else (4,)
            a = sample(npdt if st not in ("BF16",) else "<u2", shape)
            if st == "BOOL":
                a = a.astype("|b1")
            tensors.append(("t." + st.lower(), st, shape, a.tobytes()))
            expect["t." + st.lower()] = (st, a)
        tensors.append(("scalar", "F32", (), np.float32(2.5).tobytes()))
        tensors.append(("empty", "I32", (0, 3), b""))
        src = self.path("model.safetensors")
        with open(src, "wb") as f:
            f.write(safetensors_bytes(tensors, metadata={"format": "pt", "note": "ü"}))
        zt = self.path("model.zt")
        p = run("convert", src, "-o", zt, "--json")
        summary = json.loads(p.stdout)
        self.assertEqual(summary["objects"], len(tensors))
        doc = info(zt)
        self.assertEqual(doc["attributes"], {"format": "pt", "note": "ü"})
        objs = {o["name"]: o for o in doc["objects"]}
        for name, (st, a) in expect.items():
            _, zdt, logical = ST_DTYPES[st]
            c = objs[name]["components"][0]
            self.assertEqual((c["dtype"], c["type"]), (zdt, logical), name)
            self.assertEqual(objs[name]["shape"], list(a.shape))
            got = export(zt, name, self.tmp)
            self.assertEqual(got.shape, a.shape)
            self.assertEqual(got.tobytes(), ztcli.host_bytes(a), name)
        self.assertEqual(export(zt, "scalar", self.tmp).item(), 2.5)
        self.assertEqual(export(zt, "empty", self.tmp).shape, (0, 3))

    def test_metadata_keys_that_look_like_json_conventions_stay_as_they_are(self):
        # The JSON conventions ($bytes, $map, ...) describe values JSON lacks;
        # foreign metadata goes in as CBOR, so keys and values that happen to
        # look like them are kept verbatim, not interpreted.
        meta = {"$bytes": "00", "$map": "[[1,2],[1,3]]", "$float": "nan", "$bigint": "1",
                "$tag": "2", "$undefined": "true", "plain": '{"$bytes": "ff"}'}
        src = self.path("m.safetensors")
        with open(src, "wb") as f:
            f.write(safetensors_bytes([("x", "F32", (1,), b"\0\0\0\0")], metadata=meta))
        zt = self.path("m.zt")
        run("convert", src, "-o", zt)
        self.assertEqual(manifest(zt)["attributes"], meta)
        run("verify", "--strict", zt)
        # One key alone, too: the whole map is not mistaken for a bytes value.
        for key in ("$bytes", "$map", "$float"):
            with open(src, "wb") as f:
                f.write(safetensors_bytes([("x", "F32", (1,), b"\0\0\0\0")], metadata={key: "00"}))
            run("convert", src, "-o", zt)
            self.assertEqual(manifest(zt)["attributes"], {key: "00"}, key)

    def test_verify_checks_the_output_before_it_replaces_anything(self):
        src = self.path("v.safetensors")
        with open(src, "wb") as f:
            f.write(safetensors_bytes([("x", "F32", (2,), np.float32([1, 2]).tobytes())]))
        zt = self.path("v.zt")
        run("convert", src, "-o", zt, "--verify", "--digest", "sha256", "--zstd", "3")
        self.assertEqual(export(zt, "x", self.tmp).tolist(), [1.0, 2.0])
        self.assertIn("--verify", run("convert", "--help").stdout)

    def test_sharded_inputs_merge(self):
        a, b = sample("<f4", (3, 3)), sample("<i8", (5,))
        with open(self.path("s1.safetensors"), "wb") as f:
            f.write(safetensors_bytes([("layer.0", "F32", a.shape, a.tobytes())], {"format": "pt"}))
        with open(self.path("s2.safetensors"), "wb") as f:
            f.write(safetensors_bytes([("layer.1", "I64", b.shape, b.tobytes())], {"format": "pt"}))
        zt = self.path("all.zt")
        run("convert", self.path("s1.safetensors"), self.path("s2.safetensors"), "-o", zt)
        np.testing.assert_array_equal(export(zt, "layer.0", self.tmp), a)
        np.testing.assert_array_equal(export(zt, "layer.1", self.tmp), b)
        # A clash across shards: an error, and no output.
        with open(self.path("s3.safetensors"), "wb") as f:
            f.write(safetensors_bytes([("layer.1", "I64", b.shape, b.tobytes())]))
        os.remove(zt)
        for fn in os.listdir(self.tmp):
            if fn.startswith("export-"):
                os.remove(self.path(fn))
        p = run("convert", self.path("s2.safetensors"), self.path("s3.safetensors"), "-o", zt, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("layer.1", p.stderr)
        self.assert_no_leftovers(["s1.safetensors", "s2.safetensors", "s3.safetensors"])


GGUF_KVS = [
    ("general.architecture", GGUF_STRING, "llama"), ("general.alignment", GGUF_U32, 32),
    ("k.u8", GGUF_U8, 200), ("k.i8", GGUF_I8, -100), ("k.u16", GGUF_U16, 60000), ("k.i16", GGUF_I16, -30000),
    ("k.u32", GGUF_U32, 4000000000), ("k.i32", GGUF_I32, -2000000000), ("k.f32", GGUF_F32, 1.5),
    ("k.bool", GGUF_BOOL, True), ("k.u64", GGUF_U64, 2 ** 63 + 5), ("k.i64", GGUF_I64, -(2 ** 62)),
    ("k.f64", GGUF_F64, -0.125), ("k.nan", GGUF_F32, float("nan")),
    ("tokenizer.ggml.tokens", GGUF_ARRAY, (GGUF_STRING, ["<s>", "</s>", "héllo"])),
    ("k.ints", GGUF_ARRAY, (GGUF_I32, [1, -2, 3])), ("k.empty", GGUF_ARRAY, (GGUF_F32, [])),
    ("k.nested", GGUF_ARRAY, (GGUF_ARRAY, [(GGUF_U8, [1, 2]), (GGUF_U8, [3])])),
]
GGUF_DIRECT = {0: "<f4", 1: "<f2", 30: "<u2", 28: "<f8", 24: "|i1", 25: "<i2", 26: "<i4", 27: "<i8"}
GGUF_ZT = {0: "f32", 1: "f16", 30: "bf16", 28: "f64", 24: "i8", 25: "i16", 26: "i32", 27: "i64"}


class GgufTest(ztcli.TmpCase):
    def build(self, version):
        tensors, expect = [], {}
        for tid, npdt in GGUF_DIRECT.items():
            a = sample(npdt, (3, 4))  # ne = [4, 3]: innermost first
            tensors.append(("d.%s" % GGML[tid][0], [4, 3], tid, a.tobytes()))
            expect["d.%s" % GGML[tid][0]] = (tid, a)
        for tid, (name, bs, ts) in GGML.items():
            if tid in GGUF_DIRECT:
                continue
            ne = [bs * 2, 3]
            raw = RNG.integers(0, 256, ggml_nbytes(tid, ne), dtype=np.uint8).tobytes()
            tensors.append(("q." + name, ne, tid, raw))
            expect["q." + name] = (tid, raw)
        src = self.path("m%d.gguf" % version)
        with open(src, "wb") as f:
            f.write(gguf_bytes(GGUF_KVS, tensors, version=version))
        return src, expect

    def test_metadata_is_written_as_cbor_values(self):
        # Read back from the manifest itself: NaN stays a float, a string that
        # is not UTF-8 becomes a byte string, integers keep their sign and
        # width, nested arrays stay arrays, a "$bytes" key is just a key.
        kvs = [("general.architecture", GGUF_STRING, "llama"), ("$bytes", GGUF_STRING, "00"),
               ("k.nan", GGUF_F32, float("nan")), ("k.big", GGUF_U64, 2 ** 64 - 1),
               ("k.neg", GGUF_I64, -(2 ** 63)), ("k.half", GGUF_F32, 0.5),
               ("k.nested", GGUF_ARRAY, (GGUF_ARRAY, [(GGUF_U8, [1, 2]), (GGUF_U8, [])]))]
        raw = gguf_bytes(kvs, [("t", [4], 0, b"\0" * 16)])
        # A string value that is not UTF-8: patch "00" of the $bytes value.
        raw = raw.replace(b"\x02\x00\x00\x00\x00\x00\x00\x0000", b"\x02\x00\x00\x00\x00\x00\x00\x00\xff\xfe", 1)
        src = self.path("m.gguf")
        with open(src, "wb") as f:
            f.write(raw)
        zt = self.path("m.zt")
        run("convert", src, "-o", zt)
        attrs = manifest(zt)["attributes"]
        self.assertEqual(attrs["$bytes"], b"\xff\xfe")
        self.assertTrue(isinstance(attrs["k.nan"], float) and math.isnan(attrs["k.nan"]))
        self.assertEqual(attrs["k.big"], 2 ** 64 - 1)
        self.assertEqual(attrs["k.neg"], -(2 ** 63))
        self.assertEqual(attrs["k.half"], 0.5)
        self.assertEqual(attrs["k.nested"], [[1, 2], []])
        run("verify", "--strict", zt)

    def test_v2_and_v3_every_type(self):
        for version in (2, 3):
            src, expect = self.build(version)
            zt = self.path("m%d.zt" % version)
            run("convert", src, "-o", zt, "--digest", "crc32c")
            doc = info(zt)
            attrs = doc["attributes"]
            self.assertEqual(attrs["general.architecture"], "llama")
            for k, _, v in GGUF_KVS:
                if k == "k.nan":
                    self.assertEqual(attrs[k], {"$float": "nan"})
                elif k == "k.nested":
                    self.assertEqual(attrs[k], [[1, 2], [3]])
                elif isinstance(v, tuple):
                    self.assertEqual(attrs[k], v[1], k)
                else:
                    self.assertEqual(attrs[k], v, k)
            objs = {o["name"]: o for o in doc["objects"]}
            self.assertEqual(sorted(objs), sorted(expect))
            for name, (tid, data) in expect.items():
                o, c = objs[name], objs[name]["components"][0]
                if tid in GGUF_DIRECT:
                    self.assertEqual(o["format"], "dense")
                    self.assertEqual(c["dtype"], GGUF_ZT[tid])
                    self.assertEqual(o["shape"], [3, 4])  # row-major: reversed from ne
                    got = export(zt, name, self.tmp)
                    self.assertEqual(got.shape, (3, 4))
                    self.assertEqual(got.tobytes(), ztcli.host_bytes(data), name)
                else:
                    gname, bs, ts = GGML[tid]
                    self.assertEqual(o["format"], "ggml_quantized")
                    self.assertEqual((c["dtype"], c["type"]), ("u8", "ggml." + gname))
                    self.assertEqual(o["shape"], [3, bs * 2])
                    self.assertEqual(o["attributes"], {"ggml_type": gname, "ggml_type_id": tid,
                                                       "block_size": bs, "type_size": ts})
                    self.assertEqual(cat(zt, name), data, name)
            run("verify", zt)


if __name__ == "__main__":
    import unittest
    unittest.main()
