// zt_file_object_table: every object listed in one call must agree with
// what the per-object calls (zt_file_object_at, zt_object_get_info,
// zt_object_component) say, for dense, composite, typed and odd objects.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor.h"
#include "ztensor_composite.h"

using zttest::TempDir;

namespace {

const zt_object_row &row_at(const zt_object_table *t, size_t i) {
  return *reinterpret_cast<const zt_object_row *>(reinterpret_cast<const char *>(t->rows) + i * t->row_size);
}

std::string write_mixed(const TempDir &dir) {
  std::string path = dir.file("mixed.zt");
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK);
  float f[6] = {1, 2, 3, 4, 5, 6};
  uint64_t s23[2] = {2, 3};
  EXPECT_EQ(zt_writer_add_dense(w, "w", 1, ZT_F32, s23, 2, f, sizeof f, nullptr), ZT_OK);
  // A name with a NUL inside, a scalar, an empty tensor, zstd, a logical type.
  const char odd[] = {'a', '\0', 'b'};
  int64_t one = 7;
  EXPECT_EQ(zt_writer_add_dense(w, odd, 3, ZT_I64, nullptr, 0, &one, sizeof one, nullptr), ZT_OK);
  uint64_t s0[1] = {0};
  EXPECT_EQ(zt_writer_add_dense(w, "empty", 5, ZT_F32, s0, 1, nullptr, 0, nullptr), ZT_OK);
  zt_blob_options z;
  zt_blob_options_init(&z);
  z.encoding = ZT_ENCODING_ZSTD;
  EXPECT_EQ(zt_writer_add_dense(w, "z", 1, ZT_F32, s23, 2, f, sizeof f, &z), ZT_OK);
  zt_blob_options c;
  zt_blob_options_init(&c);
  c.logical_type = "complex64";
  uint64_t s3[1] = {3};
  EXPECT_EQ(zt_writer_add_dense(w, "c", 1, ZT_F32, s3, 1, f, sizeof f, &c), ZT_OK);
  uint64_t indices[2] = {0, 2}, indptr[3] = {0, 1, 2};
  float vals[2] = {9, 8};
  EXPECT_EQ(zt_writer_add_csr(w, "sparse", 6, 2, 3, ZT_F32, vals, 2, indices, indptr, nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_finish(w), ZT_OK);
  return path;
}

TEST(ObjectTable, AgreesWithThePerObjectCalls) {
  TempDir dir;
  std::string path = write_mixed(dir);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK);
  zt_object_table *t = nullptr;
  ASSERT_EQ(zt_file_object_table(f, &t), ZT_OK);
  ASSERT_NE(t, nullptr);
  size_t count = 0;
  ASSERT_EQ(zt_file_object_count(f, &count), ZT_OK);
  ASSERT_EQ(t->count, count);
  ASSERT_EQ(count, 6u);
  EXPECT_GE(t->row_size, sizeof(zt_object_row));
  size_t names_seen = 0, dims_seen = 0;
  for (size_t i = 0; i < count; ++i) {
    const zt_object_row &r = row_at(t, i);
    const zt_object *o = nullptr;
    ASSERT_EQ(zt_file_object_at(f, i, &o), ZT_OK);
    EXPECT_EQ(r.object, o);
    zt_object_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    ASSERT_EQ(zt_object_get_info(o, &info), ZT_OK);
    SCOPED_TRACE(std::string(info.name, info.name_len));
    // Names: in row order, each followed by a NUL.
    EXPECT_EQ(r.name_offset, names_seen);
    ASSERT_EQ(r.name_len, info.name_len);
    EXPECT_EQ(std::memcmp(t->names + r.name_offset, info.name, info.name_len), 0);
    EXPECT_EQ(t->names[r.name_offset + r.name_len], '\0');
    names_seen += r.name_len + 1;
    EXPECT_EQ(r.dims_offset, dims_seen);
    ASSERT_EQ(r.ndim, info.ndim);
    for (size_t d = 0; d < info.ndim; ++d) EXPECT_EQ(t->dims[r.dims_offset + d], info.shape[d]);
    dims_seen += info.ndim;
    EXPECT_EQ(r.dense, std::strcmp(info.format, "dense") == 0 ? 1u : 0u);
    EXPECT_EQ(r.status, info.status);
    size_t data = 0;
    if (zt_object_component_index(o, "data", &data) == ZT_OK) {
      zt_component_info ci;
      std::memset(&ci, 0, sizeof ci);
      ci.struct_size = sizeof ci;
      ASSERT_EQ(zt_object_component(o, data, &ci), ZT_OK);
      EXPECT_EQ(r.data_component, data);
      EXPECT_EQ(r.data_dtype, static_cast<int32_t>(ci.dtype));
      EXPECT_EQ(r.data_has_logical_type, ci.logical_type ? 1u : 0u);
      EXPECT_EQ(r.data_decoded_length, ci.decoded_length);
    } else {
      EXPECT_EQ(r.data_component, UINT64_MAX);
      EXPECT_EQ(r.data_dtype, -1);
    }
  }
  EXPECT_EQ(t->names_len, names_seen);
  EXPECT_EQ(t->dims_len, dims_seen);
  // The sparse object has no "data" component; the typed one says so; the
  // name with a NUL inside keeps its 3 bytes. (Rows are in file order,
  // which the writer chooses: look them up by name.)
  auto by_name = [&](const std::string &name) -> const zt_object_row & {
    for (size_t i = 0; i < t->count; ++i) {
      const zt_object_row &r = row_at(t, i);
      if (std::string(t->names + r.name_offset, r.name_len) == name) return r;
    }
    ADD_FAILURE() << "no row named " << name;
    return row_at(t, 0);
  };
  EXPECT_EQ(by_name("sparse").dense, 0u);
  EXPECT_EQ(by_name("sparse").data_component, UINT64_MAX);
  EXPECT_EQ(by_name("c").data_has_logical_type, 1u);
  EXPECT_EQ(by_name("w").data_has_logical_type, 0u);
  EXPECT_EQ(by_name(std::string("a\0b", 3)).ndim, 0u);
  EXPECT_EQ(by_name("empty").data_decoded_length, 0u);
  EXPECT_EQ(by_name("z").data_decoded_length, 24u);
  zt_free(t);
  EXPECT_EQ(zt_close(f), ZT_OK);
}

TEST(ObjectTable, ReadsFeedReadMany) {
  // The rows are enough to read every dense object in one zt_file_read_many.
  TempDir dir;
  std::string path = write_mixed(dir);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK);
  zt_object_table *t = nullptr;
  ASSERT_EQ(zt_file_object_table(f, &t), ZT_OK);
  std::vector<zt_read_request> reqs;
  std::vector<std::vector<uint8_t>> bufs;
  for (size_t i = 0; i < t->count; ++i) {
    const zt_object_row &r = row_at(t, i);
    if (!r.dense) continue;
    bufs.emplace_back(r.data_decoded_length + 1);
    zt_read_request q{};
    q.object = r.object;
    q.component = r.data_component;
    q.dst = bufs.back().data();
    q.dst_capacity = r.data_decoded_length;
    reqs.push_back(q);
  }
  ASSERT_EQ(zt_file_read_many(f, reqs.data(), reqs.size()), ZT_OK);
  for (size_t i = 0, k = 0; i < t->count; ++i) {
    const zt_object_row &r = row_at(t, i);
    if (!r.dense) continue;
    const std::vector<uint8_t> &got = bufs[k++];
    if (std::string(t->names + r.name_offset, r.name_len) != "z") continue;
    float z[6];
    std::memcpy(z, got.data(), sizeof z);  // zstd, decoded
    EXPECT_EQ(z[5], 6.0f);
  }
  zt_free(t);
  EXPECT_EQ(zt_close(f), ZT_OK);
}

TEST(ObjectTable, RefusesMisuse) {
  zt_object_table *t = nullptr;
  EXPECT_NE(zt_file_object_table(nullptr, &t), ZT_OK);
  EXPECT_EQ(t, nullptr);
  TempDir dir;
  std::string path = write_mixed(dir);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK);
  EXPECT_EQ(zt_file_object_table(f, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_close(f), ZT_OK);
  EXPECT_EQ(zt_file_object_table(f, &t), ZT_E_MISUSE);  // closed handle
}

}  // namespace
