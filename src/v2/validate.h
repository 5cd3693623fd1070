// Format v2 validation summary (spec §3.6 items 3-6) over a mapped manifest:
// blob references (alignment, the shard named, bounds within the file they
// point into), identical-or-disjoint per file with the manifest blob
// included (sorted: O(n log n)), and each known layout's metadata rules
// (vocab.h). Throws a rejection naming the rule; a layout marked
// object_only sets the object's status instead.
#pragma once

#include <cstdint>
#include <string>

#include "manifest/model.h"

namespace zt::v2 {

void validate_manifest(Manifest &m, uint64_t manifest_offset, uint64_t manifest_length, const std::string &pre);

}  // namespace zt::v2
