"""Objects other than dense tensors, as reader[name] gives them: sparse
(SparseCSR, SparseCOO, or scipy.sparse) and quantized groups."""

import ctypes
from ctypes import byref, c_size_t, c_uint64
from typing import TYPE_CHECKING, Optional, Tuple

import numpy as np

from ._handle import _text
from ._info import Quantized, SparseCOO, SparseCSR
from ._lib import ZT_E_BUFFER_TOO_SMALL, ZT_OK, QuantInfo, SparseInfo, ZTensorError, check, lib, new_struct
from ._types import Array, ObjectValue

if TYPE_CHECKING:
    from .reader import Reader

Shape = Tuple[int, ...]


def index_array(obj: Optional[int], role: str) -> Array:
    n = c_size_t()
    status = lib.zt_object_read_index(obj, role.encode(), None, 0, byref(n))
    if status not in (ZT_OK, ZT_E_BUFFER_TOO_SMALL):
        check(status)
    out = np.empty(n.value, dtype=np.uint64)
    check(lib.zt_object_read_index(obj, role.encode(), out.ctypes.data_as(ctypes.POINTER(c_uint64)), out.size,
                                   byref(n)))
    if out.size and out.max() > np.iinfo(np.int64).max:
        raise ZTensorError(-62, f"{role}: an index does not fit in int64")
    return out.astype(np.int64)

def sparse_object(reader: "Reader", obj: Optional[int], shape: Shape) -> ObjectValue:
    """A sparse_csr / sparse_coo object as SparseCSR / SparseCOO (or scipy.sparse with sparse=\"scipy\")."""
    si = new_struct(SparseInfo)
    check(lib.zt_object_sparse_info(obj, byref(si)))
    values = reader._array(obj, si.values_index, None)
    if si.is_csr:
        indices, indptr = index_array(obj, "indices"), index_array(obj, "indptr")
        if reader._sparse == "scipy":
            import scipy.sparse
            return scipy.sparse.csr_matrix((values, indices, indptr), shape=shape)
        return SparseCSR(values, indices, indptr, shape)
    coords = index_array(obj, "coords").reshape(len(shape), -1)
    if reader._sparse == "scipy":
        import scipy.sparse
        if len(shape) != 2:
            raise ValueError(f"scipy.sparse holds 2-D matrices; this COO object has shape {shape}")
        return scipy.sparse.coo_matrix((values, (coords[0], coords[1])), shape=shape)
    return SparseCOO(values, coords, shape)

def quantized(reader: "Reader", obj: Optional[int], shape: Shape) -> Quantized:
    """A quantized_group object's components (Reader.dequantize gives its values)."""
    qi = new_struct(QuantInfo)
    check(lib.zt_object_quant_info(obj, byref(qi)))
    packed = reader._array(obj, reader._role_index(obj, _text(qi.packed_role)), None)
    scales = reader._array(obj, reader._role_index(obj, "scales"), None)
    zeros = reader._array(obj, reader._role_index(obj, "zeros"), None) if qi.has_zeros else None
    return Quantized(packed, scales, zeros, shape, qi.bits, qi.group_size, _text(qi.packing))
