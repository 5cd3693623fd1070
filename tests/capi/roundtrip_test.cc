// Writing through the C ABI and reading back: every dtype, scalars, empty
// tensors, zstd levels, digests, attributes of every CBOR kind, streaming,
// determinism, atomic replacement, and byte-identical output against files
// written by the reference implementation.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "cbor_writer.h"
#include "test_util.h"
#include "zt_walk.h"
#include "ztensor.h"

using zttest::read_file;
using zttest::TempDir;

namespace {

const zt_dtype kAllDtypes[] = {ZT_F64, ZT_F32, ZT_F16, ZT_BF16, ZT_I64, ZT_I32, ZT_I16,
                               ZT_I8,  ZT_U64, ZT_U32, ZT_U16,  ZT_U8,  ZT_BOOL};

std::vector<uint8_t> pattern(size_t n, uint32_t seed, bool boolean = false) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto &b : v) b = boolean ? static_cast<uint8_t>(rng() & 1) : static_cast<uint8_t>(rng());
  return v;
}

zt_writer *create(const std::string &path, uint32_t digest = ZT_DIGEST_NONE) {
  zt_writer_options o;
  zt_writer_options_init(&o);
  o.digest = digest;
  o.sync = 0;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &o, &w), ZT_OK) << zt_last_error();
  return w;
}

std::vector<uint8_t> read_component(const zt_file *f, const std::string &name, const char *role = "data") {
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_file_object_by_name(f, name.data(), name.size(), &o), ZT_OK) << name;
  if (!o) return {};
  size_t idx = 0;
  EXPECT_EQ(zt_object_component_index(o, role, &idx), ZT_OK);
  size_t n = 0;
  zt_component_read(o, idx, nullptr, 0, &n);
  std::vector<uint8_t> buf(n);
  EXPECT_EQ(zt_component_read(o, idx, buf.data(), buf.size(), &n), ZT_OK) << zt_last_error();
  return buf;
}

TEST(RoundTrip, EveryDtypeEncodingAndDigest) {
  TempDir tmp;
  const uint32_t digests[] = {ZT_DIGEST_NONE, ZT_DIGEST_CRC32C, ZT_DIGEST_SHA256};
  const int levels[] = {1, 3, 19, -5};
  std::string path = tmp.file("all.zt");
  zt_writer *w = create(path);
  std::map<std::string, std::vector<uint8_t>> written;
  uint32_t seed = 1;
  for (zt_dtype d : kAllDtypes) {
    for (uint32_t dg : digests) {
      for (int enc = 0; enc < 5; ++enc) {
        std::string name = std::string(zt_dtype_name(d)) + "/" + std::to_string(dg) + "/" + std::to_string(enc);
        uint64_t shape[2] = {7, 5};
        auto data = pattern(35 * zt_dtype_size(d), seed++, d == ZT_BOOL);
        zt_blob_options bo;
        zt_blob_options_init(&bo);
        bo.digest = dg;
        if (enc > 0) {
          bo.encoding = ZT_ENCODING_ZSTD;
          bo.zstd_level = levels[enc - 1];
        }
        ASSERT_EQ(zt_writer_add_dense(w, name.data(), name.size(), d, shape, 2, data.data(), data.size(), &bo), ZT_OK)
            << zt_last_error();
        written[name] = data;
      }
    }
  }
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();

  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  const char *version = nullptr;
  zt_file_version(f, &version);
  EXPECT_STREQ(version, "1.2.0");
  for (const auto &[name, data] : written) EXPECT_EQ(read_component(f, name), data) << name;
  EXPECT_EQ(zt_file_verify(f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  // Digest strings follow docs/writing-rules.md exactly.
  for (const char *n : {"f32/1/0", "f32/2/3"}) {
    const zt_object *o = nullptr;
    ASSERT_EQ(zt_file_object_by_name(f, n, std::strlen(n), &o), ZT_OK);
    zt_component_info c{};
    c.struct_size = sizeof c;
    ASSERT_EQ(zt_object_component(o, 0, &c), ZT_OK);
    ASSERT_NE(c.digest, nullptr);
    std::string d = c.digest;
    if (c.digest_alg == ZT_DIGEST_CRC32C) {
      ASSERT_EQ(d.size(), 17u);
      EXPECT_EQ(d.substr(0, 9), "crc32c:0x");
      for (char ch : d.substr(9)) EXPECT_TRUE(std::isdigit(ch) || (ch >= 'A' && ch <= 'F')) << d;
    } else {
      ASSERT_EQ(d.size(), 7u + 64u);
      for (char ch : d.substr(7)) EXPECT_TRUE(std::isdigit(ch) || (ch >= 'a' && ch <= 'f')) << d;
    }
    if (c.encoding == ZT_ENCODING_ZSTD) {
      EXPECT_TRUE(c.has_uncompressed_length);
    }
    EXPECT_EQ(c.offset % 64, 0u);
  }
  zt_close(f);
}

TEST(RoundTrip, ScalarsAndZeroSizeTensors) {
  TempDir tmp;
  std::string path = tmp.file("s.zt");
  zt_writer *w = create(path, ZT_DIGEST_CRC32C);
  double pi = 3.141592653589793;
  ASSERT_EQ(zt_writer_add_dense(w, "scalar", 6, ZT_F64, nullptr, 0, &pi, 8, nullptr), ZT_OK) << zt_last_error();
  uint64_t s0[1] = {0}, s1[3] = {3, 0, 2}, s2[2] = {0, 4294967301ull};
  ASSERT_EQ(zt_writer_add_dense(w, "e1", 2, ZT_F32, s0, 1, nullptr, 0, nullptr), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_writer_add_dense(w, "e3", 2, ZT_I64, s1, 3, nullptr, 0, nullptr), ZT_OK);
  zt_blob_options z;
  zt_blob_options_init(&z);
  z.encoding = ZT_ENCODING_ZSTD;
  ASSERT_EQ(zt_writer_add_dense(w, "ez", 2, ZT_U8, s2, 2, nullptr, 0, &z), ZT_OK) << zt_last_error();
  // A scalar given the wrong number of bytes is refused before anything is
  // written for it.
  EXPECT_EQ(zt_writer_add_dense(w, "bad", 3, ZT_F64, nullptr, 0, &pi, 4, nullptr), ZT_E_LENGTH);
  zt_writer_discard(w);
  struct stat st;
  EXPECT_NE(stat(path.c_str(), &st), 0) << "a failed writer must leave nothing behind";

  w = create(path, ZT_DIGEST_CRC32C);
  ASSERT_EQ(zt_writer_add_dense(w, "scalar", 6, ZT_F64, nullptr, 0, &pi, 8, nullptr), ZT_OK);
  ASSERT_EQ(zt_writer_add_dense(w, "e1", 2, ZT_F32, s0, 1, nullptr, 0, nullptr), ZT_OK);
  ASSERT_EQ(zt_writer_add_dense(w, "ez", 2, ZT_U8, s2, 2, nullptr, 0, &z), ZT_OK);
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  auto v = read_component(f, "scalar");
  ASSERT_EQ(v.size(), 8u);
  double back;
  std::memcpy(&back, v.data(), 8);
  EXPECT_EQ(back, pi);
  EXPECT_TRUE(read_component(f, "e1").empty());
  EXPECT_TRUE(read_component(f, "ez").empty());
  const zt_object *o = nullptr;
  ASSERT_EQ(zt_file_object_by_name(f, "scalar", 6, &o), ZT_OK);
  zt_object_info info{};
  info.struct_size = sizeof info;
  zt_object_get_info(o, &info);
  EXPECT_EQ(info.ndim, 0u);
  uint64_t numel = 0;
  EXPECT_EQ(zt_object_numel(o, &numel), ZT_OK);
  EXPECT_EQ(numel, 1u);
  EXPECT_EQ(zt_file_verify(f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  zt_close(f);
}

// Attributes of every CBOR kind survive byte for byte, and read back as JSON
// with the documented conventions.
TEST(RoundTrip, AttributesOfEveryCborKind) {
  TempDir tmp;
  std::string path = tmp.file("a.zt");
  zttest::Cbor c;
  c.map(14);
  c.text("uint").uint(18446744073709551615ull);
  c.text("neg").negint(-9223372036854775807ll - 1);
  c.text("bytes").bin(std::string("\xde\xad\xbe\xef", 4));
  c.text("text").text(
      "\xc3\xbc"
      "n"
      "\xc3\xaf"
      "c"
      "\xc3\xb8"
      "d"
      "\xc3\xa9");
  c.text("array").array(3).uint(1).text("two").f64(3.0);
  c.text("map").map(1).text("k").null();
  c.text("tag").tag(1).uint(1700000000);
  c.text("half").raw(std::string("\xf9\x38\x00", 3));  // 0.5
  c.text("single").raw("\xfa\x3d\xcc\xcc\xcd");
  c.text("double").f64(0.1);
  c.text("nan").raw(std::string("\xf9\x7e\x00", 3));
  c.text("bools").array(2).boolean(true).boolean(false);
  c.text("indef").indef_array().uint(1).brk();
  c.text("intkeys").map(1).uint(7).text("seven");
  zt_writer *w = create(path);
  ASSERT_EQ(zt_writer_set_attributes_cbor(w, reinterpret_cast<const uint8_t *>(c.bytes.data()), c.bytes.size()), ZT_OK)
      << zt_last_error();
  uint8_t one = 1;
  uint64_t shape[1] = {1};
  ASSERT_EQ(zt_writer_add_dense(w, "x", 1, ZT_U8, shape, 1, &one, 1, nullptr), ZT_OK);
  ASSERT_EQ(zt_writer_set_object_attributes_json(w, "x", 1, R"({"scale": 0.125, "tags": ["a", "b"], "n": -3,
      "blob": {"$bytes": "00ff"}, "inf": {"$float": "-inf"}, "big": {"$bigint": "-18446744073709551616"}})"),
            ZT_OK)
      << zt_last_error();
  // Attributes must be maps.
  EXPECT_EQ(zt_writer_set_attributes_json(w, "[1,2]"), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_writer_set_attributes_json(w, "{not json"), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_writer_set_attributes_cbor(w, reinterpret_cast<const uint8_t *>("\xa1\x61"), 2), ZT_E_INVALID_ARG);
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();

  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  const uint8_t *raw = nullptr;
  size_t raw_len = 0;
  ASSERT_EQ(zt_file_attributes_cbor(f, &raw, &raw_len), ZT_OK);
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(raw), raw_len), c.bytes);
  char *json = nullptr;
  ASSERT_EQ(zt_file_attributes_json(f, &json), ZT_OK);
  auto j = nlohmann::json::parse(json);
  zt_free(json);
  EXPECT_EQ(j["uint"].get<uint64_t>(), 18446744073709551615ull);
  EXPECT_EQ(j["neg"].get<int64_t>(), INT64_MIN);
  EXPECT_EQ(j["bytes"]["$bytes"], "deadbeef");
  EXPECT_EQ(j["array"][2].get<double>(), 3.0);
  EXPECT_TRUE(j["map"]["k"].is_null());
  EXPECT_EQ(j["tag"]["$tag"], 1);
  EXPECT_EQ(j["half"].get<double>(), 0.5);
  EXPECT_EQ(j["single"].get<double>(), static_cast<double>(0.1f));
  EXPECT_EQ(j["double"].get<double>(), 0.1);
  EXPECT_EQ(j["nan"]["$float"], "nan");
  EXPECT_EQ(j["indef"], nlohmann::json::array({1}));
  EXPECT_EQ(j["intkeys"]["$map"][0][0], 7);

  const zt_object *o = nullptr;
  ASSERT_EQ(zt_file_object_by_name(f, "x", 1, &o), ZT_OK);
  const uint8_t *oraw = nullptr;
  size_t olen = 0;
  ASSERT_EQ(zt_object_attributes_cbor(o, &oraw, &olen), ZT_OK);
  // 0.125 is exact in half precision: the reference writer's narrowest form.
  std::string ob(reinterpret_cast<const char *>(oraw), olen);
  EXPECT_NE(ob.find(std::string("escale\xf9\x30\x00", 9)), std::string::npos);
  ASSERT_EQ(zt_object_attributes_json(o, &json), ZT_OK);
  j = nlohmann::json::parse(json);
  zt_free(json);
  EXPECT_EQ(j["scale"].get<double>(), 0.125);
  EXPECT_EQ(j["blob"]["$bytes"], "00ff");
  EXPECT_EQ(j["inf"]["$float"], "-inf");
  EXPECT_EQ(j["big"]["$bigint"], "-18446744073709551616");
  EXPECT_EQ(j["n"], -3);
  zt_close(f);
}

std::string write_sample(const std::string &path, uint32_t digest) {
  zt_writer *w = create(path, digest);
  uint64_t shape[2] = {64, 33};
  auto a = pattern(64 * 33 * 4, 5);
  zt_blob_options z;
  zt_blob_options_init(&z);
  z.encoding = ZT_ENCODING_ZSTD;
  EXPECT_EQ(zt_writer_set_attributes_json(w, R"({"framework": "test", "n": 2})"), ZT_OK);
  EXPECT_EQ(zt_writer_add_dense(w, "b", 1, ZT_F32, shape, 2, a.data(), a.size(), &z), ZT_OK);
  EXPECT_EQ(zt_writer_add_dense(w, "a", 1, ZT_F32, shape, 2, a.data(), a.size(), nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  return read_file(path);
}

TEST(RoundTrip, OutputIsDeterministic) {
  TempDir tmp;
  for (uint32_t d : {ZT_DIGEST_NONE, ZT_DIGEST_CRC32C, ZT_DIGEST_SHA256}) {
    std::string x = write_sample(tmp.file("x.zt"), d), y = write_sample(tmp.file("y.zt"), d);
    EXPECT_EQ(x, y);
    EXPECT_EQ(x.substr(0, 8), "ZTEN1000");
    EXPECT_EQ(x.substr(x.size() - 8), "ZTEN1000");
  }
}

TEST(RoundTrip, StreamingEqualsWholeBlob) {
  TempDir tmp;
  const size_t n = 3 * 1024 * 1024 + 17;
  auto data = pattern(n, 9);
  for (uint32_t enc : {ZT_ENCODING_RAW, ZT_ENCODING_ZSTD}) {
    std::string path = tmp.file("stream.zt");
    zt_writer *w = create(path, ZT_DIGEST_SHA256);
    uint64_t shape[1] = {n};
    ASSERT_EQ(zt_writer_begin_object(w, "s", 1, nullptr, shape, 1), ZT_OK);
    zt_blob_options bo;
    zt_blob_options_init(&bo);
    bo.encoding = enc;
    ASSERT_EQ(zt_write_blob_begin(w, "s", 1, "data", ZT_U8, &bo), ZT_OK) << zt_last_error();
    // Only one blob may be open at a time.
    EXPECT_EQ(zt_write_blob_begin(w, "s", 1, "other", ZT_U8, &bo), ZT_E_MISUSE);
    for (size_t off = 0; off < n; off += 100000)
      ASSERT_EQ(zt_write_blob_append(w, data.data() + off, std::min<size_t>(100000, n - off)), ZT_OK);
    ASSERT_EQ(zt_write_blob_end(w), ZT_OK) << zt_last_error();
    ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK);
    EXPECT_EQ(read_component(f, "s"), data);
    EXPECT_EQ(zt_file_verify(f, 0, nullptr, nullptr), ZT_OK) << zt_last_error();
    // Ranged read: elements [1000, 1000+4096).
    const zt_object *o = nullptr;
    zt_file_object_by_name(f, "s", 1, &o);
    std::vector<uint8_t> part(4096);
    ASSERT_EQ(zt_component_read_range(o, 0, 1000, 4096, part.data(), part.size()), ZT_OK) << zt_last_error();
    EXPECT_TRUE(std::equal(part.begin(), part.end(), data.begin() + 1000));
    EXPECT_EQ(zt_component_read_range(o, 0, n - 10, 11, part.data(), part.size()), ZT_E_INVALID_ARG);
    zt_close(f);
  }
}

TEST(RoundTrip, ReplacesAnExistingFileOnlyOnFinish) {
  TempDir tmp;
  std::string path = tmp.file("r.zt");
  std::string first = write_sample(path, ZT_DIGEST_NONE);
  zt_writer *w = create(path);
  uint8_t b = 1;
  uint64_t shape[1] = {1};
  ASSERT_EQ(zt_writer_add_dense(w, "new", 3, ZT_U8, shape, 1, &b, 1, nullptr), ZT_OK);
  EXPECT_EQ(read_file(path), first) << "the old file must stay until finish";
  ASSERT_EQ(zt_writer_discard(w), ZT_OK);
  EXPECT_EQ(read_file(path), first);
  // No temporary files are left behind.
  DIR *d = opendir(tmp.path().c_str());
  int entries = 0;
  while (dirent *e = readdir(d))
    if (e->d_name[0] != '.') ++entries;
  closedir(d);
  EXPECT_EQ(entries, 1);
}

// A refused zt_writer_add_dense (wrong byte count, wrong dtype) leaves the
// writer usable and declares nothing: what was added before and after is
// written, and the refused name can be used again.
TEST(RoundTrip, RefusedAddKeepsTheWriterAndDeclaresNothing) {
  TempDir tmp;
  const std::string path = tmp.file("kept.zt");
  zt_writer *w = create(path);
  uint64_t shape[1] = {4};
  float v[4] = {1, 2, 3, 4};
  ASSERT_EQ(zt_writer_add_dense(w, "before", 6, ZT_F32, shape, 1, v, 16, nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_add_dense(w, "x", 1, ZT_F32, shape, 1, v, 12, nullptr), ZT_E_LENGTH) << "12 bytes for 4 f32";
  EXPECT_NE(std::string(zt_last_error()).find("'x'"), std::string::npos) << zt_last_error();
  zt_blob_options zo;
  zt_blob_options_init(&zo);
  zo.encoding = ZT_ENCODING_ZSTD;
  EXPECT_EQ(zt_writer_add_dense(w, "x", 1, ZT_F64, shape, 1, v, 16, &zo), ZT_E_LENGTH) << "16 bytes for 4 f64";
  ASSERT_EQ(zt_writer_add_dense(w, "x", 1, ZT_F32, shape, 1, v, 16, &zo), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_writer_add_dense(w, "after", 5, ZT_F32, shape, 1, v, 16, nullptr), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  size_t n = 0;
  zt_file_object_count(f, &n);
  EXPECT_EQ(n, 3u);
  for (const char *name : {"before", "x", "after"}) {
    std::vector<uint8_t> got = read_component(f, name);
    EXPECT_EQ(got.size(), 16u) << name;
    EXPECT_EQ(std::memcmp(got.data(), v, 16), 0) << name;
  }
  EXPECT_EQ(zt_file_verify(f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  zt_close(f);
}

TEST(RoundTrip, WriterRefusesBadInput) {
  TempDir tmp;
  zt_writer *w = create(tmp.file("bad.zt"));
  uint64_t shape[1] = {4};
  float v[4] = {1, 2, 3, 4};
  EXPECT_EQ(zt_writer_add_dense(w, "\xff\xfe", 2, ZT_F32, shape, 1, v, 16, nullptr), ZT_E_NAME);
  EXPECT_EQ(zt_writer_add_dense(w, "v", 1, static_cast<zt_dtype>(99), shape, 1, v, 16, nullptr), ZT_E_DTYPE);
  zt_writer_discard(w);
  w = create(tmp.file("bad.zt"));
  ASSERT_EQ(zt_writer_add_dense(w, "v", 1, ZT_F32, shape, 1, v, 16, nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_add_dense(w, "v", 1, ZT_F32, shape, 1, v, 16, nullptr), ZT_E_EXISTS);
  EXPECT_EQ(zt_write_blob(w, "nope", 4, "data", ZT_F32, v, 16, nullptr), ZT_E_NOT_FOUND);
  uint64_t huge[2] = {1ull << 40, 1ull << 40};
  EXPECT_EQ(zt_writer_begin_object(w, "h", 1, "dense", huge, 2), ZT_E_SHAPE);
  zt_blob_options bo;
  zt_blob_options_init(&bo);
  bo.logical_type = "complex64";
  uint64_t two[1] = {2};
  EXPECT_EQ(zt_writer_begin_object(w, "c", 1, "dense", two, 1), ZT_OK);
  EXPECT_EQ(zt_write_blob(w, "c", 1, "data", ZT_F64, v, 16, &bo), ZT_E_DTYPE);  // complex64 is over f32
  zt_writer_discard(w);
  w = create(tmp.file("ok.zt"));
  ASSERT_EQ(zt_writer_begin_object(w, "c", 1, "dense", two, 1), ZT_OK);
  ASSERT_EQ(zt_write_blob(w, "c", 1, "data", ZT_F32, v, 16, &bo), ZT_OK) << zt_last_error();  // 2 × (re, im)
  // A dense object without its data component cannot be finished.
  ASSERT_EQ(zt_writer_begin_object(w, "empty", 5, "dense", two, 1), ZT_OK);
  EXPECT_EQ(zt_writer_finish(w), ZT_E_COMPONENT_MISSING);
  struct stat st;
  EXPECT_NE(stat(tmp.file("ok.zt").c_str(), &st), 0);
}

// Files the reference wrote with raw components only are reproduced byte for
// byte when the same objects are written in the same order.
TEST(RoundTrip, ByteIdenticalToTheReferenceWriter) {
  std::string dir = zttest::interop_dir() + "/v1";
  auto exp = nlohmann::json::parse(zttest::read_required_file(dir + "/expected.json"));
  TempDir tmp;
  int compared = 0;
  for (auto it = exp["files"].begin(); it != exp["files"].end(); ++it) {
    bool all_raw = true;
    for (const auto &o : it.value()["objects"])
      for (const auto &c : o["components"]) all_raw &= c["encoding"] == "raw";
    if (!all_raw) continue;
    SCOPED_TRACE(it.key());
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open((dir + "/" + it.key()).c_str(), nullptr, &f), ZT_OK);
    // Components in file order (the reference's write order).
    struct Item {
      const zt_object *o;
      size_t idx;
      uint64_t offset;
    };
    std::vector<Item> items;
    zttest::for_each_component(f,
                               [&](const zt_object *o, const zt_object_info &, size_t k, const zt_component_info &c) {
                                 items.push_back({o, k, c.offset});
                               });
    std::stable_sort(items.begin(), items.end(), [](const Item &a, const Item &b) { return a.offset < b.offset; });
    std::string out = tmp.file(it.key());
    zt_writer *w = create(out);
    const uint8_t *fa = nullptr;
    size_t fa_len = 0;
    zt_file_attributes_cbor(f, &fa, &fa_len);
    if (fa) ASSERT_EQ(zt_writer_set_attributes_cbor(w, fa, fa_len), ZT_OK);
    std::map<const zt_object *, bool> begun;
    for (const Item &item : items) {
      zt_object_info info{};
      info.struct_size = sizeof info;
      zt_object_get_info(item.o, &info);
      if (!begun[item.o]) {
        begun[item.o] = true;
        ASSERT_EQ(zt_writer_begin_object(w, info.name, info.name_len, info.format, info.shape, info.ndim), ZT_OK)
            << zt_last_error();
        const uint8_t *oa = nullptr;
        size_t oa_len = 0;
        zt_object_attributes_cbor(item.o, &oa, &oa_len);
        if (oa) ASSERT_EQ(zt_writer_set_object_attributes_cbor(w, info.name, info.name_len, oa, oa_len), ZT_OK);
      }
      zt_component_info c{};
      c.struct_size = sizeof c;
      zt_object_component(item.o, item.idx, &c);
      const void *data = nullptr;
      size_t len = 0;
      std::vector<uint8_t> copy;  // a big-endian host: read (swapped), written back swapped
      if (zt_component_view(item.o, item.idx, &data, &len) != ZT_OK) {
        ASSERT_TRUE(zttest::kHostBigEndian) << zt_last_error();
        copy.resize(c.decoded_length);
        ASSERT_EQ(zt_component_read(item.o, item.idx, copy.data(), copy.size(), &len), ZT_OK) << zt_last_error();
        data = copy.data();
      }
      zt_blob_options bo;
      zt_blob_options_init(&bo);
      bo.logical_type = c.logical_type;
      bo.digest = c.digest_alg;
      ASSERT_EQ(zt_write_blob(w, info.name, info.name_len, c.role, c.dtype, data, len, &bo), ZT_OK) << zt_last_error();
    }
    ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
    zt_close(f);
    EXPECT_EQ(read_file(out), read_file(dir + "/" + it.key())) << "differs from the reference: " << it.key();
    ++compared;
  }
  EXPECT_GE(compared, 10);
}

}  // namespace
