#include "types/fp8.h"

#include <cmath>
#include <limits>

namespace zt {
namespace {

struct Fp8Layout {
  int exp_bits;
  int man_bits;
  int bias;
  bool has_inf;        // IEEE-style: max exponent is inf (man 0) or NaN
  bool nan_all_ones;   // e4m3fn: only S.1111.111 is NaN
  bool unsigned_zero;  // fnuz: 0x80 is the only NaN, no -0
};

Fp8Layout layout_of(Fp8Format f) {
  switch (f) {
    case Fp8Format::E4M3FN:
      return {4, 3, 7, false, true, false};
    case Fp8Format::E5M2:
      return {5, 2, 15, true, false, false};
    case Fp8Format::E4M3FNUZ:
      return {4, 3, 8, false, false, true};
    case Fp8Format::E5M2FNUZ:
      return {5, 2, 16, false, false, true};
  }
  return {4, 3, 7, false, true, false};
}

float decode(const Fp8Layout &l, uint8_t code) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (l.unsigned_zero && code == 0x80) return nan;
  const bool neg = code & 0x80;
  const int exp_max = (1 << l.exp_bits) - 1;
  const int exp = (code >> l.man_bits) & exp_max;
  const int man = code & ((1 << l.man_bits) - 1);
  if (l.has_inf && exp == exp_max) {
    if (man != 0) return nan;
    return neg ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  if (l.nan_all_ones && exp == exp_max && man == (1 << l.man_bits) - 1) return nan;
  // Subnormals (exp 0) have no implicit leading one and the exponent 1-bias.
  float mag = exp == 0 ? std::ldexp(static_cast<float>(man), 1 - l.bias - l.man_bits)
                       : std::ldexp(static_cast<float>((1 << l.man_bits) | man), exp - l.bias - l.man_bits);
  return neg ? -mag : mag;
}

struct Tables {
  float t[4][256];
  Tables() {
    for (int f = 0; f < 4; ++f) {
      Fp8Layout l = layout_of(static_cast<Fp8Format>(f));
      for (int c = 0; c < 256; ++c) t[f][c] = decode(l, static_cast<uint8_t>(c));
    }
  }
};

const Tables &tables() {
  static const Tables t;
  return t;
}

}  // namespace

bool fp8_format_from_name(std::string_view name, Fp8Format *out) {
  if (name == "f8_e4m3fn")
    *out = Fp8Format::E4M3FN;
  else if (name == "f8_e5m2")
    *out = Fp8Format::E5M2;
  else if (name == "f8_e4m3fnuz")
    *out = Fp8Format::E4M3FNUZ;
  else if (name == "f8_e5m2fnuz")
    *out = Fp8Format::E5M2FNUZ;
  else
    return false;
  return true;
}

float fp8_to_float(Fp8Format format, uint8_t code) {
  return tables().t[static_cast<int>(format)][code];
}

void fp8_to_float_n(Fp8Format format, const uint8_t *src, float *dst, size_t n) {
  const float *t = tables().t[static_cast<int>(format)];
  for (size_t i = 0; i < n; ++i) dst[i] = t[src[i]];
}

}  // namespace zt
