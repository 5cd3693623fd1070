// U128: the portable 128-bit integer behind JSON $bigint (no unsigned
// __int128 on 32-bit targets). Decimal in and out at the edges of 64 and
// 128 bits, bytes in and out, and overflow refused.
#include "util/u128.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using zt::U128;

bool parse(const std::string &s, U128 &x) {
  x = U128();
  for (char c : s)
    if (!x.times10_plus(static_cast<unsigned>(c - '0'))) return false;
  return true;
}

std::string round_trip(const std::string &s) {
  U128 x;
  EXPECT_TRUE(parse(s, x)) << s;
  return x.to_decimal();
}

TEST(U128, DecimalRoundTripsAtTheEdges) {
  for (const char *s :
       {"0", "9", "18446744073709551615", "18446744073709551616", "21267647932558653966460912964485513216",
        "34028236692093846346337460743176821145", "340282366920938463463374607431768211455"})
    EXPECT_EQ(round_trip(s), s);
}

TEST(U128, PastOneHundredTwentyEightBitsIsRefused) {
  U128 x;
  EXPECT_FALSE(parse("340282366920938463463374607431768211456", x));  // 2^128
  EXPECT_FALSE(parse("999999999999999999999999999999999999999", x));
  EXPECT_FALSE(parse("3402823669209384634633746074317682114550", x));
  // 2^124 * 1.5 still fits (10x of it does not, but that is not asked).
  EXPECT_TRUE(parse("31901471898837980949691369446728269824", x));
  EXPECT_EQ(x.hi, uint64_t{0x18} << 56);
  EXPECT_EQ(x.lo, 0u);
}

TEST(U128, Fits64AndPlusMinusOneCarry) {
  U128 x(UINT64_MAX);
  EXPECT_TRUE(x.fits_u64());
  U128 y = x.plus_one();
  EXPECT_FALSE(y.fits_u64());
  EXPECT_EQ(y.to_decimal(), "18446744073709551616");
  EXPECT_EQ(y.minus_one().lo, UINT64_MAX);
  EXPECT_TRUE(y.minus_one().fits_u64());
}

TEST(U128, BytesInAndOut) {
  U128 x;
  for (int i = 0; i < 16; ++i) x = x.shifted_in(static_cast<uint8_t>(0xf0 + i));
  EXPECT_EQ(x.hi, 0xf0f1f2f3f4f5f6f7u);
  EXPECT_EQ(x.lo, 0xf8f9fafbfcfdfeffu);
  for (int i = 15; i >= 0; --i) {
    EXPECT_EQ(x.low_byte(), 0xf0 + i);
    x = x.shifted_out();
  }
  EXPECT_TRUE(x.is_zero());
}

}  // namespace
