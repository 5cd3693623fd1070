"""Reading .zt files: a mapping from object names to numpy arrays."""

import ctypes
import functools
import gc
import os
from collections.abc import Iterator, Mapping
from ctypes import byref, c_char_p, c_size_t, c_uint64, c_void_p
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Literal, NamedTuple, Optional, Set, Tuple, TypeVar, cast, overload

import numpy as np

from . import _attributes, _dlpack, _native
from ._table import Table as _Table, read as _read_table
from ._dtypes import BY_CODE, numpy_dtype, safetensors_name, zt_type_name
from ._slicing import Index, box_of
from ._lib import (ZT_E_BUFFER_TOO_SMALL, ZT_E_NOT_ZERO_COPY, ZT_OK, ComponentInfo as _CComponentInfo, Io,
                   IoReadAt, IoStats, ZTensorFileNotFoundError, ObjectInfo as _CObjectInfo, OpenOptions, QuantInfo, SparseInfo, UrlOptions,
                   ZTensorError, ReadRequest, check, has, lib, set_prefetch, set_verify_on_read, shape_array,
                   take_string, text_field, verify_file)
from ._redact import redact_url
from ._types import Array, DTypeLike, Float32Array, ObjectValue, PathLike, Source

Shape = Tuple[int, ...]


def is_url(path: object) -> bool:
    """True for a str starting with http://, https:// or s3:// (case-insensitive)."""
    return isinstance(path, str) and path[:8].lower().startswith(("http://", "https://", "s3://"))


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


class DenseGroup(NamedTuple):
    """Tensors of one element type and shape, read back to back: `block` is
    a (len(members), *shape) array; members (an int array) are positions in
    DenseRead.names."""
    zt_type: str
    block: Array
    members: Array
    shape: Tuple[int, ...]


class DenseRead(NamedTuple):
    """Reader.read_dense's result: names in the order asked, groups, and the
    tensors read alone (position -> (array, zt_type)), which replace their
    slot in their group."""
    names: List[str]
    groups: List[DenseGroup]
    alone: Dict[int, Tuple[Array, str]]

    def split(self, convert: Callable[[Array, str, str], Any]) -> List[Any]:
        """One value per name: convert(block, zt_type, first name) turns a
        group's block into the framework's tensor once, then it is split
        into per-tensor views (a C loop: list() of its first dimension)."""
        values: List[Any] = [None] * len(self.names)
        # Tens of thousands of new tensors (torch's are tracked by the cycle
        # collector) would set off collections over the whole heap while
        # being created; none of them can be garbage yet.
        collecting = gc.isenabled()
        gc.disable()
        try:
            self._fill(values, convert)
        finally:
            if collecting:
                gc.enable()
        return values

    def _fill(self, values: List[Any], convert: Callable[[Array, str, str], Any]) -> None:
        for g in self.groups:
            whole = convert(g.block, g.zt_type, self.names[int(g.members[0])])
            if g.shape:
                parts = list(whole)
            else:  # 0-d tensors: list() would give scalars
                parts = [whole[j:j + 1].reshape(()) for j in range(len(g.members))]
            first, count = int(g.members[0]), len(g.members)
            if int(g.members[-1]) - first + 1 == count:  # members ascend: a run of positions
                values[first:first + count] = parts
            else:
                for k, part in zip(g.members.tolist(), parts):
                    values[k] = part
        for k, (array, zt_type) in self.alone.items():
            values[k] = convert(array, zt_type, self.names[k])


@functools.lru_cache(maxsize=None)  # a few (code, logical type) pairs exist
def _element_type(code: int, logical: Optional[str]) -> Tuple["np.dtype[Any]", str]:
    """(numpy dtype, zt type name) of a data component's dtype code and
    logical type, as read_dense lays it out (the extension asks once per type)."""
    dt = numpy_dtype(code, logical) if code in BY_CODE else np.dtype("u1")
    return dt, zt_type_name(code, logical) if code >= 0 else "u8"


def _group_rows(keys: Array) -> Tuple[Array, Array]:
    """(distinct rows, each row's group) of an int64 matrix, in O(n log n):
    rows are hashed to one int64 and grouped by it (np.unique over a matrix
    sorts records, ~20x slower), then checked against their group's first
    row; a collision falls back to the exact record sort."""
    if bool((keys == keys[0]).all()):  # one type and shape: the usual checkpoint of many layers
        return keys[:1], np.zeros(len(keys), dtype=np.int64)
    h = np.zeros(len(keys), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for column in keys.T:
            h = (h ^ column.astype(np.uint64)) * np.uint64(0x100000001B3)
    _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    if bool((keys == keys[first[inverse]]).all()):
        return keys[first], inverse.reshape(-1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    return unique, inverse.reshape(-1)


# zt_read_request as a numpy record (ctypes field-by-field costs ~1 us per tensor).
_REQUEST_DTYPE = np.dtype({"names": ["object", "component", "dst", "dst_capacity", "out_size", "status"],
                           "formats": ["<u8", "<u8", "<u8", "<u8", "<u8", "<i4"],
                           "offsets": [0, 8, 16, 24, 32, 40], "itemsize": ctypes.sizeof(ReadRequest)})


class _FileHandle:
    """Owns one zt_file *. Zero-copy arrays hold it too, so the mapping
    lives until the Reader is closed AND the last such array is gone. For a
    file opened from memory it also holds the caller's buffer, which views
    point into."""

    __slots__ = ("ptr", "buffer", "keep", "__weakref__")

    def __init__(self, ptr: Optional[int], buffer: Optional[Array] = None) -> None:
        self.ptr = ptr
        self.buffer = buffer
        self.keep: Any = None  # what the library calls back into (a file object's reader)

    def __del__(self) -> None:
        ptr, self.ptr = self.ptr, None
        if ptr and lib is not None:
            lib.zt_close(ptr)


class _MappedBuffer:
    """Exposes bytes of the mapping to numpy, keeping the file handle alive (it becomes the array's base)."""

    def __init__(self, ptr: Optional[int], nbytes: int, dtype: "np.dtype[Any]", handle: _FileHandle) -> None:
        self._handle = handle
        self.__array_interface__ = {
            # Read-only for numpy: the bytes are the file's (a private
            # copy-on-write mapping, or the caller's buffer for Reader(bytes)).
            "data": (ptr, True),
            "shape": (nbytes // dtype.itemsize,),
            "typestr": dtype.str,
            "descr": dtype.descr,
            "version": 3,
        }


def _is_torch_checkpoint(path: Any) -> bool:
    """A file torch.save wrote: a zip archive (torch >= 1.6) or a pickle."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return False
    return head[:4] == b"PK\x03\x04" or head[:1] == b"\x80"


def _torch_checkpoint_as_zt(path: Any) -> bytes:
    try:
        import torch
    except ImportError:
        raise ZTensorError(-20, f"{os.fsdecode(path)}: a PyTorch checkpoint, and torch is not installed") from None
    from . import torch as zt_torch
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise ZTensorError(-20, f"{os.fsdecode(path)}: not a zTensor file, and torch.load(weights_only=True) "
                                f"refused it: {e}") from e
    if not isinstance(state, dict):
        raise ZTensorError(-20, f"{os.fsdecode(path)}: a PyTorch checkpoint holding a {type(state).__name__}, "
                                "not a dict of tensors")
    tensors = {str(k): v for k, v in state.items() if isinstance(v, torch.Tensor)}
    return zt_torch.save({k: v.clone() if v.layout == torch.strided else v for k, v in tensors.items()})


def _is_buffer(source: object) -> bool:
    try:
        memoryview(source)  # type: ignore[arg-type]
        return True
    except TypeError:
        return False


_F = TypeVar("_F", bound=Callable[..., Any])


def _holding(method: _F) -> _F:
    """Runs a Reader method with the file handle held for the whole call.
    Reader.close() only drops the reader's own reference: when another
    thread is inside a call, the real zt_close happens when that call (the
    last holder) returns, so no object pointer it uses is freed under it; a
    call that starts after close() raises ValueError instead."""
    @functools.wraps(method)
    def held(self: "Reader", *args: Any, **kwargs: Any) -> Any:
        handle = self._require_open()
        try:
            return method(self, *args, **kwargs)
        finally:
            del handle
    return cast(_F, held)


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

    copy=True (Reader.tensor's default): each __dlpack__ hands out a private
    decoded copy, which the consumer may modify in place.
    copy=False: DLPack data of raw little-endian objects of a mapped file is
    the mapping itself, zero-copy; numpy >= 2 marks it read-only, consumers
    that do not know read-only DLPack (numpy < 2, torch) see it writable:
    in-place writes there reach only this process's copy-on-write pages of
    a mapped file (libztensor >= 1.1; an older library's read-only mapping
    crashes), and for Reader(buffer) they change the caller's buffer (even
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
            if not has("zt_component_read_slice"):
                raise ZTensorError(-7, f"get_slice needs zt_component_read_slice (libztensor 1.1); the loaded "
                                       f"library is {lib.zt_version_string().decode()}")
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


def _file_position(value: Any, what: str) -> int:
    """A position or size a file object reported, checked to be an int that
    a uint64_t holds (ctypes would wrap a negative or huge one silently)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} returned {type(value).__name__}, not an int")
    if not 0 <= value < 1 << 63:
        raise ValueError(f"{what} returned {value}, not a file position")
    return value


def _read_result(data: Any, length: int) -> bytes:
    """The bytes a file object's read(length) returned, as bytes of at most
    length: anything but a bytes-like object, or more than was asked for,
    raises."""
    try:
        view = memoryview(data)
    except TypeError:
        raise TypeError(f"read({length}) returned {type(data).__name__}, not a bytes-like object") from None
    with view:
        if view.nbytes > length:
            raise ValueError(f"read({length}) returned {view.nbytes} bytes, more than asked")
        return view.tobytes()  # a copy in C order, whatever the view's shape and strides


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
    as "Authorization: Bearer"; url_options sets zt_url_options fields by
    name (timeout_ms, retries, cache_bytes, max_parallel, ...).
    """

    # The object table (None for readers that list objects another way, as
    # ShardedReader does).
    _table: Optional[_Table] = None
    # Whether the library was asked to prefetch (prefetch=True and a
    # library with ABI 1.2 or later).
    prefetching: bool = False

    def __init__(self, source: Source, *, mmap: bool = True, strict: bool = False,
                 sparse: Literal["tuple", "scipy"] = "tuple", verify: bool = False,
                 bearer_token: Optional[str] = None, url_options: Optional[Mapping[str, Any]] = None,
                 prefetch: bool = False) -> None:
        if sparse not in ("tuple", "scipy"):
            raise ValueError('sparse must be "tuple" or "scipy"')
        self._sparse = sparse
        opts = self._open_options(mmap, strict, verify, prefetch)
        out = c_void_p()
        buffer: Optional[Array] = None
        keep: Any = None
        if isinstance(source, (str, os.PathLike)) and is_url(source):
            uopts = UrlOptions()
            lib.zt_url_options_init(byref(uopts))
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
            check(lib.zt_open_url(url.encode(), byref(uopts), byref(opts), byref(out)))
            self.path: Optional[str] = url
        elif bearer_token is not None or url_options:
            raise ValueError("bearer_token and url_options apply to http(s):// and s3:// URLs only")
        elif isinstance(source, (str, os.PathLike)):
            status = lib.zt_open(os.fsencode(source), byref(opts), byref(out))
            if status != ZT_OK and not os.path.exists(source):
                raise ZTensorFileNotFoundError(redact_url(os.fsdecode(source)),  # ftp://..., file://...: refused
                                               lib.zt_last_error().decode("utf-8", "replace"))
            if status != ZT_OK and _is_torch_checkpoint(source):
                # A PyTorch .pt/.bin: its tensors, read by torch.load(weights_only=True)
                # (never running pickled code), become an in-memory .zt file.
                buffer = np.frombuffer(_torch_checkpoint_as_zt(source), dtype=np.uint8)
                status = lib.zt_open_memory(c_void_p(buffer.ctypes.data), buffer.size, byref(opts), byref(out))
            check(status)
            self.path = os.fsdecode(source)
        elif hasattr(source, "read") and hasattr(source, "seek") and not _is_buffer(source):
            keep = self._open_file_object(source, opts, out)
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
        self._index = self._table.index
        self._attributes: Any = None
        self._attributes_read = False

    @staticmethod
    def _open_file_object(fileobj: Any, opts: OpenOptions, out: c_void_p) -> Any:
        """Opens a Python file object (anything with read and seek: an open
        file, io.BytesIO, an fsspec file) through zt_open_io. The library
        calls back for byte ranges; the calls are serialised (threads=1 and
        a lock), each a seek and a read."""
        import threading
        lock = threading.Lock()
        fileobj.seek(0, os.SEEK_END)
        size = _file_position(fileobj.tell(), f"{type(fileobj).__name__}.tell()")

        def read_at(_user: Optional[int], offset: int, length: int, dst: Optional[int],
                    out_len: "ctypes._Pointer[c_size_t]") -> int:
            # Nothing the file object returns is trusted: a read() of more
            # than `length` bytes would overflow dst (the library's buffer).
            try:
                with lock:
                    where = fileobj.seek(offset)
                    if where is not None and _file_position(where, "seek()") != offset:
                        raise ValueError(f"seek({offset}) returned {where}")
                    data = _read_result(fileobj.read(length), length)
                n = len(data)
                if n:
                    ctypes.memmove(dst or 0, data, n)
                out_len[0] = n
                return ZT_OK
            except BaseException as e:  # never unwind through the library
                lib.zt_io_set_error(f"{type(fileobj).__name__}.read at {offset}: {type(e).__name__}: {e}"
                                    .encode("utf-8", "replace"))
                return -4  # ZT_E_IO

        callback = IoReadAt(read_at)
        io = Io()
        lib.zt_io_init(byref(io))
        io.size = size
        io.read_at = callback
        name = getattr(fileobj, "name", None) or getattr(fileobj, "path", None)
        io.name = str(name).encode("utf-8", "replace") if name is not None else None
        opts.threads = 1
        opts.access = 1  # no mapping: every byte comes through read_at
        check(lib.zt_open_io(byref(io), byref(opts), byref(out)))
        return callback

    @_holding
    def io_stats(self) -> Dict[str, Any]:
        """Requests sent, body bytes received, cache hits, bytes the reads
        needed (the open's included), `ratio` (bytes / bytes_needed: what
        was fetched per byte needed) and `wait_s` (seconds reading calls
        waited on requests) of a remote file (zeros for a local one)."""
        st = IoStats()
        st.struct_size = ctypes.sizeof(IoStats)
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
            return self._sparse_object(obj, shape)
        if fmt == "quantized_group":
            return self._quantized(obj, shape)
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

    # -- the original zTensor package's Reader calls ---------------------
    def keys(self) -> List[str]:  # type: ignore[override]
        """The object names in file order, as a list (the original package's keys())."""
        return list(self._names)

    def __repr__(self) -> str:
        n = len(self._names)
        state = "closed" if self._h is None else "open"
        shown = redact_url(self.path) if self.path else "<memory>"  # a URL without its credentials (ztensor._redact)
        return f"<ztensor.Reader {shown!r}: {n} tensor{'s' if n != 1 else ''}, zt, {state}>"

    @_holding
    def metadata(self, name: str) -> "TensorMetadata":
        """TensorMetadata(name, dtype, shape, format, encoding, offset, size)
        of one object, as the original package gives it (dtype spelled
        "float32", "bfloat16", ...)."""
        info = self.info(name)
        comps = [c for c in info.components if c.role == "data"] or info.components[:1]
        c = comps[0] if comps else None
        zt_type = (c.logical_type or c.dtype) if c is not None else ""
        return TensorMetadata(name=name, dtype=_LONG_NAMES.get(zt_type, zt_type), shape=info.shape,
                              format=info.format, encoding=c.encoding if c is not None else "",
                              offset=c.offset if c is not None else 0, size=c.length if c is not None else 0)

    def read_numpy(self, name: str) -> Array:
        """A dense tensor as a new numpy array this process owns."""
        return self.read_many([name])[name]

    def read_torch(self, name: str, device: Any = "cpu") -> Any:
        """A dense tensor as a torch tensor (owning its memory) on `device`."""
        from . import torch as zt_torch
        return zt_torch._to_device(name, zt_torch._from_numpy(self.read_numpy(name), self.element_type(name), name),
                                   zt_torch._on(device))

    def read_tensors(self, names: Iterable[str]) -> Dict[str, ObjectValue]:
        """Several objects at once: dense ones in one batched read, others as reader[name] gives them."""
        names = list(names)
        dense = [n for n in names if self.format_of(n) == "dense"]
        arrays: Dict[str, Any] = dict(self.read_many(dense))
        return {n: arrays[n] if n in arrays else self[n] for n in names}

    @_holding
    def read_into(self, name: str, out: Any) -> Any:
        """Reads a dense tensor's bytes straight into a caller's writable,
        C-contiguous array or buffer (numpy array, torch CPU tensor,
        bytearray, ...) of at least its decoded size; returns out."""
        if hasattr(out, "data_ptr") and hasattr(out, "is_contiguous"):  # a torch tensor
            if not out.is_contiguous() or out.device.type != "cpu":
                raise ValueError("read_into needs a contiguous CPU tensor")
            address, capacity = out.data_ptr(), out.numel() * out.element_size()
        else:
            view = memoryview(out)
            if view.readonly or not view.c_contiguous:
                raise ValueError("read_into needs a writable, C-contiguous buffer")
            address = ctypes.addressof(ctypes.c_char.from_buffer(view)) if view.nbytes else 0
            capacity = view.nbytes
        obj = self._data_object(name)
        got = c_size_t()
        check(lib.zt_component_read(obj, self._role_index(obj, "data"), c_void_p(address), capacity, byref(got)))
        return out

    # -- objects ---------------------------------------------------------
    @_holding
    def read(self, name: str, role: str = "data", copy: Optional[bool] = None) -> Array:
        """One component as a flat numpy array of its elements: zero-copy
        where possible (copy=None, or False), a new array with copy=True."""
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

    @_holding
    def read_many(self, names: Optional[Iterable[str]] = None) -> Dict[str, Array]:
        """Dense objects as new, writable numpy arrays of their shapes, read in
        one batched call (zt_file_read_many: in parallel, straight into the
        arrays). names=None reads every dense object; naming an object of
        another format raises ValueError.

            arrays = r.read_many(["w", "b"])

        The arrays are views of one new buffer that this process owns (an
        anonymous allocation, not a mapping of the file): changing or
        truncating the file afterwards does not touch them.
        """
        wanted = None if names is None else list(names)
        if not self._verify_here:
            fast = self._read_native(wanted, None, None)
            if fast is not None:
                return fast
        if self._table is not None and not self._verify_here and (wanted is None or len(wanted) > 8):
            # read_dense's numpy grouping costs ~100 us per call: for a few
            # names (get_tensor) the per-object calls below are cheaper.
            dense = self.read_dense(wanted)
            return dict(zip(dense.names, dense.split(lambda a, t, n: a)))
        return self._read_many_each(wanted)

    def _native_sources(self, handle: "_FileHandle") -> Optional[List[Tuple[Optional[int], _Table]]]:
        """The files the extension reads, each with its table (one here;
        each shard for a ShardedReader); None when it cannot."""
        table = self._table
        if table is None or table.raw_rows is None:
            return None
        return [(handle.ptr, table)]

    def _read_native(self, names: Optional[List[str]], split: Optional[Callable[[Array, str, str], Any]],
                     convert: Optional[Callable[[Array, str, str], Any]]) -> Optional[Dict[str, Any]]:
        """read_many/load_file's work in the C++ extension (ztensor._ext):
        {name: value} for the dense objects `names` (None: every object,
        all dense), read with one zt_file_read_many into one new arena that
        the values keep alive. split=None gives numpy arrays; else
        split(block, zt_type, first name) turns each group of one type and
        shape into the framework's tensors, and convert(array, zt_type,
        name) each tensor read alone. None when the extension is not in
        use (then read_dense does it in numpy)."""
        ext = _native.ext
        if ext is None or self._verify_here:
            return None
        handle = self._require_open()  # held: a close() on another thread waits for this call
        sources = self._native_sources(handle)
        if sources is None:
            return None
        plan: List[Tuple[Optional[int], _Table, Optional[List[int]]]] = []
        if names is None:
            plan = [(ptr, table, None) for ptr, table in sources]
        elif len(sources) == 1:
            ptr, table = sources[0]
            index = table.index
            plan = [(ptr, table, [index[n] for n in names])]  # KeyError for a name not in the file
        else:  # a ShardedReader: each name's shard
            rows_of: List[List[int]] = [[] for _ in sources]
            for name in names:
                for k, (_, table) in enumerate(sources):
                    if name in table.index:
                        rows_of[k].append(table.index[name])
                        break
                else:
                    raise KeyError(name)
            plan = [(ptr, table, rows) for (ptr, table), rows in zip(sources, rows_of) if rows]
        for _, table, select in plan:
            if not table.all_dense and not bool(
                    (table.rows["dense"] if select is None else table.rows["dense"][select]).all()):
                return None  # read_dense / _read_many_each names the object that is not dense
        out: Dict[str, Any] = {}
        collecting = gc.isenabled()
        gc.disable()  # tens of thousands of new tensors, none of them garbage: no collection over the heap
        try:
            for ptr, table, select in plan:
                result: Tuple[Dict[str, Any], List[Tuple[str, int, "np.dtype[Any]", str, Shape]]] = \
                    ext.read_dense(ptr, table.raw_rows, table.row_size, table.raw_dims, table.names, select,
                                   _element_type, split)
                part, failed = result
                for name, row, dt, zt_type, shape in failed:
                    # A declared size other than the shape's (a damaged or
                    # legacy file) or a failed read: read alone, which sizes
                    # it or raises with its detail.
                    data = self._decoded(table.object(row), int(table.rows["data_component"][row]))
                    if data.size % dt.itemsize:
                        raise ZTensorError(-47, f"{name!r}: {data.size} bytes do not hold whole {dt} elements")
                    array = data.view(dt).reshape(shape)
                    part[name] = array if convert is None else convert(array, zt_type, name)
                if len(plan) == 1:
                    out = part
                else:
                    out.update(part)
        finally:
            if collecting:
                gc.enable()
        del handle
        if len(plan) > 1 and names is not None:
            out = {name: out[name] for name in names}  # the order asked
        return out

    def read_dense(self, names: Optional[Iterable[str]] = None) -> "DenseRead":
        """Dense objects read in one batched call into one new owned buffer,
        grouped by element type and shape (DenseRead): what load_file uses
        to build tensors with a few calls per group instead of several per
        tensor. names=None reads every dense object."""
        handle = self._require_open()
        table = self._table
        if table is None or self._verify_here:
            arrays = self._read_many_each(names)
            singles = [DenseGroup(self.element_type(n), a[None], np.array([k]), a.shape)
                       for k, (n, a) in enumerate(arrays.items())]
            return DenseRead(list(arrays), singles, {})
        if names is None:
            rows_of = np.flatnonzero(table.rows["dense"])
        else:
            wanted = []
            for name in names:
                if name not in table.index:
                    raise KeyError(name)
                wanted.append(table.index[name])
            rows_of = np.asarray(wanted, dtype=np.int64)
        chosen = table.rows[rows_of]
        for k in np.flatnonzero(chosen["dense"] == 0).tolist()[:1]:
            name = table.names[int(rows_of[k])]
            fmt = self.format_of(name)
            raise ValueError(f"read_many reads dense objects; {name!r} is {fmt or 'of no format'}")
        # Group by (element type, shape), in numpy; each group is laid out
        # back to back so that it is one (count, *shape) array.
        groups: List[Tuple[int, Optional[str], Shape, Array]] = []
        if len(rows_of):
            unique, inverse = _group_rows(table.group_keys(rows_of))
            order = np.argsort(inverse, kind="stable")  # file order within a group
            ends = np.cumsum(np.bincount(inverse, minlength=len(unique)))
            starts = ends - np.bincount(inverse, minlength=len(unique))
            for g, key in enumerate(unique.tolist()):
                members = order[starts[g]:ends[g]]
                first = int(members[0])
                logical = table.logical_type(int(rows_of[first])) if key[1] else None
                groups.append((key[0], logical, tuple(key[3:3 + key[2]]), members))
        declared = chosen["data_decoded_length"]
        plan = []
        total = 0
        for code, logical, shape, members in groups:
            dt = numpy_dtype(code, logical) if code in BY_CODE else np.dtype("u1")
            each = int(np.prod(shape, dtype=np.uint64)) * dt.itemsize
            total = (total + 63) // 64 * 64
            plan.append((zt_type_name(code, logical) if code >= 0 else "u8", dt, shape, members, total, each))
            total += each * len(members)
        buf = np.empty(max(total, 1), dtype=np.uint8)
        base = buf.ctypes.data
        reqs = np.zeros(len(rows_of), dtype=_REQUEST_DTYPE)
        reqs["object"] = chosen["object"]
        reqs["component"] = chosen["data_component"]
        for _, _, _, members, offset, each in plan:
            reqs["dst"][members] = base + offset + each * np.arange(len(members), dtype=np.uint64)
            reqs["dst_capacity"][members] = each
        # A declared size other than the shape's (a damaged or legacy file)
        # is not read into the group: it is read alone below, which sizes it
        # or raises with its detail.
        odd = declared != reqs["dst_capacity"]
        reqs["dst_capacity"][odd] = 0
        reqs["status"] = -9
        if len(rows_of):
            lib.zt_file_read_many(handle.ptr, reqs.ctypes.data_as(ctypes.POINTER(ReadRequest)), len(rows_of))
        failed = np.flatnonzero((reqs["status"] != ZT_OK) | (reqs["out_size"] != reqs["dst_capacity"]) | odd)
        alone: Dict[int, Tuple[Array, str]] = {}
        plan_of = np.empty(len(rows_of), dtype=np.int64)
        for g, entry in enumerate(plan):
            plan_of[entry[3]] = g
        for k in failed.tolist():
            zt_type, dt, shape, _, _, _ = plan[int(plan_of[k])]
            obj, index = int(chosen["object"][k]), int(chosen["data_component"][k])
            data = self._decoded(obj, index)
            name = table.names[int(rows_of[k])]
            if data.size % dt.itemsize:
                raise ZTensorError(-47, f"{name!r}: {data.size} bytes do not hold whole {dt} elements")
            alone[k] = (data.view(dt).reshape(shape), zt_type)
        out_groups = []
        for zt_type, dt, shape, members, offset, each in plan:
            block = buf[offset:offset + each * len(members)].view(dt).reshape((len(members),) + shape)
            out_groups.append(DenseGroup(zt_type, block, members, shape))
        del handle
        names_of = table.names
        if len(rows_of) == len(names_of) and bool((rows_of == np.arange(len(rows_of))).all()):
            picked = list(names_of)  # every object, in file order (load_file)
        else:
            picked = [names_of[i] for i in rows_of.tolist()]
        return DenseRead(picked, out_groups, alone)

    @_holding
    def mapped_views(self, names: Iterable[str]) -> Dict[str, Array]:
        """Dense objects as zero-copy, read-only arrays of the file's mapping
        (what reader[name] gives, for many names at once: one library call
        per tensor instead of several). Objects whose data must be decoded
        come back as writable copies. The hazard of mapped views applies
        (see the README): only for files nothing modifies meanwhile."""
        names = list(names)
        table = self._table
        if table is None or self._verify_here:
            return {name: self[name] for name in names}
        fast = self._mapped_native(names, None)
        if fast is not None:
            return fast
        handle = self._require_open()
        ptr, n = c_void_p(), c_size_t()
        ptr_ref, n_ref = byref(ptr), byref(n)
        found: List[Tuple[str, int, int, int]] = []
        out: Dict[str, Array] = {}
        rows = table.rows
        view = lib.zt_component_view
        for name in names:
            i = table.index[name]
            row = rows[i]
            if not row["dense"]:
                raise ValueError(f"mapped_views reads dense objects; {name!r} is {self.format_of(name)}")
            status = view(c_void_p(int(row["object"])), int(row["data_component"]), ptr_ref, n_ref)
            if status == ZT_OK:
                found.append((name, i, ptr.value or 0, n.value))
            elif status == ZT_E_NOT_ZERO_COPY:
                out[name] = self[name]
            else:
                check(status)
        if found:
            lo = min(p for _, _, p, _ in found)
            hi = max(p + k for _, _, p, k in found)
            span = np.asarray(_MappedBuffer(lo, max(hi - lo, 1), np.dtype("u1"), handle))
            for name, i, p, k in found:
                code = int(rows["data_dtype"][i])
                logical = table.logical_type(i)
                dt = numpy_dtype(code, logical) if code in BY_CODE else np.dtype("u1")
                out[name] = span[p - lo:p - lo + k].view(dt).reshape(table.shape(i))
        return {name: out[name] for name in names}

    def _mapped_native(self, names: List[str], convert: Optional[Callable[[Array, str, str], Any]]
                       ) -> Optional[Dict[str, Any]]:
        """mapped_views in the C++ extension, each view passed through
        convert(array, zt_type, name) when given (those read as copies too);
        None when the extension is not in use or an object is not dense
        (mapped_views then does it, or names it)."""
        table = self._table
        ext = _native.ext
        if ext is None or table is None or table.raw_rows is None or self._verify_here:
            return None
        handle = self._require_open()
        index = table.index
        select = [index[n] for n in names]  # KeyError for a name not in the file
        if not table.all_dense and not bool(table.rows["dense"][select].all()):
            return None
        mapped: Tuple[Dict[str, Any], int] = ext.mapped_views(
            handle.ptr, table.raw_rows, table.row_size, table.raw_dims, table.names, select, _element_type, handle,
            convert)
        out, status = mapped
        check(status)
        for name, value in out.items():
            if value is None:  # decoded (zstd, big-endian): a writable copy
                copied = self[name]
                out[name] = copied if convert is None else convert(copied, self.element_type(name), name)
        del handle
        return out

    def _read_many_each(self, names: Optional[Iterable[str]] = None) -> Dict[str, Array]:
        """read_many with a few library calls per object (a library before
        1.2, verification done here, or a ShardedReader's several files)."""
        handle = self._require_open()
        wanted = [n for n in self._names if self.format_of(n) == "dense"] if names is None else list(names)
        plan = []
        for name in wanted:
            obj = self._data_object(name)
            info = self._c_info(obj)
            fmt = _text(text_field(info, "format")) or ""
            if fmt != "dense":
                raise ValueError(f"read_many reads dense objects; {name!r} is {fmt or 'of no format'}")
            index = self._role_index(obj, "data")
            ci = _component_info(obj, index)
            dt = numpy_dtype(ci.dtype, _text(text_field(ci, "logical_type"))) if ci.dtype in BY_CODE else np.dtype("u1")
            shape = tuple(info.shape[i] for i in range(info.ndim))
            plan.append((name, obj, index, dt, shape, np.empty(ci.decoded_length, dtype=np.uint8)))
        reqs = (ReadRequest * max(len(plan), 1))()
        groups: Dict[Optional[int], List[int]] = {}  # file -> its requests (a set has one file per shard)
        for i, (name, obj, index, _, _, buf) in enumerate(plan):
            req = reqs[i]
            req.object, req.component = obj, index
            req.dst, req.dst_capacity = buf.ctypes.data if buf.size else None, buf.size
            req.status = -9  # not read: a call that fails as a whole leaves it so, and it is read alone below
            groups.setdefault(self._file_of(name, handle), []).append(i)
        for file_ptr, members in groups.items():
            batch = (ReadRequest * len(members))()
            for k, i in enumerate(members):
                batch[k] = reqs[i]
            lib.zt_file_read_many(file_ptr, batch, len(members))  # each request has its own status
            for k, i in enumerate(members):
                reqs[i] = batch[k]
        out: Dict[str, Array] = {}
        for req, (name, obj, index, dt, shape, buf) in zip(reqs, plan):
            if req.status != ZT_OK:
                # Too small (no declared decoded length), or failed: read it
                # alone, which sizes the buffer or raises with this one's detail.
                buf = self._decoded(obj, index)
            else:
                buf = buf[:req.out_size]
            if buf.size % dt.itemsize:
                raise ZTensorError(-47, f"{name!r}: {buf.size} bytes do not hold whole {dt} elements")
            out[name] = buf.view(dt).reshape(shape)
        return out

    def _open_options(self, mmap: bool, strict: bool, verify: bool, prefetch: bool = False) -> OpenOptions:
        """zt_open_options for these settings; also decides how verify=True
        is honoured: the library checks digests as it reads when it can
        (verify_on_read, ABI 1.1); with an older library each object is
        verified once here. prefetch is a hint: an older library (before
        ABI 1.2) goes without it."""
        opts = OpenOptions()
        lib.zt_open_options_init(byref(opts))
        opts.access = 0 if mmap else 1
        opts.strict = 1 if strict else 0
        self.prefetching = bool(prefetch) and set_prefetch(opts)
        self._verify_here = verify and not set_verify_on_read(opts)
        self._verified: Set[str] = set()
        return opts

    def _file_of(self, name: str, handle: "_FileHandle") -> Optional[int]:
        """The zt_file * holding object `name` (one file here; a shard for a
        ShardedReader)."""
        return handle.ptr

    def iter_chunks(self, name: str, role: str = "data", chunk_bytes: int = 1 << 24) -> Iterator[Array]:
        """A component's decoded elements in pieces (flat arrays of at most
        about chunk_bytes), in bounded memory whatever its size: zstd is
        decoded as it goes, and sizes and digests (verify=True) are checked
        by the end. For copying or hashing tensors bigger than memory.

            for piece in r.iter_chunks("huge"):
                out.write(piece.tobytes())
        """
        if not has("zt_component_stream_open"):
            raise ZTensorError(-7, "iter_chunks needs zt_component_stream_open (libztensor 1.1); the loaded "
                                   f"library is {lib.zt_version_string().decode()}")
        obj = self._data_object(name)
        index = self._role_index(obj, role)
        ci = _component_info(obj, index)
        dt = numpy_dtype(ci.dtype, _text(text_field(ci, "logical_type"))) if ci.dtype in BY_CODE else np.dtype("u1")
        capacity = max(chunk_bytes // dt.itemsize, 1) * dt.itemsize
        stream = c_void_p()
        check(lib.zt_component_stream_open(obj, index, byref(stream)))
        handle = self._require_open()  # the stream shares the file; held while iterating
        try:
            n = c_size_t()
            while True:
                buf = np.empty(capacity, dtype=np.uint8)
                check(lib.zt_component_stream_read(stream, c_void_p(buf.ctypes.data), capacity, byref(n)))
                if n.value == 0:
                    break
                if n.value % dt.itemsize:
                    raise ZTensorError(-47, f"{name!r}/{role}: a piece of {n.value} bytes splits a {dt} element")
                yield buf[:n.value].view(dt)
        finally:
            lib.zt_component_stream_close(stream)
            del handle

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
        """The object, about to have its data read: verified first (once) under verify=True."""
        obj = self._object(name)
        if self._verify_here and name not in self._verified:
            check(lib.zt_object_verify(obj))
            self._verified.add(name)
        return obj

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
        raw = role.encode("utf-8", "surrogateescape")
        if has("zt_object_component_index_n"):  # a role may hold NULs: matched whole
            check(lib.zt_object_component_index_n(obj, raw, len(raw), byref(idx)))
        else:
            check(lib.zt_object_component_index(obj, raw, byref(idx)))
        return idx.value

    def _array(self, obj: Optional[int], index: int, shape: Optional[Shape]) -> Array:
        ci = _component_info(obj, index)
        logical = _text(text_field(ci, "logical_type"))
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
