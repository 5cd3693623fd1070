"""Remote reads over loopback HTTP vs local pread, in the same run.

Writes the `mixed` workload of bench/workloads.cc (a 4-layer transformer,
~256 MiB of f32), serves it with a real nginx (tests/remote/nginx_server.py)
and times, interleaved, median of --reps: open + zt_file_read_many of every
tensor (a) from the local file with pread access and (b) from
http://127.0.0.1 with zt_open_url. Prints markdown rows: the ratio
(pread time / HTTP time; higher is better) and the requests each costs
(nginx's access log and zt_file_io_stats).

    ZTENSOR_LIBRARY=build/libztensor.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/remote_bench.py [--reps 5] [--dir /tmp]

Remote opens set zt_open_options.prefetch as load_file does (the load's
connections opened during the open: 16 one-byte requests more);
ZT_BENCH_PREFETCH=0 leaves it off.

--link adds the rows through a simulated wide-area link (bench/remote_link.py:
whole-file loads against the link's limit and aria2c, opens, an 8-shard set,
tensor-parallel splits), --link-reps times each (medians): heavy. Its files
are 256 MiB (whole file) and 128 MiB (tensor-parallel) unless --big-mib and
--tp-mib say otherwise; --big takes issue 38's real sizes (2048 and 1024). --rtt 80 keeps one
condition, --whole-only the whole-file rows; with --baseline-lib they also
time that library's load (a child process) in turn with zt and aria2c.
"""
import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time
from ctypes import byref, c_size_t, c_void_p

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "remote"))

import numpy as np  # noqa: E402

import ztensor  # noqa: E402
from ztensor._lib import OpenOptions, UrlOptions, check, lib  # noqa: E402
from nginx_server import Nginx, find_nginx  # noqa: E402


PREFETCH = int(os.environ.get("ZT_BENCH_PREFETCH", "1"))


class ReadRequest(ctypes.Structure):
    _fields_ = [("object", c_void_p), ("component", c_size_t), ("dst", c_void_p), ("dst_capacity", c_size_t),
                ("out_size", c_size_t), ("status", ctypes.c_int)]


lib.zt_file_read_many.restype = ctypes.c_int
lib.zt_file_read_many.argtypes = [c_void_p, ctypes.POINTER(ReadRequest), c_size_t]


def mixed_shapes():
    d, vocab, ff = 1024, 16330, 4096
    t = [("model.embed_tokens.weight", (vocab, d))]
    for layer in range(4):
        p = f"model.layers.{layer}."
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            t += [(p + f"self_attn.{proj}.weight", (d, d)), (p + f"self_attn.{proj}.bias", (d,))]
        t += [(p + "mlp.up_proj.weight", (ff, d)), (p + "mlp.up_proj.bias", (ff,)),
              (p + "mlp.down_proj.weight", (d, ff)), (p + "mlp.down_proj.bias", (d,))]
        for norm in ("input_layernorm", "post_attention_layernorm"):
            t += [(p + f"{norm}.weight", (d,)), (p + f"{norm}.bias", (d,))]
    return t + [("model.norm.weight", (d,)), ("model.norm.bias", (d,))]


def open_file(target, prefetch=None):
    out = c_void_p()
    opts = OpenOptions()
    lib.zt_open_options_init(byref(opts))
    if target.startswith("http"):
        # A whole-file load, opened as load_file opens (prefetch: the load's
        # connections opened during the open, one-byte requests each).
        opts.prefetch = PREFETCH if prefetch is None else prefetch
        u = UrlOptions()
        lib.zt_url_options_init(byref(u))
        check(lib.zt_open_url(target.encode(), byref(u), byref(opts), byref(out)))
    else:
        opts.access = 1  # pread
        check(lib.zt_open(target.encode(), byref(opts), byref(out)))
    return out


def read_all(target, bufs):
    """Open + read_many of every object into bufs; returns (seconds, stats)."""
    t0 = time.perf_counter()
    f = open_file(target)
    n = c_size_t()
    check(lib.zt_file_object_count(f, byref(n)))
    reqs = (ReadRequest * n.value)()
    for i in range(n.value):
        o = c_void_p()
        check(lib.zt_file_object_at(f, i, byref(o)))
        reqs[i] = ReadRequest(o, 0, bufs[i].ctypes.data, bufs[i].nbytes, 0, 0)
    check(lib.zt_file_read_many(f, reqs, n.value))
    dt = time.perf_counter() - t0
    from ztensor._lib import IoStats
    st = IoStats()
    st.struct_size = ctypes.sizeof(IoStats)
    check(lib.zt_file_io_stats(f, byref(st)))
    lib.zt_close(f)
    return dt, int(st.requests)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--link", action="store_true", help="also the rows through the link simulator (heavy)")
    ap.add_argument("--big-mib", type=int, default=256, help="--link: the large whole file, MiB")
    ap.add_argument("--tp-mib", type=int, default=128, help="--link: the tensor-parallel model, MiB")
    ap.add_argument("--big", action="store_true", help="--link at issue 38's sizes: 2 GiB whole file, 1 GiB model")
    ap.add_argument("--link-reps", type=int, default=3, help="--link: repetitions of each row (medians)")
    ap.add_argument("--skip-loopback", action="store_true", help="--link: only the simulated-link rows")
    ap.add_argument("--rtt", type=int, help="--link: only the condition of this round trip (25 or 80 ms)")
    ap.add_argument("--whole-only", action="store_true", help="--link: only the whole-file rows")
    ap.add_argument("--baseline-lib", help="another libztensor (e.g. main's build): its loopback HTTP load is "
                    "timed interleaved with this one's, in a child process, for a same-run ratio")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.big:
        args.big_mib, args.tp_mib = 2048, 1024
    if args.child:  # a baseline library's load: print its seconds (its buffers touched first, untimed)
        url, local = args.child.split("|")[:2]
        with ztensor.Reader(local) as r:
            bufs = [np.empty(r[name].nbytes, dtype=np.uint8) for name in r]
        for b in bufs:  # touched: a first touch of new memory is not the load's
            b.fill(0)
        print(read_all(url, bufs)[0])
        return
    nginx = find_nginx()
    if not nginx:
        print("| remote read (nginx missing: skipped) | mixed | — | — | — | — | — |")
        return
    with tempfile.TemporaryDirectory(dir=args.dir) as work:
        root = os.path.join(work, "www")
        os.makedirs(root)
        path = os.path.join(root, "mixed.zt")
        rng = np.random.default_rng(0)
        shapes = mixed_shapes()
        with ztensor.Writer(path) as w:
            for name, shape in shapes:
                w.add(name, rng.standard_normal(shape, dtype=np.float32))
        size = os.path.getsize(path)
        with ztensor.Reader(path) as r:  # buffers in the file's object order
            order = {name: i for i, name in enumerate(r)}
        by_name = dict(shapes)
        bufs = [np.empty(int(np.prod(by_name[name])), dtype=np.float32) for name in sorted(order, key=order.get)]
        server = Nginx(nginx, work, root)
        server.start()
        if args.link:
            try:
                link_rows(args, server, root, work, bufs)
            finally:
                if args.skip_loopback:
                    server.stop()
            if args.skip_loopback:
                return
        try:
            url = f"{server.base}/mixed.zt"
            local, remote, reqs, base = [], [], [], []
            read_all(path, bufs)  # warm the page cache
            for _ in range(args.reps):
                local.append(read_all(path, bufs)[0])
                mark = len(server.log_lines())
                dt, n = read_all(url, bufs)
                remote.append(dt)
                reqs.append((n, len(server.log_lines()) - mark))
                if args.baseline_lib:
                    env = dict(os.environ, ZTENSOR_LIBRARY=args.baseline_lib)
                    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", f"{url}|{path}"],
                                         env=env, capture_output=True, text=True, check=True)
                    base.append(float(out.stdout.split()[-1]))
            # Requests of the open alone (without prefetch's warm-ups).
            mark = len(server.log_lines())
            f = open_file(url, prefetch=0)
            lib.zt_close(f)
            open_reqs = len(server.log_lines()) - mark
        finally:
            server.stop()
    lt, rt = statistics.median(local), statistics.median(remote)
    gb = size / 1e9
    print(f"| open + read_many all over loopback HTTP (nginx) vs local pread | mixed ({size >> 20} MiB, "
          f"{len(shapes)} tensors) | {gb / lt:.2f} GB/s pread | {gb / rt:.2f} GB/s | {lt / rt:.2f} | — | — |")
    if base:
        bt = statistics.median(base)
        print(f"| open + read_many all over loopback HTTP (nginx): this library vs --baseline-lib | mixed | "
              f"{gb / bt:.2f} GB/s baseline | {gb / rt:.2f} GB/s | {bt / rt:.2f} | ≥ 1.0 (no slower) | "
              f"{'yes' if bt / rt >= 0.95 else '**no**'} |")
    print(f"| requests: open / open + read_many all (access log) | mixed | — | {open_reqs} / {reqs[-1][1]} "
          f"(zt_file_io_stats: {reqs[-1][0]}) | — | open ≤ 2 round trips | "
          f"{'yes' if open_reqs <= 3 else '**no**'} |")


def link_rows(args, server, root, work, mixed_bufs):
    from remote_link import rows
    big = os.path.join(root, "big.zt")
    count = max(1, args.big_mib // 64)
    with ztensor.Writer(big) as w:
        for i in range(count):
            w.add(f"t{i}", np.full(16 << 20, i, dtype=np.float32))
    # Touched once before any timed run: the first touch of 2 GiB of new
    # memory on a machine short of free pages took 10-25 s (reclaiming page
    # cache), which the first run alone would pay.
    big_bufs = [np.zeros(16 << 20, dtype=np.float32) for _ in range(count)]
    for b in big_bufs + list(mixed_bufs):
        b.fill(0)
    baseline = None
    if args.baseline_lib:  # the same load by another library, in a child process, in the same run
        def baseline(url, name):
            env = dict(os.environ, ZTENSOR_LIBRARY=args.baseline_lib)
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                                  f"{url}|{os.path.join(root, name)}"], env=env, capture_output=True, text=True,
                                 check=True)
            return float(out.stdout.split()[-1])
    rows(server, root, work, [("mixed", "mixed.zt", mixed_bufs), ("big", "big.zt", big_bufs)], args.tp_mib,
         lambda url, bufs: read_all(url, bufs), reps=args.link_reps, rtt_only=args.rtt, whole_only=args.whole_only,
         baseline=baseline)


if __name__ == "__main__":
    main()
