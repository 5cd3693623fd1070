// Migration between the generations (docs/v2.md, Migration): zt_migrate of
// a v2 file to spec 1.2 maps every v2 feature 1.2 can hold and refuses the
// rest naming object and profile, writing nothing; round trips 1.2 → v2 →
// 1.2 keep every object, component, attribute and byte; v2 canonical → 1.2
// → v2 canonical gives the same bytes; --to 2 of a canonical v2 file is the
// identity; 0.1 and 1.1 inputs reach v2.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "v2_model.h"

using namespace zttest::v2model;
using zttest::Cbor;
using zttest::TempDir;

namespace {

class V2Migrate : public ::testing::Test {
 protected:
  TempDir tmp;
  std::string path(const std::string &n) { return tmp.path() + "/" + n; }
};

TEST_F(V2Migrate, V2To12MapsEveryFeature) {
  const std::string two = path("two.zt"), one = path("one.zt");
  ASSERT_EQ(ZT_OK, write_v2(two, mappable_model(), file_attrs())) << zt_last_error();
  ASSERT_EQ(ZT_OK, migrate(two, one, 1)) << zt_last_error();
  zt_file *f = nullptr;
  ASSERT_EQ(ZT_OK, zt_open(one.c_str(), nullptr, &f));
  const char *version = nullptr;
  zt_file_version(f, &version);
  EXPECT_STREQ("1.2.0", version);
  struct Want {
    const char *object, *format, *role, *dtype, *type, *digest;
  };
  for (const Want &w : {Want{"bool", "dense", "data", "bool", nullptr, "crc32c:"},
                        Want{"c128", "dense", "data", "f64", "complex128", "crc32c:"},
                        Want{"f8d", "dense", "data", "u8", "f8_e5m2fnuz", "crc32c:"},
                        Want{"csr", "sparse_csr", "indices", "u64", nullptr, "crc32c:"},
                        Want{"coo", "sparse_coo", "coords", "u64", nullptr, "crc32c:"},
                        Want{"qg8", "quantized_group", "packed_weight", "u8", nullptr, "crc32c:"},
                        Want{"qg16", "quantized_group", "packed_weight", "u32", nullptr, "crc32c:"}}) {
    const zt_object *o = nullptr;
    ASSERT_EQ(ZT_OK, zt_file_object_by_name(f, w.object, std::strlen(w.object), &o)) << w.object;
    EXPECT_STREQ(w.format, zttest::object_info(o).format) << w.object;
    size_t k = 0;
    ASSERT_EQ(ZT_OK, zt_object_component_index(o, w.role, &k)) << w.object << " " << w.role;
    const zt_component_info c = zttest::component_info(o, k);
    EXPECT_STREQ(w.dtype, c.dtype_name) << w.object;
    if (w.type)
      EXPECT_STREQ(w.type, c.logical_type) << w.object;
    else
      EXPECT_EQ(nullptr, c.logical_type) << w.object;
    ASSERT_NE(nullptr, c.digest);
    EXPECT_EQ(0, std::strncmp(c.digest, w.digest, std::strlen(w.digest))) << c.digest;  // xxh3 → crc32c
  }
  // The quant groups' 1.x attributes: bits, group_size and the packing
  // name; scale_form only when it is not 1.x's f32; unknown keys kept.
  const zt_object *q = nullptr;
  ASSERT_EQ(ZT_OK, zt_file_object_by_name(f, "qg16", 4, &q));
  const uint8_t *a = nullptr;
  size_t alen = 0;
  ASSERT_EQ(ZT_OK, zt_object_attributes_cbor(q, &a, &alen));
  EXPECT_EQ(Json::parse(R"({"$origin":"awq","bits":4,"group_size":8,"packing":"8_per_i32",
                            "scale_form":"f16_factors"})"),
            attrs_json(a, alen));
  ASSERT_EQ(ZT_OK, zt_file_object_by_name(f, "qg8", 3, &q));
  ASSERT_EQ(ZT_OK, zt_object_attributes_cbor(q, &a, &alen));
  EXPECT_EQ(Json::parse(R"({"bits":8,"group_size":4,"packing":"1_per_u8"})"), attrs_json(a, alen));
  zt_close(f);
  // Every decoded byte and attribute ($-keys included) is the same, under
  // the 1.2 names.
  Json c1 = content(one), c2 = content(two);
  c2["objects"]["bool"]["components"]["data"]["dtype"] = "bool";
  c2["objects"]["bool"]["components"]["data"]["type"] = nullptr;
  for (const char *qg : {"qg8", "qg16"}) {
    c2["objects"][qg]["format"] = "quantized_group";
    c2["objects"][qg]["components"]["packed_weight"] = c2["objects"][qg]["components"]["data"];
    c2["objects"][qg]["components"].erase("data");
    c2["objects"][qg]["attributes"] = c1["objects"][qg]["attributes"];  // checked above
  }
  c2["objects"]["csr"]["format"] = "sparse_csr";
  c2["objects"]["coo"]["format"] = "sparse_coo";
  EXPECT_EQ(c2, c1) << c2.dump() << "\n" << c1.dump();
  EXPECT_EQ(Json::parse(R"({"$bytes":"text, not bytes","$map":1,"name":"m"})"), c1["attributes"]);
}

TEST_F(V2Migrate, V2CanonicalTo12ToV2CanonicalIsTheSameBytes) {
  std::vector<std::string> inputs = {path("model.zt")};
  ASSERT_EQ(ZT_OK, write_v2(inputs[0], mappable_model(), file_attrs())) << zt_last_error();
  for (const char *g : {"many.zt", "zeros.zt", "empty.zt"})
    inputs.push_back(source_path(std::string("v2-golden/") + g));
  for (const std::string &in : inputs) {
    const std::string one = path("one.zt"), back = path("back.zt");
    ASSERT_EQ(ZT_OK, migrate(in, one, 1)) << in << ": " << zt_last_error();
    ASSERT_EQ(ZT_OK, migrate(one, back, 2)) << in << ": " << zt_last_error();
    EXPECT_EQ(slurp(in), slurp(back)) << in;
    // Through a compressed 1.2 file with sha256 digests: the same.
    ASSERT_EQ(ZT_OK, migrate(in, one, 1, true, 1, ZT_DIGEST_SHA256)) << zt_last_error();
    ASSERT_EQ(ZT_OK, migrate(one, back, 2)) << zt_last_error();
    EXPECT_EQ(slurp(in), slurp(back)) << in;
  }
}

TEST_F(V2Migrate, To2OfAV2FileCanonicalises) {
  // A canonical input comes out byte-identical (the goldens were written by
  // the original's writer).
  for (const char *g : {"basic.zt", "layouts.zt", "many.zt", "zeros.zt", "empty.zt"}) {
    const std::string in = source_path(std::string("v2-golden/") + g), out = path(g);
    ASSERT_EQ(ZT_OK, migrate(in, out, 2)) << g << ": " << zt_last_error();
    EXPECT_EQ(slurp(in), slurp(out)) << g;
  }
  // A non-canonical one (8 KiB alignment, zt.zstd-seekable/1, sha256)
  // becomes the canonical file of the same tensors.
  const std::string canon = path("canon.zt"), loose = path("loose.zt"), out = path("out.zt");
  ASSERT_EQ(ZT_OK, write_v2(canon, mappable_model(), file_attrs())) << zt_last_error();
  V2Options v;
  v.canonical = false;
  v.zstd = true;
  v.digest = ZT_DIGEST_SHA256;
  ASSERT_EQ(ZT_OK, write_v2(loose, mappable_model(), file_attrs(), v)) << zt_last_error();
  ASSERT_NE(slurp(canon), slurp(loose));
  ASSERT_EQ(ZT_OK, migrate(loose, out, 2)) << zt_last_error();
  EXPECT_EQ(slurp(canon), slurp(out));
}

// 1.2 → v2 → 1.2 keeps every object, component, attribute and byte, for
// the interop files of every 1.x feature, through canonical and
// non-canonical (zstd-seekable, sha256) v2.
TEST_F(V2Migrate, From12ToV2AndBackKeepsEverything) {
  std::vector<std::string> inputs;
  for (const char *n : {"attributes", "checksum_crc32c", "checksum_sha256", "dense_all_dtypes", "dense_bool", "empty",
                        "empty_with_attributes", "large", "logical_types", "many_tensors", "quantized_group", "scalars",
                        "shapes", "sparse_coo", "sparse_csr", "zero_size", "zstd_levels"})
    inputs.push_back(source_path(std::string("interop/v1/") + n + ".zt"));
  inputs.push_back(path("from_v2.zt"));  // the 1.2 form of every v2 feature
  const std::string model = path("model.zt");
  ASSERT_EQ(ZT_OK, write_v2(model, mappable_model(), file_attrs())) << zt_last_error();
  ASSERT_EQ(ZT_OK, migrate(model, inputs.back(), 1)) << zt_last_error();
  for (const std::string &in : inputs) {
    const Json want = content(in);
    for (bool canonical : {true, false}) {
      const std::string two = path("two.zt"), back = path("back.zt");
      ASSERT_EQ(ZT_OK,
                migrate(in, two, 2, canonical, canonical ? 0 : 1, canonical ? ZT_DIGEST_UNKNOWN : ZT_DIGEST_SHA256))
          << in << ": " << zt_last_error();
      ASSERT_EQ(ZT_OK, migrate(two, back, 1)) << in << ": " << zt_last_error();
      EXPECT_EQ(want, content(back)) << in << (canonical ? " (canonical)" : " (non-canonical)");
    }
  }
}

// Spec 0.1 and 1.1 inputs reach v2 and come back as their 1.2 form.
TEST_F(V2Migrate, LegacyInputsToV2) {
  std::vector<std::string> inputs;
  for (const char *n : {"v01_crc32c", "v01_empty", "v01_raw_be", "v01_raw_le", "v01_scalar_zero", "v01_zstd"})
    inputs.push_back(source_path(std::string("interop/v0/") + n + ".zt"));
  // 1.1: fp8 and complex spelled as dtypes, u32 CSR indices (u64 in 1.2;
  // v2 keeps u32), zstd without uncompressed_length.
  {
    // Stored little-endian (le<> gives host order, what the writer takes).
    std::string fp8(16, '\x3c'), cplx(32, '\x11'), vals = zttest::le_bytes(std::vector<float>{1, 2}),
                                                   ind = zttest::le_bytes(std::vector<uint32_t>{1, 0}),
                                                   ptr = zttest::le_bytes(std::vector<uint32_t>{0, 1, 2});
    std::vector<std::string> blobs = {fp8, cplx, vals, ind, ptr};
    auto offs = zttest::layout_offsets(blobs);
    Cbor c;
    c.map(2).text("version").text("1.1.0").text("objects").map(4);
    c.text("fp8").map(3).text("shape").shape({16}).text("format").text("dense").text("components").map(1);
    c.text("data").map(3).text("dtype").text("f8_e4m3").text("offset").uint(offs[0]).text("length").uint(16);
    c.text("cx").map(3).text("shape").shape({4}).text("format").text("dense").text("components").map(1);
    c.text("data").map(3).text("dtype").text("complex64").text("offset").uint(offs[1]).text("length").uint(32);
    // "sp": u32 indices and indptr (v2 keeps them); "sq": i32 indices and
    // u32 indptr (v2 wants one plain dtype for both: widened to u64).
    for (const char *object : {"sp", "sq"}) {
      c.text(object).map(3).text("shape").shape({2, 2}).text("format").text("sparse_csr").text("components").map(3);
      const char *roles[] = {"values", "indices", "indptr"};
      const char *dtypes[] = {"f32", object[1] == 'p' ? "u32" : "i32", "u32"};
      for (int i = 0; i < 3; ++i)
        c.text(roles[i])
            .map(3)
            .text("dtype")
            .text(dtypes[i])
            .text("offset")
            .uint(offs[2 + i])
            .text("length")
            .uint(blobs[2 + i].size());
    }
    const std::string file = zttest::build_v1_file(blobs, c.bytes);
    inputs.push_back(path("v11.zt"));
    zttest::write_file(inputs.back(), file);
  }
  for (const std::string &in : inputs) {
    const std::string as12 = path("as12.zt"), two = path("two.zt"), back = path("back.zt");
    ASSERT_EQ(ZT_OK, migrate(in, as12, 1)) << in << ": " << zt_last_error();
    ASSERT_EQ(ZT_OK, migrate(in, two, 2)) << in << ": " << zt_last_error();
    zt_file *f = nullptr;
    ASSERT_EQ(ZT_OK, zt_open(two.c_str(), nullptr, &f));
    const char *version = nullptr;
    zt_file_version(f, &version);
    EXPECT_STREQ("2", version);
    for (const char *object : {"sp", "sq"}) {
      const zt_object *o = nullptr;
      if (zt_file_object_by_name(f, object, 2, &o) != ZT_OK) continue;  // only in the 1.1 file
      for (size_t k = 0; k < 3; ++k) {
        const zt_component_info ci = zttest::component_info(o, k);
        if (std::string(ci.role) != "values")
          EXPECT_STREQ(object[1] == 'p' ? "u32" : "u64", ci.dtype_name) << object << " " << ci.role;
      }
    }
    uint32_t rule = 0;
    EXPECT_EQ(ZT_OK, zt_file_canonical(f, &rule, nullptr)) << in << ": " << zt_last_error();
    zt_close(f);
    ASSERT_EQ(ZT_OK, migrate(two, back, 1)) << in << ": " << zt_last_error();
    Json want = content(as12), got = content(back);
    EXPECT_EQ(want, got) << in;
  }
}

// Copies every object of `in` (and its file fields) into a new file at out
// (zt append / merge use the same calls).
zt_status copy_file(const std::string &in, const std::string &out, uint32_t format) {
  zt_file *f = nullptr;
  zt_status st = zt_open(in.c_str(), nullptr, &f);
  if (st != ZT_OK) return st;
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  wo.format = format;
  zt_writer *w = nullptr;
  st = zt_writer_create(out.c_str(), &wo, &w);
  if (st == ZT_OK) st = zt_writer_copy_file_fields(w, &f, 1);
  size_t n = 0;
  zt_file_object_count(f, &n);
  for (size_t i = 0; st == ZT_OK && i < n; ++i) {
    const zt_object *o = nullptr;
    zt_file_object_at(f, i, &o);
    st = zt_writer_copy_object(w, o, nullptr, 0);
  }
  st = st == ZT_OK ? zt_writer_finish(w) : (zt_writer_discard(w), st);
  zt_close(f);
  return st;
}

// zt_writer_copy_object (zt append, merge) maps a v2 object into a 1.2
// writer as migration does, refuses what 1.2 cannot hold, and into a v2
// writer keeps it as it is (u32 sparse indices included).
TEST_F(V2Migrate, CopyObjectMapsLikeMigrate) {
  const std::string two = path("two.zt"), migrated = path("migrated.zt"), copied = path("copied.zt");
  ASSERT_EQ(ZT_OK, write_v2(two, mappable_model(), file_attrs())) << zt_last_error();
  ASSERT_EQ(ZT_OK, migrate(two, migrated, 1)) << zt_last_error();
  ASSERT_EQ(ZT_OK, copy_file(two, copied, 1)) << zt_last_error();
  EXPECT_EQ(content(migrated), content(copied));
  const std::string layouts = source_path("v2-golden/layouts.zt");
  EXPECT_EQ(ZT_E_UNSUPPORTED, copy_file(layouts, path("refused.zt"), 1));
  EXPECT_NE(std::string::npos, std::string(zt_last_error()).find("no spec 1.2 form")) << zt_last_error();
  EXPECT_FALSE(exists(path("refused.zt")));
  ASSERT_EQ(ZT_OK, copy_file(layouts, copied, 2)) << zt_last_error();
  EXPECT_EQ(slurp(layouts), slurp(copied)) << "a canonical copy of a canonical file is the same file";
}

// What 1.2 cannot hold is refused naming object and profile; nothing is
// written and the input is unchanged.
TEST_F(V2Migrate, V2To12RefusesWhat12CannotHold) {
  const std::string zeros_none = cbor_map_text({{"form", "none"}});
  const std::string u32x8 = pattern(16, 7), f16x4 = pattern(8, 8);
  struct Case {
    Obj obj;
    std::string want;  // in the message, besides the object's name
  };
  std::vector<Case> cases = {
      {{"mx",
        "zt.mx/1",
        {2, 32},
        Cbor().map(2).text("block_size").uint(32).text("scale_form").text("e8m0_exponent").bytes,
        {{"data", ZT_U8, "f4_e2m1", pattern(32, 6)}, {"scales", ZT_U8, "f8_e8m0", "\x7f\x80"}}},
       "zt.mx/1"},
      {{"fp4", "dense", {5}, "", {{"data", ZT_U8, "f4_e2m1", "\x21\x43\x05"}}}, "f4_e2m1"},
      {{"e8m0", "dense", {2}, "", {{"data", ZT_U8, "f8_e8m0", "\x7f\x80"}}}, "f8_e8m0"},
      {{"weird", "dense", {2}, "", {{"data", ZT_U8, "acme_f7", "ab"}}}, "logical type 'acme_f7'"},
      {{"acme", "acme.blocks/3", {4}, "", {{"data", ZT_U8, nullptr, "abcd"}}}, "acme.blocks/3"},
      {{"qn",
        "zt.quant_group/1",
        {2, 16},
        qg_attrs(4, 8, 1, "u32", 8, "lsb_first", "f32_factors", zeros_none),
        {{"data", ZT_U32, nullptr, u32x8}, {"scales", ZT_F16, nullptr, f16x4}}},
       "no zero point"},
      {{"qm",
        "zt.quant_group/1",
        {2, 16},
        qg_attrs(4, 8, 1, "u32", 8, "msb_first", "f32_factors", zero_implied(8)),
        {{"data", ZT_U32, nullptr, u32x8}, {"scales", ZT_F16, nullptr, f16x4}}},
       "msb_first"},
      {{"qz",
        "zt.quant_group/1",
        {2, 16},
        qg_attrs(4, 8, 1, "u32", 8, "lsb_first", "f32_factors", zero_implied(7)),
        {{"data", ZT_U32, nullptr, u32x8}, {"scales", ZT_F16, nullptr, f16x4}}},
       "implied zero point of 7"},
      {{"qa",
        "zt.quant_group/1",
        {16, 2},
        qg_attrs(4, 8, 0, "u32", 8, "lsb_first", "f32_factors", zero_implied(8)),
        {{"data", ZT_U32, nullptr, u32x8}, {"scales", ZT_F16, nullptr, f16x4}}},
       "axis other than the last"},
  };
  for (const Case &c : cases) {
    const std::string in = path("in-" + c.obj.name + ".zt"), out = path("out.zt");
    std::vector<Obj> objs = mappable_model();
    objs.push_back(c.obj);
    ASSERT_EQ(ZT_OK, write_v2(in, objs, file_attrs())) << c.obj.name << ": " << zt_last_error();
    const std::string before = slurp(in);
    EXPECT_EQ(ZT_E_UNSUPPORTED, migrate(in, out, 1)) << c.obj.name;
    const std::string msg = zt_last_error();
    EXPECT_NE(std::string::npos, msg.find("'" + c.obj.name + "'")) << msg;
    EXPECT_NE(std::string::npos, msg.find(c.want)) << msg;
    EXPECT_NE(std::string::npos, msg.find("spec 1.2")) << msg;
    EXPECT_FALSE(exists(out)) << c.obj.name;
    EXPECT_EQ(before, slurp(in)) << c.obj.name;
  }
  // The original's golden files: gguf and mx objects, an f4_e2m1 tensor.
  for (const char *g : {"layouts.zt", "basic.zt"}) {
    const std::string in = source_path(std::string("v2-golden/") + g), out = path("out.zt");
    EXPECT_EQ(ZT_E_UNSUPPORTED, migrate(in, out, 1)) << g;
    EXPECT_FALSE(exists(out)) << g;
  }
}

}  // namespace
