// Hints to the kernel about reads the library is about to make, so that a
// load from a cold page cache runs at the disk's sequential speed (issue 26).
// Every platform-specific call lives here; where a hint does not exist the
// function does nothing and reports false.
//
// What the measurements on Linux (ext4 on a virtio disk, readahead 8 MiB)
// showed, and why each hint is what it is:
// - Two threads copying neighbouring 4 MiB pieces of a cold file through one
//   descriptor ran 2-3x slower than one sequential read(): they share the
//   descriptor's readahead state, each sees the other's reads as a seek and
//   readahead stops. POSIX_FADV_SEQUENTIAL (a doubled window, no seek
//   heuristics) brought the same reads to sequential speed; it costs one
//   system call and nothing on a warm cache.
// - Faults on a mapping already read ahead well for one reader; two
//   threads decoding far-apart zstd blobs from the mapping do not. Asking
//   for a blob's stored bytes up front (MADV_WILLNEED over the whole range)
//   lets each decode find its input in memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zt {
namespace read_hints {

// The descriptor will be read in large pieces, in file order: widen its
// readahead (POSIX_FADV_SEQUENTIAL). Applies to the open file description.
bool sequential(int fd);

// One call of prefetch_mapped's: Linux reads at most max(the device's
// readahead window, its largest request) per MADV_WILLNEED, which is 1 MiB
// or more on common disks (max_sectors_kb 1280 and up), so a range is asked
// for in steps of this size.
constexpr size_t kPrefetchStep = size_t{1} << 20;

// [addr, addr+len) of a file mapping will be read soon and in full: start
// reading it now (MADV_WILLNEED per `step` bytes, page-aligned).
bool prefetch_mapped(const void *addr, size_t len, size_t step = kPrefetchStep);

}  // namespace read_hints
}  // namespace zt
