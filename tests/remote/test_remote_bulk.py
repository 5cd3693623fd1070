"""Whole-file loads of a remote file (zt_file_read_many of every tensor):
the blobs go to the source as one plan, spread over the connections as one
wave of requests straight into the readers' buffers (docs/remote.md,
"Reads, coalescing and the cache"), not as 4 MiB pieces each waiting its
own round trip. Counted by zt_file_io_stats and nginx's access log, through
the link simulator (25 ms) and straight on loopback."""
import os

import numpy as np
import pytest

import ztensor

from link_client import LinkSim
from nginx_server import Nginx, find_nginx

BIG = 4 << 20  # f32 elements: 16 MiB tensors


def model():
    """Two 16 MiB tensors, then a run of 64 small ones (100 KiB, odd sizes:
    padding between them) that groups of up to 4 MiB carry, then one
    more large one."""
    rng = np.random.default_rng(5)
    t = {"a.big": rng.standard_normal(BIG).astype(np.float32),
         "b.big": rng.standard_normal(BIG).astype(np.float32)}
    for i in range(64):
        t[f"c.small{i:02d}"] = rng.standard_normal(25600 + i).astype(np.float32)
    t["d.big"] = rng.standard_normal(BIG // 2).astype(np.float32)
    return t


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    work = tmp_path_factory.mktemp("bulk")
    root = work / "www"
    os.makedirs(root)
    tensors = model()
    ztensor.save_file(tensors, str(root / "m.zt"))
    server = Nginx(find_nginx(), str(work), str(root))
    server.start()
    yield tensors, server
    server.stop()


def load(url, **options):
    with ztensor.open_url(url, **options) as r:
        opened = r.io_stats()
        got = r.read_many()
        st = r.io_stats()
    return got, st["requests"] - opened["requests"], st["bytes"] - opened["bytes"], \
        st["bytes_needed"] - opened["bytes_needed"]


def check(tensors, got):
    assert sorted(got) == sorted(tensors)
    for name, want in tensors.items():
        np.testing.assert_array_equal(got[name], want, err_msg=name)


def test_one_wave_behind_latency(served):
    tensors, server = served
    total = sum(v.nbytes for v in tensors.values())
    sim = LinkSim(server.port, 25, conn_mbit=2000)
    try:
        got, requests, fetched, needed = load(f"{sim.base}/m.zt")
    finally:
        sim.stop()
    check(tensors, got)
    assert needed == total
    # Padding between blobs only: nothing else fetched.
    assert needed <= fetched < needed + 64 * 64, (fetched, needed)
    # 46 MiB over 16 connections: 16 pieces of ~3 MiB, and a piece more where
    # a range ends inside one. 4 MiB pieces on threads, each cut into 1 MiB
    # requests, made 46.
    assert requests <= 20, requests


def test_chunk_bytes_is_a_hard_cap(served):
    tensors, server = served
    mark = len(server.log_lines())
    got, requests, fetched, needed = load(f"{server.base}/m.zt", chunk_bytes=1 << 20)
    check(tensors, got)
    sizes = [int(line.split()[4]) for line in server.log_lines()[mark:]]
    data = sizes[2:]  # after the open's tail and head
    assert len(data) == requests
    assert max(data) <= 1 << 20, max(data)
    # Every byte once: the 1 MiB pieces cut across tensors and padding.
    assert sum(data) == fetched and fetched < needed + 64 * 64
