// The host's byte order. The format stores every multi-byte number
// little-endian (legacy 0.1 data may say "big"); the API hands elements to
// and from the caller in the host's order, so a big-endian host swaps on
// read and on write, and cannot lend a zero-copy view of little-endian
// multi-byte data (docs/cross.md).
#pragma once

namespace zt {

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
inline constexpr bool kHostBigEndian = true;
#elif defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
inline constexpr bool kHostBigEndian = false;
#else
#error "unknown host byte order: the build needs __BYTE_ORDER__ (GCC, Clang)"
#endif

}  // namespace zt
