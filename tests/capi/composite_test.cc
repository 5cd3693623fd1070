// Composite objects through the C ABI: round trips of sparse_csr, sparse_coo,
// quantized_group (every packing), logical types and a custom format;
// densify and dequantize against straightforward loops written here; the
// writer refusing bad arrays before writing anything; the interop files of
// the reference implementation; and `zt info` showing the parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor_composite.h"

using zttest::TempDir;

namespace {

zt_writer *create(const std::string &path) {
  zt_writer_options o;
  zt_writer_options_init(&o);
  o.sync = 0;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &o, &w), ZT_OK) << zt_last_error();
  return w;
}

struct File {
  zt_file *f = nullptr;
  explicit File(const std::string &path, uint32_t strict = 0) {
    zt_open_options o;
    zt_open_options_init(&o);
    o.strict = strict;
    EXPECT_EQ(zt_open(path.c_str(), &o, &f), ZT_OK) << path << ": " << zt_last_error();
  }
  ~File() { zt_close(f); }
  const zt_object *obj(const std::string &name) const {
    const zt_object *o = nullptr;
    EXPECT_EQ(zt_file_object_by_name(f, name.data(), name.size(), &o), ZT_OK) << name;
    return o;
  }
};

std::vector<uint8_t> read_role(const zt_object *o, const char *role) {
  size_t idx = 0, n = 0;
  EXPECT_EQ(zt_object_component_index(o, role, &idx), ZT_OK) << role;
  zt_component_read(o, idx, nullptr, 0, &n);
  std::vector<uint8_t> buf(n);
  EXPECT_EQ(zt_component_read(o, idx, buf.data(), buf.size(), &n), ZT_OK) << zt_last_error();
  return buf;
}

std::vector<uint64_t> read_index(const zt_object *o, const char *role) {
  size_t n = 0;
  const zt_status st = zt_object_read_index(o, role, nullptr, 0, &n);
  EXPECT_EQ(st, n ? ZT_E_BUFFER_TOO_SMALL : ZT_OK);
  std::vector<uint64_t> v(n);
  EXPECT_EQ(zt_object_read_index(o, role, v.data(), v.size(), &n), ZT_OK) << zt_last_error();
  return v;
}

std::vector<uint8_t> densify(const zt_object *o) {
  size_t n = 0;
  zt_status st = zt_object_densify(o, nullptr, 0, &n);
  EXPECT_TRUE(st == ZT_E_BUFFER_TOO_SMALL || (st == ZT_OK && n == 0)) << zt_last_error();
  std::vector<uint8_t> d(n, 0xAB);
  EXPECT_EQ(zt_object_densify(o, d.data(), d.size(), &n), ZT_OK) << zt_last_error();
  return d;
}

// Reference densification: a plain loop over (row, k) with last-wins.
template <typename T>
std::vector<T> ref_csr(uint64_t rows, uint64_t cols, const std::vector<T> &vals, const std::vector<uint64_t> &ind,
                       const std::vector<uint64_t> &ptr) {
  std::vector<T> d(rows * cols, T{});
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t k = ptr[r]; k < ptr[r + 1]; ++k) d[r * cols + ind[k]] = vals[k];
  return d;
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T> &v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(Composite, CsrRoundTripEveryEncodingAndLogicalValues) {
  TempDir tmp;
  const std::string path = tmp.file("csr.zt");
  // 4 × 6, row 2 empty, an unsorted and a repeated column in row 3.
  const std::vector<uint64_t> ind = {5, 0, 3, 4, 1, 4}, ptr = {0, 2, 3, 3, 6};
  const std::vector<float> vals = {1.5f, -2.f, 3.25f, 7.f, 8.f, 9.f};
  const std::vector<float> cvals = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // complex64 pairs
  const std::vector<uint8_t> fp8 = {0x38, 0x40, 0xB8, 0x01, 0x7E, 0x00};
  zt_writer *w = create(path);
  zt_blob_options zo;
  zt_blob_options_init(&zo);
  zo.encoding = ZT_ENCODING_ZSTD;
  zo.digest = ZT_DIGEST_CRC32C;
  ASSERT_EQ(zt_writer_add_csr(w, "raw", 3, 4, 6, ZT_F32, vals.data(), 6, ind.data(), ptr.data(), nullptr), ZT_OK)
      << zt_last_error();
  ASSERT_EQ(zt_writer_add_csr(w, "zstd", 4, 4, 6, ZT_F32, vals.data(), 6, ind.data(), ptr.data(), &zo), ZT_OK)
      << zt_last_error();
  zt_blob_options co;
  zt_blob_options_init(&co);
  co.logical_type = "complex64";
  ASSERT_EQ(zt_writer_add_csr(w, "cplx", 4, 4, 6, ZT_F32, cvals.data(), 6, ind.data(), ptr.data(), &co), ZT_OK)
      << zt_last_error();
  zt_blob_options fo;
  zt_blob_options_init(&fo);
  fo.logical_type = "f8_e4m3fn";
  ASSERT_EQ(zt_writer_add_csr(w, "fp8", 3, 4, 6, ZT_U8, fp8.data(), 6, ind.data(), ptr.data(), &fo), ZT_OK);
  const uint64_t empty_ptr[] = {0, 0, 0};
  ASSERT_EQ(zt_writer_add_csr(w, "empty", 5, 2, 3, ZT_F64, nullptr, 0, nullptr, empty_ptr, nullptr), ZT_OK);
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();

  File f(path, /*strict=*/1);
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  for (const char *name : {"raw", "zstd"}) {
    const zt_object *o = f.obj(name);
    EXPECT_EQ(zt_object_validate(o), ZT_OK);
    zt_sparse_info si{};
    si.struct_size = sizeof si;
    ASSERT_EQ(zt_object_sparse_info(o, &si), ZT_OK) << zt_last_error();
    EXPECT_EQ(si.is_csr, 1u);
    EXPECT_EQ(si.nnz, 6u);
    EXPECT_EQ(si.numel, 24u);
    EXPECT_DOUBLE_EQ(si.density, 0.25);
    EXPECT_EQ(si.index_dtype, ZT_U64);
    EXPECT_EQ(si.values_dtype, ZT_F32);
    EXPECT_EQ(read_index(o, "indices"), ind);
    EXPECT_EQ(read_index(o, "indptr"), ptr);
    EXPECT_EQ(read_role(o, "values"), bytes_of(vals));
    std::vector<float> want = ref_csr<float>(4, 6, vals, ind, ptr);
    EXPECT_EQ(want[3 * 6 + 4], 9.f);  // last-wins on the repeated column
    EXPECT_EQ(densify(o), bytes_of(want)) << name;
  }
  {
    const zt_object *o = f.obj("cplx");
    zt_sparse_info si{};
    si.struct_size = sizeof si;
    ASSERT_EQ(zt_object_sparse_info(o, &si), ZT_OK);
    EXPECT_EQ(si.nnz, 6u);
    EXPECT_STREQ(si.values_logical_type, "complex64");
    EXPECT_EQ(si.values_element_size, 8u);
    using C = std::pair<float, float>;
    std::vector<C> cv;
    for (size_t i = 0; i < 6; ++i) cv.push_back({cvals[2 * i], cvals[2 * i + 1]});
    std::vector<C> want = ref_csr<C>(4, 6, cv, ind, ptr);
    std::vector<float> flat;
    for (auto &c : want) flat.insert(flat.end(), {c.first, c.second});
    EXPECT_EQ(densify(o), bytes_of(flat));
  }
  {
    const zt_object *o = f.obj("fp8");
    std::vector<uint8_t> dense = densify(o);
    std::vector<float> as_f32(dense.size());
    ASSERT_EQ(zt_convert_to_f32(ZT_U8, "f8_e4m3fn", dense.data(), dense.size(), as_f32.data(), as_f32.size()), ZT_OK);
    EXPECT_EQ(as_f32[0 * 6 + 5], 1.0f);
    EXPECT_EQ(as_f32[0 * 6 + 0], 2.0f);
    EXPECT_EQ(as_f32[1 * 6 + 3], -1.0f);
    EXPECT_EQ(as_f32[3 * 6 + 4], 0.0f);  // last-wins: code 0x00
  }
  {
    const zt_object *o = f.obj("empty");
    EXPECT_EQ(zt_object_validate(o), ZT_OK);
    std::vector<uint8_t> d = densify(o);
    EXPECT_EQ(d, std::vector<uint8_t>(2 * 3 * 8, 0));  // shape [2, 3] of f64
  }
}

// Empty sparse tensors densify to nothing: dst may be NULL (the size query
// itself writes nothing, not even a zero-length memset on NULL).
TEST(Composite, EmptySparseDensifiesWithANullBuffer) {
  TempDir tmp;
  const std::string path = tmp.file("empty.zt");
  zt_writer *w = create(path);
  const std::vector<uint64_t> ptr0 = {0}, ptr5 = {0, 0, 0, 0, 0, 0};
  ASSERT_EQ(zt_writer_add_csr(w, "rows0", 5, 0, 7, ZT_F32, nullptr, 0, nullptr, ptr0.data(), nullptr), ZT_OK)
      << zt_last_error();
  ASSERT_EQ(zt_writer_add_csr(w, "cols0", 5, 5, 0, ZT_F32, nullptr, 0, nullptr, ptr5.data(), nullptr), ZT_OK)
      << zt_last_error();
  const uint64_t shape[] = {3, 0, 2};
  ASSERT_EQ(zt_writer_add_coo(w, "coo0", 4, shape, 3, ZT_I64, nullptr, 0, nullptr, nullptr), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_writer_finish(w), ZT_OK);
  File f(path, 1);
  for (const char *name : {"rows0", "cols0", "coo0"}) {
    SCOPED_TRACE(name);
    size_t n = 99;
    EXPECT_EQ(zt_object_densify(f.obj(name), nullptr, 0, &n), ZT_OK) << zt_last_error();
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(zt_object_densify(f.obj(name), nullptr, 0, nullptr), ZT_OK) << zt_last_error();
  }
}

TEST(Composite, CooRoundTripThreeDimensionsWithDuplicates) {
  TempDir tmp;
  const std::string path = tmp.file("coo.zt");
  const uint64_t shape[] = {2, 3, 4};
  // 5 values; value 4 repeats the position of value 1 → last-wins.
  const std::vector<int64_t> vals = {10, -20, 30, 40, 50};
  const std::vector<uint64_t> d0 = {0, 1, 1, 0, 1}, d1 = {0, 2, 0, 1, 2}, d2 = {3, 1, 0, 2, 1};
  std::vector<uint64_t> coords = d0;
  coords.insert(coords.end(), d1.begin(), d1.end());
  coords.insert(coords.end(), d2.begin(), d2.end());
  zt_writer *w = create(path);
  zt_blob_options so;
  zt_blob_options_init(&so);
  so.encoding = ZT_ENCODING_ZSTD;
  so.digest = ZT_DIGEST_SHA256;
  ASSERT_EQ(zt_writer_add_coo(w, "t", 1, shape, 3, ZT_I64, vals.data(), 5, coords.data(), &so), ZT_OK)
      << zt_last_error();
  ASSERT_EQ(zt_writer_finish(w), ZT_OK);

  File f(path, 1);
  const zt_object *o = f.obj("t");
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  zt_sparse_info si{};
  si.struct_size = sizeof si;
  ASSERT_EQ(zt_object_sparse_info(o, &si), ZT_OK);
  EXPECT_EQ(si.is_csr, 0u);
  EXPECT_EQ(si.nnz, 5u);
  EXPECT_DOUBLE_EQ(si.density, 5.0 / 24.0);
  EXPECT_EQ(si.indptr_index, SIZE_MAX);
  EXPECT_EQ(read_index(o, "coords"), coords);
  std::vector<int64_t> want(24, 0);
  for (size_t i = 0; i < vals.size(); ++i) want[(d0[i] * 3 + d1[i]) * 4 + d2[i]] = vals[i];
  EXPECT_EQ(want[(1 * 3 + 2) * 4 + 1], 50);
  EXPECT_EQ(densify(o), bytes_of(want));
  uint8_t small[8];
  EXPECT_EQ(zt_object_densify(o, small, sizeof small, nullptr), ZT_E_BUFFER_TOO_SMALL);
}

// Packs unsigned q values row by row along the last dimension, `per` values
// per word of `word_bytes` bytes, value k at bits [k·bits, (k+1)·bits).
std::vector<uint8_t> pack(const std::vector<uint32_t> &q, uint64_t rows, uint64_t cols, unsigned bits,
                          size_t word_bytes) {
  const unsigned per = static_cast<unsigned>(word_bytes * 8 / bits);
  const uint64_t wpr = (cols + per - 1) / per;
  std::vector<uint8_t> out(rows * wpr * word_bytes, 0);
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < cols; ++c) {
      uint64_t word = r * wpr + c / per;
      uint64_t bit = (c % per) * bits;
      uint32_t v = q[r * cols + c];
      for (unsigned b = 0; b < bits; ++b)
        if (v >> b & 1) out[word * word_bytes + (bit + b) / 8] |= static_cast<uint8_t>(1u << ((bit + b) % 8));
    }
  return out;
}

TEST(Composite, QuantizedEveryPackingDequantizesLikeTheReferenceLoop) {
  struct Case {
    const char *packing;
    unsigned bits;
    zt_dtype packed_dtype;
    size_t word_bytes;
    bool zeros;
  } cases[] = {
      {"8_per_i32", 4, ZT_I32, 4, true}, {"4_per_i32", 8, ZT_U32, 4, true}, {"16_per_i32", 2, ZT_I32, 4, false},
      {"2_per_u8", 4, ZT_U8, 1, true},   {"1_per_u8", 8, ZT_U8, 1, false},  {"4_per_u8", 2, ZT_I8, 1, true},
  };
  // 3 × 2 × 21: rows = 6, a last dimension no packing or group divides.
  const uint64_t shape[] = {3, 2, 21};
  const uint64_t rows = 6, cols = 21, gs = 8, gpr = 3;
  TempDir tmp;
  std::mt19937 rng(7);
  for (const Case &c : cases) {
    const std::string path = tmp.file(std::string(c.packing) + ".zt");
    std::vector<uint32_t> q(rows * cols);
    for (auto &v : q) v = rng() % (1u << c.bits);
    // pack() lays words out little-endian; the API takes host-order words.
    std::vector<uint8_t> packed = pack(q, rows, cols, c.bits, c.word_bytes);
    packed = zttest::le_to_host(packed.data(), packed.size(), c.word_bytes);
    std::vector<float> scales(rows * gpr), zeros(rows * gpr);
    for (size_t g = 0; g < scales.size(); ++g) {
      scales[g] = 0.125f * static_cast<float>(g + 1);
      zeros[g] = static_cast<float>(g % (1u << c.bits));
    }
    zt_quant_params p;
    zt_quant_params_init(&p);
    p.bits = c.bits;
    p.group_size = gs;
    p.packing = c.packing;
    p.packed_dtype = c.packed_dtype;
    p.packed = packed.data();
    p.packed_len = packed.size();
    p.scales_dtype = ZT_F32;
    p.scales = scales.data();
    p.scales_len = scales.size() * 4;
    if (c.zeros) {
      p.zeros_dtype = ZT_F32;
      p.zeros = zeros.data();
      p.zeros_len = zeros.size() * 4;
    }
    zt_writer *w = create(path);
    ASSERT_EQ(zt_writer_add_quantized_group(w, "q", 1, shape, 3, &p, nullptr), ZT_OK)
        << c.packing << ": " << zt_last_error();
    ASSERT_EQ(zt_writer_finish(w), ZT_OK);

    File f(path, 1);
    const zt_object *o = f.obj("q");
    EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
    zt_quant_info qi{};
    qi.struct_size = sizeof qi;
    ASSERT_EQ(zt_object_quant_info(o, &qi), ZT_OK) << zt_last_error();
    EXPECT_EQ(qi.bits, c.bits);
    EXPECT_EQ(qi.group_size, gs);
    EXPECT_STREQ(qi.packing, c.packing);
    EXPECT_EQ(qi.packing_inferred, 0u);
    EXPECT_EQ(qi.has_zeros, c.zeros ? 1u : 0u);
    EXPECT_STREQ(qi.packed_role, "packed_weight");
    EXPECT_EQ(qi.rows, rows);
    EXPECT_EQ(qi.cols, cols);
    EXPECT_EQ(qi.groups, rows * gpr);
    char *attrs = nullptr;
    ASSERT_EQ(zt_object_attributes_json(o, &attrs), ZT_OK);
    EXPECT_EQ(std::string(attrs),
              "{\"bits\":" + std::to_string(c.bits) + ",\"group_size\":8,\"packing\":\"" + c.packing + "\"}");
    zt_free(attrs);
    EXPECT_EQ(read_role(o, "packed_weight"), packed);

    std::vector<float> got(rows * cols);
    ASSERT_EQ(zt_object_dequantize(o, got.data(), got.size()), ZT_OK) << zt_last_error();
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t col = 0; col < cols; ++col) {
        const uint64_t g = r * gpr + col / gs;
        const float zero = c.zeros ? zeros[g] : static_cast<float>(1u << (c.bits - 1));
        const float want = (static_cast<float>(q[r * cols + col]) - zero) * scales[g];
        ASSERT_EQ(got[r * cols + col], want) << c.packing << " at " << r << "," << col;
      }
    EXPECT_EQ(zt_object_dequantize(o, got.data(), got.size() - 1), ZT_E_BUFFER_TOO_SMALL);
  }
}

TEST(Composite, LogicalTypesAndCustomFormatRoundTrip) {
  TempDir tmp;
  const std::string path = tmp.file("logical.zt");
  std::vector<uint8_t> codes(256);
  for (int i = 0; i < 256; ++i) codes[i] = static_cast<uint8_t>(i);
  const char *fp8[] = {"f8_e4m3fn", "f8_e5m2", "f8_e4m3fnuz", "f8_e5m2fnuz"};
  const std::vector<float> c64 = {1, -1, 2, -2, 3, -3};
  const std::vector<double> c128 = {0.5, 1e300, -0.25, 4};
  zt_writer *w = create(path);
  const uint64_t s256[] = {16, 16}, s3[] = {3}, s2[] = {2};
  for (const char *t : fp8) {
    zt_blob_options o;
    zt_blob_options_init(&o);
    o.logical_type = t;
    ASSERT_EQ(zt_writer_add_dense(w, t, std::strlen(t), ZT_U8, s256, 2, codes.data(), 256, &o), ZT_OK);
  }
  zt_blob_options o;
  zt_blob_options_init(&o);
  o.logical_type = "complex64";
  // The 2:1 ratio is checked: 3 complex64 need 24 bytes, not 12.
  EXPECT_NE(zt_writer_add_dense(w, "bad", 3, ZT_F32, s3, 1, c64.data(), 12, &o), ZT_OK);
  zt_writer_discard(w);
  w = create(path);
  for (const char *t : fp8) {
    zt_blob_options fo;
    zt_blob_options_init(&fo);
    fo.logical_type = t;
    ASSERT_EQ(zt_writer_add_dense(w, t, std::strlen(t), ZT_U8, s256, 2, codes.data(), 256, &fo), ZT_OK);
  }
  ASSERT_EQ(zt_writer_add_dense(w, "c64", 3, ZT_F32, s3, 1, c64.data(), 24, &o), ZT_OK) << zt_last_error();
  o.logical_type = "complex128";
  ASSERT_EQ(zt_writer_add_dense(w, "c128", 4, ZT_F64, s2, 1, c128.data(), 32, &o), ZT_OK) << zt_last_error();
  // Any other format with any components, through the generic path.
  const uint64_t s4[] = {4};
  ASSERT_EQ(zt_writer_begin_object(w, "custom", 6, "my_layout", s4, 1), ZT_OK);
  const uint16_t alpha[] = {1, 2, 3};
  ASSERT_EQ(zt_write_blob(w, "custom", 6, "alpha", ZT_U16, alpha, sizeof alpha, nullptr), ZT_OK);
  ASSERT_EQ(zt_write_blob(w, "custom", 6, "beta", ZT_U8, "xyz", 3, nullptr), ZT_OK);
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();

  File f(path, 1);
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  for (const char *t : fp8) {
    const zt_object *obj = f.obj(t);
    zt_component_info ci{};
    ci.struct_size = sizeof ci;
    ASSERT_EQ(zt_object_component(obj, 0, &ci), ZT_OK);
    EXPECT_STREQ(ci.logical_type, t);
    EXPECT_EQ(ci.ratio, 1u);
    std::vector<uint8_t> back = read_role(obj, "data");
    EXPECT_EQ(back, codes);
    std::vector<float> a(256), b(256);
    ASSERT_EQ(zt_convert_to_f32(ci.dtype, ci.logical_type, back.data(), back.size(), a.data(), a.size()), ZT_OK);
    ASSERT_EQ(zt_convert_to_f32(ZT_U8, t, codes.data(), 256, b.data(), 256), ZT_OK);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), 1024), 0) << t;
  }
  for (const char *name : {"c64", "c128"}) {
    const zt_object *obj = f.obj(name);
    zt_component_info ci{};
    ci.struct_size = sizeof ci;
    ASSERT_EQ(zt_object_component(obj, 0, &ci), ZT_OK);
    EXPECT_EQ(ci.ratio, 2u);
    std::vector<uint8_t> back = read_role(obj, "data");
    std::vector<float> pairs(back.size() / zt_dtype_size(ci.dtype));
    ASSERT_EQ(zt_convert_to_f32(ci.dtype, ci.logical_type, back.data(), back.size(), pairs.data(), pairs.size()),
              ZT_OK);
    if (std::string(name) == "c64") {
      EXPECT_EQ(back, bytes_of(c64));
      EXPECT_EQ(pairs, c64);
    } else {
      EXPECT_EQ(back, bytes_of(c128));
      EXPECT_EQ(pairs[0], 0.5f);
      EXPECT_TRUE(std::isinf(pairs[1]));  // 1e300 does not fit an f32
      EXPECT_EQ(pairs[2], -0.25f);
      EXPECT_EQ(pairs[3], 4.f);
    }
  }
  const zt_object *custom = f.obj("custom");
  zt_object_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(zt_object_get_info(custom, &info), ZT_OK);
  EXPECT_STREQ(info.format, "my_layout");
  EXPECT_EQ(info.component_count, 2u);
  EXPECT_EQ(zt_object_validate(custom), ZT_OK);
  EXPECT_EQ(read_role(custom, "beta"), (std::vector<uint8_t>{'x', 'y', 'z'}));
  EXPECT_EQ(zt_object_densify(custom, nullptr, 0, nullptr), ZT_E_WRONG_FORMAT);
  EXPECT_EQ(zt_object_dequantize(custom, nullptr, 0), ZT_E_WRONG_FORMAT);
  zt_sparse_info si{};
  si.struct_size = sizeof si;
  EXPECT_EQ(zt_object_sparse_info(custom, &si), ZT_E_WRONG_FORMAT);
}

// Each rule on the caller's arrays: the status, a message naming the object
// and component, nothing written, and the writer still usable.
TEST(Composite, WriterRefusesBadArraysBeforeWriting) {
  TempDir tmp;
  const std::string path = tmp.file("refused.zt");
  zt_writer *w = create(path);
  const float v[3] = {1, 2, 3};
  auto csr = [&](std::vector<uint64_t> ind, std::vector<uint64_t> ptr, uint64_t rows, uint64_t cols) {
    return zt_writer_add_csr(w, "m", 1, rows, cols, ZT_F32, v, ind.size(), ind.data(), ptr.data(), nullptr);
  };
  EXPECT_EQ(csr({0, 1, 2}, {1, 2, 3}, 2, 3), ZT_E_SPARSE_INDPTR);  // start
  EXPECT_NE(std::string(zt_last_error()).find("indptr"), std::string::npos) << zt_last_error();
  EXPECT_EQ(csr({0, 1, 2}, {0, 2, 1}, 2, 3), ZT_E_SPARSE_INDPTR);  // decreasing + end
  EXPECT_EQ(csr({0, 1, 2}, {0, 1, 2}, 2, 3), ZT_E_SPARSE_INDPTR);  // end != nnz
  EXPECT_EQ(csr({0, 3, 2}, {0, 2, 3}, 2, 3), ZT_E_SPARSE_INDEX);
  EXPECT_NE(std::string(zt_last_error()).find("entry 1"), std::string::npos) << zt_last_error();
  const uint64_t shape[] = {2, 2};
  const uint64_t coords_bad[] = {0, 1, 2, 0, 1, 1};
  EXPECT_EQ(zt_writer_add_coo(w, "c", 1, shape, 2, ZT_F32, v, 3, coords_bad, nullptr), ZT_E_SPARSE_INDEX);
  EXPECT_NE(std::string(zt_last_error()).find("coords"), std::string::npos) << zt_last_error();
  EXPECT_EQ(zt_writer_add_coo(w, "c", 1, shape, 0, ZT_F32, v, 3, coords_bad, nullptr), ZT_E_SHAPE);
  zt_quant_params p;
  zt_quant_params_init(&p);
  const int32_t words[4] = {0, 0, 0, 0};
  const uint16_t sc[4] = {0x3C00, 0x3C00, 0x3C00, 0x3C00};
  p.group_size = 8;
  p.packed = words;
  p.packed_len = sizeof words;  // 2 × 16 4-bit values = 4 words
  p.scales = sc;
  p.scales_len = sizeof sc;  // 2 × 2 groups
  const uint64_t qshape[] = {2, 16};
  p.packed_len = 12;
  EXPECT_EQ(zt_writer_add_quantized_group(w, "q", 1, qshape, 2, &p, nullptr), ZT_E_QUANT_SIZE);
  p.packed_len = 16;
  p.scales_len = 6;
  EXPECT_EQ(zt_writer_add_quantized_group(w, "q", 1, qshape, 2, &p, nullptr), ZT_E_QUANT_SIZE);
  p.scales_len = 8;
  p.zeros = sc;
  p.zeros_len = 4;
  EXPECT_EQ(zt_writer_add_quantized_group(w, "q", 1, qshape, 2, &p, nullptr), ZT_E_QUANT_SIZE);
  p.zeros = nullptr;
  p.bits = 8;
  EXPECT_EQ(zt_writer_add_quantized_group(w, "q", 1, qshape, 2, &p, nullptr), ZT_E_QUANT_PARAMS);
  p.bits = 4;
  p.packing = "7_per_i32";
  EXPECT_EQ(zt_writer_add_quantized_group(w, "q", 1, qshape, 2, &p, nullptr), ZT_E_QUANT_PARAMS);
  p.packing = "8_per_i32";
  p.group_size = 0;
  EXPECT_EQ(zt_writer_add_quantized_group(w, "q", 1, qshape, 2, &p, nullptr), ZT_E_QUANT_PARAMS);
  p.group_size = 8;
  p.scales_dtype = ZT_I16;
  EXPECT_EQ(zt_writer_add_quantized_group(w, "q", 1, qshape, 2, &p, nullptr), ZT_E_QUANT_PARAMS);
  p.scales_dtype = ZT_F16;
  // The writer is still usable, and the valid versions go through.
  ASSERT_EQ(csr({0, 1, 2}, {0, 2, 3}, 2, 3), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_writer_add_quantized_group(w, "q", 1, qshape, 2, &p, nullptr), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  File f(path, 1);
  size_t count = 0;
  zt_file_object_count(f.f, &count);
  EXPECT_EQ(count, 2u);  // only the valid objects were written
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK);
}

std::string interop(const std::string &file) {
  return zttest::interop_dir() + "/v1/" + file;
}

TEST(CompositeInterop, SparseCsrDensifiesToValuesAtIndices) {
  File f(interop("sparse_csr.zt"), 1);
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  size_t count = 0;
  zt_file_object_count(f.f, &count);
  ASSERT_EQ(count, 5u);
  for (size_t i = 0; i < count; ++i) {
    const zt_object *o = nullptr;
    zt_file_object_at(f.f, i, &o);
    zt_object_info info{};
    info.struct_size = sizeof info;
    zt_object_get_info(o, &info);
    SCOPED_TRACE(info.name);
    EXPECT_EQ(zt_object_validate(o), ZT_OK) << zt_last_error();
    zt_sparse_info si{};
    si.struct_size = sizeof si;
    ASSERT_EQ(zt_object_sparse_info(o, &si), ZT_OK);
    const uint64_t rows = info.shape[0], cols = info.shape[1];
    std::vector<uint64_t> ind = read_index(o, "indices"), ptr = read_index(o, "indptr");
    std::vector<uint8_t> vals = read_role(o, "values");
    const size_t es = si.values_element_size;
    ASSERT_EQ(ptr.size(), rows + 1);
    std::vector<uint8_t> want(rows * cols * es, 0);
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t k = ptr[r]; k < ptr[r + 1]; ++k) std::memcpy(&want[(r * cols + ind[k]) * es], &vals[k * es], es);
    EXPECT_EQ(densify(o), want);
    EXPECT_NEAR(si.density, static_cast<double>(ind.size()) / static_cast<double>(rows * cols), 1e-12);
  }
  // A value we can check by eye: csr_f32_4x5's stored values appear densely.
  const zt_object *o = f.obj("csr_f32_4x5");
  std::vector<uint8_t> d = densify(o), vals = read_role(o, "values");
  std::vector<float> df(d.size() / 4), vf(vals.size() / 4);
  std::memcpy(df.data(), d.data(), d.size());
  std::memcpy(vf.data(), vals.data(), vals.size());
  size_t nonzero = 0;
  for (float x : df) nonzero += x != 0;
  EXPECT_EQ(nonzero, vf.size());
}

TEST(CompositeInterop, SparseCooDensifies) {
  File f(interop("sparse_coo.zt"), 1);
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  for (const char *name : {"coo_f32_3x4", "coo_i64_2x3x4", "coo_f16_zstd_sha256", "coo_empty_5x5"}) {
    SCOPED_TRACE(name);
    const zt_object *o = f.obj(name);
    zt_object_info info{};
    info.struct_size = sizeof info;
    zt_object_get_info(o, &info);
    zt_sparse_info si{};
    si.struct_size = sizeof si;
    ASSERT_EQ(zt_object_sparse_info(o, &si), ZT_OK);
    std::vector<uint64_t> coords = read_index(o, "coords");
    std::vector<uint8_t> vals = read_role(o, "values");
    const size_t es = si.values_element_size, nnz = si.nnz;
    ASSERT_EQ(coords.size(), info.ndim * nnz);
    std::vector<uint8_t> want(si.numel * es, 0);
    for (size_t i = 0; i < nnz; ++i) {
      uint64_t pos = 0;
      for (size_t d = 0; d < info.ndim; ++d) pos = pos * info.shape[d] + coords[d * nnz + i];
      std::memcpy(&want[pos * es], &vals[i * es], es);
    }
    EXPECT_EQ(densify(o), want);
  }
}

TEST(CompositeInterop, QuantizedGroupDequantizes) {
  File f(interop("quantized_group.zt"), 1);
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  for (const char *name : {"gptq_raw", "gptq_zstd_crc32c"}) {
    SCOPED_TRACE(name);
    const zt_object *o = f.obj(name);
    zt_quant_info qi{};
    qi.struct_size = sizeof qi;
    ASSERT_EQ(zt_object_quant_info(o, &qi), ZT_OK) << zt_last_error();
    EXPECT_EQ(qi.rows, 16u);
    EXPECT_EQ(qi.cols, 64u);
    EXPECT_EQ(qi.groups, 32u);
    std::vector<uint8_t> pw = read_role(o, "packed_weight"), sc = read_role(o, "scales"), ze = read_role(o, "zeros");
    std::vector<float> scales(32), zeros(32);
    ASSERT_EQ(zt_convert_to_f32(ZT_F16, nullptr, sc.data(), sc.size(), scales.data(), 32), ZT_OK);
    ASSERT_EQ(zt_convert_to_f32(ZT_F16, nullptr, ze.data(), ze.size(), zeros.data(), 32), ZT_OK);
    std::vector<float> got(16 * 64);
    ASSERT_EQ(zt_object_dequantize(o, got.data(), got.size()), ZT_OK) << zt_last_error();
    for (size_t r = 0; r < 16; ++r)
      for (size_t c = 0; c < 64; ++c) {
        uint32_t word;
        std::memcpy(&word, &pw[(r * 8 + c / 8) * 4], 4);
        const float q = static_cast<float>((word >> (4 * (c % 8))) & 15);
        const size_t g = r * 2 + c / 32;
        ASSERT_EQ(got[r * 64 + c], (q - zeros[g]) * scales[g]) << r << "," << c;
        // Sensible: |w| bounded by 15 × the group's scale.
        ASSERT_LE(std::fabs(got[r * 64 + c]), 15 * scales[g]);
      }
  }
}

TEST(CompositeInterop, ReferenceDataScalesVariantIsValidAndDecodes) {
  File f(interop("custom_format.zt"), 1);
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  const zt_object *o = f.obj("qg_data_scales");
  EXPECT_EQ(zt_object_validate(o), ZT_OK) << zt_last_error();
  zt_quant_info qi{};
  qi.struct_size = sizeof qi;
  ASSERT_EQ(zt_object_quant_info(o, &qi), ZT_OK) << zt_last_error();
  EXPECT_STREQ(qi.packed_role, "data");
  EXPECT_STREQ(qi.packing, "2_per_u8");
  EXPECT_EQ(qi.packing_inferred, 1u);
  EXPECT_EQ(qi.has_zeros, 0u);
  std::vector<uint8_t> data = read_role(o, "data"), sc = read_role(o, "scales");
  std::vector<float> scales(4);
  std::memcpy(scales.data(), sc.data(), 16);
  std::vector<float> got(32);
  ASSERT_EQ(zt_object_dequantize(o, got.data(), got.size()), ZT_OK) << zt_last_error();
  for (size_t i = 0; i < 32; ++i) {
    const float q = static_cast<float>(i % 2 ? data[i / 2] >> 4 : data[i / 2] & 15);
    EXPECT_EQ(got[i], (q - 8.0f) * scales[i / 8]) << i;
  }
}

TEST(CompositeInterop, LogicalTypesDecode) {
  File f(interop("logical_types.zt"), 1);
  ASSERT_NE(f.f, nullptr);
  for (const char *name : {"fp8_e4m3fn", "fp8_e5m2", "fp8_e4m3fnuz", "fp8_e5m2fnuz", "fp8_e4m3fn_zstd_sha256",
                           "complex64_10", "complex128_3x2"}) {
    SCOPED_TRACE(name);
    const zt_object *o = f.obj(name);
    zt_component_info ci{};
    ci.struct_size = sizeof ci;
    ASSERT_EQ(zt_object_component(o, 0, &ci), ZT_OK);
    std::vector<uint8_t> raw = read_role(o, "data");
    std::vector<float> out(raw.size() / zt_dtype_size(ci.dtype));
    ASSERT_EQ(zt_convert_to_f32(ci.dtype, ci.logical_type, raw.data(), raw.size(), out.data(), out.size()), ZT_OK)
        << zt_last_error();
    uint64_t numel = 0;
    zt_object_numel(o, &numel);
    EXPECT_EQ(out.size(), numel * ci.ratio);
    size_t finite = 0;
    for (float x : out) finite += std::isfinite(x);
    EXPECT_GT(finite, out.size() / 2);  // mostly ordinary numbers
  }
}

TEST(CompositeCli, InfoShowsSparseAndQuantParameters) {
  const char *tool = std::getenv("ZT_TOOL");
  if (!tool) GTEST_SKIP() << "ZT_TOOL not set";
  auto run = [&](const std::string &file) {
    // ZT_TOOL runs as is: a cross build's is a script that runs zt under
    // the emulator (tests/zt_under_wrapper.sh.in).
    std::string cmd = std::string(tool) + " info '" + interop(file) + "'";
    FILE *p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    if (p) pclose(p);
    return out;
  };
  std::string csr = run("sparse_csr.zt");
  EXPECT_NE(csr.find("nnz 6, density 0.3"), std::string::npos) << csr;  // csr_f32_4x5: 6 of 20
  std::string q = run("quantized_group.zt");
  EXPECT_NE(q.find("bits 4, group_size 32, packing 8_per_i32"), std::string::npos) << q;
}

}  // namespace
