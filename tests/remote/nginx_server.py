"""A real nginx for the remote tests: Debian's binary, run as the current
user (master_process off, daemon off) from a generated config in a temporary
folder, on 127.0.0.1 at a free port, with an access log of every request."""
import os
import shutil
import signal
import socket
import subprocess
import time

ACCESS_FORMAT = '$request_method $uri $status "$http_range" $body_bytes_sent "$http_authorization"'
# A second log: which connection carried each request, and its protocol.
CONN_FORMAT = '$connection $server_protocol $status'


def find_nginx():
    for candidate in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    """Serves `root`; /norange/ is the same tree with Range support off
    (max_ranges 0), as a server that ignores Range would; /onerange/ with
    one range per request (max_ranges 1: a multi-range request gets the
    whole object), as S3 and many CDNs do; /maxranges200/ answers at most
    200 ranges in one request (more get the whole object), as Apache's
    default MaxRanges does. tls=(cert, key) serves https;
    http2 then offers HTTP/2 (ALPN)."""

    def __init__(self, binary, workdir, root, tls=None, http2=False):
        self.binary, self.workdir, self.root = binary, workdir, root
        self.port = free_port()
        self.tls = tls
        self.access_log = os.path.join(workdir, "access.log")
        self.conn_log = os.path.join(workdir, "conn.log")
        listen = f"127.0.0.1:{self.port}" + (" ssl" if tls else "") + (" http2" if http2 else "")
        certs = f"ssl_certificate {tls[0]}; ssl_certificate_key {tls[1]};" if tls else ""
        self.proc = None
        for d in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.makedirs(os.path.join(workdir, d), exist_ok=True)
        conf = f"""
daemon off;
master_process off;
worker_processes 1;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log warn;
events {{ worker_connections 256; }}
http {{
  log_format zt '{ACCESS_FORMAT}';
  log_format conn '{CONN_FORMAT}';
  access_log {self.access_log} zt;
  access_log {self.conn_log} conn;
  client_body_temp_path {workdir}/body;
  proxy_temp_path {workdir}/proxy;
  fastcgi_temp_path {workdir}/fastcgi;
  uwsgi_temp_path {workdir}/uwsgi;
  scgi_temp_path {workdir}/scgi;
  default_type application/octet-stream;
  keepalive_requests 100000;
  server {{
    listen {listen};
    {certs}
    root {root};
    location /norange/ {{ alias {root}/; max_ranges 0; }}
    location /onerange/ {{ alias {root}/; max_ranges 1; }}
    location /maxranges200/ {{ alias {root}/; max_ranges 200; }}
  }}
}}
"""
        self.conf = os.path.join(workdir, "nginx.conf")
        with open(self.conf, "w") as f:
            f.write(conf)

    @property
    def base(self):
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def start(self):
        self.proc = subprocess.Popen([self.binary, "-p", self.workdir, "-c", self.conf, "-e",
                                      os.path.join(self.workdir, "error.log")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("nginx exited: " + self.proc.stderr.read().decode(errors="replace"))
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nginx did not start listening within 10 s")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def log_lines(self, settle=0.15, limit=5.0):
        """The access log's lines once it has stopped growing for `settle`
        seconds: nginx logs a request after it has sent the response, so a
        client can be done before its line is written."""
        import time

        def read():
            try:
                with open(self.access_log) as f:
                    return f.read().splitlines()
            except FileNotFoundError:
                return []

        deadline = time.monotonic() + limit
        lines = read()
        while time.monotonic() < deadline:
            time.sleep(settle)
            again = read()
            if len(again) == len(lines):
                return again
            lines = again
        return lines
