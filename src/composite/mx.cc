#include "composite/mx.h"

#include <cmath>
#include <limits>
#include <vector>

#include "composite/component_bytes.h"
#include "composite/parts.h"
#include "types/fp8.h"
#include "util/error.h"
#include "v2/layout_profiles.h"

namespace zt {
namespace {

enum class MxElement { Fp4, E4m3, E5m2, Int8 };

MxElement element_of(const Object &obj, const Component &data) {
  if (!data.has_type && data.dtype == ZT_I8) return MxElement::Int8;
  if (data.has_type && data.logical_type == "f4_e2m1") return MxElement::Fp4;
  if (data.has_type && data.logical_type == "f8_e4m3fn") return MxElement::E4m3;
  if (data.has_type && data.logical_type == "f8_e5m2") return MxElement::E5m2;
  // The validator refused anything else at open; kept for a caller's model.
  fail(ZT_E_UNSUPPORTED, where(obj.name, "data") + ": not an MX element type");
}

}  // namespace

bool is_mx(const Object &obj) {
  return obj.format == "zt.mx/1";
}

float e8m0_to_float(uint8_t e) {
  if (e == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(e) - 127);  // 2^-127 is an f32 subnormal: exact
}

float fp4_e2m1_to_float(uint8_t code) {
  static const float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float m = kMagnitude[code & 7];
  return code & 8 ? -m : m;
}

uint64_t describe_mx(const Object &obj) {
  if (!is_mx(obj)) fail(ZT_E_WRONG_FORMAT, where(obj.name) + ": format is '" + obj.format + "', not zt.mx/1");
  if (obj.status != ZT_OK) fail(obj.status, obj.error);
  const v2::MxParams p = v2::mx_params(obj, "");
  if (obj.shape.empty() || p.axis + 1 != obj.shape.size())
    fail(ZT_E_UNSUPPORTED, where(obj.name) +
                               ": zt.mx/1 with blocks along an axis other than the last is not one this library "
                               "dequantizes (its parts read as stored)");
  element_of(obj, require_component(obj, "data"));
  require_component(obj, "scales");
  return obj.numel;  // the sizes were checked at open
}

void dequantize_mx(const ComponentBytes &reader, const Object &obj, float *dst) {
  const uint64_t n = describe_mx(obj);
  const v2::MxParams p = v2::mx_params(obj, "");
  const Component &dc = require_component(obj, "data");
  const MxElement kind = element_of(obj, dc);
  const std::vector<uint8_t> data = reader.read_vector(obj, dc);
  const std::vector<uint8_t> scales = reader.read_vector(obj, require_component(obj, "scales"));
  switch (kind) {
    case MxElement::Fp4:
      for (uint64_t i = 0; i < n; ++i) dst[i] = fp4_e2m1_to_float(data[i / 2] >> (4 * (i & 1)));
      break;
    case MxElement::E4m3:
      fp8_to_float_n(Fp8Format::E4M3FN, data.data(), dst, n);
      break;
    case MxElement::E5m2:
      fp8_to_float_n(Fp8Format::E5M2, data.data(), dst, n);
      break;
    case MxElement::Int8:
      for (uint64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(static_cast<int8_t>(data[i])) * (1.0f / 64);
      break;
  }
  // The scale last: a power of two, so each product is exact unless it
  // leaves the f32 range.
  for (uint64_t b = 0, blocks = n / p.block_size; b < blocks; ++b) {
    const float s = e8m0_to_float(scales[b]);
    float *q = dst + b * p.block_size;
    for (uint64_t i = 0; i < p.block_size; ++i) q[i] *= s;
  }
}

}  // namespace zt
