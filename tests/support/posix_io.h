// pread/pwrite for the tests that patch file bytes at an offset, on Windows
// too (mingw's C runtime has neither): a seek then a read or write, enough
// for a test's single thread. kOpenBinary is O_BINARY there (the runtime's
// descriptors translate "\n" otherwise) and 0 on POSIX.
#pragma once

#include <fcntl.h>

#ifdef _WIN32
#include <io.h>

#include <cstddef>
#include <cstdint>

inline long pread(int fd, void *buf, size_t n, int64_t offset) {
  if (_lseeki64(fd, offset, SEEK_SET) < 0) return -1;
  return _read(fd, buf, static_cast<unsigned>(n));
}

inline long pwrite(int fd, const void *buf, size_t n, int64_t offset) {
  if (_lseeki64(fd, offset, SEEK_SET) < 0) return -1;
  return _write(fd, buf, static_cast<unsigned>(n));
}
#else
#include <unistd.h>
#endif

namespace zttest {
#ifdef _WIN32
constexpr int kOpenBinary = O_BINARY;
#else
constexpr int kOpenBinary = 0;
#endif
}  // namespace zttest
