"""Tensors that share memory (tied weights): safetensors' helpers, which
transformers and accelerate import from safetensors.torch (ztensor.torch
re-exports them), and save_file's refusal of shared tensors."""

from collections import defaultdict
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple

import torch

from ._torch_types import _element_size, _sparse_message

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
    # safetensors sorts the sets themselves: `<` on sets is the subset test,
    # so groups of one storage each keep their order of first appearance.
    return _filter_shared_not_shared(list(sorted(tensors.values())), state_dict)


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


class SharedTensorsError(RuntimeError, ValueError):
    """Tensors sharing memory, refused by save_file/save: safetensors raises
    RuntimeError, the original zTensor package ValueError; this is both."""


def _check_not_shared(tensors: Mapping[str, Any]) -> None:
    """safetensors' _evaluate_tensors_for_save: a dict of tensors, none
    sparse (all named at once), none sharing memory with another."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    sparse = []
    for k, v in tensors.items():
        if not isinstance(v, torch.Tensor):
            raise ValueError(f"Key `{k}` is invalid, expected torch.Tensor but received {type(v)}")
        if v.layout != torch.strided:
            sparse.append(k)
    if sparse:
        raise ValueError(_sparse_message(sparse))
    failing = [names for names in _find_shared_tensors(tensors) if len(names) > 1]
    if failing:
        raise SharedTensorsError(f"""
            Some tensors share memory, this will lead to duplicate memory on disk and potential differences when loading them again: {failing}.
            A potential way to correctly save your model is to use `save_model`.
            More information at https://huggingface.co/docs/safetensors/torch_shared_tensors
            """)
