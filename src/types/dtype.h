// The 13 storage dtypes, the logical types layered on them, and element
// counts computed with overflow checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ztensor.h"

namespace zt {

// Short (1.2) name, or nullptr for an unknown dtype.
const char *dtype_name(zt_dtype d);
size_t dtype_size(zt_dtype d);
// Accepts the 1.2 short names only.
zt_dtype dtype_from_short_name(std::string_view name);
// Accepts the 0.1 long names ("float32") and, leniently, the short ones.
zt_dtype dtype_from_legacy_name(std::string_view name);
bool dtype_is_integer(zt_dtype d);

struct LogicalType {
  const char *name;
  zt_dtype storage;  // the dtype it must be stored as
  uint32_t ratio;    // storage elements per logical element
};

// Known logical types; nullptr for an unknown (kept, read as raw elements).
const LogicalType *logical_type_find(std::string_view name);

// Storage elements per logical element for a component: 1 unless a known
// compound logical type says otherwise.
uint32_t logical_ratio(std::string_view logical_type);

// a * b, or nullopt on overflow.
inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The dims of a shape, borrowed from whichever container holds them.
struct ShapeRef {
  const uint64_t *dims;
  size_t ndim;
  ShapeRef(const uint64_t *d, size_t n) : dims(d), ndim(n) {}
  template <typename Dims>
  ShapeRef(const Dims &v) : dims(v.data()), ndim(v.size()) {}  // NOLINT: implicit on purpose
  const uint64_t *begin() const { return dims; }
  const uint64_t *end() const { return dims + ndim; }
};

// Product of the dims (1 for a scalar); nullopt on overflow. A zero dim makes
// the product 0 even if other dims would overflow together.
std::optional<uint64_t> shape_numel(ShapeRef shape);

// numel * ratio * dtype_size, or nullopt on overflow.
std::optional<uint64_t> dense_byte_size(ShapeRef shape, zt_dtype dtype, uint32_t ratio);

}  // namespace zt
