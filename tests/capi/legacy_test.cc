// Legacy generations, with fixtures written by this test from the spec texts
// (000/002: spec 0.1.0; 003: spec 1.1.0): every dtype, raw and zstd, little-
// and big-endian, each checksum, the sparse layout, custom keys, the 17-byte
// empty file; malformed legacy files; and migration to 1.2.0.
#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cbor_writer.h"
#include "test_util.h"
#include "ztensor.h"

using zttest::Cbor;
using zttest::TempDir;

namespace {

// Bitwise CRC-32C (Castagnoli), straight from its definition.
uint32_t crc32c_ref(const std::string &s) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1u)));
  }
  return ~c;
}

std::string crc_string(const std::string &s) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "crc32c:0x%08X", crc32c_ref(s));
  return buf;
}

std::string zstd(const std::string &s) {
  std::string out(ZSTD_compressBound(s.size()), '\0');
  size_t n = ZSTD_compress(&out[0], out.size(), s.data(), s.size(), 3);
  out.resize(n);
  return out;
}

std::string swap_elems(std::string s, size_t es) {
  for (size_t i = 0; i + es <= s.size(); i += es) std::reverse(s.begin() + i, s.begin() + i + es);
  return s;
}

struct LegacyDtype {
  const char *long_name;
  const char *short_name;
  size_t size;
};
const LegacyDtype kDtypes[] = {
    {"float64", "f64", 8}, {"float32", "f32", 4}, {"float16", "f16", 2}, {"bfloat16", "bf16", 2}, {"int64", "i64", 8},
    {"int32", "i32", 4},   {"int16", "i16", 2},   {"int8", "i8", 1},     {"uint64", "u64", 8},    {"uint32", "u32", 4},
    {"uint16", "u16", 2},  {"uint8", "u8", 1},    {"bool", "bool", 1}};

struct Entry {
  std::string name, dtype, encoding = "raw", endianness, checksum, layout;
  std::vector<uint64_t> shape;
  std::string stored;                                       // bytes in the file
  std::vector<std::pair<std::string, std::string>> custom;  // key → encoded CBOR value
};

// A 0.1.0 file: magic, blobs at 64-byte offsets, CBOR array of maps, size.
// Written with indefinite-length maps, as the 0.1.4 writer does.
std::string v0_file(const std::vector<Entry> &entries) {
  std::vector<std::string> blobs;
  for (const auto &e : entries) blobs.push_back(e.stored);
  auto offs = zttest::layout_offsets(blobs);
  Cbor c;
  c.array(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry &e = entries[i];
    c.indef_map();
    c.text("name").text(e.name);
    c.text("offset").uint(offs[i]);
    c.text("size").uint(e.stored.size());
    c.text("dtype").text(e.dtype);
    if (!e.layout.empty()) c.text("layout").text(e.layout);
    c.text("shape").shape(e.shape);
    c.text("encoding").text(e.encoding);
    if (!e.endianness.empty()) c.text("data_endianness").text(e.endianness);
    if (!e.checksum.empty()) c.text("checksum").text(e.checksum);
    for (const auto &kv : e.custom) c.text(kv.first).raw(kv.second);
    c.brk();
  }
  return zttest::build_v0_file(blobs, c.bytes);
}

std::vector<uint8_t> read_all(const zt_object *o) {
  size_t n = 0;
  zt_component_read(o, 0, nullptr, 0, &n);
  std::vector<uint8_t> v(n);
  EXPECT_EQ(zt_component_read(o, 0, v.data(), v.size(), &n), ZT_OK) << zt_last_error();
  return v;
}

const zt_object *by_name(zt_file *f, const std::string &n) {
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_file_object_by_name(f, n.data(), n.size(), &o), ZT_OK) << n;
  return o;
}

std::string logical_bytes(size_t n, uint32_t seed, bool boolean) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto &ch : s) ch = static_cast<char>(boolean ? (rng() & 1) : rng());
  return s;
}

// Every dtype × {raw LE, raw BE, zstd} × {no checksum, crc32c, sha256}.
std::vector<Entry> all_v0_entries(std::vector<std::string> &logical) {
  std::vector<Entry> entries;
  uint32_t seed = 1;
  for (const auto &d : kDtypes) {
    for (int variant = 0; variant < 3; ++variant) {
      for (int ck = 0; ck < 3; ++ck) {
        Entry e;
        e.name = std::string(d.long_name) + "_" + std::to_string(variant) + std::to_string(ck);
        e.dtype = d.long_name;
        e.shape = {3, 5};
        std::string le = logical_bytes(15 * d.size, seed++, std::string(d.long_name) == "bool");
        if (variant == 0) {
          e.stored = le;
          e.endianness = "little";
        } else if (variant == 1) {
          e.stored = swap_elems(le, d.size);
          e.endianness = "big";
        } else {
          e.stored = zstd(le);
          e.encoding = "zstd";
        }
        if (ck == 1) e.checksum = crc_string(e.stored);
        if (ck == 2) e.checksum = "sha256:" + zttest::sha256_hex(e.stored.data(), e.stored.size());
        entries.push_back(e);
        logical.push_back(le);
      }
    }
  }
  return entries;
}

TEST(LegacyV0, EveryDtypeEndiannessEncodingAndChecksum) {
  TempDir tmp;
  std::vector<std::string> logical;
  auto entries = all_v0_entries(logical);
  std::string path = tmp.file("v0.zt");
  zttest::write_file(path, v0_file(entries));
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  const char *version = nullptr;
  zt_file_version(f, &version);
  EXPECT_STREQ(version, "0.1.0");
  for (size_t i = 0; i < entries.size(); ++i) {
    SCOPED_TRACE(entries[i].name);
    const zt_object *o = by_name(f, entries[i].name);
    ASSERT_NE(o, nullptr);
    auto v = read_all(o);
    auto v_le = zttest::host_to_le(v.data(), v.size(), kDtypes[i / 9].size);  // reads are in host order
    EXPECT_EQ(std::string(v_le.begin(), v_le.end()), logical[i]);
    zt_component_info c{};
    c.struct_size = sizeof c;
    ASSERT_EQ(zt_object_component(o, 0, &c), ZT_OK);
    EXPECT_STREQ(c.role, "data");
    size_t k = i / 9;
    EXPECT_STREQ(c.dtype_name, kDtypes[k].short_name);
    EXPECT_EQ(c.decoded_length, 15 * kDtypes[k].size);
    zt_verify_result r;
    EXPECT_EQ(zt_component_verify(o, 0, &r), ZT_OK) << zt_last_error();
    EXPECT_EQ(r, entries[i].checksum.empty() ? ZT_VERIFY_NO_DIGEST : ZT_VERIFY_OK);
    const void *view = nullptr;
    size_t len = 0;
    zt_status vs = zt_component_view(o, 0, &view, &len);
    bool swapped = (entries[i].endianness == "big") != zttest::kHostBigEndian && kDtypes[k].size > 1;
    EXPECT_EQ(vs, (swapped || entries[i].encoding == "zstd") ? ZT_E_NOT_ZERO_COPY : ZT_OK);
    // Ranged reads swap too.
    std::vector<uint8_t> part(2 * kDtypes[k].size);
    ASSERT_EQ(zt_component_read_range(o, 0, 4, 2, part.data(), part.size()), ZT_OK) << zt_last_error();
    part = zttest::host_to_le(part.data(), part.size(), kDtypes[k].size);
    EXPECT_EQ(std::string(part.begin(), part.end()), logical[i].substr(4 * kDtypes[k].size, part.size()));
  }
  EXPECT_EQ(zt_file_verify(f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  zt_close(f);
}

TEST(LegacyV0, EmptyFileIsSeventeenBytes) {
  TempDir tmp;
  std::string bytes = std::string("ZTEN0001", 8) + "\x80" + std::string("\x01\0\0\0\0\0\0\0", 8);
  ASSERT_EQ(bytes.size(), 17u);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open_memory(bytes.data(), bytes.size(), nullptr, &f), ZT_OK) << zt_last_error();
  size_t n = 1;
  zt_file_object_count(f, &n);
  EXPECT_EQ(n, 0u);
  zt_close(f);
}

TEST(LegacyV0, CustomKeysAndSparseLayoutStayVisible) {
  TempDir tmp;
  Entry e;
  e.name = "w";
  e.dtype = "float32";
  e.shape = {2};
  e.stored = std::string(8, '\x01');
  e.custom = {{"author", Cbor().text("me").bytes}, {"step", Cbor().uint(42).bytes}};
  Entry s;
  s.name = "sp";
  s.dtype = "float32";
  s.layout = "sparse";
  s.shape = {4, 4};
  s.stored = std::string(12, '\x02');
  s.custom = {{"sparse_format", Cbor().text("csr").bytes}, {"nnz", Cbor().uint(3).bytes}};
  std::string path = tmp.file("c.zt");
  zttest::write_file(path, v0_file({e, s}));
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open(path.c_str(), nullptr, &f), ZT_OK) << zt_last_error();
  char *json = nullptr;
  ASSERT_EQ(zt_object_attributes_json(by_name(f, "w"), &json), ZT_OK);
  EXPECT_STREQ(json, R"({"author":"me","step":42})");
  zt_free(json);
  const zt_object *o = by_name(f, "sp");
  zt_object_info info{};
  info.struct_size = sizeof info;
  zt_object_get_info(o, &info);
  EXPECT_STREQ(info.format, "sparse");
  ASSERT_EQ(zt_object_attributes_json(o, &json), ZT_OK);
  EXPECT_STREQ(json, R"({"layout":"sparse","sparse_format":"csr","nnz":3})");
  zt_free(json);
  EXPECT_EQ(read_all(o).size(), 12u);
  zt_close(f);
}

TEST(LegacyV0, MalformedFilesGiveExactStatuses) {
  auto one = [](Entry e) { return v0_file({e}); };
  Entry good;
  good.name = "t";
  good.dtype = "int32";
  good.shape = {4};
  good.stored = std::string(16, '\x07');
  struct Case {
    const char *what;
    std::string bytes;
    zt_status at_open, at_verify;
  };
  std::vector<Case> cases;
  Entry e = good;
  e.stored = std::string(12, '\x07');
  cases.push_back({"size does not match the shape", one(e), ZT_OK, ZT_E_LENGTH});
  e = good;
  e.checksum = "crc32c:0x00000001";
  cases.push_back({"wrong checksum", one(e), ZT_OK, ZT_E_DIGEST_MISMATCH});
  e = good;
  e.checksum = "sha256:12";
  cases.push_back({"malformed checksum", one(e), ZT_OK, ZT_E_DIGEST_FORMAT});
  e = good;
  e.dtype = "complex32";
  cases.push_back({"unknown dtype", one(e), ZT_OK, ZT_E_DTYPE});
  e = good;
  e.encoding = "zstd";
  e.stored = zstd(std::string(20, '\x07'));
  cases.push_back({"zstd decoding to more than the shape says", one(e), ZT_OK, ZT_E_DECODED_SIZE});
  e = good;
  e.endianness = "middle";
  cases.push_back({"bad data_endianness", one(e), ZT_OK, ZT_E_FIELD});
  std::string full = one(good);
  cases.push_back({"truncated", full.substr(0, full.size() - 3), ZT_E_MANIFEST_SIZE, ZT_OK});
  cases.push_back({"shorter than magic + size", full.substr(0, 12), ZT_E_TRUNCATED, ZT_OK});
  Cbor m;
  m.map(0);
  cases.push_back({"manifest not an array", zttest::build_v0_file({}, m.bytes), ZT_E_MANIFEST, ZT_OK});
  for (const auto &c : cases) {
    SCOPED_TRACE(c.what);
    zt_file *f = nullptr;
    zt_status st = zt_open_memory(c.bytes.data(), c.bytes.size(), nullptr, &f);
    EXPECT_EQ(st, c.at_open) << zt_last_error();
    if (st != ZT_OK) continue;
    EXPECT_EQ(zt_file_verify(f, 0, nullptr, nullptr), c.at_verify) << zt_last_error();
    zt_close(f);
  }
}

// Spec 1.1.0: same container; fp8/complex spelled as dtypes; zstd may lack
// uncompressed_length; sparse indices of any integer dtype.
TEST(LegacyV11, DtypeSpellingsAndOptionalUncompressedLength) {
  std::string fp8(16, '\x3c'), cplx(32, '\x11'), data(64, '\x05');
  std::string z = zstd(data);
  std::vector<std::string> blobs = {fp8, cplx, z};
  auto offs = zttest::layout_offsets(blobs);
  Cbor c;
  c.map(2).text("version").text("1.1.0").text("objects").map(3);
  c.text("fp8").map(3).text("shape").shape({16}).text("format").text("dense").text("components").map(1);
  c.text("data").map(3).text("dtype").text("f8_e4m3").text("offset").uint(offs[0]).text("length").uint(16);
  c.text("cx").map(3).text("shape").shape({4}).text("format").text("dense").text("components").map(1);
  c.text("data").map(3).text("dtype").text("complex64").text("offset").uint(offs[1]).text("length").uint(32);
  c.text("z").map(3).text("shape").shape({16}).text("format").text("dense").text("components").map(1);
  c.text("data").map(4).text("dtype").text("f32").text("offset").uint(offs[2]).text("length").uint(z.size());
  c.text("encoding").text("zstd");
  std::string file = zttest::build_v1_file(blobs, c.bytes);
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open_memory(file.data(), file.size(), nullptr, &f), ZT_OK) << zt_last_error();
  const char *version = nullptr;
  zt_file_version(f, &version);
  EXPECT_STREQ(version, "1.1.0");
  struct Want {
    const char *name, *dtype, *type;
    uint32_t ratio;
  };
  for (const Want &w :
       {Want{"fp8", "u8", "f8_e4m3fn", 1}, Want{"cx", "f32", "complex64", 2}, Want{"z", "f32", nullptr, 1}}) {
    zt_component_info ci{};
    ci.struct_size = sizeof ci;
    ASSERT_EQ(zt_object_component(by_name(f, w.name), 0, &ci), ZT_OK);
    EXPECT_STREQ(ci.dtype_name, w.dtype);
    if (w.type) {
      EXPECT_STREQ(ci.logical_type, w.type);
    }
    EXPECT_EQ(ci.ratio, w.ratio);
    EXPECT_EQ(ci.status, ZT_OK);
  }
  auto v = read_all(by_name(f, "z"));
  EXPECT_EQ(std::string(v.begin(), v.end()), data);
  EXPECT_EQ(zt_file_verify(f, 0, nullptr, nullptr), ZT_OK) << zt_last_error();
  zt_close(f);

  // The same zstd component in a 1.2.0 file must declare its length; the
  // original implementation reads it anyway, and so do we (the shape gives
  // the size), but a strict verify flags it and a strict open refuses it.
  std::string v12 = c.bytes;
  v12.replace(v12.find("1.1.0"), 5, "1.2.0");
  file = zttest::build_v1_file(blobs, v12);
  ASSERT_EQ(zt_open_memory(file.data(), file.size(), nullptr, &f), ZT_OK);
  EXPECT_EQ(zt_object_verify(by_name(f, "z")), ZT_OK) << zt_last_error();
  v = read_all(by_name(f, "z"));
  EXPECT_EQ(std::string(v.begin(), v.end()), data);
  EXPECT_EQ(zt_object_verify(by_name(f, "fp8")), ZT_E_DTYPE);  // not a 1.2 storage type
  struct Seen {
    std::vector<std::pair<std::string, zt_status>> failures;
  } seen;
  auto record = [](void *user, const char *object, const char *, zt_status st, const char *) {
    static_cast<Seen *>(user)->failures.emplace_back(object, st);
  };
  EXPECT_NE(zt_file_verify(f, 1, record, &seen), ZT_OK);
  EXPECT_NE(std::find(seen.failures.begin(), seen.failures.end(),
                      std::make_pair(std::string("z"), ZT_E_NO_UNCOMPRESSED_LENGTH)),
            seen.failures.end());
  zt_close(f);
  zt_open_options strict;
  zt_open_options_init(&strict);
  strict.strict = 1;
  EXPECT_NE(zt_open_memory(file.data(), file.size(), &strict, &f), ZT_OK);  // z, or fp8's dtype first
}

TEST(LegacyV11, UnsupportedMajorVersionIsRefused) {
  Cbor c;
  c.map(2).text("version").text("2.0.0").text("objects").map(0);
  std::string file = zttest::build_v1_file({}, c.bytes);
  zt_file *f = nullptr;
  EXPECT_EQ(zt_open_memory(file.data(), file.size(), nullptr, &f), ZT_E_VERSION);
}

// Migrating any generation yields a 1.2.0 file whose decoded components are
// identical, with attributes, custom fields and digests kept.
TEST(Migrate, LegacyFilesRoundTrip) {
  TempDir tmp;
  std::vector<std::string> logical;
  auto entries = all_v0_entries(logical);
  entries[0].custom = {{"note", Cbor().text("kept").bytes}};
  std::string in = tmp.file("in.zt"), out = tmp.file("out.zt");
  zttest::write_file(in, v0_file(entries));
  zt_migrate_options mo;
  zt_migrate_options_init(&mo);
  mo.sync = 0;
  EXPECT_EQ(zt_migrate(in.c_str(), in.c_str(), &mo), ZT_E_INVALID_ARG);
  ASSERT_EQ(zt_migrate(in.c_str(), out.c_str(), &mo), ZT_OK) << zt_last_error();
  zt_file *a = nullptr, *b = nullptr;
  ASSERT_EQ(zt_open(in.c_str(), nullptr, &a), ZT_OK);
  ASSERT_EQ(zt_open(out.c_str(), nullptr, &b), ZT_OK);
  const char *version = nullptr;
  zt_file_version(b, &version);
  EXPECT_STREQ(version, "1.2.0");
  size_t na = 0, nb = 0;
  zt_file_object_count(a, &na);
  zt_file_object_count(b, &nb);
  ASSERT_EQ(na, nb);
  for (size_t i = 0; i < entries.size(); ++i) {
    SCOPED_TRACE(entries[i].name);
    const zt_object *oa = by_name(a, entries[i].name), *ob = by_name(b, entries[i].name);
    EXPECT_EQ(read_all(oa), read_all(ob));
    zt_component_info ca{}, cb{};
    ca.struct_size = cb.struct_size = sizeof ca;
    zt_object_component(oa, 0, &ca);
    zt_object_component(ob, 0, &cb);
    EXPECT_EQ(cb.big_endian, 0u);
    EXPECT_EQ(ca.encoding, cb.encoding);
    EXPECT_EQ(ca.digest_alg, cb.digest_alg);
    if (cb.encoding == ZT_ENCODING_RAW) {
      const void *view = nullptr;
      size_t len = 0;
      // A big-endian host has no zero-copy view of little-endian numbers.
      const bool host_order = !zttest::kHostBigEndian || zt_dtype_size(cb.dtype) == 1;
      EXPECT_EQ(zt_component_view(ob, 0, &view, &len), host_order ? ZT_OK : ZT_E_NOT_ZERO_COPY)
          << "migrated data is little-endian";
    }
  }
  char *json = nullptr;
  zt_object_attributes_json(by_name(b, entries[0].name), &json);
  EXPECT_STREQ(json, R"({"note":"kept"})");
  zt_free(json);
  EXPECT_EQ(zt_file_verify(b, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
  zt_close(a);
  zt_close(b);

  // Recompressing and changing the digest keeps the decoded bytes.
  mo.recompress = 1;
  mo.zstd_level = 5;
  mo.digest = ZT_DIGEST_SHA256;
  std::string out2 = tmp.file("out2.zt");
  ASSERT_EQ(zt_migrate(out.c_str(), out2.c_str(), &mo), ZT_OK) << zt_last_error();
  ASSERT_EQ(zt_open(out2.c_str(), nullptr, &b), ZT_OK);
  ASSERT_EQ(zt_open(in.c_str(), nullptr, &a), ZT_OK);
  for (size_t i = 0; i < entries.size(); ++i) {
    const zt_object *ob = by_name(b, entries[i].name);
    EXPECT_EQ(read_all(by_name(a, entries[i].name)), read_all(ob));
    zt_component_info cb{};
    cb.struct_size = sizeof cb;
    zt_object_component(ob, 0, &cb);
    EXPECT_EQ(cb.encoding, ZT_ENCODING_ZSTD);
    EXPECT_EQ(cb.digest_alg, ZT_DIGEST_SHA256);
  }
  EXPECT_EQ(zt_file_verify(b, 0, nullptr, nullptr), ZT_OK);
  zt_close(a);
  zt_close(b);
}

TEST(Migrate, InteropFilesOfEveryGenerationRoundTrip) {
  std::string root = zttest::interop_dir();
  TempDir tmp;
  int migrated = 0;
  for (const char *rel : {"v0/v01_raw_le.zt", "v0/v01_raw_be.zt", "v0/v01_zstd.zt", "v0/v01_crc32c.zt",
                          "v0/v01_scalar_zero.zt", "v0/v01_empty.zt", "v1/attributes.zt", "v1/sparse_csr.zt",
                          "v1/custom_format.zt", "v1/logical_types.zt", "v1/zero_size.zt", "v1/names.zt"}) {
    std::string in = root + "/" + rel;
    if (zttest::read_file(in).empty()) continue;
    SCOPED_TRACE(rel);
    std::string out = tmp.file("m.zt");
    ASSERT_EQ(zt_migrate(in.c_str(), out.c_str(), nullptr), ZT_OK) << zt_last_error();
    zt_file *a = nullptr, *b = nullptr;
    ASSERT_EQ(zt_open(in.c_str(), nullptr, &a), ZT_OK);
    ASSERT_EQ(zt_open(out.c_str(), nullptr, &b), ZT_OK);
    size_t n = 0;
    zt_file_object_count(a, &n);
    for (size_t i = 0; i < n; ++i) {
      const zt_object *oa = nullptr;
      zt_file_object_at(a, i, &oa);
      zt_object_info ia{};
      ia.struct_size = sizeof ia;
      zt_object_get_info(oa, &ia);
      const zt_object *ob = by_name(b, std::string(ia.name, ia.name_len));
      zt_object_info ib{};
      ib.struct_size = sizeof ib;
      zt_object_get_info(ob, &ib);
      EXPECT_STREQ(ia.format, ib.format);
      ASSERT_EQ(ia.component_count, ib.component_count);
      for (size_t k = 0; k < ia.component_count; ++k) {
        zt_component_info ca{};
        ca.struct_size = sizeof ca;
        zt_object_component(oa, k, &ca);
        size_t kb = 0;
        ASSERT_EQ(zt_object_component_index(ob, ca.role, &kb), ZT_OK);
        size_t la = 0, lb = 0;
        zt_component_read(oa, k, nullptr, 0, &la);
        zt_component_read(ob, kb, nullptr, 0, &lb);
        std::vector<uint8_t> va(la), vb(lb);
        ASSERT_EQ(zt_component_read(oa, k, va.data(), la, &la), ZT_OK);
        ASSERT_EQ(zt_component_read(ob, kb, vb.data(), lb, &lb), ZT_OK);
        EXPECT_EQ(va, vb);
      }
    }
    char *ja = nullptr, *jb = nullptr;
    zt_file_attributes_json(a, &ja);
    zt_file_attributes_json(b, &jb);
    EXPECT_STREQ(ja, jb);
    zt_free(ja);
    zt_free(jb);
    EXPECT_EQ(zt_file_verify(b, 0, nullptr, nullptr), ZT_OK) << zt_last_error();
    zt_close(a);
    zt_close(b);
    ++migrated;
  }
  EXPECT_EQ(migrated, 12) << "interop vectors missing under " << root;
}

}  // namespace

// A spec 1.2 zstd component without uncompressed_length and without a size
// its shape implies (sparse values): the size comes from the frame header
// when the frame records one (checked against max_decoded_size before any
// decode), else from a decode bounded by max_decoded_size.
TEST(MissingUncompressedLength, SizeFromTheFrameOrABoundedDecode) {
  std::string values(4096, '\0');
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<char>(i * 7);
  // Stored little-endian, as the file holds them whatever the host.
  std::vector<uint64_t> index_values(1024);
  for (uint64_t i = 0; i < 1024; ++i) index_values[i] = i;
  const std::string indices = zttest::le_bytes(index_values), indptr = zttest::le_bytes(std::vector<uint64_t>{0, 1024});
  for (bool content_size : {true, false}) {
    SCOPED_TRACE(content_size ? "frame records its size" : "frame without a size");
    std::string z(ZSTD_compressBound(values.size()), '\0');
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, content_size ? 1 : 0);
    z.resize(ZSTD_compress2(cc, &z[0], z.size(), values.data(), values.size()));
    ZSTD_freeCCtx(cc);
    std::vector<std::string> blobs = {z, indices, indptr};
    auto offs = zttest::layout_offsets(blobs);
    Cbor c;
    c.map(2).text("version").text("1.2.0").text("objects").map(1);
    c.text("s").map(3).text("shape").shape({1, 1024}).text("format").text("sparse_csr").text("components").map(3);
    c.text("values").map(4).text("dtype").text("f32").text("offset").uint(offs[0]).text("length").uint(z.size());
    c.text("encoding").text("zstd");
    c.text("indices").map(3).text("dtype").text("u64").text("offset").uint(offs[1]).text("length").uint(8192);
    c.text("indptr").map(3).text("dtype").text("u64").text("offset").uint(offs[2]).text("length").uint(16);
    const std::string file = zttest::build_v1_file(blobs, c.bytes);
    for (uint64_t limit : {uint64_t{0}, uint64_t{1024}}) {
      zt_open_options o;
      zt_open_options_init(&o);
      if (limit) o.max_decoded_size = limit;
      zt_file *f = nullptr;
      ASSERT_EQ(zt_open_memory(file.data(), file.size(), &o, &f), ZT_OK) << zt_last_error();
      const zt_object *obj = by_name(f, "s");
      size_t idx = 99, size = 0;
      ASSERT_EQ(zt_object_component_index(obj, "values", &idx), ZT_OK);
      const zt_status st = zt_component_read(obj, idx, nullptr, 0, &size);
      if (!limit) {
        EXPECT_EQ(st, ZT_E_BUFFER_TOO_SMALL) << zt_last_error();
        EXPECT_EQ(size, values.size());
        std::string got(size, '\0');
        ASSERT_EQ(zt_component_read(obj, idx, &got[0], got.size(), &size), ZT_OK) << zt_last_error();
        // A read hands the f32 values over in the host's order.
        const std::vector<uint8_t> stored = zttest::host_to_le(got.data(), got.size(), 4);
        EXPECT_EQ(std::string(stored.begin(), stored.end()), values);
        EXPECT_EQ(zt_file_verify(f, 0, nullptr, nullptr), ZT_OK) << zt_last_error();
        EXPECT_EQ(zt_file_verify(f, 1, nullptr, nullptr), ZT_E_NO_UNCOMPRESSED_LENGTH);
      } else if (content_size) {
        // Refused from the header, before decoding.
        EXPECT_EQ(st, ZT_E_LIMIT);
        EXPECT_NE(std::string(zt_last_error()).find("the zstd frame declares 4096 decoded bytes"), std::string::npos)
            << zt_last_error();
      } else {
        EXPECT_NE(st, ZT_OK);  // the bounded decode stops at the limit
        EXPECT_NE(st, ZT_E_BUFFER_TOO_SMALL);
      }
      zt_close(f);
    }
  }
}
