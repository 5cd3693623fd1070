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
  EXPECT_EQ(std::string(t.text(xyz)), "\x01\x02");
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

namespace {

using zt::cbor::ParseOptions;

Tree parse_with(const std::string &bytes, const ParseOptions &opts) {
  return Tree(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), "test", opts);
}

zt_status collapsed_status(const std::string &bytes, size_t depth) {
  ParseOptions opts;
  opts.collapse_depth = depth;
  try {
    parse_with(bytes, opts);
    return ZT_OK;
  } catch (const zt::Error &e) {
    return e.status();
  }
}

// {"objects": {"a": {"x": [1, 2], "s": (_ "p", "q")}, "b": {"y": 3}}}
std::string two_objects() {
  Cbor c;
  c.map(1).text("objects").map(2);
  c.text("a").map(2).text("x").array(2).uint(1).uint(2).text("s").raw("\x7f\x61p\x61q\xff");
  c.text("b").map(1).text("y").uint(3);
  return c.bytes;
}

TEST(CborTree, CollapsedContainersKeepOneNodeEach) {
  const std::string bytes = two_objects();
  Tree full(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), "test");
  ParseOptions opts;
  opts.collapse_depth = 2;
  Tree t = parse_with(bytes, opts);
  // root, "objects", the objects map, then per object its name and its map.
  EXPECT_EQ(t.size(), 7u);
  EXPECT_LT(t.size(), full.size());
  uint32_t objects = t.find(0, "objects");
  ASSERT_NE(objects, 0u);
  EXPECT_FALSE(t.node(objects).collapsed);
  uint32_t a = t.find(objects, "a"), b = t.find(objects, "b");
  ASSERT_NE(a, 0u);
  ASSERT_NE(b, 0u);
  EXPECT_TRUE(t.node(a).collapsed);
  EXPECT_EQ(t.node(a).kind, Kind::Map);
  EXPECT_EQ(t.node(a).value, 2u) << "the pair count survives";
  EXPECT_EQ(t.next(a), a + 1) << "no children kept";
  // The collapsed item's bytes parse on their own to what the full tree had.
  uint32_t fa = full.find(full.find(0, "objects"), "a");
  EXPECT_EQ(t.raw(a), full.raw(fa));
  ParseOptions again;
  again.base_offset = t.node(a).begin;
  again.already_checked = true;
  Tree one(t.data() + t.node(a).begin, t.node(a).end - t.node(a).begin, "test", again);
  EXPECT_EQ(one.size(), full.next(fa) - fa);
  EXPECT_EQ(one.text(one.find(0, "s")), "pq") << "an indefinite string inside a collapsed item";
  EXPECT_EQ(one.node(one.find(0, "x")).value, 2u);
  EXPECT_EQ(t.find(b, "y"), 0u) << "find never looks inside a collapsed map";
}

TEST(CborTree, CollapsedContainersAreStillCheckedInFull) {
  Cbor dup;
  dup.map(1).text("objects").map(1).text("a").map(2).text("k").uint(1).text("k").uint(2);
  EXPECT_EQ(collapsed_status(dup.bytes, 2), ZT_E_DUPLICATE_KEY);
  Cbor deep_dup;  // a duplicate two levels inside a collapsed item
  deep_dup.map(1).text("o").map(1).text("a").map(1).text("m").map(2).uint(1).null().uint(1).null();
  EXPECT_EQ(collapsed_status(deep_dup.bytes, 2), ZT_E_DUPLICATE_KEY);
  std::string deep =
      "\xa1\x61o\xa1\x61"
      "a";
  deep += std::string(300, '\x81');
  deep += '\x00';
  EXPECT_EQ(collapsed_status(deep, 2), ZT_E_CBOR_DEPTH);
  EXPECT_EQ(collapsed_status(two_objects().substr(0, two_objects().size() - 1), 2), ZT_E_CBOR);
  EXPECT_EQ(collapsed_status(two_objects(), 2), ZT_OK);
}

TEST(CborTree, MessagesCountFromTheEnclosingBuffer) {
  const std::string bad = Cbor().map(2).text("k").uint(1).text("k").uint(2).bytes;
  ParseOptions opts;
  opts.base_offset = 1000;
  try {
    parse_with(bad, opts);
    FAIL() << "duplicate key accepted";
  } catch (const zt::Error &e) {
    EXPECT_NE(std::string(e.what()).find("at byte 1004"), std::string::npos) << e.what();
  }
}

TEST(CborTree, SortedAndUnsortedLargeMapsFindTheSameDuplicates) {
  for (bool sorted : {true, false}) {
    Cbor ok, dup;
    ok.map(40);
    dup.map(40);
    for (int i = 0; i < 40; ++i) {
      int k = sorted ? i : (i * 7) % 40;
      ok.text("key" + std::to_string(100 + k)).uint(i);
      dup.text("key" + std::to_string(100 + (i == 39 ? 0 : k))).uint(i);
    }
    EXPECT_EQ(decode_status(ok.bytes), ZT_OK) << sorted;
    EXPECT_EQ(decode_status(dup.bytes), ZT_E_DUPLICATE_KEY) << sorted;
    // Mixed key kinds, sorted by kind then value: still distinct.
    Cbor mixed;
    mixed.map(20);
    for (int i = 0; i < 10; ++i) mixed.uint(i).null();
    for (int i = 0; i < 10; ++i) mixed.text("t" + std::to_string(i)).null();
    EXPECT_EQ(decode_status(mixed.bytes), ZT_OK);
  }
}

}  // namespace

namespace {

zt_status check_only_status(const std::string &bytes, size_t *nodes = nullptr) {
  ParseOptions opts;
  opts.check_only = true;
  try {
    Tree t = parse_with(bytes, opts);
    if (nodes) *nodes = t.size();
    return ZT_OK;
  } catch (const zt::Error &e) {
    return e.status();
  }
}

TEST(CborTree, CheckOnlyKeepsMemoryToTheWidestMapAndStillChecksEverything) {
  // A map of one key whose value is an array of 100 000 items, some of them
  // maps and indefinite strings: a handful of nodes, not 100 000.
  Cbor big;
  big.map(2).text("k").array(100000);
  for (int i = 0; i < 100000; ++i) {
    if (i % 1000 == 0) {
      big.map(2).uint(1).raw("\x7f\x61x\x61y\xff").uint(2).array(1).null();
    } else {
      big.uint(static_cast<uint64_t>(i));
    }
  }
  big.raw("\x7f\x61j\x61k\xff").uint(1);  // an indefinite-string key
  size_t nodes = 0;
  ASSERT_EQ(check_only_status(big.bytes, &nodes), ZT_OK);
  EXPECT_LE(nodes, 8u);
  EXPECT_EQ(decode_status(big.bytes), ZT_OK) << "the full tree agrees";

  // Every check still runs, wherever the item is.
  Cbor dup_in_array;  // a duplicate key in a map that is an array element
  dup_in_array.array(3).uint(0).map(2).text("a").null().text("a").null().uint(1);
  EXPECT_EQ(check_only_status(dup_in_array.bytes), ZT_E_DUPLICATE_KEY);
  Cbor dup_after_big;  // duplicate keys around a big value
  dup_after_big.map(2).text("a").array(1000);
  for (int i = 0; i < 1000; ++i) dup_after_big.uint(7);
  dup_after_big.text("a").null();
  EXPECT_EQ(check_only_status(dup_after_big.bytes), ZT_E_DUPLICATE_KEY);
  Cbor dup_indef;  // equal keys spelled as a definite and an indefinite string
  dup_indef.map(2)
      .text("ab")
      .null()
      .raw(
          "\x7f\x61"
          "a\x61"
          "b\xff")
      .null();
  EXPECT_EQ(check_only_status(dup_indef.bytes), ZT_E_DUPLICATE_KEY);
  Cbor dup_ints;  // the same integer key in two widths
  dup_ints.map(2).uint(5).null().raw(std::string("\x19\x00\x05", 3)).null();
  EXPECT_EQ(check_only_status(dup_ints.bytes), ZT_E_DUPLICATE_KEY);
  std::string deep(300, '\x81');
  deep += '\x00';
  EXPECT_EQ(check_only_status(deep), ZT_E_CBOR_DEPTH);
  EXPECT_EQ(check_only_status(Cbor().array(3).uint(1).bytes), ZT_E_CBOR);
  EXPECT_EQ(check_only_status(Cbor().uint(1).uint(2).bytes), ZT_E_CBOR);
}

TEST(CborTree, ValuesOfANamedKeyAreCheckedWithoutNodesElsewhereKeptInFull) {
  // {"objects": {"a": {"shape": [2, 3], "attributes": {"big": [0 x 50000]}}},
  //  "attributes": {"k": [0 x 50000], "m": {"x": 1}}}
  Cbor c;
  c.map(2).text("objects").map(1).text("a").map(2).text("shape").array(2).uint(2).uint(3);
  c.text("attributes").map(1).text("big").array(50000);
  for (int i = 0; i < 50000; ++i) c.uint(0);
  c.text("attributes").map(2).text("k").array(50000);
  for (int i = 0; i < 50000; ++i) c.uint(0);
  c.text("m").map(1).text("x").uint(1);
  ParseOptions opts;
  opts.check_only_under = "attributes";
  opts.check_only_depths = (1u << 1) | (1u << 3);
  Tree t = parse_with(c.bytes, opts);
  EXPECT_LT(t.size(), 40u);
  // What is not under "attributes" is all there.
  const uint32_t a = t.find(t.find(0, "objects"), "a");
  const uint32_t shape = t.find(a, "shape");
  ASSERT_NE(shape, 0u);
  EXPECT_EQ(t.node(shape).value, 2u);
  EXPECT_EQ(t.node(t.first_child(shape)).value, 2u);
  // An attributes value keeps its bytes, and its top-level keys.
  const uint32_t attrs = t.find(0, "attributes");
  ASSERT_NE(attrs, 0u);
  EXPECT_EQ(
      t.raw(attrs),
      Tree(reinterpret_cast<const uint8_t *>(c.bytes.data()), c.bytes.size(), "full")
          .raw(Tree(reinterpret_cast<const uint8_t *>(c.bytes.data()), c.bytes.size(), "full").find(0, "attributes")));
  EXPECT_NE(t.find(attrs, "m"), 0u);

  // A duplicate key deep inside an attributes value is still refused.
  Cbor dup;
  dup.map(1).text("attributes").map(1).text("k").array(2).uint(1).map(2).text("z").null().text("z").null();
  try {
    parse_with(dup.bytes, opts);
    FAIL() << "duplicate key inside attributes accepted";
  } catch (const zt::Error &e) {
    EXPECT_EQ(e.status(), ZT_E_DUPLICATE_KEY);
  }
}

}  // namespace
