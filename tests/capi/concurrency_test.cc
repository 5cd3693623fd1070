// One reader handle shared by 8 threads: reads, views, ranged reads and
// verification of different and identical components all give the right
// bytes. Built under ThreadSanitizer by tools/dev.sh test.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "test_util.h"
#include "ztensor.h"

namespace {

constexpr int kObjects = 24;
constexpr size_t kElems = 20000;

std::vector<float> values(int obj) {
  std::vector<float> v(kElems);
  for (size_t i = 0; i < kElems; ++i) v[i] = static_cast<float>(obj * 100000 + static_cast<int>(i % 977));
  return v;
}

std::string write_file(const zttest::TempDir &tmp) {
  std::string path = tmp.file("shared.zt");
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK);
  for (int i = 0; i < kObjects; ++i) {
    auto v = values(i);
    std::string name = "t" + std::to_string(i);
    uint64_t shape[1] = {kElems};
    zt_blob_options bo;
    zt_blob_options_init(&bo);
    bo.encoding = i % 2 ? ZT_ENCODING_ZSTD : ZT_ENCODING_RAW;
    bo.digest = i % 3 == 0 ? ZT_DIGEST_SHA256 : ZT_DIGEST_CRC32C;
    EXPECT_EQ(zt_writer_add_dense(w, name.data(), name.size(), ZT_F32, shape, 1, v.data(), v.size() * 4, &bo), ZT_OK);
  }
  EXPECT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  return path;
}

TEST(Concurrency, EightThreadsShareOneReader) {
  zttest::TempDir tmp;
  std::string path = write_file(tmp);
  for (uint32_t access : {ZT_ACCESS_MMAP, ZT_ACCESS_PREAD}) {
    zt_open_options oo;
    zt_open_options_init(&oo);
    oo.access = access;
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open(path.c_str(), &oo, &f), ZT_OK);
    std::vector<std::vector<float>> expect;
    for (int i = 0; i < kObjects; ++i) expect.push_back(values(i));
    std::atomic<int> errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 rng(t);
        std::vector<float> buf(kElems);
        for (int iter = 0; iter < 60; ++iter) {
          // Half the threads hammer the same object; the rest spread out.
          int i = t % 2 ? 5 : static_cast<int>(rng() % kObjects);
          std::string name = "t" + std::to_string(i);
          const zt_object *o = nullptr;
          if (zt_file_object_by_name(f, name.data(), name.size(), &o) != ZT_OK) {
            ++errors;
            continue;
          }
          size_t n = 0;
          switch (iter % 4) {
            case 0:
              if (zt_component_read(o, 0, buf.data(), buf.size() * 4, &n) != ZT_OK || n != kElems * 4 ||
                  std::memcmp(buf.data(), expect[i].data(), n) != 0)
                ++errors;
              break;
            case 1: {
              const void *view = nullptr;
              zt_status st = zt_component_view(o, 0, &view, &n);
              // f32s: a big-endian host has no view of them (reads swap).
              bool raw = i % 2 == 0 && access == ZT_ACCESS_MMAP && !zttest::kHostBigEndian;
              if (raw ? (st != ZT_OK || std::memcmp(view, expect[i].data(), n) != 0) : st != ZT_E_NOT_ZERO_COPY)
                ++errors;
              break;
            }
            case 2: {
              uint64_t first = rng() % (kElems - 100);
              if (zt_component_read_range(o, 0, first, 100, buf.data(), 400) != ZT_OK ||
                  std::memcmp(buf.data(), expect[i].data() + first, 400) != 0)
                ++errors;
              break;
            }
            case 3: {
              zt_verify_result r;
              if (zt_component_verify(o, 0, &r) != ZT_OK || r != ZT_VERIFY_OK) ++errors;
              break;
            }
          }
        }
      });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(errors.load(), 0);
    // The parallel whole-file verify agrees.
    EXPECT_EQ(zt_file_verify(f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
    zt_close(f);
  }
}

}  // namespace
