"""numpy's side of the zt_bench comparison: save/load of the same tensors.

Usage: numpy_bench.py SHAPES_FILE DIR REPS [npy]
SHAPES_FILE has one "name d0 d1 ..." line per f32 tensor. Prints
"<measure> <median seconds>" lines: save_npz, load_npz (numpy.savez, then
numpy.load materialising every array) and, with "npy", save_npy/load_npy
(one .npy file per tensor). Timed inside Python, so interpreter start-up is
not counted; saves start with writeback drained (os.sync), as zt_bench's
writes do.
"""
import os
import shutil
import statistics
import sys
import time

import numpy as np


def timed(reps, fn, drain=False):
    fn()  # warm-up (and page cache)
    times = []
    for _ in range(reps):
        if drain:  # writes: no writeback left over from the previous one
            os.sync()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    shapes_file, out_dir, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    npy = len(sys.argv) > 4 and sys.argv[4] == "npy"
    rng = np.random.default_rng(1)
    tensors = {}
    with open(shapes_file) as f:
        for line in f:
            parts = line.split()
            shape = tuple(int(d) for d in parts[1:])
            tensors[parts[0]] = rng.random(shape, dtype=np.float32) * 2 - 1

    npz = os.path.join(out_dir, "np_bench.npz")

    def save_npz():
        np.savez(npz, **tensors)

    def load_npz():
        with np.load(npz) as z:
            loaded = {k: z[k] for k in z.files}
        assert len(loaded) == len(tensors)

    print("save_npz", timed(reps, save_npz, drain=True))
    print("load_npz", timed(reps, load_npz))
    os.unlink(npz)

    if npy:
        d = os.path.join(out_dir, "np_bench_npy")
        os.makedirs(d, exist_ok=True)

        def save_npy():
            for k, v in tensors.items():
                np.save(os.path.join(d, k + ".npy"), v)

        def load_npy():
            loaded = {k: np.load(os.path.join(d, k + ".npy")) for k in tensors}
            assert len(loaded) == len(tensors)

        print("save_npy", timed(reps, save_npy, drain=True))
        print("load_npy", timed(reps, load_npy))
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
