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
from collections import defaultdict
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple, Union

import numpy as np
import torch

from . import _safe
from ._types import Array, PathLike, Source
from .reader import Reader
from .writer import Digest, Zstd

__all__ = ["save_file", "load_file", "save", "load", "save_model", "load_model", "safe_open", "storage_ptr",
           "storage_size"]

Device = Union[str, int, "torch.device"]

# zTensor element type -> torch dtype attribute; the ones this torch lacks
# (fp8 before 2.1, uint16/32/64 before 2.3) are refused by name.
_TORCH_NAMES = {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16", "i64": "int64",
                "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8", "u16": "uint16", "u32": "uint32",
                "u64": "uint64", "bool": "bool", "complex64": "complex64", "complex128": "complex128",
                "f8_e4m3fn": "float8_e4m3fn", "f8_e5m2": "float8_e5m2", "f8_e4m3fnuz": "float8_e4m3fnuz",
                "f8_e5m2fnuz": "float8_e5m2fnuz"}
_TO_TORCH: Dict[str, "torch.dtype"] = {zt: getattr(torch, n) for zt, n in _TORCH_NAMES.items() if hasattr(torch, n)}
_FROM_TORCH: Dict["torch.dtype", str] = {dt: zt for zt, dt in _TO_TORCH.items()}
# Types numpy holds natively go through .numpy(); the others as same-size ints.
_NUMPY_NATIVE = {"f64", "f32", "f16", "i64", "i32", "i16", "i8", "u8", "bool", "complex64", "complex128"}
_SIGNED_OF_SIZE = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_NP_SIGNED_OF_SIZE = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _element_size(dtype: "torch.dtype") -> int:
    return int(torch.empty((), dtype=dtype).element_size())


def _to_numpy(name: str, value: Any) -> Tuple[Array, Optional[str]]:
    if not isinstance(value, torch.Tensor):
        raise ValueError(f"Key `{name}` is invalid, expected torch.Tensor but received {type(value)}")
    if value.layout != torch.strided:
        raise ValueError(f"tensor {name!r} is {value.layout}: save dense tensors (.to_dense()), or sparse ones "
                         "with ztensor.Writer.add_sparse_csr/add_sparse_coo")
    if value.device.type == "meta":
        raise RuntimeError(f"tensor {name!r} is on the meta device: it has no data to save")
    zt = _FROM_TORCH.get(value.dtype)
    if zt is None:
        raise TypeError(f"tensor {name!r}: torch dtype {value.dtype} has no zTensor type")
    t = value.detach()
    if t.device.type != "cpu":
        t = t.to("cpu")
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    t = t.contiguous()
    if zt in _NUMPY_NATIVE:
        return t.numpy(), None
    size = _element_size(t.dtype)
    bits = t.view(_SIGNED_OF_SIZE[size]).numpy()
    return bits.view(np.dtype(f"<u{size}")), zt


def _from_numpy(array: Array, zt_type: str, name: str) -> "torch.Tensor":
    dtype = _TO_TORCH.get(zt_type)
    if dtype is None:
        raise TypeError(f"tensor {name!r} is {zt_type}, which this torch ({torch.__version__}) has no dtype for")
    if zt_type in _NUMPY_NATIVE:
        return torch.from_numpy(array)
    return torch.from_numpy(array.view(_NP_SIGNED_OF_SIZE[array.dtype.itemsize])).view(dtype)


def _split(block: Array, zt_type: str, name: str) -> Tuple["torch.Tensor", ...]:
    """The tensors of a (count, *shape) block of one type and shape, for the
    C++ extension's read_dense: one conversion, then views made by one C++
    call (unbind), the cheapest way to many torch tensors (about 0.5 us each)."""
    return tuple(_from_numpy(block, zt_type, name).unbind(0))


def _on(device: Device) -> "torch.device":
    return device if isinstance(device, torch.device) else torch.device(device)


def _to_device(name: str, t: "torch.Tensor", device: "torch.device") -> "torch.Tensor":
    if device.type == "cpu":
        return t
    try:
        return t.to(device)
    except (RuntimeError, AssertionError) as e:  # torch without CUDA raises AssertionError
        raise RuntimeError(f"tensor {name!r}: cannot move it to device {device}: {e}") from e


def _move(tensors: Dict[str, "torch.Tensor"], device: Device) -> Dict[str, "torch.Tensor"]:
    dev = _on(device)
    if dev.type == "cpu":
        return tensors
    return {name: _to_device(name, t, dev) for name, t in tensors.items()}


# -- shared storage (safetensors' helpers, which transformers and accelerate import) --
def storage_ptr(tensor: "torch.Tensor") -> int:
    """The address of the tensor's storage (0 for meta tensors), as safetensors.torch.storage_ptr."""
    try:
        return int(tensor.untyped_storage().data_ptr())
    except Exception:
        try:
            return int(tensor.storage().data_ptr())
        except NotImplementedError:
            return 0


def storage_size(tensor: "torch.Tensor") -> int:
    """The size of the tensor's storage in bytes, as safetensors.torch.storage_size."""
    try:
        return int(tensor.untyped_storage().nbytes())
    except AttributeError:
        try:
            return int(tensor.storage().size()) * _element_size(tensor.dtype)
        except NotImplementedError:
            return int(tensor.nelement()) * _element_size(tensor.dtype)


def _storage(t: "torch.Tensor") -> Any:
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()


def _end_ptr(tensor: "torch.Tensor") -> int:
    """One past the last byte the tensor's elements reach (safetensors' view(-1)[-1], for strided ones too)."""
    if tensor.nelement():
        span = 1 + sum((int(d) - 1) * abs(int(st)) for d, st in zip(tensor.shape, tensor.stride()))
        return int(tensor.data_ptr()) + int(span) * _element_size(tensor.dtype)
    return int(tensor.data_ptr())


def _filter_shared_not_shared(tensors: List[Set[str]], state_dict: Mapping[str, "torch.Tensor"]) -> List[Set[str]]:
    """Splits each group of one storage into the names whose memory really overlaps."""
    filtered: List[Set[str]] = []
    for shared in tensors:
        if len(shared) < 2:
            filtered.append(shared)
            continue
        areas = sorted((int(state_dict[name].data_ptr()), _end_ptr(state_dict[name]), name) for name in shared)
        _, last_stop, last_name = areas[0]
        filtered.append({last_name})
        for start, stop, name in areas[1:]:
            if start >= last_stop:
                filtered.append({name})
            else:
                filtered[-1].add(name)
            last_stop = stop
    return filtered


def _find_shared_tensors(state_dict: Mapping[str, "torch.Tensor"]) -> List[Set[str]]:
    """safetensors' grouping: every tensor with a storage is in exactly one
    group (a set of names), the names whose memory overlaps; a tensor that
    shares nothing is a group of one."""
    tensors: Dict[Tuple[Any, int, int], Set[str]] = defaultdict(set)
    for k, v in state_dict.items():
        if v.device != torch.device("meta") and storage_ptr(v) != 0 and storage_size(v) != 0:
            tensors[(v.device, storage_ptr(v), storage_size(v))].add(k)
    return _filter_shared_not_shared(list(sorted(tensors.values(), key=sorted)), state_dict)


def _is_complete(t: "torch.Tensor") -> bool:
    """Whether the tensor covers its whole storage (it can stand for every view of it)."""
    return bool(t.data_ptr() == storage_ptr(t) and t.nelement() * _element_size(t.dtype) == storage_size(t))


def _remove_duplicate_names(state_dict: Mapping[str, "torch.Tensor"], *,
                            preferred_names: Optional[Iterable[str]] = None,
                            discard_names: Optional[Iterable[str]] = None) -> Dict[str, List[str]]:
    """{kept name: [names to drop]} for each group of tensors sharing memory,
    as safetensors: the kept one covers the whole storage; among those, the
    first in sorted order not in discard_names, or the first in
    preferred_names."""
    preferred = set(preferred_names or ())
    discard = set(discard_names or ())
    to_remove: Dict[str, List[str]] = defaultdict(list)
    for shared in _find_shared_tensors(state_dict):
        complete = {n for n in shared if _is_complete(state_dict[n])}
        if not complete:
            raise RuntimeError(f"Error while trying to find names to remove to save state dict, but found no "
                               f"suitable name to keep for saving amongst: {shared}. None is covering the entire "
                               "storage. Refusing to save/load the model since you could be storing much more "
                               "memory than needed.")
        keep = sorted(complete)[0]
        kept_over_discard = complete - discard
        if kept_over_discard:
            keep = sorted(kept_over_discard)[0]
        if preferred and preferred & complete:
            keep = sorted(preferred & complete)[0]
        for name in sorted(shared):
            if name != keep:
                to_remove[keep].append(name)
    return to_remove


def _check_not_shared(tensors: Mapping[str, Any]) -> None:
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    groups = [g for g in _find_shared_tensors({k: v for k, v in tensors.items() if isinstance(v, torch.Tensor)
                                               and v.layout == torch.strided}) if len(g) > 1]
    if groups:
        listed = ", ".join("[" + ", ".join(sorted(g)) + "]" for g in sorted(groups, key=sorted))
        raise RuntimeError(f"Some tensors share memory, this will lead to duplicate memory on disk and potential "
                           f"differences when loading them again: {listed}. A potential way to correctly save your "
                           "model is to use `save_model`.")


# -- the safetensors surface ----------------------------------------------------
def save_file(tensors: Mapping[str, "torch.Tensor"], filename: PathLike, metadata: Optional[Dict[str, str]] = None,
              *, zstd: Zstd = None, digest: Digest = None, format: Any = None) -> None:
    """Saves torch tensors as a .zt file, atomically (nothing at `filename`
    until it is complete; an error leaves any previous file as it was).

        save_file({"w": torch.zeros(2, 3), "b": torch.ones(3, dtype=torch.bfloat16)}, "model.zt",
                  metadata={"epoch": "3"})

    Raises RuntimeError, naming them, for tensors that share memory (use
    save_model), ValueError for non-tensors, sparse or meta tensors, and
    TypeError for dtypes without a zTensor type. metadata: None or a dict
    of str to str. zstd: None (raw), True or a level; digest: None,
    "crc32c" or "sha256".
    """
    _check_not_shared(tensors)
    _safe.write(tensors, filename, metadata, _to_numpy, zstd, digest, format)


def save(tensors: Mapping[str, "torch.Tensor"], metadata: Optional[Dict[str, str]] = None, *, zstd: Zstd = None,
         digest: Digest = None) -> bytes:
    """The bytes of a .zt file holding the tensors (as save_file would write it).

        data = save({"a": torch.ones(3)})
        load(data)["a"]    # tensor([1., 1., 1.])
    """
    _check_not_shared(tensors)
    data = _safe.write(tensors, None, metadata, _to_numpy, zstd, digest)
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
    with Reader(filename, verify=verify, mmap=_safe.reader_mmap(backend), prefetch=True) as r:
        if copy is False and _safe.file_is_copy_on_write(r):
            names = _safe.dense_names(r)
            with warnings.catch_warnings():
                # torch warns that the arrays are read-only; the mapping is
                # private copy-on-write, so a write stays in this process.
                warnings.simplefilter("ignore", UserWarning)
                fast = r._mapped_native(names, _from_numpy)
                if fast is not None:
                    return _move(fast, device)
                views = r.mapped_views(names)
                return _move({name: _zero_copy(r, name, views[name], r.element_type(name)) for name in names},
                             device)
        return _move(_safe.read_all(r, _from_numpy, _split), device)


def load(data: Source, device: Device = "cpu", *, verify: bool = False) -> Dict[str, "torch.Tensor"]:
    """The tensors of a .zt file given as bytes (bytes, bytearray, memoryview, mmap).

        tensors = load(open("model.zt", "rb").read())
    """
    with Reader(data, verify=verify) as r:
        return _move(_safe.read_all(r, _from_numpy, _split), device)


def save_model(model: "torch.nn.Module", filename: PathLike, metadata: Optional[Dict[str, str]] = None,
               force_contiguous: bool = False, *, zstd: Zstd = None, digest: Digest = None) -> None:
    """Saves a model's state_dict; tensors sharing memory (tied weights) are
    stored once, under one name, and the other names recorded in the
    metadata ({dropped name: kept name}) as safetensors does.

        save_model(model, "model.zt")
        load_model(model2, "model.zt")

    force_contiguous is accepted for safetensors compatibility: tensors are
    always stored as their (contiguous) values.
    """
    state_dict = dict(model.state_dict())
    meta = dict(_safe.check_metadata(metadata) or {})
    for kept, dropped in _remove_duplicate_names(state_dict).items():
        for name in dropped:
            meta.setdefault(name, kept)  # the caller's own entries win
            del state_dict[name]
    if force_contiguous:
        state_dict = {k: v.contiguous() for k, v in state_dict.items()}
    save_file(state_dict, filename, meta or None, zstd=zstd, digest=digest)


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


def _zero_copy(reader: Reader, name: str, view: Array, zt_type: str) -> "torch.Tensor":
    if view.flags.writeable:  # decoded (zstd, big-endian): already a private copy
        return _from_numpy(view, zt_type, name)
    if not _safe.file_is_copy_on_write(reader):
        # A read-only mapping (older library) or the caller's buffer: torch
        # cannot refuse in-place ops, so it gets a copy.
        return _from_numpy(reader.read_many([name])[name], zt_type, name)
    with warnings.catch_warnings():
        # torch warns that the array is read-only; the mapping is private
        # copy-on-write, so a write stays in this process and never crashes.
        warnings.simplefilter("ignore", UserWarning)
        return _from_numpy(view, zt_type, name)


class _TorchOpen(_safe.SafeOpen["torch.Tensor"]):
    def _place(self, tensors: Dict[str, Any]) -> Dict[str, "torch.Tensor"]:
        return _move(tensors, self.device)

    def get_tensor(self, name: str) -> "torch.Tensor":
        return _to_device(name, super().get_tensor(name), _on(self.device))

    def get_slice(self, name: str) -> "_TorchSlice":
        return _TorchSlice(self._open().get_slice(self._name(name)), _from_numpy, self.device)


class _TorchSlice(_safe.SafeSlice["torch.Tensor"]):
    def __init__(self, inner: Any, from_numpy: _safe.FromNumpy, device: Device) -> None:
        super().__init__(inner, from_numpy)
        self._device = _on(device)

    def __getitem__(self, index: Any) -> "torch.Tensor":
        return _to_device(self._inner.name, super().__getitem__(index), self._device)


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
    if _safe.framework_name(framework) == "numpy":
        return _safe.safe_open(filename, framework, device, backend=backend, copy=copy, verify=verify)
    _on(device)  # an invalid device fails here, not at the first tensor
    return _TorchOpen(filename, framework, device, copy, verify, _from_numpy, _zero_copy, backend, split=_split)
