// Mapped files are private copy-on-write mappings: a caller that writes
// through a view or a DLPack tensor (torch's in-place ops do) must neither
// crash nor change the file, and other readers of the file must still see
// the stored bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor.h"
#include "ztensor_dlpack.h"

using zttest::TempDir;

namespace {

std::string write_fixture(const TempDir &dir) {
  std::string path = dir.file("cow.zt");
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK) << zt_last_error();
  std::vector<float> v(4096);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const uint64_t shape[] = {64, 64};
  EXPECT_EQ(zt_writer_add_dense(w, "w", 1, ZT_F32, shape, 2, v.data(), v.size() * 4, nullptr), ZT_OK)
      << zt_last_error();
  EXPECT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  return path;
}

const zt_object *object(const zt_file *f, const char *name) {
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_file_object_by_name(f, name, std::strlen(name), &o), ZT_OK) << zt_last_error();
  return o;
}

TEST(CopyOnWrite, WriteThroughViewDoesNotCrashOrReachTheFile) {
  TempDir dir;
  std::string path = write_fixture(dir);
  const std::string before = zttest::read_file(path);

  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  const void *view = nullptr;
  size_t len = 0;
  ASSERT_EQ(zt_component_view(object(f, "w"), 0, &view, &len), ZT_OK) << zt_last_error();
  ASSERT_EQ(len, 4096u * 4);
  // The contract says const; a caller that ignores it must not fault.
  float *p = static_cast<float *>(const_cast<void *>(view));
  for (size_t i = 0; i < 4096; ++i) p[i] += 1.0f;
  EXPECT_EQ(p[10], 11.0f);

  // A second open of the same file sees the stored bytes, not the write.
  zt_file *g = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &g), ZT_OK) << zt_last_error();
  std::vector<float> fresh(4096);
  ASSERT_EQ(zt_component_read(object(g, "w"), 0, fresh.data(), fresh.size() * 4, nullptr), ZT_OK);
  EXPECT_EQ(fresh[10], 10.0f);
  EXPECT_EQ(zt_close(g), ZT_OK);
  EXPECT_EQ(zt_close(f), ZT_OK);
  EXPECT_TRUE(zttest::read_file(path) == before) << "a write through a view reached the file";
}

TEST(CopyOnWrite, InPlaceOpOnDlpackTensorSurvivesClose) {
  TempDir dir;
  std::string path = write_fixture(dir);
  const std::string before = zttest::read_file(path);

  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  DLManagedTensor *t = nullptr;
  ASSERT_EQ(zt_object_to_dlpack(object(f, "w"), &t), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_close(f), ZT_OK);  // the tensor keeps the mapping alive
  float *p = static_cast<float *>(t->dl_tensor.data);
  for (size_t i = 0; i < 4096; ++i) p[i] *= 2.0f;  // what t.mul_(2) does
  EXPECT_EQ(p[3], 6.0f);
  t->deleter(t);
  EXPECT_TRUE(zttest::read_file(path) == before) << "a write through a DLPack tensor reached the file";
}

}  // namespace
