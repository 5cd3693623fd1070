"""Files the library does not read that an adapter can turn into a .zt
file in memory (ztensor.torch: PyTorch checkpoints). The adapters, or the
package's __init__ on their behalf, register here; the core asks, never
importing an adapter itself."""

from typing import Callable, List, Optional

# fn(path) -> the bytes of an equivalent .zt file, or None when the file is not its kind.
Fallback = Callable[[str], Optional[bytes]]
_FALLBACKS: List[Fallback] = []


def register(fn: Fallback) -> None:
    if fn not in _FALLBACKS:
        _FALLBACKS.append(fn)


def fallback_bytes(path: str) -> Optional[bytes]:
    """The first registered conversion of path that applies, else None."""
    for fn in _FALLBACKS:
        data = fn(path)
        if data is not None:
            return data
    return None
