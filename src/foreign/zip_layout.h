// Where each member's bytes start inside a zip archive held in memory, for
// reading stored (uncompressed) members in place: libzip does not say, so
// the central directory (zip64 included) is walked here and each entry's
// local header checked. Anything unexpected leaves the member out (it is
// then read through libzip, by copy); libzip has already checked the
// archive's consistency before this runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace zt::foreign {

struct ZipDataRange {
  uint64_t offset;  // of the member's first byte in the archive
  uint64_t size;    // stored bytes
  bool stored;      // method 0: the bytes are the member's contents
};

// Members by name; [offset, offset + size) lies inside the archive.
std::unordered_map<std::string, ZipDataRange> zip_data_ranges(const uint8_t *p, size_t n);

}  // namespace zt::foreign
