// Format v2, rule by rule (spec §2-§5, Appendix A; src/v2/), on files built
// here (tests/support/v2_image.h): each check of the reader has a file that
// only it rejects, next to the nearest file it must accept, so a check that
// is removed or loosened fails a test. The corpus of the original
// implementation runs in v2_conformance_test.cc.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"
#include "v2_image.h"
#include "ztensor.h"
#include "ztensor_composite.h"
#include "ztensor_set.h"

using namespace v2img;

namespace {

struct Opened {
  zt_status status;
  std::string message;
  zt_file *file = nullptr;
  std::vector<uint8_t> bytes;  // zt_open_memory borrows them
  ~Opened() { zt_close(file); }
};

std::unique_ptr<Opened> open_image(std::vector<uint8_t> img) {
  auto o = std::make_unique<Opened>();
  o->bytes = std::move(img);
  o->status = zt_open_memory(o->bytes.data(), o->bytes.size(), nullptr, &o->file);
  if (o->status != ZT_OK) o->message = zt_last_error();
  return o;
}

// Opens and expects a rejection naming `rule` (and, if given, the status).
void expect_reject(std::vector<uint8_t> img, const char *rule, zt_status status = ZT_OK) {
  auto o = open_image(std::move(img));
  ASSERT_NE(o->status, ZT_OK) << "accepted; expected " << rule;
  EXPECT_NE(o->message.find(std::string("rejected (") + rule + ")"), std::string::npos) << o->message;
  if (status != ZT_OK) EXPECT_EQ(o->status, status) << o->message;
}

void expect_open(std::vector<uint8_t> img) {
  auto o = open_image(std::move(img));
  EXPECT_EQ(o->status, ZT_OK) << o->message;
}

std::vector<uint8_t> one_dense(Fields part_extra = {}, const std::string &dtype = "u8",
                               std::vector<uint64_t> shape = {8}, uint64_t len = 8) {
  return assemble(4096 + len, manifest({{"t", dense(dtype, shape, 4096, len, part_extra)}}));
}

const zt_object *obj_of(const Opened &o, const char *name) {
  const zt_object *obj = nullptr;
  EXPECT_EQ(zt_file_object_by_name(o.file, name, std::strlen(name), &obj), ZT_OK);
  return obj;
}

// ---- §2: container ------------------------------------------------------

TEST(V2Container, FooterFields) {
  auto good = one_dense();
  expect_open(good);
  const size_t n = good.size();
  auto v = good;
  put_le(v, n - 16, 1, 4);  // version 1
  expect_reject(v, "Version", ZT_E_VERSION);
  v = good;
  put_le(v, n - 12, 0xffffffff, 4);  // reserved: ignored
  expect_open(v);
  v = good;
  v[n - 2] ^= 1;
  expect_reject(v, "FooterMagic", ZT_E_FOOTER);
  v = good;
  v[1] = 'X';
  expect_reject(v, "HeaderMagic", ZT_E_FORMAT);
  // 48 bytes is the least a file can be; one less is too small.
  std::vector<uint8_t> shard(48, 0);
  std::memcpy(shard.data(), kMagic, 8);
  put_le(shard, 48 - 16, 2, 4);
  std::memcpy(shard.data() + 40, kMagic, 8);
  expect_open(shard);
  std::vector<uint8_t> small(shard.begin() + 1, shard.end());
  std::memcpy(small.data(), kMagic, 8);
  expect_reject(small, "FileTooSmall");
}

TEST(V2Container, DataShardOpensStructurallyOnly) {
  std::vector<uint8_t> shard(4096 + 16 + 40, 0);
  std::memcpy(shard.data(), kMagic, 8);
  const size_t f = shard.size() - 40;
  put_le(shard, f + 24, 2, 4);
  std::memcpy(shard.data() + f + 32, kMagic, 8);
  auto o = open_image(shard);
  ASSERT_EQ(o->status, ZT_OK) << o->message;
  uint32_t ds = 0;
  size_t count = 9;
  ASSERT_EQ(zt_file_data_shard(o->file, &ds), ZT_OK);
  EXPECT_EQ(ds, 1u);
  ASSERT_EQ(zt_file_object_count(o->file, &count), ZT_OK);
  EXPECT_EQ(count, 0u);
  // Any non-zero manifest field but the length is not a data shard.
  auto bad = shard;
  put_le(bad, f + 16, 1, 8);  // a hash without a manifest
  expect_reject(bad, "ManifestBounds");
}

TEST(V2Container, ManifestBoundsCapAndHash) {
  auto good = one_dense();
  const size_t n = good.size();
  auto v = good;
  put_le(v, n - 32, (uint64_t{1} << 30) + 1, 8);  // over 1 GiB: refused before anything is read
  expect_reject(v, "ManifestTooLarge", ZT_E_MANIFEST_LIMIT);
  v = good;
  put_le(v, n - 32, n - 40 - 8192 + 1, 8);  // one byte into the footer
  expect_reject(v, "ManifestBounds", ZT_E_MANIFEST_SIZE);
  v = good;
  put_le(v, n - 40, 12288, 8);  // aligned, past the data region
  expect_reject(v, "ManifestBounds");
  v = good;
  put_le(v, n - 40, 4096 + 64, 8);
  expect_reject(v, "BlobAlignment", ZT_E_ALIGNMENT);
  v = good;
  v[n - 24] ^= 1;  // the hash itself
  expect_reject(v, "ManifestHash", ZT_E_DIGEST_MISMATCH);
}

// Every single-bit flip of a manifest is caught by the XXH3-64 before a
// byte of it is parsed (the reject sweep of tests/reject has the same for
// files on disk).
TEST(V2Container, EveryManifestBitFlipIsCaughtByTheHash) {
  auto good =
      assemble(4096 + 8, manifest({{"weight", dense("f32", {2}, 4096, 8, {{"digest", t("xxh3:00112233445566aa")}})}}));
  const size_t m_end = good.size() - 40;
  for (size_t at = 4096 * 2; at < m_end; ++at)
    for (int bit = 0; bit < 8; ++bit) {
      auto v = good;
      v[at] ^= static_cast<uint8_t>(1u << bit);
      auto o = open_image(v);
      ASSERT_NE(o->status, ZT_OK) << at << ":" << bit;
      ASSERT_NE(o->message.find("rejected (ManifestHash)"), std::string::npos) << o->message;
    }
}

// ---- §3.1: deterministic CBOR ------------------------------------------

std::vector<uint8_t> raw_manifest(const std::string &m) {
  return assemble(8, m);
}

TEST(V2Cbor, Determinism) {
  const std::string objects = t("objects") + map({});
  expect_open(raw_manifest(head(5, 1) + objects));
  // Non-shortest heads: a map count, a text length, an unsigned integer.
  expect_reject(raw_manifest("\xb8\x01" + objects), "CborDeterminism");
  expect_reject(raw_manifest(head(5, 1) + "\x78\x07objects" + map({})), "CborDeterminism");
  expect_reject(raw_manifest(map({{"objects", map({})}, {"x", std::string("\x19\x00\x05", 3)}})), "CborDeterminism");
  expect_open(raw_manifest(map({{"objects", map({})}, {"x", std::string("\x19\x01\x00", 3)}})));
  // Unsorted (shorter keys first: "x" before "objects") and duplicate keys.
  expect_reject(raw_manifest(head(5, 2) + objects + t("x") + u(1)), "CborDeterminism");
  expect_reject(raw_manifest(head(5, 2) + t("x") + u(1) + t("x") + u(1) + objects), "CborDuplicateKey",
                ZT_E_DUPLICATE_KEY);
  // Indefinite lengths, tags (in attributes too), trailing bytes.
  expect_reject(raw_manifest(head(5, 1) + t("objects") + "\xbf\xff"), "CborSyntax");
  expect_reject(raw_manifest(map({{"attributes", map({{"a", std::string("\xc1\x00", 2)}})}, {"objects", map({})}})),
                "CborSyntax");
  expect_reject(raw_manifest(head(5, 1) + objects + std::string(1, '\0')), "CborSyntax");
  expect_reject(raw_manifest(map({{"objects", map({})}, {"x", "\xf7"}})), "CborSyntax");  // undefined
}

TEST(V2Cbor, CanonicalFloats) {
  auto with = [](const std::string &f) { return raw_manifest(map({{"objects", map({})}, {"x", f}})); };
  expect_open(with(std::string("\xf9\x7e\x00", 3)));                               // the NaN
  expect_open(with(std::string("\xf9\x3e\x00", 3)));                               // 1.5
  expect_open(with(std::string("\xfa\x3f\x8c\xcc\xcd", 5)));                       // 1.1f needs f32
  expect_open(with(std::string("\xfb\x3f\xf1\x99\x99\x99\x99\x99\x9a", 9)));       // 1.1 needs f64
  expect_reject(with(std::string("\xfa\x33\x80\x00\x00", 5)), "CborDeterminism");  // 2^-24: an f16 subnormal
  expect_open(with(std::string("\xfa\x33\xc0\x00\x00", 5)));                       // 1.5 * 2^-24: not one
  expect_reject(with(std::string("\xf9\x7e\x01", 3)), "CborDeterminism");          // NaN payload
  expect_reject(with(std::string("\xf9\xfe\x00", 3)), "CborDeterminism");          // -NaN
  expect_reject(with(std::string("\xfa\x7f\xc0\x00\x00", 5)), "CborDeterminism");  // f32 NaN
  expect_reject(with(std::string("\xfa\x3f\xc0\x00\x00", 5)), "CborDeterminism");  // 1.5 as f32
  expect_reject(with(std::string("\xfa\x7f\x80\x00\x00", 5)), "CborDeterminism");  // inf as f32
  expect_reject(with(std::string("\xfb\x3f\xf8\x00\x00\x00\x00\x00\x00", 9)), "CborDeterminism");  // 1.5 as f64
  expect_reject(with(std::string("\xfb\x3f\xf1\x99\x99\xa0\x00\x00\x00", 9)), "CborDeterminism");  // 1.1f as f64
}

TEST(V2Cbor, DepthCountsFromTheRoot) {
  // The root map is level 0; its value "x" is level 1; 31 more arrays put
  // the innermost integer at level 32: allowed. One more is not.
  auto nest = [](int arrays) {
    std::string v = u(0);
    for (int i = 0; i < arrays; ++i) v = arr({v});
    return raw_manifest(map({{"objects", map({})}, {"x", v}}));
  };
  expect_open(nest(31));
  expect_reject(nest(32), "CborDepth", ZT_E_CBOR_DEPTH);
}

// ---- §3.2-§3.5: schema -------------------------------------------------

TEST(V2Schema, UnknownKeysAreIgnoredAtEveryLevel) {
  auto img = assemble(
      4104, map({{"objects", map({{"t", object({8}, "dense", {{"data", part("u8", 4096, 8, {{"zz.new", u(1)}})}},
                                               {{"zz.obj", t("x")}})}})},
                 {"zz.root", arr({u(1)})}}));
  auto o = open_image(img);
  ASSERT_EQ(o->status, ZT_OK) << o->message;
  uint8_t *extra = nullptr;
  size_t len = 0;
  ASSERT_EQ(zt_file_extra_fields_cbor(o->file, &extra, &len), ZT_OK);
  EXPECT_GT(len, 0u);
  zt_free(extra);
}

TEST(V2Schema, PartsAndFields) {
  expect_reject(assemble(8, manifest({{"t", object({8}, "dense", {})}})), "Schema");  // no parts
  expect_reject(one_dense({{"encoding", t("x.z/1")}}), "Schema");
  expect_reject(one_dense({{"decoded_length", u(8)}}), "Schema");
  expect_open(one_dense({{"encoding", t("x.z/1")}, {"decoded_length", u(8)}}));
  expect_reject(assemble(4104, manifest({{"t", object({8}, "dense", {{"data", map({{"dtype", t("u8")}})}})}})),
                "Schema");
  expect_reject(assemble(4104, manifest({{"t", object({8}, "dense", {{"data", map({{"blob", uints({4096, 8})}})}})}})),
                "Schema");
  expect_reject(one_dense({}, "bool"), "Schema", ZT_E_DTYPE);  // bool is a logical type, not a dtype
  expect_reject(one_dense({{"digest", t("xxh3:ABCDEF0123456789")}}), "Schema", ZT_E_DIGEST_FORMAT);
  expect_reject(one_dense({{"type", t("bool")}}, "i8"), "Schema");
  expect_reject(
      assemble(4104,
               map({{"objects",
                     map({{"t", map({{"shape", uints({8})}, {"parts", map({{"data", part("u8", 4096, 8)}})}})}})}})),
      "Schema");  // no layout
}

TEST(V2Schema, Names) {
  expect_open(assemble(4104, manifest({{std::string(1024, 'n'), dense("u8", {8}, 4096, 8)}})));
  expect_reject(assemble(4104, manifest({{std::string(1025, 'n'), dense("u8", {8}, 4096, 8)}})), "Name", ZT_E_NAME);
  expect_reject(assemble(4104, manifest({{"t", object({8}, "dense", {{"", part("u8", 4096, 8)}})}})), "Name");
  expect_reject(
      assemble(4104, manifest({{"t", object({8}, "dense", {{std::string("d\0a", 3), part("u8", 4096, 8)}})}})), "Name");
  expect_reject(assemble(4104, manifest({{"t", dense("u8", {8}, 4096, 8)}}, {{"attributes", map({{"", u(0)}})}})),
                "Name");
  expect_reject(assemble(4104, manifest({{"t", object({8}, "dense", {{"data", part("u8", 4096, 8)}},
                                                      {{"attributes", map({{std::string(1025, 'k'), u(0)}})}})}})),
                "Name");
}

TEST(V2Schema, Shapes) {
  std::vector<uint64_t> r64(64, 1), r65(65, 1);
  expect_open(assemble(4097, manifest({{"t", dense("u8", r64, 4096, 1)}})));
  expect_reject(assemble(4097, manifest({{"t", dense("u8", r65, 4096, 1)}})), "Shape", ZT_E_SHAPE);
  expect_reject(assemble(4104, manifest({{"t", dense("u8", {uint64_t{1} << 32, uint64_t{1} << 32}, 4096, 8)}})),
                "Shape");
  // A product that fits but whose byte size does not.
  expect_reject(assemble(4104, manifest({{"t", dense("f64", {uint64_t{1} << 62}, 4096, 8)}})), "Shape");
  // A zero dimension makes the product 0 whatever the others.
  expect_open(assemble(4096, manifest({{"t", dense("f32", {0, UINT64_MAX}, 4096, 0)}})));
}

// ---- §2.4, §3.6: blobs -------------------------------------------------

TEST(V2Blobs, AlignmentBoundsOverlap) {
  expect_reject(assemble(8200, manifest({{"t", dense("u8", {8}, 8192 + 512, 8)}})), "BlobAlignment");
  expect_reject(assemble(4105, manifest({{"t", dense("u8", {8}, 4096, 8)}, {"u", dense("u8", {1}, 4096 + 8, 1)}})),
                "BlobAlignment");
  // Bounds: the data region ends 40 bytes before EOF, not at the manifest.
  auto img = assemble(4104, manifest({{"t", dense("u8", {8}, 4096, 8)}}));
  expect_reject(assemble(4104, manifest({{"t", dense("u8", {uint64_t{1} << 20}, 4096, uint64_t{1} << 20)}})),
                "BlobBounds", ZT_E_BOUNDS);
  expect_reject(assemble(4104, manifest({{"t", dense("u8", {8}, UINT64_MAX - 4095, 8)}})), "BlobBounds");
  // A blob over the manifest blob overlaps it.
  expect_reject(assemble(4104, manifest({{"t", dense("u8", {4097}, 4096, 4097)}})), "BlobOverlap", ZT_E_OVERLAP);
  // Identical references share; a sub-range does not.
  expect_open(assemble(8192, manifest({{"a", dense("u8", {8}, 4096, 8)}, {"b", dense("u8", {8}, 4096, 8)}})));
  expect_reject(assemble(8192, manifest({{"a", dense("u8", {8}, 4096, 8)}, {"b", dense("u8", {4}, 4096, 4)}})),
                "BlobOverlap");
  // Zero-length blobs are exempt from overlap, not from alignment.
  expect_open(assemble(8192, manifest({{"a", dense("u8", {8}, 4096, 8)}, {"z", dense("u8", {0}, 4096, 0)}})));
  // Overlap is checked after sorting: the pair far apart in manifest order.
  Fields many;
  for (int i = 0; i < 50; ++i) many.push_back({"o" + std::to_string(100 + i), dense("u8", {8}, 4096 * (1 + i), 8)});
  many.push_back({"zz", dense("u8", {4096 * 2}, 4096 * 3, 4096 * 2)});
  expect_reject(assemble(4096 * 52, manifest(many)), "BlobOverlap");
}

// ---- §7: the shard table ----------------------------------------------

std::string table(const std::string &name, Fields entry) {
  return map({{name, map(entry)}});
}
Fields good_entry() {
  return {{"size", u(1 << 20)}, {"digest", t("xxh3:00112233445566aa")}};
}

TEST(V2Shards, TableAndReferences) {
  auto with = [](const std::string &tbl, const std::string &ref = "base") {
    return assemble(8, manifest({{"t", dense("u8", {8}, 4096, 8, {{"shard", t(ref)}})}}, {{"shards", tbl}}));
  };
  expect_open(with(table("base", good_entry())));
  expect_reject(with(table("base", good_entry()), "other"), "ShardRef");
  expect_reject(assemble(8, manifest({{"t", dense("u8", {8}, 4096, 8, {{"shard", t("base")}})}})), "ShardRef");
  expect_reject(with(table("base", {{"size", u(1 << 20)}})), "Schema");
  expect_reject(with(table("base", {{"digest", t("xxh3:00112233445566aa")}})), "Schema");
  expect_reject(with(table("base", {{"size", u(47)}, {"digest", t("xxh3:00112233445566aa")}})), "Schema");
  expect_reject(with(table(std::string(65, 'a'), good_entry()), std::string(65, 'a')), "ShardName");
  expect_open(with(table(std::string(64, 'a'), good_entry()), std::string(64, 'a')));
  expect_reject(with(table("a b", good_entry()), "a b"), "ShardName");
  // Bounds in a shard are checked against its declared size, from the root.
  expect_reject(assemble(8, manifest({{"t", dense("u8", {1 << 20}, 4096, 1 << 20, {{"shard", t("base")}})}},
                                     {{"shards", table("base", good_entry())}})),
                "BlobBounds");
  // A part in another shard opens; opened from memory, no other file is
  // reachable (v2_shards_test.cc resolves shards of roots opened by path).
  auto o = open_image(with(table("base", good_entry())));
  ASSERT_EQ(o->status, ZT_OK);
  uint8_t buf[8];
  size_t n = 0;
  EXPECT_EQ(zt_component_read(obj_of(*o, "t"), 0, buf, 8, &n), ZT_E_UNSUPPORTED);
  EXPECT_NE(std::string(zt_last_error()).find("shard 'base'"), std::string::npos);
  EXPECT_EQ(zt_component_read_stored(obj_of(*o, "t"), 0, buf, 8, &n), ZT_E_UNSUPPORTED);
}

// ---- §5, Appendix A: layouts and logical types ------------------------

TEST(V2Layouts, DenseSizeFunctions) {
  auto typed = [](const std::string &dtype, const std::string &type, std::vector<uint64_t> shape, uint64_t len) {
    return assemble(4096 + len, manifest({{"t", dense(dtype, shape, 4096, len, {{"type", t(type)}})}}));
  };
  expect_open(typed("f32", "complex64", {3}, 24));
  expect_reject(typed("f32", "complex64", {3}, 12), "DenseSize", ZT_E_LENGTH);
  expect_open(typed("f64", "complex128", {2}, 32));
  expect_reject(typed("f64", "complex128", {2}, 16), "DenseSize");
  expect_open(typed("u8", "f4_e2m1", {7}, 4));
  expect_reject(typed("u8", "f4_e2m1", {7}, 7), "DenseSize");
  expect_open(typed("u8", "f8_e8m0", {5}, 5));
  expect_reject(typed("u8", "f8_e8m0", {5}, 4), "DenseSize");
  expect_reject(one_dense({}, "f16", {3}, 8), "DenseSize");
  // Dense has exactly one part, "data".
  expect_reject(assemble(4104, manifest({{"t", object({8}, "dense", {{"values", part("u8", 4096, 8)}})}})),
                "LayoutRule");
}

TEST(V2Types, MappingOntoTheCAbi) {
  auto img = assemble(4096 * 3 + 16, manifest({{"b", dense("u8", {4}, 4096, 4, {{"type", t("bool")}})},
                                               {"c", dense("f32", {2}, 8192, 16, {{"type", t("complex64")}})},
                                               {"h", dense("bf16", {8}, 12288, 16)}}));
  plant(img, 4096, {0, 1, 1, 0});
  auto o = open_image(img);
  ASSERT_EQ(o->status, ZT_OK) << o->message;
  zt_component_info ci{};
  ci.struct_size = sizeof ci;
  ASSERT_EQ(zt_object_component(obj_of(*o, "b"), 0, &ci), ZT_OK);
  EXPECT_EQ(ci.dtype, ZT_BOOL);
  EXPECT_STREQ(ci.dtype_name, "u8");
  EXPECT_STREQ(ci.logical_type, "bool");
  ASSERT_EQ(zt_object_component(obj_of(*o, "c"), 0, &ci), ZT_OK);
  EXPECT_EQ(ci.dtype, ZT_F32);
  EXPECT_EQ(ci.ratio, 2u);
  ASSERT_EQ(zt_object_component(obj_of(*o, "h"), 0, &ci), ZT_OK);
  EXPECT_EQ(ci.dtype, ZT_BF16);
  zt_object_info oi{};
  oi.struct_size = sizeof oi;
  ASSERT_EQ(zt_object_get_info(obj_of(*o, "h"), &oi), ZT_OK);
  EXPECT_STREQ(oi.format, "dense");
  uint8_t buf[4];
  size_t n = 0;
  ASSERT_EQ(zt_component_read(obj_of(*o, "b"), 0, buf, 4, &n), ZT_OK);
  EXPECT_EQ(buf[1], 1);
}

TEST(V2Types, ContentRulesOnReadAndVerify) {
  auto img = assemble(8192 + 3, manifest({{"b", dense("u8", {4}, 4096, 4, {{"type", t("bool")}})},
                                          {"f", dense("u8", {5}, 8192, 3, {{"type", t("f4_e2m1")}})}}));
  plant(img, 4096, {0, 1, 2, 0});
  plant(img, 8192, {0x21, 0x43, 0x05});
  {
    auto o = open_image(img);
    ASSERT_EQ(o->status, ZT_OK) << o->message;
    uint8_t buf[8];
    size_t n = 0;
    EXPECT_EQ(zt_component_read(obj_of(*o, "b"), 0, buf, 8, &n), ZT_E_BOOL_VALUE);
    EXPECT_NE(std::string(zt_last_error()).find("rejected (LayoutData)"), std::string::npos);
    const void *view = nullptr;
    EXPECT_EQ(zt_component_view(obj_of(*o, "b"), 0, &view, &n), ZT_E_BOOL_VALUE);
    zt_verify_result r;
    EXPECT_EQ(zt_component_verify(obj_of(*o, "b"), 0, &r), ZT_E_BOOL_VALUE);
    EXPECT_EQ(zt_component_read_stored(obj_of(*o, "b"), 0, buf, 8, &n), ZT_OK);  // structural: exempt
    EXPECT_EQ(zt_component_read(obj_of(*o, "f"), 0, buf, 8, &n), ZT_OK);
    // Five packed elements in three bytes: no N-d slice of them.
    const uint64_t start = 0, stop = 5;
    EXPECT_EQ(zt_component_read_slice(obj_of(*o, "f"), 0, 1, &start, &stop, buf, 8), ZT_E_UNSUPPORTED);
  }
  plant(img, 8192 + 2, {0x15});
  auto o = open_image(img);
  uint8_t buf[8];
  size_t n = 0;
  EXPECT_EQ(zt_component_read(obj_of(*o, "f"), 0, buf, 8, &n), ZT_E_VALUE);
  EXPECT_NE(std::string(zt_last_error()).find("rejected (LayoutData)"), std::string::npos);
  EXPECT_EQ(zt_component_read_range(obj_of(*o, "f"), 0, 0, 3, buf, 8), ZT_E_VALUE);
}

TEST(V2Types, UnknownIdsAreStructuralOnly) {
  auto img = assemble(8192 + 5,
                      manifest({{"lt", dense("u8", {3}, 4096, 8, {{"type", t("x.future/1")}})},
                                {"en", dense("u8", {8}, 8192, 5, {{"encoding", t("x.z/1")}, {"decoded_length", u(8)}})},
                                {"ly", object({2}, "x.custom/1", {{"a", part("u8", 4096, 8)}})}}));
  auto o = open_image(img);
  ASSERT_EQ(o->status, ZT_OK) << o->message;
  uint8_t buf[16];
  size_t n = 0;
  for (const char *name : {"lt", "en"}) {
    EXPECT_EQ(zt_component_read(obj_of(*o, name), 0, buf, 16, &n), ZT_E_UNSUPPORTED) << name;
    EXPECT_NE(std::string(zt_last_error()).find(name[0] == 'l' ? "'x.future/1'" : "'x.z/1'"), std::string::npos);
    EXPECT_EQ(zt_component_read_stored(obj_of(*o, name), 0, buf, 16, &n), ZT_OK) << name;
  }
  ASSERT_EQ(zt_component_read_stored(obj_of(*o, "lt"), 0, buf, 16, &n), ZT_OK);
  EXPECT_EQ(n, 8u);
  EXPECT_EQ(buf[0], 0xab);
  zt_component_info ci{};
  ci.struct_size = sizeof ci;
  ASSERT_EQ(zt_object_component(obj_of(*o, "en"), 0, &ci), ZT_OK);
  EXPECT_STREQ(ci.encoding_name, "x.z/1");
  EXPECT_EQ(ci.length, 5u);
  EXPECT_EQ(ci.decoded_length, 8u);
  // An unknown layout: the object is not interpreted, its raw parts read.
  zt_object_info oi{};
  oi.struct_size = sizeof oi;
  ASSERT_EQ(zt_object_get_info(obj_of(*o, "ly"), &oi), ZT_OK);
  EXPECT_STREQ(oi.format, "x.custom/1");
  EXPECT_EQ(zt_component_read(obj_of(*o, "ly"), 0, buf, 16, &n), ZT_OK);
  double d[2];
  EXPECT_NE(zt_object_densify(obj_of(*o, "ly"), d, sizeof d, &n), ZT_OK);
}

TEST(V2Digests, Xxh3AndSha256OverDecodedBytes) {
  // xxh3 of eight 0xab (the corpus's verify-ok) and sha256 of the same.
  auto img = assemble(
      12288 + 8,
      manifest(
          {{"x", dense("u8", {8}, 4096, 8, {{"digest", t("xxh3:f88e5e79bd7c033d")}})},
           {"s", dense("u8", {8}, 8192, 8,
                       {{"digest", t("sha256:248626bf15d50a4b5fb4570de665c074271c3d73f9c10cd29491dc9f119d2e3b")}})},
           {"w", dense("u8", {8}, 12288, 8,
                       {{"digest", t("sha256:248626bf15d50a4b5fb4570de665c074271c3d73f9c10cd29491dc9f119d2e30")}})}}));
  auto o = open_image(img);
  ASSERT_EQ(o->status, ZT_OK) << o->message;
  zt_verify_result r;
  EXPECT_EQ(zt_component_verify(obj_of(*o, "x"), 0, &r), ZT_OK);
  EXPECT_EQ(r, ZT_VERIFY_OK);
  EXPECT_EQ(zt_component_verify(obj_of(*o, "s"), 0, &r), ZT_OK);
  EXPECT_EQ(r, ZT_VERIFY_OK);
  EXPECT_EQ(zt_component_verify(obj_of(*o, "w"), 0, &r), ZT_E_DIGEST_MISMATCH);
  EXPECT_NE(std::string(zt_last_error()).find("rejected (Digest)"), std::string::npos);
  // Verify-on-read checks it before handing bytes out.
  auto img2 = img;
  img2[4096] = 0;
  zt_open_options oo;
  zt_open_options_init(&oo);
  oo.verify_on_read = 1;
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open_memory(img2.data(), img2.size(), &oo, &f), ZT_OK);
  const zt_object *x = nullptr;
  ASSERT_EQ(zt_file_object_by_name(f, "x", 1, &x), ZT_OK);
  uint8_t buf[8];
  size_t n;
  EXPECT_EQ(zt_component_read(x, 0, buf, 8, &n), ZT_E_DIGEST_MISMATCH);
  EXPECT_NE(std::string(zt_last_error()).find("rejected (Digest)"), std::string::npos);
  zt_close(f);
}

TEST(V2Layouts, SparseCsrThroughTheCompositeApi) {
  auto csr = [](std::vector<uint64_t> idx, std::vector<uint64_t> ptr, const std::string &idt = "u64") {
    auto img = assemble(12300, manifest({{"m", object({2, 3}, "zt.sparse_csr/1",
                                                      {{"indices", part(idt, 4096, 24)},
                                                       {"indptr", part(idt, 8192, 24)},
                                                       {"values", part("f32", 12288, 12)}})}}));
    auto le = [](std::vector<uint64_t> v) {
      std::vector<uint8_t> b;
      for (uint64_t x : v)
        for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(x >> (8 * i)));
      return b;
    };
    plant(img, 4096, le(idx));
    plant(img, 8192, le(ptr));
    return img;
  };
  auto o = open_image(csr({0, 2, 1}, {0, 2, 3}));
  ASSERT_EQ(o->status, ZT_OK) << o->message;
  EXPECT_EQ(zt_object_validate(obj_of(*o, "m")), ZT_OK) << zt_last_error();
  zt_sparse_info si{};
  si.struct_size = sizeof si;
  ASSERT_EQ(zt_object_sparse_info(obj_of(*o, "m"), &si), ZT_OK) << zt_last_error();
  EXPECT_EQ(si.nnz, 3u);
  auto bad = open_image(csr({2, 0, 1}, {0, 2, 3}));
  EXPECT_EQ(zt_object_validate(obj_of(*bad, "m")), ZT_E_SPARSE_INDEX);
  EXPECT_NE(std::string(zt_last_error()).find("rejected (LayoutData)"), std::string::npos);
  auto dup = open_image(csr({1, 1, 1}, {0, 2, 3}));  // a repeated column is not increasing
  EXPECT_EQ(zt_object_validate(obj_of(*dup, "m")), ZT_E_SPARSE_INDEX);
  expect_reject(assemble(12300, manifest({{"m", object({6}, "zt.sparse_csr/1",
                                                       {{"indices", part("u64", 4096, 24)},
                                                        {"indptr", part("u64", 8192, 24)},
                                                        {"values", part("f32", 12288, 12)}})}})),
                "LayoutRule");
  expect_reject(assemble(12300, manifest({{"m", object({2, 3}, "zt.sparse_csr/1",
                                                       {{"indices", part("u64", 4096, 24)},
                                                        {"indptr", part("u32", 8192, 12)},
                                                        {"values", part("f32", 12288, 12)}})}})),
                "LayoutRule");
}

}  // namespace

namespace {

// zt_migrate rewrites a v2 file as 1.2: a bool part becomes the 1.2 dtype
// bool (no logical type left over), an xxh3 digest a crc32c one.
TEST(V2Migrate, BoolAndXxh3BecomeTheir1xForms) {
  auto img = assemble(
      4100,
      manifest({{"b", dense("u8", {4}, 4096, 4, {{"type", t("bool")}, {"digest", t("xxh3:0000000000000000")}})}}));
  plant(img, 4096, {0, 1, 1, 0});
  // The digest must match for the copy to be made: compute it.
  {
    const uint64_t h = XXH3_64bits(img.data() + 4096, 4);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    img = assemble(
        4100,
        manifest({{"b", dense("u8", {4}, 4096, 4, {{"type", t("bool")}, {"digest", t(std::string("xxh3:") + hex)}})}}));
    plant(img, 4096, {0, 1, 1, 0});
  }
  // A folder of the test's own (test_util.h: every platform).
  zttest::TempDir dir;
  const std::string in_path = dir.file("in.zt");
  const char *in = in_path.c_str();
  FILE *fin = std::fopen(in, "wb");
  ASSERT_NE(fin, nullptr);
  ASSERT_EQ(std::fwrite(img.data(), 1, img.size(), fin), img.size());
  std::fclose(fin);
  const std::string out = in_path + ".out.zt";
  zt_migrate_options mo;
  zt_migrate_options_init(&mo);
  ASSERT_EQ(zt_migrate(in, out.c_str(), &mo), ZT_OK) << zt_last_error();
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(out.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  const char *version = nullptr;
  ASSERT_EQ(zt_file_version(f, &version), ZT_OK);
  EXPECT_STREQ(version, "1.2.0");
  const zt_object *o = nullptr;
  ASSERT_EQ(zt_file_object_by_name(f, "b", 1, &o), ZT_OK);
  zt_component_info ci{};
  ci.struct_size = sizeof ci;
  ASSERT_EQ(zt_object_component(o, 0, &ci), ZT_OK);
  EXPECT_EQ(ci.dtype, ZT_BOOL);
  EXPECT_EQ(ci.logical_type, nullptr);
  EXPECT_EQ(ci.digest_alg, ZT_DIGEST_CRC32C);
  uint8_t buf[4];
  size_t n = 0;
  ASSERT_EQ(zt_component_read(o, 0, buf, 4, &n), ZT_OK);
  EXPECT_EQ(buf[2], 1);
  zt_close(f);
}

}  // namespace

namespace {

// A sharded set (zt_open_set, a JSON index) whose files are format v2: each
// shard is opened by the same zt_open, the generation decided by its magic.
TEST(V2Set, V2FilesServeAsTheShardsOfASet) {
  zttest::TempDir dir;
  const std::string d = dir.path();
  auto put = [&](const std::string &name, const std::vector<uint8_t> &b) {
    FILE *f = std::fopen((d + "/" + name).c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(b.data(), 1, b.size(), f), b.size());
    std::fclose(f);
  };
  auto one = assemble(4104, manifest({{"a", dense("u8", {8}, 4096, 8)}}), 0x11);
  auto two = assemble(4104, manifest({{"b", dense("u8", {8}, 4096, 8)}}), 0x22);
  put("m-1.zt", one);
  put("m-2.zt", two);
  const std::string index = R"({"weight_map": {"a": "m-1.zt", "b": "m-2.zt"}})";
  put("m.zt.index.json", std::vector<uint8_t>(index.begin(), index.end()));
  zt_set *s = nullptr;
  ASSERT_EQ(zt_open_set((d + "/m.zt.index.json").c_str(), nullptr, &s), ZT_OK) << zt_last_error();
  const zt_object *b = nullptr;
  ASSERT_EQ(zt_set_object_by_name(s, "b", 1, &b), ZT_OK) << zt_last_error();
  uint8_t buf[8];
  size_t n = 0;
  ASSERT_EQ(zt_component_read(b, 0, buf, 8, &n), ZT_OK);
  EXPECT_EQ(buf[0], 0x22);
  zt_set_close(s);
}

}  // namespace
