"""Python loading paths of ztensor, against the C library's own load of the
same file, measured in the same run.

usage: python_load_bench.py [--reps N] [--dir DIR] [--workloads small,many10k,mixed,large]
                            [--c-read PATH] [--no-extra]

For each workload (zt_bench's: small = 26,214 x [40, 64] f32 + 1 x [1024];
many10k = 10,000 x [4]; mixed = a 4-layer transformer, 267 MB; large =
4 x [4096, 4096], 268 MB; all f32, raw) the file is written once, then,
warm page cache, rounds alternate the baseline and every row (median of N
rounds):

  c_read            the baseline: bench/c_copy_read, a C program doing open
                    + each object's size + one zt_file_read_many into one
                    fresh buffer + close (timed inside the program)
  np.load_file      ztensor.numpy.load_file: arrays owning their memory
  torch.load_file   ztensor.torch.load_file (default: tensors owning their
                    memory, safe against the file changing)
  torch.mapped      ztensor.torch.load_file(copy=False): views of the
                    file's copy-on-write mapping (the opt-in), nothing read
  torch.load        torch.load of the same state dict saved by torch.save
  torch.get_tensor  safe_open(path, "pt") then get_tensor(k) for every key,
                    the per-tensor calls safetensors code often makes
  np.ctypes,        np.load_file and torch.load_file on the ctypes path
  torch.ctypes      (ZTENSOR_PURE_PYTHON's fallback), for comparison; the
                    rows above use the C++ extension ztensor._ext when it
                    is in use (the header says which)

Each row prints its wall time and its CPU time (user + system, every
thread: on a machine shared with other work, the steadier figure), each
with its ratio to c_read and its cost per tensor on top of the C read
((row - c_read) / tensors). The targets of issue 23: <= 3 us per tensor,
and torch.load_file / np.load_file of `small` <= 1.3x c_read.

For `mixed`, extra rows (unless --no-extra) show what the tensors cost when
used: zero-copy numpy views then every element read, copies then `+= 1`,
mapped views then `add_(1)` (each page copied on first write), and
get_slice of 1/8 of the embedding against reading it whole.

Run with PYTHONPATH=bindings/python ZTENSOR_LIBRARY=build/libztensor.so
/usr/bin/python3 bench/python_load_bench.py (Debian's python3: numpy, torch);
the extension meson built beside that library (build/bindings/python/ext)
is used unless ZTENSOR_EXTENSION or ZTENSOR_PURE_PYTHON says otherwise.
The load average is printed before and after: on a shared machine, compare
the CPU columns, and rerun when it is high.
c_copy_read is taken from --c-read, else from bench/ beside the library
(meson -Dbench=true), else compiled here with cc against the library.
"""
import argparse
import glob
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def mixed(d=1024):
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


def small():
    t = {f"t{i:06d}": (40, 64) for i in range(26214)}
    t["tail"] = (1024,)
    return t


WORKLOADS = {
    "small": small,
    "many10k": lambda: {f"tensor_{i:06d}": (4,) for i in range(10000)},
    "mixed": mixed,
    "large": lambda: {f"layer{i}.weight": (4096, 4096) for i in range(4)},
}


def c_read_program(arg, tmp):
    if arg:
        return arg
    lib = os.environ.get("ZTENSOR_LIBRARY")
    if lib:
        beside = os.path.join(os.path.dirname(os.path.abspath(lib)), "bench", "c_copy_read")
        if os.path.exists(beside):
            return beside
    import ztensor
    libpath = ztensor.library_path
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise SystemExit("no C compiler to build bench/c_copy_read.c; pass --c-read")
    exe = os.path.join(tmp, "c_copy_read")
    subprocess.run([cc, "-O2", "-o", exe, os.path.join(HERE, "c_copy_read.c"),
                    "-I", os.path.join(HERE, "..", "include"), libpath,
                    "-Wl,-rpath," + os.path.dirname(os.path.abspath(libpath))], check=True)
    return exe


def use_built_extension():
    """Points ZTENSOR_EXTENSION at the ztensor._ext meson built beside
    $ZTENSOR_LIBRARY (before ztensor is imported), when there is one."""
    lib = os.environ.get("ZTENSOR_LIBRARY")
    if not lib or os.environ.get("ZTENSOR_EXTENSION"):
        return
    found = glob.glob(os.path.join(os.path.dirname(os.path.abspath(lib)), "bindings", "python", "ext", "_ext*.so"))
    if found:
        os.environ["ZTENSOR_EXTENSION"] = found[0]


def ctypes_path(fn):
    """fn run on the ctypes backend (the one ztensor._bulk takes when no
    extension could be built), swapped in for the call."""
    from ztensor import _bulk

    def run():
        saved = _bulk.read_dense, _bulk.mapped_views
        _bulk.read_dense, _bulk.mapped_views = _bulk._read_dense_ctypes, _bulk._mapped_views_ctypes
        try:
            return fn()
        finally:
            _bulk.read_dense, _bulk.mapped_views = saved
    return run


def get_each(module, path):
    with module.safe_open(path, "pt") as f:
        return {k: f.get_tensor(k) for k in f.keys()}


def load_average():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_seconds():
    """CPU time of this process so far, user + system, every thread."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def once(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def once_both(fn):
    """Wall and CPU seconds of fn(); what it returns is dropped after the
    timers stop (c_copy_read frees its buffer after its timer too)."""
    c, t = cpu_seconds(), time.perf_counter()
    result = fn()
    wall, cpu = time.perf_counter() - t, cpu_seconds() - c
    del result
    return wall, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--workloads", default="small,many10k,mixed,large")
    ap.add_argument("--c-read", default=None)
    ap.add_argument("--no-extra", action="store_true")
    args = ap.parse_args()

    use_built_extension()
    import torch
    import ztensor
    import ztensor.numpy as ztnp
    import ztensor.torch as ztpt
    from ztensor import _native

    print(f"torch {torch.__version__}, libztensor {ztensor.library_version()}, median of {args.reps} rounds, "
          "warm cache; per tensor = (row - c_read) / tensors")
    print("path: " + (f"C++ extension {_native.extension_path}" if _native.ext is not None
                      else f"ctypes ({_native.pure_python_reason})"))
    print(f"load average (1, 5, 15 min) at start: {load_average()}   ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        c_read = c_read_program(args.c_read, tmp)
        for wname in args.workloads.split(","):
            spec = WORKLOADS[wname]()
            rng = np.random.default_rng(1)
            tensors = {k: rng.random(s, dtype=np.float32) for k, s in spec.items()}
            path = os.path.join(tmp, wname + ".zt")
            ztnp.save_file(tensors, path)
            pt_path = os.path.join(tmp, wname + ".pt")
            torch.save({k: torch.from_numpy(v) for k, v in tensors.items()}, pt_path)
            del tensors
            size = os.path.getsize(path)
            n = len(spec)

            def c_once():
                out = subprocess.run([c_read, path, "3"], check=True, capture_output=True, text=True).stdout
                wall, cpu = out.split()
                return float(wall), float(cpu)

            rows = [
                ("np.load_file", lambda: ztnp.load_file(path)),
                ("torch.load_file", lambda: ztpt.load_file(path)),
                ("torch.mapped", lambda: ztpt.load_file(path, copy=False)),
                ("torch.load", lambda: torch.load(pt_path)),
                ("torch.get_tensor", lambda: get_each(ztpt, path)),
            ]
            if _native.ext is not None:
                rows += [("np.ctypes", ctypes_path(lambda: ztnp.load_file(path))),
                         ("torch.ctypes", ctypes_path(lambda: ztpt.load_file(path)))]
            for _, fn in rows:
                fn()  # warm-up: page cache, imports
            times = {name: [] for name, _ in rows}
            cpus = {name: [] for name, _ in rows}
            base, base_cpu = [], []
            for _ in range(args.reps):
                wall, cpu = c_once()
                base.append(wall)
                base_cpu.append(cpu)
                for name, fn in rows:
                    wall, cpu = once_both(fn)
                    times[name].append(wall)
                    cpus[name].append(cpu)
            b, bc = statistics.median(base), statistics.median(base_cpu)
            print(f"\n{wname}: {n} tensors, {size / 1e6:.1f} MB   (wall: median; cpu: user+system of every thread)")
            print(f"  {'c_read':<17} wall {b * 1e3:9.2f} ms  1.00x             cpu {bc * 1e3:9.2f} ms  1.00x"
                  f"  (baseline: {b / n * 1e6:.2f} / {bc / n * 1e6:.2f} us/tensor)")
            for name, _ in rows:
                t, c = statistics.median(times[name]), statistics.median(cpus[name])
                print(f"  {name:<17} wall {t * 1e3:9.2f} ms {t / b:5.2f}x {(t - b) / n * 1e6:+8.2f} us/t"
                      f"  cpu {c * 1e3:9.2f} ms {c / bc:5.2f}x {(c - bc) / n * 1e6:+8.2f} us/t")
            if wname == "mixed" and not args.no_extra:
                extra(args.reps, path, spec, b)
    print(f"\nload average (1, 5, 15 min) at end: {load_average()}")


def extra(reps, path, spec, base):
    import ztensor.numpy as ztnp
    import ztensor.torch as ztpt

    def med(fn):
        fn()
        return statistics.median(once(fn) for _ in range(reps))

    def zero_copy_sum():
        with ztnp.safe_open(path, "np", copy=False) as f:
            for k in f.keys():
                f.get_tensor(k).sum()

    def copy_modify():
        for t in ztpt.load_file(path).values():
            t += 1

    def mapped_modify():
        for t in ztpt.load_file(path, copy=False).values():
            t.add_(1)

    emb = "model.embed_tokens.weight"
    rows = spec[emb][0]

    def slice_8():
        with ztnp.safe_open(path, "np") as f:
            f.get_slice(emb)[: rows // 8]

    def read_full_emb():
        with ztnp.safe_open(path, "np") as f:
            f.get_tensor(emb)

    for name, fn in [("np.zero_copy+sum", zero_copy_sum), ("copy+modify", copy_modify),
                     ("mapped+modify", mapped_modify)]:
        t = med(fn)
        print(f"  {name:<17} {t * 1e3:9.2f} ms  {t / base:5.2f}x")
    full, part = med(read_full_emb), med(slice_8)
    print(f"  {'slice_1/8':<17} {part * 1e3:9.2f} ms  {part / full:5.2f}x of reading the whole embedding "
          f"({full * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
