"""s3rver (npm), a real S3 server implementation, for the remote tests:
installed with `npm ci` from tests/remote/s3rver/package-lock.json into a
folder of the build (or $ZT_NPM_PREFIX), started on 127.0.0.1 on a free port
with its data in a temporary folder, and stopped by pid.

s3rver speaks S3's protocol and errors (NoSuchKey, NoSuchBucket, the XML
error bodies, ETag, If-Match) and knows one access key id, S3RVER (secret
S3RVER); it does not check signatures (test_s3_sig.py does, with botocore).
It answers a suffix range ("bytes=-N") from the object's start: the client
falls back to an explicit range for such servers."""
import fcntl
import filecmp
import os
import shutil
import subprocess
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = os.path.join(HERE, "s3rver")
ACCESS_KEY = SECRET_KEY = "S3RVER"


def install(prefix):
    """The s3rver executable under prefix, installed by `npm ci` unless the
    same lock file was installed there already. Raises RuntimeError with
    npm's own words when npm is missing or the registry unreachable.

    Several remote tests start at once (meson runs them in parallel) and
    share the prefix: an exclusive flock serialises them, and the install
    counts as done only once `npm ci` has finished (a copy of the lock file
    written afterwards), so no test runs a half-installed tree or removes
    node_modules under another's `npm ci` (ENOTEMPTY)."""
    binary = os.path.join(prefix, "node_modules", ".bin", "s3rver")
    spec_lock = os.path.join(SPEC, "package-lock.json")
    done = os.path.join(prefix, "installed-package-lock.json")
    os.makedirs(prefix, exist_ok=True)
    with open(os.path.join(prefix, ".install.lock"), "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if os.path.exists(binary) and os.path.exists(done) and filecmp.cmp(done, spec_lock, shallow=False):
            return binary
        npm = shutil.which("npm")
        if not npm:
            raise RuntimeError("npm not found (Debian: nodejs and npm, tools/dev.sh deps)")
        if os.path.exists(done):
            os.remove(done)
        for f in ("package.json", "package-lock.json"):
            shutil.copy(os.path.join(SPEC, f), os.path.join(prefix, f))
        p = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=prefix,
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0 or not os.path.exists(binary):
            raise RuntimeError(f"npm ci of s3rver failed (exit {p.returncode}): {(p.stderr or p.stdout)[-2000:]}")
        shutil.copy(spec_lock, done)
        return binary


class S3rver:
    def __init__(self, binary, workdir, buckets):
        self.binary = binary
        self.data = os.path.join(workdir, "s3rver-data")
        os.makedirs(self.data, exist_ok=True)
        self.buckets = list(buckets)
        self.proc = None
        self.port = None
        self.output = []

    def start(self):
        args = ["node", self.binary, "-d", self.data, "-a", "127.0.0.1", "-p", "0"]
        for b in self.buckets:
            args += ["--configure-bucket", b]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        found = threading.Event()

        def reader():
            for line in self.proc.stdout:
                self.output.append(line)
                if "listening on 127.0.0.1:" in line and self.port is None:
                    self.port = int(line.rsplit(":", 1)[1])
                    found.set()

        threading.Thread(target=reader, daemon=True).start()
        if not found.wait(30):
            self.stop()
            raise RuntimeError("s3rver did not start: " + "".join(self.output)[-2000:])

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    def put(self, bucket, key, data):
        """An unsigned PUT (s3rver accepts anonymous writes)."""
        from urllib.parse import quote
        req = urllib.request.Request(f"{self.endpoint}/{bucket}/{quote(key, safe='/~')}", data=data, method="PUT")
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 200, r.status
            return r.headers.get("ETag")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        time.sleep(0)
