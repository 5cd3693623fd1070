// The POSIX side of platform/memory.h.
#include "platform/memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23
#endif

namespace zt {
namespace platform {

uint64_t page_size() noexcept {
  return static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

uint64_t half_physical_memory() noexcept {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2;
#endif
  return UINT64_MAX;
}

void *reserve_address_space(size_t size) noexcept {
  void *p = ::mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void release_address_space(void *base, size_t size) noexcept {
  if (base) ::munmap(base, size);
}

bool set_pages_writable(void *p, size_t len, bool writable, std::string &why) noexcept {
  if (::mprotect(p, len, writable ? PROT_READ | PROT_WRITE : PROT_READ) == 0) return true;
  try {
    why = std::strerror(errno);
  } catch (...) {
  }
  return false;
}

void prefault_for_write(void *dst, size_t len) noexcept {
#if defined(MADV_POPULATE_WRITE)
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(dst) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(dst) + len) & ~(page - 1);
  if (end > begin) ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)dst;
  (void)len;
#endif
}

void advise_will_need(const void *p, size_t len) noexcept {
  if (!p || !len) return;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  ::madvise(reinterpret_cast<void *>(begin), reinterpret_cast<uintptr_t>(p) + len - begin, MADV_WILLNEED);
}

}  // namespace platform
}  // namespace zt
