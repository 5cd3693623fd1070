// 64-bit file quantities (offsets, lengths, decoded sizes) turned into a
// size_t for memory: on a 32-bit host (i686, armhf, win32) a value past
// 4 GiB does not fit, and a plain static_cast would cut it short silently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "util/error.h"

namespace zt {

constexpr bool fits_size_t(uint64_t n) {
  return n <= std::numeric_limits<size_t>::max();
}

// n as a size_t, or ZT_E_LIMIT naming what needed the memory.
inline size_t to_size(uint64_t n, const std::string &what) {
  if (!fits_size_t(n))
    fail(ZT_E_LIMIT, what + " needs " + std::to_string(n) + " bytes in memory at once, more than this " +
                         std::to_string(8 * sizeof(size_t)) + "-bit process can address; read it by range instead");
  return static_cast<size_t>(n);
}

}  // namespace zt
