// fp8 decoding through zt_convert_to_f32: all 256 codes of each of the four
// formats against values computed here from the bit layout (sign, exponent
// field, mantissa, bias) and each format's special-value rules; f16/bf16,
// integers, complex pairs and the error statuses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ztensor_composite.h"

namespace {

struct Format {
  const char *name;
  int exp_bits, man_bits, bias;
  // Special-value rules, as the format definitions state them.
  bool ieee_inf_nan;       // e5m2: exponent all ones = inf (m = 0) / NaN
  bool only_all_ones_nan;  // e4m3fn: S.1111.111 is NaN, no infinities
  bool nan_is_neg_zero;    // fnuz: 0x80 is the one NaN, no -0, no inf
  float max_finite;
};

const Format kFormats[] = {
    {"f8_e4m3fn", 4, 3, 7, false, true, false, 448.0f},
    {"f8_e5m2", 5, 2, 15, true, false, false, 57344.0f},
    {"f8_e4m3fnuz", 4, 3, 8, false, false, true, 240.0f},
    {"f8_e5m2fnuz", 5, 2, 16, false, false, true, 57344.0f},
};

// The value of `code`, from the definition: (-1)^s × 2^(e−bias) × 1.m for
// normal numbers, (-1)^s × 2^(1−bias) × 0.m for e = 0. NaN is returned as
// NaN, infinities as ±inf.
double reference(const Format &f, unsigned code) {
  const unsigned s = code >> 7;
  const unsigned e = (code >> f.man_bits) & ((1u << f.exp_bits) - 1);
  const unsigned m = code & ((1u << f.man_bits) - 1);
  const unsigned e_max = (1u << f.exp_bits) - 1, m_max = (1u << f.man_bits) - 1;
  if (f.nan_is_neg_zero && code == 0x80) return std::nan("");
  if (f.ieee_inf_nan && e == e_max) return m ? std::nan("") : (s ? -INFINITY : INFINITY);
  if (f.only_all_ones_nan && e == e_max && m == m_max) return std::nan("");
  const double frac = static_cast<double>(m) / static_cast<double>(1u << f.man_bits);
  const double mag =
      e == 0 ? std::pow(2.0, 1 - f.bias) * frac : std::pow(2.0, static_cast<int>(e) - f.bias) * (1 + frac);
  return s ? -mag : mag;
}

TEST(Fp8, All256CodesOfEveryFormat) {
  std::vector<uint8_t> codes(256);
  for (int i = 0; i < 256; ++i) codes[i] = static_cast<uint8_t>(i);
  for (const Format &f : kFormats) {
    std::vector<float> out(256);
    ASSERT_EQ(zt_convert_to_f32(ZT_U8, f.name, codes.data(), codes.size(), out.data(), out.size()), ZT_OK)
        << zt_last_error();
    int nans = 0, infs = 0;
    float max_seen = 0;
    for (int c = 0; c < 256; ++c) {
      const double want = reference(f, c);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(out[c])) << f.name << " code " << c;
        ++nans;
        continue;
      }
      EXPECT_EQ(static_cast<double>(out[c]), want) << f.name << " code " << c;
      EXPECT_EQ(std::signbit(out[c]), std::signbit(want)) << f.name << " code " << c << " (sign of zero)";
      if (std::isinf(want))
        ++infs;
      else
        max_seen = std::max(max_seen, std::fabs(out[c]));
    }
    EXPECT_EQ(max_seen, f.max_finite) << f.name;
    // NaN and infinity counts per definition.
    if (std::string(f.name) == "f8_e4m3fn") EXPECT_EQ(nans, 2);
    if (std::string(f.name) == "f8_e5m2") EXPECT_EQ(nans, 6);
    if (f.nan_is_neg_zero) EXPECT_EQ(nans, 1);
    EXPECT_EQ(infs, f.ieee_inf_nan ? 2 : 0) << f.name;
  }
}

TEST(Fp8, AnchorValues) {
  // Hand-checked codes, independent of the formula above.
  struct Case {
    const char *format;
    uint8_t code;
    float value;
  } cases[] = {
      {"f8_e4m3fn", 0x38, 1.0f},
      {"f8_e4m3fn", 0x7E, 448.0f},
      {"f8_e4m3fn", 0x01, 0.001953125f},
      {"f8_e4m3fn", 0xC0, -2.0f},
      {"f8_e5m2", 0x3C, 1.0f},
      {"f8_e5m2", 0x7B, 57344.0f},
      {"f8_e5m2", 0x01, 1.52587890625e-05f},
      {"f8_e4m3fnuz", 0x40, 1.0f},
      {"f8_e4m3fnuz", 0x7F, 240.0f},
      {"f8_e4m3fnuz", 0xFF, -240.0f},
      {"f8_e5m2fnuz", 0x40, 1.0f},
      {"f8_e5m2fnuz", 0x7F, 57344.0f},
      {"f8_e5m2fnuz", 0x01, 7.62939453125e-06f},
  };
  for (const auto &c : cases) {
    float out = 0;
    ASSERT_EQ(zt_convert_to_f32(ZT_U8, c.format, &c.code, 1, &out, 1), ZT_OK);
    EXPECT_EQ(out, c.value) << c.format << " 0x" << std::hex << int(c.code);
  }
  float out = 0;
  const uint8_t neg_zero = 0x80;
  ASSERT_EQ(zt_convert_to_f32(ZT_U8, "f8_e4m3fn", &neg_zero, 1, &out, 1), ZT_OK);
  EXPECT_TRUE(out == 0 && std::signbit(out));
  ASSERT_EQ(zt_convert_to_f32(ZT_U8, "f8_e5m2fnuz", &neg_zero, 1, &out, 1), ZT_OK);
  EXPECT_TRUE(std::isnan(out));
}

TEST(ConvertToF32, HalfBfloatIntegersBool) {
  const uint16_t halves[] = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x7C00, 0x8000};
  float out[6];
  ASSERT_EQ(zt_convert_to_f32(ZT_F16, nullptr, halves, sizeof halves, out, 6), ZT_OK);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], 65504.0f);
  EXPECT_EQ(out[3], std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(out[4]));
  EXPECT_TRUE(out[5] == 0 && std::signbit(out[5]));
  const uint16_t bf[] = {0x3F80, 0xC0A0, 0x7FC0};
  ASSERT_EQ(zt_convert_to_f32(ZT_BF16, "", bf, sizeof bf, out, 3), ZT_OK);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -5.0f);
  EXPECT_TRUE(std::isnan(out[2]));
  const int16_t ints[] = {-32768, 7};
  ASSERT_EQ(zt_convert_to_f32(ZT_I16, nullptr, ints, sizeof ints, out, 2), ZT_OK);
  EXPECT_EQ(out[0], -32768.0f);
  EXPECT_EQ(out[1], 7.0f);
  const uint64_t big = (uint64_t{1} << 40) + 1;
  ASSERT_EQ(zt_convert_to_f32(ZT_U64, nullptr, &big, 8, out, 1), ZT_OK);
  EXPECT_EQ(out[0], std::ldexp(1.0f, 40));
  const uint8_t bools[] = {0, 1};
  ASSERT_EQ(zt_convert_to_f32(ZT_BOOL, nullptr, bools, 2, out, 2), ZT_OK);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 1.0f);
}

TEST(ConvertToF32, ComplexComesOutAsInterleavedPairs) {
  const float c64[] = {1.5f, -2.0f, 0.25f, 8.0f};  // 2 complex64 numbers
  float out[4];
  ASSERT_EQ(zt_convert_to_f32(ZT_F32, "complex64", c64, sizeof c64, out, 4), ZT_OK);
  EXPECT_EQ(std::memcmp(out, c64, sizeof c64), 0);
  const double c128[] = {0.1, 3.0};
  ASSERT_EQ(zt_convert_to_f32(ZT_F64, "complex128", c128, sizeof c128, out, 2), ZT_OK);
  EXPECT_EQ(out[0], 0.1f);
  EXPECT_EQ(out[1], 3.0f);
}

TEST(ConvertToF32, Errors) {
  const uint8_t b[3] = {1, 2, 3};
  float out[4];
  EXPECT_EQ(zt_convert_to_f32(ZT_U8, "f8_e4m3fn", b, 3, out, 2), ZT_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(zt_convert_to_f32(ZT_U16, nullptr, b, 3, out, 4), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_convert_to_f32(ZT_U8, "u4", b, 3, out, 4), ZT_E_UNSUPPORTED);
  EXPECT_EQ(zt_convert_to_f32(ZT_I8, "f8_e5m2", b, 3, out, 4), ZT_E_DTYPE);
  EXPECT_EQ(zt_convert_to_f32(ZT_F64, "complex64", b, 0, out, 4), ZT_E_DTYPE);
  EXPECT_EQ(zt_convert_to_f32(ZT_DTYPE_UNKNOWN, nullptr, b, 3, out, 4), ZT_E_INVALID_ARG);
  EXPECT_NE(std::string(zt_last_error()), "");
}

}  // namespace
