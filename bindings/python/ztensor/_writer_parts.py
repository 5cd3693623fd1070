"""The original 2.x package's Writer calls, as functions Writer takes as
its methods: add(name, bytes, shape=, dtype=, logical=, encoding=) (the
add_bytes half), add_object(name, shape, parts, layout=, attributes=),
stream(...) -> Sink, set_attributes, abandon, ingest."""

from ctypes import byref, c_void_p
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence

import numpy as np

from ._lib import check, lib, shape_array

if TYPE_CHECKING:
    from .writer import Writer


def _name(name: str) -> bytes:
    if not isinstance(name, str):
        raise TypeError(f"object names are str, not {type(name).__name__}")
    return name.encode("utf-8")


def _c(text: str, what: str) -> bytes:
    """A layout, role or type name as the C string the library takes: one
    holding a NUL would be cut there, so it is refused (as writer._c_text)."""
    raw = str(text).encode("utf-8")
    if b"\0" in raw:
        raise ValueError(f"{what} {text!r} holds a NUL byte, which the writer cannot store")
    return raw


def _code(dtype: Any) -> int:
    code = lib.zt_dtype_from_name(_c(dtype, "dtype")) if dtype is not None else 0
    if code <= 0:
        raise ValueError(f"unknown storage dtype {dtype!r}")
    return int(code)


def _zstd(w: "Writer", encoding: Optional[str]) -> Any:
    if encoding is None:
        return w._USE_DEFAULT
    if encoding != "raw" and "zstd" not in encoding:
        raise ValueError(f'encoding must be "raw" or a zstd one ("zstd", "zt.zstd-seekable/1"), not {encoding!r}')
    return encoding != "raw"


def _digest(w: "Writer", digest: Any) -> Any:
    """The 2.x form digests every part (as its files do) unless told otherwise."""
    if digest is w._USE_DEFAULT and getattr(w, "_digest_default", None) is None and not w._v2:
        return "crc32c"
    return digest


def _bytes(data: Any) -> "np.ndarray[Any, Any]":
    return np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)


def add_bytes(self: "Writer", name: str, data: Any, shape: Sequence[int], dtype: Optional[str],
              logical: Optional[str], encoding: Optional[str], zstd: Any, digest: Any) -> None:
    if dtype is None:
        raise TypeError("add(name, bytes, shape=...) needs dtype=")
    code = _code(dtype)
    handle = self._handle_2x()
    encoded = _zstd(self, encoding)
    buf = _bytes(data)
    dims, ndim = shape_array(shape)
    nb = _name(name)
    opts = self._blob_options(zstd if encoded is self._USE_DEFAULT else encoded, _digest(self, digest), logical)
    self._check(lib.zt_writer_add_dense(handle, nb, len(nb), code, dims, ndim,
                                        c_void_p(buf.ctypes.data if buf.size else None), buf.size, byref(opts)))


def add_parts(self: "Writer", name: str, shape: Sequence[int], parts: Mapping[str, Mapping[str, Any]], layout: str,
              attributes: Any, digest: Any) -> None:
    """add_object in the 2.x form: each part {"dtype", "data", "logical"?, "encoding"?}."""
    if not isinstance(parts, Mapping) or not parts:
        raise TypeError("add_object(name, shape, parts): parts is {part name: {\"dtype\": ..., \"data\": bytes}}")
    nb = _name(name)
    dims, ndim = shape_array(shape)
    check(lib.zt_writer_begin_object(self._handle_2x(), nb, len(nb), _c(layout, "layout"), dims, ndim))
    for role, part in parts.items():
        buf = _bytes(part["data"])
        opts = self._blob_options(_zstd(self, part.get("encoding")), _digest(self, digest), part.get("logical"))
        self._check(lib.zt_write_blob(self._handle(), nb, len(nb), _c(role, "part"), _code(part.get("dtype")),
                                      c_void_p(buf.ctypes.data if buf.size else None), buf.size, byref(opts)))
    if attributes is not None:
        self.set_object_attributes(name, attributes)


class Sink:
    """Accepts the bytes of a streamed object, in part-name order: each part
    ends when its "nbytes" have been written, and the next begins."""

    def __init__(self, writer: "Writer", name: str, parts: Dict[str, Mapping[str, Any]]) -> None:
        self._w, self._name = writer, name
        self._parts: List[str] = sorted(parts)
        self._specs = parts
        self._at = 0
        self.written = 0
        self._open = False
        self._begin()

    @property
    def part(self) -> Optional[str]:
        return self._parts[self._at] if self._at < len(self._parts) else None

    def _begin(self) -> None:
        role = self.part
        if role is None:
            return
        spec = self._specs[role]
        nb = _name(self._name)
        opts = self._w._blob_options(_zstd(self._w, spec.get("encoding")), _digest(self._w, self._w._USE_DEFAULT),
                                     spec.get("logical"))
        check(lib.zt_write_blob_begin(self._w._handle(), nb, len(nb), _c(role, "part"), _code(spec.get("dtype")),
                                      byref(opts)))
        self._open = True
        self.written = 0

    def write(self, chunk: Any) -> None:
        buf = _bytes(chunk)
        while buf.size:
            role = self.part
            if role is None:
                raise ValueError(f"{self._name!r}: more bytes than its parts declare")
            room = int(self._specs[role]["nbytes"]) - self.written
            piece, buf = buf[:room], buf[room:]
            self._w._check(lib.zt_write_blob_append(self._w._handle(), c_void_p(piece.ctypes.data), piece.size))
            self.written += piece.size
            if self.written == int(self._specs[role]["nbytes"]) and buf.size:
                self._end_part()

    def _end_part(self) -> None:
        self._w._check(lib.zt_write_blob_end(self._w._handle()))
        self._open = False
        self._at += 1
        self._begin()

    def close(self) -> None:
        """Ends the object; ValueError (the writer discarded) if a part is short."""
        role = self.part
        if role is not None and self._open:
            if self.written != int(self._specs[role]["nbytes"]) or self._at != len(self._parts) - 1:
                self._w.discard()
                raise ValueError(f"{self._name!r}: part {role!r} got {self.written} of "
                                 f"{self._specs[role]['nbytes']} bytes")
            self._w._check(lib.zt_write_blob_end(self._w._handle()))
            self._open = False
            self._at += 1

    def __enter__(self) -> "Sink":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()


def stream(self: "Writer", name: str, shape: Sequence[int], parts: Dict[str, Mapping[str, Any]],
           layout: str = "dense", attributes: Any = None) -> Sink:
    """An object written in pieces: parts {name: {"dtype", "nbytes",
    "logical"?}}, their bytes given to the Sink in part-name order."""
    nb = _name(name)
    dims, ndim = shape_array(shape)
    check(lib.zt_writer_begin_object(self._handle_2x(), nb, len(nb), _c(layout, "layout"), dims, ndim))
    if attributes is not None:
        self.set_object_attributes(name, attributes)
    return Sink(self, name, parts)


def set_attributes(self: "Writer", attributes: Any) -> None:
    """The file's attributes (the attributes property)."""
    self._handle_2x()
    self.attributes = attributes


def abandon(self: "Writer") -> None:
    """discard()."""
    self.discard()


def ingest(self: "Writer", source: Any) -> None:
    """Copies every object of a Reader or a 2.x Source (ztensor.open) into this file, as it is."""
    readers = getattr(source, "_readers", None) or [source]
    self._handle_2x()
    for r in readers:
        for i in range(len(r)):
            self._check(lib.zt_writer_copy_object(self._handle(), r._object_at(i), None, 0))
