// zt_object_to_dlpack: zero-copy tensors point into the mapping and keep it
// alive past zt_close(); everything else is decoded into an owned buffer;
// dtype and shape mapping; refusals for what DLPack cannot carry.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor.h"
#include "ztensor_dlpack.h"

using zttest::TempDir;

namespace {

template <typename T>
std::vector<T> iota_vec(size_t n, T start) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(start + static_cast<T>(i));
  return v;
}

const std::vector<float> kF32 = iota_vec<float>(6, 1.5f);
const std::vector<int16_t> kI16 = iota_vec<int16_t>(1000, -500);
const std::vector<uint8_t> kBool = {1, 0, 0, 1, 1};
const std::vector<float> kComplex = {1.f, 2.f, 3.f, 4.f};  // two complex64 values
const std::vector<uint8_t> kFp8 = {0x38, 0x40, 0xc0};

void write_fixture(const std::string &path) {
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  zt_writer *w = nullptr;
  ASSERT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK) << zt_last_error();
  const uint64_t s23[] = {2, 3};
  ASSERT_EQ(zt_writer_add_dense(w, "f32", 3, ZT_F32, s23, 2, kF32.data(), kF32.size() * 4, nullptr), ZT_OK);

  zt_blob_options zstd;
  zt_blob_options_init(&zstd);
  zstd.encoding = ZT_ENCODING_ZSTD;
  const uint64_t s10x100[] = {10, 100};
  ASSERT_EQ(zt_writer_add_dense(w, "i16_zstd", 8, ZT_I16, s10x100, 2, kI16.data(), kI16.size() * 2, &zstd), ZT_OK)
      << zt_last_error();

  const uint64_t s5[] = {5};
  ASSERT_EQ(zt_writer_add_dense(w, "flags", 5, ZT_BOOL, s5, 1, kBool.data(), kBool.size(), nullptr), ZT_OK);

  zt_blob_options cx;
  zt_blob_options_init(&cx);
  cx.logical_type = "complex64";
  const uint64_t s2[] = {2};
  ASSERT_EQ(zt_writer_add_dense(w, "cx", 2, ZT_F32, s2, 1, kComplex.data(), kComplex.size() * 4, &cx), ZT_OK)
      << zt_last_error();

  zt_blob_options f8;
  zt_blob_options_init(&f8);
  f8.logical_type = "f8_e4m3fn";
  const uint64_t s3[] = {3};
  ASSERT_EQ(zt_writer_add_dense(w, "fp8", 3, ZT_U8, s3, 1, kFp8.data(), kFp8.size(), &f8), ZT_OK) << zt_last_error();

  const double scalar = 2.25;
  ASSERT_EQ(zt_writer_add_dense(w, "scalar", 6, ZT_F64, nullptr, 0, &scalar, 8, nullptr), ZT_OK);
  const uint64_t s04[] = {0, 4};
  ASSERT_EQ(zt_writer_add_dense(w, "empty", 5, ZT_U32, s04, 2, nullptr, 0, nullptr), ZT_OK) << zt_last_error();

  // A sparse CSR 2x3 matrix with one value, written through the generic path.
  const uint64_t shape[] = {2, 3};
  ASSERT_EQ(zt_writer_begin_object(w, "csr", 3, "sparse_csr", shape, 2), ZT_OK) << zt_last_error();
  const float values[] = {7.f};
  const uint64_t indices[] = {2};
  const uint64_t indptr[] = {0, 1, 1};
  ASSERT_EQ(zt_write_blob(w, "csr", 3, "values", ZT_F32, values, sizeof values, nullptr), ZT_OK);
  ASSERT_EQ(zt_write_blob(w, "csr", 3, "indices", ZT_U64, indices, sizeof indices, nullptr), ZT_OK);
  ASSERT_EQ(zt_write_blob(w, "csr", 3, "indptr", ZT_U64, indptr, sizeof indptr, nullptr), ZT_OK);
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
}

class Dlpack : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = tmp_.file("dl.zt");
    write_fixture(path_);
  }
  zt_file *open(zt_access access = ZT_ACCESS_MMAP) {
    zt_open_options o;
    zt_open_options_init(&o);
    o.access = access;
    zt_file *f = nullptr;
    EXPECT_EQ(zt_open(path_.c_str(), &o, &f), ZT_OK) << zt_last_error();
    return f;
  }
  static const zt_object *object(const zt_file *f, const std::string &name) {
    const zt_object *o = nullptr;
    EXPECT_EQ(zt_file_object_by_name(f, name.data(), name.size(), &o), ZT_OK) << name;
    return o;
  }
  static DLManagedTensor *export_tensor(const zt_file *f, const std::string &name) {
    DLManagedTensor *t = nullptr;
    EXPECT_EQ(zt_object_to_dlpack(object(f, name), &t), ZT_OK) << zt_last_error();
    return t;
  }
  TempDir tmp_;
  std::string path_;
};

TEST_F(Dlpack, RawMappedDataIsZeroCopy) {
  zt_file *f = open();
  DLManagedTensor *t = export_tensor(f, "f32");
  ASSERT_NE(t, nullptr);
  const void *view = nullptr;
  size_t len = 0;
  if (zttest::kHostBigEndian) {
    // DLPack data is in the host's byte order: a big-endian host cannot
    // lend little-endian f32s, and hands out a swapped copy.
    EXPECT_EQ(zt_component_view(object(f, "f32"), 0, &view, &len), ZT_E_NOT_ZERO_COPY);
    EXPECT_EQ(std::memcmp(t->dl_tensor.data, kF32.data(), kF32.size() * 4), 0);
  } else {
    ASSERT_EQ(zt_component_view(object(f, "f32"), 0, &view, &len), ZT_OK);
    EXPECT_EQ(t->dl_tensor.data, view);
  }
  EXPECT_EQ(t->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(t->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(t->dl_tensor.dtype.bits, 32);
  EXPECT_EQ(t->dl_tensor.dtype.lanes, 1);
  ASSERT_EQ(t->dl_tensor.ndim, 2);
  EXPECT_EQ(t->dl_tensor.shape[0], 2);
  EXPECT_EQ(t->dl_tensor.shape[1], 3);
  EXPECT_EQ(t->dl_tensor.strides, nullptr);
  EXPECT_EQ(t->dl_tensor.byte_offset, 0u);
  t->deleter(t);
  EXPECT_EQ(zt_close(f), ZT_OK);
}

TEST_F(Dlpack, TensorOutlivesCloseOfItsFile) {
  zt_file *f = open();
  DLManagedTensor *a = export_tensor(f, "f32");
  DLManagedTensor *b = export_tensor(f, "f32");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(zt_close(f), ZT_OK);
  // The handle is gone; the mapping must not be.
  EXPECT_EQ(std::memcmp(a->dl_tensor.data, kF32.data(), kF32.size() * 4), 0);
  a->deleter(a);
  // One tensor released: the other still holds the mapping.
  EXPECT_EQ(std::memcmp(b->dl_tensor.data, kF32.data(), kF32.size() * 4), 0);
  EXPECT_EQ(b->dl_tensor.shape[1], 3);
  b->deleter(b);
}

TEST_F(Dlpack, ZstdIsDecodedIntoOwnedBuffer) {
  zt_file *f = open();
  const void *view = nullptr;
  size_t len = 0;
  EXPECT_EQ(zt_component_view(object(f, "i16_zstd"), 0, &view, &len), ZT_E_NOT_ZERO_COPY);
  DLManagedTensor *t = export_tensor(f, "i16_zstd");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(zt_close(f), ZT_OK);
  EXPECT_EQ(t->dl_tensor.dtype.code, kDLInt);
  EXPECT_EQ(t->dl_tensor.dtype.bits, 16);
  ASSERT_EQ(t->dl_tensor.ndim, 2);
  EXPECT_EQ(t->dl_tensor.shape[0], 10);
  EXPECT_EQ(t->dl_tensor.shape[1], 100);
  EXPECT_EQ(std::memcmp(t->dl_tensor.data, kI16.data(), kI16.size() * 2), 0);
  // Owned buffers are writable.
  static_cast<int16_t *>(t->dl_tensor.data)[0] = 42;
  t->deleter(t);
}

TEST_F(Dlpack, PreadAccessIsDecoded) {
  zt_file *f = open(ZT_ACCESS_PREAD);
  DLManagedTensor *t = export_tensor(f, "f32");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(zt_close(f), ZT_OK);
  EXPECT_EQ(std::memcmp(t->dl_tensor.data, kF32.data(), kF32.size() * 4), 0);
  t->deleter(t);
}

TEST_F(Dlpack, MemoryOpenedFileIsZeroCopyIntoTheBuffer) {
  std::string bytes = zttest::read_file(path_);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open_memory(bytes.data(), bytes.size(), nullptr, &f), ZT_OK);
  DLManagedTensor *t = export_tensor(f, "f32");
  ASSERT_NE(t, nullptr);
  const char *p = static_cast<const char *>(t->dl_tensor.data);
  if (!zttest::kHostBigEndian) {  // there: a swapped copy (RawMappedDataIsZeroCopy)
    EXPECT_GE(p, bytes.data());
    EXPECT_LT(p, bytes.data() + bytes.size());
  }
  EXPECT_EQ(zt_close(f), ZT_OK);
  EXPECT_EQ(std::memcmp(p, kF32.data(), kF32.size() * 4), 0);
  t->deleter(t);
}

TEST_F(Dlpack, DtypeMapping) {
  zt_file *f = open();
  struct Case {
    const char *name;
    uint8_t code;
    uint8_t bits;
    int ndim;
  };
#if DLPACK_VERSION >= 80
  const uint8_t bool_code = kDLBool;
#else
  const uint8_t bool_code = kDLUInt;
#endif
  const Case cases[] = {
      {"flags", bool_code, 8, 1},  {"cx", kDLComplex, 64, 1}, {"fp8", kDLUInt, 8, 1},
      {"scalar", kDLFloat, 64, 0}, {"empty", kDLUInt, 32, 2},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    DLManagedTensor *t = export_tensor(f, c.name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->dl_tensor.dtype.code, c.code);
    EXPECT_EQ(t->dl_tensor.dtype.bits, c.bits);
    EXPECT_EQ(t->dl_tensor.ndim, c.ndim);
    EXPECT_NE(t->dl_tensor.data, nullptr);
    EXPECT_NE(t->dl_tensor.shape, nullptr);
    t->deleter(t);
  }
  DLManagedTensor *cx = export_tensor(f, "cx");
  ASSERT_NE(cx, nullptr);
  EXPECT_EQ(cx->dl_tensor.shape[0], 2);  // logical elements, not floats
  EXPECT_EQ(std::memcmp(cx->dl_tensor.data, kComplex.data(), 16), 0);
  cx->deleter(cx);
  DLManagedTensor *s = export_tensor(f, "scalar");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(*static_cast<const double *>(s->dl_tensor.data), 2.25);
  s->deleter(s);
  EXPECT_EQ(zt_close(f), ZT_OK);
}

TEST_F(Dlpack, RefusesWhatItCannotExport) {
  zt_file *f = open();
  DLManagedTensor *t = reinterpret_cast<DLManagedTensor *>(0x1);
  EXPECT_EQ(zt_object_to_dlpack(object(f, "csr"), &t), ZT_E_WRONG_FORMAT);
  EXPECT_EQ(t, nullptr);
  EXPECT_NE(std::string(zt_last_error()).find("csr"), std::string::npos) << zt_last_error();
  EXPECT_EQ(zt_object_to_dlpack(object(f, "f32"), nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_object_to_dlpack(nullptr, &t), ZT_E_INVALID_ARG);
  const zt_object *stale = object(f, "f32");
  EXPECT_EQ(zt_close(f), ZT_OK);
  EXPECT_EQ(zt_object_to_dlpack(stale, &t), ZT_E_MISUSE);
}

TEST(DlpackInterop, LegacyBigEndianIsSwappedAndBf16Mapped) {
  const std::string dir = zttest::interop_dir();
  for (const char *rel : {"/v0/v01_raw_be.zt", "/v1/dense_bf16.zt"}) {
    SCOPED_TRACE(rel);
    zt_file *f = nullptr;
    ASSERT_EQ(zt_open((dir + rel).c_str(), nullptr, &f), ZT_OK) << zt_last_error();
    size_t n = 0, decoded = 0;
    ASSERT_EQ(zt_file_object_count(f, &n), ZT_OK);
    ASSERT_GT(n, 0u);
    for (size_t i = 0; i < n; ++i) {
      const zt_object *o = nullptr;
      ASSERT_EQ(zt_file_object_at(f, i, &o), ZT_OK);
      zt_component_info ci;
      std::memset(&ci, 0, sizeof ci);
      ci.struct_size = sizeof ci;
      ASSERT_EQ(zt_object_component(o, 0, &ci), ZT_OK);
      size_t len = 0;
      zt_component_read(o, 0, nullptr, 0, &len);
      std::vector<uint8_t> want(len);
      ASSERT_EQ(zt_component_read(o, 0, want.data(), want.size(), &len), ZT_OK);
      DLManagedTensor *t = nullptr;
      ASSERT_EQ(zt_object_to_dlpack(o, &t), ZT_OK) << zt_last_error();
      if (ci.dtype == ZT_BF16) {
        EXPECT_EQ(t->dl_tensor.dtype.code, kDLBfloat);
      }
      const void *view = nullptr;
      size_t vlen = 0;
      bool zero_copy = zt_component_view(o, 0, &view, &vlen) == ZT_OK;
      if (!zero_copy) ++decoded;
      EXPECT_EQ(t->dl_tensor.data == view, zero_copy);
      EXPECT_EQ(std::memcmp(t->dl_tensor.data, want.data(), want.size()), 0);
      t->deleter(t);
    }
    // The file not in the host's byte order must have gone through the
    // decoding path (the big-endian one, or on a big-endian host the other).
    EXPECT_EQ(decoded > 0, (std::string(rel).find("_be") != std::string::npos) != zttest::kHostBigEndian);
    EXPECT_EQ(zt_close(f), ZT_OK);
  }
}

}  // namespace
