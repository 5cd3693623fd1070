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

#include "container/iovec_util.h"
#include "container/replace_target.h"
#include "container/replaced_file.h"
#include "platform/process.h"
#include "util/error.h"
#include "util/temp_file.h"
#include "ztensor.h"

namespace zt {
namespace {

// writev until every byte is out: the kernel may stop short (a signal, or
// its ~2 GiB cap per call).
// `what` names the file in the message (FileSink::temp_label).
void writev_all(int fd, struct iovec *iov, size_t n, const std::string &what) {
  while (n > 0) {
    ssize_t r = ::writev(fd, iov, static_cast<int>(n));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) fail(ZT_E_IO, "write to " + what + " failed: " + std::strerror(r < 0 ? errno : EIO));
    iov_advance(iov, n, static_cast<size_t>(r));
  }
}

}  // namespace

FileSink::FileSink(const std::string &path) : owner_pid_(current_process_id()) {
  if (path.empty()) fail(ZT_E_INVALID_ARG, "output path is empty");
  const ReplaceTarget target = resolve_replace_target(path);
  path_ = target.path;
  // Temporaries of writers to the same file that were killed go first. An
  // O_TMPFILE temporary has a name too for the instant between its linkat
  // and the rename over the target: a kill there leaves it behind, so the
  // scan (~0.4 us per entry of the folder) runs whichever kind we make.
  remove_stale_temps(path_, kTempTag);
  fd_ = open_anonymous_temp(temp_dir_of(path_), temp_create_mode(target));
  if (fd_ < 0) {
    // No O_TMPFILE here: the temporary has a name from the start.
    fd_ = create_named_temp(path_, kTempTag, temp_path_, temp_create_mode(target));
    if (fd_ < 0) fail(ZT_E_IO, "cannot create a temporary file beside '" + path + "': " + std::strerror(errno));
  }
  apply_replace_metadata(fd_, target);
  buffer_.reset(new uint8_t[kBufferSize]);
}

FileSink::~FileSink() {
  abandon();
}

void FileSink::abandon() noexcept {
  if (done_) return;
  done_ = true;
  if (fd_ >= 0) ::close(fd_);  // an anonymous temporary is freed with its last descriptor
  fd_ = -1;
  if (!temp_path_.empty() && owner_pid_ == current_process_id()) ::unlink(temp_path_.c_str());
}

bool FileSink::written_for_check(Written &out) {
  flush();
  out.path = temp_path_;
  out.label = temp_path_.empty() ? "the new file for '" + path_ + "'" : temp_path_;
  out.fd = fd_;
  return true;
}

void FileSink::write_through(const void *data, size_t len) {
  // A large blob goes out in kWritebackChunk pieces, each handed to
  // writeback as soon as it is written (see start_writeback).
  const auto *p = static_cast<const uint8_t *>(data);
  do {
    const size_t n = std::min(len, kWritebackChunk);
    struct iovec iov[2];
    size_t k = 0;
    if (used_) iov[k++] = {buffer_.get(), used_};
    if (n) iov[k++] = {const_cast<uint8_t *>(p), n};
    writev_all(fd_, iov, k, temp_label());
    written_ += used_ + n;
    used_ = 0;
    p += n;
    len -= n;
    start_writeback();
  } while (len > 0);
}

// Starts writeback of each kWritebackChunk written, without waiting for
// it. Left to itself, ext4 writes the whole file back inside the rename
// that replaces the destination (auto_da_alloc); started while the rest is
// still being copied, most of that I/O is done by then, and an fsync (sync=1)
// has little left to wait for. 64 MiB measured best on this kind of machine
// (write rows of bench/, sync=0, against the write() loop: mixed 1.1-1.4 with
// 16 MiB or 32 MiB pieces, 2.0-2.3 with 64 MiB, 1.7-2.0 with 128 MiB; large
// 1.1-1.5, 2.1-2.6 and 0.8-1.1). Fewer calls block less often on a full
// device queue; much bigger pieces leave too much for the rename.
void FileSink::start_writeback() {
  if (written_ - started_ < kWritebackChunk) return;
#ifdef SYNC_FILE_RANGE_WRITE
  (void)::sync_file_range(fd_, static_cast<off_t>(started_), static_cast<off_t>(written_ - started_),
                          SYNC_FILE_RANGE_WRITE);
#endif
  started_ = written_;
}

std::string FileSink::temp_label() const {
  const std::string dest = "the temporary file of '" + path_ + "'";
  return temp_path_.empty() ? dest + " (unnamed, O_TMPFILE)" : "'" + temp_path_ + "' (" + dest + ")";
}

void FileSink::commit(bool sync) {
  if (done_) fail(ZT_E_MISUSE, "file already finished");
  flush();
  if (sync && ::fsync(fd_) != 0) fail(ZT_E_IO, "fsync of " + temp_label() + " failed: " + std::strerror(errno));
  if (temp_path_.empty() && !link_anonymous_temp(fd_, path_, kTempTag, temp_path_)) {
    temp_path_.clear();
    fail(ZT_E_IO, "cannot give the new file a name beside '" + path_ + "' (linkat): " + std::strerror(errno));
  }
  if (::close(fd_) != 0) {
    fd_ = -1;
    fail(ZT_E_IO, "close of " + temp_label() + " failed: " + std::strerror(errno));
  }
  fd_ = -1;
  ReplacedFile replaced(path_);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0)
    fail(ZT_E_IO, "cannot rename " + temp_label() + " over '" + path_ + "': " + std::strerror(errno));
  done_ = true;
  replaced.release();
  replaced_in_background_ = replaced.released_in_background();
  if (sync) {
    int dfd = ::open(temp_dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }
}

}  // namespace zt
