"""What the Writer and its parts share: the default sentinel, the option
types, and the checks every name, role and dimension passes before it
reaches the library."""

from typing import Any, Dict, Literal, Optional, Sequence, Union

import numpy as np

from ._types import Array, ArrayLike

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
