#include "prefetcher.h"

#include <algorithm>
#include <system_error>
#include <vector>

#if !defined(_WIN32)
#include <sys/mman.h>
#include <unistd.h>
#endif
#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23
#endif

namespace zt {
namespace {

// Half the physical memory, or no cap where the system does not say.
uint64_t memory_cap() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2;
#endif
  return UINT64_MAX;
}

}  // namespace

Prefetcher::Prefetcher(const Source &file, std::unique_ptr<Source> own, uint64_t begin, uint64_t end)
    : own_(std::move(own)),
      mapped_(file.data() || !own_ ? &file : nullptr),
      begin_(begin),
      end_(std::max(begin, std::min(end, file.size()))),
      at_(begin) {
  end_ = begin_ + std::min(end_ - begin_, memory_cap());
  if (begin_ == end_) {
    done_ = true;
    return;
  }
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error &) {
    done_ = true;  // a hint: no thread, no prefetch
  }
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Prefetcher::run() {
  std::vector<uint8_t> scratch;
  for (;;) {
    uint64_t at;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_ || at_ >= end_) break;
      at = at_;
    }
    const uint64_t len = std::min(kStep, end_ - at);
    const Source &src = mapped_ && (!own_ || !copies_follow_.load(std::memory_order_relaxed)) ? *mapped_ : *own_;
    // Whatever an earlier load (or a reader ahead of this thread) already
    // brought in costs a mincore call, not a pass over its pages.
    if (!src.likely_cached(at, len) && !src.populate(at, len, scratch)) break;
    {
      std::lock_guard<std::mutex> lock(mu_);
      at_ = at + len;
    }
    cv_.notify_all();
  }
  std::lock_guard<std::mutex> lock(mu_);
  done_ = true;
  cv_.notify_all();
}

bool Prefetcher::will_reach(uint64_t end) const {
  std::lock_guard<std::mutex> lock(mu_);
  return !done_ && end <= end_;
}

void Prefetcher::wait_until(uint64_t end) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_ || at_ >= end; });
}

void prefault_destination(void *dst, size_t len) {
#if defined(MADV_POPULATE_WRITE)
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(dst) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(dst) + len) & ~(page - 1);
  if (end > begin) ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)dst;
  (void)len;
#endif
}

}  // namespace zt
