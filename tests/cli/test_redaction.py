"""No credential a URL carries reaches a message (issue 37, docs/remote.md
"Security"): every zt command given a URL with "user:password@" and a query
string shows it as "<credentials>@...?<redacted>". A command that works on
local files only (compress, decompress, migrate, convert, append and remove
of their FILE, and every output: export -o, merge -o, split -o) refuses a
URL before quoting it or making any file from it ("./http:/host/..." was
created by remove). Commands that read URLs are run against a closed
loopback port: they fail, and their messages are checked the same way."""
import os
import socket
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import ztcli  # noqa: E402
from ztcli import ZT  # noqa: E402

TIMEOUT = 60
SECRETS = ("pw-secret", "qs-secret", "frag-secret", "user-secret")


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def npy_bytes(a):
    """A minimal .npy (format 1.0) holding `a`, written by hand."""
    a = np.ascontiguousarray(a)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (a.dtype.str, a.shape)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + a.tobytes()


class RedactionTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.port = closed_port()
        self.url = f"http://user-secret:pw-secret@127.0.0.1:{self.port}/dir/m.zt?sig=qs-secret#frag-secret"
        self.shown = f"http://<credentials>@127.0.0.1:{self.port}/dir/m.zt?<redacted>"
        with open(os.path.join(self.dir, "in.npy"), "wb") as f:
            f.write(npy_bytes(np.arange(4, dtype=np.float32)))
        ztcli.run("convert", os.path.join(self.dir, "in.npy"), "-o", os.path.join(self.dir, "a.zt"), "--quiet")
        self.local = os.path.join(self.dir, "a.zt")

    def tearDown(self):
        self.tmp.cleanup()

    def zt(self, *args):
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "ZT_BEARER_TOKEN"}
        before = sorted(os.listdir(self.dir))
        p = subprocess.run([ZT, "--retries", "0", *map(str, args)], capture_output=True, text=True,
                           timeout=TIMEOUT, cwd=self.dir, env=env)
        self.assertGreater(p.returncode, 0, p.stderr)
        text = p.stdout + p.stderr
        for s in SECRETS:
            self.assertNotIn(s, text, args)
        # Nothing was made from the URL: no "http:" folder, no temporary.
        self.assertEqual(sorted(os.listdir(self.dir)), before, args)
        return p

    def test_commands_on_local_files_refuse_urls(self):
        u, a, out = self.url, self.local, os.path.join(self.dir, "out.zt")
        cases = [
            ("compress", u, "-o", out), ("compress", a, "-o", u),
            ("decompress", u, "-o", out), ("decompress", a, "-o", u),
            ("migrate", u, "-o", out), ("migrate", a, "-o", u),
            ("convert", u, "-o", out), ("convert", os.path.join(self.dir, "in.npy"), "-o", u),
            ("remove", u, "x"), ("append", u, "--from", a),
            ("export", a, "x", "-o", u), ("export", a, "--to", "safetensors", "-o", u),
            ("merge", a, a, "-o", u), ("split", a, "--max-shard-size", "1MB", "-o", u),
        ]
        for args in cases:
            with self.subTest(args=args):
                p = self.zt(*args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(f"'{self.shown}' is a URL", p.stderr)
                self.assertIn("works on local files only", p.stderr)

    def test_commands_reading_urls_redact_them(self):
        u, a = self.url, self.local
        cases = [("info", u), ("info", "--json", u), ("ls", u), ("cat", u, "x"), ("verify", u),
                 ("export", u, "x", "-o", os.path.join(self.dir, "x.npy")),
                 ("export", u, "--to", "gguf", "-o", os.path.join(self.dir, "x.gguf")),
                 ("merge", a, u, "-o", os.path.join(self.dir, "m.zt")),
                 ("split", u, "--max-shard-size", "1MB", "-o", os.path.join(self.dir, "parts")),
                 ("append", a, "--from", u)]
        for args in cases:
            with self.subTest(args=args):
                p = self.zt(*args)
                self.assertIn(self.shown, p.stderr)

    def test_the_rule(self):
        # user:password@ (the last '@' before the path ends it), the query
        # and the fragment; s3:// keys are literal, only '@' in the bucket
        # part goes; a local path is quoted as it is.
        port = self.port
        for given, shown in [
            (f"https://a@b:c@127.0.0.1:{port}/p?x=1", f"https://<credentials>@127.0.0.1:{port}/p?<redacted>"),
            (f"HTTP://u:p@127.0.0.1:{port}", f"HTTP://<credentials>@127.0.0.1:{port}"),
            (f"http://127.0.0.1:{port}/p#f?x", f"http://127.0.0.1:{port}/p"),
            (f"http://127.0.0.1:{port}/a@b/c.zt", f"http://127.0.0.1:{port}/a@b/c.zt"),
        ]:
            with self.subTest(given=given):
                p = self.zt("compress", given, "-o", "out.zt")
                self.assertIn(f"'{shown}' is a URL", p.stderr)
        p = self.zt("remove", "s3://user:pw-secret@bkt/k?v=1#2.zt", "x")
        self.assertIn("'s3://<credentials>@bkt/k?v=1#2.zt' is a URL", p.stderr)


if __name__ == "__main__":
    unittest.main()
