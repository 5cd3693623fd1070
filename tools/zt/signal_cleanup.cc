#include "signal_cleanup.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace ztcli {
namespace {

// A fixed table: the handler may not allocate or lock. A command writes a
// few outputs at a time (a split: one temporary folder).
constexpr int kSlots = 32;
constexpr size_t kNameMax = NAME_MAX + 1;

struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 ready for the handler
  SignalCleanup::Kind kind = SignalCleanup::kOutputFile;
  char dir[PATH_MAX];        // the folder to scan (or to remove, for kTempFolder)
  char prefix[2][kNameMax];  // names to remove in it (kOutputFile)
};
Slot g_slots[kSlots];

bool starts_with(const char *s, const char *p) {
  while (*p)
    if (*s++ != *p++) return false;
  return true;
}

// linux_dirent64, as getdents64(2) fills it.
struct Dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

// Removes the entries of `dir` that start with one of the prefixes (all of
// them when `all`). Raw system calls only: opendir/readdir may allocate.
// Passes repeat while they remove something: unlinking while reading a
// directory may make the reader skip an entry.
void remove_entries(const char *dir, const char (*prefix)[kNameMax], bool all) {
  const int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return;
  alignas(8) char buf[8192];
  for (int pass = 0; pass < 8; ++pass) {
    bool removed = false;
    ::lseek(fd, 0, SEEK_SET);
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        const auto *e = reinterpret_cast<const Dirent64 *>(buf + off);
        off += e->d_reclen;
        const char *name = e->d_name;
        if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
        if (!all && !starts_with(name, prefix[0]) && !starts_with(name, prefix[1])) continue;
        if (::unlinkat(fd, name, 0) == 0) removed = true;
      }
    }
    if (!removed) break;
  }
  ::close(fd);
}

void on_signal(int sig) {
  const int saved = errno;
  for (Slot &s : g_slots) {
    if (s.state.load(std::memory_order_acquire) != 2) continue;
    if (s.kind == SignalCleanup::kTempFolder) {
      remove_entries(s.dir, nullptr, true);
      ::rmdir(s.dir);
    } else {
      remove_entries(s.dir, s.prefix, false);
    }
  }
  errno = saved;
  // The handler was installed with SA_RESETHAND: the default action again,
  // delivered as soon as this handler returns.
  ::raise(sig);
}

bool fits(const std::string &s, size_t room) {
  return s.size() < room;
}

}  // namespace

void install_signal_cleanup() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;  // nohup, background jobs
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    ::sigaction(sig, &sa, nullptr);
  }
}

void SignalCleanup::add(Kind kind, const std::string &target) {
  if (slot_ >= 0) return;
  std::string dir = target, prefix[2];
  if (kind == kOutputFile) {
    const size_t slash = target.rfind('/');
    dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
    const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
    const std::string pid = std::to_string(static_cast<long>(::getpid())) + "-";
    prefix[0] = base + ".zt-tmp-" + pid;  // the library's writer (src/container/sink.h)
    prefix[1] = base + ".zt-export-" + pid;
  }
  if (!fits(dir, PATH_MAX) || !fits(prefix[0], kNameMax) || !fits(prefix[1], kNameMax)) return;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) continue;
    Slot &s = g_slots[i];
    s.kind = kind;
    std::memcpy(s.dir, dir.c_str(), dir.size() + 1);
    for (int k = 0; k < 2; ++k) std::memcpy(s.prefix[k], prefix[k].c_str(), prefix[k].size() + 1);
    s.state.store(2, std::memory_order_release);
    slot_ = i;
    return;
  }
  // Table full: the output is still written safely, only a signal could
  // leave its named temporary (the next writer removes it).
}

SignalCleanup::~SignalCleanup() {
  if (slot_ >= 0) g_slots[slot_].state.store(0, std::memory_order_release);
}

std::string replaced_target(const std::string &out) {
  struct stat st;
  if (::lstat(out.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return out;
  char *real = ::realpath(out.c_str(), nullptr);
  if (!real) return out;  // a dangling link: the writer refuses it
  std::string r = real;
  std::free(real);
  return r;
}

}  // namespace ztcli
