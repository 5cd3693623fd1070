"""Forked children survive (issue 37): a Reader opened before a fork (a
DataLoader's workers, multiprocessing with the fork start method) works in
the child, which may start threads of its own, read, and close it, while
the parent's prefetch thread runs; a reader of a URL opens its own
connections in the child instead of sharing the parent's."""
import gc
import hashlib
import http.server
import multiprocessing
import os
import re
import sys
import threading

import numpy as np
import pytest

import ztensor
import ztensor.numpy as ztnp

posix_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")

N, SIZE = 6, 8 << 20


def write_file(path):
    rng = np.random.default_rng(11)
    tensors = {f"t{i}": rng.integers(0, 255, SIZE, dtype=np.uint8) for i in range(N)}
    ztnp.save_file(tensors, str(path))
    return {k: hashlib.sha256(v.tobytes()).hexdigest() for k, v in tensors.items()}


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def digests(reader, names):
    return {n: hashlib.sha256(np.ascontiguousarray(reader[n]).tobytes()).hexdigest() for n in names}


# The reader the children inherit (module state: the fork start method
# copies it; nothing is pickled).
INHERITED = {}


def child_uses_and_closes(expected, queue):
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    r = INHERITED.pop("reader")
    ok = digests(r, list(expected)) == expected
    r.close()
    del r
    gc.collect()  # the last reference: zt_close runs here
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    queue.put(ok)


def read_one(name):
    return name, hashlib.sha256(np.ascontiguousarray(INHERITED["reader"][name]).tobytes()).hexdigest()


@posix_only
@pytest.mark.parametrize("use_mmap", [True, False])
def test_a_forked_child_reads_and_closes_a_prefetching_reader(tmp_path, use_mmap):
    path = str(tmp_path / "m.zt")
    expected = write_file(path)
    evict(path)
    ctx = multiprocessing.get_context("fork")
    r = ztensor.Reader(path, mmap=use_mmap, prefetch=True)
    INHERITED["reader"] = r
    try:
        queue = ctx.Queue()
        p = ctx.Process(target=child_uses_and_closes, args=(expected, queue))
        p.start()
        p.join(60)
        if p.exitcode is None:
            p.kill()
        assert p.exitcode == 0, f"the child ended with {p.exitcode} (-6: SIGABRT at close; None: it hung)"
        assert queue.get(timeout=5), "the child read other bytes than the file holds"
        # A pool of workers (the DataLoader pattern) reading the inherited reader.
        with ctx.Pool(2) as pool:
            assert dict(pool.map(read_one, sorted(expected))) == expected
        assert digests(r, list(expected)) == expected
    finally:
        INHERITED.pop("reader", None)
        r.close()


class RangeHandler(http.server.BaseHTTPRequestHandler):
    """Serves server.data with byte ranges (keep-alive)."""
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802
        data = self.server.data
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
        if not m or (not m.group(1) and not m.group(2)):
            self.send_response(416)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if not m.group(1):
            start, end = max(0, len(data) - int(m.group(2))), len(data) - 1
        else:
            start = int(m.group(1))
            end = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
        body = data[start:end + 1]
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", '"fork-test"')
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class CountingServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    connections = 0

    def process_request(self, request, client_address):
        type(self).connections += 1
        super().process_request(request, client_address)


def child_reads_url(expected, queue):
    r = INHERITED.pop("reader")
    ok = digests(r, list(expected)) == expected
    r.close()
    del r
    gc.collect()
    queue.put(ok)


@posix_only
def test_a_forked_child_opens_its_own_connections(tmp_path):
    path = str(tmp_path / "m.zt")
    expected = write_file(path)
    with open(path, "rb") as f:
        data = f.read()
    server = CountingServer(("127.0.0.1", 0), RangeHandler)
    server.data = data
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/m.zt"
        r = ztensor.open_url(url, retries=0, max_parallel=1)
        INHERITED["reader"] = r
        first = sorted(expected)[:1]
        assert digests(r, first) == {k: expected[k] for k in first}
        before = CountingServer.connections
        ctx = multiprocessing.get_context("fork")
        queue = ctx.Queue()
        p = ctx.Process(target=child_reads_url, args=(expected, queue))
        p.start()
        p.join(60)
        if p.exitcode is None:
            p.kill()
        assert p.exitcode == 0, f"the child ended with {p.exitcode}"
        assert queue.get(timeout=5)
        # The parent's idle connection was not used by the child: its
        # requests came on connections of its own.
        assert CountingServer.connections > before, "the child read through the parent's connection"
        assert digests(r, list(expected)) == expected
        INHERITED.pop("reader", None)
        r.close()
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
