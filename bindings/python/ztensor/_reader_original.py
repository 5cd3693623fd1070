"""The original zTensor package's Reader calls (1.x: keys() as a list,
metadata(name), read_numpy/read_torch with lists and copy=, read_tensors,
read_into), as functions that Reader takes as its methods."""

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping

import numpy as np

from ._handle import _component_info, _holding, _WritableView, file_is_copy_on_write
from ._info import _LONG_NAMES, TensorMetadata
from ._types import Array, ObjectValue

if TYPE_CHECKING:
    from .reader import Reader


@_holding
def metadata(self: "Reader", name: str) -> "TensorMetadata":
    """TensorMetadata(name, dtype, shape, format, encoding, offset, size)
    of one object, as the original package gives it (dtype spelled
    "float32", "bfloat16", ...)."""
    info = self.info(name)
    comps = [c for c in info.components if c.role == "data"] or info.components[:1]
    c = comps[0] if comps else None
    zt_type = (c.logical_type or c.dtype) if c is not None else ""
    return TensorMetadata(name=name, dtype=_LONG_NAMES.get(zt_type, zt_type), shape=info.shape,
                          format=info.format, encoding=c.encoding if c is not None else "",
                          offset=c.offset if c is not None else 0, size=c.length if c is not None else 0)

def read_numpy(self: "Reader", name: Any, *, copy: bool = True) -> Any:
    """Dense tensor(s) as numpy arrays (the original package's call):
    a name gives an array, a list of names {name: array} in file order.
    copy=True (default): new arrays this process owns, read in one
    batched call. copy=False: zero-copy, writable arrays of the file's
    private copy-on-write mapping where the data allows (writes stay in
    this process; see load_file for the hazards of mapped views)."""
    names = self._names_arg(name)
    if copy:
        arrays = self.read_many(names)
    else:
        arrays = {n: self._copy_on_write(self[n]) for n in names}
    return arrays[name] if isinstance(name, str) else arrays

def read_torch(self: "Reader", name: Any, *, copy: bool = True, device: Any = "cpu") -> Any:
    """Dense tensor(s) as torch tensors on `device` (the original
    package's call): a name gives a tensor, a list {name: tensor} in
    file order. copy=False: zero-copy, writable (copy-on-write) on the CPU."""
    from . import _torch_types as zt_torch
    names = self._names_arg(name)
    arrays = self.read_numpy(names, copy=copy)
    dev = zt_torch._on(device)
    out = {n: zt_torch._to_device(n, zt_torch._from_numpy(a, self.element_type(n), n), dev)
           for n, a in arrays.items()}
    return out[name] if isinstance(name, str) else out

def _copy_on_write(self: "Reader", array: Array) -> Array:
    """array (a zero-copy view of this reader) made writable: the
    library maps files private and copy-on-write, so writes change this
    process's pages only, never the file. A view of a caller's buffer
    (Reader(bytes)) is copied instead: those bytes are not ours to write."""
    if not isinstance(array, np.ndarray) or array.flags.writeable:
        return array  # decoded: already a private copy (or not an array: a sparse object's tuple)
    if not file_is_copy_on_write(self):
        return np.array(array)
    return np.asarray(_WritableView(array))

def _names_arg(self: "Reader", name: Any) -> List[str]:
    """[name] for a name; a list of names in file order (KeyError for a
    name not in the file); TypeError otherwise."""
    if isinstance(name, str):
        return [name]
    if not isinstance(name, (list, tuple)):
        raise TypeError(f"name must be str or list[str], not {type(name).__name__}")
    for n in name:
        if n not in self:
            raise KeyError(n)
    return sorted(dict.fromkeys(name), key=self._data_offset)

def _data_offset(self: "Reader", name: str) -> int:
    """Where the object's first component starts in the file (the order
    the original package gives lists of tensors in)."""
    obj = self._object(name)
    count = self._c_info(obj).component_count
    return min((int(_component_info(obj, i).offset) for i in range(count)), default=0)

def read_tensors(self: "Reader", names: Iterable[str], *, copy: bool = True) -> Dict[str, ObjectValue]:
    """Several objects at once: dense ones in one batched read, others as reader[name] gives them."""
    names = list(names)
    dense = [n for n in names if self.format_of(n) == "dense"]
    arrays: Dict[str, Any] = dict(self.read_numpy(dense, copy=copy)) if dense else {}
    return {n: arrays[n] if n in arrays else self[n] for n in names}

@_holding
def read_into(self: "Reader", name: Any, out: Any = None) -> Any:
    """Reads dense tensors into destinations the caller owns: numpy
    arrays, torch tensors (any device), or byte buffers of exactly the
    tensor's size. read_into(name, out) returns out; read_into({name:
    out, ...}) fills them all in one parallel read and returns the dict.

    The destination's shape must equal the tensor's; a different dtype
    is converted as np.copyto (same_kind) / Tensor.copy_ would, or
    refused with ValueError. Every destination is checked before any is
    written: a refused call leaves them all untouched."""
    from ._read_into import read_into
    if isinstance(name, Mapping):
        if out is not None:
            raise TypeError("read_into({name: out, ...}) takes no second argument")
        read_into(self, name)
        return name
    if out is None:
        raise TypeError("read_into(name, out): out is required when name is a str")
    read_into(self, {name: out})
    return out
