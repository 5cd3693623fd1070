// The platform seam for memory (src/platform/posix/memory.cc,
// src/platform/win32/memory.cc): page size, physical memory, address space
// reserved without memory and committed page by page (a foreign file's
// tensors decoded on first read), and prefaulting a buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace zt {
namespace platform {

uint64_t page_size() noexcept;
// Half the physical memory (the prefetcher's cap), UINT64_MAX when the
// system does not say.
uint64_t half_physical_memory() noexcept;
// `size` bytes of address space, no memory, no access (mmap PROT_NONE
// MAP_NORESERVE; VirtualAlloc MEM_RESERVE). nullptr when there is no room.
void *reserve_address_space(size_t size) noexcept;
void release_address_space(void *base, size_t size) noexcept;
// Makes the pages [p, p+len) of a reservation (page-aligned) readable and
// writable (committing memory on Windows) or read-only. False, with why,
// when the system refuses (no memory).
bool set_pages_writable(void *p, size_t len, bool writable, std::string &why) noexcept;
// Faults in the whole pages inside [dst, dst+len) for writing, ahead of a
// copy into them (Linux 5.14+: MADV_POPULATE_WRITE); nothing elsewhere.
void prefault_for_write(void *dst, size_t len) noexcept;
// Starts reading the pages of each range [p, p+len) of a file mapping in
// the background (madvise MADV_WILLNEED: the kernel queues the reads at
// once, so scattered pages of a cold file arrive in parallel instead of
// one page fault at a time); a hint, nothing on failure or elsewhere.
void advise_will_need(const void *p, size_t len) noexcept;

}  // namespace platform
}  // namespace zt
