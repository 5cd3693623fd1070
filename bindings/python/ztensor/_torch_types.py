"""torch tensors to and from the numpy arrays the reading layer works in:
every torch dtype with a zTensor type (bf16 and fp8 through same-size
integers, as numpy has no such types). Core: the reader (read_torch,
read_into) and the torch adapter both use it; importing it imports torch."""

from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import torch

from ._types import Array

Device = Union[str, int, "torch.device"]

# zTensor element type -> torch dtype attribute; the ones this torch lacks
# (fp8 before 2.1, uint16/32/64 before 2.3) are refused by name.
_TORCH_NAMES = {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16", "i64": "int64",
                "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8", "u16": "uint16", "u32": "uint32",
                "u64": "uint64", "bool": "bool", "complex64": "complex64", "complex128": "complex128",
                "f8_e4m3fn": "float8_e4m3fn", "f8_e5m2": "float8_e5m2", "f8_e4m3fnuz": "float8_e4m3fnuz",
                "f8_e5m2fnuz": "float8_e5m2fnuz", "f8_e8m0fnu": "float8_e8m0fnu",
                "f8_e8m0": "float8_e8m0fnu", "f4_e2m1": "float4_e2m1fn_x2"}  # f4_e2m1: uint8 pairs
_TO_TORCH: Dict[str, "torch.dtype"] = {zt: getattr(torch, n) for zt, n in _TORCH_NAMES.items() if hasattr(torch, n)}
# (v2's f8_e8m0 and the packed f4_e2m1 read as torch types, never written from them)
_FROM_TORCH: Dict["torch.dtype", str] = {dt: zt for zt, dt in _TO_TORCH.items() if zt not in ("f8_e8m0", "f4_e2m1")}
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
        raise ValueError(_sparse_message([name]))
    if not value.is_contiguous():
        raise ValueError(f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. It either "
                         "means you are trying to save tensors which are reference of each other in which case it's "
                         "recommended to save only the full tensors, and reslice at load time, or simply call "
                         "`.contiguous()` on your tensor to pack it before saving.")
    if value.device.type == "meta":
        value.to("cpu")  # torch's own NotImplementedError ("Cannot copy out of meta tensor"), as safetensors
        raise NotImplementedError(f"tensor {name!r} is on the meta device: it has no data to save")
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


def _sparse_message(names: List[str]) -> str:
    return (f"You are trying to save a sparse tensors: `{names}` which this library does not support. You can make "
            "it a dense tensor before saving with `.to_dense()` but be aware this might make a much larger file than "
            "needed.")


def _from_numpy(array: Array, zt_type: str, name: str) -> "torch.Tensor":
    dtype = _TO_TORCH.get(zt_type)
    if dtype is None:
        raise TypeError(f"tensor {name!r} is {zt_type}, which this torch ({torch.__version__}) has no dtype for")
    if not array.flags.aligned:
        # A view of a foreign file's misaligned bytes (a stored .npz member):
        # numpy allows it, but a torch tensor has no such flag and its
        # kernels may assume alignment, so torch gets an aligned copy.
        array = np.array(array)
    if zt_type in _NUMPY_NATIVE:
        return torch.from_numpy(array)
    return torch.from_numpy(array.view(_NP_SIGNED_OF_SIZE[array.dtype.itemsize])).view(dtype)


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
