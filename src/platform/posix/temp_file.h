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
//   The scan reads the whole folder, so a process scans a folder only when
//   it has changed since the process last left it clean (see
//   FolderScans): N files written into one folder cost one scan, not N.
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

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
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

// The folders this process scanned for stale temporaries (per tag), each
// with its state (device, inode, mtime, ctime) as the process left it:
// clean of stale temporaries. A temporary left by another writer since
// then was created in the folder, which changed its mtime, so a folder
// whose state is unchanged needs no scan. The process's own changes (its
// temporaries, renames, removals) are recorded as they are made
// (FolderChange), so writing N files into one folder costs one scan and
// 2N stat calls, not N scans of up to N entries. Exact where the
// filesystem's timestamps are fine-grained once read (Linux 6.13+
// multigrain timestamps: ext4, xfs, btrfs, tmpfs); elsewhere a temporary
// created by another process within the same clock tick as this process's
// own last change in the folder is left to a later scan. Bounded: the
// least recently recorded folder is forgotten past kMax.
class FolderScans {
 public:
  static constexpr size_t kMax = 256;
  static FolderScans &instance() {
    static FolderScans *s = new FolderScans;  // never destroyed: writers may run at exit
    return *s;
  }
  // Whether `st` (of a folder) is exactly as the process left it clean;
  // then `mine` gets (and the record forgets) the stale temporaries of
  // other destinations the last scan left alone whose names start with
  // `prefix` (the caller's destination's).
  bool clean(const struct stat &st, const std::string &tag, const std::string &prefix, std::vector<std::string> &mine) {
    renew_after_fork();
    std::lock_guard<std::mutex> lock(mu_);
    Entry *e = find(st, tag);
    if (!e || !same_time(e->mtime, st.st_mtim) || !same_time(e->ctime, st.st_ctim)) return false;
    for (auto it = e->leftovers.begin(); it != e->leftovers.end();) {
      if (it->compare(0, prefix.size(), prefix) == 0) {
        mine.push_back(*it);
        it = e->leftovers.erase(it);
      } else {
        ++it;
      }
    }
    return true;
  }
  // The next writer in the folder scans it again.
  void forget(const struct stat &st) {
    renew_after_fork();
    std::lock_guard<std::mutex> lock(mu_);
    for (Entry &e : entries_)
      if (e.dev == st.st_dev && e.ino == st.st_ino) e.ino = 0;
  }
  // The folder is clean in state `st`, but for `leftovers`: stale
  // temporaries of other destinations (their next writer removes them).
  void remember(const struct stat &st, const std::string &tag, std::vector<std::string> leftovers) {
    renew_after_fork();
    std::lock_guard<std::mutex> lock(mu_);
    Entry *e = find(st, tag);
    if (!e) {
      if (entries_.size() >= kMax) entries_.erase(entries_.begin());
      entries_.push_back(Entry{st.st_dev, st.st_ino, tag, {}, {}, {}});
      e = &entries_.back();
    }
    e->mtime = st.st_mtim;
    e->ctime = st.st_ctim;
    e->leftovers = std::move(leftovers);
  }
  // The process changed the folder from `before` to `after`: still clean
  // if it was clean before (and nobody else changed it in between).
  void changed(const struct stat &before, const struct stat &after) {
    renew_after_fork();
    std::lock_guard<std::mutex> lock(mu_);
    for (Entry &e : entries_) {
      if (e.dev != before.st_dev || e.ino != before.st_ino) continue;
      if (same_time(e.mtime, before.st_mtim) && same_time(e.ctime, before.st_ctim) && after.st_ino == e.ino) {
        e.mtime = after.st_mtim;
        e.ctime = after.st_ctim;
      } else {
        e.ino = 0;  // forgotten: the next writer scans
      }
    }
  }
  // Folder scans (readdir passes) so far, for tests.
  unsigned long scans() const { return scans_.load(std::memory_order_relaxed); }
  void count_scan() { scans_.fetch_add(1, std::memory_order_relaxed); }

 private:
  struct Entry {
    dev_t dev;
    ino_t ino;
    std::string tag;
    struct timespec mtime, ctime;
    std::vector<std::string> leftovers;
  };
  // A forked child starts afresh: its parent's temporaries are another
  // process's now, and the lock may have been held by a thread the child
  // does not have (platform/process.h).
  void renew_after_fork() {
    const pid_t now = ::getpid();
    if (pid_.load(std::memory_order_relaxed) == now) return;
    new (&mu_) std::mutex;  // the old one's memory is reused, never unlocked
    entries_.clear();
    pid_.store(now, std::memory_order_relaxed);
  }
  static bool same_time(const struct timespec &a, const struct timespec &b) {
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
  }
  Entry *find(const struct stat &st, const std::string &tag) {
    for (Entry &e : entries_)
      if (e.dev == st.st_dev && e.ino == st.st_ino && e.tag == tag) return &e;
    return nullptr;
  }
  std::mutex mu_;
  std::vector<Entry> entries_;
  std::atomic<pid_t> pid_{::getpid()};
  std::atomic<unsigned long> scans_{0};
};

// A change this process makes in a folder (creating or linking a
// temporary, a rename, a removal), recorded in FolderScans around it.
class FolderChange {
 public:
  explicit FolderChange(const std::string &dir) : dir_(dir) { ok_ = ::stat(dir_.c_str(), &before_) == 0; }
  ~FolderChange() {
    struct stat after;
    if (ok_ && ::stat(dir_.c_str(), &after) == 0) FolderScans::instance().changed(before_, after);
  }
  FolderChange(const FolderChange &) = delete;
  FolderChange &operator=(const FolderChange &) = delete;

 private:
  std::string dir_;
  struct stat before_;
  bool ok_ = false;
};

// Removes the temporary `n` in the folder `dfd` if nobody holds its lock
// (see the top of this file); a folder of that name (a set's temporary
// folder) is emptied and removed. False when it is still there.
inline bool remove_unlocked_temp(int dfd, const std::string &n) {
  const int fd = ::openat(dfd, n.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return errno == ENOENT;
  struct stat st;
  // The lock decides: a live writer (in another pid namespace, say) holds it.
  if (::fstat(fd, &st) == 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    if (S_ISREG(st.st_mode))
      (void)::unlinkat(dfd, n.c_str(), 0);
    else if (S_ISDIR(st.st_mode))
      remove_flat_folder(dfd, n);
  }
  ::close(fd);
  struct stat left;
  return ::fstatat(dfd, n.c_str(), &left, AT_SYMLINK_NOFOLLOW) != 0;
}

// Removes, in the folder of `target`, the temporaries "<base><tag><pid>-*"
// of `target` left by writers that are gone (see the top of this file).
// Best effort: what cannot be checked or removed stays. The folder is read
// only when it changed since this process last left it clean
// (FolderScans); the scan also notes other destinations' stale
// temporaries, which their own next writer in this process then removes
// without reading the folder.
inline void remove_stale_temps(const std::string &target, const char *tag) {
  const std::string dir = temp_dir_of(target);
  const std::string prefix = temp_base_of(target) + tag;
  struct stat before;
  if (::stat(dir.c_str(), &before) != 0) return;
  FolderScans &scans = FolderScans::instance();
  std::vector<std::string> mine;
  if (scans.clean(before, tag, prefix, mine)) {
    if (mine.empty()) return;
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return scans.forget(before);
    bool all = true;
    {
      const FolderChange change(dir);
      for (const auto &n : mine) all = remove_unlocked_temp(dfd, n) && all;
    }
    ::close(dfd);
    if (!all) scans.forget(before);
    return;
  }
  const std::string t = tag;
  DIR *d = ::opendir(dir.c_str());
  if (!d) return;
  scans.count_scan();
  std::vector<std::string> stale, leftovers;
  // A temporary of a live writer in another process may be left behind
  // later, with no change to the folder: then the folder is not clean.
  bool others = false;
  const long self = static_cast<long>(::getpid());
  while (const dirent *e = ::readdir(d)) {
    const std::string n = e->d_name;
    const size_t at = n.rfind(t);
    if (at == std::string::npos) continue;
    const long pid = temp_pid(n, at + t.size());
    if (pid <= 0 || pid == self) continue;  // not a name we make, or ours
    if (temp_owner_alive(pid)) {
      others = true;
    } else if (n.compare(0, prefix.size(), prefix) == 0) {
      stale.push_back(n);
    } else {
      leftovers.push_back(n);  // another destination's: its next writer judges
    }
  }
  const int dfd = ::dirfd(d);
  // Clean as of now, unless another process's temporary of this
  // destination is still there (a live writer's, or one this process may
  // not remove): then the next writer looks again.
  for (const auto &n : stale)
    if (!remove_unlocked_temp(dfd, n)) others = true;
  ::closedir(d);
  struct stat after;
  if (!others && leftovers.size() <= 64 && ::stat(dir.c_str(), &after) == 0 && after.st_ino == before.st_ino)
    scans.remember(after, tag, std::move(leftovers));
}

}  // namespace zt
