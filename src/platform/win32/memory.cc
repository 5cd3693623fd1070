// The Windows side of platform/memory.h.
#include "platform/memory.h"

#include <windows.h>

namespace zt {
namespace platform {

uint64_t page_size() noexcept {
  SYSTEM_INFO si;
  ::GetSystemInfo(&si);
  return si.dwPageSize;
}

uint64_t half_physical_memory() noexcept {
  MEMORYSTATUSEX m;
  m.dwLength = sizeof m;
  if (::GlobalMemoryStatusEx(&m) && m.ullTotalPhys > 0) return m.ullTotalPhys / 2;
  return UINT64_MAX;
}

void *reserve_address_space(size_t size) noexcept {
  return ::VirtualAlloc(nullptr, size, MEM_RESERVE, PAGE_NOACCESS);
}

void release_address_space(void *base, size_t) noexcept {
  if (base) ::VirtualFree(base, 0, MEM_RELEASE);
}

bool set_pages_writable(void *p, size_t len, bool writable, std::string &why) noexcept {
  if (writable) {
    if (::VirtualAlloc(p, len, MEM_COMMIT, PAGE_READWRITE)) return true;
    try {
      why = "cannot commit the memory";
    } catch (...) {
    }
    return false;
  }
  DWORD old;
  ::VirtualProtect(p, len, PAGE_READONLY, &old);
  return true;
}

void prefault_for_write(void *, size_t) noexcept {}

void advise_will_need(const void *, size_t) noexcept {}

}  // namespace platform
}  // namespace zt
