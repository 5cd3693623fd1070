"""One cold load for zt_cold_bench: ztensor.torch.load_file, then every
tensor summed (each byte read once), timed inside this process (the
interpreter and torch start before the clock). Prints "<seconds> <bytes
this process made the disk read>" (/proc/self/io).

usage: python_cold_child.py map|copy FILE
  map   load_file(copy=False): views of the library's mapping
  copy  load_file(copy=True): private copies read up front
"""
import sys
import time

import torch
import ztensor.torch as ztpt


def disk_read_bytes():
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    return 0


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode not in ("map", "copy"):
        sys.exit("mode must be map or copy")
    torch.zeros(1).sum()  # torch's first-call set-up stays out of the timing
    io0 = disk_read_bytes()
    t0 = time.perf_counter()
    tensors = ztpt.load_file(path, copy=(mode == "copy"))
    total = 0.0
    for t in tensors.values():
        total += float(t.sum())
    dt = time.perf_counter() - t0
    print(f"{dt:.9f} {disk_read_bytes() - io0}")


if __name__ == "__main__":
    main()
