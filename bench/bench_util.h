// Timing, statistics and small file helpers for zt_bench. Every figure the
// harness reports is a median of N runs, and every ratio compares two
// medians measured in the same run (interleaved, so drift hits both).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "ztensor.h"

namespace bench {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// User + system CPU seconds of this process so far.
inline double cpu_s() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <typename F>
double time_once(F &&f) {
  double t = now_s();
  f();
  return now_s() - t;
}

// Before a timed write: no writeback pending (sync(2)), and no replaced
// file of an earlier write still being freed on the library's "zt-release"
// threads (docs/writing-rules.md), whose discards would otherwise land in
// the next timed call, whichever side's it is.
inline void drain_writes() {
  auto releasing = [] {
    bool found = false;
    if (DIR *d = ::opendir("/proc/self/task")) {
      while (dirent *e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        char comm[64] = {0};
        std::string p = std::string("/proc/self/task/") + e->d_name + "/comm";
        if (FILE *f = std::fopen(p.c_str(), "r")) {
          if (std::fgets(comm, sizeof comm, f) && std::strncmp(comm, "zt-release", 10) == 0) found = true;
          std::fclose(f);
        }
      }
      ::closedir(d);
    }
    return found;
  };
  for (int i = 0; i < 30000 && releasing(); ++i) ::usleep(1000);
  ::sync();
}

// Runs both once to warm up, then `reps` interleaved rounds; returns the
// medians (seconds) of a and b. With drain (the write rows), drain_writes
// runs before each timed call, outside its timing: a write that returns leaves
// writeback running, and in an interleaved pair the other side's next call
// would pay for it (which side leaves more varies with the disk: the rows
// swung from 0.5x to 2x between runs without it).
template <typename A, typename B>
std::pair<double, double> paired(int reps, A &&a, B &&b, bool drain = false) {
  a();
  b();
  std::vector<double> ta, tb;
  for (int r = 0; r < reps; ++r) {
    if (drain) drain_writes();
    ta.push_back(time_once(a));
    if (drain) drain_writes();
    tb.push_back(time_once(b));
  }
  return {median(ta), median(tb)};
}

template <typename A, typename B>
std::pair<double, double> paired_writes(int reps, A &&a, B &&b) {
  return paired(reps, std::forward<A>(a), std::forward<B>(b), true);
}

template <typename A>
double timed(int reps, A &&a, bool drain = false) {
  a();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    if (drain) drain_writes();
    t.push_back(time_once(a));
  }
  return median(t);
}

// One side alone, as paired_writes (its baseline measured the same way).
template <typename A>
double timed_writes(int reps, A &&a) {
  return timed(reps, std::forward<A>(a), true);
}

[[noreturn]] inline void die(const std::string &what) {
  std::fprintf(stderr, "zt_bench: %s\n", what.c_str());
  std::exit(2);
}

// Aborts the run on a library failure: a benchmark of a failing call is
// meaningless.
inline void check(zt_status s, const char *what) {
  if (s != ZT_OK) die(std::string(what) + ": " + zt_status_str(s) + ": " + zt_last_error());
}

// A page-aligned buffer, touched once so page faults stay out of timings.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t n, bool touch = true) : n_(n) {
    const size_t align = n >= (size_t{4} << 20) ? (size_t{2} << 20) : 4096;
    p_ = static_cast<uint8_t *>(std::aligned_alloc(align, ((n ? n : 1) + align - 1) / align * align));
    if (!p_) die("out of memory");
    // Large arrays get transparent huge pages, as numpy asks for its own
    // (numpy >= 1.16 madvises allocations of 4 MiB and more).
    if (align > 4096) ::madvise(p_, (n + align - 1) / align * align, MADV_HUGEPAGE);
    if (touch) std::memset(p_, 0, n);
  }
  Buffer(Buffer &&o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(o.n_) {}
  Buffer &operator=(Buffer &&o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~Buffer() { std::free(p_); }
  uint8_t *data() const { return p_; }
  size_t size() const { return n_; }

 private:
  uint8_t *p_ = nullptr;
  size_t n_ = 0;
};

inline uint64_t file_size(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) die("cannot open " + path);
  off_t n = ::lseek(fd, 0, SEEK_END);
  ::close(fd);
  return static_cast<uint64_t>(n);
}

// The baseline read: the whole file into one (pre-touched) buffer.
inline void pread_whole(const std::string &path, uint8_t *dst, size_t n) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) die("cannot open " + path);
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, dst + done, n - done, static_cast<off_t>(done));
    if (r <= 0) die("pread failed on " + path);
    done += static_cast<size_t>(r);
  }
  ::close(fd);
}

}  // namespace bench
