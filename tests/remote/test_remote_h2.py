"""HTTP/2 (docs/remote.md, "Ranges under latency"): against nginx serving
https with HTTP/2 offered (a self-signed certificate made here, trusted
through CURL_CA_BUNDLE), a column split's requests are streams of one
connection, where the same load over HTTP/1.1 opens several; a whole-file
load's large pieces still get a connection each. Counted by nginx (which
connection carried each request, and its protocol), zt_file_io_stats and
the link simulator's connection counter."""
import os
import shutil
import subprocess

import numpy as np
import pytest

import ztensor
from ztensor.distributed import load_rank_slices

from link_client import LinkSim
from nginx_server import Nginx, find_nginx

ROWS, COLS = 512, 2048  # f32: rows of 8 KiB


def make_cert(folder):
    cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
                    "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    if not shutil.which("openssl"):
        pytest.skip("openssl (the command) is needed to make the test's certificate")
    work = tmp_path_factory.mktemp("h2")
    root = work / "www"
    os.makedirs(root)
    rng = np.random.default_rng(7)
    tensors = {"w": rng.standard_normal((ROWS, COLS)).astype(np.float32),
               "big": rng.standard_normal(6 << 20).astype(np.float32)}
    ztensor.save_file(tensors, str(root / "m.zt"))
    tls = make_cert(str(work))
    h2 = Nginx(find_nginx(), str(work / "h2"), str(root), tls=tls, http2=True)
    h1 = Nginx(find_nginx(), str(work / "h1"), str(root), tls=tls, http2=False)
    old = os.environ.get("CURL_CA_BUNDLE")
    os.environ["CURL_CA_BUNDLE"] = tls[0]
    h2.start()
    h1.start()
    yield tensors, h2, h1
    h2.stop()
    h1.stop()
    if old is None:
        del os.environ["CURL_CA_BUNDLE"]
    else:
        os.environ["CURL_CA_BUNDLE"] = old


def conn_lines(server):
    server.log_lines()  # settled: nginx logs a request after answering it
    try:
        with open(server.conn_log) as f:
            return [ln.split() for ln in f.read().splitlines()]
    except FileNotFoundError:
        return []


def column_split(base, tensors):
    part, st = load_rank_slices(f"{base}/m.zt", {"w": 1}, 0, 4, framework="np")
    np.testing.assert_array_equal(part["w"], tensors["w"][:, :COLS // 4])
    return st


def test_untrusted_certificate_is_refused(servers):
    _, h2, _ = servers
    os.environ["CURL_CA_BUNDLE"] = "/nonexistent/ca.pem"
    try:
        with pytest.raises(ztensor.ZTensorError):
            ztensor.open(f"{h2.base}/m.zt")
    finally:
        os.environ["CURL_CA_BUNDLE"] = h2.tls[0]


def test_slices_multiplex_over_one_connection(servers):
    tensors, h2, h1 = servers
    # The column split's 512 rows: multi-range requests packed for the
    # connections, several in flight at once behind a 20 ms round trip
    # (on bare loopback one connection may serve them one after another).
    seen = {}
    for name, server in (("h2", h2), ("h1", h1)):
        mark = len(conn_lines(server))
        sim = LinkSim(server.port, 20)
        try:
            st = column_split(f"https://127.0.0.1:{sim.port}", tensors)
            sim.settle()
            seen[name] = (st, sim.stats(), conn_lines(server)[mark:])
        finally:
            sim.stop()
    (st2, sim2, lines2), (st1, sim1, lines1) = seen["h2"], seen["h1"]
    assert {ln[1] for ln in lines2} == {"HTTP/2.0"}, lines2
    assert {ln[1] for ln in lines1} == {"HTTP/1.1"}, lines1
    # Every request counted, by nginx and by the library.
    assert len(lines2) == st2["requests"] and len(lines1) == st1["requests"]
    assert st2["requests"] > 4, st2  # several in flight: a test of multiplexing
    # HTTP/2: the open's connection carries every request; HTTP/1.1 opens
    # one per request in flight.
    assert len({ln[0] for ln in lines2}) == 1 and sim2["connections"] == 1, (lines2, sim2)
    assert len({ln[0] for ln in lines1}) > 2 and sim1["connections"] > 2, (lines1, sim1)


def test_large_pieces_get_connections_of_their_own(servers):
    tensors, h2, _ = servers
    sim = LinkSim(h2.port, 10, conn_mbit=4000)
    try:
        # Through the simulator's port: the certificate names 127.0.0.1.
        with ztensor.open(f"https://127.0.0.1:{sim.port}/m.zt") as r:
            got = r.read_many()
            st = r.io_stats()
        sim.settle()
        seen = sim.stats()
    finally:
        sim.stop()
    np.testing.assert_array_equal(got["big"], tensors["big"])
    np.testing.assert_array_equal(got["w"], tensors["w"])
    # 28 MiB in pieces of at least 1 MiB: one connection each, as over
    # HTTP/1.1 (a connection carries what one TCP flow does).
    assert st["requests"] >= 8
    assert seen["connections"] >= 8, seen
