"""Python loading paths of ztensor, against reading the file into one buffer.

usage: python_load_bench.py [--reps N] [--dim D] [--dir DIR]

Writes the `mixed` workload of zt_bench (a 4-layer transformer, f32; --dim
1024 is zt_bench's mixed: 267 MB) once, then times, warm page cache, the
median of N runs of each row and prints it as a ratio against the baseline
measured in the same run:

  pread              the whole file into one preallocated buffer (baseline)
  pread_fresh        the same into a newly allocated buffer each time: what
                     any load that returns new memory pays at least
  np.load_file       ztensor.numpy.load_file: private writable copies
  torch.load_file    ztensor.torch.load_file: private writable copies
  np.zero_copy       safe_open(copy=False).get_tensor for every tensor:
                     views of the copy-on-write mapping (nothing read yet)
  np.zero_copy+sum   the same, then every element read once (page faults)
  copy+modify        load_file, then `t += 1` on every tensor
  zero_copy+modify   zero-copy torch tensors, then `t.add_(1)` on every
                     tensor (each page copied on first write)
  slice_1/8          get_slice of 1/8 of the rows of the embedding
  read_1/8           the same rows as a fraction of the full embedding read

Run with PYTHONPATH=bindings/python ZTENSOR_LIBRARY=build/libztensor.so
/usr/bin/python3 bench/python_load_bench.py (Debian's python3: numpy, torch).
"""
import argparse
import os
import statistics
import tempfile
import time

import numpy as np


def mixed(d):
    vocab, ff = 16330 * d // 1024, 4 * d
    t = {"model.embed_tokens.weight": (vocab, d)}
    for layer in range(4):
        p = f"model.layers.{layer}."
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            t[p + f"self_attn.{proj}.weight"] = (d, d)
            t[p + f"self_attn.{proj}.bias"] = (d,)
        t[p + "mlp.up_proj.weight"], t[p + "mlp.up_proj.bias"] = (ff, d), (ff,)
        t[p + "mlp.down_proj.weight"], t[p + "mlp.down_proj.bias"] = (d, ff), (d,)
        for norm in ("input_layernorm", "post_attention_layernorm"):
            t[p + f"{norm}.weight"], t[p + f"{norm}.bias"] = (d,), (d,)
    t["model.norm.weight"], t["model.norm.bias"] = (d,), (d,)
    return t


def timed(reps, fn):
    fn()  # warm-up: page cache, imports
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()

    import torch
    import ztensor.numpy as ztnp
    import ztensor.torch as ztpt

    rng = np.random.default_rng(1)
    tensors = {k: rng.random(s, dtype=np.float32) for k, s in mixed(args.dim).items()}
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = os.path.join(tmp, "mixed.zt")
        ztnp.save_file(tensors, path)
        size = os.path.getsize(path)
        del tensors

        buf = np.empty(size, np.uint8)

        def pread():
            with open(path, "rb", buffering=0) as f:
                f.readinto(memoryview(buf))

        def zero_copy_views():
            with ztnp.safe_open(path, "np", copy=False) as f:
                return [f.get_tensor(k) for k in f.keys()]

        def zero_copy_sum():
            for a in zero_copy_views():
                a.sum()

        def copy_modify():
            for t in ztpt.load_file(path).values():
                t += 1

        def zero_copy_modify():
            with ztpt.safe_open(path, "pt", copy=False) as f:
                for k in f.keys():
                    f.get_tensor(k).add_(1)

        emb = "model.embed_tokens.weight"
        rows = mixed(args.dim)[emb][0]

        def slice_8():
            with ztnp.safe_open(path, "np") as f:
                f.get_slice(emb)[: rows // 8]

        def read_full_emb():
            with ztnp.safe_open(path, "np") as f:
                f.get_tensor(emb)

        def pread_fresh():
            fresh = np.empty(size, np.uint8)
            with open(path, "rb", buffering=0) as f:
                f.readinto(memoryview(fresh))

        base = timed(args.reps, pread)
        rows_out = [
            ("pread_fresh", pread_fresh),
            ("np.load_file", lambda: ztnp.load_file(path)),
            ("torch.load_file", lambda: ztpt.load_file(path)),
            ("np.zero_copy", zero_copy_views),
            ("np.zero_copy+sum", zero_copy_sum),
            ("copy+modify", copy_modify),
            ("zero_copy+modify", zero_copy_modify),
        ]
        print(f"file {size / 1e6:.0f} MB, {len(mixed(args.dim))} tensors, torch {torch.__version__}, "
              f"median of {args.reps}, warm cache")
        print(f"{'pread':<18} {base * 1e3:9.1f} ms  1.00x  (baseline: whole file into one buffer)")
        for name, fn in rows_out:
            t = timed(args.reps, fn)
            print(f"{name:<18} {t * 1e3:9.1f} ms  {t / base:.2f}x of pread")
        full = timed(args.reps, read_full_emb)
        part = timed(args.reps, slice_8)
        print(f"{'slice_1/8':<18} {part * 1e3:9.1f} ms  {part / full:.2f}x of reading the whole embedding "
              f"({full * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
