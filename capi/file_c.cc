// Opening files and the file-level getters of the C ABI.
#include <cstring>

#include "handles.h"
#include "manifest/decode.h"
#include "manifest/json.h"
#include "manifest/model_json.h"

using namespace zt;
using namespace zt::capi;

namespace zt::capi {

ReaderOptions to_reader_options(const zt_open_options *o) {
  ReaderOptions r;
  if (!o) return r;
  if (!ZT_HAS_FIELD(o, access))
    fail(ZT_E_INVALID_ARG, "zt_open_options.struct_size is not set (call zt_open_options_init)");
  // Fields beyond what the caller's struct holds keep their defaults.
  if (ZT_HAS_FIELD(o, access)) {
    if (o->access > ZT_ACCESS_PREAD) fail(ZT_E_INVALID_ARG, "zt_open_options.access must be MMAP or PREAD");
    r.access = static_cast<zt_access>(o->access);
  }
  if (ZT_HAS_FIELD(o, strict)) r.strict = o->strict != 0;
  if (ZT_HAS_FIELD(o, threads)) r.threads = o->threads;
  if (ZT_HAS_FIELD(o, max_manifest_size) && o->max_manifest_size) r.max_manifest_size = o->max_manifest_size;
  if (ZT_HAS_FIELD(o, max_decoded_size) && o->max_decoded_size) r.max_decoded_size = o->max_decoded_size;
  // Since 1.1.0; an older caller's smaller struct leaves it off.
  if (ZT_HAS_FIELD(o, verify_on_read)) r.verify_on_read = o->verify_on_read != 0;
  // Since 1.2.0.
  if (ZT_HAS_FIELD(o, prefetch)) {
    if (o->prefetch > 1) fail(ZT_E_INVALID_ARG, "zt_open_options.prefetch must be 0 or 1");
    r.prefetch = o->prefetch != 0;
  }
  return r;
}

zt_status finish_open(std::shared_ptr<Reader> reader, zt_file **out) {
  auto f = std::make_unique<zt_file>();
  f->reader = std::move(reader);
  const auto &objs = f->reader->manifest().objects;
  f->objects.resize(objs.size());
  for (size_t i = 0; i < objs.size(); ++i) {
    f->objects[i].file = f.get();
    f->objects[i].obj = &objs[i];
    f->objects[i].reader = f->reader.get();
  }
  register_handle(f.get());
  register_objects(f->objects.data(), f->objects.size());
  *out = f.release();
  return ZT_OK;
}

// zt_file_verify(_n): every failure to `report` (object name, failure), in
// manifest order; the first one's status and message are the call's.
template <typename Report>
zt_status verify_file(const zt_file *file, uint32_t strict, const char *fn, Report report) {
  return guard([&] {
    const zt_file &f = file_ref(file, fn);
    auto failures = f.reader->verify_all(strict != 0);
    const auto &objs = f.reader->manifest().objects;
    for (const auto &x : failures) report(objs[x.object].name, x);
    if (failures.empty()) return ZT_OK;
    set_error(failures.front().message);
    return failures.front().status;
  });
}

}  // namespace zt::capi

extern "C" {

ZT_API void zt_open_options_init(zt_open_options *o) {
  if (!init_struct(o)) return;
  o->access = ZT_ACCESS_MMAP;
  o->max_manifest_size = kMaxManifestSize;
  o->max_decoded_size = uint64_t{64} << 30;
}

// zt_open_options grew in 1.1.0 (verify_on_read) and 1.2.0 (prefetch). A
// program built against 1.0 allocated the 1.0 struct and calls the init it
// was linked with, the symbol zt_open_options_init@ZTENSOR_1: that version
// must write only the 1.0 fields, or it would write past the caller's
// struct; the same for 1.1 (zt_open_options_init@ZTENSOR_1.1). Programs
// built against 1.2 get zt_open_options_init@@ZTENSOR_1.2
// (capi/ztensor.map), which fills the whole struct.
#if defined(__ELF__)
extern "C" __attribute__((visibility("default"))) void ztensor_open_options_init_1_0(zt_open_options *o) {
  init_older_struct(o, ZT_SIZE_THROUGH(zt_open_options, max_decoded_size), zt_open_options_init);
}
__asm__(".symver ztensor_open_options_init_1_0, zt_open_options_init@ZTENSOR_1");
extern "C" __attribute__((visibility("default"))) void ztensor_open_options_init_1_1(zt_open_options *o) {
  init_older_struct(o, ZT_SIZE_THROUGH(zt_open_options, verify_on_read), zt_open_options_init);
}
__asm__(".symver ztensor_open_options_init_1_1, zt_open_options_init@ZTENSOR_1.1");
#endif

ZT_API zt_status zt_open(const char *path, const zt_open_options *opts, zt_file **out) {
  return guard([&] {
    if (!out) invalid("zt_open: out is NULL");
    *out = nullptr;
    if (!path) invalid("zt_open: path is NULL");
    refuse_url_path("zt_open", "path", path, "zt_open_url");
    return finish_open(Reader::open(path, to_reader_options(opts)), out);
  });
}

ZT_API zt_status zt_open_memory(const void *data, size_t size, const zt_open_options *opts, zt_file **out) {
  return guard([&] {
    if (!out) invalid("zt_open_memory: out is NULL");
    *out = nullptr;
    if (!data && size) invalid("zt_open_memory: data is NULL");
    static const uint8_t empty = 0;
    return finish_open(Reader::open_memory(data ? data : &empty, size, to_reader_options(opts)), out);
  });
}

ZT_API zt_status zt_close(zt_file *file) {
  return guard([&] {
    if (!file) return ZT_OK;
    if (!unregister_handle(file)) fail(ZT_E_MISUSE, "zt_close: handle already closed or not a zt_file");
    unregister_objects(file->objects.data());
    file->tag = 0;
    delete file;
    return ZT_OK;
  });
}

ZT_API zt_status zt_file_version(const zt_file *file, const char **out) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_version");
    if (!out) invalid("zt_file_version: out is NULL");
    *out = f.reader->manifest().version.c_str();
    return ZT_OK;
  });
}

ZT_API zt_status zt_file_data_shard(const zt_file *file, uint32_t *out) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_data_shard");
    if (!out) invalid("zt_file_data_shard: out is NULL");
    *out = f.reader->manifest().data_shard ? 1 : 0;
    return ZT_OK;
  });
}

ZT_API zt_status zt_file_object_count(const zt_file *file, size_t *out) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_object_count");
    if (!out) invalid("zt_file_object_count: out is NULL");
    *out = f.objects.size();
    return ZT_OK;
  });
}

ZT_API zt_status zt_file_object_at(const zt_file *file, size_t index, const zt_object **out) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_object_at");
    if (!out) invalid("zt_file_object_at: out is NULL");
    *out = nullptr;
    if (index >= f.objects.size())
      fail(ZT_E_NOT_FOUND, "zt_file_object_at: index " + std::to_string(index) + " >= object count " +
                               std::to_string(f.objects.size()));
    *out = &f.objects[index];
    return ZT_OK;
  });
}

ZT_API zt_status zt_file_object_by_name(const zt_file *file, const char *name, size_t name_len, const zt_object **out) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_object_by_name");
    if (!out) invalid("zt_file_object_by_name: out is NULL");
    *out = nullptr;
    if (!name && name_len) invalid("zt_file_object_by_name: name is NULL");
    std::string_view key(name ? name : "", name_len);
    const auto &man = f.reader->manifest();
    const Object *o = man.find(key);
    if (!o) fail(ZT_E_NOT_FOUND, "no object named '" + printable(std::string(key)) + "'");
    *out = &f.objects[static_cast<size_t>(o - man.objects.data())];
    return ZT_OK;
  });
}

ZT_API zt_status zt_file_attributes_cbor(const zt_file *file, const uint8_t **out, size_t *out_len) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_attributes_cbor");
    if (!out || !out_len) invalid("zt_file_attributes_cbor: out is NULL");
    const auto &m = f.reader->manifest();
    *out = m.has_attributes ? reinterpret_cast<const uint8_t *>(m.attributes.data()) : nullptr;
    *out_len = m.has_attributes ? m.attributes.size() : 0;
    return ZT_OK;
  });
}

ZT_API zt_status zt_file_attributes_json(const zt_file *file, char **out) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_attributes_json");
    if (!out) invalid("zt_file_attributes_json: out is NULL");
    *out = nullptr;
    const auto &m = f.reader->manifest();
    *out = dup_string(m.has_attributes ? cbor_to_json(m.attributes) : "null");
    return ZT_OK;
  });
}

ZT_API zt_status zt_file_extra_fields_cbor(const zt_file *file, uint8_t **out, size_t *out_len) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_extra_fields_cbor");
    if (!out || !out_len) invalid("zt_file_extra_fields_cbor: out is NULL");
    *out = nullptr;
    *out_len = 0;
    const auto &m = f.reader->manifest();
    if (m.extra.empty()) return ZT_OK;
    std::string enc = encode_raw_map(m.extra);
    *out = dup_bytes(enc);
    *out_len = enc.size();
    return ZT_OK;
  });
}

ZT_API zt_status zt_file_verify(const zt_file *file, uint32_t strict, zt_verify_callback cb, void *user) {
  return verify_file(file, strict, "zt_file_verify", [&](const std::string &object, const VerifyFailure &x) {
    if (cb) cb(user, object.c_str(), x.role.c_str(), x.status, x.message.c_str());
  });
}

ZT_API zt_status zt_file_verify_n(const zt_file *file, uint32_t strict, zt_verify_callback_n cb, void *user) {
  return verify_file(file, strict, "zt_file_verify_n", [&](const std::string &object, const VerifyFailure &x) {
    if (cb) cb(user, object.c_str(), object.size(), x.role.c_str(), x.role.size(), x.status, x.message.c_str());
  });
}

ZT_API zt_status zt_file_to_json(const zt_file *file, char **out) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_to_json");
    if (!out) invalid("zt_file_to_json: out is NULL");
    *out = nullptr;
    *out = dup_string(zt::manifest_to_json(f.reader->manifest()));
    return ZT_OK;
  });
}

}  // extern "C"
