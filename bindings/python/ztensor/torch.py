"""safetensors.torch's API over zTensor files: switch with one import line.

    from ztensor.torch import save_file, load_file, save, load, save_model, load_model, safe_open

    save_file({"w": torch.randn(2, 3, dtype=torch.bfloat16)}, "model.zt", metadata={"step": "3"})
    tensors = load_file("model.zt", device="cpu")   # {name: writable tensor}
    data = save({"a": torch.arange(3)})             # bytes of a whole .zt file
    back = load(data)
    save_model(model, "model.zt")                   # tied weights stored once
    missing, unexpected = load_model(model, "model.zt")
    with safe_open("model.zt", framework="pt") as f:
        part = f.get_slice("embed")[:, 0:64]        # reads only that box

Every torch dtype with a zTensor type is kept: bool, uint8, int8..int64,
uint16/32/64 (torch >= 2.3), float16, bfloat16, float32, float64, the
float8 types this torch has, complex64, complex128. Tensors are saved by
value: requires_grad tensors are detached, non-contiguous ones stored as
their values, tensors on other devices copied to the CPU first.

As in safetensors, save_file refuses tensors that share memory (naming
them: saving both would duplicate the storage and lose the tie on load);
save_model keeps one name per shared storage and records the others in the
metadata, and load_model restores them through the model's own ties.

Beyond safetensors: zstd=/digest= when saving, verify=True when loading
(digests checked as data is read), copy=False on safe_open (zero-copy).
"""

import warnings
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple, Union

import torch

from . import _frameworks, _safe
from ._handle import file_is_copy_on_write
from ._lib import ZTensorError
from ._types import PathLike, Source
from ._torch_open import _split, _zero_copy
from .writer import Digest, Zstd
from ._torch_shared import (SharedTensorsError, _check_not_shared, _end_ptr, _filter_shared_not_shared,  # noqa: F401
                            _find_shared_tensors, _is_complete, _remove_duplicate_names, storage_ptr, storage_size)
from ._torch_types import (_FROM_TORCH, _NUMPY_NATIVE, _TO_TORCH, _element_size, _from_numpy, _move,  # noqa: F401
                           _on, _to_device, _to_numpy)

__all__ = ["save_file", "load_file", "save", "load", "save_model", "load_model", "safe_open", "storage_ptr",
           "storage_size"]

Device = Union[str, int, "torch.device"]

# -- PyTorch checkpoints, for ztensor.Reader -------------------------------------
def _is_torch_checkpoint(path: Any) -> bool:
    """A file torch.save wrote: a zip archive (torch >= 1.6) or a pickle."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return False
    return head[:4] == b"PK\x03\x04" or head[:1] == b"\x80"


def checkpoint_as_zt(path: str) -> Optional[bytes]:
    """The tensors of a PyTorch checkpoint (.pt/.bin), read by
    torch.load(weights_only=True), which never runs pickled code, as the
    bytes of a .zt file; None for a file that is not one. Reader opens
    such files through this (ztensor._openers)."""
    if not _is_torch_checkpoint(path):
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise ZTensorError(-20, f"{path}: not a zTensor file, and torch.load(weights_only=True) refused it: "
                                f"{e}") from e
    if not isinstance(state, dict):
        raise ZTensorError(-20, f"{path}: a PyTorch checkpoint holding a {type(state).__name__}, not a dict of "
                                "tensors")
    tensors = {str(k): v for k, v in state.items() if isinstance(v, torch.Tensor)}
    return save({k: v.clone(memory_format=torch.contiguous_format) if v.layout == torch.strided else v for k, v in tensors.items()})


# -- the safetensors surface ----------------------------------------------------
def save_file(tensors: Mapping[str, "torch.Tensor"], filename: PathLike, metadata: Optional[Dict[str, str]] = None,
              *, zstd: Zstd = None, digest: Digest = None, compression: Zstd = None,
              format: Any = None) -> None:  # noqa: A002
    """Saves torch tensors as a .zt file, atomically (nothing at `filename`
    until it is complete; an error leaves any previous file as it was).

        save_file({"w": torch.zeros(2, 3), "b": torch.ones(3, dtype=torch.bfloat16)}, "model.zt",
                  metadata={"epoch": "3"})

    Raises RuntimeError, naming them, for tensors that share memory (use
    save_model), ValueError for non-tensors, sparse or meta tensors, and
    TypeError for dtypes without a zTensor type. metadata: None or a dict
    of str to str. zstd: None (raw), True or a level; digest: None,
    "crc32c" or "sha256"; compression= is the original zTensor package's
    name for zstd=. Non-contiguous tensors raise ValueError, as in
    safetensors (call .contiguous()).

    A filename ending in ".safetensors" gets the safetensors format itself,
    byte for byte what safetensors.torch.save_file writes; any other name
    a .zt file. format="safetensors" or "zt" overrides the name.
    """
    _check_not_shared(tensors)
    _safe.write(tensors, filename, metadata, _to_numpy, zstd if compression is None else compression, digest, format)


def save(tensors: Mapping[str, "torch.Tensor"], metadata: Optional[Dict[str, str]] = None, *, zstd: Zstd = None,
         digest: Digest = None, compression: Zstd = None, format: Optional[str] = None) -> bytes:  # noqa: A002
    """The bytes of a .zt file holding the tensors (as save_file would write it).

        data = save({"a": torch.ones(3)})
        load(data)["a"]    # tensor([1., 1., 1.])

    The bytes are zTensor's; format="safetensors" gives safetensors' own.
    """
    _check_not_shared(tensors)
    data = _safe.write(tensors, None, metadata, _to_numpy, zstd if compression is None else compression, digest,
                       format)
    assert data is not None
    return data


def load_file(filename: PathLike, device: Device = "cpu", *, backend: str = "mmap", verify: bool = False,
              copy: Optional[bool] = True) -> Dict[str, "torch.Tensor"]:
    """Every tensor of a .zt file (any spec version) as writable torch
    tensors on `device`.

        tensors = load_file("model.zt")
        tensors["w"].add_(1)         # the file is not touched

    By default (copy=True) the tensors own their memory: they are read in
    one batched call into one new anonymous buffer (views of it, grouped by
    type and shape), so nothing that later happens to the file (overwritten
    in place by `cp new.zt model.zt`, truncated, deleted) can change them or
    crash the process.

    copy=False is the opt-in for mapped views: raw tensors then sit on the
    library's private copy-on-write mapping of the file, so loading reads
    nothing and an in-place op copies only the pages it touches. The
    hazard: pages not yet written still show the file, so if the file is
    rewritten in place their values change silently, and if it is truncated
    touching them kills the process with SIGBUS. Use it only for files
    nothing will modify while the tensors live (writers that replace files
    atomically, as ztensor's do, are safe). zstd or legacy big-endian data
    is always decoded into a copy. verify=True checks each tensor's digest
    and raises ZTensorError on damage instead of returning bad data.
    Objects that are not dense tensors are refused by name (use
    ztensor.Reader). backend: "mmap" (default) or "pread" (safetensors'
    names: "pread" never maps the file, so copy=False then copies too);
    anything else raises ValueError.
    """
    # Every tensor is read (or touched, mapped) now: the file is read into
    # the page cache in file order from the open on (prefetch).
    with _safe.open_reader(filename, verify=verify, mmap=_safe.reader_mmap(backend), prefetch=True) as r:
        if copy is False and file_is_copy_on_write(r):
            names = _safe.dense_names(r)
            with warnings.catch_warnings():
                # torch warns that the arrays are read-only; the mapping is
                # private copy-on-write, so a write stays in this process.
                warnings.simplefilter("ignore", UserWarning)
                if r._table is not None:
                    return _move(r._mapped(names, _from_numpy), device)
                views = r.mapped_views(names)
                return _move({name: _zero_copy(r, name, views[name], r.element_type(name)) for name in names},
                             device)
        return _move(_safe.read_all(r, _from_numpy, _split), device)


def load(data: Source, device: Device = "cpu", *, verify: bool = False) -> Dict[str, "torch.Tensor"]:
    """The tensors of a .zt file given as bytes (bytes, bytearray, memoryview, mmap).

        tensors = load(open("model.zt", "rb").read())
    """
    with _safe.open_reader(data, verify=verify) as r:
        return _move(_safe.read_all(r, _from_numpy, _split), device)


def save_model(model: "torch.nn.Module", filename: PathLike, metadata: Optional[Dict[str, str]] = None,
               force_contiguous: bool = True, *, zstd: Zstd = None, digest: Digest = None,
               format: Any = None) -> None:  # noqa: A002
    """Saves a model's state_dict; tensors sharing memory (tied weights) are
    stored once, under one name, and the other names recorded in the
    metadata ({dropped name: kept name}) as safetensors does.

        save_model(model, "model.zt")
        load_model(model2, "model.zt")

    force_contiguous (default True, as safetensors): non-contiguous tensors
    are stored as their values; with False they raise ValueError. A
    filename ending in ".safetensors" gets the safetensors format itself.
    """
    state_dict = dict(model.state_dict())
    meta = dict(_safe.check_metadata(metadata) or {})
    for kept, dropped in _remove_duplicate_names(state_dict).items():
        for name in dropped:
            meta.setdefault(name, kept)  # the caller's own entries win
            del state_dict[name]
    if force_contiguous:
        state_dict = {k: v.contiguous() for k, v in state_dict.items()}
    try:
        save_file(state_dict, filename, meta if metadata is not None or meta else None, zstd=zstd, digest=digest, format=format)
    except ValueError as e:
        if isinstance(e, SharedTensorsError):
            raise
        raise ValueError(f"{e} Or use save_model(..., force_contiguous=True), read the docs for potential "
                         "caveats.") from e


def load_model(model: "torch.nn.Module", filename: PathLike, strict: bool = True, device: Device = "cpu", *,
               backend: str = "mmap", verify: bool = False) -> Tuple[List[str], List[str]]:
    """Loads a file saved by save_model (or save_file) into the model; tied
    weights stay tied (names save_model dropped are filled through the tie).
    Returns (missing, unexpected) names; strict=True raises RuntimeError
    listing them instead.

        missing, unexpected = load_model(model, "model.zt", strict=False)
    """
    state_dict = load_file(filename, device=device, backend=backend, verify=verify)
    model_state = model.state_dict()
    to_removes = _remove_duplicate_names(model_state, preferred_names=list(state_dict.keys()))
    result = model.load_state_dict(state_dict, strict=False)
    missing: Set[str] = set(result.missing_keys)
    unexpected: List[str] = list(result.unexpected_keys)
    for group in to_removes.values():
        for name in group:
            if name not in missing:
                unexpected.append(name)
            else:
                missing.remove(name)
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {model.__class__.__name__}:"
        if missing:
            error += "\n    Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(missing))
        if unexpected:
            error += "\n    Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(error)
    return sorted(missing), unexpected


def safe_open(filename: Source, framework: str = "pt", device: Device = "cpu", *, backend: str = "mmap",
              copy: bool = True, verify: bool = False) -> _safe.SafeOpen[Any]:
    """Opens a .zt file lazily: nothing is read until asked for.

        with safe_open("model.zt", framework="pt", device="cpu") as f:
            names = f.keys()                  # sorted
            meta = f.metadata()               # dict[str, str] or None
            w = f.get_tensor("w")             # writable
            s = f.get_slice("w")              # s.get_shape(), s.get_dtype(), s[0:2, ..., ::2]

    framework: "pt" or "torch" ("np"/"numpy" give ztensor.numpy.safe_open's
    arrays, as safetensors' one safe_open does).
    copy=False: zero-copy tensors over the file's private copy-on-write
    mapping (an in-place op changes this process's copy only, never the
    file), or a copy where the data must be decoded or the mapping is not
    private. filename may also be the file's bytes.
    """
    return _frameworks.safe_open(filename, framework, device, backend=backend, copy=copy, verify=verify)
