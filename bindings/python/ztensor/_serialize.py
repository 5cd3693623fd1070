"""safetensors' low-level calls: serialize, serialize_file, deserialize and
TensorSpec, which describe tensors by address so that a file is built
without converting (materialising) them first.

    spec = TensorSpec(dtype="float32", shape=[2, 3], data_ptr=arr.ctypes.data, data_len=arr.nbytes)
    data = serialize({"w": spec}, metadata={"step": "1"})
    [(name, {"dtype": "F32", "shape": [2, 3], "data": b"..."})] = deserialize(data)
"""

import ctypes
import os
from ctypes import c_void_p
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _safe
from ._dtypes import CODE_BY_NAME, safetensors_name
from ._lib import BlobOptions, lib, new_struct, shape_array
from ._errors import SafetensorError
from ._types import PathLike, Source
from .reader import Reader
from .writer import Writer

# safetensors' codes and the torch/numpy names TensorSpec accepts -> zTensor type.
_BY_NAME = {"F64": "f64", "F32": "f32", "F16": "f16", "BF16": "bf16", "I64": "i64", "I32": "i32", "I16": "i16",
            "I8": "i8", "U64": "u64", "U32": "u32", "U16": "u16", "U8": "u8", "BOOL": "bool",
            "F8_E4M3": "f8_e4m3fn", "F8_E5M2": "f8_e5m2", "F8_E4M3FNUZ": "f8_e4m3fnuz",
            "F8_E5M2FNUZ": "f8_e5m2fnuz", "C64": "complex64", "C128": "complex128",
            "float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16", "int64": "i64",
            "int32": "i32", "int16": "i16", "int8": "i8", "uint64": "u64", "uint32": "u32", "uint16": "u16",
            "uint8": "u8", "bool": "bool", "float8_e4m3fn": "f8_e4m3fn", "float8_e5m2": "f8_e5m2",
            "float8_e4m3fnuz": "f8_e4m3fnuz", "float8_e5m2fnuz": "f8_e5m2fnuz", "complex64": "complex64",
            "complex128": "complex128"}
_STORAGE = {"f8_e4m3fn": "u8", "f8_e5m2": "u8", "f8_e4m3fnuz": "u8", "f8_e5m2fnuz": "u8", "complex64": "f32",
            "complex128": "f64"}
_SIZE = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u64": 8, "u32": 4,
         "u16": 2, "u8": 1, "bool": 1, "f8_e4m3fn": 1, "f8_e5m2": 1, "f8_e4m3fnuz": 1, "f8_e5m2fnuz": 1,
         "complex64": 8, "complex128": 16}


class TensorSpec:
    """One tensor for serialize/serialize_file, by address: dtype (safetensors'
    code "F32" or a torch/numpy name "float32"), shape, data_ptr and data_len
    (bytes, little-endian, C order). Nothing is read until serialize; the
    memory must stay valid until then. An unknown dtype or a length that is
    not the shape's raises SafetensorError here."""

    __slots__ = ("_zt", "shape", "data_ptr", "data_len")

    def __init__(self, *, dtype: str, shape: Sequence[int], data_ptr: int, data_len: int) -> None:
        zt = _BY_NAME.get(dtype)
        if zt is None:
            raise SafetensorError(f"unknown dtype {dtype!r}")
        self._zt = zt
        self.shape = [int(d) for d in shape]
        self.data_ptr = int(data_ptr)
        self.data_len = int(data_len)
        self._check()

    def _check(self) -> None:
        """The lengths agree (checked again by serialize: the attributes can
        be reassigned), so that the library never reads past data_len. The
        address itself is the caller's promise, as with ctypes."""
        if any(d < 0 for d in self.shape):
            raise SafetensorError(f"shape {self.shape} has a negative dimension")
        numel = 1
        for d in self.shape:
            numel *= d
        if numel * _SIZE[self._zt] != self.data_len:
            raise SafetensorError(f"shape {self.shape} of {self.dtype} is {numel * _SIZE[self._zt]} bytes, data_len "
                                  f"is {self.data_len}")
        if not 0 <= self.data_ptr < 1 << 64 or not 0 <= self.data_len < 1 << 63:
            raise SafetensorError(f"data_ptr {self.data_ptr} or data_len {self.data_len} is not an address and size")
        if self.data_len and not self.data_ptr:
            raise SafetensorError("data_ptr is NULL")

    @property
    def dtype(self) -> str:
        """safetensors' code of the type ("F32", "BF16", ...)."""
        return safetensors_name(CODE_BY_NAME.get(_STORAGE.get(self._zt, self._zt), 0),
                                self._zt if self._zt in _STORAGE else None)

    def __repr__(self) -> str:
        return f"TensorSpec(dtype={self.dtype!r}, shape={self.shape}, data_len={self.data_len})"


def _write(tensor_dict: Mapping[str, TensorSpec], target: Optional[PathLike],
           metadata: Optional[Mapping[str, str]]) -> Optional[bytes]:
    if not isinstance(tensor_dict, Mapping):
        raise TypeError(f"tensor_dict must be a dict of str to TensorSpec, not {type(tensor_dict).__name__}")
    for name, spec in tensor_dict.items():
        if not isinstance(spec, TensorSpec):
            raise TypeError(f"{name!r}: serialize takes TensorSpec values, not {type(spec).__name__}")
    meta = _safe.check_metadata(metadata)
    with Writer(target) as w:
        for name in sorted(tensor_dict):  # canonical order, as save()
            spec = tensor_dict[name]
            spec._check()
            storage = _STORAGE.get(spec._zt, spec._zt)
            opts = new_struct(BlobOptions)
            if spec._zt in _STORAGE:
                opts.logical_type = spec._zt.encode()
            dims, ndim = shape_array(spec.shape)
            nb = name.encode("utf-8", "surrogateescape")
            w._check(lib.zt_writer_add_dense(w._handle(), nb, len(nb), CODE_BY_NAME[storage], dims, ndim,
                                             c_void_p(spec.data_ptr or None), spec.data_len, ctypes.byref(opts)))
        if meta is not None:
            w.attributes = meta
    return w.getvalue() if target is None else None


def serialize(tensor_dict: Mapping[str, TensorSpec], metadata: Optional[Dict[str, str]] = None) -> bytes:
    """The bytes of a .zt file holding the tensors the specs point at."""
    data = _write(tensor_dict, None, metadata)
    assert data is not None
    return data


def serialize_file(tensor_dict: Mapping[str, TensorSpec], filename: PathLike,
                   metadata: Optional[Dict[str, str]] = None) -> None:
    """Writes the tensors the specs point at to filename, atomically."""
    _write(tensor_dict, os.fspath(filename), metadata)


def deserialize(data: Source) -> List[Tuple[str, Dict[str, Any]]]:
    """[(name, {"shape": [...], "dtype": "F32", "data": bytes}), ...] of a
    .zt file's bytes, in file order (safetensors' deserialize)."""
    out: List[Tuple[str, Dict[str, Any]]] = []
    with Reader(data) as r:
        names = _safe.dense_names(r)
        arrays = r.read_many(names)
        for name in names:
            s = r.get_slice(name)
            out.append((name, {"shape": list(s.shape), "dtype": s.get_dtype(), "data": arrays[name].tobytes()}))
    return out
