// Status strings, the thread-local error, version and type helpers.
#include <cstdlib>

#include "handles.h"
#include "types/dtype.h"

#define ZT_STR2(x) #x
#define ZT_STR(x) ZT_STR2(x)

namespace zt::capi {
const char *last_error();
}

extern "C" {

ZT_API const char *zt_status_str(zt_status s) {
  switch (s) {
    case ZT_OK:
      return "ok";
    case ZT_E_INVALID_ARG:
      return "invalid argument";
    case ZT_E_MISUSE:
      return "API misuse (closed, finished or foreign handle)";
    case ZT_E_NOMEM:
      return "out of memory";
    case ZT_E_IO:
      return "I/O error";
    case ZT_E_NOT_FOUND:
      return "not found";
    case ZT_E_BUFFER_TOO_SMALL:
      return "buffer too small";
    case ZT_E_UNSUPPORTED:
      return "unsupported";
    case ZT_E_LIMIT:
      return "limit exceeded";
    case ZT_E_INTERNAL:
      return "internal error";
    case ZT_E_EXISTS:
      return "already exists";
    case ZT_E_NOT_ZERO_COPY:
      return "no zero-copy view possible";
    case ZT_E_FORMAT:
      return "not a zTensor file (bad header magic)";
    case ZT_E_FOOTER:
      return "bad footer magic";
    case ZT_E_TRUNCATED:
      return "file truncated";
    case ZT_E_MANIFEST_SIZE:
      return "manifest size larger than the file";
    case ZT_E_MANIFEST_LIMIT:
      return "manifest size over the limit";
    case ZT_E_CBOR:
      return "malformed CBOR manifest";
    case ZT_E_CBOR_DEPTH:
      return "CBOR nesting too deep";
    case ZT_E_DUPLICATE_KEY:
      return "duplicate key in a CBOR map";
    case ZT_E_MANIFEST:
      return "manifest structure invalid";
    case ZT_E_VERSION:
      return "manifest version missing or unsupported";
    case ZT_E_FIELD:
      return "required field missing or of the wrong type";
    case ZT_E_DTYPE:
      return "unknown or mismatched dtype";
    case ZT_E_ENCODING:
      return "unknown encoding";
    case ZT_E_ALIGNMENT:
      return "offset not aligned to 64 bytes";
    case ZT_E_BOUNDS:
      return "blob out of bounds";
    case ZT_E_OVERLAP:
      return "blobs overlap";
    case ZT_E_SHAPE:
      return "shape product overflows";
    case ZT_E_LENGTH:
      return "length does not match the shape";
    case ZT_E_NO_UNCOMPRESSED_LENGTH:
      return "zstd component without uncompressed_length";
    case ZT_E_DECODED_SIZE:
      return "decoded size differs from the declared size";
    case ZT_E_CORRUPT:
      return "corrupt compressed data";
    case ZT_E_DIGEST_MISMATCH:
      return "digest mismatch";
    case ZT_E_DIGEST_FORMAT:
      return "malformed digest";
    case ZT_E_NAME:
      return "name not valid UTF-8";
    case ZT_E_BOOL_VALUE:
      return "bool byte other than 0 or 1";
    case ZT_E_VALUE:
      return "stored value its type or layout forbids";
    case ZT_E_COMPONENT_MISSING:
      return "required component missing";
    case ZT_E_SPARSE_INDPTR:
      return "invalid CSR indptr";
    case ZT_E_SPARSE_INDEX:
      return "sparse index out of range";
    case ZT_E_SPARSE_NNZ:
      return "sparse component sizes disagree with nnz";
    case ZT_E_QUANT_PARAMS:
      return "invalid quantization parameters";
    case ZT_E_QUANT_SIZE:
      return "quantized component sizes inconsistent";
    case ZT_E_WRONG_FORMAT:
      return "object has another format";
    case ZT_E_INDEX_DTYPE:
      return "index component not of an integer dtype";
    case ZT_E_COMPRESS:
      return "compression failed";
    case ZT_E_CHANGED:
      return "the source changed while being read";
    case ZT_STATUS_FORCE32_:
      break;
  }
  return "unknown status";
}

ZT_API const char *zt_last_error(void) {
  return zt::capi::last_error();
}

ZT_API const char *zt_version_string(void) {
  return ZT_STR(ZT_VERSION_MAJOR) "." ZT_STR(ZT_VERSION_MINOR) "." ZT_STR(ZT_VERSION_PATCH);
}

ZT_API void zt_free(void *ptr) {
  std::free(ptr);
}

ZT_API const char *zt_dtype_name(zt_dtype d) {
  return zt::dtype_name(d);
}
ZT_API size_t zt_dtype_size(zt_dtype d) {
  return zt::dtype_size(d);
}
ZT_API zt_dtype zt_dtype_from_name(const char *name) {
  return name ? zt::dtype_from_legacy_name(name) : ZT_DTYPE_UNKNOWN;
}

}  // extern "C"
