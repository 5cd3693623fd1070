// What readv/writev-style loops share: after a call moved `done` bytes,
// skip the iovecs it finished and trim the one it stopped inside, so the
// next call resumes exactly there.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

namespace zt {

inline void iov_advance(iovec *&iov, size_t &count, size_t done) {
  while (count > 0 && done >= iov->iov_len) {
    done -= iov->iov_len;
    ++iov;
    --count;
  }
  if (count > 0) {
    iov->iov_base = static_cast<uint8_t *>(iov->iov_base) + done;
    iov->iov_len -= done;
  }
}

}  // namespace zt
