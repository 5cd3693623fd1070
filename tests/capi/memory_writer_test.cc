// Writers to memory and to a callback: for the same calls the bytes equal
// the file writer's; the memory result opens with zt_open_memory; a failing
// callback fails the writer with a clear error and never a success; misuse
// between the finish calls is refused without losing the writer.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor.h"
#include "ztensor_composite.h"

using zttest::TempDir;

namespace {

zt_writer_options options() {
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  wo.digest = ZT_DIGEST_SHA256;
  return wo;
}

// The same sequence of calls for every kind of writer: attributes, raw and
// zstd tensors, a streamed blob, a sparse object, an empty tensor, padding.
zt_status write_everything(zt_writer *w) {
  zt_status st;
#define STEP(call) \
  if ((st = (call)) != ZT_OK) return st;
  STEP(zt_writer_set_attributes_json(w, "{\"model\": \"demo\", \"n\": 3}"));
  std::vector<float> v(1 << 16);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 313) - 7.5f;
  const uint64_t shape[] = {256, 256};
  STEP(zt_writer_add_dense(w, "a_raw", 5, ZT_F32, shape, 2, v.data(), v.size() * 4, nullptr));
  zt_blob_options z;
  zt_blob_options_init(&z);
  z.encoding = ZT_ENCODING_ZSTD;
  z.digest = ZT_DIGEST_CRC32C;
  STEP(zt_writer_add_dense(w, "b_zstd", 6, ZT_F32, shape, 2, v.data(), v.size() * 4, &z));
  const uint64_t s3[] = {3};
  const uint8_t tiny[3] = {1, 2, 3};
  STEP(zt_writer_add_dense(w, "c_tiny", 6, ZT_U8, s3, 1, tiny, 3, nullptr));
  STEP(zt_writer_begin_object(w, "d_stream", 8, nullptr, shape, 2));
  STEP(zt_write_blob_begin(w, "d_stream", 8, "data", ZT_F32, &z));
  for (size_t off = 0; off < v.size(); off += 1000)
    STEP(zt_write_blob_append(w, v.data() + off, std::min<size_t>(1000, v.size() - off) * 4));
  STEP(zt_write_blob_end(w));
  const float values[] = {1.f, 2.f, 3.f};
  const uint64_t indices[] = {0, 5, 2}, indptr[] = {0, 2, 2, 3};
  STEP(zt_writer_add_csr(w, "e_csr", 5, 3, 8, ZT_F32, values, 3, indices, indptr, nullptr));
  const uint64_t zero[] = {0, 4};
  STEP(zt_writer_add_dense(w, "f_empty", 7, ZT_F64, zero, 2, nullptr, 0, nullptr));
#undef STEP
  return ZT_OK;
}

std::string file_bytes(const TempDir &dir) {
  const std::string path = dir.file("ref.zt");
  zt_writer_options wo = options();
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(path.c_str(), &wo, &w), ZT_OK);
  EXPECT_EQ(write_everything(w), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  return zttest::read_file(path);
}

struct Collected {
  std::string bytes;
  size_t calls = 0;
  size_t fail_after = SIZE_MAX;  // fail the call that would pass this many bytes
};

int collect(void *user, const void *data, size_t len) {
  auto *c = static_cast<Collected *>(user);
  if (c->bytes.size() + len > c->fail_after) return -5;
  c->bytes.append(static_cast<const char *>(data), len);
  ++c->calls;
  return 0;
}

TEST(MemoryWriter, SameBytesAsTheFileWriterAndOpensFromMemory) {
  TempDir dir;
  const std::string ref = file_bytes(dir);
  zt_writer_options wo = options();
  zt_writer *w = nullptr;
  ASSERT_EQ(zt_writer_create_memory(&wo, &w), ZT_OK) << zt_last_error();
  ASSERT_EQ(write_everything(w), ZT_OK) << zt_last_error();
  uint8_t *bytes = nullptr;
  size_t len = 0;
  ASSERT_EQ(zt_writer_finish_memory(w, &bytes, &len), ZT_OK) << zt_last_error();
  ASSERT_NE(bytes, nullptr);
  EXPECT_EQ(std::string(reinterpret_cast<char *>(bytes), len), ref);

  zt_file *f = nullptr;
  ASSERT_EQ(zt_open_memory(bytes, len, nullptr, &f), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_file_verify(f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  const zt_object *o = nullptr;
  ASSERT_EQ(zt_file_object_by_name(f, "d_stream", 8, &o), ZT_OK);
  std::vector<float> got(1 << 16);
  ASSERT_EQ(zt_component_read(o, 0, got.data(), got.size() * 4, nullptr), ZT_OK);
  EXPECT_EQ(got[400], static_cast<float>(400 % 313) - 7.5f);
  zt_close(f);
  zt_free(bytes);
}

TEST(CallbackWriter, SameBytesAsTheFileWriterInFewPieces) {
  TempDir dir;
  const std::string ref = file_bytes(dir);
  Collected c;
  zt_writer_options wo = options();
  zt_writer *w = nullptr;
  ASSERT_EQ(zt_writer_create_callbacks(collect, &c, &wo, &w), ZT_OK) << zt_last_error();
  ASSERT_EQ(write_everything(w), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_writer_finish(w), ZT_OK) << zt_last_error();
  EXPECT_EQ(c.bytes, ref);
  EXPECT_LT(c.calls, 20u) << "small writes are gathered";
}

TEST(CallbackWriter, FailingCallbackFailsTheWriterNeverASuccess) {
  TempDir dir;
  const size_t total = file_bytes(dir).size();
  // Fail early (in a blob), late (in the manifest) and at the very end.
  for (size_t fail_after : {size_t{100}, total / 2, total - 1}) {
    SCOPED_TRACE(fail_after);
    Collected c;
    c.fail_after = fail_after;
    zt_writer_options wo = options();
    zt_writer *w = nullptr;
    ASSERT_EQ(zt_writer_create_callbacks(collect, &c, &wo, &w), ZT_OK);
    zt_status st = write_everything(w);
    if (st == ZT_OK) {
      st = zt_writer_finish(w);  // frees the writer whatever the outcome
    } else {
      EXPECT_NE(std::string(zt_last_error()).find("callback returned -5"), std::string::npos) << zt_last_error();
      // The writer is failed: only discard is left.
      EXPECT_EQ(zt_writer_finish(w), ZT_E_MISUSE);
    }
    EXPECT_EQ(st, ZT_E_IO);
    EXPECT_LE(c.bytes.size(), fail_after);
    EXPECT_LT(c.bytes.size(), total);
  }
  EXPECT_EQ(zt_writer_create_callbacks(nullptr, nullptr, nullptr, nullptr), ZT_E_INVALID_ARG);
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create_callbacks(nullptr, nullptr, nullptr, &w), ZT_E_INVALID_ARG);
  EXPECT_EQ(w, nullptr);
}

TEST(MemoryWriter, FinishCallsAreNotInterchangeable) {
  zt_writer *w = nullptr;
  ASSERT_EQ(zt_writer_create_memory(nullptr, &w), ZT_OK);
  const uint64_t s1[] = {1};
  const float x = 2.f;
  ASSERT_EQ(zt_writer_add_dense(w, "x", 1, ZT_F32, s1, 1, &x, 4, nullptr), ZT_OK);
  // zt_writer_finish would free the bytes with the writer: refused, and the
  // writer is still there.
  EXPECT_EQ(zt_writer_finish(w), ZT_E_MISUSE);
  EXPECT_NE(std::string(zt_last_error()).find("zt_writer_finish_memory"), std::string::npos);
  uint8_t *bytes = nullptr;
  size_t len = 0;
  EXPECT_EQ(zt_writer_finish_memory(w, nullptr, &len), ZT_E_INVALID_ARG);
  ASSERT_EQ(zt_writer_finish_memory(w, &bytes, &len), ZT_OK) << zt_last_error();
  EXPECT_GT(len, 64u);
  zt_free(bytes);
  EXPECT_EQ(zt_writer_finish_memory(w, &bytes, &len), ZT_E_MISUSE);  // freed
  EXPECT_EQ(bytes, nullptr);

  TempDir dir;
  zt_writer *fw = nullptr;
  zt_writer_options wo = options();
  ASSERT_EQ(zt_writer_create(dir.file("f.zt").c_str(), &wo, &fw), ZT_OK);
  EXPECT_EQ(zt_writer_finish_memory(fw, &bytes, &len), ZT_E_MISUSE);
  EXPECT_EQ(zt_writer_finish(fw), ZT_OK) << zt_last_error();
}

TEST(MemoryWriter, DiscardAndFailedFinishFreeEverything) {
  // Under the sanitizers' leak checker these would report the buffer.
  zt_writer *w = nullptr;
  ASSERT_EQ(zt_writer_create_memory(nullptr, &w), ZT_OK);
  std::vector<uint8_t> big(size_t{8} << 20, 7);
  const uint64_t s[] = {big.size()};
  ASSERT_EQ(zt_writer_add_dense(w, "big", 3, ZT_U8, s, 1, big.data(), big.size(), nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_discard(w), ZT_OK);

  ASSERT_EQ(zt_writer_create_memory(nullptr, &w), ZT_OK);
  const uint64_t s2[] = {2, 2};
  // A dense object without its data component: finish refuses the file.
  ASSERT_EQ(zt_writer_begin_object(w, "hollow", 6, nullptr, s2, 2), ZT_OK);
  uint8_t *bytes = reinterpret_cast<uint8_t *>(1);
  size_t len = 9;
  EXPECT_EQ(zt_writer_finish_memory(w, &bytes, &len), ZT_E_COMPONENT_MISSING);
  EXPECT_EQ(bytes, nullptr);
  EXPECT_EQ(len, 0u);
}

}  // namespace
