// Names hold NULs: a 1.x object name, a component role and a format are any
// UTF-8 text, so "a\0b" is a name of its own, not "a". Every string the C
// ABI returns for them comes with its length, and every lookup by them has
// a length-aware form, so that a C caller can tell "a\0b" from "a" (1.3.0).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "cbor_writer.h"
#include "test_util.h"
#include "ztensor.h"
#include "ztensor.hpp"
#include "ztensor_set.h"

using zttest::Cbor;

namespace {

const std::string kNulName("a\0b", 3);
const std::string kNulRole("r\0s", 3);
const std::string kNulFormat("dense\0x", 7);

std::string f32(float v) {
  return zttest::le_bytes(std::vector<float>{v});
}

// One component: dtype f32, raw, at `offset`; a wrong sha256 when damaged.
void component(Cbor &c, const std::string &role, uint64_t offset, bool damaged = false) {
  c.text(role).map(damaged ? 4 : 3).text("dtype").text("f32").text("offset").uint(offset).text("length").uint(4);
  if (damaged) c.text("digest").text("sha256:" + std::string(64, '0'));
}

// A hand-built 1.2 file (the writer takes roles and formats as C strings, so
// it cannot make these): objects "a" (1.0) and "a\0b" (2.0, its digest
// wrong), "mine" of a custom format with roles "r" (3.0) and "r\0s" (4.0),
// and "d" whose format is "dense\0x".
std::string nul_file() {
  std::vector<std::string> blobs = {f32(1.0f), f32(2.0f), f32(3.0f), f32(4.0f), f32(5.0f)};
  auto offs = zttest::layout_offsets(blobs);
  Cbor c;
  c.map(2).text("version").text("1.2.0").text("objects").map(4);
  c.text("a").map(3).text("shape").shape({1}).text("format").text("dense").text("components").map(1);
  component(c, "data", offs[0]);
  c.text(kNulName).map(3).text("shape").shape({1}).text("format").text("dense").text("components").map(1);
  component(c, "data", offs[1], true);
  c.text("mine").map(3).text("shape").shape({1}).text("format").text("mine").text("components").map(2);
  component(c, "r", offs[2]);
  component(c, kNulRole, offs[3]);
  c.text("d").map(3).text("shape").shape({1}).text("format").text(kNulFormat).text("components").map(1);
  component(c, "data", offs[4]);
  return zttest::build_v1_file(blobs, c.bytes);
}

struct Opened {
  std::string bytes = nul_file();
  zt_file *f = nullptr;
  Opened() { EXPECT_EQ(zt_open_memory(bytes.data(), bytes.size(), nullptr, &f), ZT_OK) << zt_last_error(); }
  ~Opened() { zt_close(f); }
  const zt_object *object(const std::string &name) const {
    const zt_object *o = nullptr;
    EXPECT_EQ(zt_file_object_by_name(f, name.data(), name.size(), &o), ZT_OK) << zt_last_error();
    return o;
  }
};

zt_object_info info_of(const zt_object *o) {
  zt_object_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(zt_object_get_info(o, &info), ZT_OK) << zt_last_error();
  return info;
}

zt_component_info component_of(const zt_object *o, size_t i) {
  zt_component_info ci{};
  ci.struct_size = sizeof ci;
  EXPECT_EQ(zt_object_component(o, i, &ci), ZT_OK) << zt_last_error();
  return ci;
}

float value_of(const zt_object *o, size_t component = 0) {
  float v = 0;
  size_t got = 0;
  EXPECT_EQ(zt_component_read(o, component, &v, sizeof v, &got), ZT_OK) << zt_last_error();
  return v;
}

}  // namespace

TEST(NulNames, ObjectLookupByLengthFindsTheRightOne) {
  Opened f;
  ASSERT_NE(f.f, nullptr);
  const zt_object *a = f.object("a");
  const zt_object *anb = f.object(kNulName);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(anb, nullptr);
  EXPECT_NE(a, anb);
  EXPECT_EQ(value_of(a), 1.0f);
  // The digest of "a\0b" is wrong: reading it unverified still gives its bytes.
  EXPECT_EQ(value_of(anb), 2.0f);
  const zt_object_info info = info_of(anb);
  ASSERT_EQ(info.name_len, 3u);
  EXPECT_EQ(std::string(info.name, info.name_len), kNulName);
  // Two bytes of "a\0b" are a name no object has.
  const zt_object *none = nullptr;
  EXPECT_EQ(zt_file_object_by_name(f.f, "a\0", 2, &none), ZT_E_NOT_FOUND);
}

TEST(NulNames, FormatHasItsLength) {
  Opened f;
  ASSERT_NE(f.f, nullptr);
  const zt_object_info d = info_of(f.object("d"));
  ASSERT_EQ(d.format_len, kNulFormat.size());
  EXPECT_EQ(std::string(d.format, d.format_len), kNulFormat);
  EXPECT_EQ(info_of(f.object("a")).format_len, 5u);  // "dense"
}

TEST(NulNames, RolesHaveTheirLengthAndLookupByLength) {
  Opened f;
  ASSERT_NE(f.f, nullptr);
  const zt_object *mine = f.object("mine");
  const zt_component_info r = component_of(mine, 0);
  const zt_component_info rs = component_of(mine, 1);
  EXPECT_EQ(r.role_len, 1u);
  ASSERT_EQ(rs.role_len, 3u);
  EXPECT_EQ(std::string(rs.role, rs.role_len), kNulRole);
  EXPECT_EQ(rs.dtype_name_len, 3u);     // "f32"
  EXPECT_EQ(rs.encoding_name_len, 3u);  // "raw"
  EXPECT_EQ(rs.logical_type_len, 0u);

  size_t i = 99;
  ASSERT_EQ(zt_object_component_index_n(mine, kNulRole.data(), kNulRole.size(), &i), ZT_OK) << zt_last_error();
  EXPECT_EQ(i, 1u);
  EXPECT_EQ(value_of(mine, i), 4.0f);
  ASSERT_EQ(zt_object_component_index_n(mine, "r", 1, &i), ZT_OK);
  EXPECT_EQ(i, 0u);
  EXPECT_EQ(zt_object_component_index_n(mine, "r\0", 2, &i), ZT_E_NOT_FOUND);
  EXPECT_EQ(zt_object_component_index_n(mine, nullptr, 0, &i), ZT_E_NOT_FOUND);  // the empty role
  EXPECT_EQ(zt_object_component_index_n(mine, nullptr, 1, &i), ZT_E_INVALID_ARG);
  // The C-string lookup sees only "r".
  ASSERT_EQ(zt_object_component_index(mine, kNulRole.c_str(), &i), ZT_OK);
  EXPECT_EQ(i, 0u);
}

TEST(NulNames, OlderStructsAreNotWrittenPastTheirSize) {
  // A program built against 1.2 passes the 1.2 sizes: the 1.3 fields, past
  // its struct, are left alone.
  Opened f;
  ASSERT_NE(f.f, nullptr);
  zt_object_info info;
  std::memset(&info, 0xab, sizeof info);
  info.struct_size = offsetof(zt_object_info, format_len);
  ASSERT_EQ(zt_object_get_info(f.object("d"), &info), ZT_OK);
  size_t untouched;
  std::memset(&untouched, 0xab, sizeof untouched);
  EXPECT_EQ(info.format_len, untouched);
  zt_component_info ci;
  std::memset(&ci, 0xab, sizeof ci);
  ci.struct_size = offsetof(zt_component_info, role_len);
  ASSERT_EQ(zt_object_component(f.object("mine"), 1, &ci), ZT_OK);
  EXPECT_EQ(ci.role_len, untouched);
  EXPECT_EQ(ci.encoding_name_len, untouched);
}

namespace {
struct Failure {
  std::string object, role;
  zt_status status;
};
void collect(void *user, const char *object, size_t object_len, const char *role, size_t role_len, zt_status status,
             const char *) {
  static_cast<std::vector<Failure> *>(user)->push_back(
      {std::string(object, object_len), std::string(role, role_len), status});
}
}  // namespace

TEST(NulNames, VerifyReportsNamesWithTheirLength) {
  Opened f;
  ASSERT_NE(f.f, nullptr);
  std::vector<Failure> failures;
  EXPECT_EQ(zt_file_verify_n(f.f, 0, collect, &failures), ZT_E_DIGEST_MISMATCH);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].object, kNulName);  // not "a", the valid object's name
  EXPECT_EQ(failures[0].role, "data");
  EXPECT_EQ(failures[0].status, ZT_E_DIGEST_MISMATCH);
  EXPECT_EQ(zt_file_verify_n(f.f, 0, nullptr, nullptr), ZT_E_DIGEST_MISMATCH);
}

TEST(NulNames, SetLookupByLength) {
  zttest::TempDir dir;
  {
    std::ofstream(dir.file("s.zt"), std::ios::binary) << nul_file();
    std::ofstream(dir.file("index.json")) << R"({"weight_map": {"a": "s.zt", "a\u0000b": "s.zt", "mine": "s.zt",)"
                                             R"( "d": "s.zt"}})";
  }
  zt_set *s = nullptr;
  ASSERT_EQ(zt_open_set(dir.file("index.json").c_str(), nullptr, &s), ZT_OK) << zt_last_error();
  const zt_object *a = nullptr, *anb = nullptr;
  ASSERT_EQ(zt_set_object_by_name(s, "a", 1, &a), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_set_object_by_name(s, kNulName.data(), kNulName.size(), &anb), ZT_OK) << zt_last_error();
  EXPECT_NE(a, anb);
  EXPECT_EQ(value_of(anb), 2.0f);
  EXPECT_EQ(info_of(anb).name_len, 3u);
  zt_set_close(s);
}

TEST(NulNames, CppWrapperKeepsWholeNames) {
  const std::string bytes = nul_file();
  ztensor::File f = ztensor::File::from_memory(bytes.data(), bytes.size());
  const ztensor::Object anb = f.get(kNulName);
  EXPECT_EQ(anb.name(), kNulName);
  EXPECT_EQ(f.get("a").name(), "a");
  EXPECT_EQ(f.get("d").format(), kNulFormat);
  EXPECT_NE(f.get("d").format(), "dense");
  const ztensor::Object mine = f.get("mine");
  EXPECT_EQ(mine.component(1).role, kNulRole);
  EXPECT_EQ(mine.component_index(kNulRole), 1u);
  EXPECT_EQ(mine.component_index("r"), 0u);
  EXPECT_FALSE(mine.has_component(std::string("r\0", 2)));
  EXPECT_EQ(mine.read_as<float>(kNulRole), std::vector<float>{4.0f});
  const auto failures = f.verify_all();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].object, kNulName);
  EXPECT_EQ(failures[0].role, "data");
}

TEST(NulNames, CppWriterRefusesRolesItWouldCut) {
  // zt_write_blob takes the role as a C string: "r\0s" would be written as "r".
  ztensor::Writer w = ztensor::Writer::memory();
  w.begin_object("o", "mine", {1});
  const float one = 1.0f;
  try {
    w.write_blob("o", kNulRole, ZT_F32, &one, sizeof one);
    FAIL() << "a role holding a NUL was written";
  } catch (const ztensor::Error &e) {
    EXPECT_EQ(e.status(), ZT_E_INVALID_ARG);
  }
  EXPECT_THROW(w.begin_object("p", kNulFormat, {1}), ztensor::Error);
}
