"""2.x's ztensor.index(paths): a Source that locates without mapping. Its
handles answer name, shape, dtype, parts, location and caps from the
metadata, read their bytes on request (tobytes, DLPack: a copy), and
export no buffer: memoryview(t) raises, as 2.x's does for a part that is
not a mapped range. The file is opened without a mapping (pread), so an
index costs the metadata reads only.

On Python 3.11 a Python object cannot refuse the buffer protocol itself
(that is PEP 688's __buffer__, Python 3.12), and 2.x's Tensor is an
ndarray here (V2Tensor); an IndexedTensor is one over a placeholder numpy
cannot export (a 0-d datetime64: memoryview raises ValueError)."""

import os
from typing import Any, List, Optional, Tuple

import numpy as np

from . import _dlpack
from ._dtypes import BY_CODE, numpy_dtype, zt_type_name
from ._handle import _component_info, _text
from ._lib import text_field
from .reader import Reader
from ._v2 import Caps, Location, NoDLPackTypeError, Source, V2Tensor


class IndexedTensor(V2Tensor):
    """A V2Tensor of ztensor.index: no bytes in memory until asked for."""

    _nbytes: int
    _index: int
    _element: Optional["np.dtype[Any]"]  # the typed element, None when DLPack has none

    def _bytes(self) -> "np.ndarray[Any, Any]":
        return self._reader._decoded(self._obj, self._index)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, str):
            return indexed_part(self._reader, self.name, self._obj, index, self.parts, self.layout)
        return self._bytes()[index]

    @property
    def nbytes(self) -> int:
        return self._nbytes

    def tobytes(self, order: Any = "C") -> bytes:
        return self._bytes().tobytes()

    def __dlpack__(self, stream: Optional[int] = None, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> object:
        _dlpack.check_cpu_request(stream, dl_device)
        if self._element is None:
            raise NoDLPackTypeError(f"{self.name!r}: its type ({self.logical or self._dtype}) has no DLPack type: "
                                    "read its bytes (tobytes)")
        if copy is False:
            raise BufferError(f"{self.name!r} comes from ztensor.index, which maps nothing: DLPack gives a copy")
        raw = self._bytes()
        typed = raw.view(self._element)
        if self._shape != (-1,) and typed.size == int(np.prod(self._shape)):
            typed = typed.reshape(self._shape)
        obj = self._obj if self.layout == "dense" and self.part == "data" else None
        if max_version is not None and tuple(max_version)[0] >= 1:
            return _dlpack.versioned_capsule(obj, np.ascontiguousarray(typed), read_only=False, copied=True)
        return _dlpack.capsule_of_copy(obj, np.ascontiguousarray(typed))


def indexed_part(reader: Reader, name: str, obj: int, role: Optional[str], parts: List[str],
                 layout: str) -> IndexedTensor:
    if role is None:
        if len(parts) != 1:
            raise ValueError(f"{name!r} has parts {parts}: index the one you mean (t[{parts[0]!r}])")
        role = parts[0]
    if role not in parts:
        raise KeyError(f"{name!r} has no part {role!r} (it has {parts})")
    index = reader._role_index(obj, role)
    ci = _component_info(obj, index)
    logical = _text(text_field(ci, "logical_type"))
    t = np.zeros((), "M8[s]").view(IndexedTensor)  # numpy exports no buffer of it
    info = reader._c_info(obj)
    shape = tuple(int(info.shape[i]) for i in range(info.ndim)) if role == "data" else (-1,)
    nbytes = int(ci.decoded_length)
    typed: Any = None
    if ci.dtype in BY_CODE and (not logical or logical.startswith("complex")):
        dt = numpy_dtype(ci.dtype, logical)
        if nbytes % dt.itemsize == 0:
            typed = dt
    if shape == (-1,):
        shape = (nbytes // typed.itemsize,) if typed is not None else (nbytes,)
    elif typed is not None and nbytes != int(np.prod(shape)) * typed.itemsize:
        typed = None  # packed (f4_e2m1) or damaged: bytes only
    encoding = _text(text_field(ci, "encoding_name")) or "raw"
    local = reader.path is not None and os.path.isfile(reader.path)
    locate = bool(local and encoding == "raw" and not ci.big_endian)
    offset = int(ci.offset)
    t.name, t.part, t.parts, t.layout, t.logical = name, role, parts, layout, logical
    t._reader, t._obj, t._index, t._shape, t._nbytes = reader, obj, index, shape, nbytes
    t._typed, t._element = None, typed
    t._dtype = str(_text(text_field(ci, "dtype_name")) or zt_type_name(ci.dtype))
    t._location = Location(str(reader.path), offset, int(ci.length)) if locate else None
    align = offset & -offset if offset else 1 << 20
    t._caps = Caps(map=False, locate=locate, evict=False, verify=bool(ci.digest), alignment=min(align, 1 << 20))
    return t


def indexed_handle(reader: Reader, name: str) -> IndexedTensor:
    """Source[name] of an index: the tensor, or (several parts) its first
    part answering for the whole, as _v2._handle."""
    obj = reader._object(name)
    assert obj is not None
    info = reader.info(name)
    parts = [c.role for c in info.components]
    if len(parts) == 1:
        return indexed_part(reader, name, obj, None, parts, info.format)
    t = indexed_part(reader, name, obj, parts[0], parts, info.format)
    t.part = None
    t._shape = tuple(info.shape)
    return t


def index(paths: Any) -> Source:
    """ztensor.index(path or [paths]): a Source whose tensors locate and
    read without mapping the file (2.x's index)."""
    return Source(paths, mmap=False, handle=indexed_handle)
