// zt_file_read_many on a file that is not in the page cache (issue 26):
// cold raw ranges are read in file order in contiguous streams
// (Reader::read_many, Source::likely_cached), cached ones on the parallel
// path. Both must give the bytes the file holds, through the map and
// through pread, on one thread and on several, and I/O errors inside a
// stream must land on the jobs they hit. The file is evicted with
// fdatasync + posix_fadvise(DONTNEED); where that does not evict (tmpfs
// keeps its pages), the tests that need a cold file are skipped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "prefetcher.h"
#include "reader.h"
#include "test_util.h"
#include "ztensor.h"
#include "ztensor_set.h"

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
  for (auto &b : v) b = static_cast<uint8_t>(rng() % 13);  // compressible for zstd
  return v;
}

// Large raw blobs (split into chunks: more than 8 MiB, not a multiple of the
// 4 MiB chunk), small raw ones (batched), zstd ones, an empty one; the file
// size is not a multiple of the page or of a disk block, and the last blob
// ends in the file's last partial block.
std::vector<Tensor> make_tensors() {
  std::vector<Tensor> t;
  uint32_t seed = 7;
  auto add = [&](const std::string &name, size_t n, zt_encoding e) { t.push_back({name, pattern(n, seed++), e}); };
  add("big_a", (size_t{9} << 20) + 13, ZT_ENCODING_RAW);
  add("small_a", 5, ZT_ENCODING_RAW);
  add("small_b", 4096, ZT_ENCODING_RAW);
  add("small_c", 100003, ZT_ENCODING_RAW);
  add("zstd_a", (size_t{9} << 20) + 1, ZT_ENCODING_ZSTD);
  add("empty", 0, ZT_ENCODING_RAW);
  add("big_b", (size_t{19} << 20) + 77, ZT_ENCODING_RAW);
  add("small_d", 777, ZT_ENCODING_RAW);
  add("big_c", (size_t{12} << 20) + 4095, ZT_ENCODING_RAW);
  return t;
}

std::string write(const TempDir &dir, const std::vector<Tensor> &ts) {
  std::string path = dir.file("cold.zt");
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;  // evict() syncs
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK) << zt_last_error();
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

// Whether the page at `offset` of the file is in the page cache.
bool resident(const std::string &path, uint64_t offset) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  const long page = ::sysconf(_SC_PAGESIZE);
  const off_t at = static_cast<off_t>(offset) & ~static_cast<off_t>(page - 1);
  void *p = ::mmap(nullptr, static_cast<size_t>(page), PROT_READ, MAP_SHARED, fd, at);
  unsigned char v = 1;
  if (p != MAP_FAILED) {
    if (::mincore(p, static_cast<size_t>(page), &v) != 0) v = 1;
    ::munmap(p, static_cast<size_t>(page));
  }
  ::close(fd);
  return v & 1;
}

// Drops the file's pages from the page cache; false where the file system
// keeps them (tmpfs).
bool evict(const std::string &path, uint64_t probe_offset) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return !resident(path, probe_offset);
}

// Drops [offset, offset+len) of the file from the page cache.
void evict_range(const std::string &path, uint64_t offset, uint64_t len) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(len), POSIX_FADV_DONTNEED);
  ::close(fd);
}

// prefetch: the open option of that name (src/prefetcher.h).
zt_file *open_with(const std::string &path, uint32_t threads, uint32_t access, bool prefetch = false) {
  zt_open_options o;
  zt_open_options_init(&o);
  o.threads = threads;
  o.access = access;
  o.prefetch = prefetch ? 1 : 0;
  zt_file *f = nullptr;
  EXPECT_EQ(zt_open(path.c_str(), &o, &f), ZT_OK) << zt_last_error();
  return f;
}

const zt_object *object(const zt_file *f, const std::string &name) {
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_file_object_by_name(f, name.data(), name.size(), &o), ZT_OK);
  return o;
}

zt_component_info info(const zt_object *o) {
  zt_component_info ci;
  std::memset(&ci, 0, sizeof ci);
  ci.struct_size = sizeof ci;
  EXPECT_EQ(zt_object_component(o, 0, &ci), ZT_OK);
  return ci;
}

struct Reads {
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<zt_read_request> reqs;
};

// One read_many of the named tensors; each buffer has a spare byte that must
// stay untouched. Buffers start at every offset modulo 64 (destinations and
// file offsets do not share an alignment).
Reads read_many(zt_file *f, const std::vector<Tensor> &ts, const std::vector<size_t> &which) {
  Reads r;
  r.bufs.resize(which.size());
  r.reqs.resize(which.size());
  for (size_t k = 0; k < which.size(); ++k) {
    const Tensor &t = ts[which[k]];
    r.bufs[k].assign(t.bytes.size() + 1 + k, 0xEE);
    r.reqs[k].object = object(f, t.name);
    r.reqs[k].dst = r.bufs[k].data() + k;  // shifted by k bytes
    r.reqs[k].dst_capacity = t.bytes.size() + 1;
    r.reqs[k].status = ZT_E_INTERNAL;
  }
  zt_file_read_many(f, r.reqs.data(), r.reqs.size());
  return r;
}

void expect_bytes(const Reads &r, const std::vector<Tensor> &ts, const std::vector<size_t> &which) {
  for (size_t k = 0; k < which.size(); ++k) {
    const Tensor &t = ts[which[k]];
    SCOPED_TRACE(t.name);
    ASSERT_EQ(r.reqs[k].status, ZT_OK) << (r.reqs[k].status ? zt_last_error() : "");
    ASSERT_EQ(r.reqs[k].out_size, t.bytes.size());
    EXPECT_TRUE(std::equal(t.bytes.begin(), t.bytes.end(), r.bufs[k].begin() + static_cast<long>(k)));
    EXPECT_EQ(r.bufs[k][k + t.bytes.size()], 0xEE);
  }
}

std::vector<size_t> all_of(const std::vector<Tensor> &ts) {
  std::vector<size_t> v(ts.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

uint64_t raw_bytes(const std::vector<Tensor> &ts) {
  uint64_t n = 0;
  for (const auto &t : ts)
    if (t.encoding == ZT_ENCODING_RAW) n += t.bytes.size();
  return n;
}

// A read of every tensor of a file cut at `cut`: the tensors wholly before
// the cut have their bytes, the others failed with ZT_E_IO.
void expect_cut_at(const Reads &r, const std::vector<Tensor> &ts, uint64_t cut) {
  for (size_t k = 0; k < ts.size(); ++k) {
    SCOPED_TRACE(ts[k].name);
    const zt_component_info ci = info(r.reqs[k].object);
    if (ci.offset + ci.length <= cut) {
      EXPECT_EQ(r.reqs[k].status, ZT_OK);
      EXPECT_TRUE(std::equal(ts[k].bytes.begin(), ts[k].bytes.end(), r.bufs[k].begin() + static_cast<long>(k)));
    } else {
      EXPECT_EQ(r.reqs[k].status, ZT_E_IO);
    }
  }
}

// Whether every page of every raw blob is in the page cache (one map of the
// file, one mincore over it).
bool raw_pages_resident(const zt_file *f, const std::string &path, const std::vector<Tensor> &ts) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const off_t size = ::lseek(fd, 0, SEEK_END);
  void *map = size > 0 ? ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (map == MAP_FAILED) return false;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((static_cast<uint64_t>(size) + page - 1) / page);
  bool all = ::mincore(map, static_cast<size_t>(size), in.data()) == 0;
  ::munmap(map, static_cast<size_t>(size));
  for (const auto &t : ts) {
    if (!all || t.encoding != ZT_ENCODING_RAW || t.bytes.empty()) continue;
    const zt_component_info ci = info(object(f, t.name));
    for (uint64_t p = ci.offset / page; p <= (ci.offset + ci.length - 1) / page; ++p) all = all && (in[p] & 1);
  }
  return all;
}

}  // namespace

TEST(ColdRead, ColdAndWarmReadsGiveTheFileBytesOnEveryAccessAndThreadCount) {
  TempDir dir;
  const auto ts = make_tensors();
  const std::string path = write(dir, ts);
  const auto all = all_of(ts);
  for (uint32_t access : {ZT_ACCESS_MMAP, ZT_ACCESS_PREAD}) {
    for (uint32_t threads : {1u, 2u, 3u, 0u}) {
      SCOPED_TRACE("access " + std::to_string(access) + " threads " + std::to_string(threads));
      if (!evict(path, 20u << 20)) GTEST_SKIP() << "this file system keeps the file's pages (tmpfs?)";
      zt_file *f = open_with(path, threads, access);
      const uint64_t before = zt::cold_streamed_bytes();
      Reads cold = read_many(f, ts, all);
      const uint64_t streamed = zt::cold_streamed_bytes() - before;
      expect_bytes(cold, ts, all);
      // Every raw blob was cold (the open reads the header and the
      // manifest, and readahead may bring the first few MiB: at least the
      // later large blobs are streamed), and no more than the raw bytes
      // and the padding between them.
      EXPECT_GE(streamed, uint64_t{19} << 20);
      EXPECT_LE(streamed, raw_bytes(ts) + 64 * ts.size());
      // Now cached: the parallel path, the same bytes. The kernel may drop
      // pages of a clean file at any time on a busy machine (seen once, on
      // s390x under qemu beside a CI run: one blob streamed again); the
      // library is right to stream what it finds missing, so the check
      // holds where every page of the raw blobs is still there.
      const bool all_cached = raw_pages_resident(f, path, ts);
      const uint64_t before_warm = zt::cold_streamed_bytes();
      Reads warm = read_many(f, ts, all);
      if (all_cached) EXPECT_EQ(zt::cold_streamed_bytes(), before_warm);
      expect_bytes(warm, ts, all);
      EXPECT_EQ(zt_close(f), ZT_OK);
    }
  }
}

TEST(ColdRead, OnlyTheRangesNotCachedAreStreamed) {
  TempDir dir;
  const auto ts = make_tensors();
  const std::string path = write(dir, ts);
  zt_file *f = open_with(path, 2, ZT_ACCESS_MMAP);
  const zt_component_info b = info(object(f, "big_b"));
  const zt_component_info c = info(object(f, "big_c"));
  if (!evict(path, c.offset + c.length / 2)) {
    zt_close(f);
    GTEST_SKIP() << "this file system keeps the file's pages (tmpfs?)";
  }
  // big_b read once: cached; big_c (after it in the file) cold. The
  // readahead of big_b's read may run well into big_c (two 8 MiB windows
  // here, more on a loaded machine), so big_c is evicted again after it.
  const std::vector<size_t> only_b = {6};
  expect_bytes(read_many(f, ts, only_b), ts, only_b);
  // Readahead still in flight when the eviction runs (its pages locked)
  // lands afterwards: evict until the tail stays out, a few times at most.
  for (int i = 0; i < 50; ++i) {
    evict_range(path, c.offset, c.length);
    if (!resident(path, c.offset + c.length - 4096) && !resident(path, c.offset + c.length / 2)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (resident(path, c.offset + c.length - 4096)) {
    // Seen on the i686 build only (same file, same kernel): the page cache
    // keeps big_c's pages through every POSIX_FADV_DONTNEED after big_b's
    // read. Not investigated yet; the condition this test needs is missing.
    zt_close(f);
    GTEST_SKIP() << "big_c's pages stay in the page cache after POSIX_FADV_DONTNEED on this host";
  }
  ASSERT_TRUE(resident(path, b.offset + b.length / 2));
  ASSERT_FALSE(resident(path, c.offset + c.length - 4096));
  const uint64_t before = zt::cold_streamed_bytes();
  const std::vector<size_t> both = {6, 8};
  expect_bytes(read_many(f, ts, both), ts, both);
  EXPECT_EQ(zt::cold_streamed_bytes() - before, c.length);
  EXPECT_EQ(zt_close(f), ZT_OK);
}

TEST(ColdRead, AFileThatShrankFailsTheStreamedJobsItCuts) {
  TempDir dir;
  const auto ts = make_tensors();
  const std::string path = write(dir, ts);
  zt_file *f = open_with(path, 2, ZT_ACCESS_PREAD);
  const zt_component_info b = info(object(f, "big_b"));
  // Cut inside big_b: the pages past the cut leave the cache with it.
  if (!evict(path, b.offset + b.length / 2)) {
    zt_close(f);
    GTEST_SKIP() << "this file system keeps the file's pages (tmpfs?)";
  }
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(b.offset + b.length / 2)), 0);
  const auto all = all_of(ts);
  const uint64_t before = zt::cold_streamed_bytes();
  Reads r = read_many(f, ts, all);
  EXPECT_GT(zt::cold_streamed_bytes(), before);
  expect_cut_at(r, ts, b.offset + b.length / 2);
  EXPECT_EQ(zt_close(f), ZT_OK);
}

TEST(ColdRead, NewDestinationMemoryIsStreamedToo) {
  TempDir dir;
  const auto ts = make_tensors();
  const std::string path = write(dir, ts);
  zt_file *f = open_with(path, 2, ZT_ACCESS_MMAP);
  const zt_component_info b = info(object(f, "big_b"));
  if (!evict(path, b.offset + b.length / 2)) {
    zt_close(f);
    GTEST_SKIP() << "this file system keeps the file's pages (tmpfs?)";
  }
  // Never written: its pages are not in memory until the read faults them.
  const size_t n = ts[6].bytes.size();
  void *fresh = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(fresh, MAP_FAILED);
  zt_read_request req{};
  req.object = object(f, "big_b");
  req.dst = fresh;
  req.dst_capacity = n;
  const uint64_t before = zt::cold_streamed_bytes();
  const uint64_t reopened = zt::cold_reopened_streams();
  ASSERT_EQ(zt_file_read_many(f, &req, 1), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt::cold_streamed_bytes() - before, n);
  // Two streams (two threads): the second through its own opening.
  EXPECT_EQ(zt::cold_reopened_streams() - reopened, 1u);
  EXPECT_EQ(req.out_size, n);
  EXPECT_EQ(std::memcmp(fresh, ts[6].bytes.data(), n), 0);
  ::munmap(fresh, n);
  EXPECT_EQ(zt_close(f), ZT_OK);
}

// The second stream's own opening is the same file as the first's even
// when the path no longer is: renamed away and replaced by another file.
TEST(ColdRead, StreamsReopenTheOpenFileNotThePath) {
  TempDir dir;
  const auto ts = make_tensors();
  const std::string path = write(dir, ts);
  for (uint32_t access : {ZT_ACCESS_MMAP, ZT_ACCESS_PREAD}) {
    SCOPED_TRACE("access " + std::to_string(access));
    if (!evict(path, 20u << 20)) GTEST_SKIP() << "this file system keeps the file's pages (tmpfs?)";
    zt_file *f = open_with(path, 2, access);
    const std::string moved = dir.file("moved.zt");
    ASSERT_EQ(::rename(path.c_str(), moved.c_str()), 0);
    {
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      ASSERT_GE(fd, 0);
      const std::vector<uint8_t> other(size_t{64} << 20, 0x5A);  // as long, other bytes
      ASSERT_EQ(::write(fd, other.data(), other.size()), static_cast<ssize_t>(other.size()));
      ::close(fd);
    }
    const uint64_t reopened = zt::cold_reopened_streams();
    const auto all = all_of(ts);
    expect_bytes(read_many(f, ts, all), ts, all);
    EXPECT_EQ(zt::cold_reopened_streams() - reopened, 1u);
    EXPECT_EQ(zt_close(f), ZT_OK);
    ASSERT_EQ(::rename(moved.c_str(), path.c_str()), 0);
  }
}

// Opening a cold file reads its magic, footer and manifest, not the
// megabytes of readahead a fault on the map would bring around each.
TEST(ColdRead, OpeningAColdFileReadsLittleMoreThanItParses) {
  TempDir dir;
  const auto ts = make_tensors();
  const std::string path = write(dir, ts);
  if (!evict(path, 0)) GTEST_SKIP() << "this file system keeps the file's pages (tmpfs?)";
  zt_file *f = open_with(path, 2, ZT_ACCESS_MMAP);
  const zt_component_info a = info(object(f, "big_a"));
  // Pages of big_a (at the start of the file, after the 64-byte header)
  // that the open brought in: pread's readahead for an 8-byte read is a few
  // pages; a fault at offset 0 reads the device's whole readahead window
  // (read_ahead_kb: 8 MiB on the machine this was measured on).
  const long page = ::sysconf(_SC_PAGESIZE);
  uint64_t resident_bytes = 0;
  for (uint64_t at = a.offset; at < a.offset + a.length; at += static_cast<uint64_t>(page))
    if (resident(path, at)) resident_bytes += static_cast<uint64_t>(page);
  EXPECT_LE(resident_bytes, uint64_t{1} << 20);
  EXPECT_EQ(zt_close(f), ZT_OK);
}

// ---- the `prefetch` open option (src/prefetcher.h) ----

namespace {

// Whether every page of [begin, end) of the file is in the page cache.
bool range_resident(const std::string &path, uint64_t begin, uint64_t end) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = begin & ~(page - 1);
  void *map = ::mmap(nullptr, end - start, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(start));
  ::close(fd);
  if (map == MAP_FAILED) return false;
  std::vector<unsigned char> in((end - start + page - 1) / page);
  bool all = ::mincore(map, end - start, in.data()) == 0;
  ::munmap(map, end - start);
  for (unsigned char v : in) all = all && (v & 1);
  return all;
}

// [first blob, end of the last blob): what the prefetch thread reads.
std::pair<uint64_t, uint64_t> blob_span(const zt_file *f, const std::vector<Tensor> &ts) {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto &t : ts) {
    const zt_component_info ci = info(object(f, t.name));
    if (ci.length == 0) continue;
    lo = std::min(lo, ci.offset);
    hi = std::max(hi, ci.offset + ci.length);
  }
  return {lo, hi};
}

}  // namespace

// With nothing but the open, the thread brings every blob (zstd ones too)
// into the page cache, through the map or with pread access alike.
TEST(Prefetch, TheOpenBringsEveryBlobIntoThePageCache) {
  TempDir dir;
  const auto ts = make_tensors();
  const std::string path = write(dir, ts);
  for (uint32_t access : {ZT_ACCESS_MMAP, ZT_ACCESS_PREAD}) {
    SCOPED_TRACE("access " + std::to_string(access));
    if (!evict(path, 20u << 20)) GTEST_SKIP() << "this file system keeps the file's pages (tmpfs?)";
    zt_file *f = open_with(path, 2, access, true);
    const auto span = blob_span(f, ts);
    bool all = false;
    for (int i = 0; i < 400 && !(all = range_resident(path, span.first, span.second)); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(all) << "the blobs are not all in the page cache 20 s after the open";
    EXPECT_EQ(zt_close(f), ZT_OK);
  }
}

// zt_file_read_many on a cold file opened with prefetch copies behind the
// prefetch thread instead of streaming the cold ranges itself, and gives
// the file's bytes on every thread count and access.
TEST(Prefetch, ReadManyCopiesBehindThePrefetchInsteadOfStreaming) {
  TempDir dir;
  const auto ts = make_tensors();
  const std::string path = write(dir, ts);
  const auto all = all_of(ts);
  for (uint32_t access : {ZT_ACCESS_MMAP, ZT_ACCESS_PREAD}) {
    for (uint32_t threads : {1u, 2u, 0u}) {
      SCOPED_TRACE("access " + std::to_string(access) + " threads " + std::to_string(threads));
      if (!evict(path, 20u << 20)) GTEST_SKIP() << "this file system keeps the file's pages (tmpfs?)";
      zt_file *f = open_with(path, threads, access, true);
      const uint64_t before = zt::cold_streamed_bytes();
      Reads r = read_many(f, ts, all);
      expect_bytes(r, ts, all);
      EXPECT_EQ(zt::cold_streamed_bytes(), before) << "cold ranges were streamed beside the prefetch thread";
      EXPECT_EQ(zt_close(f), ZT_OK);
    }
  }
}

// A file cut short under the prefetch thread stops it (no SIGBUS: its
// window past the end is an error, not a fault); reads waiting on it go on
// and report ZT_E_IO for the bytes that are gone, as without the option
// (pread access: see AFileThatShrankFailsTheStreamedJobsItCuts).
TEST(Prefetch, AFileCutShortStopsThePrefetchAndTheReadsReportIt) {
  TempDir dir;
  const auto ts = make_tensors();
  const std::string path = write(dir, ts);
  for (uint32_t access : {ZT_ACCESS_PREAD, ZT_ACCESS_MMAP}) {
    SCOPED_TRACE("access " + std::to_string(access));
    const std::string copy = dir.file("cut" + std::to_string(access) + ".zt");
    {
      std::string cmd = "cp '" + path + "' '" + copy + "'";
      ASSERT_EQ(std::system(cmd.c_str()), 0);
    }
    if (!evict(copy, 20u << 20)) GTEST_SKIP() << "this file system keeps the file's pages (tmpfs?)";
    zt_file *f = open_with(copy, 2, access, true);
    const zt_component_info b = info(object(f, "big_b"));
    const uint64_t cut = b.offset + b.length / 2;
    ASSERT_EQ(::truncate(copy.c_str(), static_cast<off_t>(cut)), 0);
    evict(copy, 0);
    if (access == ZT_ACCESS_MMAP) {
      // The reader's own copies from its map would fault past the cut (as
      // without the option: a mapped file must not shrink while open); the
      // prefetch thread must not. Give it time to reach the cut.
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    } else {
      expect_cut_at(read_many(f, ts, all_of(ts)), ts, cut);
    }
    EXPECT_EQ(zt_close(f), ZT_OK);
  }
}

// Closing while the thread reads stops it: over and over, at once and
// after a read (ThreadSanitizer runs this test, .ci/tsan.sh).
TEST(Prefetch, ClosingWhileThePrefetchRunsStopsIt) {
  TempDir dir;
  const auto ts = make_tensors();
  const std::string path = write(dir, ts);
  for (int round = 0; round < 12; ++round) {
    evict(path, 20u << 20);
    zt_file *f = open_with(path, 2, round % 2 ? ZT_ACCESS_PREAD : ZT_ACCESS_MMAP, true);
    if (round % 3 == 1) {
      const std::vector<size_t> one = {static_cast<size_t>(round % ts.size())};
      expect_bytes(read_many(f, ts, one), ts, one);
    }
    EXPECT_EQ(zt_close(f), ZT_OK);
  }
}

// The option asks nothing of sources that are not files: a file in memory
// opens and reads as without it.
TEST(Prefetch, MemoryFilesOpenAndReadAsWithoutIt) {
  TempDir dir;
  const auto ts = make_tensors();
  const std::string path = write(dir, ts);
  std::vector<uint8_t> bytes;
  {
    FILE *fp = std::fopen(path.c_str(), "rb");
    ASSERT_NE(fp, nullptr);
    std::fseek(fp, 0, SEEK_END);
    bytes.resize(static_cast<size_t>(std::ftell(fp)));
    std::fseek(fp, 0, SEEK_SET);
    ASSERT_EQ(std::fread(bytes.data(), 1, bytes.size(), fp), bytes.size());
    std::fclose(fp);
  }
  zt_open_options o;
  zt_open_options_init(&o);
  o.prefetch = 1;
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open_memory(bytes.data(), bytes.size(), &o, &f), ZT_OK) << zt_last_error();
  const auto all = all_of(ts);
  expect_bytes(read_many(f, ts, all), ts, all);
  EXPECT_EQ(zt_close(f), ZT_OK);
}

// A copy that follows the prefetch thread faults its destination in while
// it waits: the pages become present, and what was there stays.
TEST(Prefetch, PrefaultingADestinationKeepsItsBytesAndMapsItsPages) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t n = 64 * page;
  auto *p = static_cast<uint8_t *>(::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  p[3 * page + 5] = 0x42;                  // one page written before, the others never touched
  zt::prefault_destination(p + 7, n - 7);  // not page-aligned: whole pages inside only
  EXPECT_EQ(p[3 * page + 5], 0x42);
  std::vector<unsigned char> in(n / page);
  ASSERT_EQ(::mincore(p, n, in.data()), 0);
  size_t present = 0;
  for (size_t i = 1; i < in.size(); ++i) present += in[i] & 1;
  // Where MADV_POPULATE_WRITE is unknown (kernels before 5.14, qemu-user)
  // the call does nothing, and the copy faults the pages as before.
  if (present == 1) GTEST_SKIP() << "MADV_POPULATE_WRITE is not acted on here";
  EXPECT_EQ(present, in.size() - 1);
  for (size_t i = 0; i < n; ++i)
    if (i != 3 * page + 5) ASSERT_EQ(p[i], 0) << i;
  ::munmap(p, n);
}

// A sharded set opens its shards together: it ignores the option rather
// than start one prefetch thread per shard.
TEST(Prefetch, ASetIgnoresTheOption) {
  TempDir dir;
  const auto ts = make_tensors();
  const std::string path = write(dir, ts);
  const std::string index = dir.file("m.zt.index.json");
  {
    FILE *fp = std::fopen(index.c_str(), "w");
    ASSERT_NE(fp, nullptr);
    std::string map;
    for (const auto &t : ts) map += std::string(map.empty() ? "" : ", ") + "\"" + t.name + "\": \"cold.zt\"";
    std::fprintf(fp, "{\"weight_map\": {%s}}", map.c_str());
    std::fclose(fp);
  }
  if (!evict(path, 20u << 20)) GTEST_SKIP() << "this file system keeps the file's pages (tmpfs?)";
  zt_open_options o;
  zt_open_options_init(&o);
  o.prefetch = 1;
  zt_set *set = nullptr;
  ASSERT_EQ(zt_open_set(index.c_str(), &o, &set), ZT_OK) << zt_last_error();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  zt_file *f = open_with(path, 1, ZT_ACCESS_PREAD);  // only to locate big_c
  const zt_component_info c = info(object(f, "big_c"));
  EXPECT_FALSE(resident(path, c.offset + c.length - 4096)) << "the set's shard was read ahead";
  EXPECT_EQ(zt_close(f), ZT_OK);
  EXPECT_EQ(zt_set_close(set), ZT_OK);
}

namespace {

// Resident kilobytes of this process's mappings of `path` (/proc/self/smaps);
// -1 when none is listed.
long mapped_rss_kb(const std::string &path) {
  FILE *fp = std::fopen("/proc/self/smaps", "r");
  if (!fp) return -1;
  char line[4096];
  long total = -1;
  bool in = false;
  while (std::fgets(line, sizeof line, fp)) {
    std::string l(line);
    if (!l.empty() && l.back() == '\n') l.pop_back();
    unsigned long lo = 0, hi = 0;
    char dash = 0;
    if (std::sscanf(l.c_str(), "%lx%c%lx ", &lo, &dash, &hi) == 3 && dash == '-') {  // a mapping's first line
      in = l.size() >= path.size() && l.compare(l.size() - path.size(), path.size(), path) == 0;
      continue;
    }
    long kb = 0;
    if (in && std::sscanf(l.c_str(), "Rss: %ld kB", &kb) == 1) total = std::max(total, 0L) + kb;
  }
  std::fclose(fp);
  return total;
}

}  // namespace

// Once copies follow the thread, it stops mapping pages into the reader's
// map (nobody would touch them there) and reads through its own opening.
TEST(Prefetch, CopiesBehindTheThreadLeaveTheMapUnpopulated) {
  TempDir dir;
  // A long raw tail, so that what goes through the map anyway (the steps
  // read before read_many starts, the zstd blob its decoder reads in place)
  // is a small part of the file.
  auto ts = make_tensors();
  ts.push_back({"tail", std::vector<uint8_t>(size_t{80} << 20, 0x3C), ZT_ENCODING_RAW});
  const std::string path = write(dir, ts);
  if (!evict(path, 20u << 20)) GTEST_SKIP() << "this file system keeps the file's pages (tmpfs?)";
  // Destinations made before the open: read_many starts right after it.
  std::vector<std::vector<uint8_t>> bufs;
  for (const auto &t : ts) bufs.emplace_back(t.bytes.size() + 1, 0xEE);
  zt_file *f = open_with(path, 2, ZT_ACCESS_MMAP, true);
  std::vector<zt_read_request> reqs(ts.size());
  for (size_t k = 0; k < ts.size(); ++k) {
    ASSERT_EQ(zt_file_object_by_name(f, ts[k].name.data(), ts[k].name.size(), &reqs[k].object), ZT_OK);
    reqs[k].dst = bufs[k].data();
    reqs[k].dst_capacity = bufs[k].size();
  }
  ASSERT_EQ(zt_file_read_many(f, reqs.data(), reqs.size()), ZT_OK) << zt_last_error();
  for (size_t k = 0; k < ts.size(); ++k)
    ASSERT_TRUE(std::equal(ts[k].bytes.begin(), ts[k].bytes.end(), bufs[k].begin())) << ts[k].name;
  const long rss = mapped_rss_kb(path);
  if (rss < 0) {
    zt_close(f);
    GTEST_SKIP() << "/proc/self/smaps does not list the file's mapping here";
  }
  const auto span = blob_span(f, ts);
  // The step under way when read_many began may have gone through the map.
  EXPECT_LT(static_cast<uint64_t>(rss) * 1024, (span.second - span.first) / 2) << rss << " kB of the map resident";
  EXPECT_EQ(zt_close(f), ZT_OK);
}
