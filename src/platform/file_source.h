// The platform seam for reading local files as a Source (container/source.h):
// src/platform/posix/file_source.cc (mmap, pread/preadv, madvise, mincore,
// /proc/self/fd) and src/platform/win32/file_source.cc (file mappings,
// ReadFile at 64-bit offsets). Memory sources and every default of Source
// are platform-neutral, in src/container/source.cc.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <string>

#include "platform/file.h"

namespace zt {

class Source;

std::unique_ptr<Source> open_mmap_source(const std::string &path);
std::unique_ptr<Source> open_pread_source(const std::string &path);
// The same over a descriptor the caller opened (read-only, regular): the
// source owns it from the call on, also when it throws. `path` names the
// file in messages.
std::unique_ptr<Source> open_mmap_source(int fd, const std::string &path);
std::unique_ptr<Source> open_pread_source(int fd, const std::string &path);
// The descriptor budget: descriptors open files hold beyond need, at most a
// quarter of RLIMIT_NOFILE and 256 (docs/limits.md). Mapped sources that
// keep theirs for pread copies take one each (past the budget a mapped
// file closes it once mapped and copies from the map), and so does the
// second opening of a prefetch thread while the thread runs (past it the
// thread reads through the file's own map or descriptor). Windows has no
// such limit and no prefetch thread: there take_descriptor_slot() is false.
// take_descriptor_slot() is false when the budget is spent; every true is
// matched by one give_descriptor_slot().
bool take_descriptor_slot();
void give_descriptor_slot();
// Slots of the budget in use (mapped files, on Windows). For tests.
int mapped_sources_holding_fds();

namespace platform {

// A source S(fd, path) that owns fd from the call on: fd is closed here if
// the source cannot even be allocated (S's constructor closes it when it
// fails).
template <class S>
std::unique_ptr<Source> adopt_descriptor(int fd, const std::string &path) {
  void *mem = nullptr;
  try {
    mem = ::operator new(sizeof(S));
  } catch (...) {
    close_file(fd);
    throw;
  }
  try {
    return std::unique_ptr<Source>(new (mem) S(fd, path));
  } catch (...) {
    ::operator delete(mem);
    throw;
  }
}

}  // namespace platform
}  // namespace zt
