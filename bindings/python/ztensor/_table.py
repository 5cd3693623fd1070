"""Every object of an open file listed once, at open: names, shapes, formats
and the "data" component of each, as numpy arrays.

One call (zt_file_object_table), wrapped by the C++ extension when it is
there (ztensor._ext: the names decoded in C): asking object by object
would cost several ctypes round trips per object (~40 us), the reason the
batched call exists. The name -> row index is built the first time a
lookup by name needs it: a whole-file load never does (for 26,000 names
it is a dict of as many ints, about 0.1 us per tensor of a load).
"""

import ctypes
from ctypes import POINTER, byref, c_void_p
from typing import Dict, List, Optional, Tuple

import numpy as np

from . import _native
from ._lib import ComponentInfo, ObjectTable, check, lib, new_struct
from ._types import Array

# zt_object_row's declared fields (include/ztensor.h); the row size comes
# from the library, which may append fields.
_FIELDS = [("object", "<u8", 0), ("name_offset", "<u8", 8), ("name_len", "<u8", 16), ("dims_offset", "<u8", 24),
           ("ndim", "<u4", 32), ("dense", "<u4", 36), ("data_component", "<u8", 40), ("data_dtype", "<i4", 48),
           ("data_has_logical_type", "<u4", 52), ("data_decoded_length", "<u8", 56), ("status", "<i4", 64)]
ROW_SIZE = 72
NO_COMPONENT = (1 << 64) - 1


def row_dtype(itemsize: int) -> "np.dtype[np.void]":
    return np.dtype({"names": [f[0] for f in _FIELDS], "formats": [f[1] for f in _FIELDS],
                     "offsets": [f[2] for f in _FIELDS], "itemsize": itemsize})


class Table:
    """rows: a structured array of zt_object_row fields, one per object in
    file order; names: the objects' names; dims: every shape concatenated
    (int64); index: name -> row (built on first use). raw_rows / raw_dims / row_size: the
    library's bytes, as the extension reads them (None for a table built
    object by object); all_dense: every object is a dense tensor."""

    __slots__ = ("rows", "names", "dims", "_index", "_logical", "raw_rows", "raw_dims", "row_size", "all_dense")

    def __init__(self, rows: Array, names: List[str], dims: Array,
                 raw: Optional[Tuple[bytes, bytes, int]] = None) -> None:
        self.rows = rows
        self.names = names
        self.dims = dims.astype(np.int64)
        self._index: Optional[Dict[str, int]] = None
        self._logical: Dict[int, Optional[str]] = {}
        self.raw_rows, self.raw_dims, self.row_size = raw if raw is not None else (None, None, 0)
        self.all_dense = bool(rows["dense"].all())  # the usual checkpoint: no per-read format check

    @property
    def index(self) -> Dict[str, int]:
        """name -> row, built the first time it is asked for."""
        index = self._index
        if index is None:
            index = self._index = dict(zip(self.names, range(len(self.names))))
        return index

    def shape(self, i: int) -> Tuple[int, ...]:
        row = self.rows[i]
        first = int(row["dims_offset"])
        return tuple(self.dims[first:first + int(row["ndim"])].tolist())

    def object(self, i: int) -> int:
        return int(self.rows["object"][i])

    def group_keys(self, rows_of: Array) -> Array:
        """One row per object in rows_of: (data dtype, logical type id, ndim,
        dims...) padded with zeros, for grouping objects of one type and
        shape with numpy (np.unique) instead of a Python loop."""
        chosen = self.rows[rows_of]
        ndim = chosen["ndim"].astype(np.int64)
        width = int(ndim.max()) if len(ndim) else 0
        keys = np.zeros((len(rows_of), 3 + width), dtype=np.int64)
        keys[:, 0] = chosen["data_dtype"]
        keys[:, 2] = ndim
        first = chosen["dims_offset"].astype(np.int64)
        for j in range(width):
            has = ndim > j
            keys[has, 3 + j] = self.dims[first[has] + j]
        logical_ids: Dict[Optional[str], int] = {}
        for k in np.flatnonzero(chosen["data_has_logical_type"]).tolist():
            name = self.logical_type(int(rows_of[k]))
            keys[k, 1] = logical_ids.setdefault(name, len(logical_ids) + 1)
        return keys

    def logical_type(self, i: int) -> Optional[str]:
        """The "data" component's logical type (looked up once, for the rare rows that have one)."""
        if i not in self._logical:
            value = None
            if self.rows["data_has_logical_type"][i]:
                ci = new_struct(ComponentInfo)
                check(lib.zt_object_component(c_void_p(self.object(i)), int(self.rows["data_component"][i]),
                                              byref(ci)))
                value = ci.logical_type.decode("utf-8", "surrogateescape") if ci.logical_type else None
            self._logical[i] = value
        return self._logical[i]


def _split_names(blob: bytes, offsets: Array, lengths: Array) -> List[str]:
    """The names out of the table's blob, where each is followed by a NUL."""
    text = blob.decode("utf-8", "surrogateescape")
    parts = text.split("\0")
    if len(parts) == len(offsets) + 1:  # no name holds a NUL: one split does it
        parts.pop()
        return parts
    return [blob[a:b].decode("utf-8", "surrogateescape") for a, b in
            zip(offsets.tolist(), (offsets + lengths).tolist())]


def read(file_ptr: Optional[int]) -> Table:
    """The table of an open zt_file *."""
    if _native.ext is not None:
        got = _native.ext.object_table(file_ptr)
        if isinstance(got, int):
            check(got)
            raise AssertionError("zt_file_object_table failed without a status")  # check() raised
        raw, row_size, names, raw_dims = got
        rows = np.frombuffer(raw, dtype=row_dtype(row_size), count=len(names))
        return Table(rows, names, np.frombuffer(raw_dims, dtype=np.uint64), (raw, raw_dims, row_size))
    out = POINTER(ObjectTable)()
    check(lib.zt_file_object_table(file_ptr, byref(out)))
    try:
        t = out.contents
        count, row_size = int(t.count), int(t.row_size)
        if row_size < ROW_SIZE:
            raise ImportError(f"libztensor's zt_object_row is {row_size} bytes, this binding reads {ROW_SIZE}")
        raw = ctypes.string_at(t.rows, count * row_size) if count else b""
        rows = np.frombuffer(raw, dtype=row_dtype(row_size), count=count)
        names_blob = ctypes.string_at(t.names, t.names_len) if t.names_len else b""
        dims = np.frombuffer(ctypes.string_at(t.dims, 8 * t.dims_len) if t.dims_len else b"", dtype="<u8")
    finally:
        lib.zt_free(out)
    return Table(rows, _split_names(names_blob, rows["name_offset"], rows["name_len"]), dims)
