"""The open file a Reader and its zero-copy arrays share, and small helpers
of the reading layer."""

import ctypes
import functools
from ctypes import byref
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, cast, overload

from ._lib import ComponentInfo as _CComponentInfo, check, lib, new_struct
from ._types import Array

if TYPE_CHECKING:
    from .reader import Reader


def is_url(path: object) -> bool:
    """True for a str starting with http://, https:// or s3:// (case-insensitive)."""
    return isinstance(path, str) and path[:8].lower().startswith(("http://", "https://", "s3://"))


def _private_maps() -> bool:
    """Whether the library's file mappings can be trusted to be private and
    writable (copy-on-write). Under strict overcommit (vm.overcommit_memory
    = 2) the library may have fallen back to a read-only shared map, where a
    write through a view faults: views stay read-only there."""
    try:
        with open("/proc/sys/vm/overcommit_memory", "rb") as f:
            return f.read().strip() != b"2"
    except OSError:
        return True


PRIVATE_MAPS = _private_maps()


def file_is_copy_on_write(reader: "Reader") -> bool:
    """Whether writes through zero-copy views of this reader stay private to
    the process: a local file (the library maps files copy-on-write), not
    a caller's buffer or a URL."""
    return PRIVATE_MAPS and reader.path is not None and not is_url(reader.path)


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

class _WritableView:
    """The same memory as a read-only view of a copy-on-write mapping, writable
    for numpy; keeps the view (and so the file handle) alive as its base."""

    def __init__(self, view: Array) -> None:
        self._view = view
        face = dict(view.__array_interface__)
        face["data"] = (face["data"][0], False)
        self.__array_interface__ = face

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
    ci = new_struct(_CComponentInfo)
    check(lib.zt_object_component(obj, index, byref(ci)))
    return ci


@overload
def _text(b: bytes) -> str: ...
@overload
def _text(b: Optional[bytes]) -> Optional[str]: ...
def _text(b: Optional[bytes]) -> Optional[str]:
    return b.decode("utf-8", "surrogateescape") if b is not None else None


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
