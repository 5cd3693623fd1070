"""What a remote open costs in round trips, counted by the link simulator
(docs/remote.md, "What an open costs"): the tail and the header block go
out together, so a file whose manifest fits the tail opens in one round
trip after its connections (two requests, two connections opened at once);
a v2 root then opens its shards (connect + one round trip); an index set
opens its shards' connections while the index is in flight. At 25 and
80 ms."""
import os
import time

import numpy as np
import pytest

import ztensor

from link_client import LinkSim
from nginx_server import Nginx, find_nginx
from sharded_models import shard_tensors, write_sharded_models

SHARDS = 8


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    work = tmp_path_factory.mktemp("open_rtt")
    root = work / "www"
    os.makedirs(root)
    # One file of 1 MiB (larger than the 64 KiB tail), a small manifest.
    ztensor.save_file({"w": np.arange(1 << 18, dtype=np.float32)}, str(root / "one.zt"))
    write_sharded_models(work, root, shard_tensors(SHARDS))
    server = Nginx(find_nginx(), str(work), str(root))
    server.start()
    yield server
    server.stop()


def best_of(sim, fn, tries=3):
    """The fastest of `tries` opens (a loaded machine only adds) and the
    simulator's counters of that kind of open (the same every time)."""
    best, stats = None, None
    for _ in range(tries):
        sim.settle()
        sim.reset()
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        sim.settle()
        stats = sim.stats()
        best = dt if best is None else min(best, dt)
    return best, stats


@pytest.mark.parametrize("rtt_ms", [25, 80])
def test_open_round_trips(served, rtt_ms):
    sim = LinkSim(served.port, rtt_ms)
    try:
        rtt = rtt_ms / 1000

        def one():
            with ztensor.Reader(f"{sim.base}/one.zt") as r:
                assert len(r) == 1
                assert r.io_stats()["requests"] == 2  # the tail and the header block

        def v2():
            with ztensor.Reader(f"{sim.base}/v2/model.zt") as r:
                assert len(r) == SHARDS

        def v1():
            with ztensor.ShardedReader(f"{sim.base}/v1/model.zt.index.json") as r:
                assert len(r.shards) == SHARDS

        t1, s1 = best_of(sim, one)
        t2, s2 = best_of(sim, v2)
        t3, s3 = best_of(sim, v1)
        print(f"\n{rtt_ms} ms RTT: one file {t1 / rtt:.2f} RTT ({s1['requests']} requests, "
              f"{s1['connections']} connections), 8-shard v2 root {t2 / rtt:.2f} RTT ({s2['requests']} requests, "
              f"{s2['connections']} connections), 8-shard v1 set {t3 / rtt:.2f} RTT ({s3['requests']} requests, "
              f"{s3['connections']} connections)")
        # One file: two requests, sent together on two new connections:
        # connect + one round trip (was connect + two).
        assert s1["requests"] == 2, s1
        # Wall-time bounds only at 80 ms, and only when asked for
        # (ZT_TIMED_TESTS=1, on a quiet machine): a busy 2-core machine
        # added 30 ms to an 8-shard open in the full suite, past a bound
        # that still fails the open it replaced. The request and connection
        # counts hold under any load.
        timed = rtt_ms >= 80 and os.environ.get("ZT_TIMED_TESTS") == "1"
        assert not timed or t1 < 2.5 * rtt + 0.015, t1  # was 3.0-3.6 RTT
        # Shards: the root (2 requests) then every shard's tail and header
        # (2 each) at once: 18 requests, about 4 round trips with connects.
        assert s2["requests"] == 2 + 2 * SHARDS, s2
        assert not timed or t2 < 4.75 * rtt + 0.015, t2  # was 5.1-5.4 RTT
        # An index set: the index (one request: JSON read whole, no header
        # block) while 16 connections are opened for the shards (a one-byte
        # request each), then every shard's two requests on them: connect +
        # two round trips, no connect of the shards' own.
        assert s3["requests"] == 1 + 16 + 2 * SHARDS, s3
        assert s3["connections"] <= 1 + 16, s3
        assert not timed or t3 < 4.0 * rtt + 0.015, t3  # was 5.1-5.6 RTT
    finally:
        sim.stop()
