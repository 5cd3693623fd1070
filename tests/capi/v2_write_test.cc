// Writing zTensor v2 through the C ABI (docs/v2.md, Writing): canonical
// files byte-identical to the original implementation's (tests/data/v2-golden,
// written by its own writer), whatever order the caller adds tensors in; one
// test per canonical rule (order, 64 KiB placement, sharing confirmed on the
// bytes, NFC, digests); the non-canonical options; 1.2 stays the default.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"
#include "ztensor.h"
#include "ztensor_composite.h"

using zttest::TempDir;

using Json = nlohmann::json;

namespace {

// Sets (or, with nullptr, removes) an environment variable of this process
// (Windows has no setenv/unsetenv).
void set_env(const char *name, const char *value) {
#ifdef _WIN32
  _putenv_s(name, value ? value : "");
#else
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
#endif
}

std::vector<uint8_t> slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string golden(const std::string &name) {
  const char *root = std::getenv("ZT_SOURCE_ROOT");
  return std::string(root ? root : ".") + "/tests/data/v2-golden/" + name;
}

uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The manifest of a v2 file, through its footer (checked on the way).
Json manifest_of(const std::vector<uint8_t> &f) {
  EXPECT_GE(f.size(), 48u);
  static const uint8_t magic[8] = {0x89, 'Z', 'T', '2', 0x0D, 0x0A, 0x1A, 0x0A};
  EXPECT_EQ(0, std::memcmp(f.data(), magic, 8));
  const uint8_t *ft = f.data() + f.size() - 40;
  EXPECT_EQ(0, std::memcmp(ft + 32, magic, 8));
  const uint64_t at = le64(ft), len = le64(ft + 8);
  EXPECT_EQ(at + len + 40, f.size()) << "the footer follows the manifest";
  EXPECT_EQ(le64(ft + 16), XXH3_64bits(f.data() + at, len));
  return Json::from_cbor(f.begin() + static_cast<long>(at), f.begin() + static_cast<long>(at + len));
}

zt_writer_options v2_options(bool canonical = true) {
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = 0;
  wo.format = 2;
  wo.canonical = canonical ? 1 : 0;
  return wo;
}

std::vector<uint8_t> pattern(size_t n, size_t k) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 7 + k * 13) & 0xff);
  return v;
}

// The stored (little-endian) bytes of `vals`.
template <typename T>
std::vector<uint8_t> le_bytes(std::initializer_list<T> vals) {
  const std::vector<T> v(vals);
  return zttest::host_to_le(v.data(), v.size() * sizeof(T), sizeof(T));
}

// A tensor to add: object name, layout, shape, attributes (CBOR), parts.
struct PartSpec {
  std::string name;
  zt_dtype dtype;
  const char *type;
  std::vector<uint8_t> bytes;  // as stored: little-endian (add_all hands them over in the host's order)
};
struct ObjSpec {
  std::string name;
  const char *layout;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> attributes;
  std::vector<PartSpec> parts;
};

// CBOR written loosely on purpose (wide heads, f64 floats, unsorted keys,
// indefinite lengths): the writer must make it deterministic.
struct Loose {
  std::vector<uint8_t> b;
  void head(int major, uint64_t v) {  // always the 8-byte form
    b.push_back(static_cast<uint8_t>(major << 5 | 27));
    for (int i = 7; i >= 0; --i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void text(const std::string &s) {
    head(3, s.size());
    b.insert(b.end(), s.begin(), s.end());
  }
  void f64(double d) {
    uint64_t u;
    std::memcpy(&u, &d, 8);
    b.push_back(0xFB);
    for (int i = 7; i >= 0; --i) b.push_back(static_cast<uint8_t>(u >> (8 * i)));
  }
};

std::vector<uint8_t> basic_file_attributes() {
  Loose c;
  c.b.push_back(0xBF);  // indefinite map
  c.text("nested");
  c.head(5, 2);
  c.text("b");
  c.head(0, 1);
  c.text("a");
  c.head(5, 1);
  c.text("c");
  c.head(1, 0);
  c.text("bytes");
  c.head(2, 3);
  c.b.insert(c.b.end(), {0, 1, 255});
  c.text("list");
  c.b.push_back(0x9F);  // indefinite array
  c.head(0, 1);
  c.text("two");
  c.head(4, 1);
  c.f64(3.0);
  c.b.push_back(0xFF);
  c.text("nan");
  c.f64(std::nan(""));
  c.text("none");
  c.b.push_back(0xF6);
  c.text("flag");
  c.b.push_back(0xF5);
  c.text("f32v");
  c.f64(50331648.0);
  c.text("third");
  c.f64(0.1);
  c.text("pi");
  c.f64(3.140625);
  c.text("neg");
  c.head(1, 6);
  c.text("n");
  c.head(0, 42);
  c.text("name");
  c.text("golden");
  c.b.push_back(0xFF);
  return c.b;
}

std::vector<ObjSpec> basic_model() {
  std::vector<uint8_t> weight(16);
  for (int i = 0; i < 16; ++i) weight[i] = static_cast<uint8_t>(i * 3 + 1);
  Loose sa;
  sa.head(5, 2);
  sa.text("unit");
  sa.text("m");
  sa.text("scale");
  sa.f64(0.5);
  return {
      {"a.bias", "dense", {4}, {}, {{"data", ZT_F32, nullptr, le_bytes<float>({1, 2, 3, 4})}}},
      {"a.weight", "dense", {2, 4}, {}, {{"data", ZT_BF16, nullptr, weight}}},
      {"b.bool", "dense", {5}, {}, {{"data", ZT_U8, "bool", {0, 1, 1, 0, 1}}}},
      {"c.cplx", "dense", {2}, {}, {{"data", ZT_F32, "complex64", le_bytes<float>({1, -1, 0.5f, 2})}}},
      {"d.fp4", "dense", {5}, {}, {{"data", ZT_U8, "f4_e2m1", {0x21, 0x43, 0x05}}}},
      {"e.fp8", "dense", {3}, {}, {{"data", ZT_U8, "f8_e4m3fn", {0x38, 0x40, 0xb8}}}},
      {"scalar", "dense", {}, sa.b, {{"data", ZT_F64, nullptr, le_bytes<double>({2.5})}}},
      {"tied", "dense", {2, 4}, {}, {{"data", ZT_BF16, nullptr, weight}}},
      {"zz.big", "dense", {70000}, {}, {{"data", ZT_U8, nullptr, pattern(70000, 1)}}},
      {"\xC3\xA9", "dense", {2}, {}, {{"data", ZT_I32, nullptr, le_bytes<int32_t>({1, -2})}}},
  };
}

std::vector<uint8_t> cbor_attrs(std::function<void(Loose &)> f) {
  Loose c;
  f(c);
  return c.b;
}

std::vector<ObjSpec> layouts_model() {
  auto qg_attrs = cbor_attrs([](Loose &c) {
    c.head(5, 6);
    c.text("bits");
    c.head(0, 4);
    c.text("group_size");
    c.head(0, 8);
    c.text("axis");
    c.head(0, 1);
    c.text("packing");
    c.head(5, 3);
    c.text("word");
    c.text("u32");
    c.text("order");
    c.text("lsb_first");
    c.text("per_word");
    c.head(0, 8);
    c.text("scale_form");
    c.text("f16_factors");
    c.text("zero_point");
    c.head(5, 2);
    c.text("form");
    c.text("implied");
    c.text("value");
    c.head(0, 8);
  });
  auto mx_attrs = cbor_attrs([](Loose &c) {
    c.head(5, 2);
    c.text("block_size");
    c.head(0, 32);
    c.text("scale_form");
    c.text("e8m0_exponent");
  });
  auto gg_attrs = cbor_attrs([](Loose &c) {
    c.head(5, 2);
    c.text("elems_per_block");
    c.head(0, 32);
    c.text("block_bytes");
    c.head(0, 34);
  });
  return {
      {"coo",
       "zt.sparse_coo/1",
       {4, 4},
       {},
       {{"values", ZT_F32, nullptr, le_bytes<float>({1, 2, 3})},
        {"coords", ZT_U64, nullptr, le_bytes<uint64_t>({0, 1, 3, 2, 0, 1})}}},
      {"csr",
       "zt.sparse_csr/1",
       {3, 4},
       {},
       {{"values", ZT_F32, nullptr, le_bytes<float>({1, 2, 3, 4})},
        {"indices", ZT_U32, nullptr, le_bytes<uint32_t>({0, 2, 1, 3})},
        {"indptr", ZT_U32, nullptr, le_bytes<uint32_t>({0, 2, 3, 4})}}},
      {"gg", "gguf.q8_0/1", {2, 32}, gg_attrs, {{"data", ZT_U8, nullptr, pattern(68, 5)}}},
      {"mx",
       "zt.mx/1",
       {2, 32},
       mx_attrs,
       {{"data", ZT_U8, "f4_e2m1", pattern(32, 6)}, {"scales", ZT_U8, "f8_e8m0", {127, 128}}}},
      {"qg",
       "zt.quant_group/1",
       {2, 16},
       qg_attrs,
       {{"data", ZT_U32, nullptr, pattern(16, 7)}, {"scales", ZT_F16, nullptr, pattern(8, 8)}}},
  };
}

std::vector<ObjSpec> many_model() {
  std::vector<ObjSpec> m;
  for (size_t k = 0; k < 30; ++k) {
    char name[8];
    std::snprintf(name, sizeof name, "t%03zu", k);
    m.push_back({name, "dense", {3}, {}, {{"data", ZT_F16, nullptr, pattern(6, k % 10 == 0 ? 0 : k)}}});
  }
  return m;
}

std::vector<ObjSpec> zeros_model() {
  return {
      {"a", "dense", {0}, {}, {{"data", ZT_F32, nullptr, {}}}},
      {"b", "dense", {10}, {}, {{"data", ZT_U8, nullptr, pattern(10, 2)}}},
      {"c", "dense", {0, 5}, {}, {{"data", ZT_I64, nullptr, {}}}},
      {"d", "dense", {3}, {}, {{"data", ZT_U8, nullptr, {1, 2, 3}}}},
      {"e", "dense", {0}, {}, {{"data", ZT_U8, nullptr, {}}}},
  };
}

void add_all(zt_writer *w, const std::vector<ObjSpec> &model, bool stream) {
  for (const ObjSpec &o : model) {
    ASSERT_EQ(ZT_OK, zt_writer_begin_object(w, o.name.data(), o.name.size(), o.layout, o.shape.data(), o.shape.size()))
        << zt_last_error();
    if (!o.attributes.empty())
      ASSERT_EQ(ZT_OK, zt_writer_set_object_attributes_cbor(w, o.name.data(), o.name.size(), o.attributes.data(),
                                                            o.attributes.size()))
          << zt_last_error();
    for (const PartSpec &p : o.parts) {
      zt_blob_options bo;
      zt_blob_options_init(&bo);
      bo.logical_type = p.type;
      const std::vector<uint8_t> host = zttest::le_to_host(p.bytes.data(), p.bytes.size(), zt_dtype_size(p.dtype));
      if (!stream) {
        ASSERT_EQ(ZT_OK, zt_write_blob(w, o.name.data(), o.name.size(), p.name.c_str(), p.dtype, host.data(),
                                       host.size(), &bo))
            << zt_last_error();
      } else {  // in pieces of 1000 bytes
        ASSERT_EQ(ZT_OK, zt_write_blob_begin(w, o.name.data(), o.name.size(), p.name.c_str(), p.dtype, &bo))
            << zt_last_error();
        for (size_t at = 0; at < host.size(); at += 1000)
          ASSERT_EQ(ZT_OK, zt_write_blob_append(w, host.data() + at, std::min<size_t>(1000, host.size() - at)));
        ASSERT_EQ(ZT_OK, zt_write_blob_end(w)) << zt_last_error();
      }
    }
  }
}

std::vector<uint8_t> write_model(const std::string &path, std::vector<ObjSpec> model, const std::vector<uint8_t> &attrs,
                                 int order, bool stream) {
  if (order == 1) std::reverse(model.begin(), model.end());
  if (order == 2) {  // a fixed shuffle, parts reversed too
    for (size_t i = 0; i + 2 < model.size(); i += 3) std::swap(model[i], model[i + 2]);
    for (auto &o : model) std::reverse(o.parts.begin(), o.parts.end());
  }
  zt_writer_options wo = v2_options();
  zt_writer *w = nullptr;
  EXPECT_EQ(ZT_OK, zt_writer_create(path.c_str(), &wo, &w)) << zt_last_error();
  if (!attrs.empty()) EXPECT_EQ(ZT_OK, zt_writer_set_attributes_cbor(w, attrs.data(), attrs.size())) << zt_last_error();
  add_all(w, model, stream);
  EXPECT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
  return slurp(path);
}

struct GoldenCase {
  const char *file;
  std::function<std::vector<ObjSpec>()> model;
  std::function<std::vector<uint8_t>()> attrs;
};

const GoldenCase kGolden[] = {
    {"basic.zt", basic_model, basic_file_attributes},
    {"layouts.zt", layouts_model, [] { return std::vector<uint8_t>(); }},
    {"empty.zt", [] { return std::vector<ObjSpec>(); }, [] { return std::vector<uint8_t>(); }},
    {"many.zt", many_model, [] { return std::vector<uint8_t>(); }},
    {"zeros.zt", zeros_model, [] { return std::vector<uint8_t>(); }},
};

// The original's own canonical writer wrote these; ours must give the same
// bytes in name order, reversed, shuffled, whole and streamed.
TEST(V2Write, ByteIdenticalToTheOriginalsCanonicalFiles) {
  TempDir dir;
  for (const GoldenCase &g : kGolden) {
    const std::vector<uint8_t> want = slurp(golden(g.file));
    ASSERT_FALSE(want.empty()) << "missing golden file " << golden(g.file);
    for (int order = 0; order < 3; ++order) {
      for (bool stream : {false, true}) {
        const std::string path = dir.file(std::string("o") + std::to_string(order) + (stream ? "s" : "w") + g.file);
        const std::vector<uint8_t> got = write_model(path, g.model(), g.attrs(), order, stream);
        ASSERT_EQ(want.size(), got.size()) << g.file << " order " << order << " stream " << stream;
        EXPECT_TRUE(want == got) << g.file << " order " << order << " stream " << stream;
      }
    }
  }
}

zt_writer *open_v2(const std::string &path, const zt_writer_options &wo) {
  zt_writer *w = nullptr;
  EXPECT_EQ(ZT_OK, zt_writer_create(path.c_str(), &wo, &w)) << zt_last_error();
  return w;
}

void add_u8(zt_writer *w, const std::string &name, const std::vector<uint8_t> &bytes,
            const zt_blob_options *bo = nullptr) {
  const uint64_t shape[] = {bytes.size()};
  ASSERT_EQ(ZT_OK, zt_writer_add_dense(w, name.data(), name.size(), ZT_U8, shape, 1, bytes.data(), bytes.size(), bo))
      << zt_last_error();
}

uint64_t offset_of(const Json &m, const std::string &obj, const std::string &part = "data") {
  return m["objects"][obj]["parts"][part]["blob"][0].get<uint64_t>();
}

// Rule 3: blobs in (object, part) name order, whatever order they came in.
TEST(V2Write, BlobsAreInNameOrderWhateverTheOrderAdded) {
  TempDir dir;
  const std::string path = dir.file("order.zt");
  zt_writer *w = open_v2(path, v2_options());
  add_u8(w, "c", pattern(10, 3));
  add_u8(w, "a", pattern(10, 1));
  add_u8(w, "b", pattern(10, 2));
  ASSERT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
  const auto f = slurp(path);
  const Json m = manifest_of(f);
  EXPECT_EQ(65536u, offset_of(m, "a"));
  EXPECT_EQ(131072u, offset_of(m, "b"));
  EXPECT_EQ(196608u, offset_of(m, "c"));
  EXPECT_EQ(0, std::memcmp(f.data() + 65536, pattern(10, 1).data(), 10));
  EXPECT_EQ(le64(f.data() + f.size() - 40), 262144u) << "the manifest comes last, on the next boundary";
}

// Rule 2: 64 KiB boundaries from 65536; a blob longer than 64 KiB pushes
// the next one to the boundary after its end, and padding reads as zeros.
TEST(V2Write, SixtyFourKiBPlacementFrom65536) {
  TempDir dir;
  const std::string path = dir.file("place.zt");
  zt_writer *w = open_v2(path, v2_options());
  add_u8(w, "a", pattern(70000, 1));
  add_u8(w, "b", pattern(5, 2));
  ASSERT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
  const auto f = slurp(path);
  const Json m = manifest_of(f);
  EXPECT_EQ(65536u, offset_of(m, "a"));
  EXPECT_EQ(196608u, offset_of(m, "b"));
  for (size_t i = 8; i < 65536; ++i) ASSERT_EQ(0, f[i]) << "padding at " << i;
  for (size_t i = 65536 + 70000; i < 196608; ++i) ASSERT_EQ(0, f[i]) << "padding at " << i;
}

// Rule 3: identical decoded bytes share one blob; equal length is not enough.
TEST(V2Write, IdenticalPartsShareOneBlob) {
  TempDir dir;
  for (bool stream : {false, true}) {
    const std::string path = dir.file(stream ? "share_s.zt" : "share_w.zt");
    zt_writer *w = open_v2(path, v2_options());
    std::vector<ObjSpec> model = {
        {"x", "dense", {100}, {}, {{"data", ZT_U8, nullptr, pattern(100, 1)}}},
        {"y", "dense", {100}, {}, {{"data", ZT_U8, nullptr, pattern(100, 2)}}},
        {"z", "dense", {100}, {}, {{"data", ZT_U8, nullptr, pattern(100, 1)}}},
    };
    add_all(w, model, stream);
    ASSERT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
    const auto f = slurp(path);
    const Json m = manifest_of(f);
    EXPECT_EQ(offset_of(m, "x"), offset_of(m, "z"));
    EXPECT_NE(offset_of(m, "x"), offset_of(m, "y"));
    EXPECT_EQ(le64(f.data() + f.size() - 40), 196608u) << "two blobs, then the manifest";
  }
}

// Rule 4: an xxh3 digest of the decoded bytes on every part.
TEST(V2Write, EveryPartCarriesItsXxh3Digest) {
  TempDir dir;
  const std::string path = dir.file("digest.zt");
  zt_writer *w = open_v2(path, v2_options());
  const auto a = pattern(1000, 4);
  add_u8(w, "a", a);
  ASSERT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
  const Json m = manifest_of(slurp(path));
  char want[40];
  std::snprintf(want, sizeof want, "xxh3:%016llx", static_cast<unsigned long long>(XXH3_64bits(a.data(), a.size())));
  EXPECT_EQ(want, m["objects"]["a"]["parts"]["data"]["digest"].get<std::string>());
  EXPECT_FALSE(m["objects"]["a"]["parts"]["data"].contains("encoding"));
}

// Rule 5: a name not in NFC is refused by the canonical writer (with the NFC
// form in the message), and written as given by a non-canonical one.
TEST(V2Write, NonNfcNamesAreRefusedInCanonicalForm) {
  TempDir dir;
  const std::string decomposed = "e\xCC\x81";  // e + U+0301
  zt_writer *w = open_v2(dir.file("nfc.zt"), v2_options());
  const uint64_t shape[] = {1};
  const uint8_t b = 1;
  EXPECT_EQ(ZT_E_NAME, zt_writer_add_dense(w, decomposed.data(), decomposed.size(), ZT_U8, shape, 1, &b, 1, nullptr));
  EXPECT_NE(std::string(zt_last_error()).find("NFC"), std::string::npos) << zt_last_error();
  EXPECT_NE(std::string(zt_last_error()).find("\xC3\xA9"), std::string::npos) << zt_last_error();
  add_u8(w, "\xC3\xA9", {1});  // composed: fine
  ASSERT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();

  zt_writer_options wo = v2_options(false);
  zt_writer *w2 = open_v2(dir.file("nfc2.zt"), wo);
  add_u8(w2, decomposed, {1});
  ASSERT_EQ(ZT_OK, zt_writer_finish(w2)) << zt_last_error();
  EXPECT_TRUE(manifest_of(slurp(dir.file("nfc2.zt")))["objects"].contains(decomposed));
}

// Zero-length parts are packed (docs/v2.md, Writing): a zero-length blob
// takes no room, so the next blob starts at its offset, and every empty part
// shares the first one's blob; the original's writer does the same
// (tests/data/v2-golden/zeros.zt, compared byte for byte above).
TEST(V2Write, ZeroLengthPartsTakeNoRoom) {
  TempDir dir;
  for (int order = 0; order < 2; ++order) {
    const std::string path = dir.file("zero" + std::to_string(order) + ".zt");
    zt_writer *w = open_v2(path, v2_options());
    const uint64_t shape0[] = {0};
    if (order) add_u8(w, "b", pattern(10, 1));
    ASSERT_EQ(ZT_OK, zt_writer_add_dense(w, "a", 1, ZT_F32, shape0, 1, nullptr, 0, nullptr)) << zt_last_error();
    if (!order) add_u8(w, "b", pattern(10, 1));
    ASSERT_EQ(ZT_OK, zt_writer_add_dense(w, "c", 1, ZT_F32, shape0, 1, nullptr, 0, nullptr)) << zt_last_error();
    ASSERT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
    const auto f = slurp(path);
    const Json m = manifest_of(f);
    EXPECT_EQ(65536u, offset_of(m, "a"));
    EXPECT_EQ(0u, m["objects"]["a"]["parts"]["data"]["blob"][1].get<uint64_t>());
    EXPECT_EQ(65536u, offset_of(m, "b"));
    EXPECT_EQ(65536u, offset_of(m, "c")) << "both empty parts share the first one's blob";
    EXPECT_EQ(0, std::memcmp(f.data() + 65536, pattern(10, 1).data(), 10));
    EXPECT_EQ(131072u, le64(f.data() + f.size() - 40));
  }
}

// Sharing is decided on the bytes: with a content key that makes every
// same-length blob a candidate (ZT_TEST_V2_WEAK_CONTENT_KEY), different
// bytes still get blobs of their own.
TEST(V2Write, SharingIsConfirmedOnTheBytes) {
  TempDir dir;
  set_env("ZT_TEST_V2_WEAK_CONTENT_KEY", "1");
  for (bool stream : {false, true}) {
    const std::string path = dir.file(stream ? "weak_s.zt" : "weak_w.zt");
    zt_writer *w = open_v2(path, v2_options());
    add_all(w,
            {{"x", "dense", {64}, {}, {{"data", ZT_U8, nullptr, pattern(64, 1)}}},
             {"y", "dense", {64}, {}, {{"data", ZT_U8, nullptr, pattern(64, 2)}}},
             {"z", "dense", {64}, {}, {{"data", ZT_U8, nullptr, pattern(64, 1)}}}},
            stream);
    ASSERT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
    const auto f = slurp(path);
    const Json m = manifest_of(f);
    EXPECT_NE(offset_of(m, "x"), offset_of(m, "y"));
    EXPECT_EQ(offset_of(m, "x"), offset_of(m, "z"));
    EXPECT_EQ(0, std::memcmp(f.data() + offset_of(m, "y"), pattern(64, 2).data(), 64));
  }
  set_env("ZT_TEST_V2_WEAK_CONTENT_KEY", nullptr);
}

// Padding is left as holes where the filesystem has them: a file of many
// small tensors occupies far less than its apparent size.
TEST(V2Write, PaddingIsLeftAsHoles) {
  TempDir dir;
  const std::string path = dir.file("holes.zt");
  zt_writer *w = open_v2(path, v2_options());
  for (int i = 0; i < 64; ++i) add_u8(w, "t" + std::to_string(100 + i), pattern(16, static_cast<size_t>(i)));
  ASSERT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
  struct stat st;
  ASSERT_EQ(0, stat(path.c_str(), &st));
  EXPECT_EQ(65u * 65536 + 0, static_cast<uint64_t>(st.st_size) / 65536 * 65536);
#ifdef _WIN32
  GTEST_SKIP() << "no st_blocks on Windows: the holes cannot be counted here";
#else
  if (static_cast<uint64_t>(st.st_blocks) * 512 >= static_cast<uint64_t>(st.st_size))
    GTEST_SKIP() << "this filesystem stores no holes";
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, static_cast<uint64_t>(st.st_size) / 4);
#endif
}

// Non-canonical: alignment, zt.zstd-seekable/1, sha256 and no digest.
TEST(V2Write, NonCanonicalOptions) {
  TempDir dir;
  zt_writer_options wo = v2_options(false);
  wo.alignment = 4096;
  const std::string path = dir.file("nc.zt");
  zt_writer *w = open_v2(path, wo);
  add_u8(w, "a", pattern(5000, 1));
  zt_blob_options z;
  zt_blob_options_init(&z);
  z.encoding = ZT_ENCODING_ZSTD;
  std::vector<uint8_t> big(3u << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i / 4096);
  add_u8(w, "b", big, &z);
  zt_blob_options s;
  zt_blob_options_init(&s);
  s.digest = ZT_DIGEST_SHA256;
  add_u8(w, "c", pattern(10, 3), &s);
  zt_blob_options n;
  zt_blob_options_init(&n);
  n.digest = ZT_DIGEST_NONE;
  add_u8(w, "d", pattern(10, 4), &n);
  ASSERT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
  const auto f = slurp(path);
  const Json m = manifest_of(f);
  EXPECT_EQ(4096u, offset_of(m, "a"));
  EXPECT_EQ(12288u, offset_of(m, "b"));
  const Json &b = m["objects"]["b"]["parts"]["data"];
  EXPECT_EQ("zt.zstd-seekable/1", b["encoding"].get<std::string>());
  EXPECT_EQ(big.size(), b["decoded_length"].get<uint64_t>());
  // Three 1 MiB frames with checksums, then the seek table.
  const uint8_t *p = f.data() + b["blob"][0].get<uint64_t>();
  const size_t len = b["blob"][1].get<size_t>();
  EXPECT_EQ(0x8F92EAB1u, static_cast<uint32_t>(p[len - 4] | p[len - 3] << 8 | p[len - 2] << 16 | p[len - 1] << 24));
  EXPECT_EQ(3u, static_cast<uint32_t>(p[len - 9] | p[len - 8] << 8));
  std::vector<uint8_t> out(big.size());
  size_t at = 0, done = 0;
  for (int fr = 0; fr < 3; ++fr) {
    const size_t fsz = ZSTD_findFrameCompressedSize(p + at, len - at);
    ASSERT_FALSE(ZSTD_isError(fsz));
    EXPECT_EQ(uint64_t{1} << 20, ZSTD_getFrameContentSize(p + at, fsz));
    const size_t r = ZSTD_decompress(out.data() + done, out.size() - done, p + at, fsz);
    ASSERT_FALSE(ZSTD_isError(r));
    done += r;
    at += fsz;
    EXPECT_EQ(0x04, p[at - fsz + 4] & 0x04) << "frame " << fr << " has a content checksum";
  }
  EXPECT_TRUE(out == big);
  EXPECT_EQ(0u, m["objects"]["c"]["parts"]["data"]["digest"].get<std::string>().find("sha256:"));
  EXPECT_FALSE(m["objects"]["d"]["parts"]["data"].contains("digest"));

  zt_writer_options bad = v2_options(false);
  bad.alignment = 1000;
  zt_writer *w2 = nullptr;
  EXPECT_EQ(ZT_E_INVALID_ARG, zt_writer_create(dir.file("bad.zt").c_str(), &bad, &w2));
  zt_writer_options canon = v2_options(true);
  canon.encoding = ZT_ENCODING_ZSTD;
  EXPECT_EQ(ZT_E_INVALID_ARG, zt_writer_create(dir.file("bad2.zt").c_str(), &canon, &w2));
  zt_writer *w3 = open_v2(dir.file("bad3.zt"), v2_options(true));
  const uint64_t shape[] = {4};
  EXPECT_EQ(ZT_E_ENCODING, zt_writer_add_dense(w3, "a", 1, ZT_U8, shape, 1, "abcd", 4, &z));
  zt_writer_discard(w3);
}

// Attribute values are checked before anything is written: no tags, and at
// most 32 levels from the manifest root.
TEST(V2Write, AttributesAreCheckedAgainstSection31) {
  TempDir dir;
  zt_writer *w = open_v2(dir.file("attrs.zt"), v2_options());
  const uint8_t tagged[] = {0xA1, 0x61, 'k', 0xC1, 0x01};  // {"k": 1(1)}
  EXPECT_EQ(ZT_E_INVALID_ARG, zt_writer_set_attributes_cbor(w, tagged, sizeof tagged));
  EXPECT_NE(std::string(zt_last_error()).find("tag"), std::string::npos) << zt_last_error();
  // {"k": [[[...1]]]}: the file attributes map is at depth 1 (the manifest
  // root is 0), its value at 2; with 30 arrays the 1 is at depth 32
  // (allowed), with 31 at 33 (refused).
  for (int depth : {30, 31}) {
    std::vector<uint8_t> c = {0xA1, 0x61, 'k'};
    for (int i = 0; i < depth; ++i) c.push_back(0x81);
    c.push_back(0x01);
    EXPECT_EQ(depth == 30 ? ZT_OK : ZT_E_INVALID_ARG, zt_writer_set_attributes_cbor(w, c.data(), c.size()))
        << depth << ": " << zt_last_error();
  }
  ASSERT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
}

// The memory writer gives the file writer's bytes.
TEST(V2Write, MemoryWriterGivesTheSameBytes) {
  TempDir dir;
  const auto want = write_model(dir.file("m.zt"), basic_model(), basic_file_attributes(), 1, false);
  zt_writer_options wo = v2_options();
  zt_writer *w = nullptr;
  ASSERT_EQ(ZT_OK, zt_writer_create_memory(&wo, &w));
  ASSERT_EQ(ZT_OK, zt_writer_set_attributes_cbor(w, basic_file_attributes().data(), basic_file_attributes().size()));
  auto model = basic_model();
  std::reverse(model.begin(), model.end());
  add_all(w, model, false);
  uint8_t *bytes = nullptr;
  size_t len = 0;
  ASSERT_EQ(ZT_OK, zt_writer_finish_memory(w, &bytes, &len)) << zt_last_error();
  EXPECT_TRUE(std::vector<uint8_t>(bytes, bytes + len) == want);
  zt_free(bytes);
}

// A 1.x quantized_group object (the composite API, or a migrated file) is
// written as zt.quant_group/1 with every parameter stated; what the profile
// cannot state (a group spanning two rows) is refused with a clear reason.
TEST(V2Write, QuantizedGroupBecomesQuantGroupProfile) {
  TempDir dir;
  const std::string path = dir.file("q.zt");
  zt_writer *w = open_v2(path, v2_options());
  const uint64_t shape[] = {2, 16};
  std::vector<int32_t> packed(4, 0x76543210);
  std::vector<uint16_t> scales(4, 0x3C00), zeros(4, 0x4800);
  zt_quant_params q;
  zt_quant_params_init(&q);
  q.bits = 4;
  q.group_size = 8;
  q.packing = "8_per_i32";
  q.packed_dtype = ZT_I32;
  q.packed = packed.data();
  q.packed_len = packed.size() * 4;
  q.scales_dtype = ZT_F16;
  q.scales = scales.data();
  q.scales_len = scales.size() * 2;
  ASSERT_EQ(ZT_OK, zt_writer_add_quantized_group(w, "q", 1, shape, 2, &q, nullptr)) << zt_last_error();
  q.zeros_dtype = ZT_F16;
  q.zeros = zeros.data();
  q.zeros_len = zeros.size() * 2;
  ASSERT_EQ(ZT_OK, zt_writer_add_quantized_group(w, "z", 1, shape, 2, &q, nullptr)) << zt_last_error();
  ASSERT_EQ(ZT_OK, zt_writer_finish(w)) << zt_last_error();
  const Json m = manifest_of(slurp(path));
  const Json &o = m["objects"]["q"];
  EXPECT_EQ("zt.quant_group/1", o["layout"]);
  EXPECT_EQ(Json::parse(R"({"bits": 4, "group_size": 8, "axis": 1,
      "packing": {"word": "u32", "order": "lsb_first", "per_word": 8},
      "scale_form": "f32_factors", "zero_point": {"form": "implied", "value": 8}})"),
            o["attributes"]);
  EXPECT_TRUE(o["parts"].contains("data") && o["parts"].contains("scales") && !o["parts"].contains("packed_weight"));
  EXPECT_EQ("i32", o["parts"]["data"]["dtype"]);
  EXPECT_EQ(Json::parse(R"({"form": "tensor", "packing": "plain"})"), m["objects"]["z"]["attributes"]["zero_point"]);
  EXPECT_TRUE(m["objects"]["z"]["parts"].contains("zeros"));

  // cols 12 with groups of 8: a group would span two rows.
  zt_writer *w2 = open_v2(dir.file("q2.zt"), v2_options());
  const uint64_t shape2[] = {2, 12};
  zt_quant_params_init(&q);
  q.bits = 4;
  q.group_size = 8;
  q.packing = "8_per_i32";
  q.packed_dtype = ZT_I32;
  q.packed = packed.data();
  q.packed_len = packed.size() * 4;
  q.scales_dtype = ZT_F16;
  q.scales = scales.data();
  q.scales_len = scales.size() * 2;
  ASSERT_EQ(ZT_OK, zt_writer_add_quantized_group(w2, "q", 1, shape2, 2, &q, nullptr)) << zt_last_error();
  EXPECT_EQ(ZT_E_UNSUPPORTED, zt_writer_finish(w2));
  EXPECT_NE(std::string(zt_last_error()).find("never spans two rows"), std::string::npos) << zt_last_error();
}

// Without the new fields, callers keep getting 1.2 files.
TEST(V2Write, OnePointTwoStaysTheDefault) {
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  EXPECT_EQ(1u, wo.format);
  EXPECT_EQ(1u, wo.canonical);
  TempDir dir;
  zt_writer *w = nullptr;
  wo.sync = 0;
  ASSERT_EQ(ZT_OK, zt_writer_create(dir.file("d.zt").c_str(), &wo, &w));
  add_u8(w, "a", {1, 2});
  ASSERT_EQ(ZT_OK, zt_writer_finish(w));
  const auto f = slurp(dir.file("d.zt"));
  EXPECT_EQ(0, std::memcmp(f.data(), "ZTEN", 4));
}

}  // namespace
