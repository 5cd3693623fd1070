"""The original zTensor package's current (2.x) API, beside this one's:
ztensor.open(path or [paths]) gives a Source, a mapping of names to
Tensor handles (V2Tensor: zero-copy bytes through the buffer protocol,
DLPack typed as the file types them, part/parts, tobytes, verify, caps,
location, prefetch/evict); ztensor.verify(path, deep=) gives a
Verification; detect, convert and page_size; ztensor.index
(_v2_index). Built on Reader: it reads whatever the library reads (v2 and
1.x files, safetensors, ...).

V2Tensor is a read-only numpy array of the part's bytes (flat uint8): on
Python 3.11, numpy's buffer protocol is how a Python object gives
memoryview(t) without a copy. Its shape, dtype, nbytes, tobytes and
DLPack are 2.x's (shape a list, dtype "f32"); np.from_dlpack(t) gives the
typed array.
"""

import ctypes
import mmap as _mmap
import os
from collections.abc import Mapping
from ctypes import byref, c_size_t, c_void_p
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _dlpack
from ._bulk import MappedBuffer
from ._dtypes import BY_CODE, numpy_dtype, zt_type_name
from ._handle import _component_info, _text
from ._lib import ZT_E_NOT_ZERO_COPY, ZT_OK, ZTensorError, check, lib, text_field
from ._tensor import Tensor
from ._types import PathLike
from .reader import Reader


class DuplicateNameError(ZTensorError, ValueError):
    """ztensor.open([paths]) with a name in two files: a ValueError, as 2.x raises."""


class NoDLPackTypeError(TypeError, BufferError):
    """A logical type DLPack cannot name (f4_e2m1, ...): 2.x raises TypeError,
    a DLPack exporter BufferError; this is both."""


class Caps(NamedTuple):
    """What one part can do; each field is the precondition of the operation it names."""
    map: bool  # memoryview / DLPack without a copy
    locate: bool  # .location: its bytes sit as they are in a file
    evict: bool  # prefetch()/evict() act on the mapping
    verify: bool  # it carries a digest
    alignment: int  # the largest power of two its offset is a multiple of (capped at 1 MiB)


class Location(NamedTuple):
    """Where a part's bytes are: read nbytes at offset of path yourself."""
    path: str
    offset: int
    nbytes: int


class Verification(NamedTuple):
    """How much of a file carried a digest (checked) and how much did not
    (undigested); unpacks as a pair."""
    checked: int
    undigested: int


def page_size() -> int:
    """The system's page size (what mapped placement is counted in)."""
    return _mmap.PAGESIZE


class V2Tensor(np.ndarray, Tensor):  # type: ignore[type-arg, misc]
    """2.x's Tensor: one tensor, or one part of one. A tensor with one part
    answers about that part; one with several does not guess: index the part
    (t["scales"]). An instance of ztensor.Tensor too."""

    name: str
    part: Optional[str]
    parts: List[str]
    layout: str
    logical: Optional[str]
    _reader: Reader
    _obj: int
    _shape: Tuple[int, ...]
    _typed: Optional["np.ndarray[Any, Any]"]
    _dtype: str
    _location: Optional[Location]
    _caps: Caps

    def __getitem__(self, index: Any) -> Any:  # a part name; anything else indexes the bytes
        if isinstance(index, str):
            return _part(self._reader, self.name, self._obj, index, self.parts, self.layout)
        return np.asarray(self)[index]

    @property  # type: ignore[misc, override]
    def shape(self) -> List[int]:
        return list(self._shape)

    @property
    def dtype(self) -> str:
        return self._dtype

    @property
    def nbytes(self) -> int:
        return int(np.asarray(self).nbytes)

    @property
    def caps(self) -> Caps:
        return self._caps

    @property
    def location(self) -> Location:
        """(path, offset, nbytes) of the part's bytes in the file; ValueError when caps.locate is False."""
        if not self._caps.locate or self._location is None:
            raise ValueError(f"{self.name!r}: its bytes are not stored as they are in a local file "
                             "(encoded, or not a file): read them instead")
        return self._location

    def tobytes(self, order: Any = "C") -> bytes:
        return np.asarray(self).tobytes()

    def verify(self) -> bool:
        """Checks the part's digest: True when one was checked, False when it
        has none; raises ZTensorError when it does not match."""
        if not self._caps.verify:
            return False
        check(lib.zt_object_verify(c_void_p(self._obj)))
        return True

    def _advise(self, advice: int) -> None:
        if not self._caps.evict:
            return
        base = np.asarray(self)
        page = _mmap.PAGESIZE
        start = base.ctypes.data // page * page
        length = base.ctypes.data + base.nbytes - start
        ctypes.CDLL(None, use_errno=True).madvise(c_void_p(start), c_size_t(length), advice)

    def prefetch(self) -> None:
        """Asks the kernel to read the part's pages ahead (MADV_WILLNEED)."""
        self._advise(3)

    def evict(self) -> None:
        """Lets the kernel drop the part's pages (MADV_DONTNEED): they are read again when touched."""
        self._advise(4)

    def __dlpack__(self, stream: Optional[int] = None, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> object:
        _dlpack.check_cpu_request(stream, dl_device)
        if self._typed is None:
            raise NoDLPackTypeError(f"{self.name!r}: its type ({self.logical or self._dtype}) has no DLPack type: "
                              "read its bytes (tobytes, memoryview)")
        if copy is False and not self._caps.map:
            raise BufferError(f"{self.name!r} is decoded into a copy; DLPack without a copy is not possible")
        # A view of the mapping keeps it alive; a decoded part is a copy already.
        copied = bool(copy) or not self._caps.map
        data = np.array(self._typed) if copy else self._typed
        obj = self._obj if self.layout == "dense" and self.part == "data" else None
        if max_version is not None and tuple(max_version)[0] >= 1:
            return _dlpack.versioned_capsule(obj, np.ascontiguousarray(data), read_only=not copied, copied=copied)
        return _dlpack.capsule_of_copy(obj, np.ascontiguousarray(data))

    def __dlpack_device__(self) -> Tuple[int, int]:  # type: ignore[override]
        return (1, 0)

    def __repr__(self) -> str:
        return f"<ztensor.Tensor {self.name!r}{'/' + self.part if self.part else ''}: {self._dtype} {self.shape}>"


def _part(reader: Reader, name: str, obj: int, role: Optional[str], parts: List[str], layout: str) -> V2Tensor:
    if role is None:
        if len(parts) != 1:
            raise ValueError(f"{name!r} has parts {parts}: index the one you mean (t[{parts[0]!r}])")
        role = parts[0]
    if role not in parts:
        raise KeyError(f"{name!r} has no part {role!r} (it has {parts})")
    index = reader._role_index(c_void_p(obj).value, role)
    ci = _component_info(obj, index)
    logical = _text(text_field(ci, "logical_type"))
    ptr, size = c_void_p(), c_size_t()
    status = lib.zt_component_view(c_void_p(obj), index, byref(ptr), byref(size))
    if status == ZT_OK:
        raw = np.asarray(MappedBuffer(ptr.value, size.value, np.dtype("u1"), reader._require_open()))
        mapped = True
    else:  # decoded (zstd, big-endian) or not aligned for a view: a read-only copy
        if status != ZT_E_NOT_ZERO_COPY:
            lib.zt_last_error()  # the view's refusal is no error here: the read below raises if the data is bad
        raw = reader._decoded(obj, index)
        raw.flags.writeable = False
        mapped = False
    t = raw.view(V2Tensor)
    info = reader._c_info(c_void_p(obj).value)
    shape = tuple(int(info.shape[i]) for i in range(info.ndim)) if role == "data" else (-1,)
    typed: Optional["np.ndarray[Any, Any]"] = None
    if ci.dtype in BY_CODE and (not logical or logical.startswith("complex")):
        dt = numpy_dtype(ci.dtype, logical)
        if raw.nbytes % dt.itemsize == 0:
            typed = raw.view(dt)
            typed = typed.reshape(shape) if shape != (-1,) and typed.size == int(np.prod(shape)) else typed
    if shape == (-1,):
        shape = (raw.nbytes // max(typed.itemsize, 1),) if typed is not None else (raw.nbytes,)
    local = reader.path is not None and os.path.isfile(reader.path)
    offset = int(ci.offset)
    t.name, t.part, t.parts, t.layout, t.logical = name, role, parts, layout, logical
    t._reader, t._obj, t._shape, t._typed = reader, obj, shape, typed
    t._dtype = str(_text(text_field(ci, "dtype_name")) or zt_type_name(ci.dtype))
    locate = bool(local and mapped and not ci.big_endian)
    t._location = Location(str(reader.path), offset, int(ci.length)) if locate else None
    align = offset & -offset if offset else 1 << 20
    t._caps = Caps(map=mapped, locate=locate, evict=mapped and local, verify=bool(ci.digest),
                   alignment=min(align, 1 << 20))
    return t


def _handle(reader: Reader, name: str) -> V2Tensor:
    obj = reader._object(name)
    assert obj is not None
    info = reader.info(name)
    parts = [c.role for c in info.components]
    if len(parts) == 1:
        return _part(reader, name, obj, None, parts, info.format)
    return _several(reader, name, obj, info)


def _several(reader: Reader, name: str, obj: int, info: Any) -> V2Tensor:
    """A tensor of several parts: the handle of its first part, answering
    only about the whole (parts, layout, name); its bytes are the first
    part's, index the part you mean."""
    parts = [c.role for c in info.components]
    t = _part(reader, name, obj, parts[0], parts, info.format)
    t.part = None
    t._shape = tuple(info.shape)
    return t


class Source(Mapping):  # type: ignore[type-arg]
    """A tensor file, or several read as one: a mapping from name to
    V2Tensor (registered as a collections.abc.Mapping, as 2.x's is)."""

    def __init__(self, paths: Union[PathLike, Sequence[PathLike]], *, mmap: bool = True,
                 handle: Optional[Callable[[Reader, str], V2Tensor]] = None) -> None:
        # mmap=False, handle=: ztensor.index (_v2_index), which maps nothing
        self._handle = handle or _handle
        many = isinstance(paths, (list, tuple))
        files = list(paths) if many else [paths]  # type: ignore[list-item, arg-type]
        if not files:
            raise ValueError("ztensor.open([]): no file to open")
        self._readers: List[Reader] = []
        self._where: Dict[str, Reader] = {}
        try:
            for f in files:
                r = Reader(f, mmap=mmap)
                self._readers.append(r)
                for name in r.keys():
                    if name in self._where:
                        raise DuplicateNameError(-10, f"tensor {name!r} is in both {self._where[name].path!r} and "
                                                f"{r.path!r}")
                    self._where[name] = r
        except BaseException:
            self.close()
            raise
        self._names = sorted(self._where)  # 2.x: "Tensor names, sorted"
        self._closed = False

    def _check(self) -> None:
        if self._closed:
            raise ValueError("the Source is closed")

    def __getattr__(self, name: str) -> Any:
        # ztensor.open(path) gave a Reader before the 2.x API took the name:
        # a Source over one file still answers the Reader's own methods
        # (io_stats, metadata, read_numpy, ...), so that code keeps working.
        readers = self.__dict__.get("_readers")
        if not name.startswith("_") and readers and len(readers) == 1 and hasattr(readers[0], name):
            return getattr(readers[0], name)
        raise AttributeError(f"'Source' object has no attribute {name!r}")

    def __len__(self) -> int:
        self._check()
        return len(self._names)

    def __iter__(self) -> Iterator[str]:
        self._check()
        return iter(list(self._names))

    def __contains__(self, name: object) -> bool:
        self._check()
        return name in self._where

    def __getitem__(self, name: str) -> V2Tensor:
        self._check()
        if name not in self._where:
            raise KeyError(name)
        return self._handle(self._where[name], name)

    def keys(self) -> List[str]:  # type: ignore[override]
        return list(iter(self))

    def values(self) -> List[V2Tensor]:  # type: ignore[override]
        return [self[n] for n in self]

    def items(self) -> List[Tuple[str, V2Tensor]]:  # type: ignore[override]
        return [(n, self[n]) for n in self]

    @property
    def files(self) -> List[str]:
        return [r.path or "<memory>" for r in self._readers]

    @property
    def attributes(self) -> Any:
        self._check()
        return self._readers[0].attributes if len(self._readers) == 1 else \
            [r.attributes for r in self._readers]

    @property
    def provenance(self) -> str:
        """2.x's names: "root" (a .zt file read as it is), "data-shard" (several
        files read as one), "projection" (another format seen as tensors)."""
        if len(self._readers) > 1:
            return "data-shard"
        return "root" if detect(self.files[0]) == "zt" else "projection"

    def verify(self, deep: bool = False) -> Verification:
        self._check()
        return _verify_readers(self._readers, deep)

    def close(self) -> None:
        for r in getattr(self, "_readers", []):
            r.close()
        self._closed = True

    def __enter__(self) -> "Source":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _verify_readers(readers: List[Reader], deep: bool) -> Verification:
    checked = undigested = 0
    for r in readers:
        for name in r.keys():
            for c in r.info(name).components:
                if c.digest:
                    checked += 1
                else:
                    undigested += 1
        r.verify(strict=deep)  # raises ZTensorError naming what is damaged
    return Verification(checked, undigested)


def verify(path: PathLike, deep: bool = False) -> Verification:
    """Checks a file: every digest (and with deep=True the format's strict
    rules); raises ZTensorError on damage, else (checked, undigested) parts."""
    with Reader(path) as r:
        return _verify_readers([r], deep)


def detect(path: PathLike) -> str:
    """The format of the file at path: "zt", "safetensors", "gguf", "npy",
    "npz", "pytorch", "onnx", "hdf5" or "unknown", from its first bytes."""
    with open(path, "rb") as f:
        head = f.read(16)
    if head[:4] == b"ZTEN" or head[:8] == b"\x89ZT2\r\n\x1a\n":  # 1.x, v2
        return "zt"
    if head[:4] == b"GGUF":
        return "gguf"
    if head[:6] == b"\x93NUMPY":
        return "npy"
    if head[:8] == b"\x89HDF\r\n\x1a\n":
        return "hdf5"
    if head[:4] == b"PK\x03\x04":
        return "npz" if os.fsdecode(path).endswith(".npz") else "pytorch"
    if head[:1] == b"\x80":
        return "pytorch"
    if len(head) >= 9 and head[8:9] == b"{" and int.from_bytes(head[:8], "little") < (1 << 31):
        return "safetensors"
    return "unknown"


def convert(src: PathLike, dst: PathLike, align: Optional[int] = None) -> int:
    """Writes every object of src (any format the library reads) into the
    .zt file dst, atomically; returns its size in bytes."""
    if align is not None and (align <= 0 or align & (align - 1)):
        raise ValueError(f"align must be a power of two, not {align}")
    from .writer import Writer
    with Reader(src) as r:
        w = Writer(dst, digest="crc32c")  # every part digested, as 2.x convert gives
        try:
            handle = r._require_open()
            check(lib.zt_writer_copy_file_fields(w._handle(), (c_void_p * 1)(handle.ptr), 1))
            for i, name in enumerate(r.keys()):
                obj = r._object_at(i)
                if r.format_of(name) == "dense" and not _copyable(r, obj):
                    # Data the library will not view in place (a foreign
                    # file's tensor not aligned to its elements, as after an
                    # unpadded safetensors header) is written from a read.
                    w.add(name, r.read_many([name])[name], dtype=r.element_type(name))
                else:
                    check(lib.zt_writer_copy_object(w._handle(), obj, None, 0))
        except BaseException:
            w.discard()
            raise
        size = w.finish()
    return int(size or 0)


def _copyable(reader: Reader, obj: Optional[int]) -> bool:
    """Whether zt_writer_copy_object takes the dense object as it is: its data
    viewable in place, or encoded (decoded and re-encoded by the copy)."""
    ptr, size = c_void_p(), c_size_t()
    index = reader._role_index(obj, "data")
    status = lib.zt_component_view(c_void_p(obj), index, byref(ptr), byref(size))
    if status == ZT_OK:
        return True
    lib.zt_last_error()
    return _text(text_field(_component_info(obj, index), "encoding_name")) not in (None, "", "raw")  # encoded: re-encoded


def open_source(paths: Union[PathLike, Sequence[PathLike]]) -> Source:
    return Source(paths)
