// FileSink's buffering, the same on every platform: small writes gather in
// a 64 KiB buffer, large ones go straight to write_through() (sink.cc).
#include <algorithm>
#include <cstring>

#include "container/sink.h"
#include "util/error.h"
#include "ztensor.h"

namespace zt {

void FileSink::flush() {
  write_through(nullptr, 0);
}

// No fallocate: on ext4 it fragments the file into an extent per blob
// (interleaved with delayed-allocation ones), and replacing a file frees
// each extent with its own discard, which cost more than it ever saved.
void FileSink::write(const void *data, size_t len) {
  if (done_) fail(ZT_E_MISUSE, "write after the file was finished");
  if (len >= kDirectThreshold) {
    write_through(data, len);
  } else if (len) {
    if (used_ + len > kBufferSize) flush();
    std::memcpy(buffer_.get() + used_, data, len);
    used_ += len;
  }
  position_ += len;
}

void FileSink::write_zeros(size_t len) {
  if (done_) fail(ZT_E_MISUSE, "write after the file was finished");
  position_ += len;
  while (len > 0) {
    if (used_ == kBufferSize) flush();
    size_t n = std::min(len, kBufferSize - used_);
    std::memset(buffer_.get() + used_, 0, n);
    used_ += n;
    len -= n;
  }
}

}  // namespace zt
