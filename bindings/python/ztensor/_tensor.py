"""Handles on one dense object: Tensor (DLPack, numpy.asarray) and Slice
(lazy, reads only the indexed box)."""

from ctypes import c_void_p
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

import numpy as np

from . import _dlpack
from ._dtypes import BY_CODE, numpy_dtype, safetensors_name, zt_type_name
from ._handle import _component_info, _text
from ._lib import check, lib, shape_array, text_field
from ._slicing import Index, box_of
from ._types import Array, DTypeLike

if TYPE_CHECKING:
    from .reader import Reader

Shape = Tuple[int, ...]


class Tensor:
    """A dense object that can be handed to any DLPack consumer
    (numpy.from_dlpack, torch.from_dlpack) and converted with numpy.asarray.

    copy=True (Reader.tensor's default): each __dlpack__ hands out a private
    decoded copy, which the consumer may modify in place.
    copy=False: DLPack data of raw little-endian objects of a mapped file is
    the mapping itself, zero-copy; numpy >= 2 marks it read-only, consumers
    that do not know read-only DLPack (numpy < 2, torch) see it writable:
    in-place writes there reach only this process's copy-on-write pages of
    a mapped file, and for Reader(buffer) they change the caller's buffer (even
    a bytes object): use copy=True there unless you only read.
    """

    def __init__(self, reader: "Reader", name: str, copy: bool = True) -> None:
        self._reader = reader
        self.name = name
        self.copy = copy
        self._handle = reader._require_open()
        self._obj = reader._data_object(name)

    def __dlpack__(self, stream: Optional[int] = None, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> object:
        if stream is not None and stream != -1:
            raise BufferError("ztensor tensors live on the CPU; no stream applies")
        if copy is False and self.copy:
            raise BufferError("this Tensor hands out copies (Reader.tensor(name, copy=False) does not)")
        if copy or self.copy:
            data = self._reader.read_many([self.name])[self.name]
            return _dlpack.capsule_of_copy(self._obj, np.ascontiguousarray(data))
        return _dlpack.capsule_of(self._obj)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (1, 0)  # kDLCPU, device 0

    def __array__(self, dtype: DTypeLike = None, copy: Optional[bool] = None) -> Array:
        arr: Array = self._reader[self.name]
        return arr if dtype is None else arr.astype(dtype)

    def numpy(self) -> Array:
        """The object as a numpy array (as reader[name])."""
        arr: Array = self._reader[self.name]
        return arr

    @property
    def shape(self) -> Shape:
        return self._reader.info(self.name).shape

    @property
    def dtype(self) -> Optional[str]:
        """The storage dtype's short name ("f32", "bf16", ...)."""
        return self._reader.info(self.name).dtype


class Slice:
    """A lazy handle on one dense object (Reader.get_slice, safe_open.get_slice):
    get_shape(), get_dtype(), and indexing with ints, slices (any step), `...`
    and tuples of them, N-d, which reads only the indexed box.

        s = r.get_slice("w")          # nothing read yet
        s[2:4, ::2]                   # rows 2-3, every other column
        s[-1], s[..., 0], s[:]        # like numpy (an int drops its dimension)
    """

    def __init__(self, reader: "Reader", name: str) -> None:
        self._reader = reader
        self.name = name
        obj = reader._object(name)
        info = reader._c_info(obj)
        fmt = _text(text_field(info, "format")) or ""
        if fmt != "dense":
            raise ValueError(f"get_slice reads dense objects; {name!r} is {fmt or 'of no format'}")
        self._index = reader._role_index(obj, "data")
        ci = _component_info(obj, self._index)
        self._logical = _text(text_field(ci, "logical_type"))
        self._code = ci.dtype
        self.zt_type = zt_type_name(ci.dtype, self._logical)  # "f32", "bf16", "f8_e4m3fn", ...
        self._dtype = numpy_dtype(ci.dtype, self._logical) if ci.dtype in BY_CODE else np.dtype("u1")
        self.shape: Shape = tuple(info.shape[i] for i in range(info.ndim))

    def get_shape(self) -> List[int]:
        """The object's shape, as a list (safetensors' get_shape)."""
        return list(self.shape)

    def get_dtype(self) -> str:
        """The element type in safetensors' spelling: "F32", "BF16", "I64", "BOOL",
        "F8_E4M3", "C64", ... (ztensor's own name for types safetensors lacks)."""
        return safetensors_name(self._code, self._logical)

    @property
    def dtype(self) -> "np.dtype[Any]":
        """The numpy dtype the slices come in (bf16 as uint16 bits, fp8 as uint8)."""
        return self._dtype

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __getitem__(self, index: Index) -> Array:
        handle = self._reader._require_open()  # held until the read returns (see _holding)
        box = box_of(index, self.shape)
        extent = tuple(b - a for a, b in zip(box.start, box.stop))
        out = np.empty(extent, dtype=self._dtype)
        if out.size:
            obj = self._reader._data_object(self.name)
            start, _ = shape_array(box.start)
            stop, _ = shape_array(box.stop)
            check(lib.zt_component_read_slice(obj, self._index, len(self.shape), start, stop,
                                              c_void_p(out.ctypes.data), out.nbytes))
        del handle
        part = out[box.post]
        # A view of the box is returned as is when no step or int made it
        # strided; np.array also turns an all-int index's scalar into a 0-d array.
        return part if isinstance(part, np.ndarray) and part.flags.c_contiguous else np.array(part)
