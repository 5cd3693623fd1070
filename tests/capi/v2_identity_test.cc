// Model identity of zTensor v2 through the C ABI: the content digest
// (spec §6.4) agrees across placements, orders and encodings of the same
// tensors, differs for different tensors, and is undefined (never
// approximated) when a part has no digest.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"
#include "v2_image.h"
#include "ztensor.h"

using zttest::TempDir;

namespace {

struct Tensor {
  std::string name;
  std::vector<uint64_t> shape;
  zt_dtype dtype;
  std::vector<uint8_t> bytes;
};

std::vector<uint8_t> f32s(std::initializer_list<float> vals) {
  std::vector<uint8_t> out(vals.size() * 4);
  std::memcpy(out.data(), vals.begin(), out.size());
  return out;
}

// canonical: 64 KiB placement, name order; else `alignment`, the order
// given, `encoding` and `digest` for every part.
void write_v2(const std::string &path, const std::vector<Tensor> &ts, bool canonical, uint64_t alignment = 0,
              zt_encoding encoding = ZT_ENCODING_RAW, zt_digest_alg digest = ZT_DIGEST_XXH3) {
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  wo.format = 2;
  wo.canonical = canonical ? 1 : 0;
  wo.v2_digest = digest;
  wo.alignment = alignment;
  wo.encoding = encoding;
  zt_writer *w = nullptr;
  ASSERT_EQ(ZT_OK, zt_writer_create(path.c_str(), &wo, &w)) << zt_last_error();
  for (const Tensor &t : ts)
    ASSERT_EQ(ZT_OK, zt_writer_add_dense(w, t.name.data(), t.name.size(), t.dtype, t.shape.data(), t.shape.size(),
                                         t.bytes.data(), t.bytes.size(), nullptr))
        << zt_last_error();
  ASSERT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
}

zt_status content_digest(const std::string &path, zt_digest_alg alg, std::string *out) {
  zt_file *f = nullptr;
  zt_status st = zt_open(path.c_str(), nullptr, &f);
  if (st != ZT_OK) return st;
  size_t len = 0;
  st = zt_file_content_digest(f, alg, nullptr, 0, &len);
  if (st == ZT_OK) {
    std::vector<char> buf(len + 1);
    st = zt_file_content_digest(f, alg, buf.data(), buf.size(), &len);
    if (st == ZT_OK) *out = std::string(buf.data(), len);
  }
  zt_close(f);
  return st;
}

std::string digest_of(const std::string &path, zt_digest_alg alg = ZT_DIGEST_SHA256) {
  std::string d;
  EXPECT_EQ(ZT_OK, content_digest(path, alg, &d)) << zt_last_error();
  return d;
}

std::vector<Tensor> model() {
  return {{"a", {4}, ZT_F32, f32s({1, 2, 3, 4})}, {"b", {300}, ZT_U8, std::vector<uint8_t>(300, 9)}};
}

std::string slurp(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "rb");
  std::string s;
  char buf[4096];
  size_t n;
  while (f && (n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  if (f) std::fclose(f);
  return s;
}

}  // namespace

TEST(V2ContentDigest, PlacementAndOrderDoNotReachIt) {
  TempDir dir;
  const std::string canonical = dir.file("canonical.zt"), floor = dir.file("floor.zt");
  write_v2(canonical, model(), true);
  std::vector<Tensor> reversed = model();
  std::swap(reversed[0], reversed[1]);
  write_v2(floor, reversed, false, 4096);
  ASSERT_NE(slurp(canonical), slurp(floor)) << "the files really differ";
  for (zt_digest_alg alg : {ZT_DIGEST_SHA256, ZT_DIGEST_XXH3}) {
    const std::string d = digest_of(canonical, alg);
    EXPECT_EQ(d, digest_of(floor, alg));
    EXPECT_EQ(0u, d.rfind(alg == ZT_DIGEST_SHA256 ? "sha256:" : "xxh3:", 0)) << d;
    EXPECT_EQ(d.size(), alg == ZT_DIGEST_SHA256 ? 7u + 64 : 5u + 16);
  }
}

TEST(V2ContentDigest, EncodingDoesNotReachIt) {
  TempDir dir;
  const std::string raw = dir.file("raw.zt"), zstd = dir.file("zstd.zt");
  write_v2(raw, model(), false, 65536);
  write_v2(zstd, model(), false, 65536, ZT_ENCODING_ZSTD);
  ASSERT_NE(slurp(raw), slurp(zstd));
  ASSERT_NE(std::string::npos, slurp(zstd).find("zt.zstd-seekable/1")) << "the parts really are encoded";
  EXPECT_EQ(digest_of(raw), digest_of(zstd));
}

TEST(V2ContentDigest, DifferentModelsDiffer) {
  TempDir dir;
  const std::string base = dir.file("base.zt");
  write_v2(base, {{"w", {4}, ZT_F32, f32s({1, 2, 3, 4})}}, true);
  const std::string expected = digest_of(base);
  struct Case {
    const char *why;
    Tensor t;
  } cases[] = {
      {"a different value", {"w", {4}, ZT_F32, f32s({1, 2, 3, 4.5})}},
      {"a different name", {"v", {4}, ZT_F32, f32s({1, 2, 3, 4})}},
      {"a different shape", {"w", {2, 2}, ZT_F32, f32s({1, 2, 3, 4})}},
      {"a different dtype", {"w", {4}, ZT_I32, f32s({1, 2, 3, 4})}},
  };
  int n = 0;
  for (const Case &c : cases) {
    const std::string path = dir.file("changed" + std::to_string(n++) + ".zt");
    write_v2(path, {c.t}, true);
    EXPECT_NE(expected, digest_of(path)) << c.why;
  }
  // Digested parts by sha256 instead of xxh3: the part digests are part of
  // the value (§6.4 keeps each "<algo>:<hex>"), so the answer changes.
  const std::string sha = dir.file("sha.zt");
  write_v2(sha, {{"w", {4}, ZT_F32, f32s({1, 2, 3, 4})}}, false, 65536, ZT_ENCODING_RAW, ZT_DIGEST_SHA256);
  EXPECT_NE(expected, digest_of(sha));
}

// One file, or a root whose part lives in a shard (§7): the same model.
// The root is built by hand (tests/support/v2_image.h): our writer writes
// no shard table.
TEST(V2ContentDigest, ShardingDoesNotReachIt) {
  TempDir dir;
  const std::string single = dir.file("single.zt");
  std::vector<float> sevens(64, 7.0f);
  std::vector<uint8_t> bytes(256);
  std::memcpy(bytes.data(), sevens.data(), 256);
  write_v2(single, {{"w", {64}, ZT_F32, bytes}}, true);
  char part_digest[32];  // of the stored (little-endian) bytes
  const std::vector<uint8_t> stored = zttest::host_to_le(bytes.data(), bytes.size(), 4);
  std::snprintf(part_digest, sizeof part_digest, "xxh3:%016llx",
                static_cast<unsigned long long>(XXH3_64bits(stored.data(), stored.size())));
  using namespace v2img;
  const std::string m =
      manifest({{"w", dense("f32", {64}, 4096, 256, {{"shard", t("part")}, {"digest", t(part_digest)}})}},
               {{"shards", map({{"part", map({{"size", u(1 << 20)}, {"digest", t("xxh3:0011223344556677")}})}})}});
  const std::vector<uint8_t> root = assemble(4096, m);
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open_memory(root.data(), root.size(), nullptr, &f)) << zt_last_error();
  char d[80];
  size_t len = 0;
  ASSERT_EQ(ZT_OK, zt_file_content_digest(f, ZT_DIGEST_SHA256, d, sizeof d, &len)) << zt_last_error();
  zt_close(f);
  EXPECT_EQ(digest_of(single), std::string(d, len));
}

TEST(V2ContentDigest, UndefinedWithoutPartDigests) {
  TempDir dir;
  const std::string path = dir.file("nodigest.zt");
  write_v2(path, {{"a", {1}, ZT_U8, {1}}, {"b.weight", {1}, ZT_U8, {2}}}, false, 65536, ZT_ENCODING_RAW,
           ZT_DIGEST_NONE);
  std::string d;
  EXPECT_EQ(ZT_E_UNSUPPORTED, content_digest(path, ZT_DIGEST_SHA256, &d));
  const std::string msg = zt_last_error();
  EXPECT_NE(std::string::npos, msg.find("'a'")) << msg;
  EXPECT_NE(std::string::npos, msg.find("'data'")) << msg;
  EXPECT_NE(std::string::npos, msg.find("no digest")) << msg;
  EXPECT_TRUE(d.empty());
}

TEST(V2ContentDigest, BufferSizeQueryAndArguments) {
  TempDir dir;
  const std::string path = dir.file("m.zt");
  write_v2(path, model(), true);
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open(path.c_str(), nullptr, &f)) << zt_last_error();
  size_t len = 0;
  ASSERT_EQ(ZT_OK, zt_file_content_digest(f, ZT_DIGEST_XXH3, nullptr, 0, &len));
  EXPECT_EQ(21u, len);
  char small[21];
  size_t len2 = 0;
  EXPECT_EQ(ZT_E_BUFFER_TOO_SMALL, zt_file_content_digest(f, ZT_DIGEST_XXH3, small, sizeof small, &len2));
  EXPECT_EQ(21u, len2) << "the size is still reported";
  char buf[22];
  ASSERT_EQ(ZT_OK, zt_file_content_digest(f, ZT_DIGEST_XXH3, buf, sizeof buf, &len2));
  EXPECT_EQ(21u, std::strlen(buf));
  EXPECT_EQ(ZT_E_INVALID_ARG, zt_file_content_digest(f, ZT_DIGEST_CRC32C, buf, sizeof buf, &len2));
  EXPECT_EQ(ZT_E_INVALID_ARG, zt_file_content_digest(f, ZT_DIGEST_XXH3, buf, sizeof buf, nullptr));
  zt_close(f);
  EXPECT_EQ(ZT_E_INVALID_ARG, zt_file_content_digest(nullptr, ZT_DIGEST_XXH3, buf, sizeof buf, &len2));
}

TEST(V2ContentDigest, NotDefinedFor1x) {
  TempDir dir;
  const std::string path = dir.file("v1.zt");
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  zt_writer *w = nullptr;
  ASSERT_EQ(ZT_OK, zt_writer_create(path.c_str(), &wo, &w));
  const uint64_t shape[1] = {1};
  const uint8_t b = 1;
  ASSERT_EQ(ZT_OK, zt_writer_add_dense(w, "a", 1, ZT_U8, shape, 1, &b, 1, nullptr));
  ASSERT_EQ(ZT_OK, zt_writer_finish(w));
  std::string d;
  EXPECT_EQ(ZT_E_WRONG_FORMAT, content_digest(path, ZT_DIGEST_XXH3, &d));
}

// ---- Canonical form (spec §6.3) ----

namespace {

// The rule zt_file_canonical reports (0: canonical) and its message.
uint32_t canonical_rule(const std::string &path, std::string *message = nullptr) {
  zt_file *f = nullptr;
  EXPECT_EQ(ZT_OK, zt_open(path.c_str(), nullptr, &f)) << zt_last_error();
  if (!f) return 99;
  uint32_t rule = 99;
  char *msg = nullptr;
  EXPECT_EQ(ZT_OK, zt_file_canonical(f, &rule, &msg)) << zt_last_error();
  if (message) *message = msg ? msg : "";
  if (rule == 0) EXPECT_EQ(nullptr, msg);
  zt_free(msg);
  zt_close(f);
  return rule;
}

std::string source_file(const std::string &rel) {
  const char *root = std::getenv("ZT_SOURCE_ROOT");
  return std::string(root ? root : ".") + "/tests/data/" + rel;
}

void put(const std::string &path, const std::string &bytes) {
  FILE *f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(nullptr, f);
  ASSERT_EQ(bytes.size(), std::fwrite(bytes.data(), 1, bytes.size(), f));
  std::fclose(f);
}

uint64_t le64(const std::string &b, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}

}  // namespace

TEST(V2Canonical, WhatTheCanonicalWriterWritesIsCanonical) {
  TempDir dir;
  const std::string path = dir.file("c.zt");
  std::vector<Tensor> ts = {{"a.bias", {4}, ZT_F32, f32s({1, 1, 1, 1})},
                            {"a.weight", {2, 4}, ZT_BF16, std::vector<uint8_t>(16, 2)},
                            {"tied", {2, 4}, ZT_BF16, std::vector<uint8_t>(16, 2)},  // shares a.weight's blob
                            {"empty", {0}, ZT_F32, {}},
                            {"empty2", {0, 3}, ZT_U8, {}},
                            {"z.last", {1}, ZT_U8, {7}}};
  write_v2(path, ts, true);
  std::string msg;
  EXPECT_EQ(0u, canonical_rule(path, &msg)) << msg;
  const std::string empty = dir.file("e.zt");
  write_v2(empty, {}, true);
  EXPECT_EQ(0u, canonical_rule(empty, &msg)) << msg;
  // The original's own writer's canonical files (tests/data/v2-golden).
  for (const char *g : {"basic.zt", "empty.zt", "layouts.zt", "many.zt", "zeros.zt"})
    EXPECT_EQ(0u, canonical_rule(source_file(std::string("v2-golden/") + g), &msg)) << g << ": " << msg;
}

TEST(V2Canonical, EachRuleBrokenIsNamed) {
  TempDir dir;
  const std::vector<Tensor> two = {{"a", {4}, ZT_F32, f32s({1, 1, 1, 1})}, {"b", {4}, ZT_F32, f32s({2, 2, 2, 2})}};
  struct Case {
    const char *why;
    std::vector<Tensor> ts;
    uint64_t alignment;
    zt_encoding encoding;
    zt_digest_alg digest;
    uint32_t rule;
    const char *says;
  } cases[] = {
      {"4 KiB placement", two, 4096, ZT_ENCODING_RAW, ZT_DIGEST_XXH3, 2, "not a multiple of 65536"},
      {"reverse order", {two[1], two[0]}, 65536, ZT_ENCODING_RAW, ZT_DIGEST_XXH3, 3, "(object, part) order"},
      {"zstd", two, 65536, ZT_ENCODING_ZSTD, ZT_DIGEST_XXH3, 4, "encoding 'zt.zstd-seekable/1'"},
      {"no digest", two, 65536, ZT_ENCODING_RAW, ZT_DIGEST_NONE, 4, "carries no digest"},
      {"sha256 digest", two, 65536, ZT_ENCODING_RAW, ZT_DIGEST_SHA256, 4, "not xxh3"},
      {"a name not in NFC", {{"e\xCC\x81", {1}, ZT_U8, {1}}}, 65536, ZT_ENCODING_RAW, ZT_DIGEST_XXH3, 5, "not in NFC"},
  };
  int n = 0;
  for (const Case &c : cases) {
    const std::string path = dir.file("case" + std::to_string(n++) + ".zt");
    write_v2(path, c.ts, false, c.alignment, c.encoding, c.digest);
    std::string msg;
    EXPECT_EQ(c.rule, canonical_rule(path, &msg)) << c.why << ": " << msg;
    EXPECT_NE(std::string::npos, msg.find("rule " + std::to_string(c.rule) + ": ")) << c.why << ": " << msg;
    EXPECT_NE(std::string::npos, msg.find(c.says)) << c.why << ": " << msg;
  }
  // The same options in name order, 64 KiB, raw, xxh3: canonical, so each
  // case above broke exactly the rule it names.
  const std::string ok = dir.file("ok.zt");
  write_v2(ok, two, false, 65536);
  EXPECT_EQ(0u, canonical_rule(ok));
}

TEST(V2Canonical, ShardTableBreaksRule6) {
  std::string msg;
  canonical_rule(source_file("v2-conformance/valid/shards-table.zt"), &msg);
  EXPECT_NE(std::string::npos, msg.find("rule 6: canonical form is single-file")) << msg;
}

TEST(V2Canonical, DataShardIsNotCanonical) {
  std::string msg;
  EXPECT_EQ(1u, canonical_rule(source_file("v2-conformance/valid/data-shard.zt"), &msg));
  EXPECT_NE(std::string::npos, msg.find("data shard")) << msg;
}

// An old manifest left before the current one (what an append leaves):
// space that belongs to nothing, rule 1.
TEST(V2Canonical, AnUnreferencedSecondManifestBreaksRule1) {
  TempDir dir;
  const std::string path = dir.file("c.zt"), stale = dir.file("stale.zt");
  write_v2(path, model(), true);
  std::string b = slurp(path);
  ASSERT_EQ(0u, canonical_rule(path));
  const uint64_t at = le64(b, b.size() - 40), len = le64(b, b.size() - 32);
  const std::string manifest = b.substr(at, len), footer = b.substr(b.size() - 40);
  std::string moved = b.substr(0, at) + manifest + std::string(65536 - len % 65536, '\0') + manifest + footer;
  const uint64_t new_at = at + len + (65536 - len % 65536);
  for (int i = 0; i < 8; ++i) moved[moved.size() - 40 + i] = static_cast<char>((new_at >> (8 * i)) & 0xff);
  put(stale, moved);
  std::string msg;
  EXPECT_EQ(1u, canonical_rule(stale, &msg));
  EXPECT_NE(std::string::npos, msg.find("belongs to nothing")) << msg;
}

TEST(V2Canonical, Arguments) {
  TempDir dir;
  const std::string v1 = dir.file("v1.zt");
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  zt_writer *w = nullptr;
  ASSERT_EQ(ZT_OK, zt_writer_create(v1.c_str(), &wo, &w));
  ASSERT_EQ(ZT_OK, zt_writer_finish(w));
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open(v1.c_str(), nullptr, &f));
  uint32_t rule = 7;
  EXPECT_EQ(ZT_E_WRONG_FORMAT, zt_file_canonical(f, &rule, nullptr));
  EXPECT_EQ(ZT_E_INVALID_ARG, zt_file_canonical(f, nullptr, nullptr));
  zt_close(f);
}

// Two parts with the same bytes in two blobs: b's blob is overwritten with
// a's bytes and b's digest string with a's (the manifest hash redone), so
// the file is valid and its digests hold.
TEST(V2Canonical, ADuplicateNotSharedBreaksRule3) {
  TempDir dir;
  const std::string path = dir.file("c.zt"), dup = dir.file("dup.zt");
  write_v2(path, {{"a", {4}, ZT_F32, f32s({1, 1, 1, 1})}, {"b", {4}, ZT_F32, f32s({2, 2, 2, 2})}}, true);
  std::string b = slurp(path);
  ASSERT_EQ(0u, canonical_rule(path));
  const uint64_t at = le64(b, b.size() - 40), len = le64(b, b.size() - 32);
  b.replace(131072, 16, b.substr(65536, 16));  // a at 65536, b at 131072 (canonical)
  std::string manifest = b.substr(at, len);
  const size_t da = manifest.find("xxh3:"), db = manifest.find("xxh3:", da + 1);
  ASSERT_NE(std::string::npos, db);
  manifest.replace(db, 21, manifest.substr(da, 21));
  b.replace(at, len, manifest);
  const uint64_t h = XXH3_64bits(manifest.data(), manifest.size());
  for (int i = 0; i < 8; ++i) b[b.size() - 24 + i] = static_cast<char>((h >> (8 * i)) & 0xff);
  put(dup, b);
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open(dup.c_str(), nullptr, &f)) << zt_last_error();
  EXPECT_EQ(ZT_OK, zt_file_verify(f, 1, nullptr, nullptr)) << "the patched file is valid: " << zt_last_error();
  zt_close(f);
  std::string msg;
  EXPECT_EQ(3u, canonical_rule(dup, &msg));
  EXPECT_NE(std::string::npos, msg.find("rule 3: 'b'/'data' repeats the content already at offset 65536")) << msg;
}
