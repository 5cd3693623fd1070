"""How a whole-file load spreads over connections, counted by the link
simulator per connection (link_sim.py /conns; docs/remote.md, "Reads,
coalescing and the cache"): one piece per connection, each carrying its
share of the bytes, none a second wave; the connections of a load opened
while the open is in flight when the caller says a whole load follows
(prefetch, as load_file does); more connections than max_parallel's
default only where the link makes them worthwhile, never more than an
explicit max_parallel. Counts, not wall time."""
import os

import numpy as np
import pytest

import ztensor

from link_client import LinkSim
from nginx_server import Nginx, find_nginx

MiB = 1 << 20
RTT_MS = 80


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    work = tmp_path_factory.mktemp("conns")
    root = work / "www"
    os.makedirs(root)
    # Runs of unequal sizes, as a model's (an embedding, then layers): a
    # common piece size would leave remainders (more requests than
    # connections, a second wave on some).
    t = {"embed": np.full(17 * MiB // 4 + 1000, 1, dtype=np.float32)}
    for i in range(4):
        t[f"l{i}.up"] = np.full(9 * MiB // 4, i, dtype=np.float32)
        t[f"l{i}.b"] = np.full(100, i, dtype=np.float32)
    ztensor.save_file(t, str(root / "m.zt"))
    server = Nginx(find_nginx(), str(work), str(root))
    server.start()
    sim = LinkSim(server.port, RTT_MS, 200)
    yield sim, os.path.getsize(root / "m.zt"), t, server
    sim.stop()
    server.stop()


def load(sim, prefetch, **url_options):
    """One open + read_many of every tensor; what each connection carried."""
    sim.settle()
    sim.reset()
    with ztensor.Reader(f"{sim.base}/m.zt", prefetch=prefetch, url_options=url_options) as r:
        got = r.read_many()
    sim.settle()
    return got, [c for c in sim.conns() if c["bytes_down"] > 0]


def data_conns(conns):
    """The connections that carried a piece of the load (the open's carry
    at most its 64 KiB tail and header block)."""
    return [c for c in conns if c["bytes_down"] > 256 << 10]


def check_share(conns, size, n):
    """n connections carried the load, each its share: one piece (plus,
    on a connection the open used, the open's tail and header block)."""
    share = -(-size // n)
    pieces = data_conns(conns)
    assert len(pieces) == n, [c["bytes_down"] for c in conns]
    for c in pieces:
        assert c["bytes_down"] <= share + (132 << 10), (c, share)


def test_one_piece_per_connection(served):
    sim, size, t, _ = served
    # Requests of at most 8 MiB: the ~53 MiB are still 16 pieces on 16
    # connections (max_parallel's default), each its sixteenth, not runs
    # of 8 MiB each cut into 3.3 MiB pieces and remainders (21 requests,
    # a second wave on 5 connections).
    got, conns = load(sim, prefetch=False, chunk_bytes=8 * MiB)
    assert all(np.array_equal(got[k], v) for k, v in t.items())
    check_share(conns, size, 16)
    assert sum(c["requests"] for c in conns) == 2 + 16  # the open's two, one per piece


def test_prefetch_connects_during_the_open(served):
    sim, size, t, _ = served
    got, conns = load(sim, prefetch=True)
    assert all(np.array_equal(got[k], v) for k, v in t.items())
    check_share(conns, size, 16)
    # Every piece's connection was opened with the open's own two (a
    # one-byte request each), not after the open's round trips: accepted
    # before the first answer of all came back (a round trip after the
    # first request). An order, not a time: the simulator accepts
    # connections one at a time, slowly on a busy machine.
    first_answer = min(c["first_down"] for c in conns)
    for c in data_conns(conns):
        assert c["accepted"] < first_answer, (c, first_answer)
        assert c["requests"] == 2, c  # the warm-up and its piece


def test_explicit_max_parallel_is_a_hard_cap(served):
    sim, size, _, _ = served
    # A link whose figures (given, not measured) make many connections
    # worthwhile: the caller's max_parallel still bounds them.
    _, conns = load(sim, prefetch=True, max_parallel=5, rtt_ms=RTT_MS, link_bytes_per_s=2_000_000)
    check_share(conns, size, 5)
    assert len(conns) <= 5 + 2


def test_connections_grow_with_the_link(served):
    sim, size, _, _ = served
    # 80 ms and 5 MB/s a connection: a connection is worth 4 round trips
    # of streaming, 1.6 MB; the ~53 MiB load gets 34 connections.
    _, conns = load(sim, prefetch=False, rtt_ms=RTT_MS, link_bytes_per_s=5_000_000)
    n = int(size / (5_000_000 * 4 * RTT_MS / 1000))
    assert 30 <= n <= 40
    check_share(conns, size, n)
    # A fast link (1 GB/s given): 16, max_parallel's default.
    _, conns = load(sim, prefetch=False, rtt_ms=RTT_MS, link_bytes_per_s=1_000_000_000)
    check_share(conns, size, 16)



def test_connections_grow_from_load_to_load(served):
    """The rate measured by one load lets the next use more connections:
    at most twice as many, while the throughput rises (LinkModel::
    observe_bulk). A slow link (2.5 MB/s a connection, 80 ms): ~53 MiB
    are worth ~66 connections of 4 round trips' streaming."""
    _, _, t, server = served
    sim = LinkSim(server.port, RTT_MS, 20)
    try:
        sim.reset()
        with ztensor.Reader(f"{sim.base}/m.zt", prefetch=True) as r:
            counts = []
            for _ in range(2):
                before = [c["bytes_down"] for c in sim.conns()]
                got = r.read_many()
                sim.settle(0.2)
                after = [c["bytes_down"] for c in sim.conns()]
                before += [0] * (len(after) - len(before))
                counts.append(sum(1 for a, b in zip(after, before) if a - b > 256 << 10))
        assert all(np.array_equal(got[k], v) for k, v in t.items())
        # The first load: the rate not measured yet (the open's 64 KiB say
        # nothing of it), max_parallel's default. The second: twice that.
        assert counts == [16, 32], counts
    finally:
        sim.stop()
