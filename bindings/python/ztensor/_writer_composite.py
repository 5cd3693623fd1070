"""Writer's composite objects: sparse_csr, sparse_coo, quantized_group,
as functions Writer takes as its methods."""

import ctypes
from ctypes import byref, c_uint64, c_void_p
from typing import TYPE_CHECKING, Any, Optional, Union

from ._dtypes import storage_for
from ._lib import QuantParams, lib, new_struct, shape_array
from ._types import ArrayLike
from ._writer_types import _USE_DEFAULT, Digest, Shape, Zstd, _c_text, _dimension, _name_bytes, _u64, _UseDefault

if TYPE_CHECKING:
    from .writer import Writer


def add_sparse_csr(self: "Writer", name: str, values: Optional[ArrayLike] = None, indices: Optional[ArrayLike] = None,
                   indptr: Optional[ArrayLike] = None, shape: Optional[Shape] = None, *, matrix: Any = None,
                   dtype: Optional[str] = None, zstd: Union[Zstd, _UseDefault] = _USE_DEFAULT,
                   digest: Union[Digest, _UseDefault] = _USE_DEFAULT, attributes: Any = None) -> None:
    """Adds a sparse_csr object from (values, indices, indptr, shape) or from
    a scipy.sparse matrix (matrix=...). Indices are stored as u64.

        w.add_sparse_csr("s", [1.0, 2.0], [0, 2], [0, 1, 2], (2, 3))
        w.add_sparse_csr("m", matrix=scipy.sparse.random(100, 100, 0.01, format="csr"))
    """
    if matrix is not None:
        m = matrix.tocsr()
        values, indices, indptr, shape = m.data, m.indices, m.indptr, m.shape
    if shape is None or len(shape) != 2:
        raise ValueError("sparse_csr needs a 2-D shape (rows, cols)")
    if values is None or indices is None or indptr is None:
        raise ValueError("sparse_csr needs values, indices and indptr (or matrix=)")
    code, logical, vals = storage_for(values, dtype)
    idx, ptr = _u64(indices, "indices"), _u64(indptr, "indptr")
    rows, cols = _dimension(shape[0]), _dimension(shape[1])
    # The library reads nnz indices and rows + 1 offsets: arrays of other
    # lengths would have it read past their ends.
    if idx.size != vals.size:
        raise ValueError(f"sparse_csr {name!r}: {idx.size} indices for {vals.size} values")
    if ptr.size != rows + 1:
        raise ValueError(f"sparse_csr {name!r}: indptr has {ptr.size} entries, the {rows} rows need {rows + 1}")
    nb = _name_bytes(name)
    opts = self._blob_options(zstd, digest, logical)
    self._check(lib.zt_writer_add_csr(self._handle(), nb, len(nb), rows, cols, code,
                                c_void_p(vals.ctypes.data), vals.size,
                                idx.ctypes.data_as(ctypes.POINTER(c_uint64)),
                                ptr.ctypes.data_as(ctypes.POINTER(c_uint64)), byref(opts)))
    if attributes is not None:
        self.set_object_attributes(name, attributes)

def add_sparse_coo(self: "Writer", name: str, values: ArrayLike, coords: ArrayLike, shape: Shape, *,
                   dtype: Optional[str] = None, zstd: Union[Zstd, _UseDefault] = _USE_DEFAULT,
                   digest: Union[Digest, _UseDefault] = _USE_DEFAULT, attributes: Any = None) -> None:
    """Adds a sparse_coo object: coords is (ndim, nnz) (or flat, dims first).

        w.add_sparse_coo("c", [5, 7], [[0, 1], [2, 0]], (2, 3))  # (0,2)=5, (1,0)=7
    """
    code, logical, vals = storage_for(values, dtype)
    c = _u64(coords, "coords").reshape(-1)
    dims, ndim = shape_array(shape)
    if c.size != ndim * vals.size:  # the library reads ndim * nnz coordinates
        raise ValueError(f"sparse_coo {name!r}: {c.size} coordinates for {vals.size} values of {ndim} dimensions "
                         f"(needs {ndim * vals.size})")
    nb = _name_bytes(name)
    opts = self._blob_options(zstd, digest, logical)
    self._check(lib.zt_writer_add_coo(self._handle(), nb, len(nb), dims, ndim, code, c_void_p(vals.ctypes.data),
                                vals.size, c.ctypes.data_as(ctypes.POINTER(c_uint64)), byref(opts)))
    if attributes is not None:
        self.set_object_attributes(name, attributes)

def add_quantized(self: "Writer", name: str, packed_weight: ArrayLike, scales: ArrayLike, zeros: Optional[ArrayLike],
                  shape: Shape, *, bits: int, group_size: int, packing: str, scales_dtype: Optional[str] = None,
                  zeros_dtype: Optional[str] = None, zstd: Union[Zstd, _UseDefault] = _USE_DEFAULT,
                  digest: Union[Digest, _UseDefault] = _USE_DEFAULT) -> None:
    """Adds a quantized_group object (see ztensor_composite.h for packings):
    packed_weight int32/uint32 words or uint8 bytes, per-group scales
    (float; scales_dtype="bf16" for bit patterns) and zeros (None: no
    zeros component, zero point 2^(bits-1)).

        w.add_quantized("q", packed, scales, None, (rows, cols), bits=4, group_size=128,
                        packing="8_per_i32")
    """
    pcode, _, packed = storage_for(packed_weight)
    scode, _, sc = storage_for(scales, scales_dtype)
    p = new_struct(QuantParams)
    p.bits, p.group_size, p.packing = int(bits), int(group_size), _c_text(packing, "packing")
    p.packed_dtype, p.packed, p.packed_len = pcode, c_void_p(packed.ctypes.data), packed.nbytes
    p.scales_dtype, p.scales, p.scales_len = scode, c_void_p(sc.ctypes.data), sc.nbytes
    if zeros is not None:
        zcode, _, zr = storage_for(zeros, zeros_dtype)
        p.zeros_dtype, p.zeros, p.zeros_len = zcode, c_void_p(zr.ctypes.data), zr.nbytes
    dims, ndim = shape_array(shape)
    nb = _name_bytes(name)
    opts = self._blob_options(zstd, digest)
    self._check(lib.zt_writer_add_quantized_group(self._handle(), nb, len(nb), dims, ndim, byref(p), byref(opts)))
