#include "container/read_hints.h"

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <algorithm>

namespace zt {
namespace read_hints {

#if defined(__linux__)

bool sequential(int fd) {
  return ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL) == 0;
}

bool prefetch_mapped(const void *addr, size_t len, size_t step) {
  if (!addr || len == 0) return true;
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(addr) + len;
  step = std::max<size_t>(page, step / page * page);
  bool ok = true;
  for (uintptr_t at = begin; at < end; at += step) {
    const size_t n = static_cast<size_t>(std::min<uintptr_t>(step, end - at));
    ok = ::madvise(reinterpret_cast<void *>(at), n, MADV_WILLNEED) == 0 && ok;
  }
  return ok;
}

#else  // other platforms: no hints (the reads are correct without them)

bool sequential(int) {
  return false;
}

bool prefetch_mapped(const void *, size_t, size_t) {
  return false;
}

#endif

}  // namespace read_hints
}  // namespace zt
