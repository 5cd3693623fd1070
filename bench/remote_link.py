"""Remote loads through a simulated wide-area link (tests/remote/link_sim.py):
the rows of `remote_bench.py --link`. Each row prints its time, its ratio to
the link's limit, and (whole files) to aria2c -x 16 -s 16 through the same
simulator in the same run.

Limits: a whole file of n bytes: n / rate + 2 RTT, rate = the total cap (or
16 connections' worth when there is none); a rank of W: needed / (rate / W)
+ 3 RTT. Time ratios are limit / measured (1.0 = at the limit; the target is
>= 0.8 for whole files, >= 0.67 for ranks), byte ratios fetched / needed.
Every time is the median of `reps` runs, zt and aria2c interleaved. The
naive alternative of a rank (downloading the whole file) is aria2c's time
for the whole file alone: W ranks doing so at once would share the link,
so it is a lower bound of theirs."""
import ctypes
import json
import multiprocessing as mp
import os
import shutil
import statistics
import subprocess
import time
from ctypes import byref, c_void_p

import numpy as np

import ztensor
from ztensor._lib import IoStats, OpenOptions, UrlOptions, check, lib
from ztensor.distributed import read_planned

from link_client import LinkSim

CONDITIONS = [("RTT 25 ms, 1 Gbit/s per connection, 10 Gbit/s total", 25, 1000, 10000),
              ("RTT 80 ms, 200 Mbit/s per connection", 80, 200, 0)]


def link_rate(conn_mbit, total_mbit):
    return (total_mbit if total_mbit else 16 * conn_mbit) * 1e6 / 8


def stats(f):
    st = IoStats()
    st.struct_size = ctypes.sizeof(IoStats)
    check(lib.zt_file_io_stats(f, byref(st)))
    return int(st.requests), int(st.bytes), int(st.bytes_needed)


def open_url(url):
    out = c_void_p()
    u = UrlOptions()
    lib.zt_url_options_init(byref(u))
    opts = OpenOptions()
    lib.zt_open_options_init(byref(opts))
    check(lib.zt_open_url(url.encode(), byref(u), byref(opts), byref(out)))
    return out


def time_open(url):
    t0 = time.perf_counter()
    f = open_url(url)
    dt = time.perf_counter() - t0
    lib.zt_close(f)
    return dt


def time_set_open(url):
    lib.zt_open_set_url.restype = ctypes.c_int
    lib.zt_open_set_url.argtypes = [ctypes.c_char_p, c_void_p, c_void_p, ctypes.POINTER(c_void_p)]
    out = c_void_p()
    t0 = time.perf_counter()
    check(lib.zt_open_set_url(url.encode(), None, None, byref(out)))
    dt = time.perf_counter() - t0
    lib.zt_set_close.argtypes = [c_void_p]
    lib.zt_set_close(out)
    return dt


def time_aria2(url, work):
    if not shutil.which("aria2c"):
        return None
    dest = os.path.join(work, "aria2")
    shutil.rmtree(dest, ignore_errors=True)
    t0 = time.perf_counter()
    subprocess.run(["aria2c", "-x", "16", "-s", "16", "-k", "1M", "--file-allocation=none", "-q", "-d", dest,
                    "-o", "out", url], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def rank_job(url, plan, rank, world, q):
    t0 = time.perf_counter()
    with ztensor.open(url) as r:
        read_planned(r, plan, rank, world)
        st = r.io_stats()
    q.put((rank, time.perf_counter() - t0, st["requests"], st["bytes"], st["bytes_needed"]))


def run_ranks(url, plan, world):
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=rank_job, args=(url, plan, r, world, q)) for r in range(world)]
    for p in procs:
        p.start()
    res = [q.get() for _ in procs]
    for p in procs:
        p.join()
    return sorted(res)


def warm(path):
    with open(path, "rb", buffering=0) as f:
        while f.read(16 << 20):
            pass


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def write_tp_model(path, mib):
    """Square f32 matrices of about mib MiB in all (4 of them)."""
    n = int((mib * (1 << 20) / 4 / 4) ** 0.5) // 64 * 64
    rng = np.random.default_rng(1)
    with ztensor.Writer(path) as w:
        for i in range(4):
            w.add(f"l{i}.weight", rng.standard_normal((n, n), dtype=np.float32))
    return n


def write_set(root, shards):
    os.makedirs(os.path.join(root, "set"), exist_ok=True)
    weight_map = {}
    for s in range(shards):
        name = f"model-{s:05d}.zt"
        ztensor.save_file({f"s{s}.w": np.ones((256, 1024), dtype=np.float32)}, os.path.join(root, "set", name))
        weight_map[f"s{s}.w"] = name
    with open(os.path.join(root, "set", "model.zt.index.json"), "w") as f:
        json.dump({"weight_map": weight_map}, f)


def write_v2_sharded(root, shards):
    """An 8-shard v2 model: v2 files made data shards of root v2set/model.zt
    (zt_v2_make_sharded, what zt split --format 2 does)."""
    d = os.path.join(root, "v2set")
    os.makedirs(d, exist_ok=True)
    paths, names = [], []
    for s in range(shards):
        name = f"{s + 1:05d}"
        path = os.path.join(d, f"model-{name}.zt")
        ztensor.save_file({f"s{s}.w": np.ones((256, 1024), dtype=np.float32)}, path, format=2)
        paths.append(path.encode())
        names.append(name.encode())
    arr = ctypes.c_char_p * shards
    lib.zt_v2_make_sharded.restype = ctypes.c_int
    lib.zt_v2_make_sharded.argtypes = [ctypes.c_char_p, arr, arr, ctypes.c_size_t, ctypes.c_int, ctypes.c_uint32]
    check(lib.zt_v2_make_sharded(os.path.join(d, "model.zt").encode(), arr(*paths), arr(*names), shards, 2, 0))


def rows(server, root, work, whole_files, tp_mib, read_all, reps=1, rtt_only=None, whole_only=False, baseline=None):
    """Prints the markdown rows; whole_files: [(label, filename, bufs)].
    rtt_only: only that condition; whole_only: only the whole-file rows;
    baseline(url, filename): another library's load of the same file,
    timed in turn with zt and aria2c (seconds)."""
    tp_path = os.path.join(root, "tp.zt")
    if not whole_only:
        n = write_tp_model(tp_path, tp_mib)
        tp_size = os.path.getsize(tp_path)
        write_set(root, 8)
        write_v2_sharded(root, 8)
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {reps} repetition(s), medians")
    print()
    print("| row | measured | vs the link's limit | same-run comparison | target |")
    print("|---|---|---|---|---|")
    for cond, rtt_ms, conn, total in CONDITIONS:
        if rtt_only and rtt_ms != rtt_only:
            continue
        rtt = rtt_ms / 1000
        rate = link_rate(conn, total)
        sim = LinkSim(server.port, rtt_ms, conn, total, lifetime=3600)
        try:
            for label, name, bufs in whole_files:
                url = f"{sim.base}/{name}"
                size = os.path.getsize(os.path.join(root, name))
                zt, aria, base, reqs = [], [], [], 0
                turns = [0, 1] + ([2] if baseline else [])
                for rep in range(reps):
                    # Each run finds the file in the page cache (a busy
                    # machine may have dropped it), and they take turns
                    # at going first.
                    for who in turns[rep % len(turns):] + turns[:rep % len(turns)]:
                        warm(os.path.join(root, name))
                        if who == 0:
                            dt, reqs = read_all(url, bufs)
                            zt.append(dt)
                        elif who == 1:
                            aria.append(time_aria2(url, work))
                        else:
                            base.append(baseline(url, name))
                dt, ta = median(zt), median(aria)
                limit = size / rate + 2 * rtt
                cmp = f"aria2c {ta:.2f} s; aria2c / zt {ta / dt:.2f}" if ta else "aria2c missing"
                print(f"| load {label} ({size >> 20} MiB), {cond} | {dt:.2f} s, {reqs} requests "
                      f"(runs {', '.join(f'{x:.2f}' for x in zt)}) | limit {limit:.2f} s: {limit / dt:.2f} | "
                      f"{cmp} | ≥ 0.8, ≥ 1.0 |", flush=True)
                if base:
                    tb = median(base)
                    print(f"| load {label}, {cond}: baseline library | {tb:.2f} s (runs "
                          f"{', '.join(f'{x:.2f}' for x in base)}) | limit: {limit / tb:.2f} | baseline / zt "
                          f"{tb / dt:.2f} | — |", flush=True)
            if whole_only:
                continue
            t = min(time_open(f"{sim.base}/tp.zt") for _ in range(3))
            print(f"| open tp.zt, {cond} | {t * 1000:.0f} ms = {t / rtt:.1f} RTT | — | — | 2 RTT (+1 connect) |")
            t = min(time_set_open(f"{sim.base}/set/model.zt.index.json") for _ in range(2))
            print(f"| open an 8-shard set, {cond} | {t * 1000:.0f} ms = {t / rtt:.1f} RTT | — | — | ≈ 2–3 RTT "
                  f"(+ index, connect) |")
            t = min(time_open(f"{sim.base}/v2set/model.zt") for _ in range(2))
            print(f"| open an 8-shard v2 root, {cond} | {t * 1000:.0f} ms = {t / rtt:.1f} RTT | — | — | ≈ 2–3 RTT "
                  f"(+ root, connect) |", flush=True)
            naive = median([time_aria2(f"{sim.base}/tp.zt", work) for _ in range(reps)])
            for world in (2, 4, 8):
                for dim, split in ((0, "row"), (1, "column")):
                    plan = {f"l{i}.weight": dim for i in range(4)}
                    runs = []
                    for _ in range(reps):
                        warm(tp_path)
                        runs.append(run_ranks(f"{sim.base}/tp.zt", plan, world))
                    needed = tp_size / world
                    limit = needed / (rate / world) + 3 * rtt
                    worst = median([max(r[1] for r in res) for res in runs])
                    ratio = max(r[3] / max(r[4], 1) for res in runs for r in res)
                    reqs = max(r[2] for res in runs for r in res)
                    cmp = (f"aria2c, whole file: {naive:.2f} s ({naive / worst:.1f}x the rank's time)" if naive
                           else "aria2c missing")
                    print(f"| TP W={world} {split} split of {tp_size >> 20} MiB ({n}x{n} x4), {cond} | slowest rank "
                          f"{worst:.2f} s, ≤ {reqs} requests, fetched/needed ≤ {ratio:.2f} | limit {limit:.2f} s: "
                          f"{limit / worst:.2f} | {cmp} | ≥ 0.67, ≤ 1.5x bytes |", flush=True)
        finally:
            sim.stop()
    print()
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
