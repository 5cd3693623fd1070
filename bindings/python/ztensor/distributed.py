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
(the first size % world ranks hold one more). A file's slices are read as
one plan (zt_file_read_slices, libztensor 1.3): a remote file's cost model
merges neighbouring ranges across all the tensors, fetching a gap when it
is cheaper than one more request, within max_overfetch_percent (50%) of the
bytes needed. `stats` says what was fetched: requests, bytes, bytes_needed
and their ratio (the open's bytes included)."""
import ctypes
from ctypes import POINTER, byref, c_char_p, c_size_t, c_uint64, c_void_p
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from ._lib import IoStats, check, lib, new_struct, shape_array
from ._types import Array

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


class _SliceRequest(ctypes.Structure):
    """zt_slice_request (ztensor.h, 1.3)."""
    _fields_ = [("object", c_void_p), ("component", c_size_t), ("ndim", c_size_t), ("start", POINTER(c_uint64)),
                ("stop", POINTER(c_uint64)), ("dst", c_void_p), ("dst_capacity", c_size_t)]


_read_slices = getattr(lib, "zt_file_read_slices", None)
if _read_slices is not None:
    _read_slices.restype = ctypes.c_int
    _read_slices.argtypes = [c_void_p, POINTER(_SliceRequest), c_size_t]


def read_planned(reader: Any, plan: Plan, rank: int, world: int) -> Dict[str, Array]:
    """rank's part of each tensor of plan from one ztensor.Reader, as numpy
    arrays, all read by one zt_file_read_slices call (one plan: a remote
    file merges ranges across tensors); one get_slice each on a library
    older than 1.3."""
    slices = {name: reader.get_slice(name) for name in plan}
    if _read_slices is None:
        return {name: sl[rank_index(sl.get_shape(), plan[name], rank, world)] for name, sl in slices.items()}
    out: Dict[str, Array] = {}
    keep: List[Any] = []  # the start/stop arrays, alive until the calls return
    handle = reader._require_open()
    file_of = getattr(reader, "_file_of", None)  # a ShardedReader: one plan per shard file
    by_file: Dict[Any, List[_SliceRequest]] = {}
    for name, sl in slices.items():
        index = rank_index(sl.shape, plan[name], rank, world)
        start = [i.start or 0 for i in index]
        stop = [sl.shape[d] if i.stop is None else i.stop for d, i in enumerate(index)]
        arr = np.empty([b - a for a, b in zip(start, stop)], dtype=sl.dtype)
        out[name] = arr
        if arr.size == 0:
            continue
        cstart, _ = shape_array(start)
        cstop, _ = shape_array(stop)
        keep += [cstart, cstop]
        f = file_of(name, handle) if file_of is not None else handle.ptr
        by_file.setdefault(f, []).append(_SliceRequest(reader._data_object(name), sl._index, len(start), cstart,
                                                       cstop, arr.ctypes.data, arr.nbytes))
    for f, reqs in by_file.items():
        check(_read_slices(f, (_SliceRequest * len(reqs))(*reqs), len(reqs)))
    return out


def _stats(st: IoStats) -> Dict[str, int]:
    return {"requests": int(st.requests), "bytes": int(st.bytes), "bytes_needed": int(st.bytes_needed)}


def set_io_stats(reader: Any) -> Dict[str, int]:
    """Requests, bytes fetched and bytes needed by every shard of a ShardedReader."""
    total = {"requests": 0, "bytes": 0, "bytes_needed": 0}
    h = reader._require_open().ptr
    n = c_size_t()
    check(lib.zt_set_shard_count(h, byref(n)))
    for i in range(n.value):
        f, loc = c_void_p(), c_char_p()
        check(lib.zt_set_shard_at(h, i, byref(f), byref(loc)))
        st = new_struct(IoStats)
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
    shards holding the planned tensors are read, one plan per shard). framework "pt" gives
    torch tensors, "np" numpy arrays. Returns (tensors, {"requests",
    "bytes", "bytes_needed"}: what was fetched and needed, opens included;
    zeros for local files)."""
    if source.split("?")[0].endswith(".json"):
        from .sharded import ShardedReader
        opener: Any = ShardedReader
    else:
        from .reader import Reader as opener  # (ztensor.open of a local path is a 2.x Source)
    with opener(source) as r:
        parts: Dict[str, Any] = read_planned(r, plan, rank, world)
        if framework in ("pt", "torch"):
            from ._torch_types import _from_numpy  # bf16/fp8 bits to torch's types
            parts = {name: _from_numpy(a, r.get_slice(name).zt_type, name) for name, a in parts.items()}
        if source.split("?")[0].endswith(".json"):  # a set: every shard's counters
            return parts, set_io_stats(r)
        st = r.io_stats()
        return parts, {"requests": st["requests"], "bytes": st["bytes"], "bytes_needed": st["bytes_needed"]}
