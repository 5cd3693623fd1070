// zt_open on a foreign tensor file (safetensors, NumPy .npy/.npz, GGUF): the
// parsers of src/foreign describe it as a read-only manifest, so the one
// Reader serves it (docs/foreign.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "container/source.h"
#include "manifest/model.h"

namespace zt {

struct ForeignLimits {
  uint64_t max_header;        // JSON header / GGUF metadata / index bytes
  uint64_t max_decoded_size;  // bytes decoded at open (npz members, Fortran order), all together
};

struct ForeignFile {
  std::unique_ptr<Source> source;  // what the manifest's offsets index
  Manifest manifest;
};

// The format name ("safetensors", "npy", "npz", "gguf") when the source's
// first bytes announce a foreign tensor file, else nullptr.
const char *foreign_format(const Source &src);

// Parses the foreign file `src` holds (a file opened by path). Tensors whose
// bytes lie in the file in C order are read in place (zero-copy views when
// little-endian on a little-endian host; big-endian .npy data is swapped by
// reads); the others (.npz members, Fortran-order arrays) are decoded once,
// here, into memory the returned source owns, within max_decoded_size.
// Throws zt::Error: ZT_E_FORMAT for a malformed file (the message names the
// rule), ZT_E_LIMIT, ZT_E_IO.
ForeignFile open_foreign(std::unique_ptr<Source> src, const ForeignLimits &limits);

}  // namespace zt
