"""HDF5 files through zt_open and libhdf5 (src/foreign/hdf5.cc): files written
by Debian's python3-h5py at test time (skipped without it), compared element
for element with h5py's own reads. Contiguous datasets are read in place;
chunked and compressed ones through libhdf5's filters, only when read; a
filter this libhdf5 lacks is refused clearly."""
import os
import subprocess
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ztcli  # noqa: E402
from ztcli import ZT, run  # noqa: E402
from peak_rss import peak_rss_mb  # noqa: E402

try:
    import h5py
except ImportError:  # pragma: no cover - python3-h5py is a test dependency
    h5py = None

needs_h5 = unittest.skipIf(h5py is None or os.environ.get("ZT_HAVE_HDF5", "1") != "1",
                           "python3-h5py missing, or zt built without libhdf5")
MIB = 1 << 20


def datasets(f):
    out = {}
    f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


@needs_h5
class Hdf5Test(ztcli.TmpCase):
    def check_matches_h5py(self, path):
        with h5py.File(path, "r") as f:
            want = datasets(f)
        by_name = {o["name"]: o for o in ztcli.info(path)["objects"]}
        self.assertEqual(sorted(by_name), sorted(want))
        for name, a in want.items():
            with self.subTest(name):
                a = np.asarray(a)
                self.assertEqual(by_name[name]["shape"], list(a.shape))
                out = subprocess.run([ZT, "cat", path, name], capture_output=True, check=True).stdout
                dt = np.dtype("u1") if a.dtype == bool else a.dtype.newbyteorder("=")
                got = np.frombuffer(out, ztcli.host_dtype(dt)).reshape(a.shape)
                np.testing.assert_array_equal(got, a.astype(dt))
        run("verify", path)
        return by_name

    def test_keras_like_file_and_every_dtype(self):
        path = self.path("weights.h5")
        rng = np.random.default_rng(5)
        with h5py.File(path, "w") as f:
            f.attrs["layer_names"] = [b"dense", b"conv"]
            f.attrs["keras_version"] = "2.11.0"
            g = f.create_group("model_weights/dense/dense")
            g.attrs["weight_names"] = [b"dense/kernel:0", b"dense/bias:0"]
            k = g.create_dataset("kernel:0", data=rng.standard_normal((4, 3)).astype(np.float32))
            k.attrs["scale"] = 0.5
            k.attrs["steps"] = np.arange(3)
            g.create_dataset("bias:0", data=np.zeros(3, np.float32))
            for dt in ("f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", ">f4", ">i8", "c8", "c16"):
                a = (rng.standard_normal((2, 5)) * 40)
                if dt.lstrip("<>")[0] == "c":
                    a = a + 1j * a[::-1]
                f.create_dataset("types/" + dt.replace(">", "be_"), data=a.astype(dt))
            f.create_dataset("types/bool", data=rng.random(7) > 0.5)
            f.create_dataset("scalar", data=np.float64(3.5))
        by_name = self.check_matches_h5py(path)
        doc = ztcli.info(path)
        self.assertEqual(doc["source_format"], "hdf5")
        self.assertEqual(doc["attributes"]["layer_names"], ["dense", "conv"])
        self.assertEqual(doc["attributes"]["model_weights/dense/dense/weight_names"], ["dense/kernel:0", "dense/bias:0"])
        self.assertEqual(by_name["model_weights/dense/dense/kernel:0"]["attributes"], {"scale": 0.5, "steps": [0, 1, 2]})
        # Contiguous datasets only: all read in place (zero-copy).
        self.assertTrue(all(o["components"][0]["offset"] is not None for o in by_name.values()))
        out = self.path("w.zt")
        run("convert", path, "-o", out, "--quiet", "--no-sync")
        self.assertEqual(len(ztcli.info(out)["objects"]), len(by_name))

    def test_chunked_and_compressed(self):
        path = self.path("c.h5")
        a = np.arange(20000, dtype=np.float32).reshape(200, 100)
        with h5py.File(path, "w") as f:
            f.create_dataset("gzip", data=a, chunks=(16, 100), compression="gzip", compression_opts=9)
            f.create_dataset("shuffle", data=a.astype(np.int64), chunks=(50, 50), shuffle=True, compression="gzip")
            f.create_dataset("fletcher", data=a[:3], chunks=True, fletcher32=True)
            f.create_dataset("plain", data=a[:2])
            f.create_dataset("partial", shape=(10, 10), dtype="i4", chunks=(5, 5), fillvalue=7)[0:5, 0:5] = 1
        self.check_matches_h5py(path)

    def test_unknown_filter_is_refused(self):
        path = self.path("lzf.h5")
        with h5py.File(path, "w") as f:  # LZF is h5py's own filter (32000): libhdf5 lacks it
            f.create_dataset("x", data=np.arange(100), compression="lzf")
        p = run("ls", path, check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("filter 32000", p.stderr)
        self.assertIn("'x'", p.stderr)

    def test_listing_a_chunk_bomb_decodes_nothing(self):
        path = self.path("bomb.h5")
        with h5py.File(path, "w") as f:
            d = f.create_dataset("z", shape=(256, MIB), dtype="u1", chunks=(16, MIB), compression="gzip",
                                 compression_opts=9)
            zero = np.zeros((16, MIB), np.uint8)
            for r in range(0, 256, 16):
                d[r:r + 16] = zero
        self.assertLess(os.path.getsize(path), 4 * MIB)
        self.assertIn("z\t", run("ls", path).stdout)
        for cmd in ("ls", "info"):
            code, mb = peak_rss_mb(ZT, cmd, path)
            self.assertEqual(code, 0)
            if ztcli.RSS_BOUNDS_APPLY:
                self.assertLess(mb, 48, cmd)  # the dataset inflates to 256 MiB
        p = run("cat", path, "z", check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("--max-decoded-size", p.stderr)

    def test_damaged_files_are_refused(self):
        path = self.path("t.h5")
        with h5py.File(path, "w") as f:
            f.create_dataset("x", data=np.arange(1000))
        data = open(path, "rb").read()
        for name, cut in (("head.h5", data[:100]), ("half.h5", data[:len(data) // 2])):
            with self.subTest(name):
                p = self.path(name)
                with open(p, "wb") as f:
                    f.write(cut)
                r = run("ls", p, check=False)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertNotIn("terminate", r.stderr)


if __name__ == "__main__":
    unittest.main()
