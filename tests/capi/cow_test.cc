// Mapped files are private copy-on-write mappings: a caller that writes
// through a view or a DLPack tensor (torch's in-place ops do) must neither
// crash nor change the file, and other readers of the file must still see
// the stored bytes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cbor_writer.h"
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

// A private writable mapping is charged against the commit limit unless it
// reserves nothing: without MAP_NORESERVE a file larger than RAM + swap
// would not open at all (the kernel's default heuristic refuses it). A
// sparse 1 TiB file: a header, one u8 tensor that is a hole, the manifest.
TEST(CopyOnWrite, AFileLargerThanMemoryStillOpens) {
  TempDir dir;
  const std::string path = dir.file("huge.zt");
  const uint64_t n = uint64_t{1} << 40;
  zttest::Cbor c;
  c.map(2).text("version").text("1.2.0").text("objects").map(1);
  c.text("h").map(3).text("shape").shape({n}).text("format").text("dense").text("components").map(1);
  c.text("data").map(3).text("dtype").text("u8").text("offset").uint(64).text("length").uint(n);
  std::string tail = c.bytes;
  zttest::put_le64(tail, c.bytes.size());
  tail += "ZTEN1000";
  {
    FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite("ZTEN1000", 1, 8, f), 8u);
    ASSERT_EQ(std::fseek(f, static_cast<long>(64 + n), SEEK_SET), 0) << "no sparse files here";
    ASSERT_EQ(std::fwrite(tail.data(), 1, tail.size(), f), tail.size());
    ASSERT_EQ(std::fclose(f), 0);
  }
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  const void *view = nullptr;
  size_t len = 0;
  ASSERT_EQ(zt_component_view(object(f, "h"), 0, &view, &len), ZT_OK) << zt_last_error();
  EXPECT_EQ(len, n);
  EXPECT_EQ(static_cast<const uint8_t *>(view)[n / 2], 0);  // a hole reads as zeros
  EXPECT_EQ(zt_close(f), ZT_OK);
}

}  // namespace
