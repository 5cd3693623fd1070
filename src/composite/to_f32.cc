#include "composite/to_f32.h"

#include <cstring>
#include <string>

#include "types/dtype.h"
#include "types/fp8.h"
#include "types/half.h"
#include "util/error.h"

namespace zt {
namespace {

template <typename T>
void cast_all(const uint8_t *src, size_t count, float *dst) {
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    dst[i] = static_cast<float>(v);
  }
}

template <typename T, typename F>
void decode_all(const uint8_t *src, size_t count, float *dst, F &&fn) {
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    dst[i] = fn(v);
  }
}

}  // namespace

void elements_to_f32(zt_dtype dtype, std::string_view logical_type, const uint8_t *src, size_t count, float *dst) {
  if (!logical_type.empty()) {
    const LogicalType *lt = logical_type_find(logical_type);
    if (!lt) fail(ZT_E_UNSUPPORTED, "logical type '" + std::string(logical_type) + "' has no known f32 conversion");
    if (lt->storage != dtype)
      fail(ZT_E_DTYPE, "logical type '" + std::string(logical_type) + "' is stored as " + dtype_name(lt->storage) +
                           ", not " + (dtype_name(dtype) ? dtype_name(dtype) : "an unknown dtype"));
    Fp8Format f;
    if (fp8_format_from_name(logical_type, &f)) {
      fp8_to_float_n(f, src, dst, count);
      return;
    }
    // complex64/complex128: the storage elements are the interleaved parts.
  }
  switch (dtype) {
    case ZT_F64:
      return cast_all<double>(src, count, dst);
    case ZT_F32:
      return cast_all<float>(src, count, dst);
    case ZT_F16:
      return decode_all<uint16_t>(src, count, dst, half_to_float);
    case ZT_BF16:
      return decode_all<uint16_t>(src, count, dst, bf16_to_float);
    case ZT_I64:
      return cast_all<int64_t>(src, count, dst);
    case ZT_I32:
      return cast_all<int32_t>(src, count, dst);
    case ZT_I16:
      return cast_all<int16_t>(src, count, dst);
    case ZT_I8:
      return cast_all<int8_t>(src, count, dst);
    case ZT_U64:
      return cast_all<uint64_t>(src, count, dst);
    case ZT_U32:
      return cast_all<uint32_t>(src, count, dst);
    case ZT_U16:
      return cast_all<uint16_t>(src, count, dst);
    case ZT_U8:
      return cast_all<uint8_t>(src, count, dst);
    case ZT_BOOL:
      return decode_all<uint8_t>(src, count, dst, [](uint8_t b) { return b ? 1.0f : 0.0f; });
    default:
      fail(ZT_E_UNSUPPORTED, "dtype " + std::to_string(static_cast<int>(dtype)) + " has no f32 conversion");
  }
}

}  // namespace zt
