"""v2 shards over HTTP (docs/v2.md, "Shards"): a root's shards are fetched
next to its URL (its query string stays with the root), never outside its
folder, and a remote open fetches every shard's tail at once: through the
link simulator (25 ms round trips) an 8-shard v2 root and an 8-shard v1 set
each open in a few round trips, not eight times one shard's."""
import os
import subprocess
import time

import numpy as np
import pytest

import ztensor

from link_client import LinkSim
from nginx_server import Nginx, find_nginx
from sharded_models import shard_tensors, write_sharded_models

SHARDS = 8
RTT_MS = 25


def tensors():
    return shard_tensors(SHARDS)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    work = tmp_path_factory.mktemp("shards")
    root = work / "www"
    t = tensors()
    write_sharded_models(work, root, t)  # v2: 8 data shards beside model.zt; v1: 8 files and an index
    assert len(os.listdir(root / "v2")) == SHARDS + 1
    server = Nginx(find_nginx(), str(work), str(root))
    server.start()
    sim = LinkSim(server.port, RTT_MS)
    yield t, server, sim, root
    sim.stop()
    server.stop()


def test_v2_root_over_http_reads_its_shards(served):
    t, server, _, _ = served
    mark = len(server.log_lines())
    with ztensor.Reader(f"{server.base}/v2/model.zt?sig=secret-sig") as r:
        assert sorted(r) == sorted(t)
        for name, want in t.items():
            np.testing.assert_array_equal(r[name], want)
        r.verify()  # the shards' whole-file sha256 too
    lines = server.log_lines()[mark:]
    paths = " ".join(lines)
    for s in range(1, SHARDS + 1):
        assert f"/v2/model-{s:05d}-of-{SHARDS:05d}.zt" in paths
    shard_lines = [line for line in lines if "-of-" in line]
    assert shard_lines and not any("secret-sig" in line for line in shard_lines)  # the query stays with the root


def test_zt_merge_of_a_remote_v2_root(served, tmp_path):
    t, server, _, _ = served
    out = tmp_path / "joined.zt"
    subprocess.run([os.environ["ZT_TOOL"], "merge", f"{server.base}/v2/model.zt", "-o", str(out), "--quiet"],
                   check=True)
    loaded = ztensor.load_file(str(out))
    assert sorted(loaded) == sorted(t)
    for name, want in t.items():
        np.testing.assert_array_equal(loaded[name], want)


def test_v2_missing_remote_shard_costs_its_parts(served):
    t, server, _, root = served
    victim = root / "v2" / f"model-00003-of-{SHARDS:05d}.zt"
    os.rename(victim, str(victim) + ".away")
    try:
        with ztensor.Reader(f"{server.base}/v2/model.zt") as r:
            np.testing.assert_array_equal(r["s0.w"], t["s0.w"])
            with pytest.raises(ztensor.ZTensorError, match="00003-of-00008"):
                r["s2.w"]
    finally:
        os.rename(str(victim) + ".away", victim)


def timed(fn, tries=3):
    best = None
    for _ in range(tries):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best


def test_shards_open_in_parallel(served):
    """One shard's open is about 2-3 round trips (connect, tail, manifest);
    eight one after another would be 16 or more. Both kinds of multi-file
    model open in about the cost of two single files (the root or index,
    then all shards at once). Bounds are generous (a loaded machine)."""
    _, _, sim, _ = served
    rtt = RTT_MS / 1000

    def open_v2():
        with ztensor.Reader(f"{sim.base}/v2/model.zt") as r:
            assert len(r) == SHARDS

    def open_one():
        with ztensor.Reader(f"{sim.base}/v1/model-00000.zt") as r:
            assert len(r) == 1

    def open_v1():
        with ztensor.ShardedReader(f"{sim.base}/v1/model.zt.index.json") as r:
            assert len(r.shards) == SHARDS

    one, v2, v1 = timed(open_one), timed(open_v2), timed(open_v1)
    print(f"\n25 ms RTT: one file {one / rtt:.1f} RTT, 8-shard v2 root {v2 / rtt:.1f} RTT, "
          f"8-shard v1 set {v1 / rtt:.1f} RTT")
    assert v2 < one + 4 * rtt + 0.1, (one, v2)   # root + all shards at once, not 8 x one
    assert v1 < one + 4 * rtt + 0.1, (one, v1)
    assert v2 < 4 * one and v1 < 4 * one
