"""Storage dtypes and logical types of zTensor, and their numpy equivalents.

numpy has no bfloat16 and no fp8 types: bf16 data is returned as uint16 (the
raw bit patterns; see ztensor.bf16_to_float32) and fp8 data (logical types
f8_e4m3fn, f8_e5m2, ...) as uint8 bytes. complex64 / complex128 logical
types become numpy complex arrays of the object's shape.
"""

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ._lib import ZTensorError
from ._types import Array, ArrayLike, Float32Array, Uint16Array

# zt_dtype value, short name, numpy dtype (little-endian)
_TABLE: List[Tuple[int, str, "np.dtype[Any]"]] = [
    (1, "f64", np.dtype("<f8")),
    (2, "f32", np.dtype("<f4")),
    (3, "f16", np.dtype("<f2")),
    (4, "bf16", np.dtype("<u2")),  # raw bfloat16 bits
    (5, "i64", np.dtype("<i8")),
    (6, "i32", np.dtype("<i4")),
    (7, "i16", np.dtype("<i2")),
    (8, "i8", np.dtype("i1")),
    (9, "u64", np.dtype("<u8")),
    (10, "u32", np.dtype("<u4")),
    (11, "u16", np.dtype("<u2")),
    (12, "u8", np.dtype("u1")),
    (13, "bool", np.dtype("?")),
]
BY_CODE: Dict[int, Tuple[str, "np.dtype[Any]"]] = {code: (name, dt) for code, name, dt in _TABLE}
CODE_BY_NAME = {name: code for code, name, _ in _TABLE}
FP8_TYPES = ("f8_e4m3fn", "f8_e5m2", "f8_e4m3fnuz", "f8_e5m2fnuz", "f8_e8m0fnu")
COMPLEX_TYPES: Dict[str, Tuple[int, "np.dtype[Any]"]] = {"complex64": (2, np.dtype("<c8")), "complex128": (1, np.dtype("<c16"))}  # storage code, numpy

# Packed sub-byte logical types over u8 bytes, bits per element: v2's
# f4_e2m1 and safetensors' F4 (two elements a byte), F6_E2M3 / F6_E3M2
# (four in three bytes). numpy has no such dtypes: see packed_shape.
PACKED_BITS: Dict[str, int] = {"f4_e2m1": 4, "f6_e2m3": 6, "f6_e3m2": 6}


def packed_shape(name: str, logical: str, shape: Tuple[int, ...], nbytes: int) -> Tuple[int, ...]:
    """The uint8 array shape of a packed sub-byte tensor of `shape` in
    `nbytes` bytes: f4_e2m1 with an even last dimension as torch's
    float4_e2m1fn_x2 holds it and safetensors gives F4 (two elements a
    byte along the last axis: that dimension halved). Anything else has no
    shape of whole bytes: ZTensorError (ZT_E_UNSUPPORTED) naming it; its
    bytes are still there for Reader.read(name) or the 2.x Tensor.tobytes()."""
    if logical == "f4_e2m1" and shape and shape[-1] % 2 == 0 and int(np.prod(shape, dtype=np.uint64)) // 2 == nbytes:
        return shape[:-1] + (shape[-1] // 2,)
    if logical == "f4_e2m1":
        why = ("is read as uint8 pairs along its last dimension (torch's float4_e2m1fn_x2, safetensors' F4), "
               "which must be even")
    else:
        why = f"packs {PACKED_BITS[logical]}-bit elements, which no numpy or torch dtype holds"
    raise ZTensorError(-7, f"{name!r}: {logical} of shape {list(shape)} {why}: read its bytes with Reader.read(name)")


# safetensors' names for the element types (get_dtype()); ztensor's own
# short name, upper-cased, where safetensors has none.
_SAFETENSORS_NAMES = {"f64": "F64", "f32": "F32", "f16": "F16", "bf16": "BF16", "i64": "I64", "i32": "I32",
                      "i16": "I16", "i8": "I8", "u64": "U64", "u32": "U32", "u16": "U16", "u8": "U8", "bool": "BOOL",
                      "f8_e4m3fn": "F8_E4M3", "f8_e5m2": "F8_E5M2", "f8_e4m3fnuz": "F8_E4M3FNUZ",
                      "f8_e5m2fnuz": "F8_E5M2FNUZ", "f8_e8m0fnu": "F8_E8M0", "f8_e8m0": "F8_E8M0",
                      "f4_e2m1": "F4", "f6_e2m3": "F6_E2M3", "f6_e3m2": "F6_E3M2", "complex64": "C64",
                      "complex128": "C128"}


def zt_type_name(code: int, logical_type: Optional[str] = None) -> str:
    """The element type of a component: its logical type if it has one, else the storage dtype's short name."""
    if logical_type:
        return logical_type
    return BY_CODE[code][0] if code in BY_CODE else f"dtype {code}"


def safetensors_name(code: int, logical_type: Optional[str] = None) -> str:
    """The element type in safetensors' spelling ("F32", "BF16", "F8_E4M3", ...)."""
    name = zt_type_name(code, logical_type)
    return _SAFETENSORS_NAMES.get(name, name.upper())


# numpy kind+itemsize -> zt code (bf16 never inferred: uint16 is u16)
_FROM_NUMPY = {("f", 8): 1, ("f", 4): 2, ("f", 2): 3, ("i", 8): 5, ("i", 4): 6, ("i", 2): 7, ("i", 1): 8,
               ("u", 8): 9, ("u", 4): 10, ("u", 2): 11, ("u", 1): 12, ("b", 1): 13}


def numpy_dtype(code: int, logical_type: Optional[str] = None) -> "np.dtype[Any]":
    """numpy dtype for one logical element of a component."""
    if logical_type in COMPLEX_TYPES and COMPLEX_TYPES[logical_type][0] == code:
        return COMPLEX_TYPES[logical_type][1]
    if code not in BY_CODE:
        raise TypeError(f"storage dtype {code} has no numpy equivalent")
    return BY_CODE[code][1]


def code_for_name(dtype: str) -> Tuple[int, Optional[str]]:
    """(zt dtype code, logical type or None) for a storage or logical type name."""
    if dtype in COMPLEX_TYPES:
        return COMPLEX_TYPES[dtype][0], dtype
    if dtype in FP8_TYPES:
        return 12, dtype
    if dtype not in CODE_BY_NAME:
        raise TypeError(f"unknown zTensor dtype {dtype!r}")
    return CODE_BY_NAME[dtype], None


def storage_for(array: ArrayLike, dtype: Optional[str] = None) -> Tuple[int, Optional[str], Array]:
    """(zt dtype code, logical type or None, little-endian contiguous array) for writing `array`.

    dtype may name a storage dtype ("f32", "bf16", ...) or a logical type
    ("f8_e4m3fn", "complex64", ...). "bf16" takes uint16 bit patterns (or
    float arrays, rounded to nearest even); fp8 types take uint8 bytes.
    """
    arr = np.asarray(array)
    if dtype is None:
        if arr.dtype.kind == "c":
            logical = "complex64" if arr.dtype.itemsize == 8 else "complex128"
            return storage_for(arr, logical)
        key = (arr.dtype.kind, arr.dtype.itemsize)
        if key not in _FROM_NUMPY:
            raise TypeError(f"numpy dtype {arr.dtype} has no zTensor storage dtype")
        return _FROM_NUMPY[key], None, _little(arr)
    if dtype in COMPLEX_TYPES:
        code, npdt = COMPLEX_TYPES[dtype]
        return code, dtype, _little(arr.astype(npdt, copy=False))
    if dtype in FP8_TYPES:
        if arr.dtype != np.uint8:
            raise TypeError(f"{dtype} data must be given as uint8 bytes (numpy has no fp8 type), got {arr.dtype}")
        return 12, dtype, _little(arr)
    if dtype == "bf16":
        if arr.dtype.kind == "f":
            arr = float32_to_bf16(arr)
        elif arr.dtype not in (np.dtype("<u2"), np.dtype(">u2"), np.dtype("<i2"), np.dtype(">i2")):
            raise TypeError(f"bf16 data must be uint16 bit patterns or floats, got {arr.dtype}")
        return 4, None, _little(arr.astype(arr.dtype.newbyteorder("<"), copy=False).view("<u2"))
    if dtype not in CODE_BY_NAME:
        raise TypeError(f"unknown zTensor dtype {dtype!r}")
    code = CODE_BY_NAME[dtype]
    return code, None, _little(arr.astype(BY_CODE[code][1], copy=False))


def _little(arr: Array) -> Array:
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return np.ascontiguousarray(arr)


def bf16_to_float32(bits: ArrayLike) -> Float32Array:
    """Widens raw bfloat16 bit patterns (uint16) to float32 (exact).

        ztensor.bf16_to_float32(np.array([0x3F80], np.uint16))  # array([1.], dtype=float32)
    """
    b = np.asarray(bits, dtype=np.uint16)
    return (b.astype(np.uint32) << 16).view(np.float32)


def float32_to_bf16(values: ArrayLike) -> Uint16Array:
    """Rounds float32 values to bfloat16 (nearest, ties to even) and returns the bit patterns as uint16.

        ztensor.float32_to_bf16([1.0, 3.0])  # array([16256, 16448], dtype=uint16)
    """
    f = np.ascontiguousarray(np.asarray(values, dtype=np.float32))
    u = f.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    return np.where(nan, (u >> 16).astype(np.uint16) | 0x0040, rounded)
