// Storage types, logical types, checked sizes, digests and JSON conversion.
#include <gtest/gtest.h>

#include <cmath>

#include "digest/digest.h"
#include "manifest/json.h"
#include "types/dtype.h"
#include "types/half.h"
#include "util/error.h"
#include "util/small_vector.h"

namespace {

TEST(Dtype, NamesSizesAndLegacyNames) {
  const std::pair<const char *, size_t> expect[] = {{"f64", 8}, {"f32", 4}, {"f16", 2}, {"bf16", 2}, {"i64", 8},
                                                    {"i32", 4}, {"i16", 2}, {"i8", 1},  {"u64", 8},  {"u32", 4},
                                                    {"u16", 2}, {"u8", 1},  {"bool", 1}};
  for (int i = 1; i <= 13; ++i) {
    auto d = static_cast<zt_dtype>(i);
    EXPECT_STREQ(zt::dtype_name(d), expect[i - 1].first);
    EXPECT_EQ(zt::dtype_size(d), expect[i - 1].second);
    EXPECT_EQ(zt::dtype_from_short_name(expect[i - 1].first), d);
  }
  EXPECT_EQ(zt::dtype_from_legacy_name("bfloat16"), ZT_BF16);
  EXPECT_EQ(zt::dtype_from_legacy_name("uint8"), ZT_U8);
  EXPECT_EQ(zt::dtype_from_short_name("float32"), ZT_DTYPE_UNKNOWN);
  EXPECT_EQ(zt::dtype_from_short_name("u4"), ZT_DTYPE_UNKNOWN);
  EXPECT_EQ(zt::dtype_name(static_cast<zt_dtype>(14)), nullptr);
}

TEST(Dtype, CheckedShapeProducts) {
  using Dims = std::vector<uint64_t>;
  EXPECT_EQ(*zt::shape_numel(Dims{}), 1u);
  EXPECT_EQ(*zt::shape_numel(Dims{0, 1ull << 62, 1ull << 62}), 0u);
  EXPECT_FALSE(zt::shape_numel(Dims{1ull << 32, 1ull << 32}).has_value());
  EXPECT_FALSE(zt::dense_byte_size(Dims{1ull << 62}, ZT_F32, 1).has_value());
  EXPECT_EQ(*zt::dense_byte_size(Dims{3, 2}, ZT_F64, 2), 96u);
  EXPECT_EQ(zt::logical_ratio("complex64"), 2u);
  EXPECT_EQ(zt::logical_ratio("my_type"), 1u);
}

TEST(Digest, Crc32cStandardVectorAndFormatting) {
  EXPECT_EQ(zt::crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(zt::crc32c("", 0), 0u);
  // Incremental equals one-shot.
  EXPECT_EQ(zt::crc32c("6789", 4, zt::crc32c("12345", 5)), 0xE3069283u);
  EXPECT_EQ(zt::digest_string(ZT_DIGEST_CRC32C, "123456789", 9), "crc32c:0xE3069283");
  EXPECT_EQ(zt::digest_string(ZT_DIGEST_SHA256, "abc", 3),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// XXH3-64 (seed 0): the empty input's published value, and the digest the
// original implementation's conformance corpus (verify-ok.zt) gives eight
// 0xab bytes; streaming equals one-shot.
TEST(Digest, Xxh3KnownValuesAndStreaming) {
  EXPECT_EQ(zt::xxh3_64("", 0), 0x2D06800538D394C2ull);
  EXPECT_EQ(zt::digest_string(ZT_DIGEST_XXH3, "", 0), "xxh3:2d06800538d394c2");
  const std::string ab(8, '\xab');
  EXPECT_EQ(zt::digest_string(ZT_DIGEST_XXH3, ab.data(), ab.size()), "xxh3:f88e5e79bd7c033d");
  std::string big(10000, '\x5a');
  zt::Digester d(ZT_DIGEST_XXH3);
  d.update(big.data(), 3);
  d.update(big.data() + 3, big.size() - 3);
  char want[32];
  std::snprintf(want, sizeof want, "xxh3:%016llx",
                static_cast<unsigned long long>(zt::xxh3_64(big.data(), big.size())));
  EXPECT_EQ(d.finish_string(), want);
  auto p = zt::parse_digest(want);
  EXPECT_EQ(p.alg, ZT_DIGEST_XXH3);
  zt::Digester again(ZT_DIGEST_XXH3);
  again.update(big.data(), big.size());
  EXPECT_TRUE(again.finish_matches(p));
  for (const char *bad : {"xxh3:123", "xxh3:0123456789abcdefa", "xxh3:0123456789abcdeg"}) {
    try {
      zt::parse_digest(bad);
      ADD_FAILURE() << bad;
    } catch (const zt::Error &e) {
      EXPECT_EQ(e.status(), ZT_E_DIGEST_FORMAT) << bad;
    }
  }
}

TEST(Digest, ParsingAcceptsCaseAndRefusesGarbage) {
  auto d = zt::parse_digest("crc32c:0Xe3069283");
  EXPECT_EQ(d.alg, ZT_DIGEST_CRC32C);
  EXPECT_EQ(d.crc, 0xE3069283u);
  EXPECT_EQ(zt::parse_digest("blake3:abcd").alg, ZT_DIGEST_UNKNOWN);
  EXPECT_EQ(zt::parse_digest("sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD").alg,
            ZT_DIGEST_SHA256);
  for (const char *bad : {"crc32c", "crc32c:0xZZ", "crc32c:0x123456789", "sha256:abc", ":abc", "crc32c:0x"}) {
    try {
      zt::parse_digest(bad);
      ADD_FAILURE() << bad;
    } catch (const zt::Error &e) {
      EXPECT_EQ(e.status(), ZT_E_DIGEST_FORMAT) << bad;
    }
  }
}

TEST(Json, RoundTripsThroughCbor) {
  const char *doc = R"({"a":1,"b":-2,"c":0.5,"d":[true,false,null],"e":{"$bytes":"00ff"},"f":{"$float":"nan"},)"
                    R"("g":{"$tag":32,"$value":"http://x"},"h":{"$map":[[1,"one"]]},"i":"\u00fc"})";
  std::string cbor = zt::json_to_cbor(doc);
  EXPECT_EQ(zt::cbor_to_json(reinterpret_cast<const uint8_t *>(cbor.data()), cbor.size()),
            R"({"a":1,"b":-2,"c":0.5,"d":[true,false,null],"e":{"$bytes":"00ff"},"f":{"$float":"nan"},)"
            R"("g":{"$tag":32,"$value":"http://x"},"h":{"$map":[[1,"one"]]},"i":"ü"})");
}

TEST(Half, DecodesSpecialValues) {
  EXPECT_EQ(zt::half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(zt::half_to_float(0xc000), -2.0f);
  EXPECT_EQ(zt::half_to_float(0x0001), 5.9604644775390625e-08f);
  EXPECT_TRUE(std::isinf(zt::half_to_float(0x7c00)));
  EXPECT_TRUE(std::isnan(zt::half_to_float(0x7e00)));
  EXPECT_EQ(zt::bf16_to_float(0x3f80), 1.0f);
}

}  // namespace

namespace {

using Dims = zt::SmallVector<uint64_t, 4>;

TEST(SmallVector, InlineThenHeapWithCopiesAndMoves) {
  Dims a{1, 2, 3};
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(a, (std::vector<uint64_t>{1, 2, 3}));
  for (uint64_t v = 4; v <= 9; ++v) a.push_back(v);  // spills to the heap at 5
  EXPECT_EQ(a, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  a.push_back(a[0]);  // an element of itself, while growing
  EXPECT_EQ(a.back(), 1u);
  Dims copy = a;
  EXPECT_EQ(copy, a);
  copy[0] = 42;
  EXPECT_EQ(a[0], 1u) << "a copy owns its storage";
  Dims moved = std::move(copy);
  EXPECT_EQ(moved[0], 42u);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  Dims small{7};
  Dims small_moved = std::move(small);
  EXPECT_EQ(small_moved, (std::vector<uint64_t>{7}));
  small_moved = a;  // inline ← heap contents
  EXPECT_EQ(small_moved, a);
  a = Dims{5};  // heap → inline contents
  EXPECT_EQ(a, (std::vector<uint64_t>{5}));
  const Dims &alias = a;
  a = alias;  // self-assignment keeps the values
  EXPECT_EQ(a, (std::vector<uint64_t>{5}));
  a.resize(6, 8);
  EXPECT_EQ(a, (std::vector<uint64_t>{5, 8, 8, 8, 8, 8}));
  a.clear();
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(Dims(std::vector<uint64_t>{}).to_vector(), std::vector<uint64_t>{});
  EXPECT_EQ(*zt::shape_numel(Dims{2, 3, 4}), 24u);
}

}  // namespace
