// Format v2 container (spec §2.1-§2.3, §7.2): the magic at both ends and the
// 40-byte footer that points at the manifest blob and carries its XXH3-64.
#pragma once

#include <cstdint>
#include <string>

#include "container/source.h"

namespace zt::v2 {

constexpr uint8_t kMagic[8] = {0x89, 'Z', 'T', '2', 0x0d, 0x0a, 0x1a, 0x0a};
constexpr uint64_t kFooterSize = 40;
constexpr uint64_t kMinFileSize = 8 + kFooterSize;
constexpr uint32_t kVersion = 2;
constexpr uint64_t kAlignFloor = 4096;                    // §2.4
constexpr uint64_t kMaxManifestSize = uint64_t{1} << 30;  // §3.1

struct Footer {
  uint64_t manifest_offset = 0;
  uint64_t manifest_length = 0;
  uint64_t manifest_hash = 0;
  bool data_shard = false;  // all three zero (§7.2): no manifest
  uint64_t data_end = 0;    // file size - 40: where every blob must end
};

// True when the 8 bytes are the v2 magic.
bool is_magic(const uint8_t *bytes8);

// The footer rules of §3.6 items 1-2 that need no manifest byte, in the
// original's order: size, header magic, footer magic, version; then a data
// shard's zeros, the 1 GiB cap (before anything is read; `limit` may lower
// it), the manifest's alignment and its bounds. Throws a rejection naming
// the rule. The reserved field is ignored.
Footer read_footer(const Source &src, uint64_t limit);

}  // namespace zt::v2
