// The CBOR tree accepts any valid CBOR (indefinite lengths, tags, wide
// integers, any key order) and refuses hostile input cleanly.
#include "manifest/cbor_tree.h"

#include <gtest/gtest.h>

#include "cbor_writer.h"
#include "util/error.h"

using zt::cbor::Kind;
using zt::cbor::Tree;
using zttest::Cbor;

namespace {

zt_status decode_status(const std::string &bytes) {
  try {
    Tree t(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), "test");
    return ZT_OK;
  } catch (const zt::Error &e) {
    return e.status();
  }
}

TEST(CborTree, IndefiniteContainersAndStrings) {
  Cbor c;
  c.indef_map().text("a").indef_array().uint(1).uint(2).brk();
  c.raw("\x7f\x62xy\x61z\xff").raw("\x5f\x42\x01\x02\xff");  // "xyz": h'0102'
  c.tag(55799).uint(7).text("b").brk();
  Tree t(reinterpret_cast<const uint8_t *>(c.bytes.data()), c.bytes.size(), "test");
  const auto &root = t.node(0);
  ASSERT_EQ(root.kind, Kind::Map);
  EXPECT_EQ(root.value, 3u);
  uint32_t a = t.find(0, "a");
  ASSERT_NE(a, 0u);
  EXPECT_EQ(t.node(a).kind, Kind::Array);
  EXPECT_EQ(t.node(a).value, 2u);
  uint32_t xyz = t.find(0, "xyz");
  ASSERT_NE(xyz, 0u);
  EXPECT_EQ(t.node(xyz).kind, Kind::Bytes);
  EXPECT_EQ(std::string(t.node(xyz).str, t.node(xyz).len), "\x01\x02");
  EXPECT_EQ(t.raw(0), c.bytes);
}

TEST(CborTree, RefusesHostileInput) {
  EXPECT_EQ(decode_status(""), ZT_E_CBOR);
  EXPECT_EQ(decode_status(Cbor().uint(1).uint(2).bytes), ZT_E_CBOR) << "trailing bytes";
  EXPECT_EQ(decode_status(Cbor().array(3).uint(1).bytes), ZT_E_CBOR) << "truncated";
  EXPECT_EQ(decode_status(Cbor().head(4, 1ull << 60).bytes), ZT_E_CBOR) << "huge claimed count";
  EXPECT_EQ(decode_status(Cbor().head(5, 1ull << 62).bytes), ZT_E_CBOR);
  EXPECT_EQ(decode_status(Cbor().head(3, 1ull << 40).bytes), ZT_E_CBOR) << "string past the end";
  EXPECT_EQ(decode_status(Cbor().map(2).text("k").uint(1).text("k").uint(2).bytes), ZT_E_DUPLICATE_KEY);
  EXPECT_EQ(decode_status(Cbor().indef_map().uint(5).null().uint(5).null().brk().bytes), ZT_E_DUPLICATE_KEY);
  EXPECT_EQ(decode_status(Cbor().indef_map().text("k").brk().bytes), ZT_E_CBOR) << "key without value";
  EXPECT_EQ(decode_status("\xff"), ZT_E_CBOR) << "stray break";
  EXPECT_EQ(decode_status("\x1c"), ZT_E_CBOR) << "reserved additional info";
  std::string deep(10000, '\x81');
  deep += '\x00';
  EXPECT_EQ(decode_status(deep), ZT_E_CBOR_DEPTH);
  std::string deep_indef(10000, '\x9f');
  EXPECT_EQ(decode_status(deep_indef), ZT_E_CBOR_DEPTH);
}

TEST(CborTree, ManyKeysDuplicateDetectionScales) {
  Cbor c;
  c.map(5001);
  for (int i = 0; i < 5000; ++i) c.text("key" + std::to_string(i)).uint(i);
  Cbor ok = c;
  ok.text("unique").uint(1);
  EXPECT_EQ(decode_status(ok.bytes), ZT_OK);
  c.text("key4321").uint(1);
  EXPECT_EQ(decode_status(c.bytes), ZT_E_DUPLICATE_KEY);
}

}  // namespace
