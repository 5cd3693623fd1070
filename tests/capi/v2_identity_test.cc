// Model identity of zTensor v2 through the C ABI: the content digest
// (spec §6.4) agrees across placements, orders and encodings of the same
// tensors, differs for different tensors, and is undefined (never
// approximated) when a part has no digest.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"
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
  std::vector<uint8_t> out;
  for (float v : vals) {
    uint8_t b[4];
    std::memcpy(b, &v, 4);
    out.insert(out.end(), b, b + 4);
  }
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
