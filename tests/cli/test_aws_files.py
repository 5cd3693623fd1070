"""The AWS files (~/.aws/config and ~/.aws/credentials, or AWS_CONFIG_FILE
and AWS_SHARED_CREDENTIALS_FILE) are read safely by every s3:// open
(issue 37, docs/limits.md): one that is a FIFO is refused at once instead of
hanging the open, /dev/zero is refused instead of eating memory, one past
1 MiB is refused, and neither is opened at all when the options and the
environment give the keys, region and endpoint.

Each run has a timeout and an address-space limit, so that a reader that
waits on a FIFO or reads /dev/zero to its end fails the test instead of
hanging or exhausting the machine. The endpoint is a closed loopback port:
an open that gets past the AWS files ends at once with 'Couldn't connect'."""
import os
import socket
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ztcli import ZT  # noqa: E402

TIMEOUT = 20
POSIX = os.name == "posix" and not os.environ.get("ZT_EXE_WRAPPER")


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def asan_instrumented(path):
    """Whether `path` links AddressSanitizer's runtime (the .ci/sanitize.sh
    build), whose shadow memory no address-space limit leaves room for."""
    try:
        return "libasan" in subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    except OSError:
        return False


LIMIT_MEMORY = POSIX and not asan_instrumented(ZT)


def limit_memory():
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def zt_s3(env_extra, *pre):
    """zt ls s3://bkt/m.zt with only env_extra of the AWS settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "ZT_BEARER_TOKEN"}
    env.update(env_extra)
    return subprocess.run([ZT, "--retries", "0", *pre, "ls", "s3://bkt/m.zt"], capture_output=True, text=True,
                          env=env, timeout=TIMEOUT, preexec_fn=limit_memory if LIMIT_MEMORY else None)


@unittest.skipUnless(POSIX, "FIFOs and /dev/zero: POSIX hosts")
class AwsFilesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.home = self.tmp.name
        self.fifo = os.path.join(self.home, "fifo")
        os.mkfifo(self.fifo)
        self.endpoint = f"http://127.0.0.1:{closed_port()}"
        p = zt_s3({"HOME": self.home, "AWS_ENDPOINT_URL_S3": self.endpoint})
        if "libcurl" in p.stderr and "Couldn't connect" not in p.stderr:
            self.skipTest("zt built without libcurl: " + p.stderr)

    def tearDown(self):
        self.tmp.cleanup()

    def base(self, **extra):
        return dict({"HOME": self.home, "AWS_ENDPOINT_URL_S3": self.endpoint, "AWS_REGION": "eu-west-1"}, **extra)

    def assert_refused(self, p, *words):
        self.assertEqual(p.returncode, 3 if "ZT_E_LIMIT" not in words else 1, p.stderr)
        for w in words:
            self.assertIn(w, p.stderr)
        self.assertNotIn("Couldn't connect", p.stderr)  # refused before any request

    def test_fifo_is_refused_at_once(self):
        for var in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
            with self.subTest(var=var):
                p = zt_s3(self.base(**{var: self.fifo}))
                self.assert_refused(p, "the AWS file", "is a FIFO, not a regular file")

    def test_fifo_under_home_is_refused(self):
        os.mkdir(os.path.join(self.home, ".aws"))
        os.mkfifo(os.path.join(self.home, ".aws", "config"))
        p = zt_s3(self.base())
        self.assert_refused(p, ".aws/config", "is a FIFO")

    def test_dev_zero_is_refused(self):
        for var in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
            with self.subTest(var=var):
                p = zt_s3(self.base(**{var: "/dev/zero"}))
                self.assert_refused(p, "'/dev/zero'", "is a character device, not a regular file")

    def test_a_file_past_1_mib_is_refused(self):
        big = os.path.join(self.home, "config")
        with open(big, "w") as f:
            f.write("[default]\nregion = eu-west-1\n")
            f.write(("# padding " + "x" * 90 + "\n") * 11000)  # 1.1 MB of comments
        self.assertGreater(os.path.getsize(big), 1 << 20)
        p = zt_s3(self.base(AWS_CONFIG_FILE=big))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("is larger than 1 MiB", p.stderr)
        self.assertNotIn("Couldn't connect", p.stderr)
        # A file just under the cap is read.
        with open(big, "w") as f:
            f.write("[default]\nregion = eu-west-1\n")
            f.write(("# padding " + "x" * 90 + "\n") * 10000)
        p = zt_s3(self.base(AWS_CONFIG_FILE=big))
        self.assertIn("Couldn't connect", p.stderr)

    def test_not_read_when_the_environment_gives_everything(self):
        # Keys, region and endpoint from the environment: neither file is
        # opened, so FIFOs (and /dev/zero) there cost nothing.
        for path in (self.fifo, "/dev/zero"):
            with self.subTest(path=path):
                p = zt_s3(self.base(AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG",
                                    AWS_SESSION_TOKEN="FwoGZXIvYXdzEJr", AWS_CONFIG_FILE=path,
                                    AWS_SHARED_CREDENTIALS_FILE=path))
                self.assertEqual(p.returncode, 3, p.stderr)
                self.assertIn("Couldn't connect", p.stderr)
                self.assertNotIn("AWS file", p.stderr)

    def test_keys_from_environment_skip_the_credentials_file(self):
        # No region in the environment: the config file is read for it, the
        # credentials file (keys) is not.
        cfg = os.path.join(self.home, "config")
        with open(cfg, "w") as f:
            f.write("[default]\nregion = eu-west-1\n")
        env = self.base(AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG", AWS_CONFIG_FILE=cfg,
                        AWS_SHARED_CREDENTIALS_FILE=self.fifo)
        del env["AWS_REGION"]
        p = zt_s3(env)
        self.assertIn("Couldn't connect", p.stderr)
        self.assertNotIn("AWS file", p.stderr)

    def test_a_secret_inside_its_placeholder_does_not_hang(self):
        # Secrets are scrubbed from libcurl's messages: one that occurs in
        # its own placeholder ("s" in "<secret>", "t" in "<session token>")
        # once made the scrubbing loop for ever, growing the message.
        for key, value in (("AWS_SECRET_ACCESS_KEY", "s"), ("AWS_SESSION_TOKEN", "t")):
            with self.subTest(key=key):
                env = self.base(AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG")
                env[key] = value
                p = zt_s3(env)
                self.assertEqual(p.returncode, 3, p.stderr)
                self.assertIn("GET the last", p.stderr)
                self.assertLess(len(p.stderr), 2000)


if __name__ == "__main__":
    unittest.main()
