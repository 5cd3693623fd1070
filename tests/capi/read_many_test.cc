// zt_file_read_many: batched reads into caller buffers, on one and on
// several threads, with large raw components split into chunks, zstd ones
// decoded, and each request's failure reported on its own.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor.h"

using zttest::TempDir;

namespace {

struct Tensor {
  std::string name;
  std::vector<uint8_t> bytes;
  zt_encoding encoding;
};

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  // Few distinct values so zstd has something to compress.
  for (auto &b : v) b = static_cast<uint8_t>(rng() % 7);
  return v;
}

// Sizes chosen to cover: empty, tiny, just under and over the chunking
// threshold (8 MiB), and a large one that is not a multiple of the chunk.
std::vector<Tensor> make_tensors() {
  std::vector<Tensor> t;
  const size_t sizes[] = {0, 5, 4096, (size_t{8} << 20) - 3, (size_t{8} << 20) + 1, (size_t{19} << 20) + 77};
  uint32_t seed = 1;
  for (size_t n : sizes) {
    t.push_back({"raw" + std::to_string(n), pattern(n, seed++), ZT_ENCODING_RAW});
    t.push_back({"zstd" + std::to_string(n), pattern(n, seed++), ZT_ENCODING_ZSTD});
  }
  return t;
}

std::string write(const TempDir &dir, const std::vector<Tensor> &ts, const char *name) {
  std::string path = dir.file(name);
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK);
  for (const auto &t : ts) {
    zt_blob_options bo;
    zt_blob_options_init(&bo);
    bo.encoding = t.encoding;
    uint64_t shape[1] = {t.bytes.size()};
    EXPECT_EQ(
        zt_writer_add_dense(w, t.name.data(), t.name.size(), ZT_U8, shape, 1, t.bytes.data(), t.bytes.size(), &bo),
        ZT_OK)
        << zt_last_error();
  }
  EXPECT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  return path;
}

zt_file *open_with(const std::string &path, uint32_t threads, uint32_t access) {
  zt_open_options o;
  zt_open_options_init(&o);
  o.threads = threads;
  o.access = access;
  zt_file *f = nullptr;
  EXPECT_EQ(zt_open(path.c_str(), &o, &f), ZT_OK) << zt_last_error();
  return f;
}

const zt_object *object(const zt_file *f, const std::string &name) {
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_file_object_by_name(f, name.data(), name.size(), &o), ZT_OK);
  return o;
}

TEST(ReadMany, EveryThreadCountAndAccessReadsTheExactBytes) {
  TempDir dir;
  auto ts = make_tensors();
  std::string path = write(dir, ts, "many.zt");
  for (uint32_t access : {ZT_ACCESS_MMAP, ZT_ACCESS_PREAD}) {
    for (uint32_t threads : {1u, 2u, 3u, 0u}) {
      zt_file *f = open_with(path, threads, access);
      std::vector<std::vector<uint8_t>> bufs(ts.size());
      std::vector<zt_read_request> reqs(ts.size());
      for (size_t i = 0; i < ts.size(); ++i) {
        bufs[i].assign(ts[i].bytes.size() + 1, 0xEE);  // one spare byte must stay untouched
        reqs[i].object = object(f, ts[i].name);
        reqs[i].component = 0;
        reqs[i].dst = bufs[i].data();
        reqs[i].dst_capacity = bufs[i].size();
        reqs[i].out_size = 12345;
        reqs[i].status = ZT_E_INTERNAL;
      }
      ASSERT_EQ(zt_file_read_many(f, reqs.data(), reqs.size()), ZT_OK) << zt_last_error();
      for (size_t i = 0; i < ts.size(); ++i) {
        SCOPED_TRACE(ts[i].name + " threads " + std::to_string(threads) + " access " + std::to_string(access));
        EXPECT_EQ(reqs[i].status, ZT_OK);
        ASSERT_EQ(reqs[i].out_size, ts[i].bytes.size());
        EXPECT_TRUE(std::equal(ts[i].bytes.begin(), ts[i].bytes.end(), bufs[i].begin()));
        EXPECT_EQ(bufs[i].back(), 0xEE);
      }
      EXPECT_EQ(zt_close(f), ZT_OK);
    }
  }
}

TEST(ReadMany, EachRequestFailsOnItsOwnAndTheFirstFailureIsReturned) {
  TempDir dir;
  auto ts = make_tensors();
  std::string path = write(dir, ts, "many.zt");
  std::string other_path = write(dir, {ts[2]}, "other.zt");
  zt_file *f = open_with(path, 2, ZT_ACCESS_MMAP);
  zt_file *other = open_with(other_path, 1, ZT_ACCESS_MMAP);
  const Tensor &big = ts.back();  // zstd, 19 MiB
  const Tensor &big_raw = ts[ts.size() - 2];
  std::vector<uint8_t> ok_buf(big_raw.bytes.size()), small_buf(10), zbuf(big.bytes.size());
  zt_read_request reqs[6] = {};
  reqs[0] = {object(f, big_raw.name), 0, ok_buf.data(), ok_buf.size(), 0, ZT_OK};
  reqs[1] = {object(f, big.name), 0, small_buf.data(), small_buf.size(), 0, ZT_OK};        // too small
  reqs[2] = {object(other, ts[2].name), 0, small_buf.data(), small_buf.size(), 0, ZT_OK};  // foreign
  reqs[3] = {object(f, big.name), 1, zbuf.data(), zbuf.size(), 0, ZT_OK};                  // no component 1
  reqs[4] = {nullptr, 0, zbuf.data(), zbuf.size(), 0, ZT_OK};
  reqs[5] = {object(f, big.name), 0, zbuf.data(), zbuf.size(), 0, ZT_OK};
  EXPECT_EQ(zt_file_read_many(f, reqs, 6), ZT_E_BUFFER_TOO_SMALL);
  EXPECT_NE(std::string(zt_last_error()).find(big.name), std::string::npos) << zt_last_error();
  EXPECT_EQ(reqs[0].status, ZT_OK);
  EXPECT_EQ(ok_buf, big_raw.bytes);
  EXPECT_EQ(reqs[1].status, ZT_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(reqs[1].out_size, big.bytes.size());
  EXPECT_EQ(reqs[2].status, ZT_E_MISUSE);
  EXPECT_EQ(reqs[3].status, ZT_E_NOT_FOUND);
  EXPECT_EQ(reqs[4].status, ZT_E_INVALID_ARG);
  EXPECT_EQ(reqs[5].status, ZT_OK);
  EXPECT_EQ(zbuf, big.bytes);

  // A NULL destination for a non-empty component is refused per request.
  zt_read_request null_dst = {object(f, big.name), 0, nullptr, zbuf.size(), 0, ZT_OK};
  EXPECT_EQ(zt_file_read_many(f, &null_dst, 1), ZT_E_INVALID_ARG);

  EXPECT_EQ(zt_file_read_many(f, nullptr, 0), ZT_OK);
  EXPECT_EQ(zt_file_read_many(f, nullptr, 1), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_file_read_many(nullptr, reqs, 1), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_close(other), ZT_OK);
  EXPECT_EQ(zt_close(f), ZT_OK);
  // A closed file is misuse, not a crash.
  EXPECT_EQ(zt_file_read_many(f, reqs, 1), ZT_E_MISUSE);
}

// Thousands of small raw blobs are read in batches (one scattered read per
// run of neighbours): every size and padding gap, zstd ones in between, a
// blob asked for twice, requests out of file order, on every access mode.
TEST(ReadMany, SmallNeighboursReadInBatchesLandInTheirOwnBuffers) {
  TempDir dir;
  std::vector<Tensor> ts;
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    size_t n = i % 97 == 0 ? 0 : 1 + rng() % 9000;
    if (i == 1500) n = (size_t{5} << 20) + 3;  // too big to batch: splits a run
    char name[16];
    std::snprintf(name, sizeof name, "s%05d", i);
    ts.push_back({name, pattern(n, 100 + i), i % 11 == 5 ? ZT_ENCODING_ZSTD : ZT_ENCODING_RAW});
  }
  std::string path = write(dir, ts, "small.zt");
  std::string image;
  {
    FILE *fp = std::fopen(path.c_str(), "rb");
    ASSERT_NE(fp, nullptr);
    char buf[65536];
    for (size_t got; (got = std::fread(buf, 1, sizeof buf, fp)) > 0;) image.append(buf, got);
    std::fclose(fp);
  }
  std::vector<size_t> order(ts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = order.size() - 1 - i;  // reverse file order
  order.push_back(42);                                                        // asked for twice
  for (int access : {int{ZT_ACCESS_MMAP}, int{ZT_ACCESS_PREAD}, -1}) {
    for (uint32_t threads : {1u, 2u}) {
      SCOPED_TRACE("access " + std::to_string(access) + " threads " + std::to_string(threads));
      zt_file *f = nullptr;
      if (access < 0) {
        zt_open_options o;
        zt_open_options_init(&o);
        o.threads = threads;
        ASSERT_EQ(zt_open_memory(image.data(), image.size(), &o, &f), ZT_OK) << zt_last_error();
      } else {
        f = open_with(path, threads, static_cast<uint32_t>(access));
      }
      std::vector<std::vector<uint8_t>> bufs(order.size());
      std::vector<zt_read_request> reqs(order.size());
      for (size_t k = 0; k < order.size(); ++k) {
        const Tensor &t = ts[order[k]];
        bufs[k].assign(t.bytes.size() + 1, 0xEE);
        reqs[k] = {object(f, t.name), 0, bufs[k].data(), bufs[k].size(), 0, ZT_E_INTERNAL};
      }
      ASSERT_EQ(zt_file_read_many(f, reqs.data(), reqs.size()), ZT_OK) << zt_last_error();
      size_t wrong = 0;
      for (size_t k = 0; k < order.size(); ++k) {
        const Tensor &t = ts[order[k]];
        bool ok = reqs[k].status == ZT_OK && reqs[k].out_size == t.bytes.size() &&
                  std::equal(t.bytes.begin(), t.bytes.end(), bufs[k].begin()) && bufs[k].back() == 0xEE;
        if (!ok && wrong++ < 5) ADD_FAILURE() << t.name << ": status " << reqs[k].status;
      }
      EXPECT_EQ(wrong, 0u);
      EXPECT_EQ(zt_close(f), ZT_OK);
    }
  }
}

// A file cut short after it was opened: batched reads report an I/O error
// on each request they cover instead of faulting on the vanished pages.
TEST(ReadMany, FileTruncatedAfterOpenIsAnIoErrorPerRequest) {
#ifdef _WIN32
  GTEST_SKIP() << "Windows refuses to truncate a mapped file (ERROR_USER_MAPPED_FILE): nothing to fault on";
#endif
  TempDir dir;
  std::vector<Tensor> ts;
  for (int i = 0; i < 64; ++i) ts.push_back({"t" + std::to_string(100 + i), pattern(4096, i), ZT_ENCODING_RAW});
  std::string path = write(dir, ts, "cut.zt");
  for (uint32_t access : {ZT_ACCESS_MMAP, ZT_ACCESS_PREAD}) {
    std::string copy = dir.file("cut" + std::to_string(access) + ".zt");
    {
      std::string cmd = "cp '" + path + "' '" + copy + "'";
      ASSERT_EQ(std::system(cmd.c_str()), 0);
    }
    zt_file *f = open_with(copy, 1, access);
    ASSERT_EQ(::truncate(copy.c_str(), 64), 0);
    std::vector<std::vector<uint8_t>> bufs(ts.size(), std::vector<uint8_t>(4096));
    std::vector<zt_read_request> reqs(ts.size());
    for (size_t i = 0; i < ts.size(); ++i) reqs[i] = {object(f, ts[i].name), 0, bufs[i].data(), 4096, 0, ZT_OK};
    EXPECT_EQ(zt_file_read_many(f, reqs.data(), reqs.size()), ZT_E_IO);
    for (const auto &r : reqs) EXPECT_EQ(r.status, ZT_E_IO);
    EXPECT_EQ(zt_close(f), ZT_OK);
  }
}

}  // namespace
