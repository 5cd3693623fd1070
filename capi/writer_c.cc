// Writing files through the C ABI.
#include <cstring>

#include "handles.h"
#include "manifest/json.h"
#include "migrate.h"

using namespace zt;
using namespace zt::capi;

namespace {

std::string name_of(const char *name, size_t len, const char *fn) {
  if (!name && len) fail(ZT_E_INVALID_ARG, std::string(fn) + ": name is NULL");
  return std::string(name ? name : "", len);
}

BlobOptions to_blob_options(const zt_blob_options *o) {
  BlobOptions b;
  if (!o) return b;
  if (!ZT_HAS_FIELD(o, logical_type))
    fail(ZT_E_INVALID_ARG, "zt_blob_options.struct_size is not set (call zt_blob_options_init)");
  if (o->encoding > ZT_ENCODING_ZSTD) fail(ZT_E_INVALID_ARG, "zt_blob_options.encoding is out of range");
  if (o->digest > ZT_DIGEST_XXH3) fail(ZT_E_INVALID_ARG, "zt_blob_options.digest is out of range");
  b.encoding = static_cast<zt_encoding>(o->encoding);
  b.digest = static_cast<zt_digest_alg>(o->digest);
  b.zstd_level = o->zstd_level;
  b.has_level = o->zstd_level != INT32_MIN;
  if (o->logical_type) {
    b.has_type = true;
    b.logical_type = o->logical_type;
  }
  return b;
}

std::vector<uint64_t> shape_of(const uint64_t *shape, size_t ndim, const char *fn) {
  if (!shape && ndim) fail(ZT_E_INVALID_ARG, std::string(fn) + ": shape is NULL with ndim > 0");
  if (ndim > 4096) fail(ZT_E_INVALID_ARG, std::string(fn) + ": more than 4096 dimensions");
  return std::vector<uint64_t>(shape, shape + ndim);
}

std::string attributes_from_cbor(const uint8_t *cbor, size_t len, const char *fn) {
  if (!cbor && len) fail(ZT_E_INVALID_ARG, std::string(fn) + ": cbor is NULL");
  check_cbor_item(cbor, len, fn);
  if (len == 0 || (cbor[0] >> 5) != 5) fail(ZT_E_INVALID_ARG, std::string(fn) + ": attributes must be a CBOR map");
  return std::string(reinterpret_cast<const char *>(cbor), len);
}

std::string attributes_from_json(const char *json, const char *fn) {
  if (!json) fail(ZT_E_INVALID_ARG, std::string(fn) + ": json is NULL");
  std::string c = json_to_cbor(json);
  if ((static_cast<uint8_t>(c[0]) >> 5) != 5)
    fail(ZT_E_INVALID_ARG, std::string(fn) + ": attributes must be a JSON object");
  // The $map convention can spell one CBOR key twice ({"$map": [[1, 2], [1,
  // 3]]}); the reader refuses such a map, so the writer must never store it.
  check_cbor_item(reinterpret_cast<const uint8_t *>(c.data()), c.size(), fn);
  return c;
}

WriterOptions to_writer_options(const zt_writer_options *opts) {
  WriterOptions wo;
  if (!opts) return wo;
  if (!ZT_HAS_FIELD(opts, validate)) invalid("zt_writer_options.struct_size is not set (call zt_writer_options_init)");
  const bool v2 = ZT_HAS_FIELD(opts, alignment) && opts->format == 2;
  if (!v2 && opts->digest > ZT_DIGEST_SHA256) invalid("zt_writer_options.digest must be NONE, CRC32C or SHA256");
  if (opts->encoding != ZT_ENCODING_RAW && opts->encoding != ZT_ENCODING_ZSTD)
    invalid("zt_writer_options.encoding must be RAW or ZSTD");
  wo.digest = static_cast<zt_digest_alg>(opts->digest);
  wo.encoding = static_cast<zt_encoding>(opts->encoding);
  wo.zstd_level = opts->zstd_level;
  wo.threads = opts->threads;
  wo.sync = opts->sync != 0;
  wo.validate = opts->validate != 0;
  // Since 1.1.0; an older caller's smaller struct leaves it off.
  if (ZT_HAS_FIELD(opts, verify_before_replace)) wo.verify_before_replace = opts->verify_before_replace != 0;
  // Since 1.3.0: the format generation and v2's options.
  if (ZT_HAS_FIELD(opts, alignment)) {
    if (opts->format != 1 && opts->format != 2) invalid("zt_writer_options.format must be 1 (spec 1.2) or 2 (v2)");
    wo.format = static_cast<int>(opts->format);
    if (wo.format == 2) {
      if (opts->v2_digest != ZT_DIGEST_NONE && opts->v2_digest != ZT_DIGEST_XXH3 && opts->v2_digest != ZT_DIGEST_SHA256)
        invalid("zt_writer_options.v2_digest must be XXH3, SHA256 or NONE");
      wo.v2.canonical = opts->canonical != 0;
      wo.v2.alignment = opts->alignment ? opts->alignment : v2::kCanonicalAlignment;
      wo.v2.digest = static_cast<zt_digest_alg>(opts->v2_digest);
      wo.v2.encoding = static_cast<zt_encoding>(opts->encoding);
      wo.v2.zstd_level = opts->zstd_level;
      wo.v2.sync = opts->sync != 0;
    }
  }
  return wo;
}

}  // namespace

extern "C" {

ZT_API void zt_writer_options_init(zt_writer_options *o) {
  if (!init_struct(o)) return;
  o->digest = ZT_DIGEST_NONE;
  o->encoding = ZT_ENCODING_RAW;
  o->zstd_level = 3;
  o->sync = 1;
  o->validate = 1;
  o->format = 1;
  o->canonical = 1;
  o->v2_digest = ZT_DIGEST_XXH3;
}

// zt_writer_options grew in 1.1.0 (verify_before_replace), like
// zt_open_options (see capi/file_c.cc): a program built against 1.0 calls
// zt_writer_options_init@ZTENSOR_1, which fills only the 1.0 fields of its
// smaller struct; programs built against 1.1 get @@ZTENSOR_1.1.
#if defined(__ELF__)
extern "C" __attribute__((visibility("default"))) void ztensor_writer_options_init_1_0(zt_writer_options *o) {
  init_older_struct(o, ZT_SIZE_THROUGH(zt_writer_options, validate), zt_writer_options_init);
}
__asm__(".symver ztensor_writer_options_init_1_0, zt_writer_options_init@ZTENSOR_1");
// 1.3.0 appended format, canonical, v2_digest and alignment: a program
// built against 1.1 or 1.2 calls zt_writer_options_init@ZTENSOR_1.1.
extern "C" __attribute__((visibility("default"))) void ztensor_writer_options_init_1_1(zt_writer_options *o) {
  init_older_struct(o, ZT_SIZE_THROUGH(zt_writer_options, verify_before_replace), zt_writer_options_init);
}
__asm__(".symver ztensor_writer_options_init_1_1, zt_writer_options_init@ZTENSOR_1.1");
#endif

ZT_API void zt_blob_options_init(zt_blob_options *o) {
  if (!init_struct(o)) return;
  o->encoding = ZT_ENCODING_UNKNOWN;
  o->zstd_level = INT32_MIN;  // writer default
  o->digest = ZT_DIGEST_UNKNOWN;
}

ZT_API void zt_migrate_options_init(zt_migrate_options *o) {
  if (!init_struct(o)) return;
  o->zstd_level = 3;
  o->digest = ZT_DIGEST_UNKNOWN;
  o->sync = 1;
  o->format = 1;
  o->canonical = 1;
}

// zt_migrate_options grew in 1.3.0 (format, canonical): a program built
// against 1.0-1.2 calls zt_migrate_options_init@ZTENSOR_1, which fills the
// older struct.
#if defined(__ELF__)
extern "C" __attribute__((visibility("default"))) void ztensor_migrate_options_init_1_0(zt_migrate_options *o) {
  init_older_struct(o, ZT_SIZE_THROUGH(zt_migrate_options, sync), zt_migrate_options_init);
}
__asm__(".symver ztensor_migrate_options_init_1_0, zt_migrate_options_init@ZTENSOR_1");
#endif

ZT_API zt_status zt_writer_create(const char *path, const zt_writer_options *opts, zt_writer **out) {
  return guard([&] {
    if (!out) invalid("zt_writer_create: out is NULL");
    *out = nullptr;
    if (!path) invalid("zt_writer_create: path is NULL");
    refuse_url_path("zt_writer_create", "path", path, nullptr);
    auto w = std::make_unique<zt_writer>();
    w->writer = std::make_unique<Writer>(path, to_writer_options(opts));
    register_handle(w.get());
    *out = w.release();
    return ZT_OK;
  });
}

ZT_API zt_status zt_writer_create_memory(const zt_writer_options *opts, zt_writer **out) {
  return guard([&] {
    if (!out) invalid("zt_writer_create_memory: out is NULL");
    *out = nullptr;
    auto w = std::make_unique<zt_writer>();
    auto sink = std::make_unique<MemorySink>();
    w->memory = sink.get();
    w->writer = std::make_unique<Writer>(std::move(sink), to_writer_options(opts));
    register_handle(w.get());
    *out = w.release();
    return ZT_OK;
  });
}

ZT_API zt_status zt_writer_create_callbacks(zt_write_callback write, void *user, const zt_writer_options *opts,
                                            zt_writer **out) {
  return guard([&] {
    if (!out) invalid("zt_writer_create_callbacks: out is NULL");
    *out = nullptr;
    if (!write) invalid("zt_writer_create_callbacks: write is NULL");
    auto w = std::make_unique<zt_writer>();
    w->writer = std::make_unique<Writer>(std::make_unique<CallbackSink>(write, user), to_writer_options(opts));
    register_handle(w.get());
    *out = w.release();
    return ZT_OK;
  });
}

ZT_API zt_status zt_writer_set_attributes_cbor(zt_writer *w, const uint8_t *cbor, size_t len) {
  return guard([&] {
    zt_writer &h = writer_ref(w, "zt_writer_set_attributes_cbor");
    h.writer->set_attributes(attributes_from_cbor(cbor, len, "zt_writer_set_attributes_cbor"));
    return ZT_OK;
  });
}

ZT_API zt_status zt_writer_set_attributes_json(zt_writer *w, const char *json) {
  return guard([&] {
    zt_writer &h = writer_ref(w, "zt_writer_set_attributes_json");
    h.writer->set_attributes(attributes_from_json(json, "zt_writer_set_attributes_json"));
    return ZT_OK;
  });
}

ZT_API zt_status zt_writer_begin_object(zt_writer *w, const char *name, size_t name_len, const char *format,
                                        const uint64_t *shape, size_t ndim) {
  return guard([&] {
    zt_writer &h = writer_ref(w, "zt_writer_begin_object");
    h.writer->begin_object(name_of(name, name_len, "zt_writer_begin_object"), format ? format : "dense",
                           shape_of(shape, ndim, "zt_writer_begin_object"));
    return ZT_OK;
  });
}

ZT_API zt_status zt_writer_set_object_attributes_cbor(zt_writer *w, const char *name, size_t name_len,
                                                      const uint8_t *cbor, size_t len) {
  return guard([&] {
    zt_writer &h = writer_ref(w, "zt_writer_set_object_attributes_cbor");
    h.writer->set_object_attributes(name_of(name, name_len, "zt_writer_set_object_attributes_cbor"),
                                    attributes_from_cbor(cbor, len, "zt_writer_set_object_attributes_cbor"));
    return ZT_OK;
  });
}

ZT_API zt_status zt_writer_set_object_attributes_json(zt_writer *w, const char *name, size_t name_len,
                                                      const char *json) {
  return guard([&] {
    zt_writer &h = writer_ref(w, "zt_writer_set_object_attributes_json");
    h.writer->set_object_attributes(name_of(name, name_len, "zt_writer_set_object_attributes_json"),
                                    attributes_from_json(json, "zt_writer_set_object_attributes_json"));
    return ZT_OK;
  });
}

ZT_API zt_status zt_write_blob(zt_writer *w, const char *name, size_t name_len, const char *role, zt_dtype dtype,
                               const void *data, size_t len, const zt_blob_options *opts) {
  return guard([&] {
    zt_writer &h = writer_ref(w, "zt_write_blob");
    if (!role) invalid("zt_write_blob: role is NULL");
    h.writer->write_blob(name_of(name, name_len, "zt_write_blob"), role, dtype, data, len, to_blob_options(opts));
    return ZT_OK;
  });
}

ZT_API zt_status zt_write_blob_begin(zt_writer *w, const char *name, size_t name_len, const char *role, zt_dtype dtype,
                                     const zt_blob_options *opts) {
  return guard([&] {
    zt_writer &h = writer_ref(w, "zt_write_blob_begin");
    if (!role) invalid("zt_write_blob_begin: role is NULL");
    h.writer->blob_begin(name_of(name, name_len, "zt_write_blob_begin"), role, dtype, to_blob_options(opts));
    return ZT_OK;
  });
}

ZT_API zt_status zt_write_blob_append(zt_writer *w, const void *data, size_t len) {
  return guard([&] {
    writer_ref(w, "zt_write_blob_append").writer->blob_append(data, len);
    return ZT_OK;
  });
}

ZT_API zt_status zt_write_blob_end(zt_writer *w) {
  return guard([&] {
    writer_ref(w, "zt_write_blob_end").writer->blob_end();
    return ZT_OK;
  });
}

ZT_API zt_status zt_writer_add_dense(zt_writer *w, const char *name, size_t name_len, zt_dtype dtype,
                                     const uint64_t *shape, size_t ndim, const void *data, size_t len,
                                     const zt_blob_options *opts) {
  return guard([&] {
    zt_writer &h = writer_ref(w, "zt_writer_add_dense");
    std::string n = name_of(name, name_len, "zt_writer_add_dense");
    BlobOptions bo = to_blob_options(opts);
    NewObject object(w, n, "dense", shape, ndim);
    h.writer->write_blob(n, "data", dtype, data, len, bo);
    object.keep();
    return ZT_OK;
  });
}

ZT_API zt_status zt_writer_finish(zt_writer *w) {
  return guard([&] {
    zt_writer &h = writer_ref(w, "zt_writer_finish");
    // Finishing would free the bytes with the writer: refused, writer kept.
    if (h.memory) fail(ZT_E_MISUSE, "zt_writer_finish: a memory writer is finished with zt_writer_finish_memory");
    unregister_handle(&h);
    std::unique_ptr<zt_writer> owned(&h);
    owned->tag = 0;
    owned->writer->finish();
    return ZT_OK;
  });
}

ZT_API zt_status zt_writer_finish_memory(zt_writer *w, uint8_t **out, size_t *out_len) {
  return guard([&] {
    if (out) *out = nullptr;
    if (out_len) *out_len = 0;
    zt_writer &h = writer_ref(w, "zt_writer_finish_memory");
    if (!out || !out_len) invalid("zt_writer_finish_memory: out or out_len is NULL");
    if (!h.memory) fail(ZT_E_MISUSE, "zt_writer_finish_memory: not a memory writer (use zt_writer_finish)");
    unregister_handle(&h);
    std::unique_ptr<zt_writer> owned(&h);
    owned->tag = 0;
    owned->writer->finish();
    size_t len = 0;
    uint8_t *bytes = owned->memory->take(&len);
    *out = bytes;
    *out_len = len;
    return ZT_OK;
  });
}

ZT_API zt_status zt_writer_discard(zt_writer *w) {
  return guard([&] {
    if (!w) return ZT_OK;
    zt_writer &h = writer_ref(w, "zt_writer_discard");
    unregister_handle(&h);
    std::unique_ptr<zt_writer> owned(&h);
    owned->tag = 0;
    owned->writer->discard();
    return ZT_OK;
  });
}

ZT_API zt_status zt_migrate(const char *in_path, const char *out_path, const zt_migrate_options *opts) {
  return guard([&] {
    if (!in_path || !out_path) invalid("zt_migrate: a path is NULL");
    refuse_url_path("zt_migrate", "input", in_path, nullptr);
    refuse_url_path("zt_migrate", "output", out_path, nullptr);
    MigrateOptions mo;
    if (opts) {
      if (!ZT_HAS_FIELD(opts, sync))
        invalid("zt_migrate_options.struct_size is not set (call zt_migrate_options_init)");
      if (opts->recompress < -1 || opts->recompress > 1) invalid("zt_migrate_options.recompress must be -1, 0 or 1");
      if (opts->digest > ZT_DIGEST_UNKNOWN) invalid("zt_migrate_options.digest is out of range");
      mo.recompress = opts->recompress;
      mo.zstd_level = opts->zstd_level;
      mo.digest = static_cast<zt_digest_alg>(opts->digest);
      mo.sync = opts->sync != 0;
      if (ZT_HAS_FIELD(opts, canonical)) {
        if (opts->format != 1 && opts->format != 2) invalid("zt_migrate_options.format must be 1 (spec 1.2) or 2 (v2)");
        mo.format = static_cast<int>(opts->format);
        mo.canonical = opts->canonical != 0;
      }
    }
    migrate_file(in_path, out_path, mo);
    return ZT_OK;
  });
}

}  // extern "C"
