#include "v2/blob_file.h"

#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "util/error.h"

namespace zt::v2 {
namespace {

constexpr uint64_t kGrowStep = uint64_t{64} << 20;

[[noreturn]] void io_failed(const char *doing, const char *what, int err) {
  fail(ZT_E_IO, std::string("v2 writer: ") + doing + " " + what + " failed: " + std::strerror(err));
}

}  // namespace

void pread_exact(int fd, void *p, size_t n, uint64_t at, const char *what) {
  auto *b = static_cast<uint8_t *>(p);
  while (n) {
    const ssize_t r = ::pread(fd, b, n, static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) io_failed("reading back", what, r < 0 ? errno : EIO);
    b += r;
    n -= static_cast<size_t>(r);
    at += static_cast<uint64_t>(r);
  }
}

void pwrite_exact(int fd, const void *p, size_t n, uint64_t at, const char *what) {
  auto *b = static_cast<const uint8_t *>(p);
  while (n) {
    const ssize_t r = ::pwrite(fd, b, std::min(n, size_t{1} << 30), static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) io_failed("writing", what, r < 0 ? errno : EIO);
    b += r;
    n -= static_cast<size_t>(r);
    at += static_cast<uint64_t>(r);
  }
}

void BlobFile::attach(int fd) {
  fd_ = fd;
  struct stat st;
  if (::fstat(fd, &st) == 0) {
    block_ = std::clamp<uint64_t>(static_cast<uint64_t>(st.st_blksize), 4096, 65536);
    reserved_ = static_cast<uint64_t>(st.st_size);
  }
  used_ = 0;
  run_at_ = 0;
}

// Grows the file past `end` in large steps: writes below its size do not
// extend it.
void BlobFile::reserve(uint64_t end) {
  if (end <= reserved_) return;
  const uint64_t want = end + std::max(kGrowStep, end / 4);
  if (::ftruncate(fd_, static_cast<off_t>(want)) == 0) reserved_ = want;
  // A filesystem that cannot: the writes extend the file themselves.
}

// Writes the gathered bytes and then n bytes at p, contiguous, in one call
// where it can.
void BlobFile::write_run(const void *p, size_t n, const char *what) {
  reserve(run_at_ + used_ + n);
  iovec v[2];
  int cnt = 0;
  if (used_) v[cnt++] = {buf_.get(), used_};
  if (n) v[cnt++] = {const_cast<void *>(p), n};
  uint64_t at = run_at_;
  size_t left = used_ + n;
  int first = 0;
  while (left) {
    const ssize_t r = ::pwritev(fd_, v + first, cnt - first, static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) io_failed("writing", what, r < 0 ? errno : EIO);
    size_t done = static_cast<size_t>(r);
    at += done;
    left -= done;
    while (first < cnt && done >= v[first].iov_len) done -= v[first++].iov_len;
    if (first < cnt) {
      v[first].iov_base = static_cast<uint8_t *>(v[first].iov_base) + done;
      v[first].iov_len -= done;
    }
  }
  run_at_ = at;
  used_ = 0;
}

void BlobFile::write(uint64_t at, const void *p, size_t n, const char *what) {
  const uint64_t end = run_at_ + used_;
  if (at != end) {
    const uint64_t next_block = (end + block_ - 1) / block_ * block_;
    if (at > end && next_block + block_ > at) {
      // No whole block in between: its zeros share blocks with the bytes
      // around them, so they go out in the same write.
      for (uint64_t gap = at - end; gap;) {
        if (used_ == kBuffer) flush();
        if (!buf_) buf_.reset(new uint8_t[kBuffer]);
        const size_t k = static_cast<size_t>(std::min<uint64_t>(gap, kBuffer - used_));
        std::memset(buf_.get() + used_, 0, k);
        used_ += k;
        gap -= k;
      }
    } else {
      flush();
      run_at_ = at;  // the gap stays a hole
    }
  }
  if (n >= kDirect) {
    write_run(p, n, what);
    return;
  }
  if (!buf_) buf_.reset(new uint8_t[kBuffer]);
  if (used_ + n > kBuffer) flush();
  std::memcpy(buf_.get() + used_, p, n);
  used_ += n;
}

void BlobFile::flush() {
  if (used_) write_run(nullptr, 0, "a blob");
}

void BlobFile::read(uint64_t at, void *p, size_t n) {
  flush();
  pread_exact(fd_, p, n, at, "a blob");
}

void BlobFile::cut(uint64_t size) {
  flush();
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
    fail(ZT_E_IO, std::string("v2 writer: cannot cut the layout file back: ") + std::strerror(errno));
  reserved_ = size;
  run_at_ = size;
}

void BlobFile::set_size(uint64_t size) {
  flush();
  if (reserved_ != size && ::ftruncate(fd_, static_cast<off_t>(size)) != 0)
    fail(ZT_E_IO, std::string("v2 writer: cannot set the file's size: ") + std::strerror(errno));
  reserved_ = size;
}

}  // namespace zt::v2
