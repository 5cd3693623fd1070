"""A small real HTTP/1.1 server (sockets, http.server) for the faults nginx
cannot produce: 503 then success, truncated bodies, lying Content-Length,
endless bodies, huge headers, redirect loops, an ETag that keeps changing,
a size that turns unknown, a 1 byte/s server, one-byte requests that
stall (/stallwarm), a footer claiming a 1 GiB
manifest, a redirect to another host, multi-range answers out of order
(/mpswap) or with an endless epilogue (/mpendless; /ok answers a
multi-range request with one range: the whole object as a 206).
It serves one file's bytes with Range support; the path picks the fault.
Every request's headers are kept in `requests` as (path, {name: value})."""
import http.server
import re
import threading
import time


class FaultServer:
    def __init__(self, data):
        self.data = data
        self.hits = {}
        self.requests = []
        self.files = {}  # path: bytes, served whole or by Range (besides the fault paths)
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                path = self.path.split("?")[0]
                with outer.lock:
                    n = outer.hits.get(path, 0)
                    outer.hits[path] = n + 1
                    outer.requests.append((path, {k.lower(): v for k, v in self.headers.items()}))
                try:
                    outer.serve(self, path, n)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        # A client that gives up on a hostile response resets the
        # connection: expected here, not worth a traceback.
        self.httpd.handle_error = lambda request, client_address: None
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def range_of(self, h, size=None):
        m = re.match(r"bytes=(\d*)-(\d*)$", h.headers.get("Range", ""))
        size = len(self.data) if size is None else size
        if not m:
            return 0, size - 1
        a, b = m.group(1), m.group(2)
        if a == "":
            n = int(b)
            return max(0, size - n), size - 1
        return int(a), min(int(b) if b else size - 1, size - 1)

    def send_range(self, h, etag='"v1"', body_cut=None, length_lie=0, data=None):
        data = self.data if data is None else data
        a, b = self.range_of(h, len(data))
        body = data[a:b + 1]
        h.send_response(206)
        h.send_header("Content-Range", f"bytes {a}-{b}/{len(data)}")
        h.send_header("Content-Length", str(len(body) + length_lie))
        h.send_header("ETag", etag)
        h.end_headers()
        h.wfile.write(body if body_cut is None else body[:body_cut])
        if body_cut is not None or length_lie:
            h.close_connection = True

    def serve(self, h, path, n):
        if path in self.files:
            self.send_range(h, data=self.files[path])
        elif path == "/ok":
            self.send_range(h)
        elif path == "/stallwarm":  # served, but a one-byte request (a prefetch open's warm-up) stalls
            if h.headers.get("Range") == "bytes=0-0":
                h.send_response(206)
                h.send_header("Content-Range", f"bytes 0-0/{len(self.data)}")
                h.send_header("Content-Length", "1")
                h.end_headers()
                h.wfile.flush()
                time.sleep(40)
                return
            self.send_range(h)
        elif path == "/flaky503":  # 503 twice, then served
            if n < 2:
                h.send_response(503)
                h.send_header("Content-Length", "0")
                h.end_headers()
            else:
                self.send_range(h)
        elif path == "/truncated":  # half the body, then the connection closes
            a, b = self.range_of(h)
            self.send_range(h, body_cut=(b - a + 1) // 2)
        elif path == "/lying":  # Content-Length promises 1000 bytes more than sent
            self.send_range(h, length_lie=1000)
        elif path == "/endless":  # a 206 without length whose body never ends
            a, b = self.range_of(h)
            h.send_response(206)
            h.send_header("Content-Range", f"bytes {a}-{b}/{len(self.data)}")
            h.send_header("Connection", "close")
            h.end_headers()
            chunk = b"\0" * 65536
            for _ in range(16384):  # 1 GiB at most, should the client keep reading
                h.wfile.write(chunk)
        elif path == "/mpswap":  # multi-range answered as multipart, its parts in reverse order
            spec = h.headers.get("Range", "")[len("bytes="):].split(",")
            if len(spec) < 2:
                self.send_range(h)
                return
            parts = [tuple(int(x) for x in r.split("-")) for r in spec][::-1]
            body = b""
            for a, b in parts:
                body += (f"\r\n--SEP\r\nContent-Type: application/octet-stream\r\n"
                         f"Content-Range: bytes {a}-{b}/{len(self.data)}\r\n\r\n").encode() + self.data[a:b + 1]
            body += b"\r\n--SEP--\r\n"
            h.send_response(206)
            h.send_header("Content-Type", "multipart/byteranges; boundary=SEP")
            h.send_header("Content-Length", str(len(body)))
            h.send_header("ETag", '"v1"')
            h.end_headers()
            h.wfile.write(body)
        elif path == "/mpendless":  # multi-range parts as asked, then an epilogue that never ends
            spec = h.headers.get("Range", "")[len("bytes="):].split(",")
            if len(spec) < 2:
                self.send_range(h)
                return
            h.send_response(206)
            h.send_header("Content-Type", "multipart/byteranges; boundary=SEP")
            h.send_header("ETag", '"v1"')
            h.send_header("Connection", "close")
            h.end_headers()
            for a, b in (tuple(int(x) for x in r.split("-")) for r in spec):
                h.wfile.write((f"\r\n--SEP\r\nContent-Range: bytes {a}-{b}/{len(self.data)}\r\n\r\n").encode()
                              + self.data[a:b + 1])
            h.wfile.write(b"\r\n--SEP--\r\n")
            chunk = b"\0" * 65536
            for _ in range(16384):  # 1 GiB at most, should the client keep reading
                h.wfile.write(chunk)
        elif path == "/hugeheaders":
            h.send_response(206)
            for i in range(2000):
                h.send_header(f"X-Filler-{i}", "x" * 100)
            h.send_header("Content-Length", "0")
            h.end_headers()
        elif path == "/loop":
            h.send_response(302)
            h.send_header("Location", "/loop")
            h.send_header("Content-Length", "0")
            h.end_headers()
        elif path.startswith("/to/"):  # /to/HOST:PORT/PATH: a redirect to http://HOST:PORT/PATH
            _, _, where = path.partition("/to/")
            host, _, rest = where.partition("/")
            h.send_response(302)
            h.send_header("Location", f"http://{host}/{rest}")
            h.send_header("Content-Length", "0")
            h.end_headers()
        elif path == "/changing":  # a new ETag on every response
            self.send_range(h, etag=f'"v{n}"')
        elif path == "/star":  # after the open (the tail and the header block, sent together), "a-b/*"
            a, b = self.range_of(h)
            body = self.data[a:b + 1]
            opening = h.headers.get("Range", "").startswith("bytes=-") or h.headers.get("Range") == "bytes=0-65535"
            h.send_response(206)
            h.send_header("Content-Range", f"bytes {a}-{b}/{len(self.data) if opening else '*'}")
            h.send_header("Content-Length", str(len(body)))
            h.send_header("ETag", '"v1"')
            h.end_headers()
            h.wfile.write(body)
        elif path == "/slow":  # 1 byte per second, for ever
            a, b = self.range_of(h)
            h.send_response(206)
            h.send_header("Content-Range", f"bytes {a}-{b}/{len(self.data)}")
            h.send_header("Content-Length", str(b - a + 1))
            h.end_headers()
            for i in range(a, b + 1):
                h.wfile.write(self.data[i:i + 1])
                h.wfile.flush()
                time.sleep(1)
        elif path == "/claims1g":  # a 2 GiB object whose footer claims a 1 GiB manifest, never sent
            size = 2 << 30
            m = re.match(r"bytes=(\d*)-(\d*)$", h.headers.get("Range", ""))
            if m.group(1) == "":
                n_tail = int(m.group(2))
                body = bytearray(n_tail)
                body[-16:] = ((1 << 30) - 64).to_bytes(8, "little") + b"ZTEN1000"
                a = size - n_tail
            else:
                a = int(m.group(1))
                b = int(m.group(2))
                if b - a + 1 > 65536:  # the manifest: headers, a trickle, then the connection drops
                    h.send_response(206)
                    h.send_header("Content-Range", f"bytes {a}-{b}/{size}")
                    h.send_header("Content-Length", str(b - a + 1))
                    h.send_header("Connection", "close")
                    h.end_headers()
                    h.wfile.write(b"\0" * 4096)
                    h.wfile.flush()
                    time.sleep(1.5)
                    h.close_connection = True
                    return
                body = bytes(b - a + 1)
                body = b"ZTEN0001" + body[8:] if a == 0 else body
            h.send_response(206)
            h.send_header("Content-Range", f"bytes {a}-{a + len(body) - 1}/{size}")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(bytes(body))
        else:
            h.send_response(404)
            h.send_header("Content-Length", "0")
            h.end_headers()
