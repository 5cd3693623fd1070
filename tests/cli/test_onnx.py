"""ONNX models through zt_open (src/foreign/onnx.cc, protobuf code generated
from libonnx-dev's onnx.proto): files written by Debian's python3-onnx at
test time (skipped without it), compared element for element with onnx's
own numpy_helper.to_array; external data is read only beneath the model's
folder."""
import os
import subprocess
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ztcli  # noqa: E402
from ztcli import ZT, run  # noqa: E402

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:  # pragma: no cover - python3-onnx is a test dependency
    onnx = None

HAVE_ONNX_READER = os.environ.get("ZT_HAVE_ONNX", "1") == "1"
needs_onnx = unittest.skipIf(onnx is None or not HAVE_ONNX_READER,
                             "python3-onnx missing, or zt built without the ONNX reader")

# numpy dtype -> zt dtype name (complex as their logical type)
NUMPY = {"float32": "f32", "float64": "f64", "float16": "f16", "int8": "i8", "int16": "i16", "int32": "i32",
         "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool",
         "complex64": "complex64", "complex128": "complex128"}


def model_of(initializers):
    return helper.make_model(helper.make_graph([], "g", [], [], initializer=initializers))


@needs_onnx
class OnnxTest(ztcli.TmpCase):
    def check_matches_onnx(self, path, expect_names):
        m = onnx.load(path)  # loads external data too
        want = {t.name: t for t in m.graph.initializer}
        self.assertEqual(sorted(want), sorted(expect_names))
        doc = ztcli.info(path)
        self.assertEqual(doc["source_format"], "onnx")
        by_name = {o["name"]: o for o in doc["objects"]}
        self.assertEqual(sorted(by_name), sorted(want))
        for name, t in want.items():
            with self.subTest(name):
                a = numpy_helper.to_array(t)
                o = by_name[name]
                self.assertEqual(o["shape"], list(a.shape))
                out = subprocess.run([ZT, "cat", path, name], capture_output=True, check=True).stdout
                if t.data_type == TensorProto.BFLOAT16:
                    # onnx gives bf16 as float32; zt gives the 16 bits.
                    bits = np.frombuffer(out, ztcli.host_dtype("u2")).reshape(a.shape)
                    got = (bits.astype(np.uint32) << 16).view(np.float32)
                    np.testing.assert_array_equal(got, a.astype(np.float32))
                    continue
                comp = o["components"][0]
                self.assertEqual(comp.get("type") or comp["dtype"], NUMPY[a.dtype.name])
                got = np.frombuffer(out, ztcli.host_dtype(a.dtype)).reshape(a.shape)
                np.testing.assert_array_equal(got, a)
        run("verify", path)

    def arrays(self):
        rng = np.random.default_rng(3)
        out = {}
        for name in NUMPY:
            if name == "bool":
                a = rng.random((2, 3)) > 0.5
            elif name.startswith("complex"):
                a = (rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))).astype(name)
            elif name.startswith("float"):
                a = (rng.standard_normal((2, 3)) * 50).astype(name)
            else:
                a = rng.integers(0, 100, (2, 3)).astype(name)
            out["raw_" + name] = a
        return out

    def test_every_dtype_raw_and_typed(self):
        inits = [numpy_helper.from_array(a, n) for n, a in self.arrays().items()]
        # The typed fields (float_data, int32_data, ...) instead of raw_data.
        for n, a in self.arrays().items():
            if a.dtype == np.float16 or a.dtype.kind == "c":
                continue  # float16 needs raw bits; onnx's to_array cannot read typed complex (below)
            dt = helper.np_dtype_to_tensor_dtype(a.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype") \
                else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]
            inits.append(helper.make_tensor("typed_" + n[4:], dt, a.shape, a.flatten().tolist()))
        inits.append(helper.make_tensor("bf16", TensorProto.BFLOAT16, [4], [1.0, -2.5, 3.25, 0.0]))
        inits.append(numpy_helper.from_array(np.zeros((0, 3), np.float32), "empty"))
        inits.append(numpy_helper.from_array(np.array(7, np.int64), "scalar"))
        path = self.path("m.onnx")
        onnx.save_model(model_of(inits), path)
        self.check_matches_onnx(path, [t.name for t in inits])
        out = self.path("m.zt")
        run("convert", path, "-o", out, "--quiet", "--no-sync")
        self.assertEqual(len(ztcli.info(out)["objects"]), len(inits))

    def test_typed_complex(self):
        # float_data / double_data hold (real, imaginary) pairs.
        c64 = TensorProto(name="c64", data_type=TensorProto.COMPLEX64, dims=[2], float_data=[1, 2, 3, 4])
        c128 = TensorProto(name="c128", data_type=TensorProto.COMPLEX128, dims=[1], double_data=[5.5, -6])
        path = self.path("c.onnx")
        onnx.save_model(model_of([c64, c128]), path)
        for name, dt, want in (("c64", "c8", [1 + 2j, 3 + 4j]), ("c128", "c16", [5.5 - 6j])):
            out = subprocess.run([ZT, "cat", path, name], capture_output=True, check=True).stdout
            self.assertEqual(np.frombuffer(out, ztcli.host_dtype(dt)).tolist(), want)

    def test_float8_raw_data(self):
        t = TensorProto()
        t.name = "f8"
        t.data_type = 17  # FLOAT8E4M3FN (ONNX 1.14)
        t.dims.extend([4])
        t.raw_data = bytes([0x38, 0x40, 0xb8, 0x7e])
        path = self.path("f8.onnx")
        with open(path, "wb") as f:
            f.write(model_of([t]).SerializeToString())
        (o,) = ztcli.info(path)["objects"]
        self.assertEqual(o["components"][0]["type"], "f8_e4m3fn")
        out = subprocess.run([ZT, "cat", path, "f8"], capture_output=True, check=True).stdout
        self.assertEqual(out, bytes([0x38, 0x40, 0xb8, 0x7e]))

    def test_external_data(self):
        os.mkdir(self.path("model"))
        arrays = {"w": np.arange(1000, dtype=np.float32).reshape(10, 100), "b": np.arange(7, dtype=np.int64)}
        path = self.path("model/m.onnx")
        onnx.save_model(model_of([numpy_helper.from_array(a, n) for n, a in arrays.items()]), path,
                        save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin",
                        size_threshold=0)
        self.assertTrue(os.path.exists(self.path("model/weights.bin")))
        self.check_matches_onnx(path, list(arrays))

    def test_external_data_outside_the_folder_is_refused(self):
        os.mkdir(self.path("model"))
        secret = self.path("secret.bin")
        with open(secret, "wb") as f:
            f.write(np.arange(4, dtype=np.float32).tobytes())
        os.symlink(secret, self.path("model/link.bin"))
        # Malformed locations: exit 1 (ZT_E_FORMAT); a link or a missing file: exit 3 (ZT_E_IO).
        for location, why, code in (("../secret.bin", "rule", 1), (secret, "rule", 1), ("link.bin", "symbolic link", 3),
                                    ("missing.bin", "missing.bin", 3)):
            with self.subTest(location):
                t = numpy_helper.from_array(np.zeros(4, np.float32), "w")
                t.ClearField("raw_data")
                t.data_location = TensorProto.EXTERNAL
                for k, v in (("location", location), ("offset", "0"), ("length", "16")):
                    e = t.external_data.add()
                    e.key, e.value = k, v
                path = self.path("model/m.onnx")
                with open(path, "wb") as f:
                    f.write(model_of([t]).SerializeToString())
                for cmd in ("ls", "info"):
                    p = run(cmd, path, check=False)
                    self.assertEqual(p.returncode, code, (cmd, p.stderr))
                    self.assertIn(why, p.stderr)
                    self.assertIn("'w'", p.stderr)

    def test_damaged_models_are_refused(self):
        a = np.arange(64, dtype=np.float32)
        good = model_of([numpy_helper.from_array(a, "w")]).SerializeToString()
        t = numpy_helper.from_array(a, "w")
        t.raw_data = t.raw_data[:-4]
        short = model_of([t]).SerializeToString()
        s = helper.make_tensor("s", TensorProto.STRING, [1], [b"x"])
        for name, data, why in (("cut.onnx", good[:len(good) // 2], "not a valid ONNX model"),
                                ("short.onnx", short, "raw_data holds 252 bytes"),
                                ("str.onnx", model_of([s]).SerializeToString(), "no zTensor storage type")):
            with self.subTest(name):
                path = self.path(name)
                with open(path, "wb") as f:
                    f.write(data)
                p = run("ls", path, check=False)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn(why, p.stderr)


if __name__ == "__main__":
    unittest.main()
