"""Tensor-parallel loading over loopback HTTP (nginx): W ranks each reading
their slice (ztensor.distributed.load_rank_slices) against one process
loading every tensor, in the same run.

Writes a 4-block MLP (d=1024, ff=4096, f32, ~134 MiB: up/gate weights split
by rows, down weights by columns, as Megatron-style column/row-parallel
linears), serves it with a real nginx (tests/remote/nginx_server.py) and
prints, median of --reps, per W: each rank's bytes fetched, the bytes of
all ranks together, and the wall time until every rank holds its slices,
as ratios against the single full load. Ranks are forked processes (no
torch needed; numpy arrays).

    ZTENSOR_LIBRARY=build/libztensor.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/tp_load_bench.py [--reps 3] [--dir /tmp]
"""
import argparse
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "remote"))

import numpy as np  # noqa: E402

import ztensor  # noqa: E402
from ztensor.distributed import load_rank_slices  # noqa: E402
from nginx_server import Nginx, find_nginx  # noqa: E402


def write_model(path):
    d, ff = 1024, 4096
    rng = np.random.default_rng(0)
    plan = {}
    with ztensor.Writer(path) as w:
        for i in range(4):
            for name, shape, dim in ((f"b{i}.up.weight", (ff, d), 0), (f"b{i}.gate.weight", (ff, d), 0),
                                     (f"b{i}.down.weight", (d, ff), 1), (f"b{i}.up.bias", (ff,), 0)):
                w.add(name, rng.standard_normal(shape, dtype=np.float32))
                plan[name] = dim
    return plan


def rank(args):
    url, plan, r, world, start_at = args
    while time.time() < start_at:
        time.sleep(0.001)
    _, stats = load_rank_slices(url, plan, r, world, framework="np")
    return time.time(), stats["bytes"]


def full_load(url):
    t0 = time.time()
    with ztensor.open(url) as rd:
        names = list(rd)
        for n in names:
            rd[n]
        return time.time() - t0, rd.io_stats()["bytes"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    work = tempfile.mkdtemp(dir=a.dir)
    root = os.path.join(work, "www")
    os.makedirs(root)
    plan = write_model(os.path.join(root, "m.zt"))
    size = os.path.getsize(os.path.join(root, "m.zt"))
    nginx = Nginx(find_nginx(), work, root)
    nginx.start()
    url = f"{nginx.base}/m.zt"
    try:
        base = [full_load(url) for _ in range(a.reps)]
        t_full = statistics.median(t for t, _ in base)
        b_full = base[0][1]
        print(f"file {size / 2**20:.1f} MiB; one process loading everything: {t_full * 1000:.0f} ms, "
              f"{b_full / 2**20:.1f} MiB fetched\n")
        print("| W | per-rank MiB (max) | max rank / full bytes | all ranks / full bytes | wall ms | wall vs full |")
        print("|---|---|---|---|---|---|")
        ctx = mp.get_context("fork")
        for world in (2, 4):
            walls, per_rank, total = [], 0, 0
            with ctx.Pool(world) as pool:
                for _ in range(a.reps):
                    start_at = time.time() + 0.2
                    res = pool.map(rank, [(url, plan, r, world, start_at) for r in range(world)])
                    walls.append(max(t for t, _ in res) - start_at)
                    per_rank, total = max(b for _, b in res), sum(b for _, b in res)
            wall = statistics.median(walls)
            print(f"| {world} | {per_rank / 2**20:.1f} | {per_rank / b_full:.3f} | {total / b_full:.3f} | "
                  f"{wall * 1000:.0f} | {wall / t_full:.2f} |")
    finally:
        nginx.stop()
        import shutil
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
