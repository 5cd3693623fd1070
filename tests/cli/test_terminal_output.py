"""Human-readable output of zt never passes a file's control characters to
the terminal: object names, component roles, formats, dtype strings and
attribute keys holding ESC, BEL, CR, LF, TAB, DEL, C1 controls or invalid
UTF-8 are printed escaped (\\xNN, \\u00NN for C1) by zt ls, zt info,
zt verify and in error messages."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rawzt  # noqa: E402
import ztcli  # noqa: E402
from ztcli import GGUF_STRING, gguf_bytes, safetensors_bytes  # noqa: E402

HOSTILE = "w\x1b]0;pwned\x07\x1b[2J\rline\nfake\tcol\x7f\u009b31m"
# Bytes no terminal may see raw, whichever of them a name carries.
CONTROL = [bytes([c]) for c in range(0x20) if c != 0x0a] + [b"\x7f", "\u009b".encode()]


def raw_controls(out, separators=b""):
    """The control bytes in `out` (bytes) other than the line ends zt itself
    writes (and `separators`: zt ls puts TABs between columns)."""
    return [c for c in CONTROL if c in out and c not in separators]


class Escaped(ztcli.TmpCase):
    def hostile_file(self):
        p = self.path("h.zt")
        rawzt.build(p, [bytes(4)], {
            HOSTILE: {"shape": [1], "format": "dense", "attributes": {"k\x1b[1m": "v\x07"},
                      "components": {"data": {"dtype": "f32", "blob": 0}}},
            "bad\x1b[5m": {"shape": [2], "format": "dense",
                           "components": {"data": {"dtype": "f32", "blob": 0}}},
        }, attributes={"a\x9b": 1})
        return p

    def run_bytes(self, *args):
        import subprocess
        p = subprocess.run([ztcli.ZT, *map(str, args)], capture_output=True)
        self.assertGreaterEqual(p.returncode, 0)
        return p

    def test_ls_escapes_names(self):
        p = self.run_bytes("ls", self.hostile_file())
        self.assertEqual(raw_controls(p.stdout, b"\t"), [], p.stdout)
        lines = p.stdout.decode().splitlines()
        # One line per object: a name's LF does not forge another.
        self.assertEqual(len(lines), 2, lines)
        self.assertIn("w\\x1b]0;pwned\\x07\\x1b[2J\\x0dline\\x0afake\\x09col\\x7f\\u009b31m", p.stdout.decode())
        # Its TAB does not add a column either.
        self.assertTrue(all(len(line.split("\t")) in (5, 6) for line in lines), lines)

    def test_info_escapes_names_attributes_and_errors(self):
        p = self.run_bytes("info", self.hostile_file())
        self.assertEqual(raw_controls(p.stdout), [], p.stdout)
        self.assertEqual(raw_controls(p.stderr), [], p.stderr)
        text = p.stdout.decode()
        self.assertIn("\\x1b]0;pwned", text)
        self.assertIn("bad\\x1b[5m", text)
        self.assertIn("\\u009b", text)  # the C1 control in the file attribute key

    def test_verify_escapes(self):
        p = self.run_bytes("verify", self.hostile_file())
        self.assertEqual(p.returncode, 1)
        self.assertEqual(raw_controls(p.stdout + p.stderr), [], p.stdout + p.stderr)
        self.assertIn(b"bad\\x1b[5m", p.stdout)

    def test_export_refusal_escapes(self):
        p = self.run_bytes("export", self.hostile_file(), "--to", "gguf", "-o", self.path("o.gguf"))
        self.assertEqual(p.returncode, 1)
        self.assertEqual(raw_controls(p.stderr), [], p.stderr)

    def test_foreign_gguf_names_and_keys(self):
        # GGUF strings are raw bytes: invalid UTF-8 is shown byte by byte.
        name = b"t\x1b[31m\xff\xfe\x9b"
        g = self.path("h.gguf")
        with open(g, "wb") as f:
            f.write(gguf_bytes([("key\x07", GGUF_STRING, b"val\x1b")], [(name, [4], 0, bytes(16))]))
        for cmd in ("ls", "info"):
            p = self.run_bytes(cmd, g)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(raw_controls(p.stdout, b"\t" if cmd == "ls" else b""), [], (cmd, p.stdout))
            self.assertIn(b"t\\x1b[31m\\xff\\xfe\\x9b", p.stdout, cmd)

    def test_convert_errors_quoting_foreign_names(self):
        # Two inputs holding the same hostile tensor name: the refusal names
        # it, escaped.
        for n in ("a", "b"):
            with open(self.path(n + ".safetensors"), "wb") as f:
                f.write(safetensors_bytes([(HOSTILE, "F32", (1,), bytes(4))]))
        p = self.run_bytes("convert", self.path("a.safetensors"), self.path("b.safetensors"), "-o", self.path("o.zt"))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(b"is in both", p.stderr)
        self.assertEqual(raw_controls(p.stderr), [], p.stderr)

    def test_plain_names_unchanged(self):
        p = self.path("ok.zt")
        rawzt.build(p, [bytes(4)], {"caf\u00e9/\u5b57": {"shape": [1], "format": "dense",
                                                        "components": {"data": {"dtype": "f32", "blob": 0}}}})
        out = self.run_bytes("ls", p).stdout.decode()
        self.assertTrue(out.startswith("caf\u00e9/\u5b57\t"), out)


class NulInNames(ztcli.TmpCase):
    """A 1.x name, role or format may hold NUL: "a\\0b" is its own object, not
    "a". zt prints the whole string, the NUL escaped like any control."""

    def nul_file(self):
        p = self.path("nul-names.zt")  # not "nul.zt": NUL is a device name on Windows
        rawzt.build(p, [bytes(4), bytes(4)], {
            "a": {"shape": [1], "format": "dense", "components": {"data": {"dtype": "f32", "blob": 0}}},
            "a\x00b": {"shape": [1], "format": "dense\x00x", "components": {
                "data": {"dtype": "f32", "blob": 1, "digest": "sha256:" + "0" * 64},
                "r\x00s": {"dtype": "f32", "blob": 0}}},
        })
        return p

    def run_bytes(self, *args):
        import subprocess
        return subprocess.run([ztcli.ZT, *map(str, args)], capture_output=True)

    def test_ls_shows_the_whole_name_and_format(self):
        p = self.run_bytes("ls", self.nul_file())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn(b"\x00", p.stdout)
        lines = p.stdout.decode().splitlines()
        self.assertEqual(len(lines), 2, lines)
        self.assertEqual(lines[0].split("\t")[:2], ["a", "dense"])
        # The format was printed as "dense" (cut at the NUL): it is not dense.
        self.assertEqual(lines[1].split("\t")[:2], ["a\\x00b", "dense\\x00x"])

    def test_info_shows_the_whole_role(self):
        p = self.run_bytes("info", self.nul_file())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn(b"\x00", p.stdout)
        text = p.stdout.decode()
        self.assertIn("component r\\x00s:", text)
        self.assertIn("format:     dense\\x00x", text)

    def test_verify_names_the_failing_object_whole(self):
        p = self.run_bytes("verify", self.nul_file())
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertNotIn(b"\x00", p.stdout)
        # Cut at the NUL, the failure named "a", the valid object.
        self.assertIn("FAIL a\\x00b / data: ", p.stdout.decode())


if __name__ == "__main__":
    import unittest
    unittest.main(verbosity=2)
