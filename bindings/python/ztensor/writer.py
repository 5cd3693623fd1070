"""Writing .zt files (spec 1.2.0). Nothing appears at the path until the
writer finishes; an exception inside `with Writer(...)` discards the file."""

import contextlib
import ctypes
import os
import shutil
import tempfile
from ctypes import byref, c_uint64, c_void_p
from types import TracebackType
from typing import Any, BinaryIO, Callable, Dict, Iterator, Literal, Mapping, Optional, Sequence, Tuple, Type, Union

import numpy as np

from . import _attributes
from ._dtypes import code_for_name, storage_for
from ._lib import (BlobOptions, QuantParams, WriteCallback, WriterOptions, ZTensorError, check, has, lib,
                   shape_array)
from ._types import Array, ArrayLike, PathLike

_DIGESTS: Dict[Optional[str], int] = {None: 0, "none": 0, "crc32c": 1, "sha256": 2}


class _UseDefault:
    """The writer's default (zstd/digest given to Writer()), as opposed to None."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "<the Writer's default>"


_USE_DEFAULT = _UseDefault()

Digest = Optional[Literal["none", "crc32c", "sha256"]]
Zstd = Union[None, bool, int]  # None/False: raw, True: zstd at the default level, int: that level
Shape = Sequence[int]


def _digest_code(digest: Optional[str]) -> int:
    if digest not in _DIGESTS:
        raise ValueError(f'digest must be None, "crc32c" or "sha256", not {digest!r}')
    return _DIGESTS[digest]


def _name_bytes(name: str) -> bytes:
    if not isinstance(name, str):
        raise TypeError(f"object names are str, not {type(name).__name__}")
    return name.encode("utf-8")


def _c_text(text: str, what: str) -> bytes:
    """A role, format or type name for the library, which takes these as C
    strings: one holding a NUL would be cut there (written as another
    role), so it is refused."""
    raw = text.encode("utf-8")
    if b"\0" in raw:
        raise ValueError(f"{what} {text!r} holds a NUL byte, which the writer cannot store")
    return raw


def _dimension(value: Any) -> int:
    """A dimension as the uint64_t the library takes (ctypes would wrap a negative or huge int)."""
    d = int(value)
    if not 0 <= d < 1 << 64:
        raise ValueError(f"dimension {d} does not fit in a uint64")
    return d


def _u64(values: ArrayLike, what: str) -> Array:
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{what} must be integers, got {arr.dtype}")
    if arr.size and arr.dtype.kind == "i" and arr.min() < 0:
        raise ValueError(f"{what} has a negative entry")
    return np.ascontiguousarray(arr, dtype="<u8")


class WriterClosedError(ZTensorError, ValueError):
    """A finished or discarded Writer used again: a RuntimeError (as the
    original zTensor package raises) and a ValueError (as earlier releases
    of this one did)."""


class Writer:
    """Writes a .zt file.

        with ztensor.Writer("model.zt", zstd=3, digest="sha256") as w:
            w.add("weight", np.ones((2, 3), np.float32))
            w.attributes = {"framework": "numpy"}

    zstd: None/False for raw blobs, True for zstd level 3, or a level.
    digest: None, "crc32c" or "sha256". Both are defaults that add() and the
    helpers may override per object.
    """

    _finished = False

    def __init__(self, path: Optional[PathLike], zstd: Zstd = None, digest: Digest = None, *,
                 sync: bool = True, mode: str = "w") -> None:
        if mode not in ("w", "a"):
            raise ValueError(f'mode must be "w" (a new file) or "a" (append to an existing one), not {mode!r}')
        opts = WriterOptions()
        lib.zt_writer_options_init(byref(opts))
        opts.digest = _digest_code(digest)
        opts.encoding, level = self._encoding(zstd)
        if level is not None:
            opts.zstd_level = level
        self._bytes: Optional[bytes] = None
        self._scratch: Optional[str] = None
        self._stream_error: Optional[BaseException] = None
        self._callback: Any = None
        self._memory = path is None and has("zt_writer_create_memory")
        out = c_void_p()
        target = ""
        if self._memory:
            check(lib.zt_writer_create_memory(byref(opts), byref(out)))
        else:
            if path is None:
                # In memory, with a library older than 1.1: the file goes to a
                # private scratch folder and finish() reads it back (no fsync:
                # it never outlives the process).
                self._scratch = tempfile.mkdtemp(prefix="ztensor-mem-")
                target = os.path.join(self._scratch, "memory.zt")
                opts.sync = 0
            else:
                target = os.fsdecode(path)
                opts.sync = 1 if sync else 0
            try:
                check(lib.zt_writer_create(os.fsencode(target), byref(opts), byref(out)))
            except BaseException:
                self._drop_scratch()
                raise
        self._w: Optional[int] = out.value
        self.path: Optional[str] = None if path is None else os.fsdecode(path)
        self._target = target
        self._finished = False
        if mode == "a" and path is not None and os.path.exists(path):
            self._copy_existing(path)

    def _copy_existing(self, path: PathLike) -> None:
        """Append mode: the existing file's objects and attributes are copied
        (verified, zstd re-encoded) into this writer, which replaces the file
        atomically at finish(); until then, and if anything fails, the old
        file stays as it was."""
        from .reader import Reader
        try:
            with Reader(path, mmap=False) as old:
                handle = old._require_open()
                files = (c_void_p * 1)(handle.ptr)
                self._check(lib.zt_writer_copy_file_fields(self._handle(), files, 1))
                for i in range(len(old)):
                    self._check(lib.zt_writer_copy_object(self._handle(), old._object_at(i), None, 0))
        except BaseException:
            self.discard()
            raise

    def __repr__(self) -> str:
        state = "finished" if self._finished else ("open" if self._w is not None else "discarded")
        return f"<ztensor.Writer {self.path or '<memory>'!r}: {state}>"

    @classmethod
    def memory(cls, zstd: Zstd = None, digest: Digest = None) -> "Writer":
        """A writer whose file is kept as bytes (zt_writer_create_memory; the
        same bytes a file writer would write): getvalue() after finish().

            with ztensor.Writer.memory() as w:
                w.add("x", np.ones(3))
            data = w.getvalue()
        """
        return cls(None, zstd=zstd, digest=digest)

    @classmethod
    def to_stream(cls, stream: BinaryIO, zstd: Zstd = None, digest: Digest = None) -> "Writer":
        """A writer whose bytes go, in order, to stream.write (an open binary
        file, a socket's makefile("wb"), io.BytesIO, ...); the format never
        seeks back. The stream holds a complete file only once finish()
        returned: after an error or discard() what it got is a partial file.
        An exception raised by stream.write fails the writer and is re-raised.

            with open("out.zt", "wb") as f, ztensor.Writer.to_stream(f) as w:
                w.add("x", np.ones(3))
        """
        if not has("zt_writer_create_callbacks"):
            raise ZTensorError(-7, "Writer.to_stream needs zt_writer_create_callbacks (libztensor 1.1); the "
                                   f"loaded library is {lib.zt_version_string().decode()}")
        writer = cls.__new__(cls)
        writer._bytes, writer._scratch, writer._memory, writer._target, writer.path = None, None, False, "", None
        writer._stream_error = None

        def write(_user: Optional[int], data: Optional[int], length: int) -> int:
            try:
                stream.write(ctypes.string_at(data, length) if data and length else b"")
                return 0
            except BaseException as e:  # handed back by the writer call that failed (_check)
                writer._stream_error = e
                return 1

        writer._callback = WriteCallback(write)  # must live as long as the writer
        opts = WriterOptions()
        lib.zt_writer_options_init(byref(opts))
        opts.digest = _digest_code(digest)
        opts.encoding, level = cls._encoding(zstd)
        if level is not None:
            opts.zstd_level = level
        out = c_void_p()
        check(lib.zt_writer_create_callbacks(writer._callback, None, byref(opts), byref(out)))
        writer._w = out.value
        return writer

    def _check(self, status: int) -> None:
        """check(), re-raising what the stream's write raised when that failed the call."""
        error, self._stream_error = getattr(self, "_stream_error", None), None
        if status != 0 and error is not None:
            raise ZTensorError(status, f"the stream's write raised {error!r}") from error
        check(status)

    def getvalue(self) -> bytes:
        """The finished file's bytes (in-memory writers only)."""
        if self._bytes is None:
            raise ValueError("getvalue() gives the bytes of an in-memory writer (Writer.memory()) once finished")
        return self._bytes

    def _drop_scratch(self) -> None:
        scratch, self._scratch = getattr(self, "_scratch", None), None
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    @staticmethod
    def _encoding(zstd: Zstd) -> Tuple[int, Optional[int]]:
        if zstd is None or zstd is False:
            return 1, None  # raw
        if zstd is True:
            return 2, None  # zstd at the library's default level
        if isinstance(zstd, int):
            return 2, zstd
        raise TypeError("zstd must be None, a bool or a compression level")

    def _blob_options(self, zstd: Union[Zstd, _UseDefault], digest: Union[Digest, _UseDefault],
                      logical_type: Optional[str] = None) -> BlobOptions:
        opts = BlobOptions()
        lib.zt_blob_options_init(byref(opts))
        if not isinstance(zstd, _UseDefault):
            opts.encoding, level = self._encoding(zstd)
            if level is not None:
                opts.zstd_level = level
        if not isinstance(digest, _UseDefault):
            opts.digest = _digest_code(digest)
        if logical_type:
            opts.logical_type = _c_text(logical_type, "logical type")
        return opts

    def _handle(self) -> int:
        if self._w is None:
            raise WriterClosedError(-2, "the Writer is finished or discarded")
        return self._w

    # -- content ---------------------------------------------------------
    def add(self, name: str, array: ArrayLike, *, dtype: Optional[str] = None,
            zstd: Union[Zstd, _UseDefault] = _USE_DEFAULT, digest: Union[Digest, _UseDefault] = _USE_DEFAULT,
            attributes: Any = None, compress: Union[Zstd, _UseDefault] = _USE_DEFAULT,
            checksum: Union[Digest, str, _UseDefault] = _USE_DEFAULT) -> None:
        """Adds a dense tensor. dtype overrides the stored type: a storage name
        ("bf16" for uint16 bit patterns or floats to round, "f16", ...) or a
        logical type ("f8_e4m3fn" over uint8 bytes, "complex64", ...).

            w.add("x", np.arange(10), zstd=False, attributes={"unit": "m"})
            w.add("h", np.ones(4, np.float32), dtype="bf16")

        compress= and checksum= are the original zTensor package's names for
        zstd= (True, a level, False) and digest= ("crc32c", "sha256", "none").
        """
        if not isinstance(compress, _UseDefault):
            zstd = compress
        if not isinstance(checksum, _UseDefault):
            digest = None if checksum in (None, "none") else checksum  # type: ignore[assignment]
        code, logical, arr = storage_for(array, dtype)
        shape, ndim = shape_array(np.shape(array))
        nb = _name_bytes(name)
        opts = self._blob_options(zstd, digest, logical)
        self._check(lib.zt_writer_add_dense(self._handle(), nb, len(nb), code, shape, ndim, c_void_p(arr.ctypes.data),
                                      arr.nbytes, byref(opts)))
        if attributes is not None:
            self.set_object_attributes(name, attributes)

    def write_numpy(self, name: str, array: ArrayLike, **options: Any) -> None:
        """The original package's name for add() of a numpy array."""
        self.add(name, array, **options)

    def write_torch(self, name: str, tensor: Any, **options: Any) -> None:
        """Adds a torch tensor (any dtype ztensor.torch saves: bfloat16, fp8, ...), by value."""
        from . import torch as zt_torch
        array, dtype = zt_torch._to_numpy(name, tensor)
        self.add(name, array, dtype=options.pop("dtype", dtype), **options)

    def add_sparse_csr(self, name: str, values: Optional[ArrayLike] = None, indices: Optional[ArrayLike] = None,
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

    def add_sparse_coo(self, name: str, values: ArrayLike, coords: ArrayLike, shape: Shape, *,
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

    def add_quantized(self, name: str, packed_weight: ArrayLike, scales: ArrayLike, zeros: Optional[ArrayLike],
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
        p = QuantParams()
        lib.zt_quant_params_init(byref(p))
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

    def add_object(self, name: str, format: str, shape: Shape,
                   components: Mapping[str, Union[ArrayLike, Tuple[ArrayLike, Optional[str]]]], *,
                   attributes: Any = None, zstd: Union[Zstd, _UseDefault] = _USE_DEFAULT,
                   digest: Union[Digest, _UseDefault] = _USE_DEFAULT) -> None:
        """Adds an object of any format: components is {role: array} (or
        {role: (array, dtype)}), written in the given order.

            w.add_object("t", "my_format", (4,), {"data": np.zeros(4, np.float32)})
        """
        nb = _name_bytes(name)
        dims, ndim = shape_array(shape)
        check(lib.zt_writer_begin_object(self._handle(), nb, len(nb), _c_text(format, "format"), dims, ndim))
        for role, value in components.items():
            array, dtype = value if isinstance(value, tuple) else (value, None)
            code, logical, arr = storage_for(array, dtype)
            opts = self._blob_options(zstd, digest, logical)
            self._check(lib.zt_write_blob(self._handle(), nb, len(nb), _c_text(role, "role"), code,
                                          c_void_p(arr.ctypes.data), arr.nbytes, byref(opts)))
        if attributes is not None:
            self.set_object_attributes(name, attributes)

    # -- streaming -------------------------------------------------------
    def begin_object(self, name: str, format: str, shape: Shape) -> None:
        """Declares an object whose components follow (write_blob_begin ... end, or add_object)."""
        nb = _name_bytes(name)
        dims, ndim = shape_array(shape)
        check(lib.zt_writer_begin_object(self._handle(), nb, len(nb), _c_text(format, "format"), dims, ndim))

    def write_blob_begin(self, name: str, role: str, dtype: str, *, zstd: Union[Zstd, _UseDefault] = _USE_DEFAULT,
                         digest: Union[Digest, _UseDefault] = _USE_DEFAULT) -> None:
        """Starts one component of a declared object, written in pieces with
        write_blob_append: memory stays bounded by one piece. dtype is a
        storage or logical type name ("f32", "bf16", "f8_e4m3fn", ...)."""
        code, logical = code_for_name(dtype)
        nb = _name_bytes(name)
        opts = self._blob_options(zstd, digest, logical)
        check(lib.zt_write_blob_begin(self._handle(), nb, len(nb), _c_text(role, "role"), code, byref(opts)))
        self._stream_dtype: Optional[str] = dtype

    def write_blob_append(self, data: Union[ArrayLike, bytes, bytearray, memoryview]) -> None:
        """Appends elements to the open component: an array (converted to the
        component's dtype, little-endian) or raw little-endian bytes."""
        if isinstance(data, (bytes, bytearray, memoryview)):
            raw = np.frombuffer(data, dtype=np.uint8)
        else:
            _, _, raw = storage_for(data, getattr(self, "_stream_dtype", None))
        self._check(lib.zt_write_blob_append(self._handle(), c_void_p(raw.ctypes.data), raw.nbytes))

    def write_blob_end(self) -> None:
        """Ends the open component; a total that does not fit the object's shape fails the writer."""
        self._stream_dtype = None
        self._check(lib.zt_write_blob_end(self._handle()))

    @contextlib.contextmanager
    def add_stream(self, name: str, shape: Shape, dtype: str, *, zstd: Union[Zstd, _UseDefault] = _USE_DEFAULT,
                   digest: Union[Digest, _UseDefault] = _USE_DEFAULT) -> Iterator[Callable[[Any], None]]:
        """A dense tensor written in pieces (row blocks, chunks of a stream),
        never held whole in memory; the block gives the append function.

            with w.add_stream("big", (n, 1024), "f32") as append:
                for block in blocks:                # arrays of rows, in order
                    append(block)
        """
        self.begin_object(name, "dense", shape)
        self.write_blob_begin(name, "data", dtype, zstd=zstd, digest=digest)
        yield self.write_blob_append
        self.write_blob_end()

    @property
    def attributes(self) -> Any:
        raise AttributeError("file attributes are write-only on a Writer")

    @attributes.setter
    def attributes(self, value: Any) -> None:
        """File attributes: a dict of JSON-able values plus bytes, float nan/inf, Tagged, big ints."""
        check(lib.zt_writer_set_attributes_json(self._handle(), _attributes.to_json_text(value).encode()))

    def set_object_attributes(self, name: str, value: Any) -> None:
        """Attributes of one object already added (add(..., attributes=) does the same)."""
        nb = _name_bytes(name)
        check(lib.zt_writer_set_object_attributes_json(self._handle(), nb, len(nb),
                                                       _attributes.to_json_text(value).encode()))

    # -- end ---------------------------------------------------------------
    def finish(self) -> Optional[int]:
        """Writes the manifest and footer and renames the file into place
        (in-memory writers: keeps the bytes for getvalue()). Returns the
        file's size in bytes (None for a stream writer)."""
        w, self._w = self._handle(), None
        self._finished = True
        if self._memory:
            data, n = ctypes.POINTER(ctypes.c_uint8)(), ctypes.c_size_t()
            check(lib.zt_writer_finish_memory(w, byref(data), byref(n)))
            try:
                self._bytes = ctypes.string_at(data, n.value)
            finally:
                lib.zt_free(data)
            return len(self._bytes)
        try:
            self._check(lib.zt_writer_finish(w))
            if self._scratch is not None:
                with open(self._target, "rb") as f:
                    self._bytes = f.read()
                return len(self._bytes)
        finally:
            self._drop_scratch()
        return os.path.getsize(self._target) if self._target else None

    def discard(self) -> None:
        """Abandons the file: nothing is left on disk."""
        w, self._w = self._w, None
        try:
            if w is not None:
                check(lib.zt_writer_discard(w))
        finally:
            self._drop_scratch()

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> Literal[False]:
        if exc_type is not None:
            self.discard()
        elif self._w is not None:
            self.finish()
        return False

    def __del__(self) -> None:
        w, self._w = getattr(self, "_w", None), None
        if w is not None and lib is not None:
            lib.zt_writer_discard(w)
        self._drop_scratch()


