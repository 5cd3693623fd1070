"""Foreign formats through libztensor against each format's own loader
(issue 35 §4). One ~256 MiB model of mixed shapes is saved by each format's
own library (torch.save, onnx + numpy_helper, h5py, numpy.savez) and by our
safetensors and GGUF export (zt export --to), then read, interleaved, in one
run, warm (after a warm-up) and cold (the file's pages evicted with
posix_fadvise(DONTNEED) before each repetition: only that file, never the
machine's whole page cache):

- own:    the format's own full load (torch.load(weights_only=True); onnx.load
          + numpy_helper.to_array; h5py reading every dataset; numpy.load
          materialising every array);
- copy:   ztensor.Reader(path).read_many(): open plus a copy-read of every
          tensor;
- views:  ztensor.Reader(path) plus read(name, copy=False) of every tensor
          (zero-copy where the file allows; numpy arrays with
          flags.aligned False where a format leaves data misaligned, as
          numpy.savez and protobuf do: docs/foreign.md).

Ratios are own time / our time (higher is better). Targets: copy >= 1.0x
for every format; views >= 3x where zero-copy is possible (stored .pt and
.npz members, safetensors, GGUF, contiguous HDF5).

Usage: foreign_bench.py [--dir DIR] [--reps N] [--mib M]
(ZT_TOOL, ZTENSOR_LIBRARY and PYTHONPATH as for the binding's tests.)
"""
import argparse
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import ztensor


def model(mib):
    """name -> array, about `mib` MiB in mixed shapes and dtypes."""
    scale = mib / 256.0
    rng = np.random.default_rng(0)
    out = {}
    for i in range(max(1, int(12 * scale))):
        out["layers.%d.mlp.weight" % i] = rng.standard_normal((1024, 4096), dtype=np.float32)
    for i in range(max(1, int(24 * scale))):
        out["layers.%d.attn.weight" % i] = rng.standard_normal((512, 1024), dtype=np.float32)
    for i in range(64):
        out["layers.%d.norm" % i] = rng.standard_normal(1024, dtype=np.float32)
    for i in range(max(1, int(16 * scale))):
        out["embed.%d" % i] = rng.standard_normal((512, 1024), dtype=np.float32).astype(np.float16)
    out["step"] = np.arange(8, dtype=np.int64)
    return out


def write_all(arrays, d, zt_tool):
    import h5py
    import onnx
    import torch
    from onnx import helper, numpy_helper
    files = {}
    files["pt"] = os.path.join(d, "model.pt")
    torch.save({k: torch.from_numpy(v) for k, v in arrays.items()}, files["pt"])
    files["onnx"] = os.path.join(d, "model.onnx")
    inits = [numpy_helper.from_array(v, k) for k, v in arrays.items()]
    onnx.save_model(helper.make_model(helper.make_graph([], "g", [], [], initializer=inits)), files["onnx"])
    del inits
    files["hdf5"] = os.path.join(d, "model.h5")
    with h5py.File(files["hdf5"], "w") as f:
        for k, v in arrays.items():
            f.create_dataset(k, data=v)
    files["npz"] = os.path.join(d, "model.npz")
    np.savez(files["npz"], **arrays)
    zt = os.path.join(d, "model.zt")
    with ztensor.Writer(zt) as w:
        for k, v in arrays.items():
            w.add(k, v)
    files["safetensors"] = os.path.join(d, "model.safetensors")
    files["gguf"] = os.path.join(d, "model.gguf")
    for fmt in ("safetensors", "gguf"):
        subprocess.run([zt_tool, "export", zt, "--to", fmt, "-o", files[fmt], "--quiet"], check=True)
    os.sync()
    return files


def own_loader(fmt):
    if fmt == "pt":
        import torch
        return lambda p: list(torch.load(p, weights_only=True).values())
    if fmt == "onnx":
        import onnx
        from onnx import numpy_helper
        return lambda p: [numpy_helper.to_array(t) for t in onnx.load(p).graph.initializer]
    if fmt == "hdf5":
        import h5py

        def load(p):
            with h5py.File(p, "r") as f:
                out = []
                f.visititems(lambda n, o: out.append(o[()]) if isinstance(o, h5py.Dataset) else None)
                return out
        return load
    if fmt == "npz":
        def load(p):
            with np.load(p) as z:
                return [z[k] for k in z.files]
        return load
    return None  # safetensors, GGUF: their own Python loaders are not in Debian


def ours_copy(p):
    r = ztensor.Reader(p)
    out = r.read_many()
    r.close()
    return out


def ours_views(p):
    r = ztensor.Reader(p)
    out = [r.read(k, copy=False) for k in r.keys()]
    return out, r  # the views keep the file open until dropped


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def time_one(fn, path, cold):
    gc.collect()
    if cold:
        evict(path)
    t = time.perf_counter()
    result = fn(path)
    dt = time.perf_counter() - t
    del result
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=None)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mib", type=int, default=256)
    args = ap.parse_args()
    zt_tool = os.environ.get("ZT_TOOL", "zt")
    d = args.dir or tempfile.mkdtemp(prefix="zt_foreign_bench_")
    arrays = model(args.mib)
    total = sum(v.nbytes for v in arrays.values())
    count = len(arrays)
    files = write_all(arrays, d, zt_tool)
    del arrays
    print("model: %d tensors, %.1f MiB; files in %s" % (count, total / 2**20, d))
    print("| format | cache | own loader | ours: open + copy-read | ratio (≥ 1.0) | ours: open + views | ratio (≥ 3, zero-copy formats) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    zero_copy = {"pt", "npz", "hdf5", "safetensors", "gguf"}
    for fmt, path in files.items():
        own = own_loader(fmt)
        for cold in (False, True):
            fns = {"copy": ours_copy, "views": ours_views}
            if own:
                fns["own"] = own
            times = {k: [] for k in fns}
            if not cold:
                for fn in fns.values():
                    time_one(fn, path, False)  # warm-up
            for _ in range(args.reps):
                for k, fn in fns.items():  # interleaved
                    times[k].append(time_one(fn, path, cold))
            med = {k: statistics.median(v) for k, v in times.items()}

            def cell(k):
                return "%.0f ms (%.2f GB/s)" % (med[k] * 1e3, total / med[k] / 1e9)
            own_cell = cell("own") if own else "— (not in Debian)"
            r_copy = "%.2f×" % (med["own"] / med["copy"]) if own else "—"
            r_views = "%.2f×" % (med["own"] / med["views"]) if own else "—"
            if own and fmt not in zero_copy:
                r_views += " (raw_data in place; lent at any offset, flags.aligned False where misaligned)"
            print("| %s | %s | %s | %s | %s | %s | %s |" % (fmt, "cold" if cold else "warm", own_cell, cell("copy"),
                                                             r_copy, cell("views"), r_views))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
