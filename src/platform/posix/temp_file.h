// Temporary files that never outlive their writer (docs/writing-rules.md):
//
// - Where the filesystem has O_TMPFILE (ext4, xfs, btrfs, tmpfs, ...), the
//   file has no name while it is written: whatever ends the process, even
//   SIGKILL, the kernel frees it. It gets a name only at commit, for the
//   instant between linkat(2) and the rename over the destination.
// - Elsewhere it is "<target><tag><pid>-XXXXXX", locked (flock) by its
//   writer. The next writer to the same target (there, without O_TMPFILE
//   too) removes such files of writers that are gone: the pid is not alive
//   and nobody holds the lock (the lock speaks for a writer in another pid
//   namespace or on another NFS client, whose pid means nothing here).
//
// Header-only and free of the library's types: the zt tool's exports and
// set folders use the same names and rules.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace zt {

inline std::string temp_dir_of(const std::string &path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

inline std::string temp_base_of(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "<target><tag><pid>-": every temporary of this process for `target`.
inline std::string temp_prefix(const std::string &target, const char *tag) {
  return target + tag + std::to_string(static_cast<long>(::getpid())) + "-";
}

// Temporaries are created with `mode`: 0600 when they will take a replaced
// file's mode (fchmod), 0666 for a new file, which the kernel then cuts by
// the umask (or the folder's default ACL) exactly as for any file created
// there. Reading the umask instead would take umask(0) + umask(mask): for
// that instant the whole process has umask 0, and a file another thread
// creates comes out world-writable (issue 37).
//
// An anonymous (O_TMPFILE) file in `dir`, read-write, locked; -1 where
// the filesystem (or kernel) has none.
inline int open_anonymous_temp(const std::string &dir, mode_t mode = 0600) {
#ifdef O_TMPFILE
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
  if (fd >= 0) (void)::flock(fd, LOCK_EX | LOCK_NB);  // a fresh file: nobody else can hold it
  return fd;
#else
  (void)dir;
  (void)mode;
  errno = EOPNOTSUPP;
  return -1;
#endif
}

// A fresh candidate name "<target><tag><pid>-XXXXXX" (six characters
// from the clock and a counter; the callers create or link it exclusively
// and try another on EEXIST).
inline std::string temp_candidate(const std::string &target, const char *tag) {
  static std::atomic<unsigned> counter{0};
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t x = static_cast<uint64_t>(ts.tv_nsec) * 0x9E3779B97F4A7C15ull ^ counter.fetch_add(1) * 0xBF58476D1CE4E5B9ull;
  std::string candidate = temp_prefix(target, tag);
  for (int i = 0; i < 6; ++i, x /= 36) candidate += digits[x % 36];
  return candidate;
}

// A named temporary "<target><tag><pid>-XXXXXX", created exclusively with
// `mode` (see open_anonymous_temp; mkostemp would force 0600) and locked;
// -1 (errno set) on failure.
inline int create_named_temp(const std::string &target, const char *tag, std::string &name, mode_t mode = 0600) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string candidate = temp_candidate(target, tag);
    const int fd = ::open(candidate.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0) {
      (void)::flock(fd, LOCK_EX | LOCK_NB);
      name = candidate;
      return fd;
    }
    if (errno != EEXIST) return -1;
  }
  errno = EEXIST;
  return -1;
}

// Gives an anonymous temporary a fresh name "<target><tag><pid>-XXXXXX"
// (to be renamed over the target at once). AT_EMPTY_PATH needs
// CAP_DAC_READ_SEARCH on older kernels; /proc/self/fd works for anyone.
// Returns false (errno set) if neither can.
inline bool link_anonymous_temp(int fd, const std::string &target, const char *tag, std::string &name) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string candidate = temp_candidate(target, tag);
    int rc = -1;
#ifdef AT_EMPTY_PATH
    rc = ::linkat(fd, "", AT_FDCWD, candidate.c_str(), AT_EMPTY_PATH);
#endif
    if (rc != 0 && errno != EEXIST) {
      const std::string proc = "/proc/self/fd/" + std::to_string(fd);
      rc = ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, candidate.c_str(), AT_SYMLINK_FOLLOW);
    }
    if (rc == 0) {
      name = candidate;
      return true;
    }
    if (errno != EEXIST) return false;
  }
  errno = EEXIST;
  return false;
}

// Whether the writer that made a temporary carrying `pid` may still be
// running: alive, or not ours to ask (EPERM).
inline bool temp_owner_alive(long pid) {
  if (pid <= 0) return true;  // not a name we made: leave it
  if (pid == static_cast<long>(::getpid())) return true;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// The pid in "<prefix><pid>-XXXXXX", or -1.
inline long temp_pid(const std::string &name, size_t prefix_len) {
  long pid = 0;
  size_t i = prefix_len;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && i - prefix_len < 10; ++i)
    pid = pid * 10 + (name[i] - '0');
  if (i == prefix_len || i >= name.size() || name[i] != '-') return -1;
  return pid;
}

// Empties and removes a folder whose files are all regular (a set's
// temporary folder: shards and an index). Best effort.
inline void remove_flat_folder(int parent, const std::string &name) {
  const int dfd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0) return;
  if (DIR *d = ::fdopendir(dfd)) {
    std::vector<std::string> names;
    while (const dirent *e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    for (const auto &n : names) (void)::unlinkat(::dirfd(d), n.c_str(), 0);
    ::closedir(d);
  } else {
    ::close(dfd);
  }
  (void)::unlinkat(parent, name.c_str(), AT_REMOVEDIR);
}

// Removes, in the folder of `target`, the temporaries "<base><tag><pid>-*"
// left by writers that are gone (see the top of this file). A folder of
// that name (a set's temporary folder) is emptied and removed. Best
// effort: what cannot be checked or removed stays.
inline void remove_stale_temps(const std::string &target, const char *tag) {
  const std::string dir = temp_dir_of(target);
  const std::string prefix = temp_base_of(target) + tag;
  DIR *d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> stale;
  while (const dirent *e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.compare(0, prefix.size(), prefix) != 0) continue;
    if (temp_owner_alive(temp_pid(n, prefix.size()))) continue;
    stale.push_back(n);
  }
  const int dfd = ::dirfd(d);
  for (const auto &n : stale) {
    const int fd = ::openat(dfd, n.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) continue;
    struct stat st;
    // The lock decides: a live writer (in another pid namespace, say) holds it.
    if (::fstat(fd, &st) == 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      if (S_ISREG(st.st_mode))
        (void)::unlinkat(dfd, n.c_str(), 0);
      else if (S_ISDIR(st.st_mode))
        remove_flat_folder(dfd, n);
    }
    ::close(fd);
  }
  ::closedir(d);
}

}  // namespace zt
