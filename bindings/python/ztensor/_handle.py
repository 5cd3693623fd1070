"""The open file a Reader and its zero-copy arrays share, and small helpers
of the reading layer."""

import ctypes
import functools
from ctypes import byref
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, cast, overload

from ._lib import ComponentInfo as _CComponentInfo, check, lib
from ._types import Array

if TYPE_CHECKING:
    from .reader import Reader


def is_url(path: object) -> bool:
    """True for a str starting with http://, https:// or s3:// (case-insensitive)."""
    return isinstance(path, str) and path[:8].lower().startswith(("http://", "https://", "s3://"))


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
