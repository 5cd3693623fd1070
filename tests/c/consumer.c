/* A pure C11 program using the library: write a file, read it back, verify.
 * Compiled as C to prove the header and the ABI work without C++. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ztensor.h"

#define CHECK(call)                                                                                             \
  do {                                                                                                          \
    zt_status st_ = (call);                                                                                     \
    if (st_ != ZT_OK) {                                                                                         \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, zt_status_str(st_), zt_last_error()); \
      return 1;                                                                                                 \
    }                                                                                                           \
  } while (0)

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "c_consumer.zt";
  float data[6] = {1, 2, 3, 4, 5, 6};
  uint64_t shape[2] = {2, 3};
  zt_writer *w = NULL;
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.digest = ZT_DIGEST_CRC32C;
  CHECK(zt_writer_create(path, &wo, &w));
  CHECK(zt_writer_set_attributes_json(w, "{\"from\": \"C\"}"));
  zt_blob_options bo;
  zt_blob_options_init(&bo);
  bo.encoding = ZT_ENCODING_ZSTD;
  CHECK(zt_writer_add_dense(w, "w", 1, ZT_F32, shape, 2, data, sizeof data, &bo));
  CHECK(zt_writer_finish(w));

  zt_file *f = NULL;
  CHECK(zt_open(path, NULL, &f));
  const zt_object *o = NULL;
  CHECK(zt_file_object_by_name(f, "w", 1, &o));
  float back[6];
  size_t n = 0;
  CHECK(zt_component_read(o, 0, back, sizeof back, &n));
  if (n != sizeof back || memcmp(back, data, sizeof data) != 0) {
    fprintf(stderr, "data differs\n");
    return 1;
  }
  CHECK(zt_file_verify(f, 1, NULL, NULL));
  /* Misuse is a status, not a crash. */
  if (zt_file_object_at(f, 5, &o) != ZT_E_NOT_FOUND) return 1;
  if (zt_open(NULL, NULL, &f) != ZT_E_INVALID_ARG) return 1;
  CHECK(zt_close(NULL));
  zt_file *g = NULL;
  CHECK(zt_open(path, NULL, &g));
  CHECK(zt_close(g));
  if (zt_close(g) != ZT_E_MISUSE) return 1;
  /* Any int32 is a valid enum argument: out-of-range ones, negative
   * included, are refused or described, never undefined behaviour (the
   * sanitizer build runs this program too). */
  {
    const int32_t odd[] = {-1, -5, INT32_MIN, 14, 1000, INT32_MAX};
    zt_writer *v = NULL;
    char scratch[1024];
    snprintf(scratch, sizeof scratch, "%s.enums", path);
    CHECK(zt_writer_create(scratch, NULL, &v));
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; ++i) {
      const zt_dtype d = (zt_dtype)odd[i];
      if (zt_dtype_size(d) != 0 || zt_dtype_name(d) != NULL) return 1;
      if (zt_status_str((zt_status)odd[i]) == NULL) return 1;
      if (zt_writer_add_dense(v, "e", 1, d, shape, 2, data, sizeof data, NULL) == ZT_OK) return 1;
    }
    CHECK(zt_writer_discard(v));
  }
  CHECK(zt_close(f));
  printf("C consumer OK (libztensor %s)\n", zt_version_string());
  return 0;
}
