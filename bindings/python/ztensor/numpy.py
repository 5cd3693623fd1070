"""safetensors.numpy's API over zTensor files: switch with one import line.

    from ztensor.numpy import save_file, load_file, save, load, safe_open

    save_file({"embed": np.zeros((512, 1024), np.float32)}, "model.zt", metadata={"format": "np"})
    tensors = load_file("model.zt")             # {name: writable numpy array}
    data = save({"a": np.arange(3)})            # bytes of a whole .zt file
    back = load(data)
    with safe_open("model.zt", framework="np") as f:
        print(f.keys(), f.metadata())
        part = f.get_slice("embed")[0:16, ::2]  # reads only rows 0-15

numpy has no bfloat16 or fp8: such tensors come back as their raw bits
(uint16 for bf16, uint8 for fp8; ztensor.bf16_to_float32 widens bf16), and
safe_open(...).get_slice(name).get_dtype() names the stored type ("BF16").
ztensor.torch keeps them typed.

Beyond safetensors: zstd=/digest= on save_file and save (compression and
sha256/crc32c digests per tensor), verify=True on load_file, load and
safe_open (digests checked as data is read), copy=False on safe_open
(zero-copy, read-only arrays).
"""

from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np

from . import _frameworks, _safe
from ._types import Array, PathLike, Source
from .writer import Digest, Zstd

__all__ = ["save_file", "load_file", "save", "load", "safe_open"]

def _to_numpy(name: str, value: Any) -> Tuple[Array, Optional[str]]:
    if not isinstance(value, (np.ndarray, np.generic)):
        raise ValueError(f"Key `{name}` is invalid, expected np.ndarray but received {type(value)}")
    array = np.asarray(value)
    if array.dtype.kind not in "biufc" or array.dtype.kind == "c" and array.dtype.itemsize not in (8, 16):
        raise TypeError(f"tensor {name!r}: numpy dtype {array.dtype} has no zTensor type")
    return array, None


def _from_numpy(array: Array, zt_type: str, name: str) -> Array:
    return array


def save_file(tensor_dict: Mapping[str, Array], filename: PathLike, metadata: Optional[Dict[str, str]] = None, *,
              zstd: Zstd = None, digest: Digest = None, compression: Zstd = None,
              format: Any = None) -> None:  # noqa: A002
    """Saves numpy arrays as a .zt file, atomically (nothing at `filename`
    until it is complete; an error leaves any previous file as it was).
    Non-contiguous and big-endian arrays are stored as their values.

        save_file({"a": np.zeros((2, 2)), "b": np.arange(3)}, "model.zt", metadata={"step": "3"})

    metadata: None or a dict of str to str (safetensors' rule), stored as the
    file's attributes. zstd: None (raw), True or a level; digest: None,
    "crc32c" or "sha256"; compression= is the original zTensor package's
    name for zstd=.

    A filename ending in ".safetensors" gets the safetensors format itself,
    byte for byte what safetensors.numpy.save_file writes; any other name
    a .zt file. format="safetensors" or "zt" overrides the name.
    """
    _safe.write(tensor_dict, filename, metadata, _to_numpy, zstd if compression is None else compression, digest,
                format)


def save(tensor_dict: Mapping[str, Array], metadata: Optional[Dict[str, str]] = None, *, zstd: Zstd = None,
         digest: Digest = None, compression: Zstd = None, format: Optional[str] = None) -> bytes:  # noqa: A002
    """The bytes of a .zt file holding the arrays (as save_file would write it).

        data = save({"a": np.ones(3, np.float32)})
        load(data)["a"]    # array([1., 1., 1.], dtype=float32)

    The bytes are zTensor's; format="safetensors" gives safetensors' own.
    """
    data = _safe.write(tensor_dict, None, metadata, _to_numpy, zstd if compression is None else compression, digest,
                       format)
    assert data is not None
    return data


def load_file(filename: PathLike, *, backend: str = "mmap", verify: bool = False, copy: bool = True
              ) -> Dict[str, Array]:
    """Every tensor of a .zt file (any spec version) as new, writable numpy arrays.

        tensors = load_file("model.zt")
        tensors["a"] += 1            # the file is not touched

    verify=True checks each tensor's digest (files written with digest=)
    and raises ZTensorError on damage instead of returning bad data.
    Objects that are not dense tensors are refused by name (use ztensor.Reader).
    backend: "mmap" (default) or "pread" (safetensors' names; the arrays
    own their memory either way), anything else raises ValueError.
    copy=False (the original zTensor package's keyword): zero-copy arrays
    of the file's private copy-on-write mapping where the data allows,
    writable (a write changes this process's pages, never the file); the
    hazards of mapped views apply (see ztensor.load_file).
    """
    with _safe.open_reader(filename, verify=verify, mmap=_safe.reader_mmap(backend), prefetch=True) as r:
        if not copy:
            views: Dict[str, Array] = r.read_numpy(_safe.dense_names(r), copy=False)
            return views
        return _safe.read_all(r, _from_numpy, arrays_as_they_are=True)


def load(data: Source, *, verify: bool = False) -> Dict[str, Array]:
    """The tensors of a .zt file given as bytes (bytes, bytearray, memoryview, mmap).

        tensors = load(open("model.zt", "rb").read())
    """
    with _safe.open_reader(data, verify=verify) as r:
        return _safe.read_all(r, _from_numpy, arrays_as_they_are=True)


def safe_open(filename: Source, framework: str = "np", device: str = "cpu", *, backend: str = "mmap",
              copy: bool = True, verify: bool = False) -> "_safe.SafeOpen[Any]":
    """Opens a .zt file lazily: nothing is read until asked for.

        with safe_open("model.zt", framework="np") as f:
            names = f.keys()                  # sorted
            meta = f.metadata()               # dict[str, str] or None
            a = f.get_tensor("a")             # writable copy
            s = f.get_slice("a")              # s.get_shape(), s.get_dtype(), s[0:2, ::3]

    framework: "np" or "numpy" ("pt"/"torch" give ztensor.torch.safe_open's
    torch tensors, as safetensors' one safe_open does); device: "cpu".
    copy=False gives zero-copy, read-only arrays of the file's mapping where
    the data allows (raw, little-endian). filename may also be the file's
    bytes, or a file object (anything with read and seek, such as an fsspec
    file; read through zt_open_io). backend: "mmap" or "pread" (no mapping).
    """
    return _frameworks.safe_open(filename, framework, device, backend=backend, copy=copy, verify=verify)
