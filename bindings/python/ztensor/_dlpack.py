"""DLPack capsules for zt_object_to_dlpack, made with ctypes.pythonapi.

A capsule is named "dltensor" until a consumer (numpy.from_dlpack,
torch.from_dlpack, ...) takes it and renames it "used_dltensor"; from then on
the consumer calls the tensor's deleter. A capsule nobody consumed calls the
deleter itself when it is destroyed.
"""

import ctypes
from ctypes import CFUNCTYPE, POINTER, c_char_p, c_int, c_void_p
from typing import Optional

from ._lib import DLManagedTensor, check, lib

_NAME = b"dltensor"  # module-lifetime bytes: the capsule keeps a pointer to them

_Destructor = CFUNCTYPE(None, c_void_p)
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [c_void_p, c_char_p, _Destructor]
# Raw PyObject* arguments: the destructor runs while the capsule is being
# freed, so it must not take a new reference to it.
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = c_int
_capsule_is_valid.argtypes = [c_void_p, c_char_p]
_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
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
