"""The link simulator's own accuracy (link_sim.py): the round trip of a
request, the rate of one connection and the total cap within 10% of what
was asked, and its counters exact. Through a real nginx on loopback."""
import http.client
import os
import statistics
import threading
import time

import pytest

from link_client import LinkSim
from nginx_server import Nginx, find_nginx

# Long enough that a busy machine's scheduling delays (a few ms) stay far
# inside the 10% asked of the simulator.
RTT_MS = 150
MBIT = 80  # 10 MB/s: a 4 MiB body takes 0.42 s


@pytest.fixture(scope="module")
def nginx(tmp_path_factory):
    work = tmp_path_factory.mktemp("linksim")
    root = work / "www"
    os.makedirs(root)
    (root / "small").write_bytes(b"x" * 100)
    (root / "big").write_bytes(os.urandom(4 << 20))
    server = Nginx(find_nginx(), str(work), str(root))
    server.start()
    yield server
    server.stop()


def get(conn, path, rng=None):
    conn.request("GET", path, headers={"Range": rng} if rng else {})
    r = conn.getresponse()
    return r.read()


def within(measured, expected, tol=0.10):
    return abs(measured - expected) <= tol * expected


def test_round_trip_and_handshake(nginx):
    sim = LinkSim(nginx.port, RTT_MS)
    try:
        firsts = []
        for _ in range(3):  # a new connection: handshake + request
            conn = http.client.HTTPConnection("127.0.0.1", sim.port)
            t0 = time.perf_counter()
            get(conn, "/small")
            firsts.append(time.perf_counter() - t0)
            conn.close()
        first = min(firsts)  # a busy machine's delays only add: the least is the simulator's
        conn = http.client.HTTPConnection("127.0.0.1", sim.port)
        get(conn, "/small")
        times = []
        for _ in range(9):
            t0 = time.perf_counter()
            get(conn, "/small")
            times.append(time.perf_counter() - t0)
        conn.close()
        sim.settle()
        st = sim.stats()
    finally:
        sim.stop()
    rtt = RTT_MS / 1000
    assert within(statistics.median(times), rtt), (times, rtt)
    assert within(first, 2 * rtt), (first, rtt)
    assert st["connections"] == 4 and st["requests"] == 13, st


def test_connection_rate(nginx):
    sim = LinkSim(nginx.port, RTT_MS, conn_mbit=MBIT)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", sim.port)
        get(conn, "/small")  # connected
        t0 = time.perf_counter()
        body = get(conn, "/big")
        dt = time.perf_counter() - t0
        conn.close()
        sim.settle()
        st = sim.stats()
    finally:
        sim.stop()
    expected = RTT_MS / 1000 + len(body) / (MBIT * 1e6 / 8)
    assert within(dt, expected), (dt, expected)
    assert st["requests"] == 2 and st["connections"] == 1
    assert len(body) + 100 < st["bytes_down"] < len(body) + 100 + 2048, st  # bodies and headers


def test_total_cap(nginx):
    # Two connections, each allowed the whole cap: together they get it once.
    sim = LinkSim(nginx.port, RTT_MS, conn_mbit=MBIT, total_mbit=MBIT)
    try:
        conns = [http.client.HTTPConnection("127.0.0.1", sim.port) for _ in range(2)]
        for c in conns:
            get(c, "/small")
        half = 2 << 20
        ranges = [f"bytes=0-{half - 1}", f"bytes={half}-{2 * half - 1}"]
        got = [None, None]

        def fetch(i):
            got[i] = get(conns[i], "/big", ranges[i])

        t0 = time.perf_counter()
        threads = [threading.Thread(target=fetch, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        dt = time.perf_counter() - t0
        for c in conns:
            c.close()
        sim.settle()
        st = sim.stats()
    finally:
        sim.stop()
    assert [len(g) for g in got] == [half, half]
    expected = RTT_MS / 1000 + 2 * half / (MBIT * 1e6 / 8)
    assert within(dt, expected), (dt, expected)
    assert st["connections"] == 2 and st["requests"] == 4, st


def test_loopback_only():
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, os.path.join(here, "link_sim.py"), "--upstream", "10.0.0.1:80",
                        "--lifetime", "1"], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "not a loopback address" in r.stderr
