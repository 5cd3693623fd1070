// util/cbor_out.h: the one CBOR builder. Its heads must be the bytes
// libcbor's encoders write (the v1 manifest, foreign attributes and
// attribute JSON were written through libcbor before) and the shortest
// form the v2 spec's deterministic encoding requires: checked at every
// width boundary, for each major type, into both buffer types.
#include "util/cbor_out.h"

#include <cbor.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

std::string lib(size_t (*enc)(uint64_t, unsigned char *, size_t), uint64_t v) {
  unsigned char b[9];
  const size_t n = enc(v, b, sizeof b);
  return std::string(reinterpret_cast<char *>(b), n);
}

const uint64_t kBoundaries[] = {
    0, 1, 23, 24, 255, 256, 65535, 65536, 0xFFFFFFFFu, 0x100000000ull, UINT64_MAX - 1, UINT64_MAX};

TEST(CborOut, HeadsAreLibcborsShortestForms) {
  auto map_start = [](uint64_t v, unsigned char *b, size_t l) { return cbor_encode_map_start(v, b, l); };
  auto array_start = [](uint64_t v, unsigned char *b, size_t l) { return cbor_encode_array_start(v, b, l); };
  auto text_start = [](uint64_t v, unsigned char *b, size_t l) { return cbor_encode_string_start(v, b, l); };
  auto bytes_start = [](uint64_t v, unsigned char *b, size_t l) { return cbor_encode_bytestring_start(v, b, l); };
  for (uint64_t v : kBoundaries) {
    std::string s;
    zt::cbor::put_uint(s, v);
    EXPECT_EQ(s, lib(cbor_encode_uint, v)) << v;
    s.clear();
    zt::cbor::put_negint(s, v);
    EXPECT_EQ(s, lib(cbor_encode_negint, v)) << v;
    s.clear();
    zt::cbor::put_tag(s, v);
    EXPECT_EQ(s, lib(cbor_encode_tag, v)) << v;
    if (v <= SIZE_MAX) {
      s.clear();
      zt::cbor::put_map(s, v);
      EXPECT_EQ(s, lib(map_start, v)) << v;
      s.clear();
      zt::cbor::put_array(s, v);
      EXPECT_EQ(s, lib(array_start, v)) << v;
      s.clear();
      zt::cbor::put_head(s, zt::cbor::kMajorText, v);
      EXPECT_EQ(s, lib(text_start, v)) << v;
      s.clear();
      zt::cbor::put_head(s, zt::cbor::kMajorBytes, v);
      EXPECT_EQ(s, lib(bytes_start, v)) << v;
    }
  }
}

TEST(CborOut, ItemsIntoEitherBuffer) {
  std::vector<uint8_t> v;
  zt::cbor::put_int(v, INT64_MIN);
  zt::cbor::put_int(v, -1);
  zt::cbor::put_int(v, 24);
  zt::cbor::put_text(v, "ab");
  zt::cbor::put_bytes(v, std::string("\0\1", 2));
  zt::cbor::put_bool(v, true);
  zt::cbor::put_bool(v, false);
  zt::cbor::put_null(v);
  const std::vector<uint8_t> want = {0x3B, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  // -2^63
                                     0x20,                                                  // -1
                                     0x18, 0x18,                                            // 24
                                     0x62, 'a',  'b',  0x42, 0x00, 0x01, 0xF5, 0xF4, 0xF6};
  EXPECT_EQ(v, want);
  std::string s;
  zt::cbor::put_int(s, INT64_MIN);
  zt::cbor::put_int(s, -1);
  zt::cbor::put_int(s, 24);
  zt::cbor::put_text(s, "ab");
  zt::cbor::put_bytes(s, std::string("\0\1", 2));
  zt::cbor::put_bool(s, true);
  zt::cbor::put_bool(s, false);
  zt::cbor::put_null(s);
  EXPECT_EQ(s, std::string(want.begin(), want.end()));
}

}  // namespace
