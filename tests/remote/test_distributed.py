"""The tensor-parallel recipe (docs/remote.md) under torch.distributed: W
ranks (gloo on 127.0.0.1, torch.multiprocessing) each load their slice of
every linear layer (column-parallel weights split by rows, row-parallel ones
by columns) with ztensor.distributed.load_rank_slices, from a local file,
over HTTP (nginx), over s3:// (s3rver), and from sharded sets (local and
HTTP). all_gather of the slices must equal the full tensors; each rank's
bytes needed must be at most 1/W of the tensor data plus what its opens
cost, and the bytes it fetched at most 1.5x what it needed (the cost model's
max_overfetch_percent, 50) plus the opens.

One start per W runs every source, and the ranks are forked from a process
that imported torch already: its start-up (seconds) is paid once."""
import json
import os
import shutil
import socket

import numpy as np
import pytest

import ztensor

from nginx_server import Nginx, find_nginx
from s3rver_server import ACCESS_KEY, SECRET_KEY, S3rver, install

OVERFETCH = 0.5  # zt_url_options.max_overfetch_percent's default: gap bytes fetched / bytes needed


def model():
    """Two blocks of an MLP: up (column-parallel, [out, in], split dim 0),
    down (row-parallel, split dim 1, rows of 16 KiB so a rank's columns of
    a row are one range), their biases (split like their outputs)."""
    rng = np.random.default_rng(7)
    t, plan = {}, {}
    for i in range(2):
        t[f"h{i}.up.weight"] = rng.standard_normal((512, 256)).astype(np.float32)
        t[f"h{i}.up.bias"] = rng.standard_normal(512).astype(np.float32)
        t[f"h{i}.down.weight"] = rng.standard_normal((64, 4096)).astype(np.float32)
        plan.update({f"h{i}.up.weight": 0, f"h{i}.up.bias": 0, f"h{i}.down.weight": 1})
    return t, plan


def rank_main(rank, world, port, sources, plan, out_dir):
    import hashlib

    import torch
    import torch.distributed as dist
    from ztensor.distributed import load_rank_slices
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    report = {}
    try:
        for label, src in sources.items():
            parts, stats = load_rank_slices(src, plan, rank, world)
            full = {}
            for name, dim in plan.items():
                gathered = [torch.empty_like(parts[name]) for _ in range(world)]
                dist.all_gather(gathered, parts[name].contiguous())
                whole = torch.cat(gathered, dim=dim).contiguous().numpy()
                full[name] = hashlib.sha256(whole.tobytes()).hexdigest()
            report[label] = {"stats": stats, "full": full,
                             "slice_bytes": sum(p.numel() * p.element_size() for p in parts.values())}
    finally:
        dist.destroy_process_group()
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(report, f)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tensors, plan = model()
    work = tmp_path_factory.mktemp("tp")
    root = work / "www"
    os.makedirs(root / "set")
    ztensor.save_file(tensors, str(root / "model.zt"))
    # A set: block 0 in one shard, block 1 in another.
    for i in range(2):
        ztensor.save_file({k: v for k, v in tensors.items() if k.startswith(f"h{i}.")},
                          str(root / "set" / f"model-{i}.zt"))
    with open(root / "set" / "model.zt.index.json", "w") as f:
        json.dump({"weight_map": {k: f"model-{k[1]}.zt" for k in tensors}}, f)
    nginx = Nginx(find_nginx(), str(work), str(root))
    nginx.start()
    s3 = S3rver(install(os.environ["ZT_NPM_PREFIX"]), str(work), ["models"])
    s3.start()
    s3.put("models", "model.zt", (root / "model.zt").read_bytes())
    env = {"AWS_ENDPOINT_URL_S3": s3.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    sources = {"local": str(root / "model.zt"), "http": f"{nginx.base}/model.zt", "s3": "s3://models/model.zt",
               "set-local": str(root / "set" / "model.zt.index.json"),
               "set-http": f"{nginx.base}/set/model.zt.index.json"}
    yield tensors, plan, sources
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    s3.stop()
    nginx.stop()
    shutil.rmtree(work, ignore_errors=True)


def open_cost(src):
    """What opening src costs (tail, manifest, first block): measured by an
    open that reads nothing."""
    if src.endswith(".json"):
        from ztensor.distributed import set_io_stats
        with ztensor.ShardedReader(src) as r:
            return set_io_stats(r)
    with ztensor.Reader(src) as r:  # (ztensor.open of a local path is a 2.x Source)
        return r.io_stats()


@pytest.mark.parametrize("world", [2, 4])
def test_tensor_parallel_load(served, world, tmp_path):
    import hashlib
    import torch.multiprocessing as mp
    tensors, plan, sources = served
    # fork: the ranks inherit the imported torch (seconds saved per rank);
    # spawn would re-run this test module's runner in each child.
    mp.start_processes(rank_main, args=(world, free_port(), sources, plan, str(tmp_path)), nprocs=world, join=True,
                       start_method="fork")
    reports = [json.load(open(tmp_path / f"rank{r}.json")) for r in range(world)]
    total = sum(v.nbytes for v in tensors.values())
    expected = {n: hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest() for n, v in tensors.items()}
    for label, src in sources.items():
        opened = open_cost(src)
        for rank, rep in enumerate(reports):
            r = rep[label]
            assert r["full"] == expected, (label, rank)
            assert r["slice_bytes"] == total // world
            got = r["stats"]
            if label.startswith("local") or label == "set-local":
                assert got == {"requests": 0, "bytes": 0, "bytes_needed": 0}
                continue
            # Needed: the opens, plus the slices' bytes not already held from the open's tail read.
            assert opened["bytes_needed"] < got["bytes_needed"] <= total // world + opened["bytes_needed"], \
                (label, got, opened)
            assert got["bytes"] - opened["bytes"] <= (got["bytes_needed"] - opened["bytes_needed"]) * (1 + OVERFETCH)
            bound = total // world * (1 + OVERFETCH) + opened["bytes"]
            assert got["bytes"] <= bound, (label, world, rank, got, opened, bound)
            # and far below loading everything
            assert got["bytes"] < total // world + opened["bytes"] + total // (2 * world), (label, got)
