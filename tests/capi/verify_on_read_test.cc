// zt_open_options.verify_on_read: with two bytes flipped in every blob of a
// sha256 file and of a crc32c file, every read path fails with
// ZT_E_DIGEST_MISMATCH naming file, object, component and algorithm; clean
// files read; the default (off) and an old caller's smaller struct still
// return the data; success is remembered per component, also across
// threads.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "posix_io.h"
#include "test_util.h"
#include "ztensor.h"
#include "ztensor_composite.h"
#include "ztensor_dlpack.h"

using zttest::TempDir;

namespace {

std::string write_fixture(const std::string &path, zt_digest_alg alg) {
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  wo.digest = alg;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK);
  std::vector<float> v(64 * 64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 101);
  const uint64_t shape[] = {64, 64};
  zt_blob_options z;
  zt_blob_options_init(&z);
  z.encoding = ZT_ENCODING_ZSTD;
  EXPECT_EQ(zt_writer_add_dense(w, "raw", 3, ZT_F32, shape, 2, v.data(), v.size() * 4, nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_add_dense(w, "zs", 2, ZT_F32, shape, 2, v.data(), v.size() * 4, &z), ZT_OK);
  const float values[] = {1.f, 2.f, 3.f};
  const uint64_t indices[] = {0, 5, 2}, indptr[] = {0, 2, 2, 3};
  EXPECT_EQ(zt_writer_add_csr(w, "csr", 3, 3, 8, ZT_F32, values, 3, indices, indptr, nullptr), ZT_OK)
      << zt_last_error();
  const uint64_t none[] = {7};
  std::vector<uint8_t> plain(7, 1);
  zt_blob_options nd;
  zt_blob_options_init(&nd);
  nd.digest = ZT_DIGEST_NONE;
  EXPECT_EQ(zt_writer_add_dense(w, "nodigest", 8, ZT_U8, none, 1, plain.data(), plain.size(), &nd), ZT_OK);
  EXPECT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  return path;
}

// Flips two bytes inside every blob that has a digest.
void corrupt_blobs(const std::string &path) {
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK);
  std::vector<std::pair<uint64_t, uint64_t>> blobs;
  size_t count = 0;
  zt_file_object_count(f, &count);
  for (size_t i = 0; i < count; ++i) {
    const zt_object *o = nullptr;
    zt_file_object_at(f, i, &o);
    zt_object_info info{};
    info.struct_size = sizeof info;
    zt_object_get_info(o, &info);
    for (size_t j = 0; j < info.component_count; ++j) {
      zt_component_info c{};
      c.struct_size = sizeof c;
      zt_object_component(o, j, &c);
      if (c.digest) blobs.push_back({c.offset, c.length});
    }
  }
  zt_close(f);
  int fd = ::open(path.c_str(), O_RDWR | zttest::kOpenBinary);
  ASSERT_GE(fd, 0);
  for (auto [off, len] : blobs) {
    for (uint64_t at : {off + len / 3, off + len - 1}) {
      uint8_t b = 0;
      ASSERT_EQ(::pread(fd, &b, 1, static_cast<off_t>(at)), 1);
      b ^= 0x5A;
      ASSERT_EQ(::pwrite(fd, &b, 1, static_cast<off_t>(at)), 1);
    }
  }
  ::close(fd);
}

zt_open_options verify_opts(zt_access access) {
  zt_open_options o;
  zt_open_options_init(&o);
  o.access = access;
  o.verify_on_read = 1;
  return o;
}

const zt_object *object(const zt_file *f, const char *name) {
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_file_object_by_name(f, name, std::strlen(name), &o), ZT_OK);
  return o;
}

zt_status stream_all(const zt_object *o) {
  zt_component_stream *s = nullptr;
  zt_status st = zt_component_stream_open(o, 0, &s);
  if (st != ZT_OK) return st;
  std::vector<uint8_t> buf(1000);
  size_t n = 0;
  while ((st = zt_component_stream_read(s, buf.data(), buf.size(), &n)) == ZT_OK && n) {
  }
  zt_component_stream_close(s);
  return st;
}

// Every read path on one object; each outcome must be `want`.
struct PathResult {
  std::string path;
  zt_status status;
  std::string message;
};

std::vector<PathResult> read_every_way(const zt_file *f, bool mapped) {
  std::vector<PathResult> r;
  auto note = [&](const char *what, zt_status st) { r.push_back({what, st, st ? zt_last_error() : ""}); };
  std::vector<uint8_t> buf(64 * 64 * 4);
  for (const char *name : {"raw", "zs"}) {
    const zt_object *o = object(f, name);
    size_t n = 0;
    note("zt_component_read", zt_component_read(o, 0, buf.data(), buf.size(), &n));
    note("zt_component_read_range", zt_component_read_range(o, 0, 3, 2, buf.data(), buf.size()));
    const uint64_t a[] = {1, 1}, b[] = {2, 3};
    note("zt_component_read_slice", zt_component_read_slice(o, 0, 2, a, b, buf.data(), buf.size()));
    DLManagedTensor *t = nullptr;
    zt_status st = zt_object_to_dlpack(o, &t);
    if (t) t->deleter(t);
    note("zt_object_to_dlpack", st);
    note("zt_component_stream", stream_all(o));
    zt_read_request req{};
    req.object = o;
    req.component = 0;
    req.dst = buf.data();
    req.dst_capacity = buf.size();
    note("zt_file_read_many", zt_file_read_many(f, &req, 1));
    if (mapped && std::string(name) == "raw") {
      const void *v = nullptr;
      if (zttest::kHostBigEndian) {
        // No view of little-endian f32s on a big-endian host (docs/cross.md),
        // whatever the digest says: refused before any byte is lent.
        EXPECT_EQ(zt_component_view(o, 0, &v, &n), ZT_E_NOT_ZERO_COPY);
      } else {
        note("zt_component_view", zt_component_view(o, 0, &v, &n));
      }
    }
  }
  std::vector<uint8_t> dense(3 * 8 * 4);
  note("zt_object_densify", zt_object_densify(object(f, "csr"), dense.data(), dense.size(), nullptr));
  return r;
}

class VerifyOnRead : public ::testing::TestWithParam<zt_digest_alg> {
 protected:
  void SetUp() override {
    path_ = dir_.file(GetParam() == ZT_DIGEST_SHA256 ? "sha.zt" : "crc.zt");
    write_fixture(path_, GetParam());
  }
  const char *alg() const { return GetParam() == ZT_DIGEST_SHA256 ? "sha256" : "crc32c"; }
  TempDir dir_;
  std::string path_;
};

TEST_P(VerifyOnRead, CleanFileReadsEveryWay) {
  for (zt_access access : {ZT_ACCESS_MMAP, ZT_ACCESS_PREAD}) {
    zt_open_options o = verify_opts(access);
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open(path_.c_str(), &o, &f), ZT_OK);
    for (const auto &r : read_every_way(f, access == ZT_ACCESS_MMAP))
      EXPECT_EQ(r.status, ZT_OK) << r.path << ": " << r.message;
    zt_close(f);
  }
}

TEST_P(VerifyOnRead, FlippedBytesFailEveryReadPathWithContext) {
  corrupt_blobs(path_);
  for (zt_access access : {ZT_ACCESS_MMAP, ZT_ACCESS_PREAD}) {
    SCOPED_TRACE(access == ZT_ACCESS_MMAP ? "mmap" : "pread");
    zt_open_options o = verify_opts(access);
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open(path_.c_str(), &o, &f), ZT_OK);
    const auto results = read_every_way(f, access == ZT_ACCESS_MMAP);
    EXPECT_GE(results.size(), 13u);
    for (const auto &r : results) {
      SCOPED_TRACE(r.path);
      EXPECT_EQ(r.status, ZT_E_DIGEST_MISMATCH) << r.message;
      EXPECT_NE(r.message.find(path_), std::string::npos) << r.message;
      EXPECT_NE(r.message.find(alg()), std::string::npos) << r.message;
      EXPECT_NE(r.message.find("component '"), std::string::npos) << r.message;
      EXPECT_NE(r.message.find("object '"), std::string::npos) << r.message;
    }
    // A component without a digest is read unchecked.
    uint8_t plain[7];
    EXPECT_EQ(zt_component_read(object(f, "nodigest"), 0, plain, sizeof plain, nullptr), ZT_OK) << zt_last_error();
    zt_close(f);
  }
}

TEST_P(VerifyOnRead, OffByDefaultAndForOldCallers) {
  corrupt_blobs(path_);
  std::vector<uint8_t> buf(64 * 64 * 4);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path_.c_str(), nullptr, &f), ZT_OK);
  EXPECT_EQ(zt_component_read(object(f, "raw"), 0, buf.data(), buf.size(), nullptr), ZT_OK) << zt_last_error();
  zt_close(f);
  // A caller compiled against 1.0 passes a struct that ends before the
  // field: whatever follows it in memory must not turn verification on.
  struct {
    zt_open_options o;
    uint32_t garbage[4];
  } old;
  zt_open_options_init(&old.o);
  old.o.verify_on_read = 1;
  old.o.struct_size = offsetof(zt_open_options, verify_on_read);
  ASSERT_EQ(zt_open(path_.c_str(), &old.o, &f), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_component_read(object(f, "raw"), 0, buf.data(), buf.size(), nullptr), ZT_OK) << zt_last_error();
  zt_close(f);
}

// Success is remembered: after a component was checked, damage that appears
// later in the file is not seen by it (one check per handle), while a
// component not read yet is still checked.
TEST_P(VerifyOnRead, SuccessIsRememberedPerComponent) {
  zt_open_options o = verify_opts(ZT_ACCESS_PREAD);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path_.c_str(), &o, &f), ZT_OK);
  std::vector<uint8_t> buf(64 * 64 * 4);
  ASSERT_EQ(zt_component_read(object(f, "raw"), 0, buf.data(), buf.size(), nullptr), ZT_OK);
  corrupt_blobs(path_);
  EXPECT_EQ(zt_component_read(object(f, "raw"), 0, buf.data(), buf.size(), nullptr), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_component_read(object(f, "zs"), 0, buf.data(), buf.size(), nullptr), ZT_E_DIGEST_MISMATCH);
  zt_close(f);
}

TEST_P(VerifyOnRead, ConcurrentFirstReadersAgree) {
  for (bool damaged : {false, true}) {
    if (damaged) corrupt_blobs(path_);
    zt_open_options o = verify_opts(ZT_ACCESS_MMAP);
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open(path_.c_str(), &o, &f), ZT_OK);
    const zt_object *raw = object(f, "raw");
    std::vector<zt_status> got(4, ZT_E_INTERNAL);
    std::vector<std::thread> pool;
    for (size_t t = 0; t < got.size(); ++t)
      pool.emplace_back([&, t] {
        const void *v = nullptr;
        size_t n = 0;
        float one = 0;
        // A view where the host can have one (little-endian), else a read:
        // either is a first reader that must check the digest.
        got[t] = zttest::kHostBigEndian ? zt_component_read_range(raw, 0, 5, 1, &one, sizeof one)
                                        : zt_component_view(raw, 0, &v, &n);
      });
    for (auto &th : pool) th.join();
    for (zt_status st : got) EXPECT_EQ(st, damaged ? ZT_E_DIGEST_MISMATCH : ZT_OK);
    zt_close(f);
  }
}

INSTANTIATE_TEST_SUITE_P(Digests, VerifyOnRead, ::testing::Values(ZT_DIGEST_SHA256, ZT_DIGEST_CRC32C),
                         [](const ::testing::TestParamInfo<zt_digest_alg> &i) {
                           return std::string(i.param == ZT_DIGEST_SHA256 ? "sha256" : "crc32c");
                         });

}  // namespace
