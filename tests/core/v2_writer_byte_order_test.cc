// The v2 writer on a big-endian host: callers hand elements over in the
// host's order and the file stores them little-endian
// (v2::WriterOptions::caller_big_endian, kHostBigEndian by default). Run on
// any host: one writer is given the little-endian bytes of some values as a
// little-endian caller, the other the same values byte-reversed as a
// big-endian caller, and the two files must be identical byte for byte
// (digests over the stored bytes, shared blobs, zstd-seekable frames, the
// manifest) and hold the little-endian bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "container/sink.h"
#include "test_util.h"
#include "types/dtype.h"
#include "util/error.h"
#include "v2/v2_writer.h"

using zt::v2::PartOptions;
using zt::v2::Writer;
using zt::v2::WriterOptions;

namespace {

// The little-endian bytes of `vals`, whatever the host.
template <typename T>
std::vector<uint8_t> le(std::initializer_list<T> vals) {
  std::vector<uint8_t> out;
  for (T v : vals) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));  // the value's bits, not its host bytes
    if (zttest::kHostBigEndian) bits >>= 8 * (8 - sizeof(T));
    for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<uint8_t>(bits >> (8 * i)));
  }
  return out;
}

// Each `esize`-byte element reversed: what a big-endian caller holds.
std::vector<uint8_t> reversed(std::vector<uint8_t> v, size_t esize) {
  for (size_t i = 0; i + esize <= v.size(); i += esize)
    for (size_t a = i, b = i + esize - 1; a < b; ++a, --b) std::swap(v[a], v[b]);
  return v;
}

struct Part {
  std::string object, role;
  zt_dtype dtype;
  std::vector<uint8_t> stored;  // little-endian
  bool streamed = false;
};

struct Model {
  bool canonical = true;
  std::vector<std::pair<std::string, std::pair<std::string, std::vector<uint64_t>>>> objects;
  std::vector<Part> parts;
  PartOptions opts;
};

// Writes `m` at `path` as a caller of the given byte order would hand it
// over; returns the file's bytes.
std::string write(const std::string &path, const Model &m, bool big_endian_caller) {
  WriterOptions wo;
  wo.sync = false;
  wo.canonical = m.canonical;
  if (!m.canonical) wo.digest = ZT_DIGEST_SHA256;
  wo.caller_big_endian = big_endian_caller;
  Writer w(std::make_unique<zt::FileSink>(path), wo);
  for (const auto &o : m.objects) w.begin_object(o.first, o.second.first, o.second.second);
  for (const Part &p : m.parts) {
    const size_t esize = zt::dtype_size(p.dtype);
    const std::vector<uint8_t> given = big_endian_caller ? reversed(p.stored, esize) : p.stored;
    if (!p.streamed) {
      w.write_blob(p.object, p.role, p.dtype, given.data(), given.size(), m.opts);
      continue;
    }
    // Pieces of 3 bytes: elements split across appends.
    w.blob_begin(p.object, p.role, p.dtype, m.opts);
    for (size_t at = 0; at < given.size(); at += 3)
      w.blob_append(given.data() + at, std::min<size_t>(3, given.size() - at));
    w.blob_end();
  }
  w.finish();
  return zttest::read_file(path);
}

bool contains(const std::string &file, const std::vector<uint8_t> &bytes) {
  return file.find(std::string(bytes.begin(), bytes.end())) != std::string::npos;
}

Model dense_and_sparse() {
  Model m;
  m.objects = {{"a", {"dense", {4}}}, {"b", {"dense", {5}}},
               {"c", {"dense", {2}}}, {"csr", {"zt.sparse_csr/1", {3, 4}}},
               {"d", {"dense", {4}}}, {"e", {"dense", {3}}}};
  m.parts = {
      {"a", "data", ZT_F32, le<float>({1.5f, -2.0f, 3.25f, 1e-3f})},
      {"b", "data", ZT_U16, le<uint16_t>({0x0102, 0xA0B0, 7, 0xFFFE, 0x1234}), true},
      {"c", "data", ZT_I64, le<int64_t>({-2, 0x0102030405060708})},
      {"csr", "indices", ZT_U32, le<uint32_t>({0, 2, 1, 3})},
      {"csr", "indptr", ZT_U32, le<uint32_t>({0, 2, 3, 4})},
      {"csr", "values", ZT_F32, le<float>({1, 2, 3, 4})},
      // The same stored bytes as a's: one blob shared, found by comparing
      // the stored (swapped) bytes, streamed and whole.
      {"d", "data", ZT_F32, le<float>({1.5f, -2.0f, 3.25f, 1e-3f}), true},
      {"e", "data", ZT_U8, {1, 2, 3}},  // single bytes: nothing to swap
  };
  return m;
}

TEST(V2WriterByteOrder, BigEndianCallerWritesTheSameFile) {
  zttest::TempDir dir;
  const Model m = dense_and_sparse();
  const std::string little = write(dir.path() + "/le.zt", m, false);
  const std::string big = write(dir.path() + "/be.zt", m, true);
  ASSERT_FALSE(little.empty());
  EXPECT_TRUE(little == big) << "a big-endian caller's file differs from a little-endian caller's";
  // The first blob (a's data) at the canonical 65536, little-endian.
  const std::vector<uint8_t> a = m.parts[0].stored;
  ASSERT_GE(big.size(), 65536 + a.size());
  EXPECT_EQ(std::string(a.begin(), a.end()), big.substr(65536, a.size()));
  for (const Part &p : m.parts) EXPECT_TRUE(contains(big, p.stored)) << p.object << "/" << p.role;
}

TEST(V2WriterByteOrder, ZstdSeekableAndSha256SwapBeforeEncoding) {
  zttest::TempDir dir;
  Model m;
  m.canonical = false;
  m.opts.encoding = ZT_ENCODING_ZSTD;
  std::vector<uint8_t> big_part;
  for (uint32_t i = 0; i < 300000; ++i) {  // more than one seekable frame
    const auto e = le<uint32_t>({i * 2654435761u});
    big_part.insert(big_part.end(), e.begin(), e.end());
  }
  m.objects = {{"w", {"dense", {300000}}}, {"x", {"dense", {3}}}};
  m.parts = {{"w", "data", ZT_U32, big_part, true}, {"x", "data", ZT_F64, le<double>({0.1, -7, 1e300})}};
  const std::string little = write(dir.path() + "/le.zt", m, false);
  const std::string big = write(dir.path() + "/be.zt", m, true);
  ASSERT_FALSE(little.empty());
  EXPECT_TRUE(little == big) << "zstd-seekable parts differ between caller byte orders";
}

TEST(V2WriterByteOrder, ATrailingPartialElementIsRefusedEitherWay) {
  for (bool big : {false, true}) {
    zttest::TempDir dir;
    WriterOptions wo;
    wo.sync = false;
    wo.caller_big_endian = big;
    Writer w(std::make_unique<zt::FileSink>(dir.path() + "/t.zt"), wo);
    const std::vector<uint64_t> shape = {2};
    w.begin_object("t", "dense", shape);
    const uint8_t bytes[5] = {1, 2, 3, 4, 5};
    w.blob_begin("t", "data", ZT_U32, PartOptions());
    w.blob_append(bytes, 5);
    try {
      w.blob_end();
      ADD_FAILURE() << "5 bytes of a u32[2] part were taken (big-endian caller: " << big << ")";
    } catch (const zt::Error &e) {
      EXPECT_EQ(ZT_E_LENGTH, e.status());
    }
  }
}

}  // namespace
