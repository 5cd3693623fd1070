// ABI misuse: NULL arguments, closed and foreign handles, a second close, a
// writer used after finish or discard. Each is a status, never a crash (the
// suite also runs under ASan, which turns a use-after-free into a failure).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "test_util.h"
#include "ztensor.h"

namespace {

// A small valid file on disk.
std::string make_file(const zttest::TempDir &dir) {
  const std::string path = dir.file("m.zt");
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK);
  float v[4] = {1, 2, 3, 4};
  uint64_t shape[] = {4};
  EXPECT_EQ(zt_writer_add_dense(w, "a", 1, ZT_F32, shape, 1, v, sizeof v, nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_finish(w), ZT_OK);
  return path;
}

TEST(Misuse, NullArgumentsAreInvalidArg) {
  zttest::TempDir dir;
  const std::string path = make_file(dir);
  zt_file *f = reinterpret_cast<zt_file *>(0x1);  // must be reset to NULL
  EXPECT_EQ(zt_open(nullptr, nullptr, &f), ZT_E_INVALID_ARG);
  EXPECT_EQ(f, nullptr);
  EXPECT_EQ(zt_open(path.c_str(), nullptr, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_open_memory(nullptr, 10, nullptr, &f), ZT_E_INVALID_ARG);
  EXPECT_STRNE(zt_last_error(), "");

  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK);
  size_t n = 0;
  EXPECT_EQ(zt_file_object_count(nullptr, &n), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_file_object_count(f, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_file_version(f, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_file_object_at(f, 0, nullptr), ZT_E_INVALID_ARG);
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_file_object_by_name(f, nullptr, 3, &o), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_file_object_at(f, 99, &o), ZT_E_NOT_FOUND);
  ASSERT_EQ(zt_file_object_at(f, 0, &o), ZT_OK);
  EXPECT_EQ(zt_object_get_info(nullptr, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_object_get_info(o, nullptr), ZT_E_INVALID_ARG);
  zt_object_info info;
  std::memset(&info, 0, sizeof info);  // struct_size 0: not set by the caller
  EXPECT_EQ(zt_object_get_info(o, &info), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_object_component(o, 0, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_object_numel(o, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_component_read(nullptr, 0, nullptr, 0, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_component_read(o, 0, nullptr, 16, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_component_read(o, 7, nullptr, 0, nullptr), ZT_E_NOT_FOUND);
  EXPECT_EQ(zt_component_view(o, 0, nullptr, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_component_verify(nullptr, 0, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_object_verify(nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_file_verify(nullptr, 0, nullptr, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_file_to_json(f, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_close(f), ZT_OK);

  EXPECT_EQ(zt_close(nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_discard(nullptr), ZT_OK);
  zt_free(nullptr);
  zt_open_options_init(nullptr);
  zt_writer_options_init(nullptr);
  EXPECT_NE(zt_status_str(static_cast<zt_status>(12345)), nullptr);
  EXPECT_NE(zt_last_error(), nullptr);
  EXPECT_EQ(zt_dtype_name(static_cast<zt_dtype>(999)), nullptr);
  EXPECT_EQ(zt_dtype_from_name(nullptr), ZT_DTYPE_UNKNOWN);
}

TEST(Misuse, ClosedFileAndItsObjectsAreMisuse) {
  zttest::TempDir dir;
  const std::string path = make_file(dir);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK);
  const zt_object *o = nullptr;
  ASSERT_EQ(zt_file_object_at(f, 0, &o), ZT_OK);
  ASSERT_EQ(zt_close(f), ZT_OK);
  size_t n = 0;
  EXPECT_EQ(zt_file_object_count(f, &n), ZT_E_MISUSE);
  EXPECT_EQ(zt_file_verify(f, 0, nullptr, nullptr), ZT_E_MISUSE);
  EXPECT_EQ(zt_close(f), ZT_E_MISUSE);  // a second close
  // The object died with its file: detected without reading freed memory.
  zt_object_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(zt_object_get_info(o, &info), ZT_E_MISUSE);
  EXPECT_EQ(zt_component_read(o, 0, nullptr, 0, nullptr), ZT_E_MISUSE);
  EXPECT_EQ(zt_object_verify(o), ZT_E_MISUSE);
}

TEST(Misuse, ForeignPointersAreMisuse) {
  alignas(64) unsigned char junk[256];
  std::memset(junk, 0x5a, sizeof junk);
  size_t n = 0;
  EXPECT_EQ(zt_file_object_count(reinterpret_cast<zt_file *>(junk), &n), ZT_E_MISUSE);
  EXPECT_EQ(zt_close(reinterpret_cast<zt_file *>(junk)), ZT_E_MISUSE);
  zt_object_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(zt_object_get_info(reinterpret_cast<const zt_object *>(junk), &info), ZT_E_MISUSE);
  EXPECT_EQ(zt_writer_finish(reinterpret_cast<zt_writer *>(junk)), ZT_E_MISUSE);
  EXPECT_EQ(zt_writer_discard(reinterpret_cast<zt_writer *>(junk)), ZT_E_MISUSE);
  // A pointer inside a live file's object array but not at an element.
  zttest::TempDir dir;
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(make_file(dir).c_str(), nullptr, &f), ZT_OK);
  const zt_object *o = nullptr;
  ASSERT_EQ(zt_file_object_at(f, 0, &o), ZT_OK);
  EXPECT_EQ(zt_object_get_info(reinterpret_cast<const zt_object *>(reinterpret_cast<const char *>(o) + 1), &info),
            ZT_E_MISUSE);
  EXPECT_EQ(zt_object_get_info(o, &info), ZT_OK);
  zt_close(f);
}

TEST(Misuse, WriterAfterFinishOrDiscardIsMisuse) {
  zttest::TempDir dir;
  for (bool finish : {true, false}) {
    const std::string path = dir.file(finish ? "f.zt" : "d.zt");
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    wo.sync = 0;
    zt_writer *w = nullptr;
    ASSERT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK);
    float v[2] = {1, 2};
    uint64_t shape[] = {2};
    ASSERT_EQ(zt_writer_add_dense(w, "x", 1, ZT_F32, shape, 1, v, sizeof v, nullptr), ZT_OK);
    ASSERT_EQ(finish ? zt_writer_finish(w) : zt_writer_discard(w), ZT_OK);
    EXPECT_EQ(zt_writer_add_dense(w, "y", 1, ZT_F32, shape, 1, v, sizeof v, nullptr), ZT_E_MISUSE);
    EXPECT_EQ(zt_write_blob_begin(w, "x", 1, "extra", ZT_F32, nullptr), ZT_E_MISUSE);
    EXPECT_EQ(zt_write_blob_append(w, v, sizeof v), ZT_E_MISUSE);
    EXPECT_EQ(zt_writer_set_attributes_json(w, "{}"), ZT_E_MISUSE);
    EXPECT_EQ(zt_writer_finish(w), ZT_E_MISUSE);
    EXPECT_EQ(zt_writer_discard(w), ZT_E_MISUSE);
    EXPECT_EQ(access(path.c_str(), F_OK) == 0, finish);
  }
}

TEST(Misuse, WriterArgumentsAndOrder) {
  zttest::TempDir dir;
  const std::string path = dir.file("w.zt");
  zt_writer *w = reinterpret_cast<zt_writer *>(0x1);
  EXPECT_EQ(zt_writer_create(nullptr, nullptr, &w), ZT_E_INVALID_ARG);
  EXPECT_EQ(w, nullptr);
  EXPECT_EQ(zt_writer_create(path.c_str(), nullptr, nullptr), ZT_E_INVALID_ARG);
  zt_writer_options wo;
  std::memset(&wo, 0, sizeof wo);  // struct_size not set
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_E_INVALID_ARG);
  zt_writer_options_init(&wo);
  wo.sync = 0;
  ASSERT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK);
  float v[2] = {1, 2};
  uint64_t shape[] = {2};
  EXPECT_EQ(zt_writer_add_dense(nullptr, "x", 1, ZT_F32, shape, 1, v, sizeof v, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_writer_add_dense(w, nullptr, 1, ZT_F32, shape, 1, v, sizeof v, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_writer_add_dense(w, "x", 1, ZT_F32, nullptr, 1, v, sizeof v, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_write_blob(w, "x", 1, nullptr, ZT_F32, v, sizeof v, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_writer_set_attributes_json(w, nullptr), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_writer_set_attributes_cbor(w, nullptr, 4), ZT_E_INVALID_ARG);
  // Appending with no blob open is a misuse of the streaming protocol.
  zt_status st = zt_write_blob_append(w, v, sizeof v);
  EXPECT_TRUE(st == ZT_E_MISUSE || st == ZT_E_INVALID_ARG) << zt_status_str(st);
  EXPECT_EQ(zt_write_blob_end(w), st);
  // The writer is still usable after refused calls.
  ASSERT_EQ(zt_writer_add_dense(w, "x", 1, ZT_F32, shape, 1, v, sizeof v, nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_add_dense(w, "x", 1, ZT_F32, shape, 1, v, sizeof v, nullptr), ZT_E_EXISTS);
  ASSERT_EQ(zt_writer_finish(w), ZT_OK);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK);
  EXPECT_EQ(zt_file_verify(f, 1, nullptr, nullptr), ZT_OK);
  zt_close(f);
}

}  // namespace
