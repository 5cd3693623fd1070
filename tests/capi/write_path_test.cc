// The writer's output path: small blobs gathered in a buffer, large ones
// written from the caller's memory in one writev with what is gathered,
// padding across buffer boundaries, streamed blobs between whole ones,
// zstd frames as ZSTD_compress2 makes them, and write errors (a file-size
// limit) that must leave the destination as it was and nothing beside it.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor.h"

using zttest::read_file;
using zttest::TempDir;

namespace {

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto &b : v) b = static_cast<uint8_t>(rng() | 1);  // never 0: padding stands out
  return v;
}

zt_writer *create(const std::string &path, uint32_t threads = 0) {
  zt_writer_options o;
  zt_writer_options_init(&o);
  o.sync = 0;
  o.threads = threads;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &o, &w), ZT_OK) << zt_last_error();
  return w;
}

std::string name_of(size_t i) {
  return "t" + std::to_string(100000 + i);  // sorted as written
}

// Sizes around the sink's thresholds (16 KiB direct, 64 KiB buffer) and
// odd ones, so padding and gathered bytes cross the buffer's end at many
// different points.
std::vector<size_t> mixed_sizes() {
  std::vector<size_t> s = {1,     63,    64, 65,   16383, 16384, 16385, 65535, 65536,
                           65537, 20001, 0,  4095, 1,     16383, 16383, 16383, 16383};
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) s.push_back(rng() % 3 == 0 ? rng() % 70000 : rng() % 3000);
  s.push_back(3 << 20);  // a large one last, after many small ones
  return s;
}

// The file up to its manifest, built independently: magic, then each blob
// at the next multiple of 64 with zero padding before it.
// The frame ZSTD_compress2 makes of n bytes with the writer's parameters
// (level, no content size, 2 workers from 4 MiB as the writer's threads = 2),
// in ref; returns ZSTD_compress2's result.
size_t zstd2_reference(const uint8_t *data, size_t n, int level, std::string &ref) {
  ZSTD_CCtx *c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
  if (n >= (size_t{4} << 20)) ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, 2);
  ref.assign(ZSTD_compressBound(n), '\0');
  size_t r = ZSTD_compress2(c, &ref[0], ref.size(), data, n);
  ZSTD_freeCCtx(c);
  if (!ZSTD_isError(r)) ref.resize(r);
  return r;
}

std::string expected_data_region(const std::vector<std::vector<uint8_t>> &blobs) {
  std::string out = "ZTEN1000";
  for (const auto &b : blobs) {
    out.resize((out.size() + 63) / 64 * 64, '\0');
    out.append(reinterpret_cast<const char *>(b.data()), b.size());
  }
  return out;
}

uint64_t manifest_offset(const std::string &file) {
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i) len |= uint64_t(uint8_t(file[file.size() - 16 + i])) << (8 * i);
  return file.size() - 16 - len;
}

size_t entries_in(const std::string &dir) {
  DIR *d = opendir(dir.c_str());
  size_t n = 0;
  while (dirent *e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

TEST(WritePath, SmallAndLargeBlobsLandAtTheirOffsetsWithZeroPadding) {
  TempDir tmp;
  const std::string path = tmp.file("m.zt");
  std::vector<std::vector<uint8_t>> blobs;
  zt_writer *w = create(path);
  std::vector<size_t> sizes = mixed_sizes();
  // Written in 16 MiB writevs, the first with the gathered bytes before it.
  sizes.push_back(1000);
  sizes.push_back((size_t{40} << 20) + 3);
  sizes.push_back(1000);
  for (size_t i = 0; i < sizes.size(); ++i) {
    blobs.push_back(pattern(sizes[i], static_cast<uint32_t>(i)));
    uint64_t shape[1] = {sizes[i]};
    std::string n = name_of(i);
    ASSERT_EQ(zt_writer_add_dense(w, n.data(), n.size(), ZT_U8, shape, 1, blobs[i].data(), blobs[i].size(), nullptr),
              ZT_OK)
        << zt_last_error();
  }
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  std::string file = read_file(path);
  std::string expect = expected_data_region(blobs);
  ASSERT_EQ(manifest_offset(file), expect.size());
  EXPECT_TRUE(file.compare(0, expect.size(), expect) == 0) << "data region differs";
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  size_t count = 0;
  zt_file_object_count(f, &count);
  EXPECT_EQ(count, sizes.size());
  zt_close(f);
}

// Blobs streamed in pieces of every size class, between whole ones, give
// the very same file as writing each blob whole.
TEST(WritePath, StreamedBlobsInterleavedWithWholeOnesMatchWholeWrites) {
  TempDir tmp;
  std::vector<size_t> sizes = mixed_sizes();
  std::vector<std::vector<uint8_t>> blobs;
  for (size_t i = 0; i < sizes.size(); ++i) blobs.push_back(pattern(sizes[i], static_cast<uint32_t>(i)));
  const size_t pieces[] = {1, 100, 16384, 70000};
  for (uint32_t enc : {ZT_ENCODING_RAW, ZT_ENCODING_ZSTD}) {
    SCOPED_TRACE(enc);
    zt_blob_options bo;
    zt_blob_options_init(&bo);
    bo.encoding = enc;
    bo.digest = ZT_DIGEST_CRC32C;
    std::string whole = tmp.file("whole.zt"), streamed = tmp.file("streamed.zt");
    zt_writer *a = create(whole), *b = create(streamed);
    for (size_t i = 0; i < blobs.size(); ++i) {
      uint64_t shape[1] = {blobs[i].size()};
      std::string n = name_of(i);
      ASSERT_EQ(zt_writer_add_dense(a, n.data(), n.size(), ZT_U8, shape, 1, blobs[i].data(), blobs[i].size(), &bo),
                ZT_OK);
      if (i % 2) {
        ASSERT_EQ(zt_writer_add_dense(b, n.data(), n.size(), ZT_U8, shape, 1, blobs[i].data(), blobs[i].size(), &bo),
                  ZT_OK);
        continue;
      }
      ASSERT_EQ(zt_writer_begin_object(b, n.data(), n.size(), nullptr, shape, 1), ZT_OK);
      ASSERT_EQ(zt_write_blob_begin(b, n.data(), n.size(), "data", ZT_U8, &bo), ZT_OK) << zt_last_error();
      const size_t piece = pieces[(i / 2) % 4];
      for (size_t off = 0; off < blobs[i].size(); off += piece)
        ASSERT_EQ(zt_write_blob_append(b, blobs[i].data() + off, std::min(piece, blobs[i].size() - off)), ZT_OK);
      ASSERT_EQ(zt_write_blob_end(b), ZT_OK) << zt_last_error();
    }
    ASSERT_EQ(zt_writer_finish(a), ZT_OK) << zt_last_error();
    ASSERT_EQ(zt_writer_finish(b), ZT_OK) << zt_last_error();
    if (enc == ZT_ENCODING_RAW) {
      EXPECT_TRUE(read_file(whole) == read_file(streamed)) << "streamed file differs from the whole-blob one";
      std::string file = read_file(whole), expect = expected_data_region(blobs);
      EXPECT_TRUE(file.compare(0, expect.size(), expect) == 0) << "data region differs";
    }
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open(streamed.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
    EXPECT_EQ(zt_file_verify(f, 0, nullptr, nullptr), ZT_OK) << zt_last_error();
    for (size_t i = 0; i < blobs.size(); i += 37) {
      const zt_object *o = nullptr;
      std::string n = name_of(i);
      ASSERT_EQ(zt_file_object_by_name(f, n.data(), n.size(), &o), ZT_OK);
      std::vector<uint8_t> got(blobs[i].size());
      size_t len = 0;
      ASSERT_EQ(zt_component_read(o, 0, got.data(), got.size(), &len), ZT_OK) << zt_last_error();
      EXPECT_EQ(got, blobs[i]) << n;
    }
    zt_close(f);
  }
}

// The stored frame of a whole zstd blob is what ZSTD_compress2 makes with
// the writer's parameters (level, no content size, its workers): the output
// stays byte-identical whatever way the writer drives libzstd.
TEST(WritePath, ZstdFramesAreWhatZstdCompress2Makes) {
  TempDir tmp;
  for (size_t n : {size_t{1000}, size_t{300000}, size_t{5} << 20}) {
    SCOPED_TRACE(n);
    std::vector<uint8_t> data = pattern(n, 3);
    for (auto &b : data) b %= 17;  // compressible
    const std::string path = tmp.file("z.zt");
    zt_writer *w = create(path, 2);
    zt_blob_options bo;
    zt_blob_options_init(&bo);
    bo.encoding = ZT_ENCODING_ZSTD;
    uint64_t shape[1] = {n};
    ASSERT_EQ(zt_writer_add_dense(w, "z", 1, ZT_U8, shape, 1, data.data(), n, &bo), ZT_OK) << zt_last_error();
    ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK);
    const zt_object *o = nullptr;
    ASSERT_EQ(zt_file_object_by_name(f, "z", 1, &o), ZT_OK);
    zt_component_info ci{};
    ci.struct_size = sizeof ci;
    ASSERT_EQ(zt_object_component(o, 0, &ci), ZT_OK);
    std::string file = read_file(path);
    std::string stored = file.substr(ci.offset, ci.length);
    zt_close(f);

    std::string ref;
    size_t r = zstd2_reference(data.data(), n, 3, ref);
    ASSERT_FALSE(ZSTD_isError(r));
    EXPECT_TRUE(stored == ref) << "stored frame of " << stored.size() << " bytes differs from ZSTD_compress2's " << r;
  }
}

// Digests of blobs big enough to be taken on a second thread beside the
// write, whole and streamed, with and without worker threads: each must be
// what a reader recomputes from the stored bytes.
TEST(WritePath, DigestsTakenBesideTheWriteMatchTheStoredBytes) {
  TempDir tmp;
  const size_t sizes[] = {(size_t{1} << 20) - 1, size_t{1} << 20, (size_t{3} << 20) + 5, size_t{9} << 20};
  for (uint32_t threads : {0u, 1u}) {
    for (uint32_t alg : {ZT_DIGEST_CRC32C, ZT_DIGEST_SHA256}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, digest " + std::to_string(alg));
      const std::string path = tmp.file("d.zt");
      zt_writer *w = create(path, threads);
      zt_blob_options bo;
      zt_blob_options_init(&bo);
      bo.digest = alg;
      std::vector<std::vector<uint8_t>> blobs;
      for (size_t i = 0; i < 2 * std::size(sizes); ++i) {
        blobs.push_back(pattern(sizes[i % std::size(sizes)], static_cast<uint32_t>(i + 40)));
        const std::vector<uint8_t> &b = blobs.back();
        uint64_t shape[1] = {b.size()};
        std::string n = name_of(i);
        if (i < std::size(sizes)) {
          ASSERT_EQ(zt_writer_add_dense(w, n.data(), n.size(), ZT_U8, shape, 1, b.data(), b.size(), &bo), ZT_OK)
              << zt_last_error();
          continue;
        }
        ASSERT_EQ(zt_writer_begin_object(w, n.data(), n.size(), nullptr, shape, 1), ZT_OK);
        ASSERT_EQ(zt_write_blob_begin(w, n.data(), n.size(), "data", ZT_U8, &bo), ZT_OK) << zt_last_error();
        const size_t piece = (size_t{2} << 20) + 3;
        for (size_t off = 0; off < b.size(); off += piece)
          ASSERT_EQ(zt_write_blob_append(w, b.data() + off, std::min(piece, b.size() - off)), ZT_OK);
        ASSERT_EQ(zt_write_blob_end(w), ZT_OK) << zt_last_error();
      }
      ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
      zt_file *f = nullptr;
      ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
      for (size_t i = 0; i < blobs.size(); ++i) {
        const zt_object *o = nullptr;
        std::string n = name_of(i);
        ASSERT_EQ(zt_file_object_by_name(f, n.data(), n.size(), &o), ZT_OK);
        zt_verify_result r = ZT_VERIFY_NO_DIGEST;
        ASSERT_EQ(zt_component_verify(o, 0, &r), ZT_OK) << n << ": " << zt_last_error();
        EXPECT_EQ(r, ZT_VERIFY_OK) << n;
      }
      zt_close(f);
    }
  }
}

// Two writers on one thread, each with its own level, interleaving a zstd
// stream of one with whole zstd blobs and a stream of the other: compression
// contexts are reused between blobs, and no context may be shared by two
// frames in progress or carry one writer's level into the other's frames.
TEST(WritePath, InterleavedZstdWritersOnOneThreadKeepTheirOwnFrames) {
  TempDir tmp;
  const size_t big = size_t{5} << 20;  // above the size where workers start
  std::vector<uint8_t> s1 = pattern(big, 11), s2 = pattern(big, 12), w1 = pattern(big, 13), w2 = pattern(3000, 14);
  for (auto *v : {&s1, &s2, &w1, &w2})
    for (auto &b : *v) b %= 23;
  const std::string pa = tmp.file("a.zt"), pb = tmp.file("b.zt");
  zt_writer *a = create(pa, 2), *b = create(pb, 2);
  zt_blob_options fast, slow;
  zt_blob_options_init(&fast);
  zt_blob_options_init(&slow);
  fast.encoding = slow.encoding = ZT_ENCODING_ZSTD;
  fast.zstd_level = 1;
  slow.zstd_level = 5;
  uint64_t shape_big[1] = {big}, shape_small[1] = {w2.size()};
  auto begin_stream = [&](zt_writer *w, const char *name, const zt_blob_options *bo) {
    ASSERT_EQ(zt_writer_begin_object(w, name, std::strlen(name), nullptr, shape_big, 1), ZT_OK) << zt_last_error();
    ASSERT_EQ(zt_write_blob_begin(w, name, std::strlen(name), "data", ZT_U8, bo), ZT_OK) << zt_last_error();
  };
  begin_stream(b, "s1", &slow);
  ASSERT_EQ(zt_write_blob_append(b, s1.data(), big / 3), ZT_OK) << zt_last_error();
  // Whole blobs of the other writer while b's frame is half written.
  ASSERT_EQ(zt_writer_add_dense(a, "w1", 2, ZT_U8, shape_big, 1, w1.data(), big, &fast), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_writer_add_dense(a, "w2", 2, ZT_U8, shape_small, 1, w2.data(), w2.size(), &fast), ZT_OK);
  begin_stream(a, "s2", &fast);
  ASSERT_EQ(zt_write_blob_append(b, s1.data() + big / 3, big - big / 3), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_write_blob_append(a, s2.data(), big), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_write_blob_end(b), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_write_blob_end(a), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_writer_finish(a), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_writer_finish(b), ZT_OK) << zt_last_error();

  struct Expect {
    const std::string *path;
    const char *name;
    const std::vector<uint8_t> *data;
    int level;
  };
  for (const Expect &e :
       {Expect{&pb, "s1", &s1, 5}, Expect{&pa, "w1", &w1, 1}, Expect{&pa, "w2", &w2, 1}, Expect{&pa, "s2", &s2, 1}}) {
    SCOPED_TRACE(e.name);
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open(e.path->c_str(), nullptr, &f), ZT_OK) << zt_last_error();
    const zt_object *o = nullptr;
    ASSERT_EQ(zt_file_object_by_name(f, e.name, std::strlen(e.name), &o), ZT_OK);
    std::vector<uint8_t> got(e.data->size());
    size_t len = 0;
    ASSERT_EQ(zt_component_read(o, 0, got.data(), got.size(), &len), ZT_OK) << zt_last_error();
    EXPECT_TRUE(got == *e.data);
    zt_component_info ci{};
    ci.struct_size = sizeof ci;
    ASSERT_EQ(zt_object_component(o, 0, &ci), ZT_OK);
    zt_close(f);
    if (e.name[0] != 'w') continue;  // streamed frames are cut where the pieces fell
    // A whole blob's frame is ZSTD_compress2's at that writer's level.
    std::string stored = read_file(*e.path).substr(ci.offset, ci.length);
    std::string ref;
    size_t r = zstd2_reference(e.data->data(), e.data->size(), e.level, ref);
    ASSERT_FALSE(ZSTD_isError(r));
    EXPECT_TRUE(stored == ref) << "frame differs from ZSTD_compress2's at level " << e.level;
  }
}

// Names declared in increasing order are checked without an index; the
// first one out of order switches to a hash index. Duplicates, lookups of
// earlier objects and the withdrawal of a refused add work in both modes.
TEST(WritePath, DuplicateNamesAndLookupsInAndOutOfNameOrder) {
  TempDir tmp;
  const std::string path = tmp.file("names.zt");
  zt_writer *w = create(path);
  uint64_t shape[1] = {1};
  uint8_t v = 5;
  auto begin = [&](const char *n) { return zt_writer_begin_object(w, n, std::strlen(n), nullptr, shape, 1); };
  auto blob = [&](const char *n) { return zt_write_blob(w, n, std::strlen(n), "data", ZT_U8, &v, 1, nullptr); };
  auto add = [&](const char *n, size_t len) {
    return zt_writer_add_dense(w, n, std::strlen(n), ZT_U8, shape, 1, &v, len, nullptr);
  };
  // In order.
  ASSERT_EQ(begin("b"), ZT_OK);
  ASSERT_EQ(begin("c"), ZT_OK);
  ASSERT_EQ(begin("d"), ZT_OK);
  EXPECT_EQ(begin("d"), ZT_E_EXISTS);
  EXPECT_EQ(blob("bb"), ZT_E_NOT_FOUND);
  EXPECT_EQ(blob("b"), ZT_OK) << zt_last_error();  // an earlier object, by binary search
  EXPECT_EQ(add("e", 2), ZT_E_LENGTH);             // refused: "e" is withdrawn
  EXPECT_EQ(add("e", 1), ZT_OK) << zt_last_error();
  // Out of order from here on.
  EXPECT_EQ(begin("c"), ZT_E_EXISTS);
  ASSERT_EQ(begin("a"), ZT_OK);
  EXPECT_EQ(begin("a"), ZT_E_EXISTS);
  EXPECT_EQ(begin("e"), ZT_E_EXISTS);
  EXPECT_EQ(blob("c"), ZT_OK) << zt_last_error();  // by the index
  EXPECT_EQ(blob("zz"), ZT_E_NOT_FOUND);
  EXPECT_EQ(add("0", 2), ZT_E_LENGTH);
  EXPECT_EQ(add("0", 1), ZT_OK) << zt_last_error();
  EXPECT_EQ(add("0", 1), ZT_E_EXISTS);
  EXPECT_EQ(blob("a"), ZT_OK);
  EXPECT_EQ(blob("d"), ZT_OK);
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  size_t count = 0;
  zt_file_object_count(f, &count);
  EXPECT_EQ(count, 6u);
  for (const char *n : {"0", "a", "b", "c", "d", "e"}) {
    const zt_object *o = nullptr;
    EXPECT_EQ(zt_file_object_by_name(f, n, std::strlen(n), &o), ZT_OK) << n;
  }
  zt_close(f);
}

// Runs `body` in a child whose file-size limit is `limit` bytes (writes
// past it fail with EFBIG instead of a signal); returns the child's exit
// code, or -1 if it died.
template <typename Body>
int with_file_size_limit(rlim_t limit, Body body) {
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = limit;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(90);
    _exit(body());
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// A failed write names the destination: the temporary is unnamed
// (O_TMPFILE) while it is written, and the message read "write to ''
// failed" (issue 37). Both a large direct write and the flush at finish.
TEST(WritePath, AWriteErrorNamesTheDestination) {
  TempDir tmp;
  const std::string path = tmp.file("full-disk.zt");
  for (size_t blob : {size_t{1000}, size_t{3} << 20}) {
    SCOPED_TRACE(blob);
    int rc = with_file_size_limit(1 << 20, [&] {
      std::vector<uint8_t> data = pattern(blob, 1);
      zt_writer *w = create(path);
      if (!w) return 10;
      zt_status s = ZT_OK;
      for (size_t i = 0; s == ZT_OK && i < std::max<size_t>(2, (size_t{2} << 20) / blob); ++i) {
        uint64_t shape[1] = {blob};
        std::string n = name_of(i);
        s = zt_writer_add_dense(w, n.data(), n.size(), ZT_U8, shape, 1, data.data(), data.size(), nullptr);
      }
      const bool failed_adding = s != ZT_OK;
      if (!failed_adding) s = zt_writer_finish(w);
      const std::string error = zt_last_error();
      if (failed_adding) zt_writer_discard(w);
      if (s != ZT_E_IO) return 12;
      if (error.find("''") != std::string::npos) return 13;
      return error.find("'" + path + "'") != std::string::npos ? 0 : 14;
    });
    EXPECT_EQ(rc, 0) << "13: the message quotes an empty name; 14: it does not name " << path;
  }
}

// A write that fails (here: past a 1 MiB file-size limit) fails the writer
// with ZT_E_IO, at the blob that crosses the limit or at finish for bytes
// still gathered; the destination keeps its old bytes and no temporary is
// left, whether the failing write was a large direct one or a flush of
// small gathered blobs.
TEST(WritePath, AWriteErrorLeavesTheOldFileAndNothingElse) {
  TempDir tmp;
  const std::string path = tmp.file("dst.zt");
  {
    zt_writer *w = create(path);
    uint8_t b = 7;
    uint64_t shape[1] = {1};
    ASSERT_EQ(zt_writer_add_dense(w, "old", 3, ZT_U8, shape, 1, &b, 1, nullptr), ZT_OK);
    ASSERT_EQ(zt_writer_finish(w), ZT_OK);
  }
  const std::string before = read_file(path);
  // The 3 MiB blobs with a sha256 digest fail while their digest runs on
  // a second thread: the failure must wait for it, not crash past it.
  for (size_t blob : {size_t{3000}, size_t{16384}, size_t{300000}, size_t{3} << 20}) {
    SCOPED_TRACE(blob);
    int rc = with_file_size_limit(1 << 20, [&] {
      std::vector<uint8_t> data = pattern(blob, 1);
      zt_writer *w = create(path);
      if (!w) return 10;
      zt_blob_options bo;
      zt_blob_options_init(&bo);
      bo.digest = ZT_DIGEST_SHA256;
      zt_status s = ZT_OK;
      for (size_t i = 0; s == ZT_OK && i < std::max<size_t>(2, (size_t{2} << 20) / blob); ++i) {
        uint64_t shape[1] = {blob};
        std::string n = name_of(i);
        s = zt_writer_add_dense(w, n.data(), n.size(), ZT_U8, shape, 1, data.data(), data.size(), &bo);
      }
      const bool failed_adding = s != ZT_OK;
      if (!failed_adding) s = zt_writer_finish(w);
      const std::string error = zt_last_error();
      if (failed_adding && zt_writer_finish(w) == ZT_OK) return 11;  // a failed writer must not finish
      if (s != ZT_E_IO) return 12;
      return error.find("File too large") != std::string::npos ? 0 : 13;
    });
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(read_file(path), before);
    EXPECT_EQ(entries_in(tmp.path()), 1u) << "a temporary was left behind";
  }
}

}  // namespace
