// The `prefetch` open option: one background thread reads a file's data into
// the page cache in file order, for a caller that said at open that it will
// read most of the file. The disk then streams while the manifest is parsed
// (a 26 000-tensor manifest takes tens of milliseconds of CPU, during which
// a cold open otherwise leaves the disk idle) and ahead of a loader that
// touches mapped tensors in name order, which is not file order
// (docs/cold-reads.md).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "container/source.h"

namespace zt {

class Prefetcher {
 public:
  // Reads [begin, end) of `file` in steps of kStep bytes, in order; a step
  // whose pages are already cached is skipped. A mapped file is populated
  // through its own map (its views then find their pages mapped) until
  // copies_follow(); otherwise, and from then on, through `own`, its own
  // opening (Source::reopen: its own readahead state, so the reader's reads
  // are not taken for seeks). `file` must outlive this object. Starts at
  // once. At most half the machine's physical memory is read: more would
  // evict its own beginning before anyone read it.
  Prefetcher(const Source &file, std::unique_ptr<Source> own, uint64_t begin, uint64_t end);
  // Stops after the step under way (one step: milliseconds) and joins.
  ~Prefetcher();
  Prefetcher(const Prefetcher &) = delete;
  Prefetcher &operator=(const Prefetcher &) = delete;

  // Whether the thread is still going and will reach `end`: a reader of a
  // cold range below it waits for it (wait_until) instead of reading the
  // range itself. Reader::read_many then copies behind this one stream,
  // where two streams of its own plus this one took turns on the disk.
  bool will_reach(uint64_t end) const;
  // Says that copies (Reader::read_many) follow this thread: mapping the
  // pages into the reader's map is then work nobody uses (and a bigger map
  // to tear down at close), so later steps go through `own`.
  void copies_follow() const { copies_follow_.store(true, std::memory_order_relaxed); }
  // Blocks until every byte below `end` was read (or found cached), or the
  // thread stopped (then the caller's own read does the work, and reports
  // any error).
  void wait_until(uint64_t end) const;

  static constexpr uint64_t kStep = uint64_t{8} << 20;

 private:
  void run();

  std::unique_ptr<Source> own_;
  const Source *mapped_;  // the file when it is mapped, else nullptr
  mutable std::atomic<bool> copies_follow_{false};
  uint64_t begin_;
  uint64_t end_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool stop_ = false;
  uint64_t at_;        // everything in [begin_, at_) was read or found cached
  bool done_ = false;  // the thread has ended (or never started)
  std::thread thread_;
};

// Faults in the whole pages inside [dst, dst+len) for writing (Linux:
// MADV_POPULATE_WRITE; nothing elsewhere, or where the advice is unknown).
// The contents do not change. A copy that waits for the prefetch thread
// does it first, so new destination memory (a loader's fresh buffer) is
// allocated while the disk is still busy, not after.
void prefault_destination(void *dst, size_t len);

}  // namespace zt
