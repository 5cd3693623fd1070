#include "wrappers.h"

#include <string.h>

#include "_cgo_export.h"

#define ZTG_CALL(expr)                                      \
  do {                                                      \
    zt_status s_ = (expr);                                  \
    if (s_ != ZT_OK && err) *err = strdup(zt_last_error()); \
    return s_;                                              \
  } while (0)

zt_status ztg_open(const char *path, const zt_open_options *o, zt_file **out, char **err) {
  ZTG_CALL(zt_open(path, o, out));
}
zt_status ztg_open_memory(const void *data, size_t size, const zt_open_options *o, zt_file **out, char **err) {
  ZTG_CALL(zt_open_memory(data, size, o, out));
}
zt_status ztg_open_url(const char *url, const zt_url_options *u, const zt_open_options *o, zt_file **out, char **err) {
  ZTG_CALL(zt_open_url(url, u, o, out));
}

static zt_status ztg_io_read_at(void *user, uint64_t off, size_t len, void *dst, size_t *out_len) {
  return (zt_status)ztgoReadAt((uintptr_t)user, off, len, dst, out_len);
}
static void ztg_io_close(void *user) {
  ztgoIOClose((uintptr_t)user);
}

zt_status ztg_open_io(uintptr_t handle, uint64_t size, const char *name, const zt_open_options *o, zt_file **out,
                      char **err) {
  zt_io io;
  zt_io_init(&io);
  io.user = (void *)handle;
  io.size = size;
  io.read_at = ztg_io_read_at;
  io.close = ztg_io_close;
  io.name = name;
  ZTG_CALL(zt_open_io(&io, o, out));
}
zt_status ztg_file_version(const zt_file *f, const char **out, char **err) {
  ZTG_CALL(zt_file_version(f, out));
}
zt_status ztg_file_content_digest(const zt_file *f, zt_digest_alg alg, char *dst, size_t cap, size_t *len, char **err) {
  ZTG_CALL(zt_file_content_digest(f, alg, dst, cap, len));
}
zt_status ztg_file_canonical(const zt_file *f, uint32_t *rule, char **message, char **err) {
  ZTG_CALL(zt_file_canonical(f, rule, message));
}
zt_status ztg_object_count(const zt_file *f, size_t *out, char **err) {
  ZTG_CALL(zt_file_object_count(f, out));
}
zt_status ztg_object_at(const zt_file *f, size_t i, const zt_object **out, char **err) {
  ZTG_CALL(zt_file_object_at(f, i, out));
}
zt_status ztg_object_by_name(const zt_file *f, const char *name, size_t len, const zt_object **out, char **err) {
  ZTG_CALL(zt_file_object_by_name(f, name, len, out));
}
zt_status ztg_file_attributes_json(const zt_file *f, char **out, char **err) {
  ZTG_CALL(zt_file_attributes_json(f, out));
}

/* Names and roles with their lengths (zt_file_verify_n): either may hold NULs. */
static void ztg_verify_cb(void *user, const char *object, size_t object_len, const char *role, size_t role_len,
                          zt_status status, const char *msg) {
  ztgoVerifyFailure((uintptr_t)user, (char *)object, object_len, (char *)role, role_len, (int)status, (char *)msg);
}
zt_status ztg_file_verify(const zt_file *f, uint32_t strict, uintptr_t handle, char **err) {
  ZTG_CALL(zt_file_verify_n(f, strict, handle ? ztg_verify_cb : NULL, (void *)handle));
}
zt_status ztg_read_many(const zt_file *f, zt_read_request *r, size_t n, char **err) {
  ZTG_CALL(zt_file_read_many(f, r, n));
}
zt_status ztg_object_info(const zt_object *o, zt_object_info *out, char **err) {
  out->struct_size = sizeof *out;
  ZTG_CALL(zt_object_get_info(o, out));
}
zt_status ztg_component(const zt_object *o, size_t i, zt_component_info *out, char **err) {
  out->struct_size = sizeof *out;
  ZTG_CALL(zt_object_component(o, i, out));
}
zt_status ztg_component_dtype(const zt_object *o, size_t i, zt_dtype *dtype, uint64_t *decoded, char **err) {
  zt_component_info c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  zt_status s = zt_object_component(o, i, &c);
  if (s != ZT_OK) {
    if (err) *err = strdup(zt_last_error());
    return s;
  }
  *dtype = c.dtype;
  *decoded = c.decoded_length;
  return ZT_OK;
}
zt_status ztg_component_index(const zt_object *o, const char *role, size_t len, size_t *out, char **err) {
  ZTG_CALL(zt_object_component_index_n(o, role, len, out));
}
zt_status ztg_object_attributes_json(const zt_object *o, char **out, char **err) {
  ZTG_CALL(zt_object_attributes_json(o, out));
}
zt_status ztg_read(const zt_object *o, size_t i, void *dst, size_t cap, size_t *out, char **err) {
  ZTG_CALL(zt_component_read(o, i, dst, cap, out));
}
zt_status ztg_read_range(const zt_object *o, size_t i, uint64_t first, uint64_t count, void *dst, size_t cap,
                         char **err) {
  ZTG_CALL(zt_component_read_range(o, i, first, count, dst, cap));
}
zt_status ztg_read_slice(const zt_object *o, size_t i, size_t ndim, const uint64_t *start, const uint64_t *stop,
                         void *dst, size_t cap, char **err) {
  ZTG_CALL(zt_component_read_slice(o, i, ndim, start, stop, dst, cap));
}
zt_status ztg_view(const zt_object *o, size_t i, const void **out, size_t *len, char **err) {
  ZTG_CALL(zt_component_view(o, i, out, len));
}
zt_status ztg_component_verify(const zt_object *o, size_t i, zt_verify_result *out, char **err) {
  ZTG_CALL(zt_component_verify(o, i, out));
}
zt_status ztg_object_verify(const zt_object *o, char **err) {
  ZTG_CALL(zt_object_verify(o));
}
zt_status ztg_stream_open(const zt_object *o, size_t i, zt_component_stream **out, char **err) {
  ZTG_CALL(zt_component_stream_open(o, i, out));
}
zt_status ztg_stream_read(zt_component_stream *s, void *dst, size_t cap, size_t *out, char **err) {
  ZTG_CALL(zt_component_stream_read(s, dst, cap, out));
}
zt_status ztg_writer_create(const char *path, const zt_writer_options *o, zt_writer **out, char **err) {
  ZTG_CALL(zt_writer_create(path, o, out));
}
zt_status ztg_writer_create_memory(const zt_writer_options *o, zt_writer **out, char **err) {
  ZTG_CALL(zt_writer_create_memory(o, out));
}
zt_status ztg_writer_finish(zt_writer *w, char **err) {
  ZTG_CALL(zt_writer_finish(w));
}
zt_status ztg_writer_finish_memory(zt_writer *w, uint8_t **out, size_t *len, char **err) {
  ZTG_CALL(zt_writer_finish_memory(w, out, len));
}
zt_status ztg_set_attributes_json(zt_writer *w, const char *json, char **err) {
  ZTG_CALL(zt_writer_set_attributes_json(w, json));
}
zt_status ztg_set_object_attributes_json(zt_writer *w, const char *name, size_t len, const char *json, char **err) {
  ZTG_CALL(zt_writer_set_object_attributes_json(w, name, len, json));
}
zt_status ztg_add_dense(zt_writer *w, const char *name, size_t len, zt_dtype dtype, const uint64_t *shape, size_t ndim,
                        const void *data, size_t data_len, const zt_blob_options *o, char **err) {
  ZTG_CALL(zt_writer_add_dense(w, name, len, dtype, shape, ndim, data, data_len, o));
}
zt_status ztg_begin_object(zt_writer *w, const char *name, size_t len, const char *format, const uint64_t *shape,
                           size_t ndim, char **err) {
  ZTG_CALL(zt_writer_begin_object(w, name, len, format, shape, ndim));
}
zt_status ztg_write_blob(zt_writer *w, const char *name, size_t len, const char *role, zt_dtype dtype, const void *data,
                         size_t data_len, const zt_blob_options *o, char **err) {
  ZTG_CALL(zt_write_blob(w, name, len, role, dtype, data, data_len, o));
}
zt_status ztg_blob_begin(zt_writer *w, const char *name, size_t len, const char *role, zt_dtype dtype,
                         const zt_blob_options *o, char **err) {
  ZTG_CALL(zt_write_blob_begin(w, name, len, role, dtype, o));
}
zt_status ztg_blob_append(zt_writer *w, const void *data, size_t len, char **err) {
  ZTG_CALL(zt_write_blob_append(w, data, len));
}
zt_status ztg_blob_end(zt_writer *w, char **err) {
  ZTG_CALL(zt_write_blob_end(w));
}
zt_status ztg_open_set(const char *path, const zt_open_options *o, zt_set **out, char **err) {
  ZTG_CALL(zt_open_set(path, o, out));
}
zt_status ztg_set_object_count(const zt_set *s, size_t *out, char **err) {
  ZTG_CALL(zt_set_object_count(s, out));
}
zt_status ztg_set_object_at(const zt_set *s, size_t i, const zt_object **out, char **err) {
  ZTG_CALL(zt_set_object_at(s, i, out));
}
zt_status ztg_set_object_by_name(const zt_set *s, const char *name, size_t len, const zt_object **out, char **err) {
  ZTG_CALL(zt_set_object_by_name(s, name, len, out));
}

zt_status ztg_bench_c_loop(const zt_file *f, const char *name, size_t len, void *dst, size_t cap, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const zt_object *o = NULL;
    size_t got = 0;
    zt_status s = zt_file_object_by_name(f, name, len, &o);
    if (s == ZT_OK) s = zt_component_read(o, 0, dst, cap, &got);
    if (s != ZT_OK) return s;
  }
  return ZT_OK;
}
