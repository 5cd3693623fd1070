// zt_component_read_slice: random boxes of tensors of every element size
// and rank 0..5, raw and zstd, mapped and pread, compared with a reference
// cut from a full zt_component_read; empty and one-element boxes; the
// refusals; the interop files (legacy big-endian included); and a zstd
// tensor of 1 GiB whose first row is read in bounded memory; several slices
// in one zt_file_read_slices call.
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
#include <random>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor.h"

using zttest::TempDir;

namespace {

// The box [start, stop) of a row-major array of `es`-byte elements, cut
// element by element: the slow, obvious reference.
std::vector<uint8_t> reference_slice(const std::vector<uint8_t> &full, const std::vector<uint64_t> &shape, size_t es,
                                     const std::vector<uint64_t> &start, const std::vector<uint64_t> &stop) {
  const size_t nd = shape.size();
  uint64_t count = 1;
  for (size_t d = 0; d < nd; ++d) count *= stop[d] - start[d];
  std::vector<uint8_t> out;
  if (count == 0) return out;
  std::vector<uint64_t> idx(start);
  for (uint64_t k = 0; k < count; ++k) {
    uint64_t flat = 0;
    for (size_t d = 0; d < nd; ++d) flat = flat * shape[d] + idx[d];
    out.insert(out.end(), full.begin() + static_cast<long>(flat * es),
               full.begin() + static_cast<long>((flat + 1) * es));
    for (size_t d = nd; d-- > 0;) {
      if (++idx[d] < stop[d]) break;
      idx[d] = start[d];
    }
  }
  return out;
}

std::vector<uint8_t> full_read(const zt_object *o, size_t idx) {
  size_t size = 0;
  zt_component_read(o, idx, nullptr, 0, &size);
  std::vector<uint8_t> v(size);
  EXPECT_EQ(zt_component_read(o, idx, v.data(), v.size(), &size), ZT_OK) << zt_last_error();
  return v;
}

std::string box_str(const std::vector<uint64_t> &a, const std::vector<uint64_t> &b) {
  std::string s;
  for (size_t d = 0; d < a.size(); ++d) s += std::to_string(a[d]) + ":" + std::to_string(b[d]) + " ";
  return s;
}

// A random box of `shape`; every third one degenerate (empty or one element).
void random_box(std::mt19937 &rng, const std::vector<uint64_t> &shape, std::vector<uint64_t> &start,
                std::vector<uint64_t> &stop, int kind) {
  start.assign(shape.size(), 0);
  stop.assign(shape.size(), 0);
  for (size_t d = 0; d < shape.size(); ++d) {
    const uint64_t n = shape[d];
    if (n == 0) continue;
    uint64_t a = rng() % (n + 1), b = rng() % (n + 1);
    if (a > b) std::swap(a, b);
    if (kind == 1) b = a;                          // empty along d
    if (kind == 2 && n) a = rng() % n, b = a + 1;  // one element
    if (kind == 3) a = 0, b = n;                   // whole dimension
    start[d] = a;
    stop[d] = b;
  }
}

// Checks `boxes` random boxes of every readable component of every object
// in f against the reference.
void check_random_boxes(const zt_file *f, int boxes, unsigned seed) {
  std::mt19937 rng(seed);
  size_t count = 0;
  ASSERT_EQ(zt_file_object_count(f, &count), ZT_OK);
  for (size_t i = 0; i < count; ++i) {
    const zt_object *o = nullptr;
    ASSERT_EQ(zt_file_object_at(f, i, &o), ZT_OK);
    zt_object_info info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(zt_object_get_info(o, &info), ZT_OK);
    if (info.status != ZT_OK) continue;
    SCOPED_TRACE(std::string("object ") + std::string(info.name, info.name_len));
    for (size_t j = 0; j < info.component_count; ++j) {
      zt_component_info c{};
      c.struct_size = sizeof c;
      ASSERT_EQ(zt_object_component(o, j, &c), ZT_OK);
      SCOPED_TRACE(std::string("component ") + c.role);
      const std::vector<uint8_t> full = full_read(o, j);
      const size_t storage = zt_dtype_size(c.dtype);
      if (storage == 0) {
        EXPECT_EQ(zt_component_read_slice(o, j, 1, nullptr, nullptr, nullptr, 0), ZT_E_UNSUPPORTED);
        continue;
      }
      std::vector<uint64_t> shape;
      size_t es = storage;
      if (std::string(info.format) == "dense" && std::string(c.role) == "data") {
        shape.assign(info.shape, info.shape + info.ndim);
        es = storage * c.ratio;
      } else {
        shape = {full.size() / storage};
      }
      std::vector<uint64_t> start, stop;
      for (int b = 0; b < boxes; ++b) {
        random_box(rng, shape, start, stop, b % 4);
        SCOPED_TRACE("box " + box_str(start, stop));
        const std::vector<uint8_t> want = reference_slice(full, shape, es, start, stop);
        std::vector<uint8_t> got(want.size() + 3, 0xAB);
        ASSERT_EQ(zt_component_read_slice(o, j, shape.size(), start.data(), stop.data(),
                                          want.empty() ? nullptr : got.data(), want.empty() ? 0 : got.size()),
                  ZT_OK)
            << zt_last_error();
        EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin()));
        // Nothing written past the box.
        EXPECT_EQ(got[want.size()], 0xAB);
        EXPECT_EQ(got[want.size() + 2], 0xAB);
      }
    }
  }
}

struct DtypeCase {
  zt_dtype dtype;
  const char *logical;  // compound types make 8- and 16-byte elements
  size_t es;
};

const DtypeCase kDtypes[] = {
    {ZT_U8, nullptr, 1},  {ZT_BOOL, nullptr, 1}, {ZT_I16, nullptr, 2},     {ZT_BF16, nullptr, 2},
    {ZT_F32, nullptr, 4}, {ZT_I64, nullptr, 8},  {ZT_F32, "complex64", 8}, {ZT_F64, "complex128", 16},
};

std::string write_random_tensors(const TempDir &dir, unsigned seed) {
  std::mt19937 rng(seed);
  std::string path = dir.file("slices.zt");
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK) << zt_last_error();
  int n = 0;
  for (int rank = 0; rank <= 5; ++rank) {
    for (const DtypeCase &dc : kDtypes) {
      for (int zstd = 0; zstd < 2; ++zstd) {
        std::vector<uint64_t> shape(static_cast<size_t>(rank));
        uint64_t numel = 1;
        for (auto &d : shape) {
          d = 1 + rng() % (rank >= 4 ? 4 : 9);
          numel *= d;
        }
        if (rank == 2 && dc.dtype == ZT_I16 && zstd) shape[1] = 0, numel = 0;  // an empty tensor
        std::vector<uint8_t> data(numel * dc.es);
        for (auto &b : data) b = dc.dtype == ZT_BOOL ? rng() % 2 : static_cast<uint8_t>(rng());
        zt_blob_options bo;
        zt_blob_options_init(&bo);
        bo.encoding = zstd ? ZT_ENCODING_ZSTD : ZT_ENCODING_RAW;
        bo.logical_type = dc.logical;
        std::string name = "t" + std::to_string(n++);
        EXPECT_EQ(zt_writer_add_dense(w, name.data(), name.size(), dc.dtype, shape.data(), shape.size(), data.data(),
                                      data.size(), &bo),
                  ZT_OK)
            << zt_last_error();
      }
    }
  }
  // A sparse object: its components are 1-d arrays of storage elements.
  const uint64_t shape[] = {3, 4};
  const uint64_t indptr[] = {0, 1, 1, 3};
  const uint64_t indices[] = {2, 0, 3};
  const float values[] = {1.5f, -2.f, 7.25f};
  EXPECT_EQ(zt_writer_begin_object(w, "csr", 3, "sparse_csr", shape, 2), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_write_blob(w, "csr", 3, "values", ZT_F32, values, sizeof values, nullptr), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_write_blob(w, "csr", 3, "indices", ZT_U64, indices, sizeof indices, nullptr), ZT_OK);
  EXPECT_EQ(zt_write_blob(w, "csr", 3, "indptr", ZT_U64, indptr, sizeof indptr, nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  return path;
}

TEST(ReadSlice, RandomBoxesMatchTheFullReadMappedAndPread) {
  TempDir dir;
  const std::string path = write_random_tensors(dir, 7);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  check_random_boxes(f, 24, 11);
  zt_close(f);
  zt_open_options po;
  zt_open_options_init(&po);
  po.access = ZT_ACCESS_PREAD;
  ASSERT_EQ(zt_open(path.c_str(), &po, &f), ZT_OK) << zt_last_error();
  check_random_boxes(f, 24, 12);
  zt_close(f);
}

TEST(ReadSlice, InteropFilesIncludingLegacyBigEndian) {
  for (const char *sub : {"/v1", "/v0"}) {
    const std::string dir = zttest::interop_dir() + sub;
    const auto exp = nlohmann::json::parse(zttest::read_required_file(dir + "/expected.json"));
    for (auto it = exp["files"].begin(); it != exp["files"].end(); ++it) {
      SCOPED_TRACE(it.key());
      zt_file *f = nullptr;
      ASSERT_EQ(zt_open((dir + "/" + it.key()).c_str(), nullptr, &f), ZT_OK) << zt_last_error();
      check_random_boxes(f, 8, 3);
      zt_close(f);
    }
  }
}

// zt_file_read_slices (1.3): several boxes of several objects in one call
// equal the same boxes read one by one.
TEST(ReadSlices, ManyInOneCallMatchOneByOne) {
  TempDir dir;
  const std::string path = write_random_tensors(dir, 9);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  std::mt19937 rng(5);
  size_t count = 0;
  ASSERT_EQ(zt_file_object_count(f, &count), ZT_OK);
  std::vector<zt_slice_request> reqs;
  std::vector<std::vector<uint64_t>> starts, stops;
  std::vector<std::vector<uint8_t>> got, want;
  starts.reserve(count * 3);
  stops.reserve(count * 3);
  got.reserve(count * 3);
  for (size_t i = 0; i < count; ++i) {
    const zt_object *o = nullptr;
    ASSERT_EQ(zt_file_object_at(f, i, &o), ZT_OK);
    zt_object_info info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(zt_object_get_info(o, &info), ZT_OK);
    zt_component_info c{};
    c.struct_size = sizeof c;
    ASSERT_EQ(zt_object_component(o, 0, &c), ZT_OK);
    if (info.status != ZT_OK || zt_dtype_size(c.dtype) == 0 || std::string(info.format) != "dense") continue;
    const std::vector<uint64_t> shape(info.shape, info.shape + info.ndim);
    for (int b = 0; b < 3; ++b) {
      std::vector<uint64_t> start, stop;
      random_box(rng, shape, start, stop, b % 4);
      const size_t es = zt_dtype_size(c.dtype) * c.ratio;
      want.push_back(reference_slice(full_read(o, 0), shape, es, start, stop));
      got.emplace_back(want.back().size() + 1, 0xAB);
      starts.push_back(start);
      stops.push_back(stop);
      reqs.push_back(
          {o, 0, shape.size(), starts.back().data(), stops.back().data(), got.back().data(), want.back().size()});
    }
  }
  ASSERT_GT(reqs.size(), 3u);
  ASSERT_EQ(zt_file_read_slices(f, reqs.data(), reqs.size()), ZT_OK) << zt_last_error();
  for (size_t k = 0; k < reqs.size(); ++k) {
    EXPECT_TRUE(std::equal(want[k].begin(), want[k].end(), got[k].begin())) << "request " << k;
    EXPECT_EQ(got[k].back(), 0xAB) << "written past request " << k;
  }
  EXPECT_EQ(zt_file_read_slices(f, nullptr, 0), ZT_OK);
  EXPECT_EQ(zt_file_read_slices(f, nullptr, 1), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_file_read_slices(nullptr, reqs.data(), 1), ZT_E_INVALID_ARG);
  // An object of another file is refused, naming the request.
  zt_file *g = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &g), ZT_OK);
  const zt_object *other = nullptr;
  ASSERT_EQ(zt_file_object_at(g, 0, &other), ZT_OK);
  std::vector<zt_slice_request> bad(reqs.begin(), reqs.begin() + 2);
  bad[1].object = other;
  EXPECT_EQ(zt_file_read_slices(f, bad.data(), bad.size()), ZT_E_INVALID_ARG);
  EXPECT_NE(std::string(zt_last_error()).find("request 1"), std::string::npos) << zt_last_error();
  zt_close(g);
  zt_close(f);
}

class SliceErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("e.zt");
    zt_writer *w = nullptr;
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    wo.sync = 0;
    ASSERT_EQ(zt_writer_create(path_.c_str(), &wo, &w), ZT_OK);
    std::vector<float> v(24, 1.f);
    const uint64_t shape[] = {2, 3, 4};
    ASSERT_EQ(zt_writer_add_dense(w, "box", 3, ZT_F32, shape, 3, v.data(), v.size() * 4, nullptr), ZT_OK);
    float s = 3.5f;
    ASSERT_EQ(zt_writer_add_dense(w, "scalar", 6, ZT_F32, nullptr, 0, &s, 4, nullptr), ZT_OK);
    ASSERT_EQ(zt_writer_finish(w), ZT_OK);
    ASSERT_EQ(zt_open(path_.c_str(), nullptr, &f_), ZT_OK);
    ASSERT_EQ(zt_file_object_by_name(f_, "box", 3, &box_), ZT_OK);
    ASSERT_EQ(zt_file_object_by_name(f_, "scalar", 6, &scalar_), ZT_OK);
  }
  void TearDown() override { zt_close(f_); }
  TempDir dir_;
  std::string path_;
  zt_file *f_ = nullptr;
  const zt_object *box_ = nullptr, *scalar_ = nullptr;
};

TEST_F(SliceErrors, ClearRefusalsWithContext) {
  float out[24];
  const uint64_t a[] = {0, 0, 0}, b[] = {2, 3, 4};
  ASSERT_EQ(zt_component_read_slice(box_, 0, 3, a, b, out, sizeof out), ZT_OK) << zt_last_error();

  EXPECT_EQ(zt_component_read_slice(box_, 0, 2, a, b, out, sizeof out), ZT_E_INVALID_ARG);
  EXPECT_NE(std::string(zt_last_error()).find("2 dimensions"), std::string::npos) << zt_last_error();
  EXPECT_NE(std::string(zt_last_error()).find("box"), std::string::npos) << zt_last_error();

  const uint64_t past[] = {2, 3, 5};
  EXPECT_EQ(zt_component_read_slice(box_, 0, 3, a, past, out, sizeof out), ZT_E_INVALID_ARG);
  EXPECT_NE(std::string(zt_last_error()).find("dimension 2"), std::string::npos) << zt_last_error();

  const uint64_t s2[] = {1, 0, 0}, e2[] = {0, 3, 4};
  EXPECT_EQ(zt_component_read_slice(box_, 0, 3, s2, e2, out, sizeof out), ZT_E_INVALID_ARG);
  EXPECT_NE(std::string(zt_last_error()).find("start > stop"), std::string::npos) << zt_last_error();

  EXPECT_EQ(zt_component_read_slice(box_, 0, 3, a, b, out, sizeof out - 1), ZT_E_BUFFER_TOO_SMALL);
  EXPECT_NE(std::string(zt_last_error()).find("96 bytes"), std::string::npos) << zt_last_error();
  EXPECT_EQ(zt_component_read_slice(box_, 0, 3, a, b, nullptr, sizeof out), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_component_read_slice(box_, 0, 3, nullptr, b, out, sizeof out), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_component_read_slice(box_, 5, 3, a, b, out, sizeof out), ZT_E_NOT_FOUND);
  EXPECT_EQ(zt_component_read_slice(nullptr, 0, 3, a, b, out, sizeof out), ZT_E_INVALID_ARG);

  // An empty box needs no buffer.
  const uint64_t e0[] = {1, 3, 4};
  EXPECT_EQ(zt_component_read_slice(box_, 0, 3, e0, e0, nullptr, 0), ZT_OK) << zt_last_error();
}

TEST_F(SliceErrors, ZeroDimensionalTensor) {
  float v = 0;
  ASSERT_EQ(zt_component_read_slice(scalar_, 0, 0, nullptr, nullptr, &v, sizeof v), ZT_OK) << zt_last_error();
  EXPECT_EQ(v, 3.5f);
  const uint64_t z[] = {0};
  EXPECT_EQ(zt_component_read_slice(scalar_, 0, 1, z, z, &v, sizeof v), ZT_E_INVALID_ARG);
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

// 1 GiB of zeros compressed to a few KB: the first row of it must come back
// without decoding (or holding) the rest. Memory is the measure, not time.
TEST(ReadSlice, ZstdSliceDecodesInBoundedMemory) {
  TempDir dir;
  const std::string path = dir.file("big.zt");
  const uint64_t rows = 1 << 15, cols = 1 << 15;  // u8: 1 GiB
  {
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    wo.sync = 0;
    wo.threads = 1;
    zt_writer *w = nullptr;
    ASSERT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK);
    const uint64_t shape[] = {rows, cols};
    ASSERT_EQ(zt_writer_begin_object(w, "zeros", 5, nullptr, shape, 2), ZT_OK);
    zt_blob_options bo;
    zt_blob_options_init(&bo);
    bo.encoding = ZT_ENCODING_ZSTD;
    bo.zstd_level = 1;
    ASSERT_EQ(zt_write_blob_begin(w, "zeros", 5, "data", ZT_U8, &bo), ZT_OK) << zt_last_error();
    std::vector<uint8_t> chunk(size_t{4} << 20, 0);
    for (uint64_t done = 0; done < rows * cols; done += chunk.size())
      ASSERT_EQ(zt_write_blob_append(w, chunk.data(), chunk.size()), ZT_OK) << zt_last_error();
    ASSERT_EQ(zt_write_blob_end(w), ZT_OK) << zt_last_error();
    ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  }
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK);
  const zt_object *o = nullptr;
  ASSERT_EQ(zt_file_object_by_name(f, "zeros", 5, &o), ZT_OK);
  zt_component_info c{};
  c.struct_size = sizeof c;
  ASSERT_EQ(zt_object_component(o, 0, &c), ZT_OK);
  ASSERT_EQ(c.encoding, ZT_ENCODING_ZSTD);
  EXPECT_LT(c.length, uint64_t{1} << 20) << "the fixture should compress to little";

  const long before = peak_rss_kib();
  std::vector<uint8_t> row(cols, 0xFF);
  const uint64_t a[] = {0, 0}, b[] = {1, cols};
  ASSERT_EQ(zt_component_read_slice(o, 0, 2, a, b, row.data(), row.size()), ZT_OK) << zt_last_error();
  const uint64_t a2[] = {3, 100}, b2[] = {5, 200};
  ASSERT_EQ(zt_component_read_slice(o, 0, 2, a2, b2, row.data(), 200), ZT_OK) << zt_last_error();
  const long grown_kib = peak_rss_kib() - before;
  EXPECT_EQ(row[0], 0);
  EXPECT_EQ(row[cols - 1], 0);
  // A decode of the whole component would add 1 GiB; libzstd's window
  // and one output buffer are a few MB.
  EXPECT_LT(grown_kib, 64 * 1024) << "peak RSS grew by " << grown_kib << " KiB";
  zt_close(f);
}

}  // namespace
