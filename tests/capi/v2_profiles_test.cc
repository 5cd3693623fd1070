// The registry layout profiles zt.sparse_coo/1, zt.quant_group/1, zt.mx/1 and
// gguf.<type>/1 (spec/profiles/; src/v2/layout_profiles.cc), rule by rule on
// files built here (tests/support/v2_image.h): each object that breaks one
// metadata rule is refused naming LayoutRule, next to the nearest object
// that is accepted. The original reads these profiles unchecked, so a
// breach refuses the object, not the file: its other objects still read.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"
#include "v2_image.h"
#include "ztensor.h"
#include "ztensor_composite.h"

using namespace v2img;

namespace {

// The message an object's refusal gives ("" when it verifies), the file
// opening in any case.
std::string refusal(const std::string &obj) {
  auto img = assemble(16384 + 8, manifest({{"m", obj}, {"plain", dense("u8", {8}, 16384, 8)}}));
  zt_file *f = nullptr;
  EXPECT_EQ(ZT_OK, zt_open_memory(img.data(), img.size(), nullptr, &f)) << zt_last_error();
  if (!f) return "not opened";
  const zt_object *m = nullptr, *plain = nullptr;
  EXPECT_EQ(ZT_OK, zt_file_object_by_name(f, "m", 1, &m));
  EXPECT_EQ(ZT_OK, zt_file_object_by_name(f, "plain", 5, &plain));
  EXPECT_EQ(ZT_OK, zt_object_verify(plain)) << "the file's other objects stay readable";
  std::string msg;
  if (zt_object_verify(m) != ZT_OK) {
    msg = zt_last_error();
    EXPECT_NE(msg.find("rejected (LayoutRule)"), std::string::npos) << msg;
    uint8_t b[64];
    size_t n = 0;
    EXPECT_NE(ZT_OK, zt_component_read(m, 0, b, sizeof b, &n));
  }
  zt_close(f);
  return msg;
}

#define EXPECT_REFUSED(obj, text)                                                   \
  do {                                                                              \
    const std::string m_ = refusal(obj);                                            \
    EXPECT_NE(m_.find(text), std::string::npos) << "want '" << text << "': " << m_; \
  } while (0)

Fields attrs(Fields a) {
  return {{"attributes", map(a)}};
}

// ---- zt.sparse_coo/1 -----------------------------------------------------

std::string coo(std::vector<uint64_t> shape, const std::string &cdt, uint64_t clen, uint64_t vlen, Fields more = {}) {
  Fields parts = {{"coords", part(cdt, 4096, clen)}, {"values", part("f32", 8192, vlen)}};
  parts.insert(parts.end(), more.begin(), more.end());
  return object(shape, "zt.sparse_coo/1", parts);
}

TEST(V2Profiles, SparseCoo) {
  EXPECT_EQ("", refusal(coo({4, 5}, "u32", 24, 12)));  // nnz 3
  EXPECT_EQ("", refusal(coo({4, 5}, "u64", 48, 12)));
  EXPECT_REFUSED(coo({}, "u32", 24, 12), "rank >= 1");
  EXPECT_REFUSED(coo({4, 5}, "i32", 24, 12), "plain u32 or u64");
  EXPECT_REFUSED(coo({4, 5}, "u32", 24, 12, {{"extra", part("u8", 12288, 1)}}), "exactly the parts");
  EXPECT_REFUSED(object({4, 5}, "zt.sparse_coo/1", {{"values", part("f32", 8192, 12)}}), "'coords'");
  EXPECT_REFUSED(coo({4, 5}, "u32", 20, 12), "not a multiple of width x ndim");
  EXPECT_REFUSED(coo({4, 5}, "u32", 24, 8), "nnz = 3");
}

// Through the composite API, as zt.sparse_csr/1: sparse info, densify, and
// the data rules (coordinates in range and unique) as LayoutData.
TEST(V2Profiles, SparseCooThroughTheCompositeApi) {
  auto file = [](std::vector<uint32_t> coords) {
    auto img = assemble(8192 + 12, manifest({{"m", coo({2, 3}, "u32", 24, 12)}}));
    std::vector<uint8_t> c(24), v(12);
    std::memcpy(c.data(), coords.data(), 24);
    const float vals[3] = {1.5f, 2.5f, 3.5f};
    std::memcpy(v.data(), vals, 12);
    plant(img, 4096, zttest::host_to_le(c.data(), c.size(), 4));  // stored little-endian
    plant(img, 8192, zttest::host_to_le(v.data(), v.size(), 4));
    return img;
  };
  // Structure of arrays: rows {0, 1, 1}, then columns {2, 0, 1}.
  auto good = file({0, 1, 1, 2, 0, 1});
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open_memory(good.data(), good.size(), nullptr, &f)) << zt_last_error();
  const zt_object *m = nullptr;
  ASSERT_EQ(ZT_OK, zt_file_object_by_name(f, "m", 1, &m));
  EXPECT_EQ(ZT_OK, zt_object_validate(m)) << zt_last_error();
  zt_sparse_info si{};
  si.struct_size = sizeof si;
  ASSERT_EQ(ZT_OK, zt_object_sparse_info(m, &si)) << zt_last_error();
  EXPECT_EQ(0u, si.is_csr);
  EXPECT_EQ(3u, si.nnz);
  float dense[6];
  size_t n = 0;
  ASSERT_EQ(ZT_OK, zt_object_densify(m, dense, sizeof dense, &n)) << zt_last_error();
  const float want[6] = {0, 0, 1.5f, 2.5f, 3.5f, 0};
  EXPECT_EQ(0, std::memcmp(dense, want, sizeof want));
  zt_close(f);
  for (auto bad : {std::vector<uint32_t>{0, 2, 1, 2, 0, 1},     // row 2 of 2
                   std::vector<uint32_t>{0, 1, 1, 2, 0, 0}}) {  // (1, 0) twice
    auto img = file(bad);
    ASSERT_EQ(ZT_OK, zt_open_memory(img.data(), img.size(), nullptr, &f)) << zt_last_error();
    ASSERT_EQ(ZT_OK, zt_file_object_by_name(f, "m", 1, &m));
    EXPECT_EQ(ZT_E_SPARSE_INDEX, zt_object_validate(m));
    const std::string msg = zt_last_error();
    EXPECT_NE(msg.find("rejected (LayoutData)"), std::string::npos) << msg;
    EXPECT_NE(msg.find(bad[1] == 2 ? "not below 2" : "name the same cell"), std::string::npos) << msg;
    EXPECT_EQ(ZT_E_SPARSE_INDEX, zt_object_densify(m, dense, sizeof dense, &n));
    zt_close(f);
  }
}

// ---- zt.quant_group/1 ----------------------------------------------------

// A [4, 8] tensor of 4-bit codes in u32 words along axis 1, groups of 4:
// data 32 / 8 words = 16 bytes; scales 2 groups x 4 lanes f16 = 16 bytes.
Fields qg_attrs(Fields over = {}, const std::string &drop = "") {
  Fields a = {{"bits", u(4)},
              {"group_size", u(4)},
              {"axis", u(1)},
              {"packing", map({{"word", t("u32")}, {"order", t("lsb_first")}, {"per_word", u(8)}})},
              {"scale_form", t("f16_factors")},
              {"zero_point", map({{"form", t("none")}})}};
  for (auto &o : over) {
    bool found = false;
    for (auto &e : a)
      if (e.first == o.first) e.second = o.second, found = true;
    if (!found) a.push_back(o);
  }
  Fields out;
  for (auto &e : a)
    if (e.first != drop) out.push_back(e);
  return out;
}

std::string qg(Fields a, uint64_t data_len = 16, uint64_t scales_len = 16, const std::string &sdt = "f16",
               Fields more = {}, const std::string &ddt = "u32") {
  Fields parts = {{"data", part(ddt, 4096, data_len)}, {"scales", part(sdt, 8192, scales_len)}};
  parts.insert(parts.end(), more.begin(), more.end());
  return object({4, 8}, "zt.quant_group/1", parts, attrs(a));
}

TEST(V2Profiles, QuantGroupAccepted) {
  EXPECT_EQ("", refusal(qg(qg_attrs())));
  EXPECT_EQ("", refusal(qg(qg_attrs(), 16, 16, "f16", {}, "i32")));  // the signed counterpart
  EXPECT_EQ("", refusal(qg(qg_attrs({{"zero_point", map({{"form", t("implied")}, {"value", u(8)}})}}))));
  EXPECT_EQ("", refusal(qg(qg_attrs({{"zero_point", map({{"form", t("tensor")}, {"packing", t("plain")}})}}), 16, 16,
                           "f16", {{"zeros", part("u8", 12288, 8)}})));
  // same_as_data: 8 zero points / 8 per word = 1 u32.
  EXPECT_EQ("", refusal(qg(qg_attrs({{"zero_point", map({{"form", t("tensor")}, {"packing", t("same_as_data")}})}}), 16,
                           16, "f16", {{"zeros", part("u32", 12288, 4)}})));
  EXPECT_EQ("", refusal(qg(qg_attrs({{"scale_form", t("f32_factors")}}), 16, 32, "f32")));
}

TEST(V2Profiles, QuantGroupEveryAttributeIsRequired) {
  for (const char *k : {"bits", "group_size", "axis", "packing", "scale_form", "zero_point"})
    EXPECT_REFUSED(qg(qg_attrs({}, k)), std::string("requires the attribute '") + k + "'");
  EXPECT_REFUSED(
      object({4, 8}, "zt.quant_group/1", {{"data", part("u32", 4096, 16)}, {"scales", part("f16", 8192, 16)}}),
      "requires its attributes");
  EXPECT_REFUSED(qg(qg_attrs({{"packing", map({{"order", t("lsb_first")}, {"per_word", u(8)}})}})), "'packing.word'");
  EXPECT_REFUSED(qg(qg_attrs({{"packing", map({{"word", t("u32")}, {"per_word", u(8)}})}})), "'packing.order'");
  EXPECT_REFUSED(qg(qg_attrs({{"packing", map({{"word", t("u32")}, {"order", t("lsb_first")}})}})),
                 "'packing.per_word'");
  EXPECT_REFUSED(qg(qg_attrs({{"zero_point", map({})}})), "'zero_point.form'");
  EXPECT_REFUSED(qg(qg_attrs({{"zero_point", map({{"form", t("implied")}})}})), "zero_point.value");
  EXPECT_REFUSED(
      qg(qg_attrs({{"zero_point", map({{"form", t("tensor")}})}}), 16, 16, "f16", {{"zeros", part("u8", 12288, 8)}}),
      "'zero_point.packing'");
  EXPECT_REFUSED(qg(qg_attrs({{"bits", t("4")}})), "must be an unsigned integer");
}

TEST(V2Profiles, QuantGroupOpenCasesAreRefused) {
  for (uint64_t b : {3, 5, 6})
    EXPECT_REFUSED(qg(qg_attrs({{"bits", u(b)}})), "bits " + std::to_string(b) + " is refused");
  EXPECT_REFUSED(qg(qg_attrs({{"bits", u(7)}})), "bits must be 2, 4 or 8");
  EXPECT_REFUSED(qg(qg_attrs({{"group_size", u(0)}})), "group_size 0 is refused");
}

TEST(V2Profiles, QuantGroupRules) {
  EXPECT_REFUSED(qg(qg_attrs({{"packing", map({{"word", t("u32")}, {"order", t("lsb_first")}, {"per_word", u(4)}})}})),
                 "per_word 4");
  EXPECT_REFUSED(qg(qg_attrs({{"packing", map({{"word", t("u24")}, {"order", t("lsb_first")}, {"per_word", u(8)}})}})),
                 "packing.word must be");
  EXPECT_REFUSED(qg(qg_attrs({{"packing", map({{"word", t("u32")}, {"order", t("zigzag")}, {"per_word", u(8)}})}})),
                 "packing.order must be");
  EXPECT_REFUSED(qg(qg_attrs(), 16, 16, "f16", {}, "u16"), "matching packing.word");
  EXPECT_REFUSED(qg(qg_attrs({{"axis", u(2)}})), "axis 2 is not below the rank");
  EXPECT_REFUSED(qg(qg_attrs({{"group_size", u(3)}})), "does not divide shape[axis]");
  EXPECT_REFUSED(qg(qg_attrs({{"zero_point", map({{"form", t("maybe")}})}})), "zero_point.form must be");
  EXPECT_REFUSED(qg(qg_attrs({{"zero_point", map({{"form", t("tensor")}, {"packing", t("plain")}})}})), "'zeros'");
  EXPECT_REFUSED(qg(qg_attrs(), 16, 16, "f16", {{"zeros", part("u8", 12288, 8)}}), "exactly the parts");
  EXPECT_REFUSED(qg(qg_attrs({{"scale_form", t("e8m0_exponent")}})), "e8m0_exponent");
  EXPECT_REFUSED(qg(qg_attrs({{"scale_form", t("f16_factors")}}), 16, 32, "f32"), "f16 or bf16");
  EXPECT_REFUSED(qg(qg_attrs({{"scale_form", t("bf8")}})), "scale_form must be");
  EXPECT_REFUSED(qg(qg_attrs(), 12), "'data' decoded size 12");
  EXPECT_REFUSED(qg(qg_attrs(), 16, 14), "'scales' decoded size 14");
  EXPECT_REFUSED(qg(qg_attrs({{"zero_point", map({{"form", t("tensor")}, {"packing", t("plain")}})}}), 16, 16, "f16",
                    {{"zeros", part("u8", 12288, 9)}}),
                 "'zeros' decoded size 9");
  EXPECT_REFUSED(qg(qg_attrs({{"zero_point", map({{"form", t("tensor")}, {"packing", t("same_as_data")}})}}), 16, 16,
                    "f16", {{"zeros", part("u32", 12288, 8)}}),
                 "'zeros' decoded size 8");
}

// Dequantized through the composite API where the point of the space is
// the 1.x model (last axis, lsb_first, u32/u8 words filling rows).
TEST(V2Profiles, QuantGroupDequantize) {
  auto file = [](Fields zp, const char *order = "lsb_first", uint64_t axis = 1) {
    Fields a = {{"bits", u(4)},
                {"group_size", u(4)},
                {"axis", u(axis)},
                {"packing", map({{"word", t("u32")}, {"order", t(order)}, {"per_word", u(8)}})},
                {"scale_form", t("f32_factors")},
                {"zero_point", map(zp)}};
    const bool tensor = zp.size() == 2 && zp[0].second == t("tensor");
    Fields parts = {{"data", part("u32", 4096, 8)}, {"scales", part("f32", 8192, axis == 1 ? 16 : 8)}};
    if (tensor) parts.push_back({"zeros", part("f32", 12288, 16)});
    auto img = assemble(12288 + 16, manifest({{"q", object({2, 8}, "zt.quant_group/1", parts, attrs(a))}}));
    uint32_t words[2] = {0, 0};
    for (uint32_t c = 0; c < 8; ++c) words[0] |= c << (4 * c), words[1] |= (c + 8) << (4 * c);
    const float scales[4] = {1, 2, 0.5f, 4}, zeros[4] = {1, 1, 2, 2};
    std::vector<uint8_t> w(8), sc(16), z(16);
    std::memcpy(w.data(), words, 8);
    std::memcpy(sc.data(), scales, 16);
    std::memcpy(z.data(), zeros, 16);
    plant(img, 4096, zttest::host_to_le(w.data(), w.size(), 4));  // stored little-endian
    plant(img, 8192, zttest::host_to_le(sc.data(), sc.size(), 4));
    plant(img, 12288, zttest::host_to_le(z.data(), z.size(), 4));
    return img;
  };
  auto dequant = [](std::vector<uint8_t> img, std::vector<float> &out) {
    zt_file *f = nullptr;
    EXPECT_EQ(ZT_OK, zt_open_memory(img.data(), img.size(), nullptr, &f)) << zt_last_error();
    const zt_object *q = nullptr;
    EXPECT_EQ(ZT_OK, zt_file_object_by_name(f, "q", 1, &q));
    out.assign(16, -1);
    zt_status st = zt_object_dequantize(q, out.data(), out.size());
    std::string msg = zt_last_error();
    if (st == ZT_OK) {
      zt_quant_info qi{};
      qi.struct_size = sizeof qi;
      EXPECT_EQ(ZT_OK, zt_object_quant_info(q, &qi)) << zt_last_error();
      EXPECT_EQ(4u, qi.bits);
      EXPECT_EQ(4u, qi.groups);
    }
    zt_close(f);
    return std::make_pair(st, msg);
  };
  std::vector<float> out;
  ASSERT_EQ(ZT_OK, dequant(file({{"form", t("implied")}, {"value", u(8)}}), out).first);
  const std::vector<float> implied = {-8, -7, -6, -5, -8, -6, -4, -2, 0, 0.5f, 1, 1.5f, 16, 20, 24, 28};
  EXPECT_EQ(implied, out);
  ASSERT_EQ(ZT_OK, dequant(file({{"form", t("none")}}), out).first);
  EXPECT_EQ(0, out[0]);
  EXPECT_EQ(60, out[15]);  // 15 x 4
  ASSERT_EQ(ZT_OK, dequant(file({{"form", t("tensor")}, {"packing", t("plain")}}), out).first);
  EXPECT_EQ(-1, out[0]);   // (0 - 1) x 1
  EXPECT_EQ(52, out[15]);  // (15 - 2) x 4
  auto r = dequant(file({{"form", t("none")}}, "msb_first"), out);
  EXPECT_EQ(ZT_E_UNSUPPORTED, r.first);
  EXPECT_NE(r.second.find("packing order 'msb_first'"), std::string::npos) << r.second;
}

// ---- zt.mx/1 -------------------------------------------------------------

// [2, 64] MXFP4: 128 elements, 64 bytes; 4 blocks of 32, 4 scale bytes.
std::string mx(Fields a, const std::string &dtype = "u8", const char *type = "f4_e2m1", uint64_t dlen = 64,
               uint64_t slen = 4, const char *stype = "f8_e8m0", std::vector<uint64_t> shape = {2, 64}) {
  Fields dx, sx;
  if (type) dx.push_back({"type", t(type)});
  if (stype) sx.push_back({"type", t(stype)});
  return object(shape, "zt.mx/1", {{"data", part(dtype, 4096, dlen, dx)}, {"scales", part("u8", 8192, slen, sx)}},
                attrs(a));
}
Fields mx_attrs() {
  return {{"block_size", u(32)}, {"scale_form", t("e8m0_exponent")}};
}

TEST(V2Profiles, Mx) {
  EXPECT_EQ("", refusal(mx(mx_attrs())));
  EXPECT_EQ("", refusal(mx(mx_attrs(), "u8", "f8_e4m3fn", 128)));
  EXPECT_EQ("", refusal(mx(mx_attrs(), "i8", nullptr, 128)));
  EXPECT_EQ("", refusal(mx({{"block_size", u(2)}, {"scale_form", t("e8m0_exponent")}, {"axis", u(0)}}, "u8", "f4_e2m1",
                           64, 64)));
  EXPECT_REFUSED(mx({{"scale_form", t("e8m0_exponent")}}), "'block_size'");
  EXPECT_REFUSED(mx({{"block_size", u(32)}}), "'scale_form'");
  EXPECT_REFUSED(mx({{"block_size", u(32)}, {"scale_form", t("f32_factors")}}), "scale_form must be");
  EXPECT_REFUSED(mx({{"block_size", u(1)}, {"scale_form", t("e8m0_exponent")}}), "at least 2");
  EXPECT_REFUSED(mx({{"block_size", u(48)}, {"scale_form", t("e8m0_exponent")}}), "does not divide shape[axis]");
  EXPECT_REFUSED(mx({{"block_size", u(32)}, {"scale_form", t("e8m0_exponent")}, {"axis", u(2)}}),
                 "axis 2 is not below");
  EXPECT_REFUSED(mx(mx_attrs(), "u8", nullptr, 128), "'data' must be");
  EXPECT_REFUSED(mx(mx_attrs(), "u8", "f8_e4m3fn", 64), "'data' decoded size 64");
  EXPECT_REFUSED(mx(mx_attrs(), "u8", "f4_e2m1", 64, 5), "'scales' decoded size 5");
  EXPECT_REFUSED(mx(mx_attrs(), "u8", "f4_e2m1", 64, 4, nullptr), "'scales' must be u8 with type f8_e8m0");
  EXPECT_REFUSED(mx(mx_attrs(), "u8", "f4_e2m1", 64, 4, "f8_e8m0", {}), "rank >= 1");
}

// ---- gguf.<type>/1 -------------------------------------------------------

std::string gg(Fields a, uint64_t len = 136, std::vector<uint64_t> shape = {2, 64}, const std::string &dt = "u8",
               const std::string &id = "gguf.q8_0/1") {
  return object(shape, id, {{"data", part(dt, 4096, len)}}, attrs(a));
}
Fields q8() {
  return {{"elems_per_block", u(32)}, {"block_bytes", u(34)}};
}

TEST(V2Profiles, Gguf) {
  EXPECT_EQ("", refusal(gg(q8())));  // 4 blocks x 34 bytes, passed through
  EXPECT_EQ("", refusal(gg({{"elems_per_block", u(256)}, {"block_bytes", u(144)}}, 144, {256}, "u8", "gguf.q4_k/1")));
  EXPECT_REFUSED(gg({{"block_bytes", u(34)}}), "'elems_per_block'");
  EXPECT_REFUSED(gg({{"elems_per_block", u(32)}}), "'block_bytes'");
  EXPECT_REFUSED(gg({{"elems_per_block", u(0)}, {"block_bytes", u(34)}}), "elems_per_block must be at least 1");
  EXPECT_REFUSED(gg({{"elems_per_block", u(32)}, {"block_bytes", u(0)}}), "block_bytes must be at least 1");
  EXPECT_REFUSED(gg(q8(), 135), "'data' decoded size 135");
  EXPECT_REFUSED(gg(q8(), 136, {2, 64}, "i8"), "plain u8");
  EXPECT_REFUSED(gg(q8(), 102, {2, 48}), "fastest-varying");
  EXPECT_REFUSED(gg(q8(), 136, {3, 7}), "does not divide the 21 elements");
  // A ggml type the profile does not list: structural, not validated.
  EXPECT_EQ("", refusal(gg(q8(), 5, {2, 64}, "u8", "gguf.q9_z/1")));
}

}  // namespace
