// Manifests as other writers may legitimately produce them: optional fields
// given as explicit nulls, any key order (version after objects), unsorted
// object names, indefinite-length maps and strings, integers in wider
// encodings than needed. Built from the spec text, not from our writer, so
// each form is read the way the spec defines it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cbor_writer.h"
#include "ztensor.h"

using zttest::Cbor;

namespace {

std::string bytes_of(size_t n, unsigned seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 17) & 0xff);
  return s;
}

struct Opened {
  zt_file *f = nullptr;
  explicit Opened(const std::string &file) {
    EXPECT_EQ(zt_open_memory(file.data(), file.size(), nullptr, &f), ZT_OK) << zt_last_error();
  }
  ~Opened() { zt_close(f); }
};

std::string read(const zt_file *f, const char *name) {
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_file_object_by_name(f, name, std::strlen(name), &o), ZT_OK) << name << ": " << zt_last_error();
  if (!o) return {};
  zt_component_info ci{};
  ci.struct_size = sizeof ci;
  EXPECT_EQ(zt_object_component(o, 0, &ci), ZT_OK) << zt_last_error();
  EXPECT_EQ(ci.status, ZT_OK) << name;
  std::string out(ci.decoded_length, '\0');
  size_t got = 0;
  EXPECT_EQ(zt_component_read(o, 0, out.data(), out.size(), &got), ZT_OK) << name << ": " << zt_last_error();
  out.resize(got);
  return out;
}

// Every optional component field present as null, before and after the
// required ones: null means absent (spec 1.2 §manifest), and the fields that
// follow a null are still read.
TEST(ForeignForms, NullOptionalFieldsAnywhere) {
  std::vector<std::string> blobs = {bytes_of(16, 1), bytes_of(16, 2)};
  auto offs = zttest::layout_offsets(blobs);
  Cbor c;
  c.map(3).text("version").text("1.2.0").text("attributes").null().text("objects").map(2);
  c.text("a").map(4).text("shape").shape({4}).text("format").text("dense").text("attributes").null();
  c.text("components").map(1).text("data").map(7);
  c.text("type").null().text("digest").null().text("uncompressed_length").null();
  c.text("dtype").text("f32").text("encoding").text("raw").text("offset").uint(offs[0]).text("length").uint(16);
  c.text("b").map(3).text("shape").shape({16}).text("format").text("dense");
  c.text("components").map(1).text("data").map(6);
  c.text("dtype").text("u8").text("digest").null().text("offset").uint(offs[1]).text("type").null();
  c.text("length").uint(16).text("uncompressed_length").null();
  Opened f(zttest::build_v1_file(blobs, c.bytes));
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(read(f.f, "a"), blobs[0]);
  EXPECT_EQ(read(f.f, "b"), blobs[1]);
  EXPECT_EQ(zt_file_verify(f.f, 0, nullptr, nullptr), ZT_OK) << zt_last_error();
}

// Version last, objects unsorted and in indefinite-length maps, a name as an
// indefinite-length string, integers in 8-byte form.
TEST(ForeignForms, AnyKeyOrderIndefiniteLengthsWideIntegers) {
  std::vector<std::string> blobs = {bytes_of(8, 3), bytes_of(12, 4), bytes_of(4, 5)};
  auto offs = zttest::layout_offsets(blobs);
  auto wide = [](uint64_t v) {
    std::string s("\x1b", 1);
    for (int i = 7; i >= 0; --i) s += static_cast<char>((v >> (8 * i)) & 0xff);
    return s;
  };
  Cbor c;
  c.indef_map().text("objects").indef_map();
  c.text("zeta").indef_map().text("components").map(1).text("data").indef_map();
  c.text("length").raw(wide(8)).text("offset").raw(wide(offs[0])).text("dtype").text("u8").brk();
  c.text("format").text("dense").text("shape").array(1).raw(wide(8)).brk();
  c.raw(
      "\x7f\x62"
      "al\x63pha\xff");  // "alpha" in two chunks
  c.map(3).text("format").text("dense").text("shape").shape({3});
  c.text("components").map(1).text("data").map(3).text("offset").uint(offs[1]).text("dtype").text("i32");
  c.text("length").uint(12);
  c.text("mid").map(3).text("components").map(1).text("data").map(3).text("dtype").text("f32");
  c.text("offset").uint(offs[2]).text("length").uint(4).text("shape").array(0).text("format").text("dense");
  c.brk();
  c.text("version").text("1.2.0").brk();
  Opened f(zttest::build_v1_file(blobs, c.bytes));
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(read(f.f, "zeta"), blobs[0]);
  EXPECT_EQ(read(f.f, "alpha"), blobs[1]);
  EXPECT_EQ(read(f.f, "mid"), blobs[2]);
  // Enumeration keeps the file's order; lookups by name work regardless.
  const zt_object *o = nullptr;
  zt_object_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(zt_file_object_at(f.f, 1, &o), ZT_OK);
  ASSERT_EQ(zt_object_get_info(o, &info), ZT_OK);
  EXPECT_EQ(std::string(info.name, info.name_len), "alpha");
}

}  // namespace
