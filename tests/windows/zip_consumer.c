/* A user's program built against the unpacked Windows zip only
 * (tools/cross-windows.sh: -I and -L into it, linked through the import
 * library libztensor.dll.a): opens a .zt file and prints, for every
 * component of every object, "<object>\t<role>\t<sha256 of the decoded
 * bytes>", which the script compares with tests/data/interop's
 * expected.json. SHA-256 from Windows' CNG: the program needs nothing but
 * the DLL. */
#include <windows.h>
/* windows.h first: bcrypt.h needs its types. */
#include <bcrypt.h>
#include <stdio.h>
#include <stdlib.h>

#include "ztensor.h"

static int sha256_hex(const void *data, size_t len, char out[65]) {
  BCRYPT_ALG_HANDLE alg = NULL;
  BCRYPT_HASH_HANDLE h = NULL;
  unsigned char md[32];
  int ok = BCryptOpenAlgorithmProvider(&alg, BCRYPT_SHA256_ALGORITHM, NULL, 0) >= 0 &&
           BCryptCreateHash(alg, &h, NULL, 0, NULL, 0, 0) >= 0 && BCryptHashData(h, (PUCHAR)data, (ULONG)len, 0) >= 0 &&
           BCryptFinishHash(h, md, 32, 0) >= 0;
  if (h) BCryptDestroyHash(h);
  if (alg) BCryptCloseAlgorithmProvider(alg, 0);
  for (int i = 0; i < 32; ++i) sprintf(out + 2 * i, "%02x", md[i]);
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: zip_consumer FILE.zt\n");
    return 2;
  }
  zt_file *f = NULL;
  if (zt_open(argv[1], NULL, &f) != ZT_OK) {
    fprintf(stderr, "zt_open: %s\n", zt_last_error());
    return 1;
  }
  size_t count = 0;
  zt_file_object_count(f, &count);
  for (size_t i = 0; i < count; ++i) {
    const zt_object *o = NULL;
    zt_object_info info;
    info.struct_size = sizeof info;
    if (zt_file_object_at(f, i, &o) != ZT_OK || zt_object_get_info(o, &info) != ZT_OK) {
      fprintf(stderr, "object %u: %s\n", (unsigned)i, zt_last_error());
      return 1;
    }
    for (size_t c = 0; c < info.component_count; ++c) {
      zt_component_info ci;
      ci.struct_size = sizeof ci;
      if (zt_object_component(o, c, &ci) != ZT_OK) {
        fprintf(stderr, "%s: %s\n", info.name, zt_last_error());
        return 1;
      }
      size_t n = (size_t)ci.decoded_length, got = 0;
      void *buf = malloc(n ? n : 1);
      char hex[65];
      if (!buf || zt_component_read(o, c, buf, n, &got) != ZT_OK || got != n || !sha256_hex(buf, n, hex)) {
        fprintf(stderr, "%s/%s: %s\n", info.name, ci.role, zt_last_error());
        return 1;
      }
      printf("%s\t%s\t%s\n", info.name, ci.role, hex);
      free(buf);
    }
  }
  zt_close(f);
  return 0;
}
