// libzip over an in-memory archive, shared by the .npz and PyTorch readers:
// the archive and its members as RAII handles, and exact reads.
#pragma once

#ifdef ZT_HAVE_LIBZIP
#include <zip.h>

#include <cstdint>
#include <memory>
#include <string>

#include "foreign.h"

namespace zt::foreign {

struct ZipCloser {
  void operator()(zip_t *z) const { zip_discard(z); }
};
struct ZipFileCloser {
  void operator()(zip_file_t *f) const { zip_fclose(f); }
};
using ZipFile = std::unique_ptr<zip_file_t, ZipFileCloser>;

// Opens [data, data+size) as a zip archive (consistency checked); throws
// zt::Error (ZT_E_FORMAT) naming `what`.
std::shared_ptr<zip_t> open_zip(const uint8_t *data, size_t size, const std::string &what);
ZipFile open_member(zip_t *za, zip_uint64_t i, const std::string &ctx);
// Reads exactly n bytes (fewer only at the end of the member).
size_t read_member(zip_file_t *f, uint8_t *dst, size_t n, const std::string &ctx);

// What a member declares, checked: not encrypted, stored or deflated, both
// sizes declared, and a declared size deflate can produce from its
// compressed size (zip bombs; the bytes a read produces are checked
// against it again) and at most `max_size`.
struct ZipEntry {
  std::string name;
  uint64_t size = 0, comp_size = 0;
  bool stored = false;
};
ZipEntry zip_entry(zip_t *za, zip_uint64_t i, uint64_t max_size, const std::string &what);

// The archive's readers (the archive is already open; `data` is its bytes).
Imported read_npz(std::shared_ptr<zip_t> za, const uint8_t *data, size_t size, const std::string &what,
                  const Limits &limits);
Imported read_pytorch(std::shared_ptr<zip_t> za, const uint8_t *data, size_t size, const std::string &what,
                      const Limits &limits);

}  // namespace zt::foreign
#endif
