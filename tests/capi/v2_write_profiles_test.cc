// The layout profiles' rules checked when a v2 file is WRITTEN (docs/v2.md,
// "What is written, and checked before anything is"): an object whose parts
// break its profile (zt.sparse_csr/1, zt.sparse_coo/1, zt.quant_group/1,
// zt.mx/1, gguf.<type>/1, the dense size equation) is refused with a message
// naming the object, the part and the rule, and nothing reaches the
// destination: a file already there is untouched.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cbor_writer.h"
#include "test_util.h"
#include "ztensor.h"
#include "ztensor_composite.h"

using zttest::Cbor;
using zttest::TempDir;

namespace {

template <typename T>
std::string le(std::initializer_list<T> vals) {
  std::string out;
  for (T v : vals) out.append(reinterpret_cast<const char *>(&v), sizeof(T));
  return out;
}

struct Part {
  std::string role;
  zt_dtype dtype;
  const char *type;
  std::string bytes;
};
struct Obj {
  std::string name, layout;
  std::vector<uint64_t> shape;
  std::string attributes;
  std::vector<Part> parts;
};

// Writes `o` (and a sound dense tensor) to path, canonical v2; the first
// failing status, its message in *msg.
zt_status write(const std::string &path, const Obj &o, std::string *msg, bool stream = false) {
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  wo.format = 2;
  zt_writer *w = nullptr;
  zt_status st = zt_writer_create(path.c_str(), &wo, &w);
  if (st != ZT_OK) return st;
  const uint64_t n = 2;
  const float ok[2] = {1, 2};
  st = zt_writer_add_dense(w, "a.fine", 6, ZT_F32, &n, 1, ok, sizeof ok, nullptr);
  if (st == ZT_OK)
    st = zt_writer_begin_object(w, o.name.data(), o.name.size(), o.layout.c_str(), o.shape.data(), o.shape.size());
  if (st == ZT_OK && !o.attributes.empty())
    st = zt_writer_set_object_attributes_cbor(
        w, o.name.data(), o.name.size(), reinterpret_cast<const uint8_t *>(o.attributes.data()), o.attributes.size());
  for (const Part &p : o.parts) {
    zt_blob_options bo;
    zt_blob_options_init(&bo);
    bo.logical_type = p.type;
    if (st != ZT_OK) break;
    if (stream) {
      st = zt_write_blob_begin(w, o.name.data(), o.name.size(), p.role.c_str(), p.dtype, &bo);
      if (st == ZT_OK) st = zt_write_blob_append(w, p.bytes.data(), p.bytes.size());
      if (st == ZT_OK) st = zt_write_blob_end(w);
    } else {
      st = zt_write_blob(w, o.name.data(), o.name.size(), p.role.c_str(), p.dtype, p.bytes.data(), p.bytes.size(), &bo);
    }
  }
  if (st != ZT_OK) {
    *msg = zt_last_error();
    zt_writer_discard(w);
    return st;
  }
  st = zt_writer_finish(w);
  *msg = st == ZT_OK ? "" : zt_last_error();
  return st;
}

std::string gguf_attrs(uint64_t epb, uint64_t bb) {
  return Cbor().map(2).text("block_bytes").uint(bb).text("elems_per_block").uint(epb).bytes;
}

std::string qg_attrs(uint64_t bits, uint64_t per_word, bool with_bits = true) {
  Cbor c;
  c.map(with_bits ? 6 : 5);
  if (with_bits) c.text("bits").uint(bits);
  c.text("group_size").uint(8).text("axis").uint(1);
  c.text("packing").map(3).text("word").text("u32").text("order").text("lsb_first").text("per_word").uint(per_word);
  c.text("scale_form").text("f32_factors");
  c.text("zero_point").map(2).text("form").text("implied").text("value").uint(8);
  return c.bytes;
}

const std::string k16(16, '\x11'), k8(8, '\x22');

struct Case {
  const char *what;
  Obj obj;
  zt_status status;
  std::vector<std::string> said;  // in the message
};

std::vector<Case> cases() {
  const std::string csr_vals = le<float>({1, 2, 3, 4});
  return {
      {"csr: indptr of the wrong size",
       {"csr",
        "zt.sparse_csr/1",
        {3, 4},
        "",
        {{"values", ZT_F32, nullptr, csr_vals},
         {"indices", ZT_U64, nullptr, le<uint64_t>({0, 2, 1, 3})},
         {"indptr", ZT_U64, nullptr, le<uint64_t>({0, 2, 4})}}},
       ZT_E_SPARSE_INDPTR,
       {"'csr'", "'indptr'", "LayoutRule", "zt.sparse_csr/1"}},
      {"csr: i32 indices",
       {"csr",
        "zt.sparse_csr/1",
        {3, 4},
        "",
        {{"values", ZT_F32, nullptr, csr_vals},
         {"indices", ZT_I32, nullptr, le<int32_t>({0, 2, 1, 3})},
         {"indptr", ZT_I32, nullptr, le<int32_t>({0, 2, 3, 4})}}},
       ZT_E_INDEX_DTYPE,
       {"'csr'", "'indices'", "LayoutRule"}},
      {"csr: values not nnz long",
       {"csr",
        "zt.sparse_csr/1",
        {3, 4},
        "",
        {{"values", ZT_F32, nullptr, le<float>({1, 2, 3})},
         {"indices", ZT_U64, nullptr, le<uint64_t>({0, 2, 1, 3})},
         {"indptr", ZT_U64, nullptr, le<uint64_t>({0, 2, 3, 4})}}},
       ZT_E_SPARSE_NNZ,
       {"'csr'", "'values'", "LayoutRule"}},
      {"csr: a part missing",
       {"csr",
        "zt.sparse_csr/1",
        {3, 4},
        "",
        {{"values", ZT_F32, nullptr, csr_vals}, {"indices", ZT_U64, nullptr, le<uint64_t>({0, 2, 1, 3})}}},
       ZT_E_COMPONENT_MISSING,
       {"'csr'", "'indptr'", "LayoutRule"}},
      {"coo: coords not ndim x nnz",
       {"coo",
        "zt.sparse_coo/1",
        {4, 4},
        "",
        {{"values", ZT_F32, nullptr, le<float>({1, 2, 3})},
         {"coords", ZT_U64, nullptr, le<uint64_t>({0, 1, 3, 2, 0})}}},
       ZT_E_LENGTH,
       {"'coo'", "'coords'", "LayoutRule", "zt.sparse_coo/1"}},
      {"coo: f32 coords",
       {"coo",
        "zt.sparse_coo/1",
        {4, 4},
        "",
        {{"values", ZT_F32, nullptr, le<float>({1})}, {"coords", ZT_F32, nullptr, le<float>({0, 1})}}},
       ZT_E_INDEX_DTYPE,
       {"'coo'", "'coords'", "LayoutRule"}},
      {"quant_group: bits missing",
       {"qg",
        "zt.quant_group/1",
        {2, 16},
        qg_attrs(4, 8, false),
        {{"data", ZT_U32, nullptr, k16}, {"scales", ZT_F16, nullptr, k8}}},
       ZT_E_FIELD,
       {"'qg'", "'bits'", "LayoutRule", "zt.quant_group/1"}},
      {"quant_group: per_word disagrees",
       {"qg",
        "zt.quant_group/1",
        {2, 16},
        qg_attrs(4, 4),
        {{"data", ZT_U32, nullptr, k16}, {"scales", ZT_F16, nullptr, k8}}},
       ZT_E_FIELD,
       {"'qg'", "per_word", "LayoutRule"}},
      {"quant_group: scales of the wrong size",
       {"qg",
        "zt.quant_group/1",
        {2, 16},
        qg_attrs(4, 8),
        {{"data", ZT_U32, nullptr, k16}, {"scales", ZT_F16, nullptr, std::string(6, '\1')}}},
       ZT_E_LENGTH,
       {"'qg'", "'scales'", "LayoutRule"}},
      {"mx: block_size missing",
       {"mx",
        "zt.mx/1",
        {2, 32},
        Cbor().map(1).text("scale_form").text("e8m0_exponent").bytes,
        {{"data", ZT_U8, "f4_e2m1", std::string(32, '\0')}, {"scales", ZT_U8, "f8_e8m0", "\x7f\x80"}}},
       ZT_E_FIELD,
       {"'mx'", "'block_size'", "LayoutRule", "zt.mx/1"}},
      {"mx: one scale short",
       {"mx",
        "zt.mx/1",
        {2, 32},
        Cbor().map(2).text("block_size").uint(32).text("scale_form").text("e8m0_exponent").bytes,
        {{"data", ZT_U8, "f4_e2m1", std::string(32, '\0')}, {"scales", ZT_U8, "f8_e8m0", "\x7f"}}},
       ZT_E_LENGTH,
       {"'mx'", "'scales'", "LayoutRule", "zt.mx/1"}},
      {"gguf: data one byte short",
       {"gg", "gguf.q8_0/1", {2, 32}, gguf_attrs(32, 34), {{"data", ZT_U8, nullptr, std::string(67, '\5')}}},
       ZT_E_LENGTH,
       {"'gg'", "'data'", "LayoutRule", "gguf.q8_0/1"}},
      {"gguf: a block spanning two rows",
       {"gg", "gguf.q8_0/1", {4, 16}, gguf_attrs(32, 34), {{"data", ZT_U8, nullptr, std::string(68, '\5')}}},
       ZT_E_SHAPE,
       {"'gg'", "LayoutRule", "two rows"}},
      {"gguf: no attributes",
       {"gg", "gguf.q8_0/1", {2, 32}, "", {{"data", ZT_U8, nullptr, std::string(68, '\5')}}},
       ZT_E_FIELD,
       {"'gg'", "LayoutRule", "attributes"}},
  };
}

class V2WriteProfiles : public ::testing::Test {
 protected:
  TempDir tmp;
};

TEST_F(V2WriteProfiles, EachBreachIsRefusedAndNothingIsWritten) {
  const std::string dest = tmp.path() + "/model.zt";
  for (bool stream : {false, true}) {
    for (const Case &c : cases()) {
      zttest::write_file(dest, "the user's file");
      std::string msg;
      EXPECT_EQ(c.status, write(dest, c.obj, &msg, stream)) << c.what << ": " << msg;
      for (const std::string &s : c.said) EXPECT_NE(std::string::npos, msg.find(s)) << c.what << ": " << msg;
      EXPECT_EQ("the user's file", zttest::read_file(dest)) << c.what;
    }
  }
}

// The same objects made sound are written, and read back without a
// complaint: the checks refuse only what a reader would.
TEST_F(V2WriteProfiles, SoundObjectsPass) {
  const std::string dest = tmp.path() + "/model.zt";
  std::vector<Obj> sound = {
      {"csr",
       "zt.sparse_csr/1",
       {3, 4},
       "",
       {{"values", ZT_F32, nullptr, le<float>({1, 2, 3, 4})},
        {"indices", ZT_U32, nullptr, le<uint32_t>({0, 2, 1, 3})},
        {"indptr", ZT_U32, nullptr, le<uint32_t>({0, 2, 3, 4})}}},
      {"coo",
       "zt.sparse_coo/1",
       {4, 4},
       "",
       {{"values", ZT_F32, nullptr, le<float>({1, 2, 3})},
        {"coords", ZT_U64, nullptr, le<uint64_t>({0, 1, 3, 2, 0, 1})}}},
      {"qg",
       "zt.quant_group/1",
       {2, 16},
       qg_attrs(4, 8),
       {{"data", ZT_U32, nullptr, k16}, {"scales", ZT_F16, nullptr, k8}}},
      {"mx",
       "zt.mx/1",
       {2, 32},
       Cbor().map(2).text("block_size").uint(32).text("scale_form").text("e8m0_exponent").bytes,
       {{"data", ZT_U8, "f4_e2m1", std::string(32, '\0')}, {"scales", ZT_U8, "f8_e8m0", "\x7f\x80"}}},
      {"gg", "gguf.q8_0/1", {2, 32}, gguf_attrs(32, 34), {{"data", ZT_U8, nullptr, std::string(68, '\5')}}},
      {"own", "acme.blocks/3", {4}, "", {{"anything", ZT_U8, nullptr, "abc"}}},  // unknown: the caller's
  };
  for (const Obj &o : sound) {
    std::string msg;
    ASSERT_EQ(ZT_OK, write(dest, o, &msg)) << o.name << ": " << msg;
    zt_file *f = nullptr;
    ASSERT_EQ(ZT_OK, zt_open(dest.c_str(), nullptr, &f)) << zt_last_error();
    const zt_object *obj = nullptr;
    ASSERT_EQ(ZT_OK, zt_file_object_by_name(f, o.name.data(), o.name.size(), &obj));
    zt_object_info info{};
    info.struct_size = sizeof info;
    zt_object_get_info(obj, &info);
    EXPECT_EQ(ZT_OK, info.status) << o.name;
    zt_close(f);
  }
}

// The dense size equation: refused as the part is written (whole) or ends
// (streamed), naming object, part and the rule.
TEST_F(V2WriteProfiles, DenseSizeEquation) {
  const std::string dest = tmp.path() + "/model.zt";
  for (bool stream : {false, true}) {
    for (const Obj &o : std::vector<Obj>{
             {"d", "dense", {3}, "", {{"data", ZT_F32, nullptr, le<float>({1, 2})}}},
             {"c", "dense", {2}, "", {{"data", ZT_F32, "complex64", le<float>({1, 2})}}},
             {"f4", "dense", {5}, "", {{"data", ZT_U8, "f4_e2m1", std::string("\x21\x43", 2)}}},
         }) {
      zttest::write_file(dest, "the user's file");
      std::string msg;
      EXPECT_EQ(ZT_E_LENGTH, write(dest, o, &msg, stream)) << o.name << ": " << msg;
      EXPECT_NE(std::string::npos, msg.find("'" + o.name + "'")) << msg;
      EXPECT_NE(std::string::npos, msg.find("'data'")) << msg;
      EXPECT_NE(std::string::npos, msg.find("dense size equation")) << msg;
      EXPECT_EQ("the user's file", zttest::read_file(dest)) << o.name;
    }
  }
}

// The data rules v2 adds to 1.2's sparse ones: a CSR row whose column
// indices do not strictly increase, a COO cell named twice. 1.2 allows
// both; a v2 writer refuses them (zt_writer_add_csr / _coo at once;
// zt_migrate --to 2 and zt_writer_copy_object of such a 1.2 object too),
// naming the object, the part and the rule, with nothing written.
TEST_F(V2WriteProfiles, SparseDataRules) {
  const std::string one = tmp.path() + "/one.zt", two = tmp.path() + "/two.zt";
  const float vals[3] = {1, 2, 3};
  const uint64_t indices[3] = {2, 1, 3}, indptr[3] = {0, 2, 3};           // row 0: 2 then 1
  const uint64_t shape[2] = {4, 4}, coords[6] = {0, 1, 0, /**/ 3, 2, 3};  // (0,3) twice
  for (uint32_t format : {1u, 2u}) {
    for (bool csr : {true, false}) {
      zt_writer_options wo;
      zt_writer_options_init(&wo);
      wo.sync = 0;
      wo.format = format;
      zt_writer *w = nullptr;
      ASSERT_EQ(ZT_OK, zt_writer_create(one.c_str(), &wo, &w));
      const zt_status st = csr ? zt_writer_add_csr(w, "s", 1, 2, 4, ZT_F32, vals, 3, indices, indptr, nullptr)
                               : zt_writer_add_coo(w, "s", 1, shape, 2, ZT_F32, vals, 3, coords, nullptr);
      if (format == 1) {
        EXPECT_EQ(ZT_OK, st) << zt_last_error();  // 1.2 allows both
        ASSERT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
        // Its v2 migration is refused, and writes nothing.
        zt_migrate_options mo;
        zt_migrate_options_init(&mo);
        mo.sync = 0;
        mo.format = 2;
        EXPECT_EQ(ZT_E_SPARSE_INDEX, zt_migrate(one.c_str(), two.c_str(), &mo)) << csr;
        const std::string msg = zt_last_error();
        EXPECT_NE(std::string::npos, msg.find("LayoutData")) << msg;
        EXPECT_NE(std::string::npos, msg.find("object 's'")) << msg;
        EXPECT_NE(std::string::npos, msg.find(csr ? "'indices'" : "'coords'")) << msg;
        EXPECT_NE(std::string::npos, msg.find(csr ? "zt.sparse_csr/1" : "zt.sparse_coo/1")) << msg;
        std::FILE *f = std::fopen(two.c_str(), "rb");
        EXPECT_EQ(nullptr, f) << "a refused migration wrote its output";
        if (f) std::fclose(f);
        std::remove(one.c_str());
      } else {
        EXPECT_EQ(ZT_E_SPARSE_INDEX, st) << csr;
        const std::string msg = zt_last_error();
        EXPECT_NE(std::string::npos, msg.find("LayoutData")) << msg;
        EXPECT_NE(std::string::npos, msg.find(csr ? "does not strictly increase" : "name the same cell")) << msg;
        zt_writer_discard(w);
      }
    }
  }
}

}  // namespace
