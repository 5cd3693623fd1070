"""Reading .zt files: a mapping from object names to numpy arrays."""

import ctypes
import os
from collections.abc import Iterator, Mapping
from ctypes import byref, c_char_p, c_size_t, c_uint64, c_void_p
from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, NamedTuple, Optional, Tuple, overload

import numpy as np

from . import _attributes, _dlpack
from ._dtypes import BY_CODE, numpy_dtype
from ._lib import (ZT_E_BUFFER_TOO_SMALL, ZT_E_NOT_ZERO_COPY, ZT_OK, ComponentInfo as _CComponentInfo,
                   IoStats, ObjectInfo as _CObjectInfo, OpenOptions, QuantInfo, SparseInfo, UrlOptions,
                   VerifyCallback, ZTensorError, check, lib, take_string)
from ._types import Array, DTypeLike, Float32Array, ObjectValue, PathLike

Shape = Tuple[int, ...]


def is_url(path: object) -> bool:
    """True for a str starting with http:// or https:// (case-insensitive)."""
    return isinstance(path, str) and path[:8].lower().startswith(("http://", "https://"))


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


class _FileHandle:
    """Owns one zt_file *. Zero-copy arrays hold it too, so the mapping
    lives until the Reader is closed AND the last such array is gone."""

    __slots__ = ("ptr", "__weakref__")

    def __init__(self, ptr: Optional[int]) -> None:
        self.ptr = ptr

    def __del__(self) -> None:
        ptr, self.ptr = self.ptr, None
        if ptr and lib is not None:
            lib.zt_close(ptr)


class _MappedBuffer:
    """Exposes bytes of the mapping to numpy, keeping the file handle alive (it becomes the array's base)."""

    def __init__(self, ptr: Optional[int], nbytes: int, dtype: "np.dtype[Any]", handle: _FileHandle) -> None:
        self._handle = handle
        self.__array_interface__ = {
            "data": (ptr, True),  # read-only: the mapping is PROT_READ
            "shape": (nbytes // dtype.itemsize,),
            "typestr": dtype.str,
            "descr": dtype.descr,
            "version": 3,
        }


def _component_info(obj: Optional[int], index: int) -> _CComponentInfo:
    ci = _CComponentInfo()
    ci.struct_size = ctypes.sizeof(ci)
    check(lib.zt_object_component(obj, index, byref(ci)))
    return ci


@overload
def _text(b: bytes) -> str: ...
@overload
def _text(b: Optional[bytes]) -> Optional[str]: ...
def _text(b: Optional[bytes]) -> Optional[str]:
    return b.decode("utf-8", "surrogateescape") if b is not None else None


class Tensor:
    """A dense object that can be handed to any DLPack consumer
    (numpy.from_dlpack, torch.from_dlpack) and converted with numpy.asarray.

    DLPack data of raw little-endian objects is zero-copy and READ-ONLY (the
    file mapping): consumers that do not know read-only DLPack (numpy < 2,
    torch) give writable-looking arrays; writing through them crashes.
    """

    def __init__(self, reader: "Reader", name: str) -> None:
        self._reader = reader
        self.name = name
        self._handle = reader._require_open()
        self._obj = reader._object(name)

    def __dlpack__(self, stream: Optional[int] = None, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> object:
        if stream is not None and stream != -1:
            raise BufferError("ztensor tensors live on the CPU; no stream applies")
        if copy:
            raise BufferError("ztensor hands out DLPack data as it is; copy=True is not supported")
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


class Reader(Mapping[str, ObjectValue]):
    """An open .zt file (any supported version) as a read-only mapping.

    reader[name] gives, by the object's format:
      dense            a numpy array of the object's shape: zero-copy and
                       read-only for raw little-endian data of a mapped file
                       (the array keeps the file mapped), a decoded copy
                       otherwise (zstd, legacy big-endian, mmap=False)
      sparse_csr       SparseCSR(values, indices, indptr, shape), or a
                       scipy.sparse.csr_matrix with sparse="scipy"
      sparse_coo       SparseCOO(values, coords[ndim, nnz], shape), or a
                       scipy.sparse.coo_matrix (2-D) with sparse="scipy"
      quantized_group  Quantized(packed_weight, scales, zeros, shape, bits,
                       group_size, packing); reader.dequantize(name) -> f32
      anything else    {role: array} of its components
    bf16 arrives as uint16 bit patterns (ztensor.bf16_to_float32), fp8 as
    uint8 bytes, complex64/complex128 as numpy complex arrays.

        with ztensor.Reader("model.zt") as r:
            print(list(r), r.attributes, r.info("w").shape)
            w = r["w"]                            # numpy, zero-copy
            t = numpy.from_dlpack(r.tensor("w"))  # DLPack
            r.verify()                            # raises ZTensorError if damaged

    mmap=False reads through pread instead of mapping the file; strict=True
    refuses files that break the format rules the default tolerates.

    A path starting with http:// or https:// is read remotely with ranged
    GETs (docs/remote.md): arrays are then always copies. bearer_token (for
    example read from a file or the environment, never hard-coded) is sent
    as "Authorization: Bearer"; url_options sets zt_url_options fields by
    name (timeout_ms, retries, cache_bytes, max_parallel, ...).
    """

    def __init__(self, path: PathLike, *, mmap: bool = True, strict: bool = False,
                 sparse: Literal["tuple", "scipy"] = "tuple", bearer_token: Optional[str] = None,
                 url_options: Optional[Mapping[str, int]] = None) -> None:
        if sparse not in ("tuple", "scipy"):
            raise ValueError('sparse must be "tuple" or "scipy"')
        self._sparse = sparse
        opts = OpenOptions()
        lib.zt_open_options_init(byref(opts))
        opts.access = 0 if mmap else 1
        opts.strict = 1 if strict else 0
        out = c_void_p()
        if is_url(path):
            uopts = UrlOptions()
            lib.zt_url_options_init(byref(uopts))
            token = bearer_token.encode() if bearer_token is not None else None
            uopts.bearer_token = token
            for key, value in (url_options or {}).items():
                if key in ("struct_size", "bearer_token", "user_agent", "reserved0") or \
                        key not in dict(UrlOptions._fields_):
                    raise ValueError(f"unknown url option {key!r}")
                setattr(uopts, key, int(value))
            check(lib.zt_open_url(str(path).encode(), byref(uopts), byref(opts), byref(out)))
        else:
            if bearer_token is not None or url_options:
                raise ValueError("bearer_token and url_options apply to http(s) URLs only")
            check(lib.zt_open(os.fsencode(path), byref(opts), byref(out)))
        self._h: Optional[_FileHandle] = _FileHandle(out.value)
        self.path = os.fspath(path)
        count = c_size_t()
        check(lib.zt_file_object_count(self._h.ptr, byref(count)))
        self._names: List[str] = []
        for i in range(count.value):
            info = self._c_info(self._object_at(i))
            self._names.append(ctypes.string_at(info.name, info.name_len).decode("utf-8", "surrogateescape"))
        self._index = {n: i for i, n in enumerate(self._names)}
        self._attributes: Any = None
        self._attributes_read = False

    def io_stats(self) -> Dict[str, int]:
        """Requests sent, body bytes received and cache hits of a remote
        file (zeros for a local one)."""
        st = IoStats()
        st.struct_size = ctypes.sizeof(IoStats)
        check(lib.zt_file_io_stats(self._require_open().ptr, byref(st)))
        return {"requests": int(st.requests), "bytes": int(st.bytes), "cache_hits": int(st.cache_hits)}

    # -- lifetime --------------------------------------------------------
    def close(self) -> None:
        """Releases the reader. Zero-copy arrays and DLPack tensors already
        handed out stay valid: the mapping goes when the last one does."""
        self._h = None

    def __enter__(self) -> "Reader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _require_open(self) -> _FileHandle:
        if self._h is None:
            raise ValueError("the Reader is closed")
        return self._h

    # -- mapping ---------------------------------------------------------
    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names))

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __getitem__(self, name: str) -> ObjectValue:
        obj = self._object(name)
        info = self._c_info(obj)
        fmt = info.format.decode("utf-8", "replace") if info.format else ""
        shape = tuple(info.shape[i] for i in range(info.ndim))
        if fmt == "dense":
            return self._array(obj, self._role_index(obj, "data"), shape)
        if fmt in ("sparse_csr", "sparse_coo"):
            return self._sparse_object(obj, shape)
        if fmt == "quantized_group":
            return self._quantized(obj, shape)
        return {ci.role: self._array(obj, i, None) for i, ci in enumerate(self._components(obj))}

    # -- file-level ------------------------------------------------------
    @property
    def version(self) -> str:
        """The file's format version ("1.2.0", "0.1.0", ...)."""
        v = c_char_p()
        check(lib.zt_file_version(self._require_open().ptr, byref(v)))
        return (v.value or b"").decode()

    @property
    def attributes(self) -> Any:
        """File attributes as Python values (bytes, float('nan'), Tagged, ...); None when absent."""
        if not self._attributes_read:
            p = c_void_p()
            check(lib.zt_file_attributes_json(self._require_open().ptr, byref(p)))
            self._attributes = _attributes.from_json_text(take_string(p.value))
            self._attributes_read = True
        return self._attributes

    def info(self, name: str) -> ObjectInfo:
        """Metadata of one object: ObjectInfo(name, format, shape, components, attributes, status, error, dtype)."""
        obj = self._object(name)
        info = self._c_info(obj)
        comps = self._components(obj)
        attrs = None
        if info.has_attributes:
            p = c_void_p()
            check(lib.zt_object_attributes_json(obj, byref(p)))
            attrs = _attributes.from_json_text(take_string(p.value))
        err = c_char_p()
        check(lib.zt_object_error(obj, byref(err)))
        fmt = _text(info.format) or ""
        data = [c for c in comps if c.role == "data"]
        return ObjectInfo(name=name, format=fmt, shape=tuple(info.shape[i] for i in range(info.ndim)),
                          components=comps, attributes=attrs, status=info.status, error=_text(err.value) or "",
                          dtype=data[0].dtype if fmt == "dense" and data else None)

    def verify(self, strict: bool = False) -> None:
        """Checks every object (structure, digests; strict: also format rules
        and bool bytes). Raises ZTensorError (with .failures, a list of
        (object, role, status, message)) if anything is wrong."""
        failures: List[Tuple[Optional[str], Optional[str], int, Optional[str]]] = []

        def collect(_user: Optional[int], obj: Optional[bytes], role: Optional[bytes], status: int,
                    message: Optional[bytes]) -> None:
            failures.append((_text(obj), _text(role), status, _text(message)))

        cb = VerifyCallback(collect)
        status = lib.zt_file_verify(self._require_open().ptr, 1 if strict else 0, cb, None)
        if status != ZT_OK:
            err = ZTensorError(status, "; ".join(f"{m}" for _, _, _, m in failures) or "verification failed")
            err.failures = failures  # type: ignore[attr-defined]
            raise err

    # -- objects ---------------------------------------------------------
    def read(self, name: str, role: str = "data") -> Array:
        """One component as a flat numpy array of its elements (zero-copy where possible)."""
        obj = self._object(name)
        return self._array(obj, self._role_index(obj, role), None)

    def tensor(self, name: str) -> Tensor:
        """A DLPack-capable view of a dense object (numpy.from_dlpack(reader.tensor(name)))."""
        return Tensor(self, name)

    def dlpack(self, name: str) -> object:
        """A "dltensor" PyCapsule of a dense object (zt_object_to_dlpack)."""
        return _dlpack.capsule_of(self._object(name))

    def dequantize(self, name: str) -> Float32Array:
        """A quantized_group object as float32 values of its shape: (q - zero) * scale."""
        obj = self._object(name)
        info = self._c_info(obj)
        shape = tuple(info.shape[i] for i in range(info.ndim))
        out = np.empty(int(np.prod(shape, dtype=np.uint64)), dtype=np.float32)
        check(lib.zt_object_dequantize(obj, out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), out.size))
        return out.reshape(shape)

    # -- internals -------------------------------------------------------
    def _object_at(self, i: int) -> Optional[int]:
        out = c_void_p()
        check(lib.zt_file_object_at(self._require_open().ptr, i, byref(out)))
        return out.value

    def _object(self, name: str) -> Optional[int]:
        if name not in self._index:
            raise KeyError(name)
        return self._object_at(self._index[name])

    @staticmethod
    def _c_info(obj: Optional[int]) -> _CObjectInfo:
        info = _CObjectInfo()
        info.struct_size = ctypes.sizeof(info)
        check(lib.zt_object_get_info(obj, byref(info)))
        return info

    @staticmethod
    def _components(obj: Optional[int]) -> List[ComponentInfo]:
        info = Reader._c_info(obj)
        out: List[ComponentInfo] = []
        for i in range(info.component_count):
            ci = _component_info(obj, i)
            out.append(ComponentInfo(role=_text(ci.role), dtype=_text(ci.dtype_name),
                                     logical_type=_text(ci.logical_type), encoding=_text(ci.encoding_name),
                                     offset=ci.offset, length=ci.length, decoded_length=ci.decoded_length,
                                     digest=_text(ci.digest), big_endian=bool(ci.big_endian), status=ci.status))
        return out

    @staticmethod
    def _role_index(obj: Optional[int], role: str) -> int:
        idx = c_size_t()
        check(lib.zt_object_component_index(obj, role.encode(), byref(idx)))
        return idx.value

    def _array(self, obj: Optional[int], index: int, shape: Optional[Shape]) -> Array:
        ci = _component_info(obj, index)
        logical = _text(ci.logical_type)
        dt = numpy_dtype(ci.dtype, logical) if ci.dtype in BY_CODE else np.dtype("u1")
        ptr, n = c_void_p(), c_size_t()
        status = lib.zt_component_view(obj, index, byref(ptr), byref(n))
        if status == ZT_OK:
            arr = np.asarray(_MappedBuffer(ptr.value, n.value, dt, self._require_open()))
        elif status == ZT_E_NOT_ZERO_COPY:
            arr = self._decoded(obj, index).view(dt)
        else:
            check(status)
        return arr if shape is None else arr.reshape(shape)

    @staticmethod
    def _decoded(obj: Optional[int], index: int) -> Array:
        need = c_size_t()
        status = lib.zt_component_read(obj, index, None, 0, byref(need))
        if status not in (ZT_OK, ZT_E_BUFFER_TOO_SMALL):
            check(status)
        buf = np.empty(need.value, dtype=np.uint8)
        check(lib.zt_component_read(obj, index, c_void_p(buf.ctypes.data), buf.size, byref(need)))
        return buf[:need.value]

    @staticmethod
    def _index_array(obj: Optional[int], role: str) -> Array:
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

    def _sparse_object(self, obj: Optional[int], shape: Shape) -> ObjectValue:
        si = SparseInfo()
        si.struct_size = ctypes.sizeof(si)
        check(lib.zt_object_sparse_info(obj, byref(si)))
        values = self._array(obj, si.values_index, None)
        if si.is_csr:
            indices, indptr = self._index_array(obj, "indices"), self._index_array(obj, "indptr")
            if self._sparse == "scipy":
                import scipy.sparse
                return scipy.sparse.csr_matrix((values, indices, indptr), shape=shape)
            return SparseCSR(values, indices, indptr, shape)
        coords = self._index_array(obj, "coords").reshape(len(shape), -1)
        if self._sparse == "scipy":
            import scipy.sparse
            if len(shape) != 2:
                raise ValueError(f"scipy.sparse holds 2-D matrices; this COO object has shape {shape}")
            return scipy.sparse.coo_matrix((values, (coords[0], coords[1])), shape=shape)
        return SparseCOO(values, coords, shape)

    def _quantized(self, obj: Optional[int], shape: Shape) -> Quantized:
        qi = QuantInfo()
        qi.struct_size = ctypes.sizeof(qi)
        check(lib.zt_object_quant_info(obj, byref(qi)))
        packed = self._array(obj, self._role_index(obj, _text(qi.packed_role)), None)
        scales = self._array(obj, self._role_index(obj, "scales"), None)
        zeros = self._array(obj, self._role_index(obj, "zeros"), None) if qi.has_zeros else None
        return Quantized(packed, scales, zeros, shape, qi.bits, qi.group_size, _text(qi.packing))
