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
  uint64_t max_decoded_size;  // one decode-on-read tensor (npz member, Fortran-order array)
  // Whether max_decoded_size was set (not left at its default): it then
  // also raises the bound on all decode-on-read tensors together, which is
  // otherwise kDecodeMultiple times the file's size, at least kDecodeFloor.
  bool max_decoded_size_set;
};
constexpr uint64_t kDecodeMultiple = 8;
constexpr uint64_t kDecodeFloor = uint64_t{64} << 20;

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
// reads); the others (.npz members, Fortran-order arrays) are decoded on
// their first read into memory the returned source owns
// (DecodeOnReadSource), within the bounds of ForeignLimits: opening and
// listing decode nothing.
// Throws zt::Error: ZT_E_FORMAT for a malformed file (the message names the
// rule), ZT_E_LIMIT, ZT_E_IO.
ForeignFile open_foreign(std::unique_ptr<Source> src, const ForeignLimits &limits);

}  // namespace zt
