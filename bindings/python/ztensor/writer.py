"""Writing .zt files (spec 1.2.0). Nothing appears at the path until the
writer finishes; an exception inside `with Writer(...)` discards the file."""

import contextlib
import ctypes
import os
from ctypes import byref, c_void_p
from types import TracebackType
from typing import Any, BinaryIO, Callable, Iterator, Literal, Mapping, Optional, Sequence, Tuple, Type, Union

import numpy as np

from . import _attributes, _writer_composite, _writer_parts
from ._dtypes import code_for_name, storage_for
from ._lib import BlobOptions, WriteCallback, WriterOptions, ZTensorError, check, lib, new_struct, shape_array
from ._types import ArrayLike, PathLike
from ._writer_types import _USE_DEFAULT, Shape, _c_text, _digest_code, _name_bytes, _UseDefault, format_code, set_format
from ._writer_types import Digest as Digest, Format as Format, Zstd as Zstd  # re-exported: the option types


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
    digest: None, "crc32c" or "sha256" (or "xxh3" for v2). Both are defaults
    that add() and the helpers may override per object.
    format: None or "1.2" (spec 1.2, the default), or 2 for zTensor v2
    (docs/v2.md, Writing): canonical by default (the same tensors give the
    same bytes, whatever order they are added in; raw, an xxh3 digest per
    part, names in NFC); canonical=False allows zstd (zt.zstd-seekable/1),
    digest "sha256"/"none" and alignment= (a multiple of 4096). The original
    2.x package's forms (canonical=, align=, publish=) are accepted; with
    format=2 their canonical= and align= apply to the v2 file.
    """

    _finished = False
    _v2_on_2x_form: Optional[Tuple[bool, Optional[int], bool]] = None
    _v2 = False  # writes zTensor v2 (format=2, or the 2.x form)
    _USE_DEFAULT = _USE_DEFAULT  # the sentinel, for _writer_parts

    def __init__(self, path: Optional[PathLike], zstd: Zstd = None, digest: Digest = None, *,
                 sync: bool = True, mode: str = "w", format: Format = None,  # noqa: A002
                 canonical: Optional[bool] = None, alignment: Optional[int] = None, align: Optional[int] = None,
                 publish: Optional[bool] = None, append: Optional[bool] = None) -> None:
        # canonical=, align=, publish=, append=: the original 2.x package's
        # Writer. Every file is published atomically here (publish).
        if align is not None and (not isinstance(align, int) or align <= 0 or align & (align - 1)):
            raise ValueError(f"align must be a power of two, not {align!r}")
        if align is not None and alignment is not None and align != alignment:
            raise ValueError("align= and alignment= name the same option: give one")
        if alignment is None:
            alignment = align
        fmt = format_code(format)
        # Writer(path) given none of our 1.2 options (format=, zstd=, digest=,
        # append) writes what the original 2.x package writes, v2 (canonical
        # unless canonical=False), once its first content comes in the 2.x
        # form: add(name, bytes, shape=, dtype=), add_object with parts,
        # stream, set_attributes (_handle_2x). Our forms keep spec 1.2.
        if format is None and zstd is None and digest is None and mode == "w" and not append and path is not None:
            self._v2_on_2x_form = (canonical is not False, alignment, sync)
        if fmt == 1:
            # The 2.x forms keep spec 1.2 unless format=2 is given: their
            # placement is then checked only (docs: Python README).
            alignment, canonical = None, None
        if canonical is None:
            canonical = True  # v2's default; zstd, sha256 or alignment= need canonical=False
        if append and publish:
            raise ValueError("append=True and publish=True are two ways of writing: pick one")
        if append:
            mode = "a"
        self._digest_default = digest
        if mode not in ("w", "a"):
            raise ValueError(f'mode must be "w" (a new file) or "a" (append to an existing one), not {mode!r}')
        opts = new_struct(WriterOptions)
        opts.digest = _digest_code(digest)
        set_format(opts, fmt, canonical, alignment, digest)
        self._v2 = fmt == 2
        opts.encoding, level = self._encoding(zstd)
        if level is not None:
            opts.zstd_level = level
        self._bytes: Optional[bytes] = None
        self._stream_error: Optional[BaseException] = None
        self._callback: Any = None
        self._memory = path is None
        out = c_void_p()
        target = ""
        if self._memory:
            check(lib.zt_writer_create_memory(byref(opts), byref(out)))
        else:
            target = os.fsdecode(path)  # type: ignore[arg-type]
            opts.sync = 1 if sync else 0
            check(lib.zt_writer_create(os.fsencode(target), byref(opts), byref(out)))
        self._w: Optional[int] = out.value
        self.path: Optional[str] = None if path is None else os.fsdecode(path)
        self._target = target
        self._finished = False
        if mode == "a" and path is not None and os.path.exists(path):
            self._copy_existing(path)

    @classmethod
    def append(cls, path: PathLike, zstd: Zstd = None, digest: Digest = None) -> "Writer":
        """A writer adding tensors to the existing file at path (the original
        zTensor package's Writer.append): its objects and attributes are
        kept, and the file is replaced atomically at finish() (until then,
        and if anything fails, the old file stays as it was). A path with
        no file starts a new one.

            with ztensor.Writer.append("model.zt") as w:
                w.add("extra", np.ones(3))
        """
        return cls(path, zstd=zstd, digest=digest, mode="a")

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
    def memory(cls, zstd: Zstd = None, digest: Digest = None, *, format: Format = None,  # noqa: A002
               canonical: Optional[bool] = None) -> "Writer":
        """A writer whose file is kept as bytes (zt_writer_create_memory; the
        same bytes a file writer would write): getvalue() after finish().

            with ztensor.Writer.memory() as w:
                w.add("x", np.ones(3))
            data = w.getvalue()
        """
        return cls(None, zstd=zstd, digest=digest, format=format, canonical=canonical)

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
        writer = cls.__new__(cls)
        writer._bytes, writer._memory, writer._target, writer.path = None, False, "", None
        writer._stream_error = None

        def write(_user: Optional[int], data: Optional[int], length: int) -> int:
            try:
                stream.write(ctypes.string_at(data, length) if data and length else b"")
                return 0
            except BaseException as e:  # handed back by the writer call that failed (_check)
                writer._stream_error = e
                return 1

        writer._callback = WriteCallback(write)  # must live as long as the writer
        opts = new_struct(WriterOptions)
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
        opts = new_struct(BlobOptions)
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
        self._v2_on_2x_form = None  # our form came first: spec 1.2 stays
        if self._w is None:
            raise WriterClosedError(-2, "the Writer is finished or discarded")
        return self._w

    def _handle_2x(self) -> int:
        """The handle for a call in the original 2.x package's form: the
        first such call, before any content, turns the file into v2 as 2.x
        writes it (see __init__)."""
        switch, self._v2_on_2x_form = self._v2_on_2x_form, None
        if switch is not None and self._w is not None:
            canonical, alignment, sync = switch
            opts = new_struct(WriterOptions)
            opts.sync = 1 if sync else 0
            set_format(opts, 2, canonical, alignment, None)
            out = c_void_p()
            check(lib.zt_writer_create(os.fsencode(self._target), byref(opts), byref(out)))
            old, self._w = self._w, out.value
            check(lib.zt_writer_discard(old))
            self._v2 = True
        if self._w is None:
            raise WriterClosedError(-2, "the Writer is finished or discarded")
        return self._w

    # -- content ---------------------------------------------------------
    def add(self, name: str, array: ArrayLike, shape: Optional[Sequence[int]] = None, dtype: Optional[str] = None,
            logical: Optional[str] = None, encoding: Optional[str] = None, *,
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

        With shape= it is the original 2.x package's add: `array` is the
        bytes of the tensor (any buffer, little-endian), stored as `dtype`
        (a storage name: "f32", "u8", ...) with `logical` over it and
        `encoding` "raw" (default) or "zstd":

            w.add("w", struct.pack("<2f", 1, 2), shape=[2], dtype="f32")
        """
        if shape is not None:
            self._add_bytes(name, array, shape, dtype, logical, encoding, zstd, digest)
            return
        if logical is not None or encoding is not None:
            raise TypeError("logical= and encoding= go with shape= (the bytes-plus-shape add)")
        if not isinstance(compress, _UseDefault):
            zstd = compress
        if not isinstance(checksum, _UseDefault):
            digest = None if checksum in (None, "none") else checksum  # type: ignore[assignment]
        code, logical, arr = storage_for(array, dtype)
        dims, ndim = shape_array(np.shape(array))
        nb = _name_bytes(name)
        opts = self._blob_options(zstd, digest, logical)
        self._check(lib.zt_writer_add_dense(self._handle(), nb, len(nb), code, dims, ndim, c_void_p(arr.ctypes.data),
                                      arr.nbytes, byref(opts)))
        if attributes is not None:
            self.set_object_attributes(name, attributes)

    # The original 2.x package's calls (ztensor/_writer_parts.py).
    _add_bytes = _writer_parts.add_bytes
    set_attributes = _writer_parts.set_attributes
    abandon = _writer_parts.abandon
    ingest = _writer_parts.ingest
    stream = _writer_parts.stream
    _add_parts = _writer_parts.add_parts

    def write_numpy(self, name: str, array: ArrayLike, **options: Any) -> None:
        """The original package's name for add() of a numpy array."""
        self.add(name, array, **options)

    def write_torch(self, name: str, tensor: Any, **options: Any) -> None:
        """Adds a torch tensor (any dtype ztensor.torch saves: bfloat16, fp8, ...), by value."""
        from . import _torch_types as zt_torch
        array, dtype = zt_torch._to_numpy(name, tensor)
        self.add(name, array, dtype=options.pop("dtype", dtype), **options)

    # Composite objects (ztensor/_writer_composite.py).
    add_sparse_csr = _writer_composite.add_sparse_csr
    add_sparse_coo = _writer_composite.add_sparse_coo
    add_quantized = _writer_composite.add_quantized

    def add_object(self, name: str, format: Any = None, shape: Any = None,
                   components: Optional[Mapping[str, Union[ArrayLike, Tuple[ArrayLike, Optional[str]]]]] = None,
                   layout: Optional[str] = None, attributes: Any = None, *, parts: Any = None,
                   zstd: Union[Zstd, _UseDefault] = _USE_DEFAULT, digest: Union[Digest, _UseDefault] = _USE_DEFAULT
                   ) -> None:
        """Adds an object of any format: components is {role: array} (or
        {role: (array, dtype)}), written in the given order.

            w.add_object("t", "my_format", (4,), {"data": np.zeros(4, np.float32)})

        The original 2.x form, told apart by a shape where the format goes
        (or parts=/layout=): add_object(name, shape, parts, layout=,
        attributes=), parts {role: {"dtype": "u8", "data": bytes,
        "logical": ...}}.
        """
        if not isinstance(format, str) or parts is not None or layout is not None:
            self._add_parts(name, shape if format is None else format,
                            parts if parts is not None else (components if components is not None else shape),
                            layout or "dense", attributes, digest)
            return
        assert components is not None and shape is not None
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
        self._check(lib.zt_writer_finish(w))
        return os.path.getsize(self._target) if self._target else None

    def discard(self) -> None:
        """Abandons the file: nothing is left on disk."""
        w, self._w = self._w, None
        if w is not None:
            check(lib.zt_writer_discard(w))

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


