"""Declaring libztensor's C ABI for ctypes, on the library _locate finds."""

import ctypes
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_int, c_int32, c_size_t, c_uint8,
                    c_uint16, c_uint32, c_uint64, c_void_p)
from typing import Any, Dict, Iterable, List, Optional, Tuple, Type, TypeVar

from . import _locate
from ._version import __version__

try:
    from ._build_info import library as _bundled_library  # absent in the source tree
except ImportError:
    _bundled_library = None

_major = None if __version__.startswith("0+") else __version__.split(".")[0]
lib, library_path, library_source = _locate.load(bundled_name=_bundled_library, major=_major)

zt_status = c_int  # enums are int-sized in the C ABI


class OpenOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("access", c_uint32), ("strict", c_uint32), ("threads", c_uint32),
                ("max_manifest_size", c_uint64), ("max_decoded_size", c_uint64),
                ("verify_on_read", c_uint32), ("reserved0", c_uint32), ("prefetch", c_uint32)]


class ReadRequest(Structure):
    _fields_ = [("object", c_void_p), ("component", c_size_t), ("dst", c_void_p), ("dst_capacity", c_size_t),
                ("out_size", c_size_t), ("status", c_int)]


class ObjectTable(Structure):
    """zt_object_table (ABI 1.2); its rows are read with numpy (_table.ROW_DTYPE)."""
    _fields_ = [("count", c_size_t), ("row_size", c_size_t), ("rows", c_void_p), ("names", c_void_p),
                ("names_len", c_size_t), ("dims", c_void_p), ("dims_len", c_size_t)]


IoReadAt = CFUNCTYPE(c_int, c_void_p, c_uint64, c_size_t, c_void_p, POINTER(c_size_t))


class Io(Structure):
    """zt_io (ztensor_io.h): a caller's byte source."""
    _fields_ = [("struct_size", c_uint32), ("user", c_void_p), ("size", c_uint64), ("read_at", IoReadAt),
                ("read_at_v", c_void_p), ("close", c_void_p), ("name", c_char_p)]


class UrlOptions(Structure):
    """zt_url_options (ztensor_io.h)."""
    _fields_ = [("struct_size", c_uint32), ("connect_timeout_ms", c_uint32), ("timeout_ms", c_uint32),
                ("retries", c_uint32), ("max_parallel", c_uint32), ("max_redirects", c_uint32),
                ("allow_any_scheme", c_uint32), ("reserved0", c_uint32), ("cache_bytes", c_uint64),
                ("tail_bytes", c_uint64), ("max_unranged_bytes", c_uint64), ("max_header_bytes", c_uint64),
                ("bearer_token", c_char_p), ("user_agent", c_char_p),
                ("low_speed_bytes", c_uint32), ("low_speed_time_ms", c_uint32), ("deadline_ms", c_uint64),
                ("s3_region", c_char_p), ("s3_endpoint", c_char_p), ("s3_profile", c_char_p),
                ("aws_access_key_id", c_char_p), ("aws_secret_access_key", c_char_p),
                ("aws_session_token", c_char_p), ("s3_addressing", c_uint32), ("s3_unsigned", c_uint32),
                ("rtt_ms", c_uint32), ("max_overfetch_percent", c_uint32), ("link_bytes_per_s", c_uint64),
                ("chunk_bytes", c_uint64)]


class IoStats(Structure):
    _fields_ = [("struct_size", c_uint32), ("reserved0", c_uint32), ("requests", c_uint64), ("bytes", c_uint64),
                ("cache_hits", c_uint64),
                # 1.3 (an older library leaves them 0)
                ("bytes_needed", c_uint64), ("wait_ns", c_uint64)]


class ObjectInfo(Structure):
    _fields_ = [("struct_size", c_uint32), ("name", c_void_p), ("name_len", c_size_t), ("format", c_char_p),
                ("ndim", c_size_t), ("shape", POINTER(c_uint64)), ("component_count", c_size_t),
                ("status", c_int), ("has_attributes", c_uint32),
                # since 1.3.0 (left 0 by older libraries): see text_field()
                ("format_len", c_size_t)]


class ComponentInfo(Structure):
    _fields_ = [("struct_size", c_uint32), ("role", c_char_p), ("dtype", c_int), ("dtype_name", c_char_p),
                ("logical_type", c_char_p), ("ratio", c_uint32), ("encoding", c_int), ("encoding_name", c_char_p),
                ("offset", c_uint64), ("length", c_uint64), ("decoded_length", c_uint64),
                ("has_uncompressed_length", c_uint32), ("big_endian", c_uint32), ("digest", c_char_p),
                ("digest_alg", c_int), ("status", c_int),
                # since 1.3.0 (left 0 by older libraries): see text_field()
                ("role_len", c_size_t), ("dtype_name_len", c_size_t), ("logical_type_len", c_size_t),
                ("encoding_name_len", c_size_t)]


def text_field(struct: Structure, name: str) -> Optional[bytes]:
    """The string field `name` of an info struct, whole: a format, role or
    type name may hold NULs, and ctypes reads a c_char_p field only up to
    the first. Its length is the field `name`_len (0: the string is read up
    to its NUL)."""
    ptr = c_void_p.from_buffer(struct, getattr(type(struct), name).offset).value
    if not ptr:
        return None
    n = getattr(struct, name + "_len")
    return ctypes.string_at(ptr, n) if n else ctypes.string_at(ptr)


class WriterOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("digest", c_uint32), ("encoding", c_uint32), ("zstd_level", c_int32),
                ("threads", c_uint32), ("sync", c_uint32), ("validate", c_uint32), ("verify_before_replace", c_uint32),
                ("format", c_uint32), ("canonical", c_uint32), ("v2_digest", c_uint32), ("reserved_", c_uint32),
                ("alignment", c_uint64)]


class BlobOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("encoding", c_uint32), ("zstd_level", c_int32), ("digest", c_uint32),
                ("logical_type", c_char_p)]


class QuantParams(Structure):
    _fields_ = [("struct_size", c_uint32), ("bits", c_uint32), ("group_size", c_uint64), ("packing", c_char_p),
                ("packed_dtype", c_int), ("packed", c_void_p), ("packed_len", c_size_t), ("scales_dtype", c_int),
                ("scales", c_void_p), ("scales_len", c_size_t), ("zeros_dtype", c_int), ("zeros", c_void_p),
                ("zeros_len", c_size_t)]


class QuantInfo(Structure):
    _fields_ = [("struct_size", c_uint32), ("bits", c_uint32), ("group_size", c_uint64), ("packing", c_char_p),
                ("packing_inferred", c_uint32), ("has_zeros", c_uint32), ("packed_role", c_char_p),
                ("rows", c_uint64), ("cols", c_uint64), ("groups", c_uint64)]


class SparseInfo(Structure):
    _fields_ = [("struct_size", c_uint32), ("is_csr", c_uint32), ("nnz", c_uint64), ("numel", c_uint64),
                ("density", c_double), ("values_dtype", c_int), ("values_logical_type", c_char_p),
                ("values_element_size", c_size_t), ("index_dtype", c_int), ("values_index", c_size_t),
                ("indices_index", c_size_t), ("indptr_index", c_size_t)]


# DLPack (dlpack.h 0.6 layout; unchanged in 1.x for the unversioned struct).
class DLDevice(Structure):
    _fields_ = [("device_type", c_int), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int), ("dtype", DLDataType),
                ("shape", POINTER(ctypes.c_int64)), ("strides", POINTER(ctypes.c_int64)), ("byte_offset", c_uint64)]


class DLManagedTensor(Structure):
    pass


DLDeleter = CFUNCTYPE(None, POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", DLDeleter)]

VerifyCallback = CFUNCTYPE(None, c_void_p, c_char_p, c_char_p, c_int, c_char_p)
# zt_verify_callback_n (1.3): names and roles with their lengths.
VerifyCallbackN = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t, c_void_p, c_size_t, c_int, c_char_p)
WriteCallback = CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t)

_P = c_void_p
_OUT_P = POINTER(c_void_p)
_SIGNATURES = {
    "zt_status_str": (c_char_p, [c_int]),
    "zt_last_error": (c_char_p, []),
    "zt_version_string": (c_char_p, []),
    "zt_redact_url": (c_int, [c_char_p, c_size_t, c_char_p, c_size_t, POINTER(c_size_t)]),
    "zt_free": (None, [c_void_p]),
    "zt_dtype_name": (c_char_p, [c_int]),
    "zt_dtype_size": (c_size_t, [c_int]),
    "zt_dtype_from_name": (c_int, [c_char_p]),
    "zt_open_options_init": (None, [POINTER(OpenOptions)]),
    # ztensor_io.h
    "zt_url_options_init": (None, [POINTER(UrlOptions)]),
    "zt_open_url": (zt_status, [c_char_p, POINTER(UrlOptions), POINTER(OpenOptions), _OUT_P]),
    "zt_io_init": (None, [POINTER(Io)]),
    "zt_open_io": (zt_status, [POINTER(Io), POINTER(OpenOptions), _OUT_P]),
    "zt_io_set_error": (None, [c_char_p]),
    "zt_file_io_stats": (zt_status, [_P, POINTER(IoStats)]),
    "zt_open": (zt_status, [c_char_p, POINTER(OpenOptions), _OUT_P]),
    "zt_open_memory": (zt_status, [c_void_p, c_size_t, POINTER(OpenOptions), _OUT_P]),
    "zt_close": (zt_status, [_P]),
    "zt_file_version": (zt_status, [_P, POINTER(c_char_p)]),
    "zt_file_object_count": (zt_status, [_P, POINTER(c_size_t)]),
    "zt_file_object_at": (zt_status, [_P, c_size_t, _OUT_P]),
    "zt_file_object_by_name": (zt_status, [_P, c_char_p, c_size_t, _OUT_P]),
    "zt_file_attributes_json": (zt_status, [_P, _OUT_P]),
    "zt_file_verify": (zt_status, [_P, c_uint32, VerifyCallback, c_void_p]),
    "zt_object_get_info": (zt_status, [_P, POINTER(ObjectInfo)]),
    "zt_object_error": (zt_status, [_P, POINTER(c_char_p)]),
    "zt_object_attributes_json": (zt_status, [_P, _OUT_P]),
    "zt_object_component": (zt_status, [_P, c_size_t, POINTER(ComponentInfo)]),
    "zt_object_component_index": (zt_status, [_P, c_char_p, POINTER(c_size_t)]),
    "zt_component_read": (zt_status, [_P, c_size_t, c_void_p, c_size_t, POINTER(c_size_t)]),
    "zt_component_view": (zt_status, [_P, c_size_t, _OUT_P, POINTER(c_size_t)]),
    "zt_component_read_range": (zt_status, [_P, c_size_t, c_uint64, c_uint64, c_void_p, c_size_t]),
    "zt_file_read_many": (zt_status, [_P, POINTER(ReadRequest), c_size_t]),
    "zt_object_verify": (zt_status, [_P]),
    "zt_object_to_dlpack": (zt_status, [_P, POINTER(POINTER(DLManagedTensor))]),
    "zt_writer_options_init": (None, [POINTER(WriterOptions)]),
    "zt_writer_create": (zt_status, [c_char_p, POINTER(WriterOptions), _OUT_P]),
    "zt_blob_options_init": (None, [POINTER(BlobOptions)]),
    "zt_writer_set_attributes_json": (zt_status, [_P, c_char_p]),
    "zt_writer_begin_object": (zt_status, [_P, c_char_p, c_size_t, c_char_p, POINTER(c_uint64), c_size_t]),
    "zt_writer_set_object_attributes_json": (zt_status, [_P, c_char_p, c_size_t, c_char_p]),
    "zt_write_blob": (zt_status, [_P, c_char_p, c_size_t, c_char_p, c_int, c_void_p, c_size_t, POINTER(BlobOptions)]),
    "zt_write_blob_begin": (zt_status, [_P, c_char_p, c_size_t, c_char_p, c_int, POINTER(BlobOptions)]),
    "zt_write_blob_append": (zt_status, [_P, c_void_p, c_size_t]),
    "zt_write_blob_end": (zt_status, [_P]),
    "zt_writer_add_dense": (zt_status, [_P, c_char_p, c_size_t, c_int, POINTER(c_uint64), c_size_t, c_void_p,
                                        c_size_t, POINTER(BlobOptions)]),
    "zt_writer_finish": (zt_status, [_P]),
    "zt_writer_copy_object": (zt_status, [_P, _P, c_char_p, c_size_t]),
    "zt_writer_copy_file_fields": (zt_status, [_P, POINTER(c_void_p), c_size_t]),
    "zt_writer_discard": (zt_status, [_P]),
    # ztensor_composite.h
    "zt_writer_add_csr": (zt_status, [_P, c_char_p, c_size_t, c_uint64, c_uint64, c_int, c_void_p, c_uint64,
                                      POINTER(c_uint64), POINTER(c_uint64), POINTER(BlobOptions)]),
    "zt_writer_add_coo": (zt_status, [_P, c_char_p, c_size_t, POINTER(c_uint64), c_size_t, c_int, c_void_p, c_uint64,
                                      POINTER(c_uint64), POINTER(BlobOptions)]),
    "zt_quant_params_init": (None, [POINTER(QuantParams)]),
    "zt_writer_add_quantized_group": (zt_status, [_P, c_char_p, c_size_t, POINTER(c_uint64), c_size_t,
                                                  POINTER(QuantParams), POINTER(BlobOptions)]),
    "zt_object_sparse_info": (zt_status, [_P, POINTER(SparseInfo)]),
    "zt_object_read_index": (zt_status, [_P, c_char_p, POINTER(c_uint64), c_size_t, POINTER(c_size_t)]),
    "zt_object_quant_info": (zt_status, [_P, POINTER(QuantInfo)]),
    "zt_object_dequantize": (zt_status, [_P, POINTER(ctypes.c_float), c_size_t]),
    # ztensor_set.h (1.1.0)
    "zt_open_set": (zt_status, [c_char_p, POINTER(OpenOptions), _OUT_P]),
    "zt_set_close": (zt_status, [_P]),
    "zt_set_object_count": (zt_status, [_P, POINTER(c_size_t)]),
    "zt_set_object_at": (zt_status, [_P, c_size_t, _OUT_P]),
    "zt_set_metadata_json": (zt_status, [_P, _OUT_P]),
    "zt_set_shard_count": (zt_status, [_P, POINTER(c_size_t)]),
    "zt_set_shard_at": (zt_status, [_P, c_size_t, _OUT_P, POINTER(c_char_p)]),
    # 1.1 and 1.2
    "zt_component_read_slice": (zt_status, [_P, c_size_t, c_size_t, POINTER(c_uint64), POINTER(c_uint64),
                                            c_void_p, c_size_t]),
    "zt_component_stream_open": (zt_status, [_P, c_size_t, _OUT_P]),
    "zt_component_stream_read": (zt_status, [_P, c_void_p, c_size_t, POINTER(c_size_t)]),
    "zt_component_stream_close": (zt_status, [_P]),
    "zt_writer_create_memory": (zt_status, [POINTER(WriterOptions), _OUT_P]),
    "zt_writer_create_callbacks": (zt_status, [WriteCallback, c_void_p, POINTER(WriterOptions), _OUT_P]),
    "zt_writer_finish_memory": (zt_status, [_P, POINTER(POINTER(c_uint8)), POINTER(c_size_t)]),
    "zt_file_object_table": (zt_status, [_P, POINTER(POINTER(ObjectTable))]),
    # 1.3: names and roles by length (they may hold NULs)
    "zt_object_component_index_n": (zt_status, [_P, c_char_p, c_size_t, POINTER(c_size_t)]),
    "zt_file_verify_n": (zt_status, [_P, c_uint32, VerifyCallbackN, c_void_p]),
    # 1.3: model identity of zTensor v2 (spec §6.4)
    "zt_file_content_digest": (zt_status, [_P, c_int, c_char_p, c_size_t, POINTER(c_size_t)]),
    "zt_file_canonical": (zt_status, [_P, POINTER(c_uint32), POINTER(c_void_p)]),
    # 1.3: views of foreign data at misaligned addresses (numpy: ALIGNED=False)
    "zt_component_view_unaligned": (zt_status, [_P, c_size_t, _OUT_P, POINTER(c_size_t)]),
}

lib.zt_version_string.restype = c_char_p
lib.zt_version_string.argtypes = []
library_version = str(lib.zt_version_string().decode())
_locate.require_compatible(library_version, __version__, library_path, library_source)

for _name, (_restype, _argtypes) in _SIGNATURES.items():
    try:
        _fn = getattr(lib, _name)
    except AttributeError:
        raise ImportError(f"{library_path} (found via {library_source}) is libztensor {library_version}, which "
                          f"lacks {_name}: this ztensor package ({__version__}) needs libztensor {__version__} "
                          "or newer\n  fix: " + _locate.FIX_HINT) from None
    _fn.restype = _restype
    _fn.argtypes = _argtypes

_present = set(_SIGNATURES)


# Versioned structs (docs/versioning.md) are made by new_struct, which asks
# the library instead of knowing which release added which field. An
# options struct is filled by the library's own *_init: into a scratch
# buffer as large as the library's struct (its struct_size, asked once at
# import), of which the binding keeps the fields it declares, struct_size
# saying so (the library reads no field past it). An out-struct the library
# fills gets the binding's size, and the library writes only what fits.
_INITS: Dict[Any, Any] = {OpenOptions: lib.zt_open_options_init, UrlOptions: lib.zt_url_options_init, Io: lib.zt_io_init,
          WriterOptions: lib.zt_writer_options_init, BlobOptions: lib.zt_blob_options_init,
          QuantParams: lib.zt_quant_params_init}
_SCRATCH_BYTES = 4096  # far above any struct's size; the library's own size is read back from it


def library_struct_size(cls: Any) -> int:
    """The struct_size the library's *_init writes for `cls`: its own struct's size."""
    scratch = ctypes.create_string_buffer(_SCRATCH_BYTES)
    _INITS[cls](ctypes.cast(scratch, POINTER(cls)))
    return int(c_uint32.from_buffer(scratch).value)


_library_sizes = {cls: library_struct_size(cls) for cls in _INITS}
for _cls, _size in _library_sizes.items():
    if _size < ctypes.sizeof(_cls):
        raise ImportError(f"{library_path} (found via {library_source}) is libztensor {library_version}, whose "
                          f"{_cls.__name__} is {_size} bytes where this ztensor package ({__version__}) declares "
                          f"{ctypes.sizeof(_cls)}\n  fix: " + _locate.FIX_HINT)


_S = TypeVar("_S", bound=Structure)


def new_struct(cls: Type[_S]) -> _S:
    """A versioned struct of type `cls`: an options struct with the
    library's defaults, an out-struct zeroed; struct_size is the binding's."""
    size = ctypes.sizeof(cls)
    init = _INITS.get(cls)
    out: _S
    if init is None:
        out = cls()
    else:
        scratch = ctypes.create_string_buffer(max(_library_sizes[cls], size))
        init(ctypes.cast(scratch, POINTER(cls)))
        out = cls.from_buffer_copy(scratch.raw[:size])
    out.struct_size = size
    return out


def has(name: str) -> bool:
    """Whether the loaded library exports `name` (every call this package
    declares is required at import; this answers for newer ones)."""
    return name in _present or hasattr(lib, name)


ZT_OK = 0
ZT_E_BUFFER_TOO_SMALL = -6
ZT_E_NOT_FOUND = -5
ZT_E_NOT_ZERO_COPY = -11


class ZTensorError(RuntimeError):
    """A failed library call: `status` (the zt_status value), `status_name` and the detail message.
    A RuntimeError, as the original zTensor package raises for a corrupt
    file or a finished writer.

        try:
            ztensor.Reader("damaged.zt").verify()
        except ztensor.ZTensorError as e:
            print(e.status_name, e.message)
    """

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.status_name = lib.zt_status_str(status).decode()
        self.message = message
        super().__init__(f"{self.status_name}: {message}")


class ZTensorFileNotFoundError(ZTensorError, FileNotFoundError):
    """A path that does not exist: both a ZTensorError and the
    FileNotFoundError that safetensors (and open()) raise."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(-4, message)
        self.errno = 2  # ENOENT
        self.strerror = "No such file or directory"
        self.filename = path


def check(status: int) -> None:
    """Raises ZTensorError for a failed status; the message is fetched right away, on the calling thread."""
    if status != ZT_OK:
        raise ZTensorError(status, lib.zt_last_error().decode("utf-8", "replace"))


def take_string(ptr: Optional[int]) -> str:
    """Copies a library-allocated NUL-terminated string and frees it."""
    try:
        return ctypes.string_at(ptr).decode("utf-8") if ptr else ""
    finally:
        lib.zt_free(ptr)


def shape_array(shape: Iterable[Any]) -> Tuple["ctypes.Array[c_uint64]", int]:
    shape = [int(d) for d in shape]
    if any(d < 0 for d in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    if any(d >= 1 << 64 for d in shape):  # ctypes would wrap it silently
        raise ValueError(f"a dimension of shape {shape} does not fit in a uint64")
    return (c_uint64 * max(len(shape), 1))(*shape), len(shape)


VerifyFailure = Tuple[Optional[str], Optional[str], int, Optional[str]]


def verify_file(file_ptr: Optional[int], strict: bool, failures: List[VerifyFailure]) -> int:
    """zt_file_verify of one open file: appends (object, role, status,
    message) for each failure and returns the status. Names and roles come
    whole (zt_file_verify_n): they may hold NULs."""
    def text(p: Optional[int], n: int) -> Optional[str]:
        return ctypes.string_at(p, n).decode("utf-8", "surrogateescape") if p is not None else None

    def decode(b: Optional[bytes]) -> Optional[str]:
        return b.decode("utf-8", "surrogateescape") if b is not None else None

    def collect_n(_user: Optional[int], obj: Optional[int], obj_len: int, role: Optional[int], role_len: int,
                  status: int, message: Optional[bytes]) -> None:
        failures.append((text(obj, obj_len), text(role, role_len), status, decode(message)))
    return int(lib.zt_file_verify_n(file_ptr, 1 if strict else 0, VerifyCallbackN(collect_n), None))
