"""Tensor-parallel loading: each rank of a distributed job reads only its own
slice of each tensor, from a local file, an http(s):// or s3:// URL, or a
sharded set's index (docs/remote.md, "Tensor-parallel loading").

    import torch.distributed as dist
    from ztensor.distributed import load_rank_slices

    plan = {"mlp.up.weight": 0,      # column-parallel linear: split the rows (output features)
            "mlp.down.weight": 1,    # row-parallel linear: split the columns (input features)
            "norm.weight": None}     # replicated: every rank reads it whole
    tensors, stats = load_rank_slices("s3://models/llm.zt", plan, dist.get_rank(), dist.get_world_size())

A rank's part of dimension d is the contiguous block shard_bounds gives
(the first size % world ranks hold one more). Remote bytes fetched are the
slice's own bytes, one exact range per group of rows (rows closer than
4 KiB share one range, the gap included), plus the open (the tail read with
the manifest, and the first 64 KiB block). `stats` says what was fetched."""
import ctypes
from ctypes import byref, c_char_p, c_size_t, c_void_p
from typing import Any, Dict, Mapping, Optional, Tuple

from ._lib import IoStats, check, lib

Plan = Mapping[str, Optional[int]]


def shard_bounds(size: int, rank: int, world: int) -> Tuple[int, int]:
    """[start, stop) of rank's block when `size` items are split over
    `world` ranks as evenly as possible (the first size % world ranks get
    one more)."""
    if world < 1 or not 0 <= rank < world:
        raise ValueError(f"rank {rank} is not in [0, {world})")
    base, extra = divmod(size, world)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


def rank_index(shape: Any, dim: Optional[int], rank: int, world: int) -> Tuple[slice, ...]:
    """The index of rank's part of a tensor of `shape` split along `dim`
    (None: the whole tensor)."""
    shape = list(shape)
    index = [slice(None)] * len(shape)
    if dim is not None:
        if not -len(shape) <= dim < len(shape):
            raise ValueError(f"dimension {dim} does not exist in shape {shape}")
        start, stop = shard_bounds(shape[dim], rank, world)
        index[dim] = slice(start, stop)
    return tuple(index)


def _stats(st: IoStats) -> Dict[str, int]:
    return {"requests": int(st.requests), "bytes": int(st.bytes)}


def set_io_stats(reader: Any) -> Dict[str, int]:
    """Requests and bytes fetched by every shard of a ShardedReader."""
    total = {"requests": 0, "bytes": 0}
    h = reader._require_open().ptr
    n = c_size_t()
    check(lib.zt_set_shard_count(h, byref(n)))
    for i in range(n.value):
        f, loc = c_void_p(), c_char_p()
        check(lib.zt_set_shard_at(h, i, byref(f), byref(loc)))
        st = IoStats()
        st.struct_size = ctypes.sizeof(IoStats)
        check(lib.zt_file_io_stats(f, byref(st)))
        for k, v in _stats(st).items():
            total[k] += v
    return total


def load_rank_slices(source: str, plan: Plan, rank: int, world: int, *, framework: str = "pt"
                     ) -> Tuple[Dict[str, Any], Dict[str, int]]:
    """Reads, for each name of plan, the part `rank` of `world` owns
    (plan[name] is the dimension split, or None for the whole tensor).
    source: a .zt path or URL (safe_open(...).get_slice), or a set index
    ending in .json (ShardedReader: every shard is opened, and only the
    shards holding the planned tensors are read). framework "pt" gives
    torch tensors, "np" numpy arrays. Returns (tensors, {"requests",
    "bytes"} fetched, opens included; zeros for local files)."""
    out: Dict[str, Any] = {}
    if source.split("?")[0].endswith(".json"):
        from .sharded import ShardedReader
        with ShardedReader(source) as r:
            for name, dim in plan.items():
                sl = r.get_slice(name)
                part = sl[rank_index(sl.get_shape(), dim, rank, world)]
                if framework in ("pt", "torch"):
                    import torch
                    part = torch.from_numpy(part)
                out[name] = part
            return out, set_io_stats(r)
    from ._frameworks import safe_open
    with safe_open(source, framework) as f:
        for name, dim in plan.items():
            piece = f.get_slice(name)
            out[name] = piece[rank_index(piece.get_shape(), dim, rank, world)]
        st = f.reader.io_stats()
        return out, {"requests": st["requests"], "bytes": st["bytes"]}
