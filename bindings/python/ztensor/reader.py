"""Reading .zt files (and the other formats the library opens): Reader, a
mapping from object names to numpy arrays. Its parts: _handle (the open
file), _info (what objects are described with), _tensor (Tensor, Slice),
_reader_bulk (batched reads, over the backend _bulk chose at import),
_reader_original (the original 1.x package's calls)."""

import ctypes
import os
from collections.abc import Iterator, Mapping
from ctypes import byref, c_char_p, c_size_t, c_void_p
from typing import Any, Dict, List, Literal, Optional, Tuple

import numpy as np

from . import _attributes, _composite, _dlpack, _identity, _openers, _shards
from ._bulk import MappedBuffer
from ._dtypes import BY_CODE, PACKED_BITS, numpy_dtype, packed_shape, zt_type_name
from ._file_object import open_file_object
from ._handle import _component_info, _FileHandle, _holding, _is_buffer, _text, file_is_copy_on_write, is_url
from ._info import ComponentInfo, ObjectInfo, Quantized, SparseCOO, SparseCSR, TensorMetadata
from ._lib import (ZT_E_BUFFER_TOO_SMALL, ZT_E_NOT_ZERO_COPY, ZT_OK, IoStats,
                   ObjectInfo as _CObjectInfo, OpenOptions, UrlOptions, ZTensorError, ZTensorFileNotFoundError,
                   check, lib, new_struct, take_string, text_field, verify_file)
from ._redact import redact_url
from . import _reader_bulk, _reader_original
from ._slicing import Index
from ._table import Table as _Table, read as _read_table
from ._tensor import Slice, Tensor
from ._types import Array, Float32Array, ObjectValue, Source

__all__ = ["Reader", "Tensor", "Slice", "ObjectInfo", "ComponentInfo", "TensorMetadata", "SparseCSR", "SparseCOO",
           "Quantized", "is_url"]

Shape = Tuple[int, ...]


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

    The source is a path, or the bytes of a whole file (bytes, bytearray,
    memoryview, mmap.mmap, or any other buffer): those are read in place,
    not copied, and stay referenced (bytearray/mmap cannot be resized or
    closed) until the reader and every zero-copy array from it are gone.
    Do not modify a mutable buffer while it is open.

        r = ztensor.Reader(ztensor.numpy.save({"x": np.ones(3)}))

    mmap=False reads through pread instead of mapping the file; strict=True
    refuses files that break the format rules the default tolerates;
    verify=True checks each object's digests the first time its data is
    read (any read: reader[name], read, read_many, get_slice, tensor) and
    raises ZTensorError instead of returning damaged data. prefetch=True
    says most of the file will be read soon (a whole-model load): a
    background thread of the library reads the file's data into the page
    cache in file order from the open on, so a cold file loads at the
    disk's sequential speed (docs/cold-reads.md); the load_file functions
    set it. Local files only; ignored for buffers and URLs.

    A path starting with http:// or https:// is read remotely with ranged
    GETs (docs/remote.md): arrays are then always copies. bearer_token (for
    example read from a file or the environment, never hard-coded) is sent
    as "Authorization: Bearer" to http(s):// URLs only (never to an s3://
    endpoint, nor to another host); url_options sets zt_url_options fields by
    name (timeout_ms, retries, cache_bytes, max_parallel, ...).
    """

    # The object table (None for readers that list objects another way, as
    # ShardedReader does).
    _table: Optional[_Table] = None
    # Whether the library was asked to prefetch (prefetch=True).
    prefetching: bool = False
    # name -> position, for readers without a table (ShardedReader sets it).
    _own_index: Optional[Dict[str, int]] = None

    # Batched reads (_reader_bulk) and the original 1.x package's calls
    # (_reader_original), written as functions of a Reader.
    read_many = _reader_bulk.read_many
    mapped_views = _reader_bulk.mapped_views
    _read_dense = _reader_bulk._read_dense
    _mapped = _reader_bulk._mapped
    iter_chunks = _reader_bulk.iter_chunks
    metadata = _reader_original.metadata
    read_numpy = _reader_original.read_numpy
    read_torch = _reader_original.read_torch
    read_tensors = _reader_original.read_tensors
    read_into = _reader_original.read_into
    _copy_on_write = _reader_original._copy_on_write
    _names_arg = _reader_original._names_arg
    _data_offset = _reader_original._data_offset
    content_digest = _identity.content_digest
    canonical = _identity.canonical

    def __init__(self, source: Source, *, mmap: bool = True, strict: bool = False,
                 sparse: Literal["tuple", "scipy"] = "tuple", verify: bool = False,
                 bearer_token: Optional[str] = None, url_options: Optional[Mapping[str, Any]] = None,
                 prefetch: bool = False, shard_resolver: Optional["_shards.Resolver"] = None) -> None:
        if sparse not in ("tuple", "scipy"):
            raise ValueError('sparse must be "tuple" or "scipy"')
        self._sparse = sparse
        opts = self._open_options(mmap, strict, verify, prefetch)
        out = c_void_p()
        buffer: Optional[Array] = None
        keep: Any = None
        if isinstance(source, (str, os.PathLike)) and is_url(source):
            uopts = new_struct(UrlOptions)
            token = bearer_token.encode() if bearer_token is not None else None
            uopts.bearer_token = token
            for key, value in (url_options or {}).items():
                if key in ("struct_size", "bearer_token", "user_agent", "reserved0") or \
                        key not in dict(UrlOptions._fields_):
                    raise ValueError(f"unknown url option {key!r}")
                if dict(UrlOptions._fields_)[key] is c_char_p:  # s3_region, aws_secret_access_key, ...
                    setattr(uopts, key, None if value is None else str(value).encode())
                else:
                    setattr(uopts, key, int(value))
            url = os.fsdecode(source)
            if shard_resolver is not None:  # a v2 root's shards, by the caller's convention
                check(_shards.open_sharded(url, byref(opts), byref(uopts), shard_resolver, out))
            else:
                check(lib.zt_open_url(url.encode(), byref(uopts), byref(opts), byref(out)))
            self.path: Optional[str] = url
        elif bearer_token is not None or url_options:
            raise ValueError("bearer_token and url_options apply to http(s):// and s3:// URLs only")
        elif isinstance(source, (str, os.PathLike)):
            status = lib.zt_open(os.fsencode(source), byref(opts), byref(out)) if shard_resolver is None else \
                _shards.open_sharded(os.fsencode(source), byref(opts), None, shard_resolver, out)
            if status != ZT_OK and not os.path.exists(source):
                raise ZTensorFileNotFoundError(redact_url(os.fsdecode(source)),  # ftp://..., file://...: refused
                                               lib.zt_last_error().decode("utf-8", "replace"))
            if status != ZT_OK:
                # A file of a format the library does not read that an
                # adapter converts (ztensor.torch: a PyTorch .pt/.bin, read by
                # torch.load(weights_only=True)): an in-memory .zt file.
                converted = _openers.fallback_bytes(os.fsdecode(source))
                if converted is not None:
                    buffer = np.frombuffer(converted, dtype=np.uint8)
                    status = lib.zt_open_memory(c_void_p(buffer.ctypes.data), buffer.size, byref(opts), byref(out))
            check(status)
            self.path = os.fsdecode(source)
        elif shard_resolver is not None:
            raise ValueError("shard_resolver applies to a path or URL (a root whose shards are other files)")
        elif hasattr(source, "read") and hasattr(source, "seek") and not _is_buffer(source):
            keep = open_file_object(source, opts, out)
            self.path = None
        else:
            try:
                buffer = np.frombuffer(source, dtype=np.uint8)
            except (TypeError, ValueError) as e:
                raise TypeError(f"Reader takes a path or a buffer of file bytes, not {type(source).__name__}: "
                                f"{e}") from None
            # An empty buffer has no address numpy can give: any valid one will do.
            data = buffer.ctypes.data if buffer.size else ctypes.addressof(ctypes.c_char())
            check(lib.zt_open_memory(c_void_p(data), buffer.size, byref(opts), byref(out)))
            self.path = None
        self._h: Optional[_FileHandle] = _FileHandle(out.value, buffer)
        self._h.keep = keep  # a file object's callback, live until zt_close
        # Every object's name, shape and data component, listed once (one
        # call with libztensor >= 1.2): lookups then cost no C call.
        self._table = _read_table(self._h.ptr)
        self._names: List[str] = self._table.names
        self._attributes: Any = None
        self._attributes_read = False

    @_holding
    def io_stats(self) -> Dict[str, Any]:
        """Requests sent, body bytes received, cache hits, bytes the reads
        needed (the open's included), `ratio` (bytes / bytes_needed: what
        was fetched per byte needed) and `wait_s` (seconds reading calls
        waited on requests) of a remote file (zeros for a local one)."""
        st = new_struct(IoStats)
        check(lib.zt_file_io_stats(self._require_open().ptr, byref(st)))
        needed = int(st.bytes_needed)
        return {"requests": int(st.requests), "bytes": int(st.bytes), "cache_hits": int(st.cache_hits),
                "bytes_needed": needed, "ratio": int(st.bytes) / needed if needed else 0.0,
                "wait_s": int(st.wait_ns) / 1e9}

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

    @property
    def _index(self) -> Dict[str, int]:
        """name -> position: the table's index (built on first use: a
        whole-file load never asks), or the one a subclass set."""
        if self._own_index is not None:
            return self._own_index
        assert self._table is not None
        return self._table.index

    @_index.setter
    def _index(self, index: Dict[str, int]) -> None:
        self._own_index = index

    # -- mapping ---------------------------------------------------------
    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names))

    def __contains__(self, name: object) -> bool:
        return name in self._index

    @_holding
    def __getitem__(self, name: str) -> ObjectValue:
        obj = self._data_object(name)
        info = self._c_info(obj)
        fmt = _text(text_field(info, "format")) or ""
        shape = tuple(info.shape[i] for i in range(info.ndim))
        if fmt == "dense":
            return self._array(obj, self._role_index(obj, "data"), shape)
        if fmt in ("sparse_csr", "sparse_coo"):
            return _composite.sparse_object(self, obj, shape)
        if fmt == "quantized_group":
            return _composite.quantized(self, obj, shape)
        return {ci.role: self._array(obj, i, None) for i, ci in enumerate(self._components(obj))}

    # -- file-level ------------------------------------------------------
    @property
    @_holding
    def version(self) -> str:
        """The file's format version ("1.2.0", "0.1.0", ...)."""
        v = c_char_p()
        check(lib.zt_file_version(self._require_open().ptr, byref(v)))
        return (v.value or b"").decode()

    @property
    def format(self) -> str:
        """The file's format, by the original zTensor reader's names: "zt",
        "safetensors", "pickle" (a PyTorch checkpoint), "gguf", "npz",
        "onnx", "hdf5", and "npy" (docs/foreign.md)."""
        version = self.version
        if version[:1].isdigit():
            return "zt"
        return version.split(" ")[0]  # "gguf v3" -> "gguf"

    @property
    @_holding
    def attributes(self) -> Any:
        """File attributes as Python values (bytes, float('nan'), Tagged, ...); None when absent."""
        if not self._attributes_read:
            p = c_void_p()
            check(lib.zt_file_attributes_json(self._require_open().ptr, byref(p)))
            self._attributes = _attributes.from_json_text(take_string(p.value))
            self._attributes_read = True
        return self._attributes

    @_holding
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
        fmt = _text(text_field(info, "format")) or ""
        data = [c for c in comps if c.role == "data"]
        return ObjectInfo(name=name, format=fmt, shape=tuple(info.shape[i] for i in range(info.ndim)),
                          components=comps, attributes=attrs, status=info.status, error=_text(err.value) or "",
                          dtype=data[0].dtype if fmt == "dense" and data else None)

    @_holding
    def format_of(self, name: str) -> str:
        """The object's format ("dense", "sparse_csr", ...), without the rest of info()."""
        table = self._table
        if table is not None:
            i = table.index.get(name)
            if i is not None and table.rows["dense"][i]:
                return "dense"  # from the object table, without a library call
        return _text(text_field(self._c_info(self._object(name)), "format")) or ""

    @_holding
    def element_type(self, name: str, role: str = "data") -> str:
        """A component's element type: its logical type ("f8_e4m3fn",
        "complex64") if it has one, else its storage dtype ("f32", "bf16")."""
        table = self._table
        if role == "data" and table is not None and name in table.index:
            i = table.index[name]
            code = int(table.rows["data_dtype"][i])
            if code >= 0:  # from the object table, without a library call
                return zt_type_name(code, table.logical_type(i))
        obj = self._object(name)
        ci = _component_info(obj, self._role_index(obj, role))
        return zt_type_name(ci.dtype, _text(text_field(ci, "logical_type")))

    @_holding
    def verify(self, strict: bool = False) -> None:
        """Checks every object (structure, digests; strict: also format rules
        and bool bytes). Raises ZTensorError (with .failures, a list of
        (object, role, status, message)) if anything is wrong."""
        failures: List[Tuple[Optional[str], Optional[str], int, Optional[str]]] = []
        status = verify_file(self._require_open().ptr, strict, failures)
        if status != ZT_OK:
            err = ZTensorError(status, "; ".join(f"{m}" for _, _, _, m in failures) or "verification failed")
            err.failures = failures  # type: ignore[attr-defined]
            raise err

    def keys(self) -> List[str]:  # type: ignore[override]
        """The object names in file order, as a list (the original package's keys())."""
        return list(self._names)

    def __repr__(self) -> str:
        n = len(self._names)
        state = "closed" if self._h is None else "open"
        shown = redact_url(self.path) if self.path else "<memory>"  # a URL without its credentials (ztensor._redact)
        return f"<ztensor.Reader {shown!r}: {n} tensor{'s' if n != 1 else ''}, zt, {state}>"

    # -- objects ---------------------------------------------------------
    @_holding
    def read(self, name: str, role: str = "data", copy: Optional[bool] = None) -> Array:
        """One component as a flat numpy array of its elements: zero-copy
        where possible (copy=None, or False), a new array with copy=True.
        A zero-copy array of a foreign file may be misaligned for its dtype
        (a stored .npz member): flags.aligned is then False (numpy handles
        it; np.array(a) gives an aligned copy)."""
        obj = self._data_object(name)
        arr = self._array(obj, self._role_index(obj, role), None)
        return np.array(arr) if copy else arr

    def tensor(self, name: str, copy: bool = True) -> Tensor:
        """A DLPack-capable handle of a dense object: numpy.from_dlpack(r.tensor(name)),
        torch.from_dlpack(r.tensor(name)).

        copy=True (the default) hands out a private decoded copy, which the
        consumer owns and may modify. copy=False hands out the file's bytes
        themselves where it can (raw little-endian data of a mapped file): no
        copy, and the consumer's tensor keeps the file mapped (see Tensor).
        """
        return Tensor(self, name, copy=copy)

    def _open_options(self, mmap: bool, strict: bool, verify: bool, prefetch: bool = False) -> OpenOptions:
        """zt_open_options for these settings: verify=True makes the library
        check digests as it reads; prefetch asks it to read the file into
        the page cache in the background."""
        opts = new_struct(OpenOptions)
        opts.access = 0 if mmap else 1
        opts.strict = 1 if strict else 0
        opts.verify_on_read = 1 if verify else 0
        opts.prefetch = 1 if prefetch else 0
        self.prefetching = bool(prefetch)
        return opts

    def _dense_sources(self, handle: _FileHandle) -> List[Tuple[Optional[int], _Table]]:
        """The files batched reads read, each with its object table (one
        here; each shard for a ShardedReader)."""
        assert self._table is not None
        return [(handle.ptr, self._table)]

    def _file_of(self, name: str, handle: "_FileHandle") -> Optional[int]:
        """The zt_file * holding object `name` (one file here; a shard for a
        ShardedReader)."""
        return handle.ptr

    @_holding
    def get_slice(self, name: str) -> "Slice":
        """A lazy handle on a dense object that reads only what an index asks for:

            s = r.get_slice("w")
            s.get_shape(), s.get_dtype()     # [1024, 4096], "F32"
            block = s[0:128, ..., ::2]       # a new numpy array

        Only the box the index covers is read (zt_component_read_slice: raw
        data reads just those bytes, zstd decodes no further than the box's
        end); steps and integer indices are applied to that box in numpy.
        """
        return Slice(self, name)

    @_holding
    def read_slice(self, name: str, index: Index) -> Array:
        """r.read_slice("w", np.s_[0:2, 5]) is r.get_slice("w")[0:2, 5]."""
        return Slice(self, name)[index]

    @_holding
    def dlpack(self, name: str) -> object:
        """A "dltensor" PyCapsule of a dense object (zt_object_to_dlpack)."""
        return _dlpack.capsule_of(self._data_object(name))

    @_holding
    def dequantize(self, name: str) -> Float32Array:
        """A quantized_group object as float32 values of its shape: (q - zero) * scale."""
        obj = self._data_object(name)
        info = self._c_info(obj)
        shape = tuple(info.shape[i] for i in range(info.ndim))
        out = np.empty(int(np.prod(shape, dtype=np.uint64)), dtype=np.float32)
        check(lib.zt_object_dequantize(obj, out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), out.size))
        return out.reshape(shape)

    # -- internals -------------------------------------------------------
    def _object_at(self, i: int) -> Optional[int]:
        handle = self._require_open()
        if self._table is not None:
            return self._table.object(i)
        out = c_void_p()
        check(lib.zt_file_object_at(handle.ptr, i, byref(out)))
        return out.value

    def _object(self, name: str) -> Optional[int]:
        if name not in self._index:
            raise KeyError(name)
        return self._object_at(self._index[name])

    def _data_object(self, name: str) -> Optional[int]:
        """The object whose data is about to be read (verify=True: the library checks its digests as it reads)."""
        return self._object(name)

    @staticmethod
    def _c_info(obj: Optional[int]) -> _CObjectInfo:
        info = new_struct(_CObjectInfo)
        check(lib.zt_object_get_info(obj, byref(info)))
        return info

    @staticmethod
    def _components(obj: Optional[int]) -> List[ComponentInfo]:
        info = Reader._c_info(obj)
        out: List[ComponentInfo] = []
        for i in range(info.component_count):
            ci = _component_info(obj, i)
            out.append(ComponentInfo(role=_text(text_field(ci, "role") or b""),
                                     dtype=_text(text_field(ci, "dtype_name") or b""),
                                     logical_type=_text(text_field(ci, "logical_type")),
                                     encoding=_text(text_field(ci, "encoding_name") or b""),
                                     offset=ci.offset, length=ci.length, decoded_length=ci.decoded_length,
                                     digest=_text(ci.digest), big_endian=bool(ci.big_endian), status=ci.status))
        return out

    @staticmethod
    def _role_index(obj: Optional[int], role: str) -> int:
        idx = c_size_t()
        raw = role.encode("utf-8", "surrogateescape")  # a role may hold NULs: matched whole
        check(lib.zt_object_component_index_n(obj, raw, len(raw), byref(idx)))
        return idx.value

    def _array(self, obj: Optional[int], index: int, shape: Optional[Shape]) -> Array:
        ci = _component_info(obj, index)
        logical = _text(text_field(ci, "logical_type"))
        dt = numpy_dtype(ci.dtype, logical) if ci.dtype in BY_CODE else np.dtype("u1")
        ptr, n = c_void_p(), c_size_t()
        # Foreign files (stored .npz members, ONNX raw_data) may place elements
        # at addresses misaligned for their type: numpy allows such arrays
        # (flags.aligned is False; ufuncs and copies handle them), so they
        # are lent too, not copied. Torch gets a copy of those (_torch_types).
        status = lib.zt_component_view_unaligned(obj, index, byref(ptr), byref(n))
        if status == ZT_OK:
            # Writable where the mapping is private copy-on-write (a local
            # file), as the original 1.x package's: a write stays in this
            # process and this reader, never reaching the file.
            arr = np.asarray(MappedBuffer(ptr.value, n.value, dt, self._require_open(), file_is_copy_on_write(self)))
        elif status == ZT_E_NOT_ZERO_COPY:
            arr = self._decoded(obj, index).view(dt)
        else:
            check(status)
        if shape is not None and logical in PACKED_BITS:  # uint8 pairs, or ZTensorError naming it
            shape = packed_shape(str(_text(text_field(self._c_info(obj), "name"))), logical, shape, arr.nbytes)
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
