"""Reader.read_into: dense tensors read into destinations the caller owns,
checked before a byte is written.

Every destination is checked first (the name is a dense tensor of the
file, the shape equals the tensor's, the dtype is the tensor's or one it
converts to as np.copyto / torch's Tensor.copy_ would); a failed check
raises (KeyError, ValueError) with every destination untouched. Then one
zt_file_read_many per file reads every tensor at once, in parallel:
straight into destinations of the tensor's own type that are writable,
C-contiguous and in CPU memory, into scratch arrays for the others, which
are then converted into place.

An untyped byte buffer (bytearray, memoryview of bytes, mmap) takes the
tensor's little-endian bytes when its size is exactly theirs: the caller
asked for bytes, not elements.
"""

import ctypes
from ctypes import c_void_p
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

import numpy as np

from ._dtypes import BY_CODE, FP8_TYPES, bf16_to_float32, numpy_dtype, zt_type_name
from ._lib import ZT_OK, ReadRequest, lib, text_field
from ._types import Array

if TYPE_CHECKING:
    from .reader import Reader

Shape = Tuple[int, ...]


class _Plan(NamedTuple):
    name: str
    obj: Optional[int]
    component: int
    zt_type: str
    dtype: "np.dtype[Any]"  # the numpy dtype Reader[name] gives (bit patterns for bf16/fp8)
    shape: Shape
    out: Any  # the caller's destination
    direct: Optional[int]  # its address when the bytes go straight in, else None (scratch, then convert)
    nbytes: int


def _is_torch(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "data_ptr") and hasattr(value, "copy_")


def _torch_dtype(zt_type: str) -> Any:
    from . import _torch_types as zt_torch
    return zt_torch._TO_TORCH.get(zt_type)


def _check_numpy(name: str, zt_type: str, src: "np.dtype[Any]", out: Array) -> bool:
    """ValueError unless out (an ndarray) can take the tensor; True when the
    bytes can go straight in (same dtype, writable, C-contiguous, aligned)."""
    if not out.flags.writeable:
        raise ValueError(f"read_into: the destination of {name!r} is read-only")
    dst = out.dtype
    if dst == src:
        return bool(out.flags.c_contiguous and out.flags.aligned)
    if zt_type == "bf16" and dst.kind in "fc":
        return False  # converted through float32, as the values they are
    if zt_type == "bf16" or zt_type in FP8_TYPES:
        raise ValueError(f"read_into: {name!r} is {zt_type}, which numpy holds as {src} bit patterns; a {dst} "
                         f"destination would get the bit patterns as numbers (use a {src} destination)")
    if not np.can_cast(src, dst, casting="same_kind"):
        raise ValueError(f"read_into: {name!r} is {zt_type} ({src}); np.copyto does not cast it to {dst} "
                         "(same_kind casting)")
    return False


def _check_torch(name: str, zt_type: str, out: Any) -> bool:
    """ValueError unless the torch tensor out can take the tensor; True when
    the bytes can go straight in."""
    dt = _torch_dtype(zt_type)
    if dt is None:
        raise ValueError(f"read_into: {name!r} is {zt_type}, which this torch has no dtype for")
    if out.requires_grad and out.is_leaf:
        raise ValueError(f"read_into: the destination of {name!r} is a leaf tensor that requires grad")
    if dt.is_complex and not out.dtype.is_complex:
        raise ValueError(f"read_into: {name!r} is {zt_type}; a {out.dtype} destination would drop the imaginary part")
    return bool(out.dtype == dt and out.device.type == "cpu" and out.is_contiguous())


def _plan(reader: "Reader", name: str, out: Any) -> _Plan:
    if not isinstance(name, str):
        raise TypeError(f"read_into: tensor names are str, not {type(name).__name__}")
    if name not in reader:
        raise KeyError(name)
    fmt = reader.format_of(name)
    if fmt != "dense":
        raise ValueError(f"read_into reads dense tensors; {name!r} is {fmt or 'of no format'}")
    obj = reader._data_object(name)
    info = reader._c_info(obj)
    shape = tuple(int(info.shape[i]) for i in range(info.ndim))
    index = reader._role_index(obj, "data")
    from ._handle import _component_info, _text
    ci = _component_info(obj, index)
    logical = _text(text_field(ci, "logical_type"))
    zt_type = zt_type_name(ci.dtype, logical)
    dt = numpy_dtype(ci.dtype, logical) if ci.dtype in BY_CODE else np.dtype("u1")
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    if _is_torch(out):
        if tuple(out.shape) != shape:
            raise ValueError(f"read_into: {name!r} has shape {list(shape)}, the destination {list(out.shape)}")
        direct = _check_torch(name, zt_type, out)
        return _Plan(name, obj, index, zt_type, dt, shape, out, out.data_ptr() if direct else None, nbytes)
    if isinstance(out, np.ndarray):
        if out.shape != shape:
            raise ValueError(f"read_into: {name!r} has shape {list(shape)}, the destination {list(out.shape)}")
        direct = _check_numpy(name, zt_type, dt, out)
        return _Plan(name, obj, index, zt_type, dt, shape, out, out.ctypes.data if direct else None, nbytes)
    try:
        view = memoryview(out)
    except TypeError:
        raise TypeError(f"read_into: the destination of {name!r} is a {type(out).__name__}: give a numpy array, "
                        "a torch tensor or a writable byte buffer") from None
    if view.readonly or not view.c_contiguous:
        raise ValueError(f"read_into: the destination of {name!r} must be writable and C-contiguous")
    if view.format not in ("B", "b", "c"):
        return _plan(reader, name, np.asarray(out))  # a typed buffer: its shape and type count
    if view.nbytes != nbytes:
        raise ValueError(f"read_into: {name!r} is {nbytes} bytes, the byte buffer {view.nbytes}")
    address = ctypes.addressof(ctypes.c_char.from_buffer(view)) if view.nbytes else 0
    return _Plan(name, obj, index, zt_type, dt, shape, out, address, nbytes)


def _store(p: _Plan, data: Array) -> None:
    """Converts the tensor read into scratch (data: its numpy array) into p.out."""
    if _is_torch(p.out):
        from . import _torch_types as zt_torch
        p.out.copy_(zt_torch._from_numpy(data, p.zt_type, p.name))
        return
    out = p.out if isinstance(p.out, np.ndarray) else np.asarray(p.out)
    if p.zt_type == "bf16" and out.dtype != p.dtype:
        data = bf16_to_float32(data)
    np.copyto(out, data, casting="unsafe" if p.zt_type == "bf16" else "same_kind")


def read_into(reader: "Reader", targets: Mapping[str, Any]) -> None:
    """Fills targets {name: destination}; see the module's docstring."""
    handle = reader._require_open()
    plans = [_plan(reader, name, out) for name, out in targets.items()]  # every check before any write
    scratch: List[Optional[Array]] = []
    reqs = (ReadRequest * max(len(plans), 1))()
    by_file: Dict[Optional[int], List[int]] = {}
    for i, p in enumerate(plans):
        buf = None if p.direct is not None else np.empty(max(p.nbytes, 1), dtype=np.uint8)
        scratch.append(buf)
        req = reqs[i]
        req.object, req.component = p.obj, p.component
        req.dst = p.direct if buf is None else buf.ctypes.data
        req.dst_capacity = p.nbytes
        req.status = -9
        by_file.setdefault(reader._file_of(p.name, handle), []).append(i)
    for file_ptr, members in by_file.items():
        batch = (ReadRequest * len(members))()
        for k, i in enumerate(members):
            batch[k] = reqs[i]
        lib.zt_file_read_many(c_void_p(file_ptr), batch, len(members))
        for k, i in enumerate(members):
            reqs[i] = batch[k]
    for i, p in enumerate(plans):
        req = reqs[i]
        if req.status == ZT_OK and req.out_size == p.nbytes:
            if scratch[i] is None:
                continue
            data = scratch[i][:p.nbytes].view(p.dtype).reshape(p.shape)  # type: ignore[index]
        else:
            # A declared size other than the shape's, or a failed read: read
            # alone, which raises with its detail (or holds the wrong size).
            data = reader._decoded(p.obj, p.component)
            if data.size != p.nbytes:
                raise ValueError(f"read_into: {p.name!r} decodes to {data.size} bytes, its shape "
                                 f"{list(p.shape)} of {p.zt_type} needs {p.nbytes}")
            data = data.view(p.dtype).reshape(p.shape)
            if p.direct is not None and not _is_torch(p.out) and not isinstance(p.out, np.ndarray):
                memoryview(p.out).cast("B")[:] = data.tobytes()
                continue
        _store(p, data)
    del handle
