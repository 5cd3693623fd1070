// zt_writer_copy_object and zt_writer_copy_file_fields, through the public
// header only: what a copy keeps, and what it refuses.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cbor_writer.h"
#include "test_util.h"
#include "ztensor.h"

namespace {

using zttest::TempDir;

struct Files {
  std::string a, b;
};

// a: "w" (f32, zstd, crc32c, object attributes) + "f8" (u8 as f8_e4m3fn,
// sha256); file attributes {"k": 1, "s": "x"}.  b: "v" (i16 raw), {"s": "x", "t": 2}.
Files make_files(const TempDir &dir) {
  Files f{dir.path() + "/a.zt", dir.path() + "/b.zt"};
  zt_writer *w = nullptr;
  EXPECT_EQ(zt_writer_create(f.a.c_str(), nullptr, &w), ZT_OK);
  EXPECT_EQ(zt_writer_set_attributes_json(w, "{\"k\": 1, \"s\": \"x\"}"), ZT_OK);
  float data[6] = {1, 2, 3, 4, 5, 6};
  uint64_t shape[2] = {2, 3};
  zt_blob_options bo;
  zt_blob_options_init(&bo);
  bo.encoding = ZT_ENCODING_ZSTD;
  bo.digest = ZT_DIGEST_CRC32C;
  EXPECT_EQ(zt_writer_begin_object(w, "w", 1, nullptr, shape, 2), ZT_OK);
  EXPECT_EQ(zt_writer_set_object_attributes_json(w, "w", 1, "{\"scale\": 0.5}"), ZT_OK);
  EXPECT_EQ(zt_write_blob(w, "w", 1, "data", ZT_F32, data, sizeof data, &bo), ZT_OK);
  zt_blob_options_init(&bo);
  bo.digest = ZT_DIGEST_SHA256;
  bo.logical_type = "f8_e4m3fn";
  uint8_t f8[4] = {1, 2, 3, 4};
  uint64_t n4 = 4;
  EXPECT_EQ(zt_writer_add_dense(w, "f8", 2, ZT_U8, &n4, 1, f8, sizeof f8, &bo), ZT_OK);
  EXPECT_EQ(zt_writer_finish(w), ZT_OK);

  EXPECT_EQ(zt_writer_create(f.b.c_str(), nullptr, &w), ZT_OK);
  EXPECT_EQ(zt_writer_set_attributes_json(w, "{\"s\": \"x\", \"t\": 2}"), ZT_OK);
  int16_t v[3] = {-1, 0, 1};
  uint64_t n3 = 3;
  EXPECT_EQ(zt_writer_add_dense(w, "v", 1, ZT_I16, &n3, 1, v, sizeof v, nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_finish(w), ZT_OK);
  return f;
}

zt_component_info component(const zt_file *f, const char *name) {
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_file_object_by_name(f, name, std::strlen(name), &o), ZT_OK);
  zt_component_info c{};
  c.struct_size = sizeof c;
  EXPECT_EQ(zt_object_component(o, 0, &c), ZT_OK);
  return c;
}

std::vector<uint8_t> bytes_of(const zt_file *f, const char *name) {
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_file_object_by_name(f, name, std::strlen(name), &o), ZT_OK);
  size_t n = 0;
  zt_component_read(o, 0, nullptr, 0, &n);
  std::vector<uint8_t> out(n);
  EXPECT_EQ(zt_component_read(o, 0, out.data(), out.size(), &n), ZT_OK);
  return out;
}

TEST(EditCapi, CopyKeepsStoredSemanticsAndMergesAttributes) {
  TempDir dir;
  Files f = make_files(dir);
  zt_file *a = nullptr, *b = nullptr;
  ASSERT_EQ(zt_open(f.a.c_str(), nullptr, &a), ZT_OK);
  ASSERT_EQ(zt_open(f.b.c_str(), nullptr, &b), ZT_OK);
  const std::string out = dir.path() + "/out.zt";
  zt_writer *w = nullptr;
  ASSERT_EQ(zt_writer_create(out.c_str(), nullptr, &w), ZT_OK);
  const zt_file *both[2] = {a, b};
  ASSERT_EQ(zt_writer_copy_file_fields(w, both, 2), ZT_OK);
  for (const char *name : {"w", "f8"}) {
    const zt_object *o = nullptr;
    ASSERT_EQ(zt_file_object_by_name(a, name, std::strlen(name), &o), ZT_OK);
    ASSERT_EQ(zt_writer_copy_object(w, o, nullptr, 0), ZT_OK) << zt_last_error();
  }
  const zt_object *v = nullptr;
  ASSERT_EQ(zt_file_object_by_name(b, "v", 1, &v), ZT_OK);
  ASSERT_EQ(zt_writer_copy_object(w, v, "renamed", 7), ZT_OK);
  EXPECT_EQ(zt_writer_copy_object(w, v, "w", 1), ZT_E_EXISTS);
  ASSERT_EQ(zt_writer_discard(w), ZT_OK);  // the failed copy poisons nothing on disk
  ASSERT_EQ(zt_writer_create(out.c_str(), nullptr, &w), ZT_OK);
  ASSERT_EQ(zt_writer_copy_file_fields(w, both, 2), ZT_OK);
  for (const char *name : {"w", "f8"}) {
    const zt_object *o = nullptr;
    ASSERT_EQ(zt_file_object_by_name(a, name, std::strlen(name), &o), ZT_OK);
    ASSERT_EQ(zt_writer_copy_object(w, o, nullptr, 0), ZT_OK);
  }
  ASSERT_EQ(zt_writer_copy_object(w, v, "renamed", 7), ZT_OK);
  ASSERT_EQ(zt_writer_finish(w), ZT_OK);

  zt_file *r = nullptr;
  ASSERT_EQ(zt_open(out.c_str(), nullptr, &r), ZT_OK);
  EXPECT_EQ(zt_file_verify(r, 1, nullptr, nullptr), ZT_OK);
  zt_component_info cw = component(r, "w");
  EXPECT_EQ(cw.encoding, ZT_ENCODING_ZSTD);
  EXPECT_EQ(cw.digest_alg, ZT_DIGEST_CRC32C);
  zt_component_info cf = component(r, "f8");
  EXPECT_STREQ(cf.logical_type, "f8_e4m3fn");
  EXPECT_EQ(cf.digest_alg, ZT_DIGEST_SHA256);
  EXPECT_EQ(bytes_of(r, "w"), bytes_of(a, "w"));
  EXPECT_EQ(bytes_of(r, "f8"), bytes_of(a, "f8"));
  EXPECT_EQ(bytes_of(r, "renamed"), bytes_of(b, "v"));
  const zt_object *ow = nullptr;
  ASSERT_EQ(zt_file_object_by_name(r, "w", 1, &ow), ZT_OK);
  char *oattrs = nullptr;
  ASSERT_EQ(zt_object_attributes_json(ow, &oattrs), ZT_OK);
  EXPECT_STREQ(oattrs, "{\"scale\":0.5}");
  zt_free(oattrs);
  char *attrs = nullptr;
  ASSERT_EQ(zt_file_attributes_json(r, &attrs), ZT_OK);
  EXPECT_STREQ(attrs, "{\"k\":1,\"s\":\"x\",\"t\":2}");
  zt_free(attrs);
  zt_close(r);
  zt_close(a);
  zt_close(b);
}

TEST(EditCapi, AttributeClashAndMisuse) {
  TempDir dir;
  Files f = make_files(dir);
  zt_writer *w = nullptr;
  ASSERT_EQ(zt_writer_create(f.b.c_str(), nullptr, &w), ZT_OK);
  ASSERT_EQ(zt_writer_set_attributes_json(w, "{\"k\": 2}"), ZT_OK);
  ASSERT_EQ(zt_writer_finish(w), ZT_OK);  // b now says k = 2, a says k = 1
  zt_file *a = nullptr, *b = nullptr;
  ASSERT_EQ(zt_open(f.a.c_str(), nullptr, &a), ZT_OK);
  ASSERT_EQ(zt_open(f.b.c_str(), nullptr, &b), ZT_OK);
  ASSERT_EQ(zt_writer_create((dir.path() + "/o.zt").c_str(), nullptr, &w), ZT_OK);
  const zt_file *both[2] = {a, b};
  EXPECT_EQ(zt_writer_copy_file_fields(w, both, 2), ZT_E_EXISTS);
  EXPECT_NE(std::string(zt_last_error()).find("'k'"), std::string::npos);
  EXPECT_EQ(zt_writer_copy_object(w, nullptr, nullptr, 0), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_writer_copy_file_fields(w, nullptr, 1), ZT_E_INVALID_ARG);
  zt_writer_discard(w);
  zt_close(a);
  zt_close(b);
}

}  // namespace

// JSON attributes that would encode a CBOR map with one key twice are
// refused, and the writer stays usable: a file it finishes always opens.
TEST(Attributes, JsonThatSpellsADuplicateCborKeyIsRefused) {
  TempDir tmp;
  const std::string path = tmp.file("dup.zt");
  zt_writer *w = nullptr;
  ASSERT_EQ(zt_writer_create(path.c_str(), nullptr, &w), ZT_OK);
  for (const char *json : {R"({"$map": [[1, 2], [1, 3]]})", R"({"a": {"$map": [["x", 1], ["x", 2]]}})",
                           R"({"$map": [[{"$bytes": "01"}, 1], [{"$bytes": "01"}, 2]]})"}) {
    SCOPED_TRACE(json);
    EXPECT_EQ(zt_writer_set_attributes_json(w, json), ZT_E_INVALID_ARG);
    EXPECT_NE(std::string(zt_last_error()).find("duplicate"), std::string::npos) << zt_last_error();
  }
  // A JSON key twice: one value would be silently lost.
  EXPECT_EQ(zt_writer_set_attributes_json(w, R"({"a": 1, "b": 2, "a": 3})"), ZT_E_INVALID_ARG);
  EXPECT_NE(std::string(zt_last_error()).find("\"a\" appears twice"), std::string::npos) << zt_last_error();
  const uint64_t shape[1] = {1};
  const float v = 1;
  ASSERT_EQ(zt_writer_add_dense(w, "v", 1, ZT_F32, shape, 1, &v, sizeof v, nullptr), ZT_OK);
  EXPECT_EQ(zt_writer_set_object_attributes_json(w, "v", 1, R"({"$map": [[-1, 0], [-1, 0]]})"), ZT_E_INVALID_ARG);
  ASSERT_EQ(zt_writer_set_attributes_json(w, R"({"$map": [[1, 2], [2, 3]]})"), ZT_OK);
  ASSERT_EQ(zt_writer_finish(w), ZT_OK);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_file_verify(f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  zt_close(f);
}

// Keys the reader calls equal are one key when attributes of several files
// are merged: an integer in two widths, a byte string definite and
// indefinite, a text key definite and indefinite. Equal values merge into one
// key, different values are refused; either way the result opens.
TEST(Attributes, MergeTreatsKeysTheReaderCallsEqualAsOne) {
  TempDir tmp;
  auto file_with = [&](const std::string &name, const std::string &attrs) {
    const std::string path = tmp.file(name);
    zt_writer *w = nullptr;
    EXPECT_EQ(zt_writer_create(path.c_str(), nullptr, &w), ZT_OK);
    EXPECT_EQ(zt_writer_set_attributes_cbor(w, reinterpret_cast<const uint8_t *>(attrs.data()), attrs.size()), ZT_OK)
        << zt_last_error();
    EXPECT_EQ(zt_writer_finish(w), ZT_OK);
    zt_file *f = nullptr;
    EXPECT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
    return f;
  };
  struct Case {
    const char *what;
    std::string a, b;  // two spellings of one key
  };
  // 1 as 0x01 and as 0x18 0x01; h'01' definite and indefinite; "k" likewise.
  const std::vector<Case> cases = {
      {"integer", "\x01", std::string("\x18\x01", 2)},
      {"negative integer", "\x20", std::string("\x38\x00", 2)},
      {"byte string", std::string("\x41\x01", 2), std::string("\x5f\x41\x01\xff", 4)},
      {"text", "\x61k", "\x7f\x61k\xff"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    for (bool same_value : {true, false}) {
      zt_file *fa = file_with("a.zt", "\xa1" + c.a + "\x02");
      zt_file *fb = file_with("b.zt", "\xa1" + c.b + (same_value ? "\x02" : "\x03"));
      // An unrelated key makes the attribute maps differ as bytes.
      zt_file *fc = file_with("c.zt", "\xa1\x61z\x04");
      const zt_file *files[3] = {fa, fb, fc};
      const std::string out = tmp.file("merged.zt");
      zt_writer *w = nullptr;
      ASSERT_EQ(zt_writer_create(out.c_str(), nullptr, &w), ZT_OK);
      zt_status st = zt_writer_copy_file_fields(w, files, 3);
      if (same_value) {
        EXPECT_EQ(st, ZT_OK) << zt_last_error();
        ASSERT_EQ(zt_writer_finish(w), ZT_OK);
        zt_file *m = nullptr;
        ASSERT_EQ(zt_open(out.c_str(), nullptr, &m), ZT_OK) << zt_last_error();
        zt_close(m);
      } else {
        EXPECT_EQ(st, ZT_E_EXISTS) << zt_last_error();
        zt_writer_discard(w);
      }
      zt_close(fa);
      zt_close(fb);
      zt_close(fc);
    }
  }
}
