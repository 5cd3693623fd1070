"""PyTorch checkpoints (torch.save's zip format) read through zt_open,
without Python in the reader: the restricted pickle interpreter of
src/foreign/pickle.cc. Files are written at test time by Debian's torch
(python3-torch; skipped without it) and compared element for element with
torch.load(weights_only=True). A pickle calling os.system is refused and
nothing runs; the legacy format is refused with a clear message."""
import collections
import io
import os
import pickle
import subprocess
import sys
import unittest
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ztcli  # noqa: E402
from ztcli import ZT, needs_npz, run  # noqa: E402
from peak_rss import peak_rss_mb  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover - Debian's python3-torch is a test dependency
    torch = None

needs_torch = unittest.skipIf(torch is None, "python3-torch is not installed")

# torch dtype -> (zt dtype name, the numpy dtype zt cat's bytes are read as)
DTYPES = {
    "float32": ("f32", "f4"), "float64": ("f64", "f8"), "float16": ("f16", "f2"), "bfloat16": ("bf16", "u2"),
    "int8": ("i8", "i1"), "int16": ("i16", "i2"), "int32": ("i32", "i4"), "int64": ("i64", "i8"),
    "uint8": ("u8", "u1"), "bool": ("bool", "u1"), "complex64": ("complex64", "c8"),
    "complex128": ("complex128", "c16"),
}


def as_numpy(t):
    """What zt cat should print for tensor t, as numpy (bf16 as its bits)."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    if t.dtype == torch.bool:
        return t.numpy().astype(np.uint8)
    return t.numpy()


def flatten(obj, prefix=""):
    """The tensors of a loaded checkpoint by dotted path, as zt names them."""
    out = {}
    if isinstance(obj, torch.Tensor):
        out[prefix or "tensor"] = obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, "%s.%s" % (prefix, k) if prefix else str(k)))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            out.update(flatten(v, "%s.%d" % (prefix, i) if prefix else str(i)))
    return out


@needs_torch
@needs_npz
class PyTorchTest(ztcli.TmpCase):
    def check_matches_torch(self, path):
        want = flatten(torch.load(path, weights_only=True))
        listed = [line.split("\t")[0] for line in run("ls", path).stdout.splitlines()]
        self.assertEqual(sorted(listed), sorted(want))
        doc = ztcli.info(path)
        self.assertEqual(doc["source_format"], "pickle")
        by_name = {o["name"]: o for o in doc["objects"]}
        for name, t in want.items():
            with self.subTest(name):
                zdt, ndt = DTYPES[str(t.dtype).replace("torch.", "")]
                o = by_name[name]
                self.assertEqual(o["shape"], list(t.shape))
                self.assertEqual(o["components"][0].get("type") or o["components"][0]["dtype"], zdt)
                out = subprocess.run([ZT, "cat", path, name], capture_output=True, check=True).stdout
                got = np.frombuffer(out, ztcli.host_dtype(ndt)).reshape(tuple(t.shape))
                np.testing.assert_array_equal(got, as_numpy(t))
        run("verify", path)
        return want

    def test_every_dtype(self):
        g = torch.Generator().manual_seed(1)
        sd = collections.OrderedDict()
        for name in DTYPES:
            dt = getattr(torch, name)
            if dt.is_floating_point or dt.is_complex:
                sd[name] = (torch.randn(3, 5, generator=g) * 100).to(dt)
            elif dt == torch.bool:
                sd[name] = torch.randn(3, 5, generator=g) > 0
            else:
                sd[name] = torch.randint(-100 if dt != torch.uint8 else 0, 100, (3, 5), generator=g).to(dt)
        sd["scalar"] = torch.tensor(2.5)
        sd["empty"] = torch.zeros(0, 4)
        path = self.path("dtypes.pt")
        torch.save(sd, path)
        self.assertEqual(len(self.check_matches_torch(path)), len(DTYPES) + 2)
        # All contiguous over stored members: read in place (zero-copy), at
        # the 64-byte aligned offsets torch gives its storages.
        for o in ztcli.info(path)["objects"]:
            off = o["components"][0]["offset"]
            self.assertIsNotNone(off, o["name"])
            if o["name"] != "empty":
                self.assertEqual(off % 64, 0, o["name"])

    def test_shared_storages_and_views(self):
        a = torch.arange(48, dtype=torch.float32).reshape(6, 8)
        sd = {"a": a, "row": a[2], "t": a.t(), "col": a[:, 3], "strided": a[1:5, ::3], "tail": a.view(-1)[40:],
              "tied": a, "p": torch.nn.Parameter(torch.ones(3))}
        path = self.path("views.pth")
        torch.save(sd, path)
        self.check_matches_torch(path)
        # Strided views are copied: the file's tensors are decoded on first read.
        self.assertIsNone(ztcli.info(path)["objects"][0]["components"][0]["offset"])

    def test_nested_dicts_and_modules(self):
        model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2))
        opt = torch.optim.Adam(model.parameters())
        model(torch.randn(5, 4)).sum().backward()
        opt.step()
        # (The optimizer's own state: its hyperparameters are floats, which
        # torch 1.13's weights_only loader refuses; this reader takes them.)
        ckpt = {"model": model.state_dict(), "optimizer": {"state": opt.state_dict()["state"]}, "epoch": 7,
                "name": "run",
                "extra": [torch.ones(2), (torch.zeros(1), {"deep": torch.full((2, 2), 3.0)})]}
        path = self.path("ckpt.bin")
        torch.save(ckpt, path)
        want = self.check_matches_torch(path)
        self.assertIn("model.0.weight", want)
        self.assertIn("optimizer.state.0.exp_avg", want)
        self.assertIn("extra.1.1.deep", want)
        # zt convert makes a .zt of it with the same tensors.
        out = self.path("ckpt.zt")
        run("convert", path, "-o", out, "--quiet", "--no-sync")
        self.assertEqual(sorted(o["name"] for o in ztcli.info(out)["objects"]), sorted(want))

    def test_legacy_format_is_refused(self):
        path = self.path("legacy.pt")
        torch.save({"w": torch.ones(2)}, path, _use_new_zipfile_serialization=False)
        p = run("ls", path, check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("legacy format", p.stderr)


class Payload:
    """Unpickles as os.system(command): what a hostile checkpoint does."""

    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def torch_like_zip(path, pickled):
    """A zip laid out as torch.save writes it, data.pkl being `pickled`."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pickled)
        z.writestr("archive/version", "3\n")


@needs_npz
class HostilePickleTest(ztcli.TmpCase):
    def test_os_system_is_refused_and_nothing_runs(self):
        proof = self.path("proof")
        marker = self.path("marker")
        # The payload does run under pickle.loads: it makes its file.
        subprocess.run([sys.executable, "-c", "import pickle,sys; pickle.loads(sys.stdin.buffer.read())"],
                       input=pickle.dumps({"w": Payload("touch '%s'" % proof)}, protocol=2), check=True)
        self.assertTrue(os.path.exists(proof))
        path = self.path("evil.pt")
        torch_like_zip(path, pickle.dumps({"w": Payload("touch '%s'" % marker)}, protocol=2))
        for args in (("ls", path), ("info", path), ("verify", path), ("cat", path, "w"),
                     ("convert", path, "-o", self.path("o.zt"))):
            p = run(*args, check=False)
            self.assertEqual(p.returncode, 1, (args, p.stderr))
            self.assertIn("global 'posix.system' is not allowed", p.stderr)
            self.assertFalse(os.path.exists(marker), args)

    def test_other_refusals_name_what_is_wrong(self):
        cases = {
            # A class torch does not allow; an opcode it does not know.
            "global 'builtins.eval' is not allowed": b"\x80\x02cbuiltins\neval\nX\x01\x00\x00\x001\x85R.",
            "opcode INST": b"\x80\x02(i__main__\nPayload\n.",
            "stack underflow": b"\x80\x02R.",
            "never stored": b"\x80\x02h\x05.",
            "MARK nested deeper than 4096": b"\x80\x02" + b"(" * 5000 + b"N.",
            "runs past the end": b"\x80\x02X\xff\xff\x00\x00ab",
        }
        for why, data in cases.items():
            with self.subTest(why):
                path = self.path("bad.pt")
                torch_like_zip(path, data)
                p = run("ls", path, check=False)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn(why, p.stderr)
                self.assertNotIn("terminate", p.stderr)

    def test_cycles_and_shared_containers_cost_linear_time(self):
        # A list holding itself; 60 levels of tuples each holding the level
        # below twice (2^60 paths: each container is walked once); 100
        # levels are refused.
        cases = [("cycle.pt", b"\x80\x02]q\x00h\x00a.", 0)]
        for levels, status in ((60, 0), (100, 1)):
            cases.append(("dag%d.pt" % levels, b"\x80\x02]" + b"q\x00h\x00\x86" * levels + b".", status))
        for name, data, status in cases:
            with self.subTest(name):
                path = self.path(name)
                torch_like_zip(path, data)
                p = run("ls", path, check=False, timeout=20)
                self.assertEqual(p.returncode, status, p.stderr)
                if status:
                    self.assertIn("deeper than 64 levels", p.stderr)

@needs_npz
class HostileZipTest(ztcli.TmpCase):
    def storage_pickle(self, numel):
        """data.pkl of {"w": a float tensor over storage "0" of numel elements}."""
        return (b"\x80\x02}q\x00X\x01\x00\x00\x00wctorch._utils\n_rebuild_tensor_v2\n("
                b"(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu"
                + b"J" + numel.to_bytes(4, "little") + b"tQK\x00J" + numel.to_bytes(4, "little") +
                b"\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtRs.")

    def test_a_deflated_storage_bomb_lists_without_inflating(self):
        n = 128 << 20  # 512 MiB of float zeros, deflated to about half a MB
        path = self.path("bomb.pt")
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
            z.writestr("archive/data.pkl", self.storage_pickle(n))
            with z.open("archive/data/0", "w", force_zip64=True) as f:
                zero = bytes(16 << 20)
                for _ in range(n * 4 // len(zero)):
                    f.write(zero)
        self.assertLess(os.path.getsize(path), 4 << 20)
        self.assertIn("w\tdense\t[134217728]", run("ls", path).stdout)
        code, mb = peak_rss_mb(ZT, "info", path)
        self.assertEqual(code, 0)
        if ztcli.RSS_BOUNDS_APPLY:  # ASan's shadow adds ~100 MB
            self.assertLess(mb, 48)
        p = run("cat", path, "w", check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("--max-decoded-size", p.stderr)

    def test_sizes_that_lie_are_refused(self):
        path = self.path("lie.pt")
        torch_like_zip(path, self.storage_pickle(4))
        with zipfile.ZipFile(path, "a") as z:
            z.writestr("archive/data/0", bytes(16))
        data = bytearray(open(path, "rb").read())
        # The central directory's uncompressed size of data/0: 16 -> 1 GiB.
        at = data.rfind(b"archive/data/0") - 46
        self.assertEqual(data[at:at + 4], b"PK\x01\x02")
        data[at + 24:at + 28] = (1 << 30).to_bytes(4, "little")
        with open(path, "wb") as f:
            f.write(bytes(data))
        p = run("ls", path, check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertNotIn("terminate", p.stderr)
        # A storage shorter than the pickle declares.
        torch_like_zip(path, self.storage_pickle(8))
        with zipfile.ZipFile(path, "a") as z:
            z.writestr("archive/data/0", bytes(16))
        p = run("ls", path, check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("the member holds 16", p.stderr)


if __name__ == "__main__":
    unittest.main()
