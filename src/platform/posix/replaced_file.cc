#include "platform/replaced_file.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <thread>

namespace zt {
namespace {

// Static storage, trivially destructible: a release thread still running at
// exit touches nothing that has been destroyed. The library is linked with
// -z nodelete, so its code stays mapped after a dlclose as well.
std::atomic<int> g_in_flight{0};

// A forked child has none of the parent's release threads: it starts with
// none in flight (in_flight() would otherwise never reach 0 there).
void none_in_flight() {
  g_in_flight.store(0, std::memory_order_relaxed);
}
[[maybe_unused]] const int g_fork_handler = ::pthread_atfork(nullptr, nullptr, none_in_flight);

}  // namespace

ReplacedFile::ReplacedFile(const std::string &path) noexcept {
#ifdef O_PATH
  int fd = ::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    // A file with other links is not freed by the rename: nothing to defer.
    ::close(fd);
    return;
  }
  fd_ = fd;
  size_ = static_cast<uint64_t>(st.st_size);
  struct statvfs fs;
  if (::fstatvfs(fd, &fs) == 0) free_bytes_ = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
#else
  (void)path;
#endif
}

ReplacedFile::~ReplacedFile() {
  if (fd_ >= 0) ::close(fd_);
}

int ReplacedFile::in_flight() {
  return g_in_flight.load(std::memory_order_acquire);
}

void ReplacedFile::release() noexcept {
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  if (worth_deferring(size_, free_bytes_)) {
    if (g_in_flight.fetch_add(1, std::memory_order_acq_rel) < kMaxInFlight) {
      try {
        // Named for ps/top, and for callers (a benchmark) that wait for it.
        std::thread([fd] {
#ifdef __linux__
          (void)::pthread_setname_np(::pthread_self(), "zt-release");
#endif
          ::close(fd);
          g_in_flight.fetch_sub(1, std::memory_order_acq_rel);
        }).detach();
        background_ = true;
        return;
      } catch (...) {
        // No thread (or no memory for one) to be had: freed here, below.
      }
    }
    g_in_flight.fetch_sub(1, std::memory_order_acq_rel);
  }
  ::close(fd);
}

}  // namespace zt
