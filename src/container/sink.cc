#include "container/sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "util/error.h"
#include "ztensor.h"

namespace zt {
namespace {

std::string dir_of(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// writev until every byte is out: the kernel may stop short (a signal, or
// its ~2 GiB cap per call).
void writev_all(int fd, struct iovec *iov, int n, const std::string &name) {
  while (n > 0) {
    ssize_t r = ::writev(fd, iov, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) fail(ZT_E_IO, "write to '" + name + "' failed: " + std::strerror(r < 0 ? errno : EIO));
    size_t done = static_cast<size_t>(r);
    while (n > 0 && done >= iov->iov_len) {
      done -= iov->iov_len;
      ++iov;
      --n;
    }
    if (n > 0) {
      iov->iov_base = static_cast<uint8_t *>(iov->iov_base) + done;
      iov->iov_len -= done;
    }
  }
}

}  // namespace

FileSink::FileSink(const std::string &path) : path_(path) {
  if (path.empty()) fail(ZT_E_INVALID_ARG, "output path is empty");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    fail(ZT_E_IO, "cannot write '" + path + "': it is a directory");
  std::string tmpl = path + ".zt-tmp-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  fd_ = ::mkostemp(buf.data(), O_CLOEXEC);
  if (fd_ < 0) fail(ZT_E_IO, "cannot create a temporary file beside '" + path + "': " + std::strerror(errno));
  temp_path_ = buf.data();
  // mkostemp creates 0600; give the file the usual permissions.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
  buffer_.reset(new uint8_t[kBufferSize]);
}

FileSink::~FileSink() {
  abandon();
}

void FileSink::abandon() noexcept {
  if (done_) return;
  done_ = true;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void FileSink::write_through(const void *data, size_t len) {
  struct iovec iov[2];
  int n = 0;
  if (used_) iov[n++] = {buffer_.get(), used_};
  if (len) iov[n++] = {const_cast<void *>(data), len};
  writev_all(fd_, iov, n, temp_path_);
  used_ = 0;
}

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

void FileSink::commit(bool sync) {
  if (done_) fail(ZT_E_MISUSE, "file already finished");
  flush();
  if (sync && ::fsync(fd_) != 0) fail(ZT_E_IO, "fsync of '" + temp_path_ + "' failed: " + std::strerror(errno));
  if (::close(fd_) != 0) {
    fd_ = -1;
    fail(ZT_E_IO, "close of '" + temp_path_ + "' failed: " + std::strerror(errno));
  }
  fd_ = -1;
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0)
    fail(ZT_E_IO, "cannot rename '" + temp_path_ + "' to '" + path_ + "': " + std::strerror(errno));
  done_ = true;
  if (sync) {
    int dfd = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }
}

}  // namespace zt
