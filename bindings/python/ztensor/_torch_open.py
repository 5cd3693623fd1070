"""safe_open(framework="pt"): the handle giving torch tensors, and its
slices, which follow torch's indexing rules (as safetensors' do, being a
torch tensor over the file's storage)."""

import warnings
from typing import Any, Dict, Optional, Sequence

import numpy as np
import torch

from . import _safe
from ._handle import file_is_copy_on_write
from ._torch_types import Device, _from_numpy, _move, _on, _to_device
from ._types import Array, Source
from .reader import Reader


def _split(block: Array, zt_type: str, name: str) -> Sequence["torch.Tensor"]:
    """The tensors of a (count, *shape) block of one type and shape, for the
    C++ extension's read_dense: one conversion, then one C++ call (unbind)
    making them all, the cheapest way to many torch tensors.

    unbind runs with autograd's dispatch keys (and the view tracking of
    ADInplaceOrView) excluded, so each result is a plain leaf tensor over
    its slice of the block's storage, the one buffer: no autograd view of
    the block (no view metadata to allocate, its own version counter, as
    a tensor loaded alone has), not an inference tensor, requires_grad
    False. About 0.18 us per tensor against 0.27 with the keys (torch 1.13,
    26,214 tensors); nothing is recorded for autograd either way, since
    the block requires no grad."""
    tensor = _from_numpy(block, zt_type, name)
    parts: Sequence["torch.Tensor"]
    if _NO_AUTOGRAD is None:  # a torch without the guard
        parts = tensor.unbind(0)
        return parts
    guard = torch._C.ExcludeDispatchKeyGuard(_NO_AUTOGRAD)  # restored when the guard goes, below
    try:
        parts = tensor.unbind(0)
    finally:
        del guard
    return parts


def _no_autograd_keys() -> Optional["torch._C.DispatchKeySet"]:
    """Autograd's CPU dispatch keys and ADInplaceOrView, for _split."""
    try:
        keys = torch._C.DispatchKeySet
        return keys(torch._C.DispatchKey.AutogradCPU) | keys(torch._C.DispatchKey.ADInplaceOrView)
    except AttributeError:
        return None


_NO_AUTOGRAD = _no_autograd_keys() if hasattr(torch._C, "ExcludeDispatchKeyGuard") else None


def _zero_copy(reader: Reader, name: str, view: Array, zt_type: str) -> "torch.Tensor":
    if view.flags.writeable:  # decoded (zstd, big-endian): already a private copy
        return _from_numpy(view, zt_type, name)
    if not file_is_copy_on_write(reader):
        # The caller's buffer (Reader(bytes)): torch
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
    """safetensors' slice for framework="pt": it indexes a torch tensor over
    the file's bytes, so torch's rules apply (slices clamp to the
    dimension, ints may be negative, None adds a dimension, lists, tensors
    and masks select). Basic indices (ints, slices with a positive step,
    `...`, None) read only their box; the others read the tensor, then
    torch indexes it, raising its own errors."""

    def __init__(self, inner: Any, from_numpy: _safe.FromNumpy, device: Device) -> None:
        super().__init__(inner, from_numpy)
        self._device = _on(device)

    def __getitem__(self, index: Any) -> "torch.Tensor":
        inner = self._inner
        items = index if isinstance(index, tuple) else (index,)
        basic = all(item is None or item is Ellipsis or _is_int(item)
                    or isinstance(item, slice) and (item.step is None or _is_int(item.step) and item.step > 0)
                    for item in items)
        t: Optional["torch.Tensor"] = None
        if basic:
            try:
                box = inner[tuple(item for item in items if item is not None)]
            except (IndexError, TypeError):
                box = None  # torch's own error below
            if box is not None:
                t = _from_numpy(np.asarray(box, order="C"), inner.zt_type, inner.name)
                if any(item is None for item in items):
                    # where the Nones go, among the dimensions the box kept
                    t = t[tuple(None if item is None else Ellipsis if item is Ellipsis else slice(None)
                                for item in items if not _is_int(item))]
        if t is None:
            whole = _from_numpy(inner[...], inner.zt_type, inner.name)
            t = whole[index]
        return _to_device(inner.name, t, self._device)


def _is_int(item: Any) -> bool:
    return isinstance(item, (int, np.integer)) and not isinstance(item, bool)


def safe_open(filename: Source, framework: str = "pt", device: Device = "cpu", *, backend: str = "mmap",
              copy: bool = True, verify: bool = False) -> _safe.SafeOpen[Any]:
    """ztensor.torch.safe_open's handle (see there)."""
    _on(device)  # an invalid device fails here, not at the first tensor
    return _TorchOpen(filename, framework, device, copy, verify, _from_numpy, _zero_copy, backend, split=_split)
