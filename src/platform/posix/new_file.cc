// The POSIX side of platform/new_file.h.
#include "platform/new_file.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "platform/posix/iovec_util.h"
#include "platform/posix/temp_file.h"
#include "platform/replaced_file.h"
#include "util/error.h"
#include "ztensor.h"

namespace zt {
namespace platform {

int create_temp_beside(const ReplaceTarget &target, const std::string &path, const char *tag, std::string &temp_path) {
  // Temporaries of writers to the same file that were killed go first. An
  // O_TMPFILE temporary has a name too for the instant between its linkat
  // and the rename over the target: a kill there leaves it behind, so the
  // scan runs whichever kind we make.
  remove_stale_temps(target.path, tag);
  int fd = open_anonymous_temp(temp_dir_of(target.path), temp_create_mode(target));
  if (fd < 0) {
    // No O_TMPFILE here: the temporary has a name from the start.
    const FolderChange change(temp_dir_of(target.path));
    fd = create_named_temp(target.path, tag, temp_path, temp_create_mode(target));
    if (fd < 0) fail(ZT_E_IO, "cannot create a temporary file beside '" + path + "': " + std::strerror(errno));
  }
  apply_replace_metadata(fd, target);
  return fd;
}

// writev until every byte is out: the kernel may stop short (a signal, or
// its ~2 GiB cap per call).
void write_two(int fd, const void *a, size_t na, const void *b, size_t nb, const std::string &what) {
  struct iovec iov[2];
  size_t n = 0;
  if (na) iov[n++] = {const_cast<void *>(a), na};
  if (nb) iov[n++] = {const_cast<void *>(b), nb};
  struct iovec *cur = iov;
  while (n > 0) {
    ssize_t r = ::writev(fd, cur, static_cast<int>(n));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) fail(ZT_E_IO, "write to " + what + " failed: " + std::strerror(r < 0 ? errno : EIO));
    iov_advance(cur, n, static_cast<size_t>(r));
  }
}

void start_writeback(int fd, uint64_t offset, uint64_t len) noexcept {
#ifdef SYNC_FILE_RANGE_WRITE
  (void)::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(len), SYNC_FILE_RANGE_WRITE);
#else
  (void)fd;
  (void)offset;
  (void)len;
#endif
}

void flush_to_disk(int fd, const std::string &what) {
  if (::fsync(fd) != 0) fail(ZT_E_IO, "fsync of " + what + " failed: " + std::strerror(errno));
}

void name_temp(int fd, const std::string &target, const char *tag, std::string &temp_path) {
  if (!temp_path.empty()) return;
  const FolderChange change(temp_dir_of(target));
  if (!link_anonymous_temp(fd, target, tag, temp_path)) {
    temp_path.clear();
    fail(ZT_E_IO, "cannot give the new file a name beside '" + target + "' (linkat): " + std::strerror(errno));
  }
}

void replace_file(const std::string &temp, const std::string &target, const std::string &what, bool *in_background) {
  ReplacedFile replaced(target);
  const FolderChange change(temp_dir_of(target));
  if (::rename(temp.c_str(), target.c_str()) != 0)
    fail(ZT_E_IO, "cannot rename " + what + " over '" + target + "': " + std::strerror(errno));
  replaced.release();
  *in_background = replaced.released_in_background();
}

void sync_folder_of(const std::string &target) noexcept {
  const int dfd = ::open(temp_dir_of(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void remove_temp(const std::string &temp_path) noexcept {
  try {
    const FolderChange change(temp_dir_of(temp_path));
    ::unlink(temp_path.c_str());
  } catch (...) {  // no memory for the folder's name: unlinked all the same
    ::unlink(temp_path.c_str());
  }
}

}  // namespace platform
}  // namespace zt
