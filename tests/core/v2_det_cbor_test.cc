// The deterministic CBOR encoder of the v2 writer (RFC 8949 §4.2.1; v2 spec
// §3.1): shortest heads and floats, NaN as f9 7e00, keys sorted on their
// encoded bytes, and the re-encoding of loosely written attribute CBOR.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "util/error.h"
#include "v2/det_cbor_encode.h"

using zt::v2::canonical_cbor;
using zt::v2::DetCbor;

namespace {

std::string hex(const std::string &s) {
  static const char *d = "0123456789abcdef";
  std::string r;
  for (unsigned char c : s) {
    r += d[c >> 4];
    r += d[c & 15];
  }
  return r;
}

std::string f(double v) {
  DetCbor o;
  o.float64(v);
  return hex(o.out);
}

TEST(V2DetCbor, ShortestFloatThatKeepsTheValue) {
  EXPECT_EQ("f90000", f(0.0));
  EXPECT_EQ("f98000", f(-0.0));
  EXPECT_EQ("f93e00", f(1.5));
  EXPECT_EQ("f97bff", f(65504.0));
  EXPECT_EQ("f90001", f(5.960464477539063e-8));          // the smallest half subnormal
  EXPECT_EQ("f903ff", f(6.097555160522461e-5));          // the largest half subnormal
  EXPECT_EQ("fa47800000", f(65536.0));                   // past half's range
  EXPECT_EQ("fa33000000", f(5.960464477539063e-8 / 2));  // 2^-25: single only
  EXPECT_EQ("fa3f8ccccd", f(static_cast<double>(1.1f)));
  EXPECT_EQ("fb3fb999999999999a", f(0.1));
  EXPECT_EQ("f97c00", f(INFINITY));
  EXPECT_EQ("f9fc00", f(-INFINITY));
  EXPECT_EQ("f97e00", f(std::nan("")));
  EXPECT_EQ("f97e00", f(-std::nan("0x123")));
}

TEST(V2DetCbor, ShortestHeads) {
  DetCbor o;
  for (uint64_t v : {uint64_t{23}, uint64_t{24}, uint64_t{255}, uint64_t{256}, uint64_t{65535}, uint64_t{65536},
                     uint64_t{0xFFFFFFFF}, uint64_t{0x100000000}})
    o.uint(v);
  EXPECT_EQ(
      "171818"
      "18ff"
      "190100"
      "19ffff"
      "1a00010000"
      "1affffffff"
      "1b0000000100000000",
      hex(o.out));
  DetCbor n;
  n.integer(-1);
  n.integer(-25);
  n.integer(INT64_MIN);
  EXPECT_EQ(
      "20"
      "3818"
      "3b7fffffffffffffff",
      hex(n.out));
}

std::string recode(const std::vector<uint8_t> &c, unsigned depth = 1, bool attrs = false) {
  return hex(canonical_cbor(c.data(), c.size(), depth, attrs, "test"));
}

TEST(V2DetCbor, ReencodesLooseCbor) {
  // {_ "b": 1, "aa": 2, "a": [_ 3]} with wide heads → sorted on encoded keys:
  // "a" (61 61) < "b" (61 62) < "aa" (62 61 61).
  const std::vector<uint8_t> loose = {0xBF, 0x61, 'b', 0x18, 0x01, 0x7B, 0,    0,   0,    0,    0,    0,   0,
                                      2,    'a',  'a', 0x19, 0x00, 0x02, 0x61, 'a', 0x9F, 0x03, 0xFF, 0xFF};
  EXPECT_EQ(
      "a3"
      "6161"
      "8103"
      "6162"
      "01"
      "626161"
      "02",
      recode(loose));
  // A double that is really a half.
  EXPECT_EQ("f93e00", recode({0xFB, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0}));
  // Chunked text becomes one definite string.
  EXPECT_EQ("626162", recode({0x7F, 0x61, 'a', 0x61, 'b', 0xFF}));
}

TEST(V2DetCbor, RefusesWhatSection31Forbids) {
  auto refused = [](const std::vector<uint8_t> &c, bool attrs, const char *why) {
    try {
      canonical_cbor(c.data(), c.size(), 1, attrs, "test");
      ADD_FAILURE() << "accepted: " << why;
    } catch (const zt::Error &e) {
      EXPECT_EQ(ZT_E_INVALID_ARG, e.status()) << why;
    }
  };
  refused({0xC1, 0x01}, false, "a tag");
  refused({0xF7}, false, "undefined");
  refused({0xA2, 0x18, 0x18, 0x01, 0x19, 0x00, 0x18, 0x02}, false, "keys 24 and 24, differently encoded");
  refused({0xA1, 0x01, 0x01}, true, "an attribute key that is not text");
  refused({0xA1, 0x60, 0x01}, true, "an empty attribute key");
  refused({0x81}, false, "truncated");
  refused({0x01, 0x02}, false, "trailing bytes");
  refused({0x61, 0xFF}, false, "invalid UTF-8");
  refused({0x01}, true, "attributes that are not a map");
  std::vector<uint8_t> deep(33, 0x81);
  deep.push_back(0x01);
  refused(deep, false, "nesting past 32");
}

}  // namespace
