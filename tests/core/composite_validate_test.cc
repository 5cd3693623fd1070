// One malformed composite object per structural rule, crafted byte by byte
// with the independent CBOR encoder (the writer refuses to produce them),
// each asserting the exact status of strict verification; plus the valid
// variants that must pass (spec 1.1 index dtypes, the reference's
// data+scales quantized_group, unknown packings).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cbor_writer.h"
#include "composite/validate.h"
#include "reader.h"
#include "test_util.h"
#include "util/error.h"

using zttest::Cbor;

namespace {

struct Part {
  std::string role;
  std::string dtype;
  std::string bytes;
};

template <typename T>
std::string le(const std::vector<T> &v) {
  return zttest::le_bytes(v);
}

std::string u64s(const std::vector<uint64_t> &v) {
  return le(v);
}
std::string f32s(size_t n) {
  return le(std::vector<float>(n, 1.5f));
}

// One object; attributes_cbor empty = none.
std::string build(const std::string &format, const std::vector<uint64_t> &shape, const std::vector<Part> &parts,
                  const std::string &attributes_cbor = {}) {
  std::vector<std::string> blobs;
  for (const auto &p : parts) blobs.push_back(p.bytes);
  std::vector<uint64_t> offs = zttest::layout_offsets(blobs);
  Cbor comps;
  comps.map(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    comps.text(parts[i].role).map(3);
    comps.text("dtype").text(parts[i].dtype);
    comps.text("offset").uint(offs[i]);
    comps.text("length").uint(parts[i].bytes.size());
  }
  Cbor m;
  m.map(2).text("version").text("1.2.0").text("objects").map(1).text("obj");
  m.map(attributes_cbor.empty() ? 3 : 4).text("shape").shape(shape).text("format").text(format);
  if (!attributes_cbor.empty()) m.text("attributes").raw(attributes_cbor);
  m.text("components").raw(comps.bytes);
  return zttest::build_v1_file(blobs, m.bytes);
}

// Strict structural status of the file's only object (ZT_OK if valid), after
// checking that the components themselves are sound.
zt_status structure_status(const std::string &file, std::string *msg = nullptr) {
  zt::ReaderOptions ro;
  auto r = zt::Reader::open_memory(file.data(), file.size(), ro);
  const zt::Object &o = r->manifest().objects.at(0);
  EXPECT_EQ(o.status, ZT_OK) << o.error;
  try {
    r->verify_object(o, /*strict=*/false);
  } catch (const zt::Error &e) {
    ADD_FAILURE() << "components are damaged: " << e.what();
    return e.status();
  }
  try {
    zt::validate_object_structure(*r, o);
  } catch (const zt::Error &e) {
    if (msg) *msg = e.what();
    // Strict verification reports the same status, and lenient does not.
    EXPECT_THROW(r->verify_object(o, true), zt::Error);
    auto failures = r->verify_all(true);
    EXPECT_EQ(failures.size(), 1u);
    if (!failures.empty()) EXPECT_EQ(failures[0].status, e.status());
    EXPECT_TRUE(r->verify_all(false).empty());
    return e.status();
  }
  EXPECT_NO_THROW(r->verify_object(o, true));
  return ZT_OK;
}

std::string quant_attrs(int bits, int group_size, const char *packing) {
  Cbor a;
  a.map(packing ? 3 : 2).text("bits").uint(bits).text("group_size").uint(group_size);
  if (packing) a.text("packing").text(packing);
  return a.bytes;
}

// A valid CSR 3 × 4: rows {0: cols 1, 3}, {1: none}, {2: col 0}.
std::vector<Part> csr_parts(std::vector<uint64_t> indices = {1, 3, 0}, std::vector<uint64_t> indptr = {0, 2, 2, 3},
                            size_t values = 3) {
  return {{"values", "f32", f32s(values)}, {"indices", "u64", u64s(indices)}, {"indptr", "u64", u64s(indptr)}};
}

// A valid 4 × 16 4-bit quantized_group, group 8: 4 × 2 words, 4 × 2 groups.
std::vector<Part> quant_parts(size_t words = 8, size_t scales = 8, size_t zeros = 8, const char *pdtype = "i32",
                              const char *sdtype = "f16") {
  std::vector<Part> p = {{"packed_weight", pdtype, std::string(words * (std::string(pdtype) == "u8" ? 1 : 4), '\x21')},
                         {"scales", sdtype, std::string(scales * 2, '\x3c')}};
  if (zeros) p.push_back({"zeros", "f16", std::string(zeros * 2, '\0')});
  return p;
}

TEST(CompositeValidate, ValidObjectsPass) {
  EXPECT_EQ(structure_status(build("sparse_csr", {3, 4}, csr_parts())), ZT_OK);
  EXPECT_EQ(structure_status(build("sparse_csr", {0, 0}, csr_parts({}, {0}, 0))), ZT_OK);
  EXPECT_EQ(structure_status(
                build("sparse_coo", {2, 3}, {{"values", "f32", f32s(2)}, {"coords", "u64", u64s({0, 1, 2, 0})}})),
            ZT_OK);
  EXPECT_EQ(structure_status(build("quantized_group", {4, 16}, quant_parts(), quant_attrs(4, 8, "8_per_i32"))), ZT_OK);
  // Groups and words along a last dimension that divides neither evenly.
  EXPECT_EQ(structure_status(build("quantized_group", {2, 10}, quant_parts(4, 4, 0), quant_attrs(4, 8, "8_per_i32"))),
            ZT_OK);
  EXPECT_EQ(structure_status(build("my_format", {1}, {{"anything", "u8", "x"}})), ZT_OK);
}

TEST(CompositeValidate, Spec11IndexDtypesAreRead) {
  // Spec 1.1 allowed any integer index dtype.
  std::vector<Part> p = {{"values", "f32", f32s(3)},
                         {"indices", "i32", le(std::vector<int32_t>{1, 3, 0})},
                         {"indptr", "u16", le(std::vector<uint16_t>{0, 2, 2, 3})}};
  EXPECT_EQ(structure_status(build("sparse_csr", {3, 4}, p)), ZT_OK);
}

TEST(CompositeValidate, ReferenceDataScalesVariantAndUnknownPacking) {
  // custom_format.zt's shape: u8 "data" (2 per byte), f32 scales, no packing.
  EXPECT_EQ(structure_status(build("quantized_group", {4, 8},
                                   {{"data", "u8", std::string(16, '\x12')}, {"scales", "f32", f32s(4)}},
                                   quant_attrs(4, 8, nullptr))),
            ZT_OK);
  // A packing this library does not know: sizes of scales still checked.
  EXPECT_EQ(structure_status(build("quantized_group", {4, 16}, quant_parts(3), quant_attrs(3, 8, "exotic_3bit"))),
            ZT_OK);
  EXPECT_EQ(structure_status(build("quantized_group", {4, 16}, quant_parts(3, 7), quant_attrs(3, 8, "exotic_3bit"))),
            ZT_E_QUANT_SIZE);
}

TEST(CompositeValidate, ComponentMissing) {
  auto p = csr_parts();
  p.pop_back();  // no indptr
  std::string msg;
  EXPECT_EQ(structure_status(build("sparse_csr", {3, 4}, p), &msg), ZT_E_COMPONENT_MISSING);
  EXPECT_NE(msg.find("indptr"), std::string::npos) << msg;
  EXPECT_EQ(structure_status(build("sparse_coo", {3}, {{"values", "f32", f32s(1)}})), ZT_E_COMPONENT_MISSING);
  EXPECT_EQ(structure_status(build("quantized_group", {4, 16}, {quant_parts()[0]}, quant_attrs(4, 8, "8_per_i32"))),
            ZT_E_COMPONENT_MISSING);
  EXPECT_EQ(structure_status(build("quantized_group", {4, 16}, {quant_parts()[1]}, quant_attrs(4, 8, "8_per_i32"))),
            ZT_E_COMPONENT_MISSING);
}

TEST(CompositeValidate, SparseShape) {
  EXPECT_EQ(structure_status(build("sparse_csr", {3, 4, 1}, csr_parts())), ZT_E_SHAPE);
  EXPECT_EQ(structure_status(build("sparse_coo", {}, {{"values", "f32", ""}, {"coords", "u64", ""}})), ZT_E_SHAPE);
}

TEST(CompositeValidate, IndexDtype) {
  auto p = csr_parts();
  p[1] = {"indices", "f32", f32s(3)};
  EXPECT_EQ(structure_status(build("sparse_csr", {3, 4}, p)), ZT_E_INDEX_DTYPE);
  EXPECT_EQ(structure_status(build("sparse_coo", {2}, {{"values", "f32", f32s(1)}, {"coords", "bool", "\x01"}})),
            ZT_E_INDEX_DTYPE);
}

TEST(CompositeValidate, IndptrCount) {
  std::string msg;
  EXPECT_EQ(structure_status(build("sparse_csr", {3, 4}, csr_parts({1, 3, 0}, {0, 2, 3})), &msg), ZT_E_SPARSE_INDPTR);
  EXPECT_NE(msg.find("'obj'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("indptr"), std::string::npos) << msg;
}

TEST(CompositeValidate, IndptrStart) {
  EXPECT_EQ(structure_status(build("sparse_csr", {3, 4}, csr_parts({1, 3, 0}, {1, 2, 2, 3}))), ZT_E_SPARSE_INDPTR);
}

TEST(CompositeValidate, IndptrDecreasing) {
  std::string msg;
  EXPECT_EQ(structure_status(build("sparse_csr", {3, 4}, csr_parts({1, 3, 0}, {0, 2, 1, 3})), &msg),
            ZT_E_SPARSE_INDPTR);
  EXPECT_NE(msg.find("entry 2"), std::string::npos) << msg;
}

TEST(CompositeValidate, IndptrEnd) {
  EXPECT_EQ(structure_status(build("sparse_csr", {3, 4}, csr_parts({1, 3, 0}, {0, 2, 2, 2}))), ZT_E_SPARSE_INDPTR);
}

TEST(CompositeValidate, IndptrNegative) {
  auto p = csr_parts();
  p[2] = {"indptr", "i64", le(std::vector<int64_t>{0, -1, 2, 3})};
  EXPECT_EQ(structure_status(build("sparse_csr", {3, 4}, p)), ZT_E_SPARSE_INDPTR);
}

TEST(CompositeValidate, CsrIndexOutOfRange) {
  std::string msg;
  EXPECT_EQ(structure_status(build("sparse_csr", {3, 4}, csr_parts({1, 4, 0})), &msg), ZT_E_SPARSE_INDEX);
  EXPECT_NE(msg.find("entry 1"), std::string::npos) << msg;
}

TEST(CompositeValidate, CsrIndexNegative) {
  auto p = csr_parts();
  p[1] = {"indices", "i32", le(std::vector<int32_t>{1, -3, 0})};
  EXPECT_EQ(structure_status(build("sparse_csr", {3, 4}, p)), ZT_E_SPARSE_INDEX);
}

TEST(CompositeValidate, CsrValuesCount) {
  EXPECT_EQ(structure_status(build("sparse_csr", {3, 4}, csr_parts({1, 3, 0}, {0, 2, 2, 3}, 2))), ZT_E_SPARSE_NNZ);
}

TEST(CompositeValidate, CooCoordOutOfRange) {
  std::string msg;
  // shape [2, 3]; value 1 has column 3.
  EXPECT_EQ(structure_status(
                build("sparse_coo", {2, 3}, {{"values", "f32", f32s(2)}, {"coords", "u64", u64s({0, 1, 2, 3})}}), &msg),
            ZT_E_SPARSE_INDEX);
  EXPECT_NE(msg.find("entry 3"), std::string::npos) << msg;
}

TEST(CompositeValidate, CooCoordsCount) {
  EXPECT_EQ(
      structure_status(build("sparse_coo", {2, 3}, {{"values", "f32", f32s(2)}, {"coords", "u64", u64s({0, 1, 2})}})),
      ZT_E_SPARSE_NNZ);
}

TEST(CompositeValidate, QuantParams) {
  const auto p = quant_parts();
  // No attributes at all.
  EXPECT_EQ(structure_status(build("quantized_group", {4, 16}, p)), ZT_E_QUANT_PARAMS);
  // bits missing.
  EXPECT_EQ(structure_status(build("quantized_group", {4, 16}, p, Cbor().map(1).text("group_size").uint(8).bytes)),
            ZT_E_QUANT_PARAMS);
  // bits 0; group_size as text.
  EXPECT_EQ(structure_status(build("quantized_group", {4, 16}, p, quant_attrs(0, 8, "8_per_i32"))), ZT_E_QUANT_PARAMS);
  EXPECT_EQ(structure_status(build("quantized_group", {4, 16}, p,
                                   Cbor().map(2).text("bits").uint(4).text("group_size").text("8").bytes)),
            ZT_E_QUANT_PARAMS);
  // packing not text.
  EXPECT_EQ(structure_status(
                build("quantized_group", {4, 16}, p,
                      Cbor().map(3).text("bits").uint(4).text("group_size").uint(8).text("packing").uint(8).bytes)),
            ZT_E_QUANT_PARAMS);
  // packing for 8-bit values with bits 4.
  EXPECT_EQ(structure_status(build("quantized_group", {4, 16}, p, quant_attrs(4, 8, "4_per_i32"))), ZT_E_QUANT_PARAMS);
  // word packing over a u8 component.
  EXPECT_EQ(
      structure_status(build("quantized_group", {4, 16}, quant_parts(32, 8, 8, "u8"), quant_attrs(4, 8, "8_per_i32"))),
      ZT_E_QUANT_PARAMS);
  // integer scales.
  EXPECT_EQ(structure_status(
                build("quantized_group", {4, 16}, quant_parts(8, 8, 8, "i32", "i16"), quant_attrs(4, 8, "8_per_i32"))),
            ZT_E_QUANT_PARAMS);
}

TEST(CompositeValidate, QuantSizes) {
  std::string msg;
  EXPECT_EQ(structure_status(build("quantized_group", {4, 16}, quant_parts(7), quant_attrs(4, 8, "8_per_i32")), &msg),
            ZT_E_QUANT_SIZE);
  EXPECT_NE(msg.find("packed_weight"), std::string::npos) << msg;
  EXPECT_EQ(
      structure_status(build("quantized_group", {4, 16}, quant_parts(8, 4), quant_attrs(4, 8, "8_per_i32")), &msg),
      ZT_E_QUANT_SIZE);
  EXPECT_NE(msg.find("scales"), std::string::npos) << msg;
  EXPECT_EQ(
      structure_status(build("quantized_group", {4, 16}, quant_parts(8, 8, 9), quant_attrs(4, 8, "8_per_i32")), &msg),
      ZT_E_QUANT_SIZE);
  EXPECT_NE(msg.find("zeros"), std::string::npos) << msg;
  // Byte packing: 4 × 16 4-bit values need 32 bytes.
  EXPECT_EQ(
      structure_status(build("quantized_group", {4, 16}, quant_parts(31, 8, 8, "u8"), quant_attrs(4, 8, "2_per_u8"))),
      ZT_E_QUANT_SIZE);
  EXPECT_EQ(
      structure_status(build("quantized_group", {4, 16}, quant_parts(32, 8, 8, "u8"), quant_attrs(4, 8, "2_per_u8"))),
      ZT_OK);
}

// Composite validation reads parts only through ComponentBytes (the Reader
// is one; the arrow points reader → composite): bytes from anywhere else
// are validated the same way. Like Reader::read_vector, it hands out
// elements in the host's order.
class BytesByRole : public zt::ComponentBytes {
 public:
  std::map<std::string, std::string> bytes;  // host order
  void set_stored(const Part &p) {           // from the little-endian bytes of a file
    const size_t esize = p.dtype == "u64" ? 8 : p.dtype == "f32" ? 4 : 1;
    const std::vector<uint8_t> host = zttest::le_to_host(p.bytes.data(), p.bytes.size(), esize);
    bytes[p.role] = std::string(host.begin(), host.end());
  }
  uint64_t decoded_size(const zt::Object &, const zt::Component &c) const override { return bytes.at(c.role).size(); }
  std::vector<uint8_t> read_vector(const zt::Object &, const zt::Component &c) const override {
    const std::string &b = bytes.at(c.role);
    return std::vector<uint8_t>(b.begin(), b.end());
  }
};

TEST(CompositeValidate, NeedsOnlyTheComponentBytes) {
  const std::vector<Part> parts = csr_parts();
  const std::string file = build("sparse_csr", {3, 4}, parts);
  zt::ReaderOptions ro;
  auto r = zt::Reader::open_memory(file.data(), file.size(), ro);
  const zt::Object &o = r->manifest().objects.at(0);
  BytesByRole src;
  for (const Part &p : parts) src.set_stored(p);
  EXPECT_NO_THROW(zt::validate_object_structure(src, o));
  // The same object over other bytes: an indptr that does not start at 0.
  src.set_stored({"indptr", "u64", u64s({1, 2, 2, 3})});
  try {
    zt::validate_object_structure(src, o);
    ADD_FAILURE() << "no error";
  } catch (const zt::Error &e) {
    EXPECT_EQ(e.status(), ZT_E_SPARSE_INDPTR) << e.what();
  }
}

}  // namespace
