"""The same tensors served two ways, for the remote shard tests: under
root/v2 a zTensor v2 root with its data shards (`zt split --format 2`),
under root/v1 one .zt file per tensor and a safetensors-style
model.zt.index.json naming them."""
import json
import os
import subprocess

import numpy as np

import ztensor


def shard_tensors(shards):
    """One 64 KiB tensor per shard, filled with its shard's number."""
    return {f"s{s}.w": np.full((64, 256), s, dtype=np.float32) for s in range(shards)}


def write_sharded_models(work, root, t):
    """root/v2: t saved whole in work, then split into one 64 KiB shard per
    tensor; root/v1: one file per tensor and its index."""
    os.makedirs(root / "v2", exist_ok=True)
    os.makedirs(root / "v1", exist_ok=True)
    ztensor.save_file(t, str(work / "model.zt"))
    subprocess.run([os.environ["ZT_TOOL"], "split", str(work / "model.zt"), "--max-shard-size", "64KiB", "-o",
                    str(root / "v2"), "--format", "2", "--quiet"], check=True)
    weight_map = {}
    for s, key in enumerate(t):  # in the order given: shard s holds s{s}.w
        name = f"model-{s:05d}.zt"
        ztensor.save_file({key: t[key]}, str(root / "v1" / name))
        weight_map[key] = name
    with open(root / "v1" / "model.zt.index.json", "w") as f:
        json.dump({"weight_map": weight_map}, f)
