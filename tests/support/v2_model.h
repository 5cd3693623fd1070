// Fixtures of the v2 migration tests (tests/capi/v2_migrate_test.cc): v2
// files written through the C ABI with every feature spec 1.2 can hold,
// zt_migrate with a format, and what a reader sees of a file (storage
// aside) as JSON, to compare files across generations.
#pragma once

#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cbor_writer.h"
#include "test_util.h"
#include "zt_walk.h"
#include "ztensor.h"

namespace zttest::v2model {

using Json = nlohmann::json;

inline std::string slurp(const std::string &path) {
  return zttest::read_file(path);
}

inline bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

inline std::string source_path(const std::string &rel) {
  const char *root = std::getenv("ZT_SOURCE_ROOT");
  return std::string(root ? root : ".") + "/tests/data/" + rel;
}

// The host-order bytes of `vals`: what the writer takes (it stores them
// little-endian). Bytes planted in a hand-built file: zttest::le_bytes.
template <typename T>
inline std::string le(std::initializer_list<T> vals) {
  std::string out;
  for (T v : vals) out.append(reinterpret_cast<const char *>(&v), sizeof(T));
  return out;
}

inline std::string pattern(size_t n, size_t k) {
  std::string v(n, '\0');
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 7 + k * 13) & 0xff);
  return v;
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
  std::string attributes;  // CBOR, "" = none
  std::vector<Part> parts;
};

struct V2Options {
  bool canonical = true;
  bool zstd = false;
  zt_digest_alg digest = ZT_DIGEST_XXH3;
};

// Writes a v2 file through the C ABI; the status of the first failing call.
inline zt_status write_v2(const std::string &path, const std::vector<Obj> &objs, const std::string &file_attrs,
                          const V2Options &v = {}) {
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  wo.format = 2;
  wo.canonical = v.canonical;
  if (!v.canonical) {
    wo.alignment = 8192;
    wo.v2_digest = v.digest;
    if (v.zstd) wo.encoding = ZT_ENCODING_ZSTD;
  }
  zt_writer *w = nullptr;
  zt_status st = zt_writer_create(path.c_str(), &wo, &w);
  if (st != ZT_OK) return st;
  if (!file_attrs.empty())
    st = zt_writer_set_attributes_cbor(w, reinterpret_cast<const uint8_t *>(file_attrs.data()), file_attrs.size());
  for (const Obj &o : objs) {
    if (st == ZT_OK)
      st = zt_writer_begin_object(w, o.name.data(), o.name.size(), o.layout.c_str(), o.shape.data(), o.shape.size());
    if (st == ZT_OK && !o.attributes.empty())
      st = zt_writer_set_object_attributes_cbor(
          w, o.name.data(), o.name.size(), reinterpret_cast<const uint8_t *>(o.attributes.data()), o.attributes.size());
    for (const Part &p : o.parts) {
      zt_blob_options bo;
      zt_blob_options_init(&bo);
      bo.logical_type = p.type;
      if (st == ZT_OK)
        st = zt_write_blob(w, o.name.data(), o.name.size(), p.role.c_str(), p.dtype, p.bytes.data(), p.bytes.size(),
                           &bo);
    }
  }
  if (st != ZT_OK) {
    zt_writer_discard(w);
    return st;
  }
  return zt_writer_finish(w);
}

inline zt_status migrate(const std::string &in, const std::string &out, uint32_t format, bool canonical = true,
                         int recompress = 0, zt_digest_alg digest = ZT_DIGEST_UNKNOWN) {
  zt_migrate_options mo;
  zt_migrate_options_init(&mo);
  mo.sync = 0;
  mo.format = format;
  mo.canonical = canonical;
  mo.recompress = recompress;
  mo.digest = digest;
  return zt_migrate(in.c_str(), out.c_str(), &mo);
}

inline Json attrs_json(const uint8_t *cbor, size_t len) {
  if (!cbor || !len) return Json();
  return Json::from_cbor(cbor, cbor + len, true, true, Json::cbor_tag_handler_t::store);
}

// Everything a reader sees of a file, storage aside (offsets, encodings,
// digest algorithms): file attributes; per object name, format, shape,
// attributes; per component role, dtype, logical type and decoded bytes.
inline Json content(const std::string &path) {
  zt_file *f = nullptr;
  EXPECT_EQ(ZT_OK, zt_open(path.c_str(), nullptr, &f)) << path << ": " << zt_last_error();
  if (!f) return Json();
  EXPECT_EQ(ZT_OK, zt_file_verify(f, 1, nullptr, nullptr)) << path << ": " << zt_last_error();
  Json out;
  const uint8_t *a = nullptr;
  size_t alen = 0;
  zt_file_attributes_cbor(f, &a, &alen);
  out["attributes"] = attrs_json(a, alen);
  size_t n = 0;
  zt_file_object_count(f, &n);
  for (size_t i = 0; i < n; ++i) {
    const zt_object *o = nullptr;
    zt_file_object_at(f, i, &o);
    const zt_object_info info = zttest::object_info(o);
    Json jo;
    jo["format"] = std::string(info.format);
    jo["shape"] = std::vector<uint64_t>(info.shape, info.shape + info.ndim);
    zt_object_attributes_cbor(o, &a, &alen);
    jo["attributes"] = info.has_attributes ? attrs_json(a, alen) : Json();
    for (size_t k = 0; k < info.component_count; ++k) {
      const zt_component_info c = zttest::component_info(o, k);
      std::string bytes(c.decoded_length, '\0');
      size_t got = 0;
      EXPECT_EQ(ZT_OK, zt_component_read(o, k, bytes.data(), bytes.size(), &got)) << zt_last_error();
      Json jc;
      jc["dtype"] = std::string(c.dtype_name);
      jc["type"] = c.logical_type ? Json(std::string(c.logical_type)) : Json();
      jc["bytes_sha256"] = zttest::sha256_hex(bytes.data(), got);
      jo["components"][std::string(c.role, c.role_len)] = jc;
    }
    out["objects"][std::string(info.name, info.name_len)] = jo;
  }
  zt_close(f);
  return out;
}

inline std::string cbor_map_text(std::initializer_list<std::pair<const char *, const char *>> kv) {
  Cbor c;
  c.map(kv.size());
  for (const auto &p : kv) c.text(p.first).text(p.second);
  return c.bytes;
}

// zt.quant_group/1 attributes; `zero` is the zero_point map's CBOR.
inline std::string qg_attrs(uint64_t bits, uint64_t group, uint64_t axis, const char *word, uint64_t per_word,
                            const char *order, const char *scale_form, const std::string &zero,
                            bool extra_key = false) {
  Cbor c;
  c.map(extra_key ? 7 : 6);
  c.text("bits").uint(bits).text("group_size").uint(group).text("axis").uint(axis);
  c.text("packing").map(3).text("word").text(word).text("order").text(order).text("per_word").uint(per_word);
  c.text("scale_form").text(scale_form).text("zero_point").raw(zero);
  if (extra_key) c.text("$origin").text("awq");  // a key the profile does not define is kept
  return c.bytes;
}

inline std::string zero_implied(int64_t v) {
  Cbor c;
  c.map(2).text("form").text("implied").text("value");
  if (v < 0)
    c.negint(v);
  else
    c.uint(static_cast<uint64_t>(v));
  return c.bytes;
}

// A v2 model with every feature spec 1.2 can hold.
inline std::vector<Obj> mappable_model() {
  Cbor oa;  // object attributes with a $-key and nesting
  oa.map(2).text("$bytes").text("not bytes").text("unit").map(1).text("$float").text("nan");
  return {
      {"bool", "dense", {5}, "", {{"data", ZT_U8, "bool", std::string("\0\1\1\0\1", 5)}}},
      {"bf16", "dense", {2, 4}, oa.bytes, {{"data", ZT_BF16, nullptr, pattern(16, 1)}}},
      {"c128", "dense", {2}, "", {{"data", ZT_F64, "complex128", le<double>({1, -1, 0.5, 2})}}},
      {"c64", "dense", {3}, "", {{"data", ZT_F32, "complex64", le<float>({1, -1, 0.5f, 2, 3, 4})}}},
      {"coo",
       "zt.sparse_coo/1",
       {4, 4},
       "",
       {{"coords", ZT_U64, nullptr, le<uint64_t>({0, 1, 3, 2, 0, 1})},
        {"values", ZT_F32, nullptr, le<float>({1, 2, 3})}}},
      {"csr",
       "zt.sparse_csr/1",
       {3, 4},
       "",
       {{"indices", ZT_U64, nullptr, le<uint64_t>({0, 2, 1, 3})},
        {"indptr", ZT_U64, nullptr, le<uint64_t>({0, 2, 3, 4})},
        {"values", ZT_F32, nullptr, le<float>({1, 2, 3, 4})}}},
      {"empty", "dense", {0, 3}, "", {{"data", ZT_I64, nullptr, ""}}},
      {"f8a", "dense", {3}, "", {{"data", ZT_U8, "f8_e4m3fn", "\x38\x40\xb8"}}},
      {"f8b", "dense", {3}, "", {{"data", ZT_U8, "f8_e5m2", "\x3c\x40\xbc"}}},
      {"f8c", "dense", {2}, "", {{"data", ZT_U8, "f8_e4m3fnuz", "\x40\x48"}}},
      {"f8d", "dense", {2}, "", {{"data", ZT_U8, "f8_e5m2fnuz", "\x40\x44"}}},
      {"i8", "dense", {4}, "", {{"data", ZT_I8, nullptr, "\x01\xff\x7f\x80"}}},
      {"qg16",
       "zt.quant_group/1",
       {2, 16},
       qg_attrs(4, 8, 1, "u32", 8, "lsb_first", "f16_factors", zero_implied(8), true),
       {{"data", ZT_U32, nullptr, pattern(16, 7)}, {"scales", ZT_F16, nullptr, pattern(8, 8)}}},
      {"qg8",
       "zt.quant_group/1",
       {2, 8},
       qg_attrs(8, 4, 1, "u8", 1, "lsb_first", "f32_factors",
                cbor_map_text({{"form", "tensor"}, {"packing", "plain"}})),
       {{"data", ZT_U8, nullptr, pattern(16, 2)},
        {"scales", ZT_F32, nullptr, le<float>({0.5f, 1, 2, 4})},
        {"zeros", ZT_F32, nullptr, le<float>({1, 2, 3, 4})}}},
      {"scalar", "dense", {}, "", {{"data", ZT_F64, nullptr, le<double>({2.5})}}},
      {"u64", "dense", {70000}, "", {{"data", ZT_U8, nullptr, pattern(70000, 3)}}},
  };
}

inline std::string file_attrs() {
  Cbor c;  // $-keys that the JSON form must escape, and plain ones
  c.map(3).text("$bytes").text("text, not bytes").text("$map").uint(1).text("name").text("m");
  return c.bytes;
}

}  // namespace zttest::v2model
