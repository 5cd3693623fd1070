"""Reader's batched reads: read_many (and, through it, load_file) and
mapped_views, over the one backend ztensor._bulk chose at import: functions
that Reader takes as its methods."""

import gc
from ctypes import byref, c_size_t, c_void_p
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np

from . import _bulk
from ._dtypes import BY_CODE, PACKED_BITS, numpy_dtype, packed_shape
from ._handle import _component_info, _holding, _text
from ._lib import ZTensorError, check, lib, text_field
from ._table import Table
from ._types import Array

if TYPE_CHECKING:
    from .reader import Reader

Shape = Tuple[int, ...]


@_holding
def read_many(self: "Reader", names: Optional[Iterable[str]] = None) -> Dict[str, Array]:
    """Dense objects as new, writable numpy arrays of their shapes, read in
    one batched call (zt_file_read_many: in parallel, straight into the
    arrays). names=None reads every dense object; naming an object of
    another format raises ValueError.

        arrays = r.read_many(["w", "b"])

    The arrays are views of one new buffer that this process owns (an
    anonymous allocation, not a mapping of the file): changing or
    truncating the file afterwards does not touch them.
    """
    return self._read_dense(None if names is None else list(names), None, None)

def _read_dense(self: "Reader", names: Optional[List[str]], split: Optional[Callable[[Array, str, str], Any]],
                convert: Optional[Callable[[Array, str, str], Any]]) -> Dict[str, Any]:
    """{name: value} for the dense objects `names` (None: every object,
    all dense) read with one zt_file_read_many per file into one new
    buffer the values keep alive. split=None gives numpy arrays; else
    split(block, zt_type, first name) turns each group of one type and
    shape into the framework's tensors, and convert(array, zt_type, name)
    each tensor read alone. An object that is not dense raises ValueError."""
    handle = self._require_open()  # held: a close() on another thread waits for this call
    sources = self._dense_sources(handle)
    plan: List[Tuple[Optional[int], Table, Optional[List[int]]]] = []
    if names is None:  # every dense object
        plan = [(ptr, table, None if table.all_dense else [int(i) for i in table.rows["dense"].nonzero()[0]])
                for ptr, table in sources]
    elif len(sources) == 1:
        ptr, table = sources[0]
        index = table.index
        plan = [(ptr, table, [index[n] for n in names])]  # KeyError for a name not in the file
    else:  # a ShardedReader: each name's shard
        rows_of: List[List[int]] = [[] for _ in sources]
        for name in names:
            for k, (_, table) in enumerate(sources):
                if name in table.index:
                    rows_of[k].append(table.index[name])
                    break
            else:
                raise KeyError(name)
        plan = [(ptr, table, rows) for (ptr, table), rows in zip(sources, rows_of) if rows]
    for _, table, select in plan:
        if select is not None and not table.all_dense:  # None: the dense ones
            dense = table.rows["dense"] if select is None else table.rows["dense"][select]
            if not bool(dense.all()):
                row = int(next(i for i, d in zip(select, dense) if not d))
                name = table.names[row]
                raise ValueError(f"read_many reads dense objects; {name!r} is "
                                 f"{self.format_of(name) or 'of no format'}")
    out: Dict[str, Any] = {}
    collecting = gc.isenabled()
    gc.disable()  # tens of thousands of new tensors, none of them garbage: no collection over the heap
    try:
        for ptr, table, select in plan:
            part, failed = _bulk.read_dense(ptr, table, select, split)
            for name, row, dt, zt_type, shape in failed:
                # A declared size other than the shape's (a damaged or
                # legacy file) or a failed read: read alone, which sizes
                # it or raises with its detail.
                data = self._decoded(table.object(row), int(table.rows["data_component"][row]))
                logical = table.logical_type(row)
                if logical in PACKED_BITS:  # uint8 pairs (f4_e2m1), or ZTensorError naming it
                    shape = packed_shape(name, logical, shape, data.size)
                if data.size % dt.itemsize:
                    raise ZTensorError(-47, f"{name!r}: {data.size} bytes do not hold whole {dt} elements")
                array = data.view(dt).reshape(shape)
                part[name] = array if convert is None else convert(array, zt_type, name)
            if len(plan) == 1:
                out = part
            else:
                out.update(part)
    finally:
        if collecting:
            gc.enable()
    del handle
    if len(plan) > 1 and names is not None:
        out = {name: out[name] for name in names}  # the order asked
    return out

@_holding
def mapped_views(self: "Reader", names: Iterable[str]) -> Dict[str, Array]:
    """Dense objects as zero-copy, read-only arrays of the file's mapping
    (what reader[name] gives, for many names at once: one library call
    per tensor instead of several). Objects whose data must be decoded
    come back as writable copies. The hazard of mapped views applies
    (see the README): only for files nothing modifies meanwhile."""
    names = list(names)
    if self._table is None:  # a ShardedReader: each on its own
        return {name: self[name] for name in names}
    result: Dict[str, Array] = self._mapped(names, None)
    return result

def _mapped(self: "Reader", names: List[str], convert: Optional[Callable[[Array, str, str], Any]]
            ) -> Dict[str, Any]:
    """mapped_views, each view passed through convert(array, zt_type,
    name) when given (those read as copies too)."""
    table = self._table
    assert table is not None
    handle = self._require_open()
    index = table.index
    select = [index[n] for n in names]  # KeyError for a name not in the file
    if not table.all_dense:
        for n, row in zip(names, select):
            if not table.rows["dense"][row]:
                raise ValueError(f"mapped_views reads dense objects; {n!r} is {self.format_of(n)}")
    # Packed sub-byte types (f4_e2m1, f6_*) have no view of the shape's
    # elements: each alone (uint8 pairs, or an error naming it), in order.
    typed = np.flatnonzero(table.rows["data_has_logical_type"][select])  # rare: fp8, complex, packed
    packed = {names[k] for k in typed.tolist() if table.logical_type(select[k]) in PACKED_BITS}
    if packed:
        select = [row for n, row in zip(names, select) if n not in packed]
    out, status = _bulk.mapped_views(handle.ptr, table, select, handle, convert)
    check(status)
    if packed:
        out = {n: None if n in packed else out[n] for n in names}
    for name, value in out.items():
        if value is None:  # decoded (zstd, big-endian): a writable copy
            copied = self[name]
            out[name] = copied if convert is None else convert(copied, self.element_type(name), name)
    del handle
    return out


def iter_chunks(self: "Reader", name: str, role: str = "data", chunk_bytes: int = 1 << 24) -> Iterator[Array]:
    """A component's decoded elements in pieces (flat arrays of at most
    about chunk_bytes), in bounded memory whatever its size: zstd is
    decoded as it goes, and sizes and digests (verify=True) are checked
    by the end. For copying or hashing tensors bigger than memory.

        for piece in r.iter_chunks("huge"):
            out.write(piece.tobytes())
    """
    obj = self._data_object(name)
    index = self._role_index(obj, role)
    ci = _component_info(obj, index)
    dt = numpy_dtype(ci.dtype, _text(text_field(ci, "logical_type"))) if ci.dtype in BY_CODE else np.dtype("u1")
    capacity = max(chunk_bytes // dt.itemsize, 1) * dt.itemsize
    stream = c_void_p()
    check(lib.zt_component_stream_open(obj, index, byref(stream)))
    handle = self._require_open()  # the stream shares the file; held while iterating
    try:
        n = c_size_t()
        while True:
            buf = np.empty(capacity, dtype=np.uint8)
            check(lib.zt_component_stream_read(stream, c_void_p(buf.ctypes.data), capacity, byref(n)))
            if n.value == 0:
                break
            if n.value % dt.itemsize:
                raise ZTensorError(-47, f"{name!r}/{role}: a piece of {n.value} bytes splits a {dt} element")
            yield buf[:n.value].view(dt)
    finally:
        lib.zt_component_stream_close(stream)
        del handle
