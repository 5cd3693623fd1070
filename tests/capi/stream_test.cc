// zt_component_stream_*: a whole component in caller-sized pieces equals
// zt_component_read (raw, zstd, legacy big-endian; mapped and pread; odd
// buffer sizes); a frame that decodes to more or fewer bytes than declared
// fails at the end without decoding past the declared size; the stream
// outlives zt_close; misuse is refused; a 1 GiB zstd component streams in
// bounded memory.
#include <gtest/gtest.h>
#ifdef _WIN32
#include <windows.h>
// windows.h first: psapi.h needs its types.
#include <psapi.h>
#else
#include <sys/resource.h>
#endif

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor.h"

using zttest::TempDir;

namespace {

std::vector<uint8_t> full_read(const zt_object *o, size_t idx) {
  size_t size = 0;
  zt_component_read(o, idx, nullptr, 0, &size);
  std::vector<uint8_t> v(size);
  EXPECT_EQ(zt_component_read(o, idx, v.data(), v.size(), &size), ZT_OK) << zt_last_error();
  return v;
}

// Streams the component through a buffer of `chunk` bytes.
zt_status stream_all(const zt_object *o, size_t idx, size_t chunk, std::vector<uint8_t> &out) {
  out.clear();
  zt_component_stream *s = nullptr;
  zt_status st = zt_component_stream_open(o, idx, &s);
  if (st != ZT_OK) return st;
  std::vector<uint8_t> buf(chunk);
  for (;;) {
    size_t n = 0;
    st = zt_component_stream_read(s, buf.data(), buf.size(), &n);
    if (st != ZT_OK || n == 0) break;
    EXPECT_LE(n, chunk);
    out.insert(out.end(), buf.begin(), buf.begin() + static_cast<long>(n));
  }
  EXPECT_EQ(zt_component_stream_close(s), ZT_OK);
  return st;
}

void check_file_streams(const std::string &path, const zt_open_options *opts) {
  SCOPED_TRACE(path);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), opts, &f), ZT_OK) << zt_last_error();
  size_t count = 0;
  ASSERT_EQ(zt_file_object_count(f, &count), ZT_OK);
  for (size_t i = 0; i < count; ++i) {
    const zt_object *o = nullptr;
    ASSERT_EQ(zt_file_object_at(f, i, &o), ZT_OK);
    zt_object_info info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(zt_object_get_info(o, &info), ZT_OK);
    if (info.status != ZT_OK) continue;
    for (size_t j = 0; j < info.component_count; ++j) {
      SCOPED_TRACE(std::string(info.name, info.name_len) + " component " + std::to_string(j));
      const std::vector<uint8_t> want = full_read(o, j);
      for (size_t chunk : {size_t{8}, size_t{17}, size_t{4096}, size_t{1} << 20}) {
        std::vector<uint8_t> got;
        ASSERT_EQ(stream_all(o, j, chunk, got), ZT_OK) << zt_last_error();
        EXPECT_TRUE(got == want) << "chunk " << chunk;
      }
    }
  }
  zt_close(f);
}

TEST(ComponentStream, InteropFilesStreamAsTheyRead) {
  zt_open_options po;
  zt_open_options_init(&po);
  po.access = ZT_ACCESS_PREAD;
  for (const char *sub : {"/v1", "/v0"}) {
    const std::string dir = zttest::interop_dir() + sub;
    const auto exp = nlohmann::json::parse(zttest::read_required_file(dir + "/expected.json"));
    for (auto it = exp["files"].begin(); it != exp["files"].end(); ++it) {
      check_file_streams(dir + "/" + it.key(), nullptr);
      check_file_streams(dir + "/" + it.key(), &po);
    }
  }
}

std::string write_fixture(const TempDir &dir) {
  const std::string path = dir.file("s.zt");
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK);
  std::vector<float> v(300000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 977) * 0.5f;
  const uint64_t shape[] = {300, 1000};
  zt_blob_options z;
  zt_blob_options_init(&z);
  z.encoding = ZT_ENCODING_ZSTD;
  EXPECT_EQ(zt_writer_add_dense(w, "raw", 3, ZT_F32, shape, 2, v.data(), v.size() * 4, nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_add_dense(w, "zstd", 4, ZT_F32, shape, 2, v.data(), v.size() * 4, &z), ZT_OK);
  const uint64_t zero[] = {0};
  EXPECT_EQ(zt_writer_add_dense(w, "empty", 5, ZT_F32, zero, 1, nullptr, 0, &z), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  return path;
}

TEST(ComponentStream, RawZstdAndEmptyMappedAndPread) {
  TempDir dir;
  const std::string path = write_fixture(dir);
  check_file_streams(path, nullptr);
  zt_open_options po;
  zt_open_options_init(&po);
  po.access = ZT_ACCESS_PREAD;
  check_file_streams(path, &po);
}

TEST(ComponentStream, ReadsWholeElementsAndRefusesATooSmallBuffer) {
  TempDir dir;
  const std::string path = write_fixture(dir);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK);
  for (const char *name : {"raw", "zstd"}) {
    const zt_object *o = nullptr;
    ASSERT_EQ(zt_file_object_by_name(f, name, std::strlen(name), &o), ZT_OK);
    zt_component_stream *s = nullptr;
    ASSERT_EQ(zt_component_stream_open(o, 0, &s), ZT_OK);
    uint8_t buf[7];
    size_t n = 99;
    EXPECT_EQ(zt_component_stream_read(s, buf, 3, &n), ZT_E_BUFFER_TOO_SMALL);
    EXPECT_EQ(n, 0u);
    EXPECT_NE(std::string(zt_last_error()).find("one element"), std::string::npos) << zt_last_error();
    ASSERT_EQ(zt_component_stream_read(s, buf, 7, &n), ZT_OK) << zt_last_error();  // still usable
    EXPECT_EQ(n, 4u);                                                              // one whole f32
    float first;
    std::memcpy(&first, buf, 4);
    EXPECT_EQ(first, 0.0f);
    EXPECT_EQ(zt_component_stream_read(s, buf, 7, nullptr), ZT_E_INVALID_ARG);
    EXPECT_EQ(zt_component_stream_close(s), ZT_OK);
  }
  zt_close(f);
}

TEST(ComponentStream, OutlivesTheFileHandleAndRefusesMisuse) {
  TempDir dir;
  const std::string path = write_fixture(dir);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK);
  const zt_object *o = nullptr;
  ASSERT_EQ(zt_file_object_by_name(f, "zstd", 4, &o), ZT_OK);
  const std::vector<uint8_t> want = full_read(o, 0);
  zt_component_stream *s = nullptr;
  ASSERT_EQ(zt_component_stream_open(o, 0, &s), ZT_OK);
  EXPECT_EQ(zt_component_stream_open(o, 9, &s), ZT_E_NOT_FOUND);
  EXPECT_EQ(s, nullptr);
  ASSERT_EQ(zt_component_stream_open(o, 0, &s), ZT_OK);
  EXPECT_EQ(zt_close(f), ZT_OK);
  std::vector<uint8_t> got, buf(65536);
  size_t n = 0;
  while (zt_component_stream_read(s, buf.data(), buf.size(), &n) == ZT_OK && n)
    got.insert(got.end(), buf.begin(), buf.begin() + static_cast<long>(n));
  EXPECT_TRUE(got == want);
  EXPECT_EQ(zt_component_stream_read(s, buf.data(), buf.size(), &n), ZT_OK);  // still at the end
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(zt_component_stream_close(s), ZT_OK);
  EXPECT_EQ(zt_component_stream_close(s), ZT_E_MISUSE);
  EXPECT_EQ(zt_component_stream_read(s, buf.data(), buf.size(), &n), ZT_E_MISUSE);
  EXPECT_EQ(zt_component_stream_close(nullptr), ZT_OK);
  EXPECT_EQ(zt_component_stream_open(nullptr, 0, &s), ZT_E_INVALID_ARG);
}

// A zstd component of a non-dense object (no shape check at open) whose
// declared uncompressed_length is patched to `declared`.
std::string write_patched_length(const TempDir &dir, uint16_t declared) {
  const std::string path = dir.file("patched.zt");
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK);
  const uint64_t shape[] = {7};
  EXPECT_EQ(zt_writer_begin_object(w, "blob", 4, "opaque", shape, 1), ZT_OK) << zt_last_error();
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
  zt_blob_options z;
  zt_blob_options_init(&z);
  z.encoding = ZT_ENCODING_ZSTD;
  EXPECT_EQ(zt_write_blob(w, "blob", 4, "payload", ZT_U8, data.data(), data.size(), &z), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  std::string bytes = zttest::read_file(path);
  // "uncompressed_length" then the CBOR uint16 1000 (0x19 0x03 0xE8).
  const std::string key = "uncompressed_length";
  size_t at = bytes.find(key);
  EXPECT_NE(at, std::string::npos);
  at += key.size();
  EXPECT_EQ(bytes.substr(at, 3), std::string("\x19\x03\xe8", 3));
  bytes[at + 1] = static_cast<char>(declared >> 8);
  bytes[at + 2] = static_cast<char>(declared & 0xff);
  zttest::write_file(path, bytes);
  return path;
}

TEST(ComponentStream, DecodedSizeMismatchFailsAtTheEnd) {
  for (uint16_t declared : {uint16_t{990}, uint16_t{1010}}) {
    SCOPED_TRACE(declared);
    TempDir dir;
    const std::string path = write_patched_length(dir, declared);
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
    const zt_object *o = nullptr;
    ASSERT_EQ(zt_file_object_by_name(f, "blob", 4, &o), ZT_OK);
    zt_component_stream *s = nullptr;
    ASSERT_EQ(zt_component_stream_open(o, 0, &s), ZT_OK);
    std::vector<uint8_t> buf(4096);
    size_t n = 0;
    // Too many: the read that reaches the declared size fails, having
    // written nothing past it; too few: the read that runs out fails.
    EXPECT_EQ(zt_component_stream_read(s, buf.data(), buf.size(), &n), ZT_E_DECODED_SIZE);
    const std::string msg = zt_last_error();
    EXPECT_NE(msg.find("blob"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(declared)), std::string::npos) << msg;
    // Failed for good.
    EXPECT_EQ(zt_component_stream_read(s, buf.data(), buf.size(), &n), ZT_E_DECODED_SIZE);
    zt_component_stream_close(s);
    zt_close(f);
  }
}

TEST(ComponentStream, CorruptFrameIsReported) {
  const std::string path = zttest::interop_dir() + "/v1/negative/zstd_corrupt_frame.zt";
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  const zt_object *o = nullptr;
  ASSERT_EQ(zt_file_object_at(f, 0, &o), ZT_OK);
  zt_component_stream *s = nullptr;
  ASSERT_EQ(zt_component_stream_open(o, 0, &s), ZT_OK);
  std::vector<uint8_t> buf(4096);
  size_t n = 0;
  EXPECT_EQ(zt_component_stream_read(s, buf.data(), buf.size(), &n), ZT_E_CORRUPT);
  zt_component_stream_close(s);
  zt_close(f);
}

long peak_rss_kib() {
#ifdef _WIN32
  PROCESS_MEMORY_COUNTERS pmc{};
  pmc.cb = sizeof pmc;
  K32GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof pmc);
  return static_cast<long>(pmc.PeakWorkingSetSize / 1024);
#else
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
#endif
}

TEST(ComponentStream, OneGibZstdComponentStreamsInBoundedMemory) {
  TempDir dir;
  const std::string path = dir.file("big.zt");
  const uint64_t total = uint64_t{1} << 30;
  {
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    wo.sync = 0;
    wo.threads = 1;
    zt_writer *w = nullptr;
    ASSERT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK);
    const uint64_t shape[] = {total / 4};
    ASSERT_EQ(zt_writer_begin_object(w, "zeros", 5, nullptr, shape, 1), ZT_OK);
    zt_blob_options bo;
    zt_blob_options_init(&bo);
    bo.encoding = ZT_ENCODING_ZSTD;
    bo.zstd_level = 1;
    ASSERT_EQ(zt_write_blob_begin(w, "zeros", 5, "data", ZT_F32, &bo), ZT_OK);
    std::vector<uint8_t> chunk(size_t{4} << 20, 0);
    for (uint64_t done = 0; done < total; done += chunk.size())
      ASSERT_EQ(zt_write_blob_append(w, chunk.data(), chunk.size()), ZT_OK);
    ASSERT_EQ(zt_write_blob_end(w), ZT_OK) << zt_last_error();
    ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  }
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK);
  const zt_object *o = nullptr;
  ASSERT_EQ(zt_file_object_by_name(f, "zeros", 5, &o), ZT_OK);
  const long before = peak_rss_kib();
  zt_component_stream *s = nullptr;
  ASSERT_EQ(zt_component_stream_open(o, 0, &s), ZT_OK);
  std::vector<uint8_t> buf(size_t{1} << 20);
  uint64_t seen = 0, nonzero = 0;
  size_t n = 0;
  while (zt_component_stream_read(s, buf.data(), buf.size(), &n) == ZT_OK && n) {
    seen += n;
    for (size_t i = 0; i < n; i += 4096) nonzero += buf[i] != 0;
  }
  EXPECT_EQ(zt_component_stream_close(s), ZT_OK);
  const long grown_kib = peak_rss_kib() - before;
  EXPECT_EQ(seen, total);
  EXPECT_EQ(nonzero, 0u);
  EXPECT_LT(grown_kib, 64 * 1024) << "peak RSS grew by " << grown_kib << " KiB";
  zt_close(f);
}

}  // namespace
