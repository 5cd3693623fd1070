// Writes, through the public C API only, one .zt file per kind of content
// the library's writers can produce, into the directory given as argv[1]:
// every storage dtype raw and zstd, every digest, streamed blobs (several
// pieces, multi-threaded zstd), scalars and zero-size tensors, fp8 and
// complex logical types, sparse_csr / sparse_coo, quantized_group with and
// without zeros, file and object attributes, copies between files and
// zt_migrate. check_written.py then checks every file against spec 1.2.0.
// Exits non-zero (naming the call) when a write fails.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ztensor.h"
#include "ztensor_composite.h"

namespace {

std::string g_dir;
int g_files = 0;

[[noreturn]] void die(const char *what, zt_status st) {
  std::fprintf(stderr, "write_all: %s: %s (%s)\n", what, zt_status_str(st), zt_last_error());
  std::exit(1);
}

void ok(zt_status st, const char *what) {
  if (st != ZT_OK) die(what, st);
}

std::string path(const std::string &name) {
  return g_dir + "/" + name + ".zt";
}

// Bytes of n elements of `size` bytes, a deterministic pattern; bool gets 0/1.
std::vector<uint8_t> pattern(size_t bytes, bool is_bool = false, uint32_t seed = 1) {
  std::vector<uint8_t> v(bytes);
  uint32_t x = seed * 2654435761u + 12345u;
  for (auto &b : v) {
    x = x * 1103515245u + 12345u;
    b = is_bool ? static_cast<uint8_t>((x >> 16) & 1) : static_cast<uint8_t>(x >> 16);
  }
  return v;
}

struct Writer {
  zt_writer *w = nullptr;
  std::string name;
  Writer(const std::string &file, uint32_t digest = ZT_DIGEST_NONE, uint32_t encoding = ZT_ENCODING_RAW,
         uint32_t threads = 1) {
    zt_writer_options o;
    zt_writer_options_init(&o);
    o.sync = 0;
    o.digest = digest;
    o.encoding = encoding;
    o.threads = threads;
    name = file;
    ok(zt_writer_create(path(file).c_str(), &o, &w), ("create " + file).c_str());
  }
  void finish() {
    ok(zt_writer_finish(w), ("finish " + name).c_str());
    w = nullptr;
    ++g_files;
  }
};

zt_blob_options blob(uint32_t encoding, uint32_t digest, const char *logical = nullptr) {
  zt_blob_options b;
  zt_blob_options_init(&b);
  b.encoding = encoding;
  b.digest = digest;
  b.logical_type = logical;
  return b;
}

void dense(zt_writer *w, const std::string &name, zt_dtype dt, std::vector<uint64_t> shape, const zt_blob_options *opts,
           size_t ratio = 1) {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  const auto data = pattern(n * ratio * zt_dtype_size(dt), dt == ZT_BOOL, static_cast<uint32_t>(name.size()));
  ok(zt_writer_add_dense(w, name.data(), name.size(), dt, shape.data(), shape.size(), data.data(), data.size(), opts),
     ("add_dense " + name).c_str());
}

const zt_dtype kDtypes[] = {ZT_F64, ZT_F32, ZT_F16, ZT_BF16, ZT_I64, ZT_I32, ZT_I16,
                            ZT_I8,  ZT_U64, ZT_U32, ZT_U16,  ZT_U8,  ZT_BOOL};
const uint32_t kDigests[] = {ZT_DIGEST_NONE, ZT_DIGEST_CRC32C, ZT_DIGEST_SHA256};
const uint32_t kEncodings[] = {ZT_ENCODING_RAW, ZT_ENCODING_ZSTD};
const char *enc_name(uint32_t e) {
  return e == ZT_ENCODING_ZSTD ? "zstd" : "raw";
}
const char *digest_name(uint32_t d) {
  return d == ZT_DIGEST_SHA256 ? "sha256" : d == ZT_DIGEST_CRC32C ? "crc32c" : "nodigest";
}

// Every dtype, in one file per encoding x digest, with odd sizes so that
// blobs need padding, plus one file per dtype.
void all_dtypes() {
  for (uint32_t e : kEncodings)
    for (uint32_t d : kDigests) {
      Writer w(std::string("dtypes_") + enc_name(e) + "_" + digest_name(d));
      const auto o = blob(e, d);
      for (zt_dtype dt : kDtypes) {
        dense(w.w, std::string("t_") + zt_dtype_name(dt), dt, {3, 5}, &o);
        dense(w.w, std::string("big_") + zt_dtype_name(dt), dt, {7, 33, 5}, &o);
      }
      w.finish();
    }
  for (zt_dtype dt : kDtypes) {
    Writer w(std::string("dtype_") + zt_dtype_name(dt));
    dense(w.w, "x", dt, {17}, nullptr);
    w.finish();
  }
}

// Writer-level defaults (no per-blob options) for encoding and digest.
void writer_defaults() {
  for (uint32_t e : kEncodings)
    for (uint32_t d : kDigests) {
      Writer w(std::string("defaults_") + enc_name(e) + "_" + digest_name(d), d, e);
      dense(w.w, "a", ZT_F32, {4, 4}, nullptr);
      dense(w.w, "b", ZT_I8, {3}, nullptr);
      w.finish();
    }
}

void scalars_and_empty() {
  for (uint32_t e : kEncodings)
    for (uint32_t d : kDigests) {
      Writer w(std::string("edge_") + enc_name(e) + "_" + digest_name(d));
      const auto o = blob(e, d);
      for (zt_dtype dt : {ZT_F32, ZT_BOOL, ZT_U8, ZT_F64}) {
        const std::string n = zt_dtype_name(dt);
        dense(w.w, "scalar_" + n, dt, {}, &o);
        dense(w.w, "empty_" + n, dt, {0}, &o);
        dense(w.w, "empty2_" + n, dt, {3, 0, 2}, &o);
      }
      dense(w.w, "", ZT_U8, {1}, &o);  // the empty name
      dense(w.w, "\xc3\xa9t\xc3\xa9/\xe2\x82\xac.w", ZT_I16, {2}, &o);
      w.finish();
    }
  Writer empty("no_objects");
  empty.finish();
  Writer attrs_only("no_objects_attrs");
  ok(zt_writer_set_attributes_json(attrs_only.w, "{\"only\": \"attributes\"}"), "attrs_only");
  attrs_only.finish();
}

// Streamed blobs: uneven pieces, raw and zstd, every digest; a large one
// with several zstd threads.
void streaming() {
  for (uint32_t e : kEncodings)
    for (uint32_t d : kDigests)
      for (uint32_t threads : {1u, 4u}) {
        Writer w(std::string("stream_") + enc_name(e) + "_" + digest_name(d) + "_t" + std::to_string(threads),
                 ZT_DIGEST_NONE, ZT_ENCODING_RAW, threads);
        const auto o = blob(e, d);
        const uint64_t n = threads > 1 ? (6u << 20) / 4 : 1001;  // f32 elements
        const uint64_t shape[] = {n};
        ok(zt_writer_begin_object(w.w, "s", 1, "dense", shape, 1), "begin_object s");
        ok(zt_write_blob_begin(w.w, "s", 1, "data", ZT_F32, &o), "blob_begin");
        // Mostly compressible data, so that zstd has work to do.
        std::vector<uint8_t> all(n * 4);
        for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint8_t>((i / 7) % 251);
        size_t pos = 0, piece = 1;
        while (pos < all.size()) {
          const size_t len = std::min(all.size() - pos, piece);
          ok(zt_write_blob_append(w.w, all.data() + pos, len), "blob_append");
          pos += len;
          piece = piece * 3 + 5;
        }
        ok(zt_write_blob_end(w.w), "blob_end");
        // An empty streamed blob, and a dense one after it.
        const uint64_t zero[] = {0};
        ok(zt_writer_begin_object(w.w, "z", 1, nullptr, zero, 1), "begin_object z");
        ok(zt_write_blob_begin(w.w, "z", 1, "data", ZT_U16, &o), "blob_begin z");
        ok(zt_write_blob_end(w.w), "blob_end z");
        dense(w.w, "after", ZT_U8, {13}, &o);
        w.finish();
      }
}

void logical_types() {
  for (uint32_t e : kEncodings)
    for (uint32_t d : kDigests) {
      Writer w(std::string("logical_") + enc_name(e) + "_" + digest_name(d));
      for (const char *t : {"f8_e4m3fn", "f8_e5m2", "f8_e4m3fnuz", "f8_e5m2fnuz"}) {
        const auto o = blob(e, d, t);
        dense(w.w, t, ZT_U8, {5, 3}, &o);
      }
      auto c64 = blob(e, d, "complex64");
      dense(w.w, "complex64", ZT_F32, {4, 3}, &c64, 2);
      auto c128 = blob(e, d, "complex128");
      dense(w.w, "complex128", ZT_F64, {7}, &c128, 2);
      dense(w.w, "complex64_scalar", ZT_F32, {}, &c64, 2);
      dense(w.w, "complex128_empty", ZT_F64, {0, 4}, &c128, 2);
      w.finish();
    }
}

void sparse() {
  for (uint32_t e : kEncodings)
    for (uint32_t d : kDigests) {
      Writer w(std::string("sparse_") + enc_name(e) + "_" + digest_name(d));
      const auto o = blob(e, d);
      // CSR 4 x 6, 5 values.
      const float vals[] = {1, 2, 3, 4, 5};
      const uint64_t ind[] = {0, 5, 2, 2, 1};
      const uint64_t ptr[] = {0, 2, 2, 4, 5};
      ok(zt_writer_add_csr(w.w, "csr", 3, 4, 6, ZT_F32, vals, 5, ind, ptr, &o), "csr");
      const uint64_t ptr0[] = {0, 0, 0};
      ok(zt_writer_add_csr(w.w, "csr_empty", 9, 2, 3, ZT_F64, nullptr, 0, nullptr, ptr0, &o), "csr_empty");
      const auto oc = blob(e, d, "complex64");
      const float cvals[] = {1, -1, 2, -2};
      const uint64_t cind[] = {1, 0};
      const uint64_t cptr[] = {0, 1, 2};
      ok(zt_writer_add_csr(w.w, "csr_c64", 7, 2, 2, ZT_F32, cvals, 2, cind, cptr, &oc), "csr_c64");
      // COO 3-D, 4 values (SoA coords).
      const uint64_t shape[] = {3, 4, 5};
      const int32_t ivals[] = {7, 8, 9, 10};
      const uint64_t coords[] = {0, 1, 2, 2, /**/ 3, 0, 1, 1, /**/ 4, 4, 0, 0};
      ok(zt_writer_add_coo(w.w, "coo", 3, shape, 3, ZT_I32, ivals, 4, coords, &o), "coo");
      const auto of8 = blob(e, d, "f8_e5m2");
      const uint8_t f8[] = {0x3c, 0x40};
      const uint64_t shape2[] = {2, 2};
      const uint64_t coords2[] = {0, 1, 1, 0};
      ok(zt_writer_add_coo(w.w, "coo_f8", 6, shape2, 2, ZT_U8, f8, 2, coords2, &of8), "coo_f8");
      ok(zt_writer_add_coo(w.w, "coo_empty", 9, shape, 3, ZT_BOOL, nullptr, 0, nullptr, &o), "coo_empty");
      w.finish();
    }
}

void quantized() {
  for (uint32_t e : kEncodings)
    for (uint32_t d : kDigests) {
      Writer w(std::string("quant_") + enc_name(e) + "_" + digest_name(d));
      const auto o = blob(e, d);
      {  // GPTQ-style 4-bit, 8_per_i32, [2, 3, 20] (rows 6, cols 20), group 8.
        const uint64_t shape[] = {2, 3, 20};
        const auto packed = pattern(6 * 3 * 4);  // ceil(20/8) = 3 words a row
        const auto scales = pattern(6 * 3 * 2);  // ceil(20/8) = 3 groups a row, f16
        const auto zeros = pattern(6 * 3 * 2, false, 9);
        zt_quant_params p;
        zt_quant_params_init(&p);
        p.bits = 4;
        p.group_size = 8;
        p.packing = "8_per_i32";
        p.packed_dtype = ZT_I32;
        p.packed = packed.data();
        p.packed_len = packed.size();
        p.scales_dtype = ZT_F16;
        p.scales = scales.data();
        p.scales_len = scales.size();
        p.zeros_dtype = ZT_F16;
        p.zeros = zeros.data();
        p.zeros_len = zeros.size();
        ok(zt_writer_add_quantized_group(w.w, "q4", 2, shape, 3, &p, &o), "q4");
      }
      {  // 4-bit in bytes, no zeros, f32 scales; [5, 7], group 4.
        const uint64_t shape[] = {5, 7};
        const auto packed = pattern(5 * 4);  // ceil(7/2) = 4 bytes a row
        const auto scales = pattern(5 * 2 * 4);
        zt_quant_params p;
        zt_quant_params_init(&p);
        p.bits = 4;
        p.group_size = 4;
        p.packing = "2_per_u8";
        p.packed_dtype = ZT_U8;
        p.packed = packed.data();
        p.packed_len = packed.size();
        p.scales_dtype = ZT_F32;
        p.scales = scales.data();
        p.scales_len = scales.size();
        ok(zt_writer_add_quantized_group(w.w, "q4_nozeros", 10, shape, 2, &p, &o), "q4_nozeros");
      }
      {  // 8-bit, 1_per_u8, integer zeros; [9], group 4.
        const uint64_t shape[] = {9};
        const auto packed = pattern(9);
        const auto scales = pattern(3 * 2);
        const auto zeros = pattern(3);
        zt_quant_params p;
        zt_quant_params_init(&p);
        p.bits = 8;
        p.group_size = 4;
        p.packing = "1_per_u8";
        p.packed_dtype = ZT_U8;
        p.packed = packed.data();
        p.packed_len = packed.size();
        p.scales_dtype = ZT_BF16;
        p.scales = scales.data();
        p.scales_len = scales.size();
        p.zeros_dtype = ZT_U8;
        p.zeros = zeros.data();
        p.zeros_len = zeros.size();
        ok(zt_writer_add_quantized_group(w.w, "q8", 2, shape, 1, &p, &o), "q8");
      }
      w.finish();
    }
}

void attributes() {
  Writer w("attributes");
  ok(zt_writer_set_attributes_json(
         w.w,
         "{\"framework\": \"PyTorch\", \"license\": \"Apache-2.0\", \"n\": 3, \"f\": 0.5, \"nested\": "
         "{\"a\": [1, 2, {\"b\": null}]}, \"t\": true, \"bytes\": {\"$bytes\": \"00ff\"}}"),
     "file attributes");
  dense(w.w, "w", ZT_F32, {2, 2}, nullptr);
  ok(zt_writer_set_object_attributes_json(w.w, "w", 1, "{\"scale\": 0.5, \"tags\": [\"a\", \"b\"]}"),
     "object attributes json");
  // Object attributes as CBOR: {"k": -1, "m": {}}.
  const uint8_t cbor[] = {0xa2, 0x61, 'k', 0x20, 0x61, 'm', 0xa0};
  const uint64_t shape[] = {3};
  ok(zt_writer_begin_object(w.w, "v", 1, "dense", shape, 1), "begin v");
  ok(zt_writer_set_object_attributes_cbor(w.w, "v", 1, cbor, sizeof cbor), "object attributes cbor");
  const int64_t v[] = {1, 2, 3};
  ok(zt_write_blob(w.w, "v", 1, "data", ZT_I64, v, sizeof v, nullptr), "write v");
  w.finish();

  Writer c("attributes_cbor");
  const uint8_t fattrs[] = {0xa1, 0x63, 'k', 'e', 'y', 0x82, 0x01, 0xf5};  // {"key": [1, true]}
  ok(zt_writer_set_attributes_cbor(c.w, fattrs, sizeof fattrs), "file attributes cbor");
  dense(c.w, "x", ZT_U8, {1}, nullptr);
  c.finish();
}

// Copies of everything written so far into new files (zstd + sha256, raw +
// crc32c), and zt_migrate with each recompression choice.
void copies() {
  const char *sources[] = {"attributes",          "logical_zstd_crc32c", "sparse_raw_sha256",
                           "quant_zstd_nodigest", "edge_raw_nodigest",   "stream_zstd_sha256_t1"};
  int n = 0;
  for (const char *src : sources) {
    zt_file *f = nullptr;
    ok(zt_open(path(src).c_str(), nullptr, &f), "open source");
    for (uint32_t e : kEncodings) {
      Writer w(std::string("copy_") + src + "_" + enc_name(e), e == ZT_ENCODING_ZSTD ? ZT_DIGEST_SHA256 : 0, e);
      const zt_file *files[] = {f};
      ok(zt_writer_copy_file_fields(w.w, files, 1), "copy_file_fields");
      size_t count = 0;
      ok(zt_file_object_count(f, &count), "object_count");
      for (size_t i = 0; i < count; ++i) {
        const zt_object *o = nullptr;
        ok(zt_file_object_at(f, i, &o), "object_at");
        ok(zt_writer_copy_object(w.w, o, nullptr, 0), "copy_object");
      }
      w.finish();
    }
    for (int recompress : {0, 1, -1})
      for (uint32_t d : {static_cast<uint32_t>(ZT_DIGEST_UNKNOWN), static_cast<uint32_t>(ZT_DIGEST_CRC32C)}) {
        zt_migrate_options mo;
        zt_migrate_options_init(&mo);
        mo.sync = 0;
        mo.recompress = recompress;
        mo.digest = d;
        const std::string out = path("migrate_" + std::string(src) + "_" + std::to_string(n++));
        ok(zt_migrate(path(src).c_str(), out.c_str(), &mo), "zt_migrate");
        ++g_files;
      }
    zt_close(f);
  }
}

// Calls that must not produce a non-conforming file: each either is refused
// (fine) or leaves a file that check_written.py then checks.
void misuse() {
  const float f[4] = {1, 2, 3, 4};
  {  // A composite write refused after its object was declared leaves no
     // empty object behind (sparse objects need their components).
    Writer w("refused_composites");
    auto c64 = blob(ZT_ENCODING_RAW, ZT_DIGEST_NONE, "complex64");
    const uint64_t shape[] = {4};
    const uint64_t coords[] = {0, 1};
    if (zt_writer_add_coo(w.w, "coo", 3, shape, 1, ZT_U8, f, 2, coords, &c64) == ZT_OK)
      std::fprintf(stderr, "write_all: complex64 over u8 accepted\n");
    const uint64_t ind[] = {0, 1}, ptr[] = {0, 1, 2};
    auto bad = blob(7, ZT_DIGEST_NONE);
    if (zt_writer_add_csr(w.w, "csr", 3, 2, 2, ZT_F32, f, 2, ind, ptr, &bad) == ZT_OK)
      std::fprintf(stderr, "write_all: encoding 7 accepted\n");
    dense(w.w, "ok", ZT_F32, {4}, nullptr);
    w.finish();
  }
  {  // Spec 1.2 index dtype through the generic calls: refused, or checked.
    zt_writer_options o;
    zt_writer_options_init(&o);
    o.sync = 0;
    zt_writer *w = nullptr;
    ok(zt_writer_create(path("generic_csr_i32").c_str(), &o, &w), "create generic_csr_i32");
    const uint64_t shape[] = {2, 2};
    const int32_t ind[] = {0, 1}, ptr[] = {0, 1, 2};
    ok(zt_writer_begin_object(w, "c", 1, "sparse_csr", shape, 2), "begin c");
    ok(zt_write_blob(w, "c", 1, "values", ZT_F32, f, 8, nullptr), "values");
    zt_status st = zt_write_blob(w, "c", 1, "indices", ZT_I32, ind, sizeof ind, nullptr);
    if (st == ZT_OK) st = zt_write_blob(w, "c", 1, "indptr", ZT_I32, ptr, sizeof ptr, nullptr);
    if (st == ZT_OK)
      st = zt_writer_finish(w);
    else
      zt_writer_discard(w);
    if (st == ZT_OK) ++g_files;
  }
  {  // A sparse object missing components: finish refuses (nothing on disk).
    zt_writer_options o;
    zt_writer_options_init(&o);
    o.sync = 0;
    zt_writer *w = nullptr;
    ok(zt_writer_create(path("incomplete_coo").c_str(), &o, &w), "create incomplete_coo");
    const uint64_t shape[] = {4};
    ok(zt_writer_begin_object(w, "o", 1, "sparse_coo", shape, 1), "begin o");
    ok(zt_write_blob(w, "o", 1, "values", ZT_F32, f, 8, nullptr), "values o");
    if (zt_writer_finish(w) == ZT_OK) ++g_files;
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_all OUT_DIR\n");
    return 2;
  }
  g_dir = argv[1];
  all_dtypes();
  writer_defaults();
  scalars_and_empty();
  streaming();
  logical_types();
  sparse();
  quantized();
  attributes();
  copies();
  misuse();
  std::printf("write_all: %d files in %s\n", g_files, g_dir.c_str());
  return 0;
}
