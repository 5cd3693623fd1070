"""What the Writer and its parts share: the default sentinel, the option
types, and the checks every name, role and dimension passes before it
reaches the library."""

from typing import Any, Dict, Literal, Optional, Sequence, Union

import numpy as np

from ._types import Array, ArrayLike

_DIGESTS: Dict[Optional[str], int] = {None: 0, "none": 0, "crc32c": 1, "sha256": 2, "xxh3": 4}
# format=: the generation written (docs/v2.md, Writing).
_FORMATS: Dict[Any, int] = {None: 1, 1: 1, "1.2": 1, 2: 2, "2": 2}


class _UseDefault:
    """The writer's default (zstd/digest given to Writer()), as opposed to None."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "<the Writer's default>"


_USE_DEFAULT = _UseDefault()

Digest = Optional[Literal["none", "crc32c", "sha256", "xxh3"]]
Format = Union[None, int, str]  # None/1/"1.2": spec 1.2; 2/"2": zTensor v2
Zstd = Union[None, bool, int]  # None/False: raw, True: zstd at the default level, int: that level
Shape = Sequence[int]


def _digest_code(digest: Optional[str]) -> int:
    if digest not in _DIGESTS:
        raise ValueError(f'digest must be None, "crc32c", "sha256" or (v2) "xxh3", not {digest!r}')
    return _DIGESTS[digest]


def format_code(format: Format) -> int:  # noqa: A002
    """1 (spec 1.2) or 2 (zTensor v2) for a format= value."""
    if format not in _FORMATS:
        raise ValueError(f'format must be "1.2" (the default) or 2, not {format!r}')
    return _FORMATS[format]


def set_format(opts: Any, fmt: int, canonical: bool, alignment: Optional[int], digest: Optional[str]) -> None:
    """Fills the 1.3 fields of a WriterOptions: v2's canonical form (raw,
    xxh3 on every part; the default), or, with canonical=False, the given
    alignment and digest ("xxh3" by default, "sha256" or "none")."""
    if fmt == 1:
        if alignment is not None:
            raise ValueError("alignment= applies to format=2 (zTensor v2) only")
        if digest == "xxh3":
            raise ValueError('digest="xxh3" is a v2 digest: pass format=2')
        return
    if digest == "crc32c":
        raise ValueError('crc32c is not a v2 digest: use "xxh3" (the default), "sha256" or "none"')
    if canonical and digest not in (None, "xxh3"):
        raise ValueError("canonical v2 gives every part an xxh3 digest; pass canonical=False for another")
    if canonical and alignment not in (None, 65536):
        raise ValueError("canonical v2 places blobs at 65536; pass canonical=False for another alignment")
    if alignment is not None and (alignment < 4096 or alignment % 4096):
        raise ValueError(f"a v2 alignment is a multiple of 4096, not {alignment!r}")
    opts.format = 2
    opts.canonical = 1 if canonical else 0
    opts.v2_digest = 4 if digest is None else _DIGESTS[digest]
    opts.alignment = alignment or 0


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
