// zt_open on foreign tensor files (docs/foreign.md): safetensors, NumPy .npy
// and .npz, GGUF, recognised by their bytes, read as read-only files of dense
// objects with their metadata as attributes; and every hostile variant
// refused with a status and a message, never a crash.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#ifdef ZT_HAVE_LIBZIP
#include <zip.h>
#endif

#include "test_util.h"
#include "ztensor.h"
#include "ztensor_dlpack.h"

namespace {

using zttest::TempDir;
using zttest::write_file;

std::string u64le(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}
std::string u32le(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}
template <typename T>
std::string bytes_of(const std::vector<T> &v) {
  return zttest::le_bytes(v);
}

// A safetensors file: the JSON header padded with spaces to `pad_to`.
std::string safetensors(std::string header, const std::string &data, size_t pad_to = 8) {
  while (header.size() % pad_to) header += ' ';
  return u64le(header.size()) + header + data;
}

std::string npy(const std::string &descr, const std::string &shape, bool fortran, const std::string &data) {
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
  while ((10 + dict.size() + 1) % 64) dict += ' ';
  dict += '\n';
  std::string h = std::string("\x93NUMPY\x01\x00", 8);
  h += static_cast<char>(dict.size() & 0xff);
  h += static_cast<char>(dict.size() >> 8);
  return h + dict + data;
}

std::string gguf_str(const std::string &s) {
  return u64le(s.size()) + s;
}

struct File {
  zt_file *f = nullptr;
  ~File() { zt_close(f); }
};

zt_status open_path(const std::string &path, File &out, const zt_open_options *opts = nullptr) {
  return zt_open(path.c_str(), opts, &out.f);
}

const zt_object *object(const File &file, const std::string &name) {
  const zt_object *o = nullptr;
  EXPECT_EQ(zt_file_object_by_name(file.f, name.data(), name.size(), &o), ZT_OK) << name << ": " << zt_last_error();
  return o;
}

template <typename T>
std::vector<T> read_all(const zt_object *o) {
  size_t need = 0;
  EXPECT_EQ(zt_component_read(o, 0, nullptr, 0, &need), ZT_E_BUFFER_TOO_SMALL);
  std::vector<T> v(need / sizeof(T));
  EXPECT_EQ(zt_component_read(o, 0, v.data(), need, &need), ZT_OK) << zt_last_error();
  return v;
}

std::vector<uint64_t> shape_of(const zt_object *o) {
  zt_object_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(zt_object_get_info(o, &info), ZT_OK);
  return std::vector<uint64_t>(info.shape, info.shape + info.ndim);
}

std::string version_of(const File &file) {
  const char *v = nullptr;
  EXPECT_EQ(zt_file_version(file.f, &v), ZT_OK);
  return v ? v : "";
}

std::string attributes_json(const File &file) {
  char *s = nullptr;
  EXPECT_EQ(zt_file_attributes_json(file.f, &s), ZT_OK);
  std::string r = s ? s : "null";
  zt_free(s);
  return r;
}

const std::vector<float> kF = {0, 1, 2, 3, 4, 5};

TEST(Foreign, SafetensorsReadsInPlaceWithMetadata) {
  TempDir d;
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"("i":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}})";
  // No extension: recognised by its bytes.
  write_file(d.file("model"), safetensors(header, bytes_of(kF) + bytes_of(std::vector<int64_t>{-7, 9})));
  File f;
  ASSERT_EQ(open_path(d.file("model"), f), ZT_OK) << zt_last_error();
  EXPECT_EQ(version_of(f), "safetensors");
  EXPECT_EQ(attributes_json(f), R"({"format":"pt"})");
  size_t n = 0;
  ASSERT_EQ(zt_file_object_count(f.f, &n), ZT_OK);
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(read_all<float>(object(f, "w")), kF);
  EXPECT_EQ(shape_of(object(f, "w")), (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(read_all<int64_t>(object(f, "i")), (std::vector<int64_t>{-7, 9}));
  if (!zttest::kHostBigEndian) {  // zero-copy: the view is the file's bytes
    const void *p = nullptr;
    size_t len = 0;
    ASSERT_EQ(zt_component_view(object(f, "w"), 0, &p, &len), ZT_OK) << zt_last_error();
    ASSERT_EQ(len, 24u);
    EXPECT_EQ(std::memcmp(p, kF.data(), 24), 0);
  }
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();
}

// safetensors' sub-byte and FNUZ dtypes (its Dtype enum, tensor.rs): u8
// bytes under a logical type; a sub-byte tensor holds shape × bits / 8 bytes,
// and one that is not a whole number of bytes is refused as safetensors
// refuses it (MisalignedSlice).
TEST(Foreign, SafetensorsSubByteAndFnuzDtypes) {
  TempDir d;
  const std::string header = R"({"f4":{"dtype":"F4","shape":[2,4],"data_offsets":[0,4]},)"
                             R"("e2m3":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[4,7]},)"
                             R"("e3m2":{"dtype":"F6_E3M2","shape":[2,4],"data_offsets":[7,13]},)"
                             R"("e8m0":{"dtype":"F8_E8M0","shape":[2],"data_offsets":[13,15]},)"
                             R"("e4nuz":{"dtype":"F8_E4M3FNUZ","shape":[1],"data_offsets":[15,16]},)"
                             R"("e5nuz":{"dtype":"F8_E5M2FNUZ","shape":[1],"data_offsets":[16,17]}})";
  std::string data;
  for (int i = 0; i < 17; ++i) data += static_cast<char>(0x10 + i);
  write_file(d.file("m.safetensors"), safetensors(header, data));
  File f;
  ASSERT_EQ(open_path(d.file("m.safetensors"), f), ZT_OK) << zt_last_error();
  struct Want {
    const char *name, *logical;
    std::vector<uint64_t> shape;
    size_t begin, len;
  };
  const Want wants[] = {{"f4", "f4_e2m1", {2, 4}, 0, 4},      {"e2m3", "f6_e2m3", {4}, 4, 3},
                        {"e3m2", "f6_e3m2", {2, 4}, 7, 6},    {"e8m0", "f8_e8m0fnu", {2}, 13, 2},
                        {"e4nuz", "f8_e4m3fnuz", {1}, 15, 1}, {"e5nuz", "f8_e5m2fnuz", {1}, 16, 1}};
  for (const Want &w : wants) {
    SCOPED_TRACE(w.name);
    const zt_object *o = object(f, w.name);
    ASSERT_NE(o, nullptr);
    zt_component_info ci{};
    ci.struct_size = sizeof ci;
    ASSERT_EQ(zt_object_component(o, 0, &ci), ZT_OK) << zt_last_error();
    EXPECT_EQ(ci.dtype, ZT_U8);
    ASSERT_NE(ci.logical_type, nullptr);
    EXPECT_STREQ(ci.logical_type, w.logical);
    EXPECT_EQ(ci.decoded_length, w.len);
    EXPECT_EQ(shape_of(o), w.shape);
    EXPECT_EQ(read_all<char>(o), std::vector<char>(data.begin() + w.begin, data.begin() + w.begin + w.len));
  }
  EXPECT_EQ(zt_file_verify(f.f, 1, nullptr, nullptr), ZT_OK) << zt_last_error();

  // 3 F4 elements are 12 bits: not a whole number of bytes.
  write_file(d.file("odd.safetensors"),
             safetensors(R"({"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", std::string(2, '\0')));
  File odd;
  EXPECT_EQ(open_path(d.file("odd.safetensors"), odd), ZT_E_FORMAT);
  EXPECT_NE(std::string(zt_last_error()).find("3 F4 elements of 4 bits are not a whole number of bytes"),
            std::string::npos)
      << zt_last_error();
  // The shape must match the packed size: 4 F4 elements are 2 bytes, not 4.
  write_file(d.file("span.safetensors"),
             safetensors(R"({"w":{"dtype":"F4","shape":[4],"data_offsets":[0,4]}})", std::string(4, '\0')));
  File span;
  EXPECT_EQ(open_path(d.file("span.safetensors"), span), ZT_E_FORMAT);
  EXPECT_NE(std::string(zt_last_error()).find("needs 2"), std::string::npos) << zt_last_error();
}

// A packed sub-byte tensor (safetensors F4 and F6_*, v2's f4_e2m1) holds
// fewer bytes than its shape × one byte: DLPack, which has no such type,
// refuses it instead of handing out a tensor that reaches past its bytes.
TEST(Foreign, PackedSubByteTypesHaveNoDlpackTensor) {
  TempDir d;
  write_file(d.file("m.safetensors"), safetensors(R"({"f4":{"dtype":"F4","shape":[2,4],"data_offsets":[0,4]},)"
                                                  R"("f6":{"dtype":"F6_E3M2","shape":[4],"data_offsets":[4,7]},)"
                                                  R"("e8m0":{"dtype":"F8_E8M0","shape":[2],"data_offsets":[7,9]}})",
                                                  std::string(9, '\x11')));
  File f;
  ASSERT_EQ(open_path(d.file("m.safetensors"), f), ZT_OK) << zt_last_error();
  for (const char *name : {"f4", "f6"}) {
    DLManagedTensor *t = nullptr;
    EXPECT_EQ(zt_object_to_dlpack(object(f, name), &t), ZT_E_UNSUPPORTED) << name;
    EXPECT_EQ(t, nullptr);
    EXPECT_NE(std::string(zt_last_error()).find("packs its elements below a byte"), std::string::npos)
        << zt_last_error();
  }
  // Nor is an F6 tensor cut by its shape: 4 elements are 3 bytes.
  const uint64_t start[] = {0}, stop[] = {4};
  char buf[4] = {};
  EXPECT_EQ(zt_component_read_slice(object(f, "f6"), 0, 1, start, stop, buf, sizeof buf), ZT_E_UNSUPPORTED);
  EXPECT_NE(std::string(zt_last_error()).find("packs 4 elements in 3 bytes"), std::string::npos) << zt_last_error();
  DLManagedTensor *t = nullptr;  // a byte-sized logical type travels as its bytes
  ASSERT_EQ(zt_object_to_dlpack(object(f, "e8m0"), &t), ZT_OK) << zt_last_error();
  EXPECT_EQ(t->dl_tensor.shape[0], 2);
  t->deleter(t);

  // The same for a v2 file's f4_e2m1: 32 elements in 16 bytes.
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.format = 2;
  zt_writer *w = nullptr;
  ASSERT_EQ(zt_writer_create_memory(&wo, &w), ZT_OK) << zt_last_error();
  zt_blob_options bo;
  zt_blob_options_init(&bo);
  bo.logical_type = "f4_e2m1";
  const uint64_t shape[] = {32};
  const std::string bytes(16, '\x21');
  ASSERT_EQ(zt_writer_add_dense(w, "q", 1, ZT_U8, shape, 1, bytes.data(), bytes.size(), &bo), ZT_OK) << zt_last_error();
  uint8_t *out = nullptr;
  size_t out_len = 0;
  ASSERT_EQ(zt_writer_finish_memory(w, &out, &out_len), ZT_OK) << zt_last_error();
  const std::string file(reinterpret_cast<const char *>(out), out_len);
  zt_free(out);
  File v2;
  ASSERT_EQ(zt_open_memory(file.data(), file.size(), nullptr, &v2.f), ZT_OK) << zt_last_error();
  t = nullptr;
  EXPECT_EQ(zt_object_to_dlpack(object(v2, "q"), &t), ZT_E_UNSUPPORTED);
  EXPECT_NE(std::string(zt_last_error()).find("'f4_e2m1' packs its elements below a byte (16 bytes for 32 elements)"),
            std::string::npos)
      << zt_last_error();
}

TEST(Foreign, MisalignedDataIsCopiedNotViewed) {
  TempDir d;
  // A 1-byte-padded header puts the f32 data at an odd offset.
  std::string header = R"({"w":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})";
  if ((8 + header.size()) % 4 == 0) header += ' ';
  write_file(d.file("m.safetensors"), safetensors(header, bytes_of(kF), 1));
  File f;
  ASSERT_EQ(open_path(d.file("m.safetensors"), f), ZT_OK) << zt_last_error();
  const void *p = nullptr;
  size_t len = 0;
  EXPECT_EQ(zt_component_view(object(f, "w"), 0, &p, &len), ZT_E_NOT_ZERO_COPY);
  // On a big-endian host the byte order rules the view out first, and is the
  // reason given.
  EXPECT_NE(std::string(zt_last_error()).find(zttest::kHostBigEndian ? "big-endian host" : "not aligned"),
            std::string::npos)
      << zt_last_error();
  EXPECT_EQ(read_all<float>(object(f, "w")), kF);
  if (!zttest::kHostBigEndian) {  // the bytes, in place, for a caller that reads them as bytes
    ASSERT_EQ(zt_component_view_unaligned(object(f, "w"), 0, &p, &len), ZT_OK) << zt_last_error();
    ASSERT_EQ(len, 24u);
    EXPECT_NE(reinterpret_cast<uintptr_t>(p) % 4, 0u);
    EXPECT_EQ(std::memcmp(p, kF.data(), 24), 0);
  }
}

TEST(Foreign, SafetensorsFromMemory) {
  const std::string bytes = safetensors(R"({"w":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})", bytes_of(kF));
  zt_file *f = nullptr;
  ASSERT_EQ(zt_open_memory(bytes.data(), bytes.size(), nullptr, &f), ZT_OK) << zt_last_error();
  File holder;
  holder.f = f;
  EXPECT_EQ(read_all<float>(object(holder, "w")), kF);
}

TEST(Foreign, NpyLittleBigEndianAndFortran) {
  TempDir d;
  write_file(d.file("le.npy"), npy("<f4", "(2, 3)", false, bytes_of(kF)));
  std::string be = bytes_of(kF);
  for (size_t i = 0; i < be.size(); i += 4) std::swap(be[i], be[i + 3]), std::swap(be[i + 1], be[i + 2]);
  write_file(d.file("be.npy"), npy(">f4", "(2, 3)", false, be));
  // Column-major storage of [[0,1,2],[3,4,5]]: 0,3,1,4,2,5.
  write_file(d.file("fo.npy"), npy("<f4", "(2, 3)", true, bytes_of(std::vector<float>{0, 3, 1, 4, 2, 5})));
  for (const char *name : {"le", "be", "fo"}) {
    File f;
    ASSERT_EQ(open_path(d.file(std::string(name) + ".npy"), f), ZT_OK) << name << ": " << zt_last_error();
    EXPECT_EQ(version_of(f), "npy");
    const zt_object *o = object(f, name);  // a lone array is named after the file
    EXPECT_EQ(read_all<float>(o), kF) << name;
    EXPECT_EQ(shape_of(o), (std::vector<uint64_t>{2, 3})) << name;
    const void *p = nullptr;
    size_t len = 0;
    const zt_status view = zt_component_view(o, 0, &p, &len);
    // Bytes in the host's order are lent; the others are swapped by reads,
    // never lent (le and fo are little-endian, be big-endian).
    if ((std::string(name) == "be") == zttest::kHostBigEndian)
      EXPECT_EQ(view, ZT_OK) << name << ": " << zt_last_error();
    else
      EXPECT_EQ(view, ZT_E_NOT_ZERO_COPY) << name << ": bytes not in the host's order are lent";
  }
}

TEST(Foreign, Gguf) {
  TempDir d;
  std::string b = "GGUF" + u32le(3) + u64le(2) + u64le(1);
  b += gguf_str("general.name") + u32le(8) + gguf_str("tiny");
  b += gguf_str("w") + u32le(2) + u64le(3) + u64le(2) + u32le(0) + u64le(0);  // f32, ne = [3, 2]
  b += gguf_str("q") + u32le(1) + u64le(32) + u32le(2) + u64le(32);           // q4_0: one 18-byte block
  while (b.size() % 32) b += '\0';
  b += bytes_of(kF) + std::string(8, '\0') + std::string(18, '\x11');
  write_file(d.file("m.gguf"), b);
  File f;
  ASSERT_EQ(open_path(d.file("m.gguf"), f), ZT_OK) << zt_last_error();
  EXPECT_EQ(version_of(f), "gguf v3");
  EXPECT_EQ(attributes_json(f), R"({"general.name":"tiny"})");
  EXPECT_EQ(shape_of(object(f, "w")), (std::vector<uint64_t>{2, 3}));  // row-major: ne reversed
  EXPECT_EQ(read_all<float>(object(f, "w")), kF);
  const zt_object *q = object(f, "q");
  zt_object_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(zt_object_get_info(q, &info), ZT_OK);
  EXPECT_STREQ(info.format, "ggml_quantized");
  EXPECT_EQ(read_all<uint8_t>(q), std::vector<uint8_t>(18, 0x11));
  char *attrs = nullptr;
  ASSERT_EQ(zt_object_attributes_json(q, &attrs), ZT_OK);
  EXPECT_NE(std::string(attrs).find(R"("ggml_type":"q4_0")"), std::string::npos) << attrs;
  zt_free(attrs);
}

#ifdef ZT_HAVE_LIBZIP
void write_npz(const std::string &path, const std::vector<std::pair<std::string, std::string>> &members, bool deflate) {
  zip_t *z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, nullptr);
  ASSERT_NE(z, nullptr);
  for (const auto &[name, data] : members) {
    zip_source_t *s = zip_source_buffer(z, data.data(), data.size(), 0);
    zip_int64_t i = zip_file_add(z, name.c_str(), s, ZIP_FL_ENC_UTF_8);
    ASSERT_GE(i, 0);
    zip_set_file_compression(z, static_cast<zip_uint64_t>(i), deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
  }
  ASSERT_EQ(zip_close(z), 0);
}

TEST(Foreign, NpzStoredAndDeflated) {
  TempDir d;
  const std::string x = npy("<f4", "(2, 3)", false, bytes_of(kF));
  const std::string y = npy("<i8", "(2,)", false, bytes_of(std::vector<int64_t>{5, -5}));
  for (bool deflate : {false, true}) {
    const std::string path = d.file(deflate ? "d.npz" : "s.npz");
    write_npz(path, {{"x.npy", x}, {"y.npy", y}}, deflate);
    File f;
    ASSERT_EQ(open_path(path, f), ZT_OK) << zt_last_error();
    EXPECT_EQ(version_of(f), "npz");
    EXPECT_EQ(read_all<float>(object(f, "x")), kF);
    EXPECT_EQ(read_all<int64_t>(object(f, "y")), (std::vector<int64_t>{5, -5}));
  }
  // Members are decoded on first read, a view's included (issue 37.6).
  if (!zttest::kHostBigEndian) {
    File f;
    ASSERT_EQ(open_path(d.file("d.npz"), f), ZT_OK) << zt_last_error();
    const void *p = nullptr;
    size_t len = 0;
    ASSERT_EQ(zt_component_view(object(f, "x"), 0, &p, &len), ZT_OK) << zt_last_error();
    ASSERT_EQ(len, 24u);
    EXPECT_EQ(std::memcmp(p, kF.data(), 24), 0);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  }
  // A member inflating past max_decoded_size: the file opens and lists;
  // that member's read fails, the others read.
  zt_open_options opts;
  zt_open_options_init(&opts);
  opts.max_decoded_size = 16;
  File f;
  ASSERT_EQ(open_path(d.file("d.npz"), f, &opts), ZT_OK) << zt_last_error();
  std::vector<float> buf(6);
  size_t need = 0;
  EXPECT_EQ(zt_component_read(object(f, "x"), 0, buf.data(), 24, &need), ZT_E_LIMIT);
  EXPECT_NE(std::string(zt_last_error()).find("max_decoded_size"), std::string::npos) << zt_last_error();
  EXPECT_EQ(read_all<int64_t>(object(f, "y")), (std::vector<int64_t>{5, -5}));
}

// numpy.savez leaves each stored member's data wherever the zip's local
// header and the member's name put it: names of 5 to 8 bytes move the data
// through every residue mod 4. zt_component_view lends only the aligned
// ones (its pointer is typed); zt_component_view_unaligned lends all of
// them, in place (a pointer into the caller's buffer, no copy).
TEST(Foreign, NpzMisalignedMembersAreLentByTheUnalignedView) {
  TempDir d;
  const std::vector<double> f8 = {0.5, -1.25, 3.0};
  std::vector<std::pair<std::string, std::string>> members;
  for (const char *name : {"a.npy", "ab.npy", "abc.npy", "abcd.npy"})
    members.push_back({name, npy("<f4", "(2, 3)", false, bytes_of(kF))});
  for (const char *name : {"e.npy", "ef.npy", "efg.npy", "efgh.npy"})
    members.push_back({name, npy("<f8", "(3,)", false, bytes_of(f8))});
  write_npz(d.file("m.npz"), members, false);
  const std::string file = zttest::read_file(d.file("m.npz"));
  std::vector<uint64_t> buf((file.size() + 7) / 8);  // 8-aligned: file offsets and addresses agree mod 8
  std::memcpy(buf.data(), file.data(), file.size());
  const auto *base = reinterpret_cast<const uint8_t *>(buf.data());
  zt_file *raw = nullptr;
  ASSERT_EQ(zt_open_memory(buf.data(), file.size(), nullptr, &raw), ZT_OK) << zt_last_error();
  File f;
  f.f = raw;
  size_t misaligned = 0;
  for (const auto &member : members) {
    const std::string name = member.first.substr(0, member.first.size() - 4);
    const bool is_f8 = name[0] == 'e';
    const size_t esize = is_f8 ? 8 : 4, len = 24;
    const zt_object *o = object(f, name);
    zt_component_info ci{};
    ci.struct_size = sizeof ci;
    ASSERT_EQ(zt_object_component(o, 0, &ci), ZT_OK) << zt_last_error();
    const void *loose = nullptr, *typed = nullptr;
    size_t loose_len = 0, typed_len = 0;
    const zt_status st = zt_component_view_unaligned(o, 0, &loose, &loose_len);
    const zt_status typed_st = zt_component_view(o, 0, &typed, &typed_len);
    if (zttest::kHostBigEndian) {  // little-endian elements: reads swap them, nothing is lent
      EXPECT_EQ(st, ZT_E_NOT_ZERO_COPY) << name;
      continue;
    }
    ASSERT_EQ(st, ZT_OK) << name << ": " << zt_last_error();
    EXPECT_EQ(loose, base + ci.offset) << name << ": lent in place";
    ASSERT_EQ(loose_len, len) << name;
    EXPECT_EQ(std::memcmp(loose, is_f8 ? static_cast<const void *>(f8.data()) : kF.data(), len), 0) << name;
    if (ci.offset % esize != 0) {
      ++misaligned;
      EXPECT_EQ(typed_st, ZT_E_NOT_ZERO_COPY) << name << ": a typed pointer must be aligned";
      EXPECT_EQ(typed, nullptr);
    } else {
      EXPECT_EQ(typed_st, ZT_OK) << name << ": " << zt_last_error();
      EXPECT_EQ(typed, loose) << name;
    }
  }
  if (!zttest::kHostBigEndian) EXPECT_GE(misaligned, 4u) << "the names were chosen to misalign members";
  // Every other refusal stands: pread access has no mapping to lend.
  zt_open_options opts;
  zt_open_options_init(&opts);
  opts.access = ZT_ACCESS_PREAD;
  File p;
  ASSERT_EQ(open_path(d.file("m.npz"), p, &opts), ZT_OK) << zt_last_error();
  const void *out = nullptr;
  size_t out_len = 0;
  EXPECT_EQ(zt_component_view_unaligned(object(p, "a"), 0, &out, &out_len), ZT_E_NOT_ZERO_COPY);
  EXPECT_EQ(zt_component_view_unaligned(object(p, "a"), 0, nullptr, &out_len), ZT_E_INVALID_ARG);
  EXPECT_EQ(zt_component_view_unaligned(nullptr, 0, &out, &out_len), ZT_E_INVALID_ARG);
}

// Many members read at once, from several threads (zt_file_read_many): each
// is decoded once, whatever thread asks first, and all read right.
TEST(Foreign, NpzMembersDecodedOnConcurrentReads) {
  TempDir d;
  std::vector<std::pair<std::string, std::string>> members;
  std::vector<std::vector<int32_t>> want;
  for (int i = 0; i < 40; ++i) {
    std::vector<int32_t> v(1000 + 37 * i);
    for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<int32_t>(i * 100000 + k);
    members.push_back(
        {"m" + std::to_string(i) + ".npy", npy("<i4", "(" + std::to_string(v.size()) + ",)", false, bytes_of(v))});
    want.push_back(std::move(v));
  }
  write_npz(d.file("m.npz"), members, true);
  File f;
  ASSERT_EQ(open_path(d.file("m.npz"), f), ZT_OK) << zt_last_error();
  std::vector<std::vector<int32_t>> got(want.size());
  std::vector<zt_read_request> reqs(want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    got[i].resize(want[i].size());
    reqs[i] = zt_read_request{};
    reqs[i].object = object(f, "m" + std::to_string(i));
    reqs[i].component = 0;
    reqs[i].dst = got[i].data();
    reqs[i].dst_capacity = got[i].size() * 4;
  }
  ASSERT_EQ(zt_file_read_many(f.f, reqs.data(), reqs.size()), ZT_OK) << zt_last_error();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << i;
}
#endif

#ifdef ZT_HAVE_LIBZIP
// PyTorch checkpoints written by torch.save (tests/data/foreign): tensors
// over stored members are views into the file; a checkpoint with a strided
// view is copied, and its views point at the copies.
TEST(Foreign, PytorchViews) {
  const std::string dir = zttest::env_or("ZT_SOURCE_ROOT", "") + "/tests/data/foreign/";
  for (const char *name : {"state_dict.pth", "checkpoint.pt"}) {
    SCOPED_TRACE(name);
    File f;
    ASSERT_EQ(open_path(dir + name, f), ZT_OK) << zt_last_error();
    EXPECT_EQ(version_of(f), "pickle");
    size_t n = 0;
    ASSERT_EQ(zt_file_object_count(f.f, &n), ZT_OK);
    ASSERT_GT(n, 1u);
    for (size_t i = 0; i < n; ++i) {
      const zt_object *o = nullptr;
      ASSERT_EQ(zt_file_object_at(f.f, i, &o), ZT_OK);
      size_t need = 0;
      const zt_status size_query = zt_component_read(o, 0, nullptr, 0, &need);
      ASSERT_TRUE(size_query == ZT_OK || size_query == ZT_E_BUFFER_TOO_SMALL) << zt_last_error();
      std::vector<uint8_t> copy(need);
      ASSERT_EQ(zt_component_read(o, 0, copy.data(), copy.size(), &need), ZT_OK) << zt_last_error();
      if (zttest::kHostBigEndian) continue;
      const void *p = nullptr;
      size_t len = 0;
      ASSERT_EQ(zt_component_view(o, 0, &p, &len), ZT_OK) << zt_last_error();
      ASSERT_EQ(len, copy.size());
      EXPECT_EQ(std::memcmp(p, copy.data(), len), 0);
    }
  }
}
#endif

// Every hostile file: a clean status, a message that names the rule.
TEST(Foreign, HostileFilesAreRefused) {
  TempDir d;
  struct Case {
    const char *name;
    std::string bytes;
    const char *why;
  };
  const std::string w = R"("w":{"dtype":"F32","shape":[6],"data_offsets":[0,24]})";
  const std::string npy_full = npy("<f4", "(2, 3)", false, bytes_of(kF));
  const std::string npy_short = npy_full.substr(0, npy_full.size() - 4);
  std::vector<Case> cases = {
      {"truncated.safetensors", safetensors("{" + w + "}", bytes_of(kF)).substr(0, 50), "past the end"},
      {"cut.safetensors", safetensors("{" + w + "}", bytes_of(kF)).substr(0, 80), "outside"},
      {"overlap.safetensors",
       safetensors(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                   R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})",
                   bytes_of(kF)),
       "overlap"},
      {"huge.safetensors",
       safetensors(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,24]}})", bytes_of(kF)),
       "overflows"},
      {"dtype.safetensors", safetensors(R"({"w":{"dtype":"Q9","shape":[6],"data_offsets":[0,24]}})", bytes_of(kF)),
       "dtype 'Q9'"},
      {"dup.safetensors", safetensors("{" + w + "," + w + "}", bytes_of(kF)), "twice"},
      {"badjson.safetensors", safetensors(R"({"w":{"dtype":"F32",)", bytes_of(kF)), "not valid JSON"},
      {"deep.safetensors", safetensors(std::string(100, '[') + std::string(100, ']'), ""), "deeper than 64"},
      {"trunc.npy", npy("<f4", "(2, 3)", false, bytes_of(kF)).substr(0, 80), "past the end"},
      {"short.npy", npy_short, "truncated"},
      {"huge.npy", npy("<f4", "(4294967296, 4294967296, 16)", false, ""), "overflows"},
      {"dtype.npy", npy("<q7", "(2,)", false, std::string(16, '\0')), "dtype '<q7'"},
      {"count.gguf", "GGUF" + u32le(3) + u64le(uint64_t{1} << 60) + u64le(0), "tensor count"},
      {"type.gguf",
       "GGUF" + u32le(3) + u64le(1) + u64le(0) + gguf_str("w") + u32le(1) + u64le(4) + u32le(9999) + u64le(0),
       "unknown ggml type"},
  };
  for (const auto &c : cases) {
    write_file(d.file(c.name), c.bytes);
    File f;
    const zt_status st = open_path(d.file(c.name), f);
    EXPECT_NE(st, ZT_OK) << c.name;
    EXPECT_EQ(f.f, nullptr) << c.name;
    EXPECT_NE(std::string(zt_last_error()).find(c.why), std::string::npos) << c.name << ": " << zt_last_error();
  }
}

TEST(Foreign, HeaderLimitComesFromOpenOptions) {
  TempDir d;
  write_file(d.file("m.safetensors"),
             safetensors(R"({"w":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})", bytes_of(kF)));
  zt_open_options opts;
  zt_open_options_init(&opts);
  opts.max_manifest_size = 16;
  File f;
  EXPECT_EQ(open_path(d.file("m.safetensors"), f, &opts), ZT_E_FORMAT);
  EXPECT_NE(std::string(zt_last_error()).find("exceeds the limit"), std::string::npos) << zt_last_error();
}

}  // namespace
