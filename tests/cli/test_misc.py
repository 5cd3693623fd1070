"""zt --help and COMMAND --help, export's dtype mapping and refusals, and the
progress bar (drawn on a terminal, silent when piped)."""
import os
import pty
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import ztcli  # noqa: E402
from ztcli import ZT, gguf_bytes, run, safetensors_bytes  # noqa: E402

COMMANDS = ["info", "ls", "verify", "cat", "migrate", "export", "convert", "compress", "decompress", "append",
            "remove", "merge"]


class HelpTest(ztcli.TmpCase):
    def test_top_level_help_lists_commands_and_exit_codes(self):
        p = run("--help")
        for c in COMMANDS:
            self.assertIn("\n  %s " % c, p.stdout)
        for code in ("0  success", "1  ", "2  usage error", "3  I/O error"):
            self.assertIn(code, p.stdout)

    def test_each_command_help(self):
        for c in COMMANDS:
            p = run(c, "--help")
            self.assertTrue(p.stdout.startswith("usage: zt " + c), c)
            self.assertGreater(len(p.stdout.splitlines()), 2, c)

    def test_usage_errors_exit_2(self):
        for args in (["convert"], ["convert", "x.npy"], ["append", "a.zt"], ["merge", "a.zt", "-o", "o.zt"],
                     ["export", "a.zt"], ["compress", "a.zt", "-o", "b.zt", "--zstd", "abc"],
                     ["convert", "x.npy", "-o", "y.zt", "--digest", "md5"], ["remove", "a.zt"]):
            self.assertEqual(run(*args, check=False).returncode, 2, args)
        self.assertEqual(run("convert", self.path("missing.npy"), "-o", self.path("o.zt"), check=False).returncode, 1)


class GlobalReadOptionsTest(ztcli.TmpCase):
    """zt [--pread] [--max-decoded-size BYTES] COMMAND: how every input is read."""

    def make(self):
        npy = self.path("t.npy")
        np.save(npy, np.arange(4096, dtype="<f4"))
        out = self.path("t.zt")
        run("convert", npy, "-o", out, "--zstd", "3")
        return out

    def test_pread_reads_the_same(self):
        zt = self.make()
        for cmd in (["verify", zt], ["info", "--json", zt], ["ls", zt]):
            self.assertEqual(run("--pread", *cmd).stdout, run(*cmd).stdout)
        self.assertEqual(subprocess.run([ZT, "--pread", "cat", zt, "t"], capture_output=True, check=True).stdout,
                         ztcli.host_bytes(np.arange(4096, dtype="<f4")))

    def test_max_decoded_size_limits_every_read(self):
        zt = self.make()
        p = run("--max-decoded-size", "1K", "verify", zt, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("limit", p.stdout + p.stderr)
        p = run("--max-decoded-size=8K", "cat", zt, "t", check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("limit", p.stderr)
        run("--max-decoded-size", "16K", "verify", zt)  # exactly 16 KiB decoded: allowed

    def test_bad_global_options_are_usage_errors(self):
        for args in (["--max-decoded-size", "abc", "ls", "x"], ["--max-decoded-size", "0", "ls", "x"],
                     ["--max-decoded-size"], ["--max-decoded-size", "99999999999T", "ls", "x"]):
            p = run(*args, check=False)
            self.assertEqual(p.returncode, 2, args)
        self.assertIn("--pread", run("--help").stdout)


class ExportTest(ztcli.TmpCase):
    def test_bf16_fp8_complex_and_refusals(self):
        with open(self.path("m.safetensors"), "wb") as f:
            f.write(safetensors_bytes([("b", "BF16", [2], b"\x80\x3f\x00\x40"), ("f", "F8_E5M2", [3], b"\x01\x02\x03"),
                                       ("c", "C64", [1], np.array([1 - 1j], "<c8").tobytes())]))
        with open(self.path("q.gguf"), "wb") as f:
            f.write(gguf_bytes([], [("q", [32], 8, bytes(34))]))
        zt = self.path("m.zt")
        run("convert", self.path("m.safetensors"), self.path("q.gguf"), "-o", zt)
        p = run("export", zt, "b", "-o", self.path("b.npy"))
        self.assertIn("warning", p.stderr)
        self.assertEqual(np.load(self.path("b.npy")).tolist(), [0x3F80, 0x4000])
        p = run("export", zt, "f", "-o", self.path("f.npy"))
        self.assertIn("f8_e5m2", p.stderr)
        self.assertEqual(np.load(self.path("f.npy")).dtype, np.uint8)
        run("export", zt, "c", "-o", self.path("c.npy"))
        c = np.load(self.path("c.npy"))
        self.assertEqual(c.dtype, ztcli.host_dtype(np.complex64))
        self.assertEqual(c.tolist(), [1 - 1j])
        p = run("export", zt, "q", "-o", self.path("q.npy"), check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("ggml_quantized", p.stderr)
        self.assertFalse(os.path.exists(self.path("q.npy")))
        self.assertEqual(run("export", zt, "nope", "-o", self.path("n.npy"), check=False).returncode, 1)


class ForeignExportByteOrderTest(ztcli.TmpCase):
    def test_safetensors_and_gguf_exports_hold_little_endian_elements(self):
        # Both formats store little-endian elements whatever the host; reads
        # hand them to zt export in the host's order (big-endian on s390x),
        # raw data by range and zstd data streamed. zt reads the exports
        # back as foreign files: their values must come out unchanged.
        arrays = {"a": ("F32", np.arange(12, dtype="<f4").reshape(3, 4) * 1.5),
                  "b": ("I16", np.array([1, -2, 300], "<i2")), "c": ("F64", np.array([0.25, -1e300], "<f8"))}
        src = self.path("m.safetensors")
        with open(src, "wb") as f:
            f.write(safetensors_bytes([(n, st, list(a.shape), a.tobytes()) for n, (st, a) in arrays.items()]))
        for enc in ([], ["--zstd", "3"]):
            zt = self.path("m.zt")
            run("convert", src, "-o", zt, "--no-sync", "--quiet", *enc)
            for to in ("safetensors", "gguf"):
                out = self.path("out." + to)
                run("export", zt, "--to", to, "-o", out, "--quiet")
                for name, (_, a) in arrays.items():
                    got = subprocess.run([ZT, "cat", out, name], capture_output=True, check=True).stdout
                    self.assertEqual(got, ztcli.host_bytes(a), (enc, to, name))


class ProgressTest(ztcli.TmpCase):
    def convert(self, stderr_tty, *extra):
        np.save(self.path("a.npy"), np.zeros(1 << 20, dtype="<f8"))
        out = self.path("o%d%d.zt" % (stderr_tty, len(extra)))
        if not stderr_tty:
            return subprocess.run([ZT, "convert", self.path("a.npy"), "-o", out, *extra], capture_output=True).stderr
        master, slave = pty.openpty()
        p = subprocess.Popen([ZT, "convert", self.path("a.npy"), "-o", out, *extra], stdout=subprocess.DEVNULL,
                             stderr=slave)
        os.close(slave)
        data = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        p.wait()
        os.close(master)
        self.assertEqual(p.returncode, 0)
        return data

    def test_bar_on_a_terminal_only(self):
        shown = self.convert(True)
        self.assertIn(b"converting [", shown)
        self.assertIn(b"ETA", shown)
        self.assertIn(b"MiB", shown)
        self.assertEqual(self.convert(False), b"")
        self.assertNotIn(b"ETA", self.convert(True, "--quiet"))


class LargeInputTest(ztcli.TmpCase):
    """A foreign input past 4 GiB (a sparse .npy: nothing written in the
    hole): a 64-bit zt maps it and reads its header; a 32-bit one (i686,
    armhf: tools/cross.sh) cannot map it and says so, where a cut size would
    have made it a different, truncated file."""

    def test_npy_past_four_gib(self):
        n = (4 << 30) + 16
        header = b"{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % n
        header = header.ljust(128 - 10 - 1) + b"\n"
        path = self.path("big.npy")
        with open(path, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header)
            f.truncate(128 + n)
        p = run("info", "--json", path, check=False)
        if ztcli.HOST_BITS == 32:
            self.assertEqual(p.returncode, 1, p.stderr)
            # zt itself (import) or the library (zt_open of a foreign file) refuses it.
            self.assertRegex(p.stderr, r"larger than this 32-bit (zt|process) can map")
        else:
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(str(n), p.stdout)


if __name__ == "__main__":
    import unittest
    unittest.main()
