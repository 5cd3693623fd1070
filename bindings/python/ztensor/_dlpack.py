"""DLPack capsules for zt_object_to_dlpack, made with ctypes.pythonapi.

A capsule is named "dltensor" until a consumer (numpy.from_dlpack,
torch.from_dlpack, ...) takes it and renames it "used_dltensor"; from then on
the consumer calls the tensor's deleter. A capsule nobody consumed calls the
deleter itself when it is destroyed.
"""

import ctypes
from ctypes import CFUNCTYPE, POINTER, c_char_p, c_int, c_void_p
from typing import Any, Dict, Optional, Tuple

from ._lib import DLDataType, DLDeleter, DLDevice, DLManagedTensor, DLTensor, check, lib
from ._types import Array

_NAME = b"dltensor"  # module-lifetime bytes: the capsule keeps a pointer to them

_Destructor = CFUNCTYPE(None, c_void_p)


def _private(name: str) -> Any:
    """A function object of the Python C API that is ours alone: attributes of
    ctypes.pythonapi are shared, and other code (a consumer's test reading a
    capsule) setting their argtypes would change how our calls convert."""
    return ctypes.pythonapi._FuncPtr((name, ctypes.pythonapi))


_capsule_new = _private("PyCapsule_New")
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [c_void_p, c_char_p, _Destructor]
# Raw PyObject* arguments: the destructor runs while the capsule is being
# freed, so it must not take a new reference to it.
_capsule_is_valid = _private("PyCapsule_IsValid")
_capsule_is_valid.restype = c_int
_capsule_is_valid.argtypes = [c_void_p, c_char_p]
_capsule_get_pointer = _private("PyCapsule_GetPointer")
_capsule_get_pointer.restype = c_void_p
_capsule_get_pointer.argtypes = [c_void_p, c_char_p]


def _release(capsule: int) -> None:
    if _capsule_is_valid(capsule, _NAME):
        managed = ctypes.cast(_capsule_get_pointer(capsule, _NAME), POINTER(DLManagedTensor))
        managed.contents.deleter(managed)


_release_unconsumed = _Destructor(_release)  # module-lifetime: capsules keep a pointer to it


def capsule_of(obj_ptr: Optional[int]) -> object:
    """A new "dltensor" capsule for the dense object at obj_ptr (a zt_object *)."""
    managed = POINTER(DLManagedTensor)()
    check(lib.zt_object_to_dlpack(obj_ptr, ctypes.byref(managed)))
    try:
        return _capsule_new(ctypes.cast(managed, c_void_p), _NAME, _release_unconsumed)
    except BaseException:
        managed.contents.deleter(managed)
        raise


# Capsules over private copies: the managed tensor, its shape array and the
# numpy buffer stay here until the consumer calls the deleter.
_owned: Dict[int, Tuple[object, ...]] = {}


def _delete_owned(managed: "ctypes._Pointer[DLManagedTensor]") -> None:
    _owned.pop(ctypes.addressof(managed.contents), None)


_delete_owned_c = DLDeleter(_delete_owned)  # module-lifetime, like _release_unconsumed


_DL_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}  # DLDataTypeCode by numpy kind


def _type_of(obj_ptr: Optional[int], data: Array) -> Tuple[int, "ctypes.Array[ctypes.c_int64]", DLDataType]:
    """(ndim, shape, dtype) for a capsule over data: as the library types the
    dense object obj_ptr, or (obj_ptr None) as numpy types data."""
    if obj_ptr is None:
        shape = (ctypes.c_int64 * max(data.ndim, 1))(*data.shape)
        return data.ndim, shape, DLDataType(_DL_CODES[data.dtype.kind], data.dtype.itemsize * 8, 1)
    lib_managed = POINTER(DLManagedTensor)()
    check(lib.zt_object_to_dlpack(obj_ptr, ctypes.byref(lib_managed)))
    try:
        src = lib_managed.contents.dl_tensor
        ndim = src.ndim
        shape = (ctypes.c_int64 * max(ndim, 1))(*[src.shape[i] for i in range(ndim)])
        return ndim, shape, DLDataType(src.dtype.code, src.dtype.bits, src.dtype.lanes)
    finally:
        lib_managed.contents.deleter(lib_managed)


_DL_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}  # DLDataTypeCode by numpy kind


def check_cpu_request(stream: Optional[int], dl_device: Optional[Tuple[int, int]]) -> None:
    """What a __dlpack__ call may ask of a tensor on the CPU: no stream
    (ValueError) and no other device (BufferError), as DLPack 1.0 says."""
    if stream is not None and stream != -1:
        raise ValueError("ztensor tensors live on the CPU; no stream applies")
    if dl_device is not None and tuple(dl_device) != (1, 0):
        raise BufferError(f"ztensor tensors live on the CPU, not on device {dl_device}")


def capsule_of_copy(obj_ptr: Optional[int], data: Array) -> object:
    """A "dltensor" capsule over `data` (a private, C-contiguous copy of the
    object's decoded bytes), typed as the library types the object (a dense
    one; obj_ptr None: as numpy types `data`, of its shape): the consumer
    may write to it freely and owns it until its deleter runs."""
    return _publish(DLManagedTensor(), obj_ptr, data, _delete_owned_c, _NAME, _release_unconsumed)


def _publish(managed: Any, obj_ptr: Optional[int], data: Array, deleter: Any, name: bytes, destructor: Any) -> object:
    """Points `managed` (a DLManagedTensor or its versioned form) at data,
    typed as _type_of says, keeps managed, its shape and data alive until
    the consumer's deleter runs, and wraps it in a capsule called `name`."""
    ndim, shape, dtype = _type_of(obj_ptr, data)
    t = managed.dl_tensor
    t.data = data.ctypes.data
    t.device = DLDevice(1, 0)
    t.ndim, t.dtype, t.shape, t.strides, t.byte_offset = ndim, dtype, shape, None, 0
    managed.manager_ctx, managed.deleter = None, deleter
    key = ctypes.addressof(managed)
    _owned[key] = (managed, shape, data)
    try:
        return _capsule_new(key, name, destructor)
    except BaseException:
        _owned.pop(key, None)
        raise


# DLPack >= 1.0: the versioned struct, which can say read-only.
class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DLVersionedDeleter = CFUNCTYPE(None, POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p),
                                     ("deleter", DLVersionedDeleter), ("flags", ctypes.c_uint64),
                                     ("dl_tensor", DLTensor)]
FLAG_READ_ONLY, FLAG_IS_COPIED = 1, 2
_VERSIONED_NAME = b"dltensor_versioned"


def _delete_versioned(managed: "ctypes._Pointer[DLManagedTensorVersioned]") -> None:
    _owned.pop(ctypes.addressof(managed.contents), None)


_delete_versioned_c = DLVersionedDeleter(_delete_versioned)


def _release_versioned(capsule: int) -> None:
    if _capsule_is_valid(capsule, _VERSIONED_NAME):
        managed = ctypes.cast(_capsule_get_pointer(capsule, _VERSIONED_NAME), POINTER(DLManagedTensorVersioned))
        managed.contents.deleter(managed)


_release_versioned_c = _Destructor(_release_versioned)


def versioned_capsule(obj_ptr: Optional[int], data: Array, read_only: bool, copied: bool) -> object:
    """A "dltensor_versioned" capsule (DLPack 1.0) over data (kept alive
    until the consumer's deleter runs), flagged read-only when the consumer
    must not write (a view of the file's mapping)."""
    managed = DLManagedTensorVersioned()
    managed.version = DLPackVersion(1, 0)
    managed.flags = (FLAG_READ_ONLY if read_only else 0) | (FLAG_IS_COPIED if copied else 0)
    return _publish(managed, obj_ptr, data, _delete_versioned_c, _VERSIONED_NAME, _release_versioned_c)
