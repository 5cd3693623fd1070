"""What Reader.info, Reader.metadata and reader[name] describe objects with."""

from dataclasses import dataclass, field
from typing import List, NamedTuple, Optional, Tuple

from ._types import Array

Shape = Tuple[int, ...]

class SparseCSR(NamedTuple):
    """A sparse_csr object: values[nnz], indices[nnz] and indptr[rows + 1] (int64), shape (rows, cols)."""
    values: Array
    indices: Array
    indptr: Array
    shape: Shape


class SparseCOO(NamedTuple):
    """A sparse_coo object: values[nnz], coords[ndim, nnz] (int64), shape."""
    values: Array
    coords: Array
    shape: Shape


class Quantized(NamedTuple):
    """A quantized_group object's parts; Reader.dequantize gives the float32 values."""
    packed_weight: Array
    scales: Array
    zeros: Optional[Array]  # None: no zeros component, zero point 2^(bits-1)
    shape: Shape
    bits: int
    group_size: int
    packing: Optional[str]


@dataclass
class ComponentInfo:
    """One stored component (blob) of an object."""
    role: str
    dtype: str  # storage dtype short name ("f32", "bf16", ...), or as found if unknown
    logical_type: Optional[str]
    encoding: str
    offset: int
    length: int  # stored bytes
    decoded_length: int
    digest: Optional[str]
    big_endian: bool
    status: int  # 0, or the damage found at open


@dataclass
class ObjectInfo:
    """What Reader.info(name) says about one object."""
    name: str
    format: str
    shape: Tuple[int, ...]
    components: List[ComponentInfo]
    attributes: object  # decoded attribute value, None when absent
    status: int  # 0, or why the object cannot be read (see `error`)
    error: str = ""
    dtype: Optional[str] = field(default=None)  # the "data" component's dtype, for dense objects


class TensorMetadata(NamedTuple):
    """What Reader.metadata(name) gives (the original package's TensorMetadata):
    the "data" component's type, encoding, offset and stored size."""
    name: str
    dtype: str
    shape: Tuple[int, ...]
    format: str
    encoding: str
    offset: int
    size: int


_LONG_NAMES = {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16", "i64": "int64",
               "i32": "int32", "i16": "int16", "i8": "int8", "u64": "uint64", "u32": "uint32", "u16": "uint16",
               "u8": "uint8", "bool": "bool"}
