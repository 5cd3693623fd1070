/* C side of the Go package: each wrapper makes one library call and, when
 * it fails, copies zt_last_error() into *err (malloc'd, freed by Go) inside
 * the same cgo call. zt_last_error() is thread-local and a goroutine may
 * move to another OS thread between two cgo calls, so the message cannot be
 * fetched by a second call. */
#ifndef ZTENSOR_GO_WRAPPERS_H
#define ZTENSOR_GO_WRAPPERS_H

#include <stdint.h>
#include <stdlib.h>

#include "ztensor.h"
#include "ztensor_io.h"
#include "ztensor_set.h"

zt_status ztg_open(const char *path, const zt_open_options *o, zt_file **out, char **err);
zt_status ztg_open_memory(const void *data, size_t size, const zt_open_options *o, zt_file **out, char **err);
zt_status ztg_open_url(const char *url, const zt_url_options *u, const zt_open_options *o, zt_file **out, char **err);
zt_status ztg_open_io(uintptr_t handle, uint64_t size, const char *name, const zt_open_options *o, zt_file **out,
                      char **err);
zt_status ztg_file_version(const zt_file *f, const char **out, char **err);
zt_status ztg_file_content_digest(const zt_file *f, zt_digest_alg alg, char *dst, size_t cap, size_t *len, char **err);
zt_status ztg_file_canonical(const zt_file *f, uint32_t *rule, char **message, char **err);
zt_status ztg_object_count(const zt_file *f, size_t *out, char **err);
zt_status ztg_object_at(const zt_file *f, size_t i, const zt_object **out, char **err);
zt_status ztg_object_by_name(const zt_file *f, const char *name, size_t len, const zt_object **out, char **err);
zt_status ztg_file_attributes_json(const zt_file *f, char **out, char **err);
zt_status ztg_file_verify(const zt_file *f, uint32_t strict, uintptr_t handle, char **err);
zt_status ztg_read_many(const zt_file *f, zt_read_request *r, size_t n, char **err);
zt_status ztg_object_info(const zt_object *o, zt_object_info *out, char **err);
zt_status ztg_component(const zt_object *o, size_t i, zt_component_info *out, char **err);
zt_status ztg_component_dtype(const zt_object *o, size_t i, zt_dtype *dtype, uint64_t *decoded, char **err);
zt_status ztg_component_index(const zt_object *o, const char *role, size_t len, size_t *out, char **err);
zt_status ztg_object_attributes_json(const zt_object *o, char **out, char **err);
zt_status ztg_read(const zt_object *o, size_t i, void *dst, size_t cap, size_t *out, char **err);
zt_status ztg_read_range(const zt_object *o, size_t i, uint64_t first, uint64_t count, void *dst, size_t cap,
                         char **err);
zt_status ztg_read_slice(const zt_object *o, size_t i, size_t ndim, const uint64_t *start, const uint64_t *stop,
                         void *dst, size_t cap, char **err);
zt_status ztg_view(const zt_object *o, size_t i, const void **out, size_t *len, char **err);
zt_status ztg_component_verify(const zt_object *o, size_t i, zt_verify_result *out, char **err);
zt_status ztg_object_verify(const zt_object *o, char **err);
zt_status ztg_stream_open(const zt_object *o, size_t i, zt_component_stream **out, char **err);
zt_status ztg_stream_read(zt_component_stream *s, void *dst, size_t cap, size_t *out, char **err);
zt_status ztg_writer_create(const char *path, const zt_writer_options *o, zt_writer **out, char **err);
zt_status ztg_writer_create_memory(const zt_writer_options *o, zt_writer **out, char **err);
zt_status ztg_writer_finish(zt_writer *w, char **err);
zt_status ztg_writer_finish_memory(zt_writer *w, uint8_t **out, size_t *len, char **err);
zt_status ztg_set_attributes_json(zt_writer *w, const char *json, char **err);
zt_status ztg_set_object_attributes_json(zt_writer *w, const char *name, size_t len, const char *json, char **err);
zt_status ztg_add_dense(zt_writer *w, const char *name, size_t len, zt_dtype dtype, const uint64_t *shape, size_t ndim,
                        const void *data, size_t data_len, const zt_blob_options *o, char **err);
zt_status ztg_begin_object(zt_writer *w, const char *name, size_t len, const char *format, const uint64_t *shape,
                           size_t ndim, char **err);
zt_status ztg_write_blob(zt_writer *w, const char *name, size_t len, const char *role, zt_dtype dtype, const void *data,
                         size_t data_len, const zt_blob_options *o, char **err);
zt_status ztg_blob_begin(zt_writer *w, const char *name, size_t len, const char *role, zt_dtype dtype,
                         const zt_blob_options *o, char **err);
zt_status ztg_blob_append(zt_writer *w, const void *data, size_t len, char **err);
zt_status ztg_blob_end(zt_writer *w, char **err);
zt_status ztg_open_set(const char *path, const zt_open_options *o, zt_set **out, char **err);
zt_status ztg_set_object_count(const zt_set *s, size_t *out, char **err);
zt_status ztg_set_object_at(const zt_set *s, size_t i, const zt_object **out, char **err);
zt_status ztg_set_object_by_name(const zt_set *s, const char *name, size_t len, const zt_object **out, char **err);

/* The C library's own cost, for the benchmarks: n calls of
 * zt_file_object_by_name + zt_component_read in one C loop. */
zt_status ztg_bench_c_loop(const zt_file *f, const char *name, size_t len, void *dst, size_t cap, size_t n);

#endif
