// The POSIX side of platform/file.h.
#include "platform/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "platform/posix/regular_file.h"
#include "platform/posix/temp_file.h"
#include "util/error.h"
#include "ztensor.h"

namespace zt {
namespace platform {

InputFile::InputFile(const std::string &path, const std::string &label) {
  const std::string shown = label.empty() ? "'" + path + "'" : label;
  struct stat st;
  const char *kind = nullptr;
  fd_ = open_regular_file(AT_FDCWD, path.c_str(), 0, &st, &kind);
  if (fd_ < 0 && kind) fail(ZT_E_IO, shown + " is " + kind + ", not a regular file");
  if (fd_ < 0) fail(ZT_E_IO, "cannot open " + shown + ": " + std::strerror(errno));
  size_ = static_cast<uint64_t>(st.st_size);
}

InputFile::InputFile(int fd, const std::string &path) : fd_(fd) {
  struct stat st;
  const bool ok = ::fstat(fd_, &st) == 0;
  if (ok && S_ISREG(st.st_mode)) {
    size_ = static_cast<uint64_t>(st.st_size);
    return;
  }
  const std::string why = ok ? "'" + path + "' is " + file_kind(st.st_mode) + ", not a regular file"
                             : "cannot stat '" + path + "': " + std::strerror(errno);
  close();  // no destructor runs for a constructor that throws
  fail(ZT_E_IO, why);
}

void InputFile::close() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

FileView::FileView(const std::string &path, uint64_t expected_size) {
  static const uint8_t kEmpty = 0;
  data_ = &kEmpty;
  InputFile file(path);
  size_ = checked_view_size(path, file.size(), expected_size);
  if (size_ == 0) return;
  void *a = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.get(), 0);
  if (a == MAP_FAILED) fail(ZT_E_IO, "cannot map '" + path + "': " + std::strerror(errno));
  map_ = a;
  data_ = static_cast<const uint8_t *>(a);
}

FileView::~FileView() {
  if (map_) ::munmap(map_, size_);
}

SmallFile read_small_file(const std::string &path, uint64_t limit, const std::string &label, std::string &text) {
  struct stat st;
  const char *kind = nullptr;
  const int fd = open_regular_file(AT_FDCWD, path.c_str(), 0, &st, &kind);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return SmallFile::kMissing;
    if (kind) fail(ZT_E_IO, label + " is " + kind + ", not a regular file; refused");
    fail(ZT_E_IO, "cannot read " + label + ": " + std::strerror(errno));
  }
  if (static_cast<uint64_t>(st.st_size) > limit) {
    ::close(fd);
    return SmallFile::kTooLarge;
  }
  // Read up to one byte past the cap: the file may grow after the fstat.
  text.assign(static_cast<size_t>(limit) + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, &text[got], text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      fail(ZT_E_IO, "cannot read " + label + ": " + std::strerror(e));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return got > limit ? SmallFile::kTooLarge : SmallFile::kRead;
}

void read_at(int fd, const std::string &what, uint64_t offset, void *dst, size_t len) {
  auto *p = static_cast<uint8_t *>(dst);
  while (len > 0) {
    const ssize_t got = ::pread(fd, p, std::min(len, size_t{1} << 30), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      fail(ZT_E_IO, "read failed on " + what + " at offset " + std::to_string(offset) + ": " + std::strerror(errno));
    if (got == 0) fail(ZT_E_IO, what + " shrank while being read (offset " + std::to_string(offset) + ")");
    p += got;
    offset += static_cast<uint64_t>(got);
    len -= static_cast<size_t>(got);
  }
}

void write_at(int fd, const std::string &what, uint64_t offset, const void *src, size_t len) {
  const auto *p = static_cast<const uint8_t *>(src);
  while (len > 0) {
    const ssize_t put = ::pwrite(fd, p, std::min(len, size_t{1} << 30), static_cast<off_t>(offset));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0)
      fail(ZT_E_IO, "write to " + what + " at offset " + std::to_string(offset) +
                        " failed: " + std::strerror(put < 0 ? errno : EIO));
    p += put;
    offset += static_cast<uint64_t>(put);
    len -= static_cast<size_t>(put);
  }
}

void write_two_at(int fd, const std::string &what, uint64_t offset, const void *a, size_t an, const void *b,
                  size_t bn) {
  iovec v[2] = {{const_cast<void *>(a), an}, {const_cast<void *>(b), bn}};
  int first = an ? 0 : 1;
  const int cnt = bn ? 2 : 1;
  size_t left = an + bn;
  while (left) {
    const ssize_t put = ::pwritev(fd, v + first, cnt - first, static_cast<off_t>(offset));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0)
      fail(ZT_E_IO, "write to " + what + " at offset " + std::to_string(offset) +
                        " failed: " + std::strerror(put < 0 ? errno : EIO));
    size_t done = static_cast<size_t>(put);
    offset += done;
    left -= done;
    while (first < cnt && done >= v[first].iov_len) done -= v[first++].iov_len;
    if (first < cnt) {
      v[first].iov_base = static_cast<uint8_t *>(v[first].iov_base) + done;
      v[first].iov_len -= done;
    }
  }
}

bool size_and_block(int fd, uint64_t *size, uint64_t *block) noexcept {
  struct stat st;
  if (::fstat(fd, &st) != 0) return false;
  *size = static_cast<uint64_t>(st.st_size);
  *block = st.st_blksize > 0 ? static_cast<uint64_t>(st.st_blksize) : 4096;
  return true;
}

uint64_t copy_in_kernel(int in_fd, uint64_t in_at, int out_fd, uint64_t out_at, uint64_t len) noexcept {
  uint64_t done = 0;
#ifdef __linux__
  while (done < len) {
    loff_t in = static_cast<loff_t>(in_at + done), out = static_cast<loff_t>(out_at + done);
    const ssize_t r = ::copy_file_range(in_fd, &in, out_fd, &out, static_cast<size_t>(len - done), 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    done += static_cast<uint64_t>(r);
  }
#else
  (void)in_fd;
  (void)in_at;
  (void)out_fd;
  (void)out_at;
  (void)len;
#endif
  return done;
}

void truncate_file(int fd, uint64_t size, const std::string &what) {
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0)
    fail(ZT_E_IO, "cannot set the size of " + what + " to " + std::to_string(size) + ": " + std::strerror(errno));
}

std::FILE *open_stdio(const std::string &path, const char *mode) {
  return std::fopen(path.c_str(), mode);
}

bool sync_stdio(std::FILE *f) noexcept {
  return ::fsync(::fileno(f)) == 0;
}

bool close_file(int fd) noexcept {
  return ::close(fd) == 0;
}

int duplicate_file(int fd) noexcept {
  return ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

bool same_file(const std::string &a, const std::string &b) noexcept {
  struct stat x, y;
  return ::stat(a.c_str(), &x) == 0 && ::stat(b.c_str(), &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int open_scratch_file(const std::string &dir, const std::string &what) {
  int fd = open_anonymous_temp(dir);
  if (fd < 0) {
    std::string name;
    fd = create_named_temp(dir + "/zt-v2-spool", "-", name);
    if (fd >= 0) ::unlink(name.c_str());
  }
  if (fd < 0) fail(ZT_E_IO, "cannot create " + what + " in '" + dir + "': " + std::strerror(errno));
  return fd;
}

std::string temp_folder() {
  const char *tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

}  // namespace platform
}  // namespace zt
