/* The end-to-end demo: write a small model (several dtypes, a zstd
 * component, digests, attributes), read it back and check every byte.
 * Then `zt info` and `zt verify` run on the file (see examples/demo.sh). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ztensor.h"

#define CHECK(call)                                                                               \
  do {                                                                                            \
    zt_status st_ = (call);                                                                       \
    if (st_ != ZT_OK) {                                                                           \
      fprintf(stderr, "demo: %s failed: %s\n  %s\n", #call, zt_status_str(st_), zt_last_error()); \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

enum { D = 64, H = 128, V = 100 };

static float emb[V][D], w1[D][H];
static uint16_t ln_bf16[D];
static int64_t tokens[16];
static uint8_t mask[16];

static void fill(void) {
  for (int i = 0; i < V; ++i)
    for (int j = 0; j < D; ++j) emb[i][j] = (float)sin(i * 0.1 + j * 0.01);
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < H; ++j) w1[i][j] = (float)((i * 31 + j * 17) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < D; ++i) ln_bf16[i] = 0x3f80; /* 1.0 in bfloat16 */
  for (int i = 0; i < 16; ++i) {
    tokens[i] = (int64_t)i * 7 - 20;
    mask[i] = (uint8_t)(i % 3 == 0);
  }
}

static void check_component(const zt_file *f, const char *name, const void *expect, size_t len) {
  const zt_object *o = NULL;
  CHECK(zt_file_object_by_name(f, name, strlen(name), &o));
  size_t n = 0;
  void *buf = malloc(len ? len : 1);
  CHECK(zt_component_read(o, 0, buf, len, &n));
  if (n != len || memcmp(buf, expect, len) != 0) {
    fprintf(stderr, "demo: %s read back wrong\n", name);
    exit(1);
  }
  free(buf);
  zt_verify_result vr;
  CHECK(zt_component_verify(o, 0, &vr));
  printf("  %-22s %6zu bytes  %s\n", name, len, vr == ZT_VERIFY_OK ? "digest ok" : "no digest");
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "demo_model.zt";
  fill();
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.digest = ZT_DIGEST_SHA256;
  zt_writer *w = NULL;
  CHECK(zt_writer_create(path, &wo, &w));
  CHECK(zt_writer_set_attributes_json(w, "{\"model\": \"tiny-demo\", \"layers\": 1, \"license\": \"MIT\"}"));

  uint64_t s_emb[2] = {V, D}, s_w1[2] = {D, H}, s_ln[1] = {D}, s_tok[1] = {16};
  zt_blob_options zstd;
  zt_blob_options_init(&zstd);
  zstd.encoding = ZT_ENCODING_ZSTD;
  zstd.zstd_level = 9;
  CHECK(zt_writer_add_dense(w, "embed.weight", 12, ZT_F32, s_emb, 2, emb, sizeof emb, &zstd));
  CHECK(zt_writer_add_dense(w, "mlp.up.weight", 13, ZT_F32, s_w1, 2, w1, sizeof w1, NULL));
  CHECK(zt_writer_set_object_attributes_json(w, "mlp.up.weight", 13, "{\"init\": \"uniform\", \"scale\": 0.5}"));
  zt_blob_options crc;
  zt_blob_options_init(&crc);
  crc.digest = ZT_DIGEST_CRC32C;
  CHECK(zt_writer_add_dense(w, "norm.weight", 11, ZT_BF16, s_ln, 1, ln_bf16, sizeof ln_bf16, &crc));
  CHECK(zt_writer_add_dense(w, "tokens", 6, ZT_I64, s_tok, 1, tokens, sizeof tokens, NULL));
  CHECK(zt_writer_add_dense(w, "mask", 4, ZT_BOOL, s_tok, 1, mask, sizeof mask, NULL));
  CHECK(zt_writer_finish(w));
  printf("wrote %s\n", path);

  zt_file *f = NULL;
  CHECK(zt_open(path, NULL, &f));
  const char *version = NULL;
  size_t count = 0;
  CHECK(zt_file_version(f, &version));
  CHECK(zt_file_object_count(f, &count));
  printf("read back: spec %s, %zu objects\n", version, count);
  check_component(f, "embed.weight", emb, sizeof emb);
  check_component(f, "mlp.up.weight", w1, sizeof w1);
  check_component(f, "norm.weight", ln_bf16, sizeof ln_bf16);
  check_component(f, "tokens", tokens, sizeof tokens);
  check_component(f, "mask", mask, sizeof mask);

  /* Zero-copy: the raw f32 matrix is served straight from the mapping, where
   * its stored (little-endian) byte order is the host's. A big-endian host
   * has no view of it (ZT_E_NOT_ZERO_COPY): the reads above swap it. */
  const zt_object *o = NULL;
  const void *view = NULL;
  size_t vlen = 0;
  const uint16_t one = 1;
  const int big_endian_host = *(const uint8_t *)&one == 0;
  CHECK(zt_file_object_by_name(f, "mlp.up.weight", 13, &o));
  zt_status vs = zt_component_view(o, 0, &view, &vlen);
  if (vs == ZT_E_NOT_ZERO_COPY && big_endian_host) {
    printf("no zero-copy view of mlp.up.weight on this big-endian host: %s\n", zt_last_error());
  } else {
    CHECK(vs);
    printf("zero-copy view of mlp.up.weight: %zu bytes, first value %g\n", vlen, (double)((const float *)view)[0]);
  }
  CHECK(zt_file_verify(f, 1, NULL, NULL));
  CHECK(zt_close(f));
  printf("demo OK\n");
  return 0;
}
