// The fixed parts of a .zt file: header magic, blobs, manifest, manifest size,
// footer magic (1.x), or magic, blobs, manifest, size (legacy 0.1).
#pragma once

#include <cstdint>

#include "container/source.h"

namespace zt {

constexpr char kMagicV1[8] = {'Z', 'T', 'E', 'N', '1', '0', '0', '0'};
constexpr char kMagicV0[8] = {'Z', 'T', 'E', 'N', '0', '0', '0', '1'};
constexpr uint64_t kAlignment = 64;
constexpr uint64_t kMaxManifestSize = uint64_t{1} << 30;  // 1 GiB

enum class Container { V1, V0, V2 };

struct ManifestLocation {
  Container container;
  uint64_t offset;  // where the CBOR manifest starts
  uint64_t size;    // its length; it ends where the size field begins
  // v2 (src/v2/footer.h): the footer's XXH3-64 of the manifest, and whether
  // the file is a data shard (no manifest: offset = size = 0).
  uint64_t hash = 0;
  bool data_shard = false;
};

// Decides the generation by the magic (1.x, legacy 0.1, or v2, whose footer
// rules are src/v2/footer.cc's) and checks magic, footer and the manifest
// size against the file and the limit.
ManifestLocation locate_manifest(const Source &src, uint64_t max_manifest_size);

inline uint64_t align_up(uint64_t v) {
  return (v + kAlignment - 1) & ~(kAlignment - 1);
}

}  // namespace zt
