"""The bulk reads behind load_file, read_many and mapped views: one backend,
chosen once, when the package is imported.

- The C++ extension ztensor._ext (ztensor/_native.py finds it), where it
  could be built: the per-tensor work in C++.
- ctypes and numpy, only where no extension could be built (or
  ZTENSOR_PURE_PYTHON=1): the same two calls, complete, slower per tensor.

Both take an object table (ztensor._table.Table) and give the same results:

  read_dense(file, table, select, split) -> ({name: value or None}, failed)
      The data of every selected row (all dense; None: every row) read
      with one zt_file_read_many into one new buffer, grouped by element
      type and shape. split=None gives numpy arrays; else split(block,
      zt_type, first name) turns each (count, *shape) block into the
      framework's tensors. A tensor that could not be read into its slot (a
      declared size other than its shape's, a failed read) is None and is
      listed in failed as (name, row, dtype, zt_type, shape): the caller
      reads it alone, which sizes it or raises with its detail.

  mapped_views(file, table, select, keeper, convert) -> ({name: value or None}, status)
      Zero-copy read-only arrays of the file's mapping (each keeps `keeper`
      alive), passed through convert(array, zt_type, name) when given; None
      for data that must be decoded (zstd, big-endian): the caller copies.
"""

import ctypes
import functools
from ctypes import byref, c_size_t, c_void_p
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _native
from ._dtypes import BY_CODE, numpy_dtype, zt_type_name
from ._lib import ZT_E_NOT_ZERO_COPY, ZT_OK, ReadRequest, lib
from ._table import Table
from ._types import Array

Shape = Tuple[int, ...]
Failed = List[Tuple[str, int, "np.dtype[Any]", str, Shape]]
Split = Optional[Callable[[Array, str, str], Sequence[Any]]]
Convert = Optional[Callable[[Array, str, str], Any]]

backend = "extension" if _native.ext is not None else "ctypes"

# zt_read_request as a numpy record (ctypes field-by-field costs ~1 us per tensor).
_REQUEST_DTYPE = np.dtype({"names": ["object", "component", "dst", "dst_capacity", "out_size", "status"],
                           "formats": ["<u8", "<u8", "<u8", "<u8", "<u8", "<i4"],
                           "offsets": [0, 8, 16, 24, 32, 40], "itemsize": ctypes.sizeof(ReadRequest)})


@functools.lru_cache(maxsize=None)  # a few (code, logical type) pairs exist
def element_type(code: int, logical: Optional[str]) -> Tuple["np.dtype[Any]", str]:
    """(numpy dtype, zt type name) of a data component's dtype code and logical type."""
    dt = numpy_dtype(code, logical) if code in BY_CODE else np.dtype("u1")
    return dt, zt_type_name(code, logical) if code >= 0 else "u8"


class MappedBuffer:
    """Exposes bytes of the mapping to numpy, keeping `keeper` (the file
    handle) alive: it becomes the array's base."""

    def __init__(self, ptr: Optional[int], nbytes: int, dtype: "np.dtype[Any]", keeper: object,
                 writable: bool = False) -> None:
        self._keeper = keeper
        self.__array_interface__ = {
            # Read-only for numpy unless the caller knows the bytes are a
            # private copy-on-write mapping (not the caller's buffer of
            # Reader(bytes)): a write then stays in this process.
            "data": (ptr, not writable),
            "shape": (nbytes // dtype.itemsize,),
            "typestr": dtype.str,
            "descr": dtype.descr,
            "version": 3,
        }


def _rows(table: Table, select: Optional[List[int]]) -> Array:
    rows_of = np.flatnonzero(table.rows["dense"]) if select is None else np.asarray(select, dtype=np.int64)
    bad = np.flatnonzero(table.rows["dense"][rows_of] == 0)
    if len(bad):
        name = table.names[int(rows_of[int(bad[0])])]
        raise ValueError(f"read_many reads dense objects; {name!r} is not a dense tensor")
    return rows_of


def _group_rows(keys: Array) -> Tuple[Array, Array]:
    """np.unique(keys, axis=0, return_inverse=True) for rows of int64."""
    if len(keys) == 0:
        return keys, np.zeros(0, dtype=np.int64)
    order = np.lexsort(keys.T[::-1])
    ordered = keys[order]
    starts = np.ones(len(keys), dtype=bool)
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    group_ids = np.cumsum(starts) - 1
    inverse = np.empty(len(keys), dtype=np.int64)
    inverse[order] = group_ids
    return ordered[starts], inverse


def _read_dense_ctypes(file: Optional[int], table: Table, select: Optional[List[int]], split: Split
                       ) -> Tuple[Dict[str, Any], Failed]:
    rows_of = _rows(table, select)
    chosen = table.rows[rows_of]
    n = len(rows_of)
    plan = []  # (zt_type, dtype, shape, members, offset, each)
    total = 0
    if n:
        unique, inverse = _group_rows(table.group_keys(rows_of))
        order = np.argsort(inverse, kind="stable")  # file order within a group
        counts = np.bincount(inverse, minlength=len(unique))
        ends = np.cumsum(counts)
        for g, key in enumerate(unique.tolist()):
            members = order[ends[g] - counts[g]:ends[g]]
            logical = table.logical_type(int(rows_of[int(members[0])])) if key[1] else None
            dt, zt = element_type(key[0], logical)
            shape = tuple(key[3:3 + key[2]])
            each = int(np.prod(shape, dtype=np.uint64)) * dt.itemsize
            total = (total + 63) // 64 * 64
            plan.append((zt, dt, shape, members, total, each))
            total += each * len(members)
    buf = np.empty(max(total, 1), dtype=np.uint8)
    reqs = np.zeros(n, dtype=_REQUEST_DTYPE)
    reqs["object"] = chosen["object"]
    reqs["component"] = chosen["data_component"]
    for _, _, _, members, offset, each in plan:
        reqs["dst"][members] = buf.ctypes.data + offset + each * np.arange(len(members), dtype=np.uint64)
        reqs["dst_capacity"][members] = each
    odd = chosen["data_decoded_length"] != reqs["dst_capacity"]
    reqs["dst_capacity"][odd] = 0  # read alone by the caller
    reqs["status"] = -9
    if n:
        lib.zt_file_read_many(file, reqs.ctypes.data_as(ctypes.POINTER(ReadRequest)), n)
    bad = set(np.flatnonzero((reqs["status"] != ZT_OK) | (reqs["out_size"] != reqs["dst_capacity"]) | odd).tolist())
    values: List[Any] = [None] * n
    failed: Failed = []
    names = table.names
    for zt, dt, shape, members, offset, each in plan:
        count = len(members)
        block = buf[offset:offset + each * count].view(dt).reshape((count,) + shape)
        if split is None:
            parts: Sequence[Any] = list(block) if shape else [block[j:j + 1].reshape(()) for j in range(count)]
        else:
            parts = split(block, zt, names[int(rows_of[int(members[0])])])
        first = int(members[0])
        if int(members[-1]) - first + 1 == count:  # a run of positions (the usual case): one slice assignment
            values[first:first + count] = parts
        else:
            for k, part in zip(members.tolist(), parts):
                values[k] = part
    for k in sorted(bad):
        row = int(rows_of[k])
        values[k] = None
        failed.append((names[row], row, *element_type(int(table.rows["data_dtype"][row]), table.logical_type(row)),
                       table.shape(row)))
    return dict(zip((names[i] for i in rows_of.tolist()), values)), failed


def _mapped_views_ctypes(file: Optional[int], table: Table, select: List[int], keeper: object, convert: Convert
                         ) -> Tuple[Dict[str, Any], int]:
    rows_of = _rows(table, select)
    ptr, size = c_void_p(), c_size_t()
    found = []
    out: Dict[str, Any] = {}
    for i in rows_of.tolist():
        row = table.rows[i]
        status = lib.zt_component_view(c_void_p(int(row["object"])), int(row["data_component"]), byref(ptr),
                                       byref(size))
        if status == ZT_OK:
            found.append((i, ptr.value or 0, size.value))
        elif status == ZT_E_NOT_ZERO_COPY:
            out[table.names[i]] = None
        else:
            return out, int(status)
    if found:
        lo = min(p for _, p, _ in found)
        hi = max(p + k for _, p, k in found)
        span = np.asarray(MappedBuffer(lo, max(hi - lo, 1), np.dtype("u1"), keeper))
        for i, p, k in found:
            dt, zt = element_type(int(table.rows["data_dtype"][i]), table.logical_type(i))
            array = span[p - lo:p - lo + k].view(dt).reshape(table.shape(i))
            out[table.names[i]] = array if convert is None else convert(array, zt, table.names[i])
    return {table.names[i]: out[table.names[i]] for i in rows_of.tolist()}, ZT_OK


def _read_dense_ext(file: Optional[int], table: Table, select: Optional[List[int]], split: Split
                   ) -> Tuple[Dict[str, Any], Failed]:
    result: Tuple[Dict[str, Any], Failed] = _EXT.read_dense(file, table.raw_rows, table.row_size, table.raw_dims,
                                                              table.names, select, element_type, split)
    return result


def _mapped_views_ext(file: Optional[int], table: Table, select: List[int], keeper: object, convert: Convert
                      ) -> Tuple[Dict[str, Any], int]:
    result: Tuple[Dict[str, Any], int] = _EXT.mapped_views(file, table.raw_rows, table.row_size, table.raw_dims,
                                                           table.names, select, element_type, keeper, convert)
    return result


# The backend, chosen here once.
_EXT: Any = _native.ext
read_dense = _read_dense_ext if _EXT is not None else _read_dense_ctypes
mapped_views = _mapped_views_ext if _EXT is not None else _mapped_views_ctypes
