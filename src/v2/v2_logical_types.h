// The logical types of v2 spec Appendix A, as the writer needs them: the
// storage dtype each requires and its size function (decoded bytes for n
// logical elements).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace zt::v2 {

struct LogicalTypeV2 {
  const char *name;
  const char *dtype;  // v2 storage dtype name
  unsigned kind;      // 0: n × width, 1: 2n × width (complex), 2: ⌈n/2⌉ (packed nibbles)
  unsigned width;
  std::optional<uint64_t> size(uint64_t n) const {
    if (kind == 2) return n / 2 + (n & 1);
    uint64_t r;
    if (__builtin_mul_overflow(n, uint64_t{width} * (kind == 1 ? 2 : 1), &r)) return std::nullopt;
    return r;
  }
};

inline const LogicalTypeV2 *logical_type_v2(std::string_view name) {
  static const LogicalTypeV2 kTypes[] = {
      {"bool", "u8", 0, 1},        {"f8_e4m3fn", "u8", 0, 1},   {"f8_e5m2", "u8", 0, 1},
      {"f8_e4m3fnuz", "u8", 0, 1}, {"f8_e5m2fnuz", "u8", 0, 1}, {"f8_e8m0", "u8", 0, 1},
      {"f4_e2m1", "u8", 2, 1},     {"complex64", "f32", 1, 4},  {"complex128", "f64", 1, 8},
  };
  for (const auto &t : kTypes)
    if (name == t.name) return &t;
  return nullptr;
}

}  // namespace zt::v2
