#include "composite/parts.h"

#include <cstring>
#include <type_traits>

#include "composite/sparse.h"
#include "types/dtype.h"
#include "util/error.h"

namespace zt {
namespace {

template <typename T>
void widen(const uint8_t *data, size_t n, std::vector<uint64_t> &out, const std::string &ctx, zt_status neg,
           uint64_t first) {
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, data + i * sizeof(T), sizeof(T));
    if constexpr (std::is_signed_v<T>) {
      if (v < 0) fail(neg, ctx + ": entry " + std::to_string(first + i) + " is negative (" + std::to_string(v) + ")");
    }
    out[i] = static_cast<uint64_t>(v);
  }
}

}  // namespace

const Component *find_component(const Object &obj, const std::string &role) {
  for (const auto &c : obj.components)
    if (c.role == role) return &c;
  return nullptr;
}

const Component &require_component(const Object &obj, const std::string &role) {
  const Component *c = find_component(obj, role);
  if (!c) fail(ZT_E_COMPONENT_MISSING, where(obj.name) + ": " + obj.format + " object has no '" + role + "' component");
  return *c;
}

uint64_t element_bytes(const Component &c) {
  return dtype_size(c.dtype) * c.ratio;
}

uint64_t element_count(const Component &c) {
  uint64_t e = element_bytes(c);
  return e ? c.decoded_length / e : 0;
}

uint64_t element_count(const ComponentBytes &reader, const Object &obj, const Component &c) {
  if (c.decoded_known) return element_count(c);
  uint64_t e = element_bytes(c);
  return e ? reader.decoded_size(obj, c) / e : 0;
}

std::vector<uint64_t> index_bytes_to_u64(const uint8_t *data, size_t bytes, zt_dtype dtype, const std::string &ctx,
                                         zt_status negative_status, uint64_t first) {
  if (!dtype_is_integer(dtype))
    fail(ZT_E_INDEX_DTYPE, ctx + ": index component has dtype " + (dtype_name(dtype) ? dtype_name(dtype) : "unknown") +
                               ", not an integer dtype");
  const size_t es = dtype_size(dtype);
  if (bytes % es != 0)
    fail(ZT_E_LENGTH, ctx + ": " + std::to_string(bytes) + " bytes is not a whole number of " + dtype_name(dtype));
  std::vector<uint64_t> out(bytes / es);
  const size_t n = out.size();
  switch (dtype) {
    case ZT_I8:
      widen<int8_t>(data, n, out, ctx, negative_status, first);
      break;
    case ZT_I16:
      widen<int16_t>(data, n, out, ctx, negative_status, first);
      break;
    case ZT_I32:
      widen<int32_t>(data, n, out, ctx, negative_status, first);
      break;
    case ZT_I64:
      widen<int64_t>(data, n, out, ctx, negative_status, first);
      break;
    case ZT_U8:
      widen<uint8_t>(data, n, out, ctx, negative_status, first);
      break;
    case ZT_U16:
      widen<uint16_t>(data, n, out, ctx, negative_status, first);
      break;
    case ZT_U32:
      widen<uint32_t>(data, n, out, ctx, negative_status, first);
      break;
    default:
      widen<uint64_t>(data, n, out, ctx, negative_status, first);
      break;
  }
  return out;
}

bool is_sparse_index(const std::string &format, const std::string &role) {
  return (is_csr_format(format) && (role == "indices" || role == "indptr")) ||
         (is_coo_format(format) && role == "coords");
}

std::vector<uint64_t> read_index_component(const ComponentBytes &reader, const Object &obj, const Component &c,
                                           zt_status negative_status) {
  const std::string ctx = where(obj.name, c.role);
  if (!dtype_is_integer(c.dtype))
    fail(ZT_E_INDEX_DTYPE, ctx + ": index component has dtype " + c.dtype_name + ", not an integer dtype");
  std::vector<uint8_t> bytes = reader.read_vector(obj, c);
  return index_bytes_to_u64(bytes.data(), bytes.size(), c.dtype, ctx, negative_status);
}

}  // namespace zt
