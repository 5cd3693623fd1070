#include "corpus.h"

#include <zstd.h>

#include <cstring>
#include <tuple>
#include <utility>

#include "cbor_writer.h"
#include "test_util.h"

namespace zttest {
namespace {

// ---- A tiny manifest model that can be damaged field by field ---------------

// Map entries in order: text key → one encoded CBOR value. The value "" in a
// "components" / "objects" entry means "fill in from the children".
using Fields = std::vector<std::pair<std::string, std::string>>;

std::string U(uint64_t v) {
  return Cbor().uint(v).bytes;
}
std::string T(const std::string &s) {
  return Cbor().text(s).bytes;
}
std::string Shape(const std::vector<uint64_t> &d) {
  return Cbor().shape(d).bytes;
}

std::string encode_map(const Fields &f) {
  Cbor c;
  c.map(f.size());
  for (const auto &kv : f) c.text(kv.first).raw(kv.second);
  return c.bytes;
}

void set(Fields &f, const std::string &key, const std::string &value) {
  for (auto &kv : f)
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  f.emplace_back(key, value);
}

void erase(Fields &f, const std::string &key) {
  for (size_t i = 0; i < f.size(); ++i)
    if (f[i].first == key) f.erase(f.begin() + static_cast<std::ptrdiff_t>(i--));
}

struct Comp {
  std::string role;
  Fields f;
};

struct Obj {
  std::string name;
  Fields f;  // holds ("components", "") where the components go
  std::vector<Comp> comps;
  Comp &comp(const std::string &role) {
    for (auto &c : comps)
      if (c.role == role) return c;
    return comps.front();
  }
};

struct FileDesc {
  std::vector<std::string> blobs;
  Fields root;  // holds ("objects", "") where the objects go
  std::vector<Obj> objs;
  Obj &obj(const std::string &name) {
    for (auto &o : objs)
      if (o.name == name) return o;
    return objs.front();
  }
};

std::string encode_object(const Obj &o) {
  Fields f = o.f;
  for (auto &kv : f) {
    if (kv.first != "components" || !kv.second.empty()) continue;
    Cbor c;
    c.map(o.comps.size());
    for (const auto &comp : o.comps) c.text(comp.role).raw(encode_map(comp.f));
    kv.second = c.bytes;
  }
  return encode_map(f);
}

std::string encode_manifest(const FileDesc &d) {
  Fields f = d.root;
  for (auto &kv : f) {
    if (kv.first != "objects" || !kv.second.empty()) continue;
    Cbor c;
    c.map(d.objs.size());
    for (const auto &o : d.objs) c.text(o.name).raw(encode_object(o));
    kv.second = c.bytes;
  }
  return encode_map(f);
}

std::string build(const FileDesc &d) {
  return build_v1_file(d.blobs, encode_manifest(d));
}

// ---- Data helpers ----------------------------------------------------------

template <typename T>
std::string bytes_of(const std::vector<T> &v) {
  return zttest::le_bytes(v);  // files are little-endian on every host
}

std::string f32s(const std::vector<float> &v) {
  return bytes_of(v);
}
std::string u64s(const std::vector<uint64_t> &v) {
  return bytes_of(v);
}

std::string zstd_frame(const std::string &data, bool checksum = false) {
  ZSTD_CCtx *c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum ? 1 : 0);
  std::string out(ZSTD_compressBound(data.size()), '\0');
  size_t n = ZSTD_compress2(c, &out[0], out.size(), data.data(), data.size());
  ZSTD_freeCCtx(c);
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

// CRC-32C (Castagnoli), bitwise: independent of the library's digest code.
uint32_t crc32c(const std::string &s) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char b : s) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::string crc_digest(const std::string &s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "crc32c:0x%08X", crc32c(s));
  return buf;
}

std::string sha_digest(const std::string &s) {
  return "sha256:" + sha256_hex(s.data(), s.size());
}

Fields comp_fields(const std::string &dtype, uint64_t offset, uint64_t length) {
  return {{"dtype", T(dtype)}, {"offset", U(offset)}, {"length", U(length)}};
}

Obj dense(const std::string &name, const std::vector<uint64_t> &shape, const std::string &dtype, uint64_t offset,
          uint64_t length) {
  Obj o;
  o.name = name;
  o.f = {{"shape", Shape(shape)}, {"format", T("dense")}, {"components", ""}};
  o.comps.push_back({"data", comp_fields(dtype, offset, length)});
  return o;
}

const std::string kGood = f32s({1, 2, 3, 4});
const std::string kBad = f32s({1, 2, 3, 4, 5, 6});

// The base file: "bad" f32 [2,3] at 128 and "good" f32 [4] at 64.
FileDesc base() {
  FileDesc d;
  d.blobs = {kGood, kBad};
  d.root = {{"version", T("1.2.0")}, {"objects", ""}};
  d.objs = {dense("bad", {2, 3}, "f32", 128, 24), dense("good", {4}, "f32", 64, 16)};
  return d;
}

// A file whose "bad" object is built from components (role, dtype, bytes),
// laid out after the good blob; for composite formats.
FileDesc composite(const std::string &format, const std::vector<uint64_t> &shape,
                   const std::vector<std::tuple<std::string, std::string, std::string>> &comps,
                   const std::string &attributes = "") {
  FileDesc d;
  d.blobs = {kGood};
  for (const auto &c : comps) d.blobs.push_back(std::get<2>(c));
  auto offs = layout_offsets(d.blobs);
  d.root = {{"version", T("1.2.0")}, {"objects", ""}};
  Obj o;
  o.name = "bad";
  o.f = {{"shape", Shape(shape)}, {"format", T(format)}};
  if (!attributes.empty()) o.f.emplace_back("attributes", attributes);
  o.f.emplace_back("components", "");
  for (size_t i = 0; i < comps.size(); ++i)
    o.comps.push_back(
        {std::get<0>(comps[i]), comp_fields(std::get<1>(comps[i]), offs[i + 1], std::get<2>(comps[i]).size())});
  d.objs = {o, dense("good", {4}, "f32", 64, 16)};
  return d;
}

std::string quant_attrs(int64_t bits, int64_t group, const std::string &packing) {
  Cbor c;
  c.map(3).text("bits");
  if (bits >= 0)
    c.uint(static_cast<uint64_t>(bits));
  else
    c.negint(bits);
  c.text("group_size");
  if (group >= 0)
    c.uint(static_cast<uint64_t>(group));
  else
    c.negint(group);
  c.text("packing").text(packing);
  return c.bytes;
}

// Legacy 0.1: an array of per-tensor maps.
std::string legacy_entry(const std::string &name, uint64_t offset, uint64_t size, const std::string &dtype,
                         const std::vector<uint64_t> &shape, const Fields &extra = {}, const std::string &skip = "") {
  Fields f = {{"name", T(name)},
              {"offset", U(offset)},
              {"size", U(size)},
              {"dtype", T(dtype)},
              {"shape", Shape(shape)},
              {"encoding", T("raw")},
              {"data_endianness", T("little")}};
  for (const auto &kv : extra) set(f, kv.first, kv.second);
  erase(f, skip);
  return encode_map(f);
}

std::string legacy_file(const std::string &bad_entry, const std::string &bad_blob = kBad) {
  Cbor c;
  c.array(2).raw(legacy_entry("good", 64, 16, "float32", {4})).raw(bad_entry);
  return build_v0_file({kGood, bad_blob}, c.bytes);
}

std::string with_tail(std::string f, const std::string &tail8) {
  f.replace(f.size() - 8, 8, tail8);
  return f;
}

// Replaces the 8-byte manifest size field of a 1.x file.
std::string with_manifest_size(std::string f, uint64_t size) {
  std::string le;
  put_le64(le, size);
  f.replace(f.size() - 16, 8, le);
  return f;
}

}  // namespace

std::string good_object_bytes() {
  return kGood;
}

const char *reject_where_name(RejectWhere w) {
  switch (w) {
    case RejectWhere::Open:
      return "open";
    case RejectWhere::Object:
      return "object";
    case RejectWhere::Data:
      return "data";
    case RejectWhere::StrictVerify:
      return "strict-verify";
    case RejectWhere::Unverifiable:
      return "unverifiable";
  }
  return "?";
}

std::vector<RejectCase> reject_corpus() {
  std::vector<RejectCase> cases;
  const std::string valid = build(base());
  auto open_case = [&](const std::string &name, zt_status st, std::string bytes) {
    cases.push_back({name, std::move(bytes), st, RejectWhere::Open, "", false, 0, 0});
  };
  auto at = [&](RejectWhere where, const std::string &name, zt_status st, std::string bytes,
                const std::string &object = "bad") {
    cases.push_back({name, std::move(bytes), st, where, object, false, 0, 0});
  };
  // Damages the base file's "bad" object / its data component.
  auto obj = [&](const std::string &name, zt_status st, auto mutate) {
    FileDesc d = base();
    mutate(d, d.obj("bad"), d.obj("bad").comp("data").f);
    at(RejectWhere::Object, name, st, build(d));
  };
  auto root = [&](const std::string &name, zt_status st, auto mutate) {
    FileDesc d = base();
    mutate(d);
    open_case(name, st, build(d));
  };

  // ---- Container ------------------------------------------------------------
  open_case("header_magic_bad", ZT_E_FORMAT, "XTEN1000" + valid.substr(8));
  open_case("header_magic_v2", ZT_E_FORMAT, "ZTEN2000" + valid.substr(8));
  open_case("footer_magic_bad", ZT_E_FOOTER, with_tail(valid, "ZTEN1001"));
  open_case("footer_magic_zeros", ZT_E_FOOTER, with_tail(valid, std::string(8, '\0')));
  open_case("file_empty", ZT_E_TRUNCATED, "");
  open_case("file_7_bytes", ZT_E_TRUNCATED, "ZTEN100");
  open_case("file_23_bytes", ZT_E_TRUNCATED, "ZTEN1000" + std::string(7, '\0') + "ZTEN1000");
  open_case("manifest_size_past_file", ZT_E_MANIFEST_SIZE, with_manifest_size(valid, valid.size() - 23));
  open_case("manifest_size_over_1gib", ZT_E_MANIFEST_LIMIT, with_manifest_size(valid, (uint64_t{1} << 30) + 1));
  open_case("manifest_size_u64_max", ZT_E_MANIFEST_LIMIT, with_manifest_size(valid, UINT64_MAX));
  {
    RejectCase c{"manifest_size_over_configured_limit", valid, ZT_E_MANIFEST_LIMIT, RejectWhere::Open, "", false, 0, 0};
    c.max_manifest_size = 32;  // the base manifest is ~150 bytes
    cases.push_back(c);
  }
  open_case("manifest_size_zero", ZT_E_CBOR, with_manifest_size(valid, 0));
  open_case("legacy_manifest_size_past_file", ZT_E_MANIFEST_SIZE, [] {
    std::string f = legacy_file(legacy_entry("bad", 128, 24, "float32", {2, 3}));
    std::string le;
    put_le64(le, f.size());
    return f.replace(f.size() - 8, 8, le);
  }());

  // ---- CBOR ------------------------------------------------------------------
  {
    std::string m = encode_manifest(base()) + std::string("\x00", 1);
    open_case("cbor_bytes_after_item", ZT_E_CBOR, build_v1_file(base().blobs, m));
    std::string t = encode_manifest(base());
    open_case("cbor_truncated_item", ZT_E_CBOR, build_v1_file(base().blobs, t.substr(0, t.size() - 3)));
  }
  root("cbor_reserved_additional_info", ZT_E_CBOR, [](FileDesc &d) { set(d.root, "x", "\x1c"); });
  root("cbor_stray_break", ZT_E_CBOR, [](FileDesc &d) { set(d.root, "x", "\xff"); });
  root("cbor_nesting_10000", ZT_E_CBOR_DEPTH,
       [](FileDesc &d) { set(d.root, "deep", std::string(10000, '\x81') + std::string("\x00", 1)); });
  root("cbor_indefinite_nesting_10000", ZT_E_CBOR_DEPTH, [](FileDesc &d) {
    set(d.root, "deep", std::string(10000, '\x9f') + std::string("\x00", 1) + std::string(10000, '\xff'));
  });
  root("cbor_array_claims_2p60", ZT_E_CBOR,
       [](FileDesc &d) { set(d.root, "huge", Cbor().array(uint64_t{1} << 60).uint(1).bytes); });
  root("cbor_map_claims_2p60", ZT_E_CBOR,
       [](FileDesc &d) { set(d.root, "huge", Cbor().map(uint64_t{1} << 60).uint(1).uint(2).bytes); });
  root("cbor_text_claims_2p60", ZT_E_CBOR,
       [](FileDesc &d) { set(d.root, "huge", Cbor().head(3, uint64_t{1} << 60).raw("abc").bytes); });
  root("cbor_shape_claims_2p60", ZT_E_CBOR,
       [](FileDesc &d) { set(d.obj("bad").f, "shape", Cbor().array(uint64_t{1} << 60).uint(2).bytes); });
  root("cbor_duplicate_root_key", ZT_E_DUPLICATE_KEY, [](FileDesc &d) { d.root.emplace_back("version", T("1.2.0")); });
  root("cbor_duplicate_component_key", ZT_E_DUPLICATE_KEY,
       [](FileDesc &d) { d.obj("bad").comp("data").f.emplace_back("offset", U(128)); });
  root("cbor_duplicate_object_name", ZT_E_DUPLICATE_KEY, [](FileDesc &d) { d.objs.push_back(d.objs[0]); });

  // ---- Manifest root -----------------------------------------------------------
  open_case("root_is_array", ZT_E_MANIFEST, build_v1_file(base().blobs, Cbor().array(1).uint(1).bytes));
  open_case("root_is_text", ZT_E_MANIFEST, build_v1_file(base().blobs, T("1.2.0")));
  root("objects_missing", ZT_E_MANIFEST, [](FileDesc &d) { erase(d.root, "objects"); });
  root("objects_not_a_map", ZT_E_MANIFEST, [](FileDesc &d) { set(d.root, "objects", Cbor().array(0).bytes); });
  root("object_name_not_text", ZT_E_MANIFEST,
       [](FileDesc &d) { set(d.root, "objects", Cbor().map(1).uint(7).raw(encode_object(d.obj("good"))).bytes); });
  root("file_attributes_not_a_map", ZT_E_MANIFEST, [](FileDesc &d) { set(d.root, "attributes", U(1)); });
  root("version_missing", ZT_E_VERSION, [](FileDesc &d) { erase(d.root, "version"); });
  root("version_not_text", ZT_E_VERSION, [](FileDesc &d) { set(d.root, "version", U(1)); });
  root("version_major_2", ZT_E_VERSION, [](FileDesc &d) { set(d.root, "version", T("2.0.0")); });
  root("version_garbage", ZT_E_VERSION, [](FileDesc &d) { set(d.root, "version", T("one")); });

  // ---- One object's manifest entry ------------------------------------------------
  using O = Obj;
  obj("offset_not_multiple_of_64", ZT_E_ALIGNMENT, [](FileDesc &, O &, Fields &c) { set(c, "offset", U(96)); });
  obj("offset_inside_header", ZT_E_BOUNDS, [](FileDesc &, O &, Fields &c) { set(c, "offset", U(0)); });
  obj("offset_length_overflow", ZT_E_BOUNDS, [](FileDesc &, O &, Fields &c) {
    set(c, "offset", U(UINT64_MAX - 63));
    set(c, "length", U(128));
  });
  obj("blob_past_manifest_start", ZT_E_BOUNDS, [](FileDesc &, O &o, Fields &c) {
    set(o.f, "shape", Shape({1000}));
    set(c, "length", U(4000));
  });
  {
    // Two components of one object: [128, 228) and [192, 256).
    FileDesc d = base();
    d.blobs[1] = std::string(128, '\x01');
    Obj &o = d.obj("bad");
    set(o.f, "shape", Shape({25}));
    set(o.comps[0].f, "length", U(100));
    o.comps.push_back({"aux", comp_fields("u8", 192, 64)});
    at(RejectWhere::Object, "blobs_partially_overlap", ZT_E_OVERLAP, build(d));
  }
  obj("dtype_unknown", ZT_E_DTYPE, [](FileDesc &, O &, Fields &c) { set(c, "dtype", T("f128")); });
  obj("dtype_legacy_long_name_in_v1", ZT_E_DTYPE, [](FileDesc &, O &, Fields &c) { set(c, "dtype", T("float32")); });
  obj("logical_type_storage_mismatch", ZT_E_DTYPE, [](FileDesc &, O &, Fields &c) { set(c, "type", T("f8_e4m3fn")); });
  obj("encoding_unknown", ZT_E_ENCODING, [](FileDesc &, O &, Fields &c) { set(c, "encoding", T("lz4")); });
  obj("shape_product_overflow", ZT_E_SHAPE, [](FileDesc &, O &o, Fields &) {
    set(o.f, "shape", Shape({uint64_t{1} << 32, uint64_t{1} << 32, 2}));
  });
  obj("shape_bytes_overflow", ZT_E_SHAPE,
      [](FileDesc &, O &o, Fields &) { set(o.f, "shape", Shape({uint64_t{1} << 62})); });
  obj("dense_length_mismatch", ZT_E_LENGTH, [](FileDesc &, O &, Fields &c) { set(c, "length", U(20)); });
  obj("dense_no_data_component", ZT_E_COMPONENT_MISSING,
      [](FileDesc &, O &o, Fields &) { o.comps[0].role = "weights"; });
  obj("object_name_not_utf8", ZT_E_NAME, [](FileDesc &, O &o, Fields &) { o.name = "\xc3\x28"; });
  obj("role_not_utf8", ZT_E_NAME, [](FileDesc &, O &o, Fields &) {
    o.comps.push_back({"\xff\xfe", comp_fields("u8", 128, 24)});
  });
  for (auto &c : cases)
    if (c.name == "object_name_not_utf8") c.object = "\xc3\x28";

  // Required fields missing / of the wrong CBOR type.
  for (const char *field : {"dtype", "offset", "length"})
    obj(std::string("component_missing_") + field, ZT_E_FIELD,
        [field](FileDesc &, O &, Fields &c) { erase(c, field); });
  for (const char *field : {"shape", "format", "components"})
    obj(std::string("object_missing_") + field, ZT_E_FIELD, [field](FileDesc &, O &o, Fields &) { erase(o.f, field); });
  struct Wrong {
    const char *name, *field;
    std::string value;
  };
  const Wrong wrong_component[] = {
      {"dtype_is_uint", "dtype", U(2)},
      {"offset_is_text", "offset", T("128")},
      {"offset_is_float", "offset", Cbor().f64(128).bytes},
      {"length_is_negative", "length", Cbor().negint(-24).bytes},
      {"encoding_is_uint", "encoding", U(1)},
      {"digest_is_uint", "digest", U(1)},
      {"uncompressed_length_is_text", "uncompressed_length", T("24")},
      {"type_is_uint", "type", U(3)},
  };
  for (const auto &w : wrong_component)
    obj(std::string("component_") + w.name, ZT_E_FIELD, [&w](FileDesc &, O &, Fields &c) { set(c, w.field, w.value); });
  const Wrong wrong_object[] = {
      {"shape_is_text", "shape", T("2x3")},
      {"shape_holds_text", "shape", Cbor().array(2).uint(2).text("3").bytes},
      {"format_is_uint", "format", U(0)},
      {"components_is_array", "components", Cbor().array(0).bytes},
      {"attributes_is_uint", "attributes", U(5)},
  };
  for (const auto &w : wrong_object)
    obj(std::string("object_") + w.name, ZT_E_FIELD, [&w](FileDesc &, O &o, Fields &) { set(o.f, w.field, w.value); });
  {
    FileDesc d = base();
    d.obj("bad").f = {};
    d.root = {{"version", T("1.2.0")},
              {"objects", Cbor().map(2).text("bad").uint(3).text("good").raw(encode_object(d.obj("good"))).bytes}};
    at(RejectWhere::Object, "object_not_a_map", ZT_E_FIELD, build(d));
  }
  obj("component_not_a_map", ZT_E_FIELD,
      [](FileDesc &, O &o, Fields &) { set(o.f, "components", Cbor().map(1).text("data").text("x").bytes); });
  obj("component_role_not_text", ZT_E_FIELD, [](FileDesc &, O &o, Fields &) {
    set(o.f, "components", Cbor().map(1).uint(1).raw(encode_map(comp_fields("f32", 128, 24))).bytes);
  });

  // zstd declarations.
  auto zstd_obj = [&](const std::string &name, zt_status st, RejectWhere where, const std::string &frame, auto mutate) {
    FileDesc d = base();
    d.blobs[1] = frame;
    Fields &c = d.obj("bad").comp("data").f;
    set(c, "length", U(frame.size()));
    set(c, "uncompressed_length", U(24));
    set(c, "encoding", T("zstd"));
    mutate(d, c);
    at(where, name, st, build(d));
  };
  const std::string frame24 = zstd_frame(kBad);
  // Spec 1.2 requires uncompressed_length, but the original implementation
  // reads a component without it: tolerated (the shape gives the size), and
  // flagged by a strict verify (a strict open refuses it).
  zstd_obj("zstd_without_uncompressed_length", ZT_E_NO_UNCOMPRESSED_LENGTH, RejectWhere::StrictVerify, frame24,
           [](FileDesc &, Fields &c) { erase(c, "uncompressed_length"); });
  zstd_obj("zstd_uncompressed_length_over_default_limit", ZT_E_LIMIT, RejectWhere::Object, frame24,
           [](FileDesc &d, Fields &c) {
             set(d.obj("bad").f, "shape", Shape({uint64_t{1} << 40}));
             set(c, "uncompressed_length", U(uint64_t{4} << 40));
           });
  zstd_obj("zstd_uncompressed_length_over_configured_limit", ZT_E_LIMIT, RejectWhere::Object, frame24,
           [](FileDesc &, Fields &) {});
  cases.back().max_decoded_size = 20;
  zstd_obj("zstd_uncompressed_length_not_shape", ZT_E_LENGTH, RejectWhere::Object, frame24,
           [](FileDesc &, Fields &c) { set(c, "uncompressed_length", U(28)); });

  // ---- Stored bytes --------------------------------------------------------------
  zstd_obj("zstd_decodes_to_more", ZT_E_DECODED_SIZE, RejectWhere::Data, zstd_frame(kBad + kGood),
           [](FileDesc &, Fields &) {});
  zstd_obj("zstd_decodes_to_fewer", ZT_E_DECODED_SIZE, RejectWhere::Data, zstd_frame(kBad.substr(0, 20)),
           [](FileDesc &, Fields &) {});
  zstd_obj("zstd_frame_truncated", ZT_E_CORRUPT, RejectWhere::Data, frame24.substr(0, frame24.size() - 4),
           [](FileDesc &, Fields &) {});
  zstd_obj("zstd_bad_frame_magic", ZT_E_CORRUPT, RejectWhere::Data, "\x01\x02\x03\x04" + frame24.substr(4),
           [](FileDesc &, Fields &) {});
  {
    std::string f = zstd_frame(kBad, /*checksum=*/true);
    f[f.size() - 1] ^= 0x55;  // the frame's own content checksum
    zstd_obj("zstd_checksum_mismatch", ZT_E_CORRUPT, RejectWhere::Data, f, [](FileDesc &, Fields &) {});
  }
  obj("digest_no_colon", ZT_E_DIGEST_FORMAT, [](FileDesc &, O &, Fields &c) { set(c, "digest", T("deadbeef")); });
  obj("digest_sha256_short", ZT_E_DIGEST_FORMAT,
      [](FileDesc &, O &, Fields &c) { set(c, "digest", T("sha256:abcd")); });
  obj("digest_sha256_not_hex", ZT_E_DIGEST_FORMAT,
      [](FileDesc &, O &, Fields &c) { set(c, "digest", T("sha256:" + std::string(64, 'g'))); });
  obj("digest_crc32c_too_long", ZT_E_DIGEST_FORMAT,
      [](FileDesc &, O &, Fields &c) { set(c, "digest", T("crc32c:0x123456789")); });
  {
    FileDesc d = base();
    set(d.obj("bad").comp("data").f, "digest", T(sha_digest(kGood)));
    at(RejectWhere::Data, "digest_sha256_mismatch", ZT_E_DIGEST_MISMATCH, build(d));
    set(d.obj("bad").comp("data").f, "digest", T(crc_digest(kGood)));
    at(RejectWhere::Data, "digest_crc32c_mismatch", ZT_E_DIGEST_MISMATCH, build(d));
    set(d.obj("bad").comp("data").f, "digest", T("blake3:" + std::string(64, 'a')));
    at(RejectWhere::Unverifiable, "digest_unknown_algorithm", ZT_OK, build(d));
  }
  {
    FileDesc d = base();
    d.blobs[1] = std::string("\x00\x01\x02\x01", 4);
    set(d.obj("bad").f, "shape", Shape({4}));
    set(d.obj("bad").comp("data").f, "dtype", T("bool"));
    set(d.obj("bad").comp("data").f, "length", U(4));
    at(RejectWhere::StrictVerify, "bool_byte_not_0_or_1", ZT_E_BOOL_VALUE, build(d));
  }

  // ---- Legacy 0.1 -------------------------------------------------------------------
  open_case("legacy_root_not_array", ZT_E_MANIFEST, build_v0_file({kGood}, encode_map({{"a", U(1)}})));
  open_case("legacy_entry_not_map", ZT_E_MANIFEST, build_v0_file({kGood}, Cbor().array(1).uint(1).bytes));
  open_case("legacy_entry_without_name", ZT_E_FIELD,
            legacy_file(legacy_entry("bad", 128, 24, "float32", {2, 3}, {}, "name")));
  at(RejectWhere::Object, "legacy_dtype_unknown", ZT_E_DTYPE,
     legacy_file(legacy_entry("bad", 128, 24, "float128", {2, 3})));
  at(RejectWhere::Object, "legacy_size_missing", ZT_E_FIELD,
     legacy_file(legacy_entry("bad", 128, 24, "float32", {2, 3}, {}, "size")));
  at(RejectWhere::Object, "legacy_endianness_bad", ZT_E_FIELD,
     legacy_file(legacy_entry("bad", 128, 24, "float32", {2, 3}, {{"data_endianness", T("middle")}})));
  at(RejectWhere::Object, "legacy_offset_misaligned", ZT_E_ALIGNMENT,
     legacy_file(legacy_entry("bad", 130, 22, "float32", {2, 3})));
  {
    std::string more = zstd_frame(kBad + kGood);
    at(RejectWhere::Data, "legacy_zstd_decodes_past_shape", ZT_E_DECODED_SIZE,
       legacy_file(legacy_entry("bad", 128, more.size(), "float32", {2, 3}, {{"encoding", T("zstd")}}), more));
  }

  // ---- Composite formats (src/composite/) ----------------------------------------------
  auto comp_case = [&](const std::string &name, zt_status st, FileDesc d) {
    cases.push_back({name, build(d), st, RejectWhere::StrictVerify, "bad", true, 0, 0});
  };
  using C3 = std::tuple<std::string, std::string, std::string>;
  // CSR [2, 4]: values {1,2,3}, indices {0,3,1}, indptr {0,2,3}.
  auto csr = [&](std::string values, std::string indices, std::string indptr, const char *idx_dtype = "u64") {
    return composite("sparse_csr", {2, 4},
                     {C3{"values", "f32", values}, C3{"indices", idx_dtype, indices}, C3{"indptr", "u64", indptr}});
  };
  const std::string v3 = f32s({1, 2, 3});
  comp_case("csr_indptr_missing", ZT_E_COMPONENT_MISSING,
            composite("sparse_csr", {2, 4}, {C3{"values", "f32", v3}, C3{"indices", "u64", u64s({0, 3, 1})}}));
  comp_case("csr_indptr_count", ZT_E_SPARSE_INDPTR, csr(v3, u64s({0, 3, 1}), u64s({0, 2})));
  comp_case("csr_indptr_start", ZT_E_SPARSE_INDPTR, csr(v3, u64s({0, 3, 1}), u64s({1, 2, 3})));
  comp_case("csr_indptr_decreasing", ZT_E_SPARSE_INDPTR, csr(v3, u64s({0, 3, 1}), u64s({0, 3, 2})));
  comp_case("csr_indptr_end", ZT_E_SPARSE_INDPTR, csr(v3, u64s({0, 3, 1}), u64s({0, 2, 2})));
  comp_case("csr_index_out_of_range", ZT_E_SPARSE_INDEX, csr(v3, u64s({0, 4, 1}), u64s({0, 2, 3})));
  comp_case("csr_values_count", ZT_E_SPARSE_NNZ, csr(f32s({1, 2}), u64s({0, 3, 1}), u64s({0, 2, 3})));
  comp_case("csr_index_dtype_float", ZT_E_INDEX_DTYPE, csr(v3, std::string(24, '\0'), u64s({0, 2, 3}), "f64"));
  // COO [3, 3]: values {1,2}, coords {0,2 | 1,2}.
  auto coo = [&](std::string values, std::string coords) {
    return composite("sparse_coo", {3, 3}, {C3{"values", "f32", values}, C3{"coords", "u64", coords}});
  };
  comp_case("coo_coords_missing", ZT_E_COMPONENT_MISSING,
            composite("sparse_coo", {3, 3}, {C3{"values", "f32", f32s({1, 2})}}));
  comp_case("coo_coord_out_of_range", ZT_E_SPARSE_INDEX, coo(f32s({1, 2}), u64s({0, 3, 1, 2})));
  comp_case("coo_coords_count", ZT_E_SPARSE_NNZ, coo(f32s({1, 2}), u64s({0, 2, 1})));
  // Quantized [4, 64], 4 bits, groups of 32 along a row: 32 i32 packed (8
  // nibbles each), 4 × 2 f16 scales and zeros.
  auto quant = [&](const std::string &attrs, size_t packed, size_t scales, bool with_scales = true) {
    std::vector<C3> comps = {C3{"packed_weight", "i32", std::string(packed * 4, '\x11')}};
    if (with_scales) comps.push_back(C3{"scales", "f16", std::string(scales * 2, '\x3c')});
    comps.push_back(C3{"zeros", "f16", std::string(scales * 2, '\0')});
    return composite("quantized_group", {4, 64}, comps, attrs);
  };
  comp_case("quant_scales_missing", ZT_E_COMPONENT_MISSING, quant(quant_attrs(4, 32, "8_per_i32"), 32, 8, false));
  comp_case("quant_bits_missing", ZT_E_QUANT_PARAMS,
            quant(encode_map({{"group_size", U(32)}, {"packing", T("8_per_i32")}}), 32, 8));
  comp_case("quant_group_size_zero", ZT_E_QUANT_PARAMS, quant(quant_attrs(4, 0, "8_per_i32"), 32, 8));
  comp_case("quant_bits_negative", ZT_E_QUANT_PARAMS, quant(quant_attrs(-4, 32, "8_per_i32"), 32, 8));
  comp_case("quant_packed_size", ZT_E_QUANT_SIZE, quant(quant_attrs(4, 32, "8_per_i32"), 31, 8));
  comp_case("quant_scales_size", ZT_E_QUANT_SIZE, quant(quant_attrs(4, 32, "8_per_i32"), 32, 9));
  return cases;
}

std::vector<std::pair<std::string, std::string>> valid_files() {
  using C3 = std::tuple<std::string, std::string, std::string>;
  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back("dense_raw", build(base()));
  {
    FileDesc d = base();
    set(d.obj("bad").comp("data").f, "digest", T(sha_digest(kBad)));
    set(d.obj("good").comp("data").f, "digest", T(crc_digest(kGood)));
    files.emplace_back("dense_digests", build(d));
  }
  {
    FileDesc d = base();
    d.blobs[1] = zstd_frame(kBad, true);
    Fields &c = d.obj("bad").comp("data").f;
    set(c, "length", U(d.blobs[1].size()));
    set(c, "uncompressed_length", U(24));
    set(c, "encoding", T("zstd"));
    set(c, "digest", T(sha_digest(d.blobs[1])));
    files.emplace_back("dense_zstd", build(d));
  }
  {
    FileDesc d = composite("sparse_csr", {2, 4},
                           {C3{"values", "f32", f32s({1, 2, 3})}, C3{"indices", "u64", u64s({0, 3, 1})},
                            C3{"indptr", "u64", u64s({0, 2, 3})}});
    set(d.obj("bad").comp("indptr").f, "digest", T(crc_digest(u64s({0, 2, 3}))));
    files.emplace_back("sparse_csr", build(d));
  }
  files.emplace_back("sparse_coo",
                     build(composite("sparse_coo", {3, 3},
                                     {C3{"values", "f32", f32s({1, 2})}, C3{"coords", "u64", u64s({0, 2, 1, 2})}})));
  files.emplace_back("quantized_group", build(composite("quantized_group", {4, 64},
                                                        {C3{"packed_weight", "i32", std::string(128, '\x11')},
                                                         C3{"scales", "f16", std::string(16, '\x3c')},
                                                         C3{"zeros", "f16", std::string(16, '\0')}},
                                                        quant_attrs(4, 32, "8_per_i32"))));
  files.emplace_back("legacy_raw", legacy_file(legacy_entry("bad", 128, 24, "float32", {2, 3})));
  {
    std::string frame = zstd_frame(kBad);
    files.emplace_back(
        "legacy_zstd",
        legacy_file(legacy_entry("bad", 128, frame.size(), "float32", {2, 3}, {{"encoding", T("zstd")}}), frame));
  }
  return files;
}

}  // namespace zttest
