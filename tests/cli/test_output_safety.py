"""No zt command destroys what it reads or loses what a file was: an output
that is an input (by inode, whatever the spelling) is refused with nothing
changed; in-place edits keep the file's mode and owner, follow symlinks to
their target, and refuse files with several hard links; export writes its
temporary exclusively and handles shapes too long for an .npy 1.0 header."""
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import ztcli  # noqa: E402
from ztcli import info, objects, run  # noqa: E402


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def npy_bytes(arr):
    import io
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


class OutputSafetyTest(ztcli.TmpCase):
    def setUp(self):
        super().setUp()
        self.a = self.path("a.zt")
        self.b = self.path("b.zt")
        for path, name in ((self.a, "x"), (self.b, "y")):
            npy = self.path(name + ".npy")
            with open(npy, "wb") as f:
                f.write(npy_bytes(np.arange(6, dtype="<f4").reshape(2, 3)))
            run("convert", npy, "-o", path)
            os.remove(npy)

    def snapshot(self):
        out = {}
        for n in sorted(os.listdir(self.tmp)):
            p = self.path(n)
            st = os.lstat(p)
            out[n] = (st.st_ino, st.st_mode, os.readlink(p) if stat.S_ISLNK(st.st_mode) else read_bytes(p))
        return out

    def assert_refused(self, args, code=2, needle="same file"):
        before = self.snapshot()
        p = run(*args, check=False)
        self.assertEqual(p.returncode, code, p.stderr)
        self.assertIn(needle, p.stderr)
        self.assertEqual(self.snapshot(), before, "a refused command changed the directory")

    # ------------------------------------------------------------ in == out
    def test_every_writing_command_refuses_its_input_as_output(self):
        link = self.path("alias.zt")
        os.symlink("a.zt", link)
        hard = self.path("hard.zt")
        os.link(self.a, hard)
        dotted = os.path.join(self.tmp, ".", "a.zt")
        for out in (self.a, link, hard, dotted):
            with self.subTest(out=out):
                self.assert_refused(["export", self.a, "x", "-o", out])
                self.assert_refused(["migrate", self.a, "-o", out])
                self.assert_refused(["compress", self.a, "-o", out])
                self.assert_refused(["decompress", self.a, "-o", out])
                self.assert_refused(["merge", self.a, self.b, "-o", out])
                self.assert_refused(["merge", self.b, self.a, "-o", out])
        self.assert_refused(["append", self.a, "--from", link])

    def test_convert_refuses_its_input_as_output(self):
        npy = self.path("t.npy")
        with open(npy, "wb") as f:
            f.write(npy_bytes(np.ones(4, "<f8")))
        alias = self.path("t-alias.npy")
        os.symlink(npy, alias)
        for out in (npy, alias):
            with self.subTest(out=out):
                self.assert_refused(["convert", npy, "-o", out])
                self.assert_refused(["convert", self.path("t-alias.npy"), "-o", npy])
        self.assertTrue(np.array_equal(np.load(npy), np.ones(4)))

    # ------------------------------------------------- in-place edits keep the file
    def test_append_and_remove_keep_mode(self):
        os.chmod(self.a, 0o640)
        run("append", self.a, "--from", self.b)
        self.assertEqual(stat.S_IMODE(os.stat(self.a).st_mode), 0o640)
        os.chmod(self.a, 0o600)
        run("remove", self.a, "y")
        self.assertEqual(stat.S_IMODE(os.stat(self.a).st_mode), 0o600)
        self.assertEqual(sorted(objects(self.a)), ["x"])

    def test_append_keeps_owner_when_root(self):
        if os.geteuid() != 0:
            self.skipTest("only root can give a file to another owner")
        os.chown(self.a, 12345, 23456)
        run("append", self.a, "--from", self.b)
        st = os.stat(self.a)
        self.assertEqual((st.st_uid, st.st_gid), (12345, 23456))

    def test_edits_through_a_symlink_rewrite_its_target(self):
        sub = os.path.join(self.tmp, "sub")
        os.mkdir(sub)
        os.rename(self.a, os.path.join(sub, "real.zt"))
        os.symlink(os.path.join("sub", "real.zt"), self.a)
        run("append", self.a, "--from", self.b)
        self.assertTrue(os.path.islink(self.a), "the symlink was replaced by a regular file")
        self.assertEqual(sorted(objects(os.path.join(sub, "real.zt"))), ["x", "y"])
        run("remove", self.a, "x")
        self.assertTrue(os.path.islink(self.a))
        self.assertEqual(sorted(objects(os.path.join(sub, "real.zt"))), ["y"])
        self.assertEqual(sorted(os.listdir(sub)), ["real.zt"], "a temporary file was left beside the target")

    def test_hard_linked_file_is_refused(self):
        os.link(self.a, self.path("other-name.zt"))
        self.assert_refused(["append", self.a, "--from", self.b], code=1, needle="hard links")
        self.assert_refused(["remove", self.a, "x"], code=1, needle="hard links")

    def test_merge_over_existing_output_keeps_its_mode_and_symlink(self):
        out = self.path("out.zt")
        run("merge", self.a, self.b, "-o", out)
        os.chmod(out, 0o604)
        os.symlink("out.zt", self.path("out-link.zt"))
        c = self.path("c.zt")
        run("decompress", self.a, "-o", c)
        run("merge", self.b, c, "-o", self.path("out-link.zt"))
        self.assertTrue(os.path.islink(self.path("out-link.zt")))
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o604)
        self.assertEqual(sorted(objects(out)), ["x", "y"])

    # ---------------------------------------------------------------- export
    def test_export_follows_symlink_and_keeps_mode(self):
        target = self.path("target.npy")
        with open(target, "wb") as f:
            f.write(b"old")
        os.chmod(target, 0o600)
        os.symlink("target.npy", self.path("link.npy"))
        run("export", self.a, "x", "-o", self.path("link.npy"))
        self.assertTrue(os.path.islink(self.path("link.npy")))
        self.assertEqual(stat.S_IMODE(os.stat(target).st_mode), 0o600)
        self.assertTrue(np.array_equal(np.load(target), np.arange(6, dtype="<f4").reshape(2, 3)))

    def test_export_temporary_is_not_predictable(self):
        # An attacker's symlink at the old predictable temporary name must not
        # be written through.
        victim = self.path("victim")
        with open(victim, "wb") as f:
            f.write(b"precious")
        out = self.path("o.npy")
        for pid in range(os.getpid(), os.getpid() + 200):
            os.symlink(victim, out + ".zt-export-%d" % pid)
        run("export", self.a, "x", "-o", out)
        self.assertEqual(read_bytes(victim), b"precious")
        self.assertEqual(np.load(out).shape, (2, 3))

    def test_export_of_many_dims_uses_npy_2(self):
        # NumPy arrays stop at 32 (or 64) dims, but a .zt shape does not, and
        # past ~2900 long dims the header outgrows .npy 1.0's 2-byte length. Both
        # files are built and parsed by hand, from the zTensor spec 1.2.0 and
        # the .npy format description.
        # An empty tensor lets every other dim be huge: 22 header bytes each.
        big = 10 ** 19
        for ndim, version in ((100, 1), (2900, 1), (3000, 2), (20000, 2)):
            with self.subTest(ndim=ndim):
                shape = (0,) + (big,) * (ndim - 1)
                zt = self.path("deep.zt")
                with open(zt, "wb") as f:
                    f.write(zt_one_dense("deep", "i32", shape, b""))
                self.assertEqual(len(info(zt)["objects"][0]["shape"]), ndim)
                out = self.path("deep-out.npy")
                run("export", zt, "deep", "-o", out)
                got_version, header, data = parse_npy(out)
                self.assertEqual(got_version, version)
                self.assertEqual(header, {"descr": ztcli.host_dtype("i4").str, "fortran_order": False, "shape": shape})
                self.assertEqual(data, b"")
                if ndim <= 32:
                    self.assertEqual(np.load(out).shape, shape)
                for p in (zt, out):
                    os.remove(p)


def zt_one_dense(name, dtype, shape, data):
    """A spec 1.2.0 file with one raw dense object (blob at 64, manifest, size, footer)."""
    import cbor2
    manifest = cbor2.dumps({"version": "1.2.0", "objects": {name: {
        "shape": list(shape), "format": "dense",
        "components": {"data": {"dtype": dtype, "offset": 64, "length": len(data)}}}}})
    body = b"ZTEN1000" + b"\0" * 56 + data
    return body + manifest + len(manifest).to_bytes(8, "little") + b"ZTEN1000"


def parse_npy(path):
    """(major version, header dict, data bytes); checks the framing exactly."""
    import ast
    raw = read_bytes(path)
    assert raw[:6] == b"\x93NUMPY", raw[:8]
    major = raw[6]
    width = 2 if major == 1 else 4
    n = int.from_bytes(raw[8:8 + width], "little")
    start = 8 + width
    header = raw[start:start + n].decode("latin1")
    assert header.endswith("\n") and (start + n) % 64 == 0, (start, n)
    return major, ast.literal_eval(header), raw[start + n:]

if __name__ == "__main__":
    import unittest
    unittest.main()
