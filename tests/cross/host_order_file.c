/* Writes one file holding every storage dtype, a complex64 and an fp8
 * component, a CSR and a quantized_group object and a blob streamed in
 * pieces that split elements, all from values in the host's byte order;
 * reads it back and checks every value and digest; then compares the file
 * byte for byte with a reference written on a little-endian host
 * (tests/data/host_order/). On a big-endian host (s390x under qemu, see
 * docs/cross.md) this proves writes store little-endian, digests cover the
 * stored bytes and reads swap back.
 *
 *   host_order_file OUT.zt raw|zstd|v2|v2zstd [REFERENCE.zt]
 *
 * raw and zstd write spec 1.2; v2 writes canonical zTensor v2 (xxh3 digests,
 * identical parts sharing a blob), v2zstd non-canonical v2 with
 * zt.zstd-seekable/1 parts and sha256 digests (docs/v2.md).
 *
 * Without REFERENCE nothing is compared (that is how the reference is made). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ztensor.h"
#include "ztensor_composite.h"

#define CHECK(call)                                                                                             \
  do {                                                                                                          \
    zt_status st_ = (call);                                                                                     \
    if (st_ != ZT_OK) {                                                                                         \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, zt_status_str(st_), zt_last_error()); \
      exit(1);                                                                                                  \
    }                                                                                                           \
  } while (0)

#define N 24

/* The values, as host-order numbers. */
static double f64[N];
static float f32[N];
static int64_t i64[N];
static int32_t i32[N];
static int16_t i16[N];
static int8_t i8[N];
static uint64_t u64[N];
static uint32_t u32[N];
static uint16_t u16[N], f16[N], bf16[N];
static uint8_t u8[N], boolean[N], fp8[N];
static float c64[2 * N];

static void make_values(void) {
  for (int i = 0; i < N; ++i) {
    f64[i] = (i - 11) * 1.0e-3 + i * 1024.5;
    f32[i] = (float)(i * 3.25 - 40.0);
    i64[i] = (int64_t)0x0102030405060708LL * (i + 1) - 77;
    i32[i] = (int32_t)(0x01020304 * (i + 1)) - 5;
    i16[i] = (int16_t)(0x0102 * i - 3000);
    i8[i] = (int8_t)(i * 5 - 60);
    u64[i] = 0x8877665544332211ULL ^ ((uint64_t)i << 40);
    u32[i] = 0xA1B2C3D4u + (uint32_t)i * 0x01010101u;
    u16[i] = (uint16_t)(0xBEEF + i * 0x0101);
    f16[i] = (uint16_t)(0x3C00 + i * 0x0111); /* 1.0 and up */
    bf16[i] = (uint16_t)(0x3F80 + i * 0x0023);
    u8[i] = (uint8_t)(i * 11);
    boolean[i] = (uint8_t)(i % 3 == 0);
    fp8[i] = (uint8_t)(0x30 + i);
    c64[2 * i] = (float)i + 0.5f;
    c64[2 * i + 1] = -(float)i * 2.0f;
  }
}

struct dense {
  const char *name;
  zt_dtype dtype;
  const void *data;
  size_t size;
  const char *logical_type;
};

static const struct dense kDense[] = {
    {"a_f64", ZT_F64, f64, sizeof f64, NULL},           {"b_f32", ZT_F32, f32, sizeof f32, NULL},
    {"c_i64", ZT_I64, i64, sizeof i64, NULL},           {"d_i32", ZT_I32, i32, sizeof i32, NULL},
    {"e_i16", ZT_I16, i16, sizeof i16, NULL},           {"f_i8", ZT_I8, i8, sizeof i8, NULL},
    {"g_u64", ZT_U64, u64, sizeof u64, NULL},           {"h_u32", ZT_U32, u32, sizeof u32, NULL},
    {"i_u16", ZT_U16, u16, sizeof u16, NULL},           {"j_u8", ZT_U8, u8, sizeof u8, NULL},
    {"k_f16", ZT_F16, f16, sizeof f16, NULL},           {"l_bf16", ZT_BF16, bf16, sizeof bf16, NULL},
    {"m_bool", ZT_BOOL, boolean, sizeof boolean, NULL}, {"n_fp8", ZT_U8, fp8, sizeof fp8, "f8_e4m3fn"},
    {"o_c64", ZT_F32, c64, sizeof c64, "complex64"},
};
#define NDENSE (sizeof kDense / sizeof kDense[0])

/* CSR 4 x 6 with f32 values; quantized 2 x 16, 4 bits, 8 per i32. */
static const uint64_t kIndptr[5] = {0, 2, 3, 3, 5};
static const uint64_t kIndices[5] = {1, 4, 0, 2, 5};
static const float kCsrValues[5] = {1.5f, -2.25f, 3.0e5f, 7.0f, -0.125f};
static int32_t qpacked[4];
static uint16_t qscales[2] = {0x3C00, 0x4000}; /* f16 1.0, 2.0: one group per row */

/* format: 1 (spec 1.2) or 2 (v2: canonical when raw). */
static void write_file(const char *path, zt_encoding enc, uint32_t format) {
  zt_writer *w = NULL;
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.digest = ZT_DIGEST_CRC32C;
  wo.encoding = enc;
  wo.threads = 1; /* one zstd frame whatever the host's cores */
  wo.sync = 0;
  wo.format = format;
  if (format == 2 && enc == ZT_ENCODING_ZSTD) {
    wo.canonical = 0;
    wo.v2_digest = ZT_DIGEST_SHA256;
    wo.alignment = 4096;
  }
  CHECK(zt_writer_create(path, &wo, &w));
  CHECK(zt_writer_set_attributes_json(w, "{\"n\": 24, \"pi\": 3.25, \"neg\": -70000}"));
  for (size_t k = 0; k < NDENSE; ++k) {
    zt_blob_options bo;
    zt_blob_options_init(&bo);
    if (format == 1) bo.digest = k % 2 ? ZT_DIGEST_SHA256 : ZT_DIGEST_CRC32C;
    bo.logical_type = kDense[k].logical_type;
    uint64_t shape[2] = {4, 6};
    CHECK(zt_writer_add_dense(w, kDense[k].name, strlen(kDense[k].name), kDense[k].dtype, shape, 2, kDense[k].data,
                              kDense[k].size, &bo));
  }
  if (format == 2) { /* the same bytes again, streamed: v2 shares one blob, compared as stored */
    uint64_t shape[2] = {4, 6};
    CHECK(zt_writer_begin_object(w, "s_same_f32", 10, NULL, shape, 2));
    CHECK(zt_write_blob_begin(w, "s_same_f32", 10, "data", ZT_F32, NULL));
    for (size_t off = 0; off < sizeof f32; off += 7) {
      size_t n = sizeof f32 - off < 7 ? sizeof f32 - off : 7;
      CHECK(zt_write_blob_append(w, (const uint8_t *)f32 + off, n));
    }
    CHECK(zt_write_blob_end(w));
  }
  /* Streamed in 5-byte pieces: every u64 element straddles two appends. */
  uint64_t shape1[1] = {N};
  CHECK(zt_writer_begin_object(w, "p_streamed", 10, NULL, shape1, 1));
  CHECK(zt_write_blob_begin(w, "p_streamed", 10, "data", ZT_U64, NULL));
  for (size_t off = 0; off < sizeof u64; off += 5) {
    size_t n = sizeof u64 - off < 5 ? sizeof u64 - off : 5;
    CHECK(zt_write_blob_append(w, (const uint8_t *)u64 + off, n));
  }
  CHECK(zt_write_blob_end(w));
  CHECK(zt_writer_add_csr(w, "q_csr", 5, 4, 6, ZT_F32, kCsrValues, 5, kIndices, kIndptr, NULL));
  zt_quant_params qp;
  zt_quant_params_init(&qp);
  qp.bits = 4;
  qp.group_size = 16;
  qp.packing = "8_per_i32";
  qp.packed_dtype = ZT_I32;
  qp.packed = qpacked;
  qp.packed_len = sizeof qpacked;
  qp.scales_dtype = ZT_F16;
  qp.scales = qscales;
  qp.scales_len = sizeof qscales;
  uint64_t qshape[2] = {2, 16};
  CHECK(zt_writer_add_quantized_group(w, "r_quant", 7, qshape, 2, &qp, NULL));
  CHECK(zt_writer_finish(w));
}

static int fail_count = 0;
#define EXPECT(cond, ...)           \
  do {                              \
    if (!(cond)) {                  \
      fprintf(stderr, __VA_ARGS__); \
      fputc('\n', stderr);          \
      ++fail_count;                 \
    }                               \
  } while (0)

static void read_back(const char *path) {
  zt_file *f = NULL;
  CHECK(zt_open(path, NULL, &f));
  CHECK(zt_file_verify(f, 1, NULL, NULL));
  uint8_t buf[sizeof c64];
  for (size_t k = 0; k < NDENSE; ++k) {
    const zt_object *o = NULL;
    CHECK(zt_file_object_by_name(f, kDense[k].name, strlen(kDense[k].name), &o));
    size_t n = 0;
    CHECK(zt_component_read(o, 0, buf, sizeof buf, &n));
    EXPECT(n == kDense[k].size && memcmp(buf, kDense[k].data, n) == 0, "%s: read back differs", kDense[k].name);
  }
  const zt_object *o = NULL;
  size_t n = 0;
  CHECK(zt_file_object_by_name(f, "p_streamed", 10, &o));
  CHECK(zt_component_read(o, 0, buf, sizeof buf, &n));
  EXPECT(n == sizeof u64 && memcmp(buf, u64, n) == 0, "p_streamed: read back differs");
  if (zt_file_object_by_name(f, "s_same_f32", 10, &o) == ZT_OK) { /* v2 only */
    CHECK(zt_component_read(o, 0, buf, sizeof buf, &n));
    EXPECT(n == sizeof f32 && memcmp(buf, f32, n) == 0, "s_same_f32: read back differs");
  }
  /* Decoding to f32 works on host-order elements. */
  CHECK(zt_file_object_by_name(f, "k_f16", 5, &o));
  CHECK(zt_component_read(o, 0, buf, sizeof buf, &n));
  float conv[2 * N];
  CHECK(zt_convert_to_f32(ZT_F16, NULL, buf, n, conv, N));
  EXPECT(conv[0] == 1.0f, "f16 -> f32: element 0 is %g, want 1", (double)conv[0]);
  CHECK(zt_file_object_by_name(f, "l_bf16", 6, &o));
  CHECK(zt_component_read(o, 0, buf, sizeof buf, &n));
  CHECK(zt_convert_to_f32(ZT_BF16, NULL, buf, n, conv, N));
  EXPECT(conv[0] == 1.0f, "bf16 -> f32: element 0 is %g, want 1", (double)conv[0]);
  CHECK(zt_file_object_by_name(f, "o_c64", 5, &o));
  CHECK(zt_component_read(o, 0, buf, sizeof buf, &n));
  CHECK(zt_convert_to_f32(ZT_F32, "complex64", buf, n, conv, 2 * N));
  EXPECT(conv[3] == -2.0f, "complex64 -> f32: imaginary part 1 is %g, want -2", (double)conv[3]);
  /* Sparse and quantized objects decode on any host. */
  float dense[24];
  CHECK(zt_file_object_by_name(f, "q_csr", 5, &o));
  CHECK(zt_object_densify(o, dense, sizeof dense, &n));
  EXPECT(dense[1] == 1.5f && dense[6] == 3.0e5f && dense[23] == -0.125f, "q_csr: densified values differ");
  float deq[32];
  CHECK(zt_file_object_by_name(f, "r_quant", 7, &o));
  CHECK(zt_object_dequantize(o, deq, 32));
  /* Column c of a row is nibble c % 8 of word c / 8 (the packing's
   * little-endian order within the host-order word); w = (q - 8) * scale,
   * one group per row: scale 1 then 2. */
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 16; ++c) {
      uint32_t word = (uint32_t)qpacked[r * 2 + c / 8];
      int q = (int)((word >> (4 * (c % 8))) & 15u);
      float want = (float)(q - 8) * (r == 1 ? 2.0f : 1.0f);
      EXPECT(deq[r * 16 + c] == want, "r_quant: [%d,%d] is %g, want %g", r, c, (double)deq[r * 16 + c], (double)want);
    }
  CHECK(zt_close(f));
}

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  size_t cap = 1 << 16, n = 0, got;
  unsigned char *p = malloc(cap);
  while (p && (got = fread(p + n, 1, cap - n, fp)) > 0) {
    n += got;
    if (n == cap) p = realloc(p, cap *= 2);
  }
  fclose(fp);
  *len = n;
  return p;
}

int main(int argc, char **argv) {
  const char *mode = argc < 3 ? "" : argv[2];
  const int v2 = strncmp(mode, "v2", 2) == 0;
  const int zstd = strcmp(mode, v2 ? "v2zstd" : "zstd") == 0;
  if (!zstd && strcmp(mode, v2 ? "v2" : "raw") != 0) {
    fprintf(stderr, "usage: host_order_file OUT.zt raw|zstd|v2|v2zstd [REFERENCE.zt]\n");
    return 2;
  }
  make_values();
  for (int i = 0; i < 4; ++i) qpacked[i] = (int32_t)(0x76543210u + 0x11111111u * (uint32_t)i);
  write_file(argv[1], zstd ? ZT_ENCODING_ZSTD : ZT_ENCODING_RAW, v2 ? 2 : 1);
  read_back(argv[1]);
  if (argc > 3) {
    size_t a_len = 0, b_len = 0;
    unsigned char *a = slurp(argv[1], &a_len), *b = slurp(argv[3], &b_len);
    if (!a || !b) {
      fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[3]);
      return 1;
    }
    size_t i = 0;
    while (i < a_len && i < b_len && a[i] == b[i]) ++i;
    EXPECT(a_len == b_len && i == a_len, "%s differs from the little-endian reference %s at byte %zu (sizes %zu, %zu)",
           argv[1], argv[3], i, a_len, b_len);
    free(a);
    free(b);
  }
  if (fail_count) return 1;
  printf("ok: %s\n", argv[1]);
  return 0;
}
