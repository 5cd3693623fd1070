"""Writing the safetensors format itself, byte for byte as safetensors does
(huggingface/safetensors, safetensors/src/tensor.rs: prepare, serialize):

- an 8-byte little-endian header length N, N bytes of JSON, then every
  tensor's little-endian bytes back to back;
- tensors ordered by dtype alignment, descending (the order of the Dtype
  enum: BOOL < F4 < ... < F64 < I64 < U64), then by name (byte order);
- the JSON compact (serde_json: no spaces, non-ASCII kept as UTF-8),
  "__metadata__" first when metadata is given (even empty), each tensor as
  {"dtype":..,"shape":[..],"data_offsets":[begin,end]};
- the header padded with spaces to a multiple of 8 bytes.

safetensors keeps metadata in a hash map, so the order of several
metadata entries varies between its runs; here they are written sorted by
key (one of those orders, and the same every time).

save_file / save_model write this for a path ending in ".safetensors" (or
with format="safetensors"); ztensor's own format otherwise.
"""

import json
import os
import tempfile
from typing import Any, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ._types import Array, PathLike

# safetensors' Dtype enum, in its declared (alignment) order.
DTYPE_ORDER = ["BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ",
               "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64", "F64", "I64", "U64"]
_RANK = {name: i for i, name in enumerate(DTYPE_ORDER)}
MAX_HEADER_SIZE = 100_000_000  # safetensors' limit

# zTensor element type -> safetensors dtype (types safetensors lacks are absent).
FROM_ZT = {"f64": "F64", "f32": "F32", "f16": "F16", "bf16": "BF16", "i64": "I64", "i32": "I32", "i16": "I16",
           "i8": "I8", "u64": "U64", "u32": "U32", "u16": "U16", "u8": "U8", "bool": "BOOL",
           "f8_e4m3fn": "F8_E4M3", "f8_e5m2": "F8_E5M2", "f8_e4m3fnuz": "F8_E4M3FNUZ", "f8_e5m2fnuz": "F8_E5M2FNUZ",
           "f8_e8m0fnu": "F8_E8M0", "f8_e8m0": "F8_E8M0", "f4_e2m1": "F4", "complex64": "C64"}


class Entry:
    """One tensor to write: its name, safetensors dtype, shape and bytes
    (a little-endian, C-contiguous array, viewed as bytes)."""

    __slots__ = ("name", "dtype", "shape", "data")

    def __init__(self, name: str, dtype: str, shape: Sequence[int], data: Array) -> None:
        self.name = name
        self.dtype = dtype
        self.shape = [int(d) for d in shape]
        self.data = data


def _text(s: str) -> str:
    """A JSON string as serde_json writes it: ", \\ and control characters
    escaped (\\u00xx in lower-case hex), everything else as it is."""
    return json.dumps(s, ensure_ascii=False)


def header(entries: List[Entry], metadata: Optional[Mapping[str, str]]) -> Tuple[bytes, List[Entry]]:
    """The 8-byte length and padded JSON header, and the entries in the
    order their bytes follow it."""
    ordered = sorted(entries, key=lambda e: (-_RANK[e.dtype], e.name.encode("utf-8")))
    parts = []
    if metadata is not None:
        fields = ",".join(f"{_text(k)}:{_text(v)}" for k, v in sorted(metadata.items(), key=lambda kv: kv[0].encode()))
        parts.append(f'"__metadata__":{{{fields}}}')
    offset = 0
    for e in ordered:
        n = e.data.nbytes
        shape = ",".join(str(d) for d in e.shape)
        parts.append(f'{_text(e.name)}:{{"dtype":"{e.dtype}","shape":[{shape}],"data_offsets":[{offset},{offset + n}]}}')
        offset += n
    text = ("{" + ",".join(parts) + "}").encode("utf-8")
    text += b" " * (-len(text) % 8)
    if len(text) > MAX_HEADER_SIZE:
        from ._errors import SafetensorError
        raise SafetensorError("Error while serializing: HeaderTooLarge")
    return len(text).to_bytes(8, "little") + text, ordered


def to_bytes(entries: List[Entry], metadata: Optional[Mapping[str, str]]) -> bytes:
    head, ordered = header(entries, metadata)
    return b"".join([head] + [e.data.reshape(-1).view(np.uint8).tobytes() for e in ordered])


def write_file(entries: List[Entry], path: PathLike, metadata: Optional[Mapping[str, str]]) -> None:
    """Writes the file atomically: a temporary file beside it, renamed over
    it once complete (as safetensors does), so a reader mapping the old
    file, or a failure, never sees a half-written one."""
    head, ordered = header(entries, metadata)
    target = os.fsdecode(path)
    folder = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(prefix=".ztensor-", suffix=".safetensors.tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(head)
            for e in ordered:
                if e.data.nbytes:
                    f.write(e.data.reshape(-1).view(np.uint8).data)
            f.flush()
            os.fsync(f.fileno())
        try:
            mode = os.stat(target).st_mode & 0o7777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def entries_of(converted: List[Tuple[str, Array, Optional[str]]]) -> List[Entry]:
    """Entries from (name, little-endian array, zTensor dtype or None) as the
    adapters' converters give them; SafetensorError for a type safetensors
    has no name for."""
    from ._dtypes import _FROM_NUMPY, zt_type_name
    out = []
    for name, array, zt in converted:
        if zt is None:
            if array.dtype.kind == "c":
                zt = "complex64" if array.dtype.itemsize == 8 else "complex128"
            else:
                zt = zt_type_name(_FROM_NUMPY.get((array.dtype.kind, array.dtype.itemsize), -1))
        st = FROM_ZT.get(zt)
        if st is None:
            from ._errors import SafetensorError
            raise SafetensorError(f"Unknown dtype {zt!r} for tensor {name!r}: the safetensors format has no such "
                                  "type (save it as a .zt file)")
        data = np.ascontiguousarray(array)
        if data.dtype.byteorder == ">":
            data = data.astype(data.dtype.newbyteorder("<"))
        shape = array.shape
        if st == "F4":  # uint8 pairs (float4_e2m1fn_x2): the header counts elements, as safetensors' TensorSpec
            if array.dtype != np.uint8 or not shape:
                from ._errors import SafetensorError
                raise SafetensorError(f"F4 tensor {name!r} must be uint8 pairs of at least one dimension, got "
                                      f"{array.dtype} of shape {list(shape)}")
            shape = shape[:-1] + (2 * shape[-1],)
        out.append(Entry(name, st, shape, data))
    return out


def zt_generation(format: Any) -> Any:  # noqa: A002
    """The Writer's format= for a save's format= that is not "safetensors":
    2 for zTensor v2, None (spec 1.2) for "zt"/"ztensor"/None."""
    return 2 if format in (2, "2") else None


def wants_safetensors(path: Optional[PathLike], format: Any) -> bool:  # noqa: A002
    """Whether a save writes safetensors bytes: format= if given ("safetensors"
    or "zt"/"ztensor"), else a path ending in ".safetensors"; bytes (path
    None) are zTensor unless format= says otherwise."""
    if format is not None:
        if format not in ("safetensors", "zt", "ztensor", "1.2", 1, 2, "2"):
            raise ValueError(f'format must be "safetensors", "zt" (spec 1.2) or 2 (zTensor v2), not {format!r}')
        return bool(format == "safetensors")
    if path is None or not isinstance(path, (str, bytes, os.PathLike)):
        return False
    return os.fsdecode(path).lower().endswith(".safetensors")

