// Reading zt.zstd-seekable/1 parts through the C ABI (docs/v2.md): files
// our own v2 writer wrote (canonical = 0 + zstd) read whole, by range and by
// slice, verify with their digests over the decoded bytes; a range reads
// only the frames it needs from the source; damaged frames and seek tables
// are refused naming the rule (Encoding).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor.h"
#include "ztensor_io.h"

using zttest::TempDir;

namespace {

constexpr size_t kFrame = size_t{1} << 20;  // the writer's frame content

std::vector<uint8_t> slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Bytes that zstd barely compresses: each frame stays about 1 MiB stored.
std::vector<uint8_t> noise(size_t n) {
  std::vector<uint8_t> v(n);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v[i] = static_cast<uint8_t>(x);
  }
  return v;
}

// A v2 file with one dense u8 object "b" of `data`, zt.zstd-seekable/1.
std::vector<uint8_t> seekable_file(const TempDir &dir, const std::vector<uint8_t> &data) {
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  wo.format = 2;
  wo.canonical = 0;
  const std::string path = dir.file("s.zt");
  zt_writer *w = nullptr;
  EXPECT_EQ(ZT_OK, zt_writer_create(path.c_str(), &wo, &w)) << zt_last_error();
  zt_blob_options z;
  zt_blob_options_init(&z);
  z.encoding = ZT_ENCODING_ZSTD;
  const uint64_t shape[] = {data.size()};
  EXPECT_EQ(ZT_OK, zt_writer_add_dense(w, "b", 1, ZT_U8, shape, 1, data.data(), data.size(), &z)) << zt_last_error();
  EXPECT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
  return slurp(path);
}

// The blob [offset, length) of "b": its data is the first blob at 4096 or
// later; found by the seek table magic at the blob's end.
struct Blob {
  size_t offset, length;
};

// Reads through zt_open_io, counting the bytes the library asks for.
struct Counted {
  const std::vector<uint8_t> *f;
  std::atomic<uint64_t> bytes{0};
  static zt_status read_at(void *u, uint64_t off, size_t len, void *dst, size_t *out) {
    auto *c = static_cast<Counted *>(u);
    std::memcpy(dst, c->f->data() + off, len);
    *out = len;
    c->bytes += len;
    return ZT_OK;
  }
};

zt_file *open_counted(Counted &c) {
  zt_io io;
  zt_io_init(&io);
  io.user = &c;
  io.size = c.f->size();
  io.read_at = Counted::read_at;
  zt_file *f = nullptr;
  EXPECT_EQ(ZT_OK, zt_open_io(&io, nullptr, &f)) << zt_last_error();
  return f;
}

const zt_object *object_b(zt_file *f) {
  const zt_object *o = nullptr;
  EXPECT_EQ(ZT_OK, zt_file_object_by_name(f, "b", 1, &o)) << zt_last_error();
  return o;
}

zt_component_info info_of(const zt_object *o) {
  zt_component_info ci{};
  ci.struct_size = sizeof ci;
  EXPECT_EQ(ZT_OK, zt_object_component(o, 0, &ci)) << zt_last_error();
  return ci;
}

TEST(V2SeekableRead, WholeRangeSliceAndVerify) {
  TempDir dir;
  const auto data = noise(3 * kFrame + 4321);
  const auto file = seekable_file(dir, data);
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open_memory(file.data(), file.size(), nullptr, &f)) << zt_last_error();
  const zt_object *o = object_b(f);
  const zt_component_info ci = info_of(o);
  EXPECT_EQ(ZT_ENCODING_ZSTD, ci.encoding);
  std::vector<uint8_t> out(data.size());
  size_t got = 0;
  ASSERT_EQ(ZT_OK, zt_component_read(o, 0, out.data(), out.size(), &got)) << zt_last_error();
  EXPECT_EQ(data.size(), got);
  EXPECT_TRUE(out == data);
  std::vector<uint8_t> r(5000);
  ASSERT_EQ(ZT_OK, zt_component_read_range(o, 0, 2 * kFrame - 2500, 5000, r.data(), r.size())) << zt_last_error();
  EXPECT_EQ(0, std::memcmp(r.data(), data.data() + 2 * kFrame - 2500, 5000));
  const uint64_t start[] = {3 * kFrame}, stop[] = {data.size()};
  ASSERT_EQ(ZT_OK, zt_component_read_slice(o, 0, 1, start, stop, r.data(), r.size())) << zt_last_error();
  EXPECT_EQ(0, std::memcmp(r.data(), data.data() + 3 * kFrame, 4321));
  // The xxh3 digest covers the decoded bytes (v2 §3.4).
  zt_verify_result vr;
  ASSERT_EQ(ZT_OK, zt_component_verify(o, 0, &vr)) << zt_last_error();
  EXPECT_EQ(ZT_VERIFY_OK, vr);
  EXPECT_EQ(ZT_OK, zt_file_verify(f, 1, nullptr, nullptr)) << zt_last_error();
  zt_close(f);
}

TEST(V2SeekableRead, RangeReadsOnlyTheFramesItNeeds) {
  TempDir dir;
  const auto data = noise(8 * kFrame);
  const auto file = seekable_file(dir, data);
  Counted c;
  c.f = &file;
  zt_file *f = open_counted(c);
  ASSERT_NE(f, nullptr);
  const zt_object *o = object_b(f);
  const uint64_t stored = info_of(o).length;
  ASSERT_GT(stored, 8 * kFrame);
  c.bytes = 0;
  std::vector<uint8_t> r(1000);
  ASSERT_EQ(ZT_OK, zt_component_read_range(o, 0, 5 * kFrame + 100, 1000, r.data(), r.size())) << zt_last_error();
  EXPECT_EQ(0, std::memcmp(r.data(), data.data() + 5 * kFrame + 100, 1000));
  // One frame and the seek table, not eight frames.
  EXPECT_LT(c.bytes.load(), stored / 8 + stored / 16) << "read " << c.bytes.load() << " of " << stored;
  EXPECT_GT(c.bytes.load(), kFrame) << "the frame itself is read";
  c.bytes = 0;
  const uint64_t start[] = {7 * kFrame - 10}, stop[] = {7 * kFrame + 10};
  ASSERT_EQ(ZT_OK, zt_component_read_slice(o, 0, 1, start, stop, r.data(), r.size())) << zt_last_error();
  EXPECT_EQ(0, std::memcmp(r.data(), data.data() + 7 * kFrame - 10, 20));
  EXPECT_LT(c.bytes.load(), 2 * (stored / 8) + stored / 16) << "two frames";
  zt_close(f);
}

// A component stream with verify-on-read: the digest is over the decoded
// bytes, so the stream yields the data rather than a digest mismatch.
TEST(V2SeekableRead, StreamWithVerifyOnRead) {
  TempDir dir;
  const auto data = noise(2 * kFrame + 77);
  const auto file = seekable_file(dir, data);
  zt_open_options oo;
  zt_open_options_init(&oo);
  oo.verify_on_read = 1;
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open_memory(file.data(), file.size(), &oo, &f)) << zt_last_error();
  zt_component_stream *s = nullptr;
  ASSERT_EQ(ZT_OK, zt_component_stream_open(object_b(f), 0, &s)) << zt_last_error();
  std::vector<uint8_t> out(data.size() + 10);
  size_t total = 0, got = 0;
  do {
    ASSERT_EQ(ZT_OK,
              zt_component_stream_read(s, out.data() + total, std::min<size_t>(300000, out.size() - total), &got))
        << zt_last_error();
    total += got;
  } while (got > 0);
  EXPECT_EQ(data.size(), total);
  EXPECT_EQ(0, std::memcmp(out.data(), data.data(), data.size()));
  zt_component_stream_close(s);
  zt_close(f);
}

// Damage inside the stored stream (blobs are not under the manifest hash).
std::string refusal(const std::vector<uint8_t> &file, zt_status want = ZT_E_CORRUPT) {
  zt_file *f = nullptr;
  EXPECT_EQ(ZT_OK, zt_open_memory(file.data(), file.size(), nullptr, &f)) << zt_last_error();
  if (!f) return "";
  const zt_object *o = object_b(f);
  const zt_component_info ci = info_of(o);
  std::vector<uint8_t> out(static_cast<size_t>(ci.decoded_length));
  size_t got = 0;
  EXPECT_EQ(want, zt_component_read(o, 0, out.data(), out.size(), &got));
  std::string msg = zt_last_error();
  zt_verify_result vr;
  EXPECT_EQ(want, zt_component_verify(o, 0, &vr));
  zt_close(f);
  return msg;
}

void put32(std::vector<uint8_t> &s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

TEST(V2SeekableRead, DamagedStreamsAreRefusedNamingTheRule) {
  TempDir dir;
  const auto data = noise(2 * kFrame + 10);
  const auto good = seekable_file(dir, data);
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open_memory(good.data(), good.size(), nullptr, &f));
  const zt_component_info ci = info_of(object_b(f));
  zt_close(f);
  const size_t end = static_cast<size_t>(ci.offset + ci.length);
  const size_t table = end - (8 + 3 * 8 + 9);
  {  // A hostile frame count.
    auto s = good;
    put32(s, end - 9, 0xfffffff0u);
    auto m = refusal(s);
    EXPECT_NE(m.find("rejected (Encoding)"), std::string::npos) << m;
    EXPECT_NE(m.find("object 'b'"), std::string::npos) << m;
  }
  {  // Frame 1 claims more decoded bytes than frame 0.
    auto s = good;
    put32(s, table + 8 + 8 + 4, kFrame + 1);
    put32(s, table + 8 + 16 + 4, 9);
    auto m = refusal(s);
    EXPECT_NE(m.find("all frames but the last"), std::string::npos) << m;
  }
  {  // A flipped byte in frame 0: its content checksum catches it.
    auto s = good;
    s[static_cast<size_t>(ci.offset) + 1000] ^= 0x40;
    auto m = refusal(s);
    EXPECT_NE(m.find("rejected (Encoding)"), std::string::npos) << m;
  }
}

}  // namespace
