// zt.mx/1 dequantized through the composite API (zt_object_dequantize;
// src/composite/mx.h). Expected values are worked out by hand from the OCP
// Microscaling Formats specification v1.0: a block's scale byte e is
// 2^(e - 127) (0xFF NaN); FP4 E2M1 codes are ±{0, 0.5, 1, 1.5, 2, 3, 4, 6},
// two to a byte, low nibble first; FP8 as E4M3 (bias 7) and E5M2 (bias 15);
// INT8 is two's complement times 2^-6.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "v2_image.h"
#include "ztensor.h"
#include "ztensor_composite.h"

using namespace v2img;

namespace {

struct Mx {
  std::vector<uint64_t> shape;
  uint64_t block_size;
  std::string dtype;
  const char *type;  // nullptr: MXINT8
  std::vector<uint8_t> data, scales;
  Fields extra_attrs = {};
};

std::vector<uint8_t> image(const Mx &m) {
  Fields a = {{"block_size", u(m.block_size)}, {"scale_form", t("e8m0_exponent")}};
  a.insert(a.end(), m.extra_attrs.begin(), m.extra_attrs.end());
  Fields dx;
  if (m.type) dx.push_back({"type", t(m.type)});
  const std::string obj = object(m.shape, "zt.mx/1",
                                 {{"data", part(m.dtype, 4096, m.data.size(), dx)},
                                  {"scales", part("u8", 8192, m.scales.size(), {{"type", t("f8_e8m0")}})}},
                                 {{"attributes", map(a)}});
  auto img = assemble(8192 + m.scales.size(), manifest({{"w", obj}}));
  plant(img, 4096, m.data);
  plant(img, 8192, m.scales);
  return img;
}

// zt_object_dequantize of object "w"; the status and the values.
std::pair<zt_status, std::vector<float>> dequantize(const Mx &m, size_t room) {
  auto img = image(m);
  zt_file *f = nullptr;
  EXPECT_EQ(ZT_OK, zt_open_memory(img.data(), img.size(), nullptr, &f)) << zt_last_error();
  const zt_object *o = nullptr;
  EXPECT_EQ(ZT_OK, zt_file_object_by_name(f, "w", 1, &o)) << zt_last_error();
  std::vector<float> out(room, -99.0f);
  const zt_status st = zt_object_dequantize(o, out.data(), out.size());
  zt_close(f);
  return {st, out};
}

// Equal, NaN matching NaN and the sign of zero compared.
void expect_values(const std::vector<float> &want, const std::vector<float> &got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
      continue;
    }
    EXPECT_EQ(want[i], got[i]) << i;
    EXPECT_EQ(std::signbit(want[i]), std::signbit(got[i])) << i;
  }
}

TEST(V2Mx, Fp4BlocksOfTwo) {
  // [2, 4], blocks of 2 along the last axis: 8 codes, 4 scales.
  Mx m{{2, 4}, 2, "u8", "f4_e2m1", {0x21, 0xF7, 0x8B, 0x53}, {127, 128, 126, 0xFF}};
  auto [st, v] = dequantize(m, 8);
  ASSERT_EQ(ZT_OK, st) << zt_last_error();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // 0x21: codes 1, 2 (0.5, 1) × 2^0; 0xF7: 7, 15 (6, -6) × 2; 0x8B: 11, 8
  // (-1.5, -0) × 0.5; 0x53: 3, 5 (1.5, 3) × NaN.
  expect_values({0.5f, 1.0f, 12.0f, -12.0f, -0.75f, -0.0f, nan, nan}, v);
}

TEST(V2Mx, Fp8E4m3AndE5m2) {
  // E4M3: 0x38 = 1.0, 0x40 = 2.0, 0xBC = -1.5, 0x7E = 448 (the largest).
  Mx a{{1, 4}, 2, "u8", "f8_e4m3fn", {0x38, 0x40, 0xBC, 0x7E}, {130, 120}};
  auto [sa, va] = dequantize(a, 4);
  ASSERT_EQ(ZT_OK, sa) << zt_last_error();
  expect_values({8.0f, 16.0f, -1.5f / 128, 448.0f / 128}, va);
  // E5M2: 0x3C = 1.0, 0x7C = +inf, 0xC0 = -2.0, 0x01 = 2^-16 (subnormal).
  Mx b{{4}, 2, "u8", "f8_e5m2", {0x3C, 0x7C, 0xC0, 0x01}, {127, 127 + 16}};
  auto [sb, vb] = dequantize(b, 4);
  ASSERT_EQ(ZT_OK, sb) << zt_last_error();
  expect_values({1.0f, std::numeric_limits<float>::infinity(), -131072.0f, 1.0f}, vb);
}

TEST(V2Mx, Int8IsScaledByTwoToTheMinusSix) {
  Mx m{{1, 4}, 4, "i8", nullptr, {64, 0x80, 1, 127}, {129}};
  auto [st, v] = dequantize(m, 4);
  ASSERT_EQ(ZT_OK, st) << zt_last_error();
  expect_values({4.0f, -8.0f, 0.0625f, 127.0f / 16}, v);
}

TEST(V2Mx, ScaleExtremes) {
  // e = 0 is 2^-127 (an f32 subnormal), e = 254 is 2^127.
  Mx m{{4}, 2, "i8", nullptr, {64, 64, 64, 64}, {0, 254}};
  auto [st, v] = dequantize(m, 4);
  ASSERT_EQ(ZT_OK, st) << zt_last_error();
  expect_values({std::ldexp(1.0f, -127), std::ldexp(1.0f, -127), std::ldexp(1.0f, 127), std::ldexp(1.0f, 127)}, v);
}

TEST(V2Mx, RefusedCases) {
  Mx m{{1, 4}, 4, "i8", nullptr, {64, 64, 64, 64}, {127}};
  auto [small, v] = dequantize(m, 3);
  EXPECT_EQ(ZT_E_BUFFER_TOO_SMALL, small);
  EXPECT_EQ(-99.0f, v[0]);  // nothing written
  // Blocks along axis 0 of [4, 2]: the profile does not say how the scales
  // are laid out then.
  Mx axis0{{4, 2}, 2, "i8", nullptr, std::vector<uint8_t>(8, 64), {127, 127, 127, 127}, {{"axis", u(0)}}};
  auto [st, w] = dequantize(axis0, 8);
  EXPECT_EQ(ZT_E_UNSUPPORTED, st);
  EXPECT_NE(std::string(zt_last_error()).find("axis other than the last"), std::string::npos) << zt_last_error();
  (void)w;
}

}  // namespace
