// Canonical form of a v2 file (spec §6.3), decided from the manifest and
// where the file put it: nothing in a file says it is canonical, and nothing
// needs to, since all six rules can be checked from the bytes' layout.
// Agrees with our canonical writer (src/v2/v2_writer.*): whatever it writes
// is canonical, including zero-length parts at the next blob's boundary
// (docs/v2.md, "Zero-length parts"), where the original's check disagrees
// with its own writer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "manifest/model.h"

namespace zt::v2 {

struct CanonicalViolation {
  unsigned rule;     // 1..6, §6.3's numbering
  std::string text;  // "rule N: ..." naming the object/part and offsets
};

struct Placement {
  uint64_t manifest_offset = 0;
  uint64_t manifest_size = 0;
  uint64_t file_size = 0;
};

// Every rule the file breaks, in the order found (rule 6, rule 5, then the
// walk over parts in (object, part) name order for rules 4, 2, 3, 1, then
// the manifest's place); a blob out of place is reported once, not again
// for what it displaces, so the first entry is the cause. Empty: the file is canonical. Sharing (rule 3) is
// judged by digest and length, as the original does; rule 4 requires an
// xxh3 digest on every part.
std::vector<CanonicalViolation> canonical_violations(const Manifest &m, const Placement &at);

}  // namespace zt::v2
