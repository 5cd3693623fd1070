// Files the specs allow that other writers may produce, read field by field
// with the spec text in hand: optional fields given as null, the CBOR
// self-describe tag, spec 1.1 components compressed without a declared
// decoded size inside composite objects, quantization parameters written as
// floats, legacy 0.1 checksums in a representation of the writer's choosing,
// any key order, indefinite lengths and wide integer encodings.
// Each test names the spec rule it checks.
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cbor_writer.h"
#include "test_util.h"
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
  return zttest::le_bytes(v);
}

// A zstd frame without a content size, as the original writers emit.
std::string zstd_frame(const std::string &in) {
  ZSTD_CCtx *c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
  std::string out(ZSTD_compressBound(in.size()), '\0');
  size_t n = ZSTD_compress2(c, out.data(), out.size(), in.data(), in.size());
  ZSTD_freeCCtx(c);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
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
  // In stored order, to compare with the blobs the file was built from.
  zt_component_info ci{};
  ci.struct_size = sizeof ci;
  EXPECT_EQ(zt_object_component(o, i, &ci), ZT_OK);
  std::vector<uint8_t> le = zttest::host_to_le(out.data(), out.size(), zt_dtype_size(ci.dtype));
  return std::string(le.begin(), le.end());
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

// Spec 0.1 §5.1: a bool byte is true when non-zero, so 0x02 is valid there
// (strict verification refuses it only in 1.x files).
TEST(SpecForms, V0BoolAnyNonZeroIsTrue) {
  const std::string blob("\x00\x01\x02\xff", 4);
  Cbor c;
  c.array(1);
  v0_entry(c, "b", 64, 4, "bool", {4}, 0);
  Opened f(zttest::build_v0_file({blob}, c.bytes));
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(zt_object_verify(f.object("b")), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
}

// Every optional component field present as null, before and after the
// required ones: null means absent (spec 1.2 §manifest), and the fields that
// follow a null are still read.
TEST(SpecForms, NullOptionalFieldsAnywhere) {
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
  EXPECT_EQ(read(f.object("a")), blobs[0]);
  EXPECT_EQ(read(f.object("b")), blobs[1]);
  EXPECT_EQ(zt_file_verify(f.f, 0, nullptr, nullptr), ZT_OK) << zt_last_error();
}

// Version last, objects unsorted and in indefinite-length maps, a name as an
// indefinite-length string, integers in 8-byte form.
TEST(SpecForms, AnyKeyOrderIndefiniteLengthsWideIntegers) {
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
  EXPECT_EQ(read(f.object("zeta")), blobs[0]);
  EXPECT_EQ(read(f.object("alpha")), blobs[1]);
  EXPECT_EQ(read(f.object("mid")), blobs[2]);
  // Enumeration keeps the file's order; lookups by name work regardless.
  const zt_object *o = nullptr;
  zt_object_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(zt_file_object_at(f.f, 1, &o), ZT_OK);
  ASSERT_EQ(zt_object_get_info(o, &info), ZT_OK);
  EXPECT_EQ(std::string(info.name, info.name_len), "alpha");
}

// Spec 1.2 §Component and §Reading: an offset is a multiple of 64 and
// offset + length stays within the file. An empty blob holds no bytes, so a
// writer that pads only before real data may give it offset 0, or the
// aligned position after the last blob, past where the manifest starts.
TEST(SpecForms, EmptyBlobsAnywhereInTheFile) {
  std::vector<std::string> blobs = {bytes_of(40, 9)};  // 8 + 40: the manifest starts at 48
  Cbor c;
  c.map(2).text("version").text("1.2.0").text("objects").map(4);
  auto dense = [&c](const char *name, uint64_t dim, uint64_t offset, uint64_t length) {
    c.text(name).map(3).text("shape").shape({dim}).text("format").text("dense").text("components").map(1);
    c.text("data").map(3).text("dtype").text("u8").text("offset").uint(offset).text("length").uint(length);
  };
  dense("at_zero", 0, 0, 0);
  dense("full", 40, 64, 40);
  dense("past_manifest", 0, 128, 0);
  dense("past_file", 0, 1 << 20, 0);
  std::string file = zttest::build_v1_file(blobs, c.bytes);
  Opened f(file);
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(read(f.object("full")), blobs[0]);
  for (const char *name : {"at_zero", "past_manifest"}) {
    SCOPED_TRACE(name);
    ASSERT_EQ(status_of(f.object(name)), ZT_OK) << error_of(f.object(name));
    EXPECT_EQ(read(f.object(name)), "");
    const void *p = nullptr;
    size_t len = 1;
    EXPECT_EQ(zt_component_view(f.object(name), 0, &p, &len), ZT_OK) << zt_last_error();
    EXPECT_EQ(len, 0u);
  }
  EXPECT_EQ(status_of(f.object("past_file")), ZT_E_BOUNDS);
  EXPECT_NE(error_of(f.object("past_file")).find("past the end of the file"), std::string::npos);
}

// ---- CBOR forms ----------------------------------------------------------

// docs/reading-rules.md "any valid CBOR is accepted ... the self-describe tag 55799";
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
// names no algorithm is unverifiable (like an unknown algorithm, docs/reading-rules.md),
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

// ---- spec 1.1: zstd without a declared decoded size, in composites ------

// Spec 1.1 Part II §3: any component may be "zstd" and the component has no
// uncompressed_length; Part III: sparse_csr / sparse_coo / quantized_group
// are made of such components. Their element counts come from decoding.
void v11_component(Cbor &c, const char *role, const char *dtype, uint64_t offset, const std::string &stored,
                   bool zstd) {
  c.text(role).map(zstd ? 4 : 3).text("dtype").text(dtype).text("offset").uint(offset);
  c.text("length").uint(stored.size());
  if (zstd) c.text("encoding").text("zstd");
}

TEST(SpecForms, V11SparseWithZstdComponents) {
  // CSR [2, 3]: row 0 has columns 0 and 2, row 1 column 1; indices as u16.
  const std::string values = le(std::vector<float>{1.5f, -2.0f, 4.0f});
  const std::string indices = le(std::vector<uint16_t>{0, 2, 1});
  const std::string indptr = le(std::vector<uint64_t>{0, 2, 3});
  // COO [2, 2] with two values; coords as u32.
  const std::string cvalues = le(std::vector<double>{3.0, 5.0});
  const std::string coords = le(std::vector<uint32_t>{0, 1, 1, 0});
  std::vector<std::string> blobs = {zstd_frame(values), zstd_frame(indices), indptr, zstd_frame(cvalues),
                                    zstd_frame(coords)};
  auto offs = zttest::layout_offsets(blobs);
  Cbor c;
  c.map(2).text("version").text("1.1.0").text("objects").map(2);
  c.text("coo").map(3).text("shape").shape({2, 2}).text("format").text("sparse_coo").text("components").map(2);
  v11_component(c, "values", "f64", offs[3], blobs[3], true);
  v11_component(c, "coords", "u32", offs[4], blobs[4], true);
  c.text("csr").map(3).text("shape").shape({2, 3}).text("format").text("sparse_csr").text("components").map(3);
  v11_component(c, "values", "f32", offs[0], blobs[0], true);
  v11_component(c, "indices", "u16", offs[1], blobs[1], true);
  v11_component(c, "indptr", "u64", offs[2], blobs[2], false);
  Opened f(zttest::build_v1_file(blobs, c.bytes));
  ASSERT_NE(f.f, nullptr);
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();

  const zt_object *csr = f.object("csr");
  EXPECT_EQ(zt_object_validate(csr), ZT_OK) << zt_last_error();
  std::vector<float> dense(6, -1.0f);
  size_t got = 0;
  ASSERT_EQ(zt_object_densify(csr, dense.data(), dense.size() * 4, &got), ZT_OK) << zt_last_error();
  EXPECT_EQ(got, 24u);
  EXPECT_EQ(dense, (std::vector<float>{1.5f, 0, -2.0f, 0, 4.0f, 0}));

  // Described and read without a declared size: counted by decoding.
  zt_sparse_info si{};
  si.struct_size = sizeof si;
  ASSERT_EQ(zt_object_sparse_info(csr, &si), ZT_OK) << zt_last_error();
  EXPECT_EQ(si.nnz, 3u);
  size_t count = 0;
  EXPECT_EQ(zt_object_read_index(csr, "indices", nullptr, 0, &count), ZT_E_BUFFER_TOO_SMALL) << "size query";
  EXPECT_EQ(count, 3u);
  std::vector<uint64_t> idx(count);
  ASSERT_EQ(zt_object_read_index(csr, "indices", idx.data(), idx.size(), &count), ZT_OK) << zt_last_error();
  EXPECT_EQ(idx, (std::vector<uint64_t>{0, 2, 1}));

  const zt_object *coo = f.object("coo");
  ASSERT_EQ(zt_object_sparse_info(coo, &si), ZT_OK) << zt_last_error();
  EXPECT_EQ(si.nnz, 2u);
  EXPECT_EQ(zt_object_validate(coo), ZT_OK) << zt_last_error();
  std::vector<double> cdense(4, -1.0);
  ASSERT_EQ(zt_object_densify(coo, cdense.data(), cdense.size() * 8, &got), ZT_OK) << zt_last_error();
  EXPECT_EQ(cdense, (std::vector<double>{0, 3.0, 5.0, 0}));

  // The count is still checked: values that decode to one element too many.
  const std::string four = le(std::vector<float>{1, 2, 3, 4});
  blobs = {zstd_frame(four), le(std::vector<uint64_t>{0, 2, 1}), indptr};
  offs = zttest::layout_offsets(blobs);
  c = Cbor();
  c.map(2).text("version").text("1.1.0").text("objects").map(1);
  c.text("csr").map(3).text("shape").shape({2, 3}).text("format").text("sparse_csr").text("components").map(3);
  v11_component(c, "values", "f32", offs[0], blobs[0], true);
  v11_component(c, "indices", "u64", offs[1], blobs[1], false);
  v11_component(c, "indptr", "u64", offs[2], blobs[2], false);
  Opened bad(zttest::build_v1_file(blobs, c.bytes));
  ASSERT_NE(bad.f, nullptr);
  EXPECT_EQ(zt_object_validate(bad.object("csr")), ZT_E_SPARSE_NNZ);
  EXPECT_EQ(zt_file_verify(bad.f, 1, nullptr, nullptr), ZT_E_SPARSE_NNZ);
}

TEST(SpecForms, V11QuantizedGroupWithZstdComponents) {
  // Shape [2, 8], 4 bits, 8_per_i32: one word per row; group_size 4 gives
  // 2 groups per row, 4 scales and 4 zeros.
  const std::string packed = le(std::vector<uint32_t>{0x76543210u, 0xfedcba98u});
  const std::string scales = le(std::vector<float>{1.0f, 2.0f, 0.5f, 4.0f});
  const std::string zeros = le(std::vector<float>{0.0f, 4.0f, 8.0f, 15.0f});
  std::vector<std::string> blobs = {zstd_frame(packed), zstd_frame(scales), zstd_frame(zeros)};
  auto offs = zttest::layout_offsets(blobs);
  Cbor c;
  c.map(2).text("version").text("1.1.0").text("objects").map(1);
  c.text("q").map(4).text("shape").shape({2, 8}).text("format").text("quantized_group");
  c.text("attributes").map(3).text("bits").uint(4).text("group_size").uint(4).text("packing").text("8_per_i32");
  c.text("components").map(3);
  v11_component(c, "packed_weight", "i32", offs[0], blobs[0], true);
  v11_component(c, "scales", "f32", offs[1], blobs[1], true);
  v11_component(c, "zeros", "f32", offs[2], blobs[2], true);
  Opened f(zttest::build_v1_file(blobs, c.bytes));
  ASSERT_NE(f.f, nullptr);
  const zt_object *q = f.object("q");
  EXPECT_EQ(zt_object_validate(q), ZT_OK) << zt_last_error();
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  zt_quant_info qi{};
  qi.struct_size = sizeof qi;
  ASSERT_EQ(zt_object_quant_info(q, &qi), ZT_OK) << zt_last_error();
  EXPECT_EQ(qi.groups, 4u);
  std::vector<float> w(16);
  ASSERT_EQ(zt_object_dequantize(q, w.data(), w.size()), ZT_OK) << zt_last_error();
  std::vector<float> want;
  const float s[4] = {1, 2, 0.5f, 4}, z[4] = {0, 4, 8, 15};
  for (int i = 0; i < 16; ++i) want.push_back((static_cast<float>(i) - z[i / 4]) * s[i / 4]);
  EXPECT_EQ(w, want);

  // The packed size is still checked once decoded: one word short.
  const std::string short_packed = le(std::vector<uint32_t>{0x76543210u});
  blobs = {zstd_frame(short_packed), scales};
  offs = zttest::layout_offsets(blobs);
  c = Cbor();
  c.map(2).text("version").text("1.1.0").text("objects").map(1);
  c.text("q").map(4).text("shape").shape({2, 8}).text("format").text("quantized_group");
  c.text("attributes").map(2).text("bits").uint(4).text("group_size").uint(4);
  c.text("components").map(2);
  v11_component(c, "packed_weight", "i32", offs[0], blobs[0], true);
  v11_component(c, "scales", "f32", offs[1], blobs[1], false);
  Opened bad(zttest::build_v1_file(blobs, c.bytes));
  ASSERT_NE(bad.f, nullptr);
  const zt_object *bq = bad.object("q");
  EXPECT_EQ(zt_object_validate(bq), ZT_E_QUANT_SIZE);
  EXPECT_EQ(zt_object_dequantize(bq, w.data(), w.size()), ZT_E_QUANT_SIZE);
}

// ---- quantized_group parameters ----------------------------------------

// Spec 1.2 §3 quantized_group: bits, group_size and packing are stored in
// the object's attributes, which are free-form metadata; a writer may encode
// a number as a CBOR float (half, single or double). Whole values are read
// as those integers; others are still refused.
TEST(SpecForms, QuantizedParamsAsWholeFloats) {
  // Shape [2, 8], 4 bits, 8_per_i32, group_size 8: 2 words, 2 f32 scales.
  const std::string packed = le(std::vector<uint32_t>{0x76543210u, 0xfedcba98u});
  const std::string scales = le(std::vector<float>{1.0f, 0.5f});
  std::vector<std::string> blobs = {packed, scales};
  auto offs = zttest::layout_offsets(blobs);
  auto file = [&](const std::string &bits, const std::string &group_size) {
    Cbor c;
    c.map(2).text("version").text("1.2.0").text("objects").map(1);
    c.text("q").map(4).text("shape").shape({2, 8}).text("format").text("quantized_group");
    c.text("attributes").map(3).text("bits").raw(bits).text("group_size").raw(group_size);
    c.text("packing").text("8_per_i32").text("components").map(2);
    c.text("packed_weight").map(3).text("dtype").text("i32").text("offset").uint(offs[0]).text("length").uint(8);
    c.text("scales").map(3).text("dtype").text("f32").text("offset").uint(offs[1]).text("length").uint(8);
    return zttest::build_v1_file(blobs, c.bytes);
  };
  const std::string half4("\xf9\x44\x00", 3), single8("\xfa\x41\x00\x00\x00", 5);
  Opened f(file(half4, single8));
  ASSERT_NE(f.f, nullptr);
  const zt_object *q = f.object("q");
  zt_quant_info qi{};
  qi.struct_size = sizeof qi;
  ASSERT_EQ(zt_object_quant_info(q, &qi), ZT_OK) << zt_last_error();
  EXPECT_EQ(qi.bits, 4u);
  EXPECT_EQ(qi.group_size, 8u);
  std::vector<float> w(16);
  ASSERT_EQ(zt_object_dequantize(q, w.data(), w.size()), ZT_OK) << zt_last_error();
  EXPECT_EQ(w[15], (15.0f - 8.0f) * 0.5f);  // default zero point 2^(bits-1)
  Opened g(file(Cbor().uint(4).bytes, Cbor().f64(8.0).bytes));
  ASSERT_NE(g.f, nullptr);
  EXPECT_EQ(zt_object_validate(g.object("q")), ZT_OK) << zt_last_error();
  Opened h(file(Cbor().f64(4.5).bytes, Cbor().uint(8).bytes));
  ASSERT_NE(h.f, nullptr);
  EXPECT_EQ(zt_object_quant_info(h.object("q"), &qi), ZT_E_QUANT_PARAMS);
}

// Spec 1.2 §3 asks only for "per-group scaling factors"; §2 makes u8 typed
// f8_e4m3fn (and the other fp8 types) a float format, and spec 1.1 spells it
// as the dtype "f8_e4m3". fp8 scales are floats like f16 ones.
TEST(SpecForms, QuantizedFp8Scales) {
  const std::string packed = le(std::vector<uint32_t>{0x76543210u, 0xfedcba98u});
  const std::string scales("\x38\x40", 2);  // e4m3fn 1.0, 2.0
  std::vector<std::string> blobs = {packed, scales};
  auto offs = zttest::layout_offsets(blobs);
  for (const char *version : {"1.2.0", "1.1.0"}) {
    SCOPED_TRACE(version);
    const bool v12 = std::string(version) == "1.2.0";
    Cbor c;
    c.map(2).text("version").text(version).text("objects").map(1);
    c.text("q").map(4).text("shape").shape({2, 8}).text("format").text("quantized_group");
    c.text("attributes").map(2).text("bits").uint(4).text("group_size").uint(8).text("components").map(2);
    c.text("packed_weight").map(3).text("dtype").text("i32").text("offset").uint(offs[0]).text("length").uint(8);
    c.text("scales").map(v12 ? 4 : 3).text("dtype").text(v12 ? "u8" : "f8_e4m3");
    if (v12) c.text("type").text("f8_e4m3fn");
    c.text("offset").uint(offs[1]).text("length").uint(2);
    Opened f(zttest::build_v1_file(blobs, c.bytes));
    ASSERT_NE(f.f, nullptr);
    const zt_object *q = f.object("q");
    EXPECT_EQ(zt_object_validate(q), ZT_OK) << zt_last_error();
    std::vector<float> w(16);
    ASSERT_EQ(zt_object_dequantize(q, w.data(), w.size()), ZT_OK) << zt_last_error();
    EXPECT_EQ(w[0], (0.0f - 8.0f) * 1.0f);
    EXPECT_EQ(w[15], (15.0f - 8.0f) * 2.0f);
  }
}

// 'version' first (as the original implementation writes it), so objects are
// decoded while the manifest is parsed. Attribute values are checked there
// without keeping their insides; an object named "attributes", and one whose
// component has that role, are not attribute values and must decode whole.
TEST(SpecForms, ObjectsNamedAttributesDecodeWhileParsing) {
  const std::string a = le(std::vector<float>{1.f, 2.f, 3.f});
  const std::string b = le(std::vector<uint8_t>{9, 8});
  std::vector<std::string> blobs = {a, b};
  auto offs = zttest::layout_offsets(blobs);
  Cbor c;
  c.map(3).text("version").text("1.2.0");
  c.text("attributes").map(1).text("big").array(3).uint(1).uint(2).uint(3);
  c.text("objects").map(2);
  c.text("attributes").map(4).text("shape").shape({3}).text("format").text("dense");
  c.text("attributes").map(1).text("attributes").map(1).text("x").uint(1);
  c.text("components").map(1).text("data").map(3).text("dtype").text("f32").text("offset").uint(offs[0]);
  c.text("length").uint(a.size());
  c.text("b").map(3).text("shape").shape({2}).text("format").text("dense").text("components").map(1);
  c.text("data").map(3).text("dtype").text("u8").text("offset").uint(offs[1]).text("length").uint(b.size());
  Opened f(zttest::build_v1_file(blobs, c.bytes), 1);
  ASSERT_NE(f.f, nullptr);
  zt_object_info info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  ASSERT_EQ(zt_object_get_info(f.object("attributes"), &info), ZT_OK);
  EXPECT_EQ(info.status, ZT_OK);
  ASSERT_EQ(info.ndim, 1u);
  EXPECT_EQ(info.shape[0], 3u);
  EXPECT_EQ(info.has_attributes, 1u);
  std::vector<float> got(3);
  ASSERT_EQ(zt_component_read(f.object("attributes"), 0, got.data(), 12, nullptr), ZT_OK) << zt_last_error();
  EXPECT_EQ(got, (std::vector<float>{1.f, 2.f, 3.f}));
  char *json = nullptr;
  ASSERT_EQ(zt_object_attributes_json(f.object("attributes"), &json), ZT_OK);
  EXPECT_STREQ(json, R"({"attributes":{"x":1}})");
  zt_free(json);
  uint8_t small[2];
  ASSERT_EQ(zt_component_read(f.object("b"), 0, small, 2, nullptr), ZT_OK) << zt_last_error();
  EXPECT_EQ(small[1], 8);
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
}

}  // namespace
