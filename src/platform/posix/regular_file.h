// Opening an input that must be a regular file, without ever blocking on
// it. A plain open(2) of a FIFO waits for a writer that may never come, and
// one of a tty or some devices has side effects; so every input is opened
// with O_NONBLOCK (a FIFO then opens at once) and O_NOCTTY, checked with
// fstat, refused unless regular, and only then switched back to blocking
// reads. Header-only and free of the library's types: the zt tool and its
// foreign-format importers use it too.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace zt {

// "a FIFO", "a directory", ...: what a non-regular file is, for messages.
inline const char *file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// Opens `path` (relative to `dirfd`, or AT_FDCWD) read-only with `extra`
// flags added (O_NOFOLLOW, say) and O_CLOEXEC. Returns the descriptor, its
// stat in *st, or -1 with errno set; when the file exists but is not a
// regular file, -1 with errno = EINVAL and *kind naming what it is (else
// *kind is left null).
inline int open_regular_file(int dirfd, const char *path, int extra, struct stat *st, const char **kind) {
  *kind = nullptr;
  int fd;
  do {
    fd = ::openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | extra);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return -1;
  int flags;
  if (::fstat(fd, st) != 0 || (flags = ::fcntl(fd, F_GETFL)) < 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  if (!S_ISREG(st->st_mode)) {
    *kind = file_kind(st->st_mode);
    ::close(fd);
    errno = EINVAL;
    return -1;
  }
  // Regular files ignore O_NONBLOCK today, but clear it all the same: a
  // later read must never see EAGAIN.
  if (::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

}  // namespace zt
