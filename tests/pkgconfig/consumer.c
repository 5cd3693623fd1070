/* An outside program built against the INSTALLED library with nothing but
 * `pkg-config --cflags --libs ztensor`: it writes a file, reads it back,
 * exports it through DLPack and checks the run-time version. */
#include <stdio.h>
#include <string.h>
#include <ztensor.h>
#include <ztensor_dlpack.h>

#define CHECK(call)                                                                                             \
  do {                                                                                                          \
    zt_status st_ = (call);                                                                                     \
    if (st_ != ZT_OK) {                                                                                         \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, zt_status_str(st_), zt_last_error()); \
      return 1;                                                                                                 \
    }                                                                                                           \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: consumer FILE.zt\n");
    return 2;
  }
  const int32_t data[4] = {7, -1, 1 << 20, 0};
  const uint64_t shape[1] = {4};
  zt_writer *w = NULL;
  CHECK(zt_writer_create(argv[1], NULL, &w));
  CHECK(zt_writer_add_dense(w, "v", 1, ZT_I32, shape, 1, data, sizeof data, NULL));
  CHECK(zt_writer_finish(w));

  zt_file *f = NULL;
  CHECK(zt_open(argv[1], NULL, &f));
  const zt_object *o = NULL;
  CHECK(zt_file_object_by_name(f, "v", 1, &o));
  DLManagedTensor *t = NULL;
  CHECK(zt_object_to_dlpack(o, &t));
  CHECK(zt_close(f));
  int ok = t->dl_tensor.ndim == 1 && t->dl_tensor.shape[0] == 4 && t->dl_tensor.dtype.code == kDLInt &&
           t->dl_tensor.dtype.bits == 32 && memcmp(t->dl_tensor.data, data, sizeof data) == 0;
  t->deleter(t);
  if (!ok) {
    fprintf(stderr, "DLPack tensor differs from what was written\n");
    return 1;
  }
  if (strcmp(zt_version_string(), ZTENSOR_EXPECTED_VERSION) != 0) {
    fprintf(stderr, "run-time version %s, expected %s\n", zt_version_string(), ZTENSOR_EXPECTED_VERSION);
    return 1;
  }
  printf("pkg-config C consumer OK (libztensor %s)\n", zt_version_string());
  return 0;
}
