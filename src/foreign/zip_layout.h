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

// Asks the system to read, all at once, the page holding each member's
// local header (the .npy header or a torch storage follows it): on a cold
// file libzip's consistency check and the walks here would otherwise fault
// them in one at a time, a disk round trip each (117 members: ~120 ms of a
// cold open). At most `max_hints` members are hinted; a hint only.
void prefetch_local_headers(const uint8_t *p, size_t n, size_t max_hints = 65536);

}  // namespace zt::foreign
