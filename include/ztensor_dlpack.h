/*
 * ztensor_dlpack.h — dense objects of a zTensor file as DLPack tensors.
 *
 * Needs <dlpack/dlpack.h> (Debian: libdlpack-dev). The tensor is on the CPU
 * (kDLCPU, device_id 0), with strides = NULL (compact row-major) and
 * byte_offset = 0.
 *
 * Zero-copy or owned:
 *  - A raw component stored in the host's byte order (little-endian, or any
 *    1-byte dtype on a big-endian host) of a file opened with ZT_ACCESS_MMAP (or
 *    with zt_open_memory) is handed out zero-copy: dl_tensor.data points into
 *    the mapping. Such data is READ-ONLY: writing through it is undefined (the
 *    mapping is PROT_READ). DLPack headers before 1.0 have no read-only flag,
 *    so this contract is stated here. The tensor keeps the mapping alive:
 *    zt_close() may be called before or after the deleter, in any order. For
 *    zt_open_memory, the caller's buffer must stay valid until both zt_close()
 *    and every deleter have run.
 *  - Anything else (zstd, data in the other byte order, ZT_ACCESS_PREAD) is decoded
 *    into a buffer the tensor owns, freed by the deleter (writable).
 *
 * dtype mapping (DLDataType code, bits, lanes = 1):
 *   f16/f32/f64 → kDLFloat 16/32/64     bf16 → kDLBfloat 16
 *   i8..i64     → kDLInt 8..64          u8..u64 → kDLUInt 8..64
 *   bool        → kDLBool 8 where the header defines it (DLPack >= 0.8);
 *                 with older headers kDLUInt 8 holding 0/1
 *   logical complex64 / complex128 → kDLComplex 64 / 128, the object's shape
 *   logical f8_* (fp8)  → kDLUInt 8: DLPack has no fp8 code; the bytes are the
 *                 fp8 encodings — reinterpret them on the consumer side
 *   other unknown logical types → the storage dtype, when one storage element
 *                 is one logical element.
 */
#ifndef ZTENSOR_DLPACK_H
#define ZTENSOR_DLPACK_H

#include <dlpack/dlpack.h>

#include "ztensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exports the "data" component of a dense object as a DLManagedTensor.
 * On success *out is owned by the caller, who hands it to a consumer or
 * calls (*out)->deleter(*out) exactly once. On failure *out is NULL.
 * Errors: ZT_E_WRONG_FORMAT (not dense), ZT_E_COMPONENT_MISSING (no "data"),
 * ZT_E_UNSUPPORTED (dtype without a DLPack code, or a packed sub-byte
 * logical type such as f4_e2m1 or safetensors' F6, whose bytes are fewer
 * than shape × one element: since 1.3.0), ZT_E_LIMIT (a dimension
 * beyond INT64_MAX), the object's own status if it is damaged, and any error
 * of a read (decoding, ZT_E_NOMEM). */
ZT_API zt_status zt_object_to_dlpack(const zt_object *obj, DLManagedTensor **out);

#ifdef __cplusplus
}
#endif

#endif /* ZTENSOR_DLPACK_H */
