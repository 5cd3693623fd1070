#include "v2/blob_file.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "platform/file.h"
#include "util/error.h"

namespace zt::v2 {
namespace {

constexpr uint64_t kGrowStep = uint64_t{64} << 20;

}  // namespace

void pread_exact(int fd, void *p, size_t n, uint64_t at, const char *what) {
  platform::read_at(fd, std::string("the v2 writer's layout file (reading back ") + what + ")", at, p, n);
}

void pwrite_exact(int fd, const void *p, size_t n, uint64_t at, const char *what) {
  platform::write_at(fd, std::string("the v2 writer's file (") + what + ")", at, p, n);
}

void BlobFile::attach(int fd) {
  fd_ = fd;
  uint64_t size = 0, block = 0;
  if (platform::size_and_block(fd, &size, &block)) {
    block_ = std::clamp<uint64_t>(block, 4096, 65536);
    reserved_ = size;
  }
  used_ = 0;
  run_at_ = 0;
}

// Grows the file past `end` in large steps: writes below its size do not
// extend it.
void BlobFile::reserve(uint64_t end) {
  if (end <= reserved_) return;
  const uint64_t want = end + std::max(kGrowStep, end / 4);
  try {
    platform::truncate_file(fd_, want, "the v2 writer's layout file");
    reserved_ = want;
  } catch (const Error &) {
  }
  // A filesystem that cannot: the writes extend the file themselves.
}

// Writes the gathered bytes and then n bytes at p, contiguous, in one call
// where it can.
void BlobFile::write_run(const void *p, size_t n, const char *what) {
  reserve(run_at_ + used_ + n);
  platform::write_two_at(fd_, std::string("the v2 writer's file (") + what + ")", run_at_, buf_.get(), used_, p, n);
  const uint64_t at = run_at_ + used_ + n;
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
  platform::truncate_file(fd_, size, "the v2 writer's layout file (cutting it back)");
  reserved_ = size;
  run_at_ = size;
}

void BlobFile::set_size(uint64_t size) {
  flush();
  if (reserved_ != size) platform::truncate_file(fd_, size, "the v2 writer's file (setting its size)");
  reserved_ = size;
}

}  // namespace zt::v2
