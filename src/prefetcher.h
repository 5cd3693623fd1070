// The `prefetch` open option: one background thread reads the bytes a
// file's components cover into the page cache in file order, for a caller
// that said at open that it will read most of the file. The disk then
// streams while the manifest is parsed (a 26 000-tensor manifest takes tens
// of milliseconds of CPU, during which a cold open otherwise leaves the
// disk idle) and ahead of a loader that touches mapped tensors in name
// order, which is not file order (docs/cold-reads.md).
//
// Only what the manifest says the file uses is read: bytes between blobs
// (a sparse file's holes, gigabytes a hostile file leaves unreferenced)
// never are (issue 37).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "container/source.h"

namespace zt {

struct Manifest;

struct ByteRange {
  uint64_t begin;
  uint64_t end;
};

class Prefetcher {
 public:
  // Starts the thread at once; it reads the ranges offer() and settle()
  // give it, each inside [window_begin, window_end) (the data region: a
  // range past it is cut). A mapped file is populated through its own map
  // (its views then find their pages mapped) until copies_follow();
  // otherwise, and from then on, through `own`, its own opening
  // (Source::reopen: its own readahead state, so the reader's reads are not
  // taken for seeks). `own` holds one slot of the descriptor budget
  // (take_descriptor_slot), given back with the descriptor when the thread
  // ends; nullptr reads through `file` itself. `file` must outlive this
  // object.
  Prefetcher(const Source &file, std::unique_ptr<Source> own, uint64_t window_begin, uint64_t window_end);
  // Stops after the step under way (one step: milliseconds) and joins. In
  // a forked child, where the thread does not exist, leaves its state
  // alone (src/platform/process.h).
  ~Prefetcher();
  Prefetcher(const Prefetcher &) = delete;
  Prefetcher &operator=(const Prefetcher &) = delete;

  // While the manifest is parsed: the range a just-decoded component
  // covers. Read in the order offered, merged with the previous one when
  // they lie within kMergeGap of each other.
  void offer(uint64_t begin, uint64_t end);
  // The manifest is parsed: the ranges of every component of `m`, sorted
  // and merged (kMergeGap), become the thread's plan, read in file order
  // (steps offer() already brought in are found cached and skipped). At
  // most half the machine's physical memory is planned: more would evict
  // its own beginning before anyone read it. The thread ends after the
  // last range.
  void settle(const Manifest &m);

  // Whether the thread is still going and will reach `end`: a reader of a
  // cold range below it waits for it (wait_until) instead of reading the
  // range itself. Reader::read_many then copies behind this one stream,
  // where two streams of its own plus this one took turns on the disk.
  // False in a forked child.
  bool will_reach(uint64_t end) const;
  // Says that copies (Reader::read_many) follow this thread: mapping the
  // pages into the reader's map is then work nobody uses (and a bigger map
  // to tear down at close), so later steps go through `own`.
  void copies_follow() const { copies_follow_.store(true, std::memory_order_relaxed); }
  // Blocks until every planned byte below `end` was read (or found
  // cached), or the thread stopped (then the caller's own read does the
  // work, and reports any error). Returns at once in a forked child.
  void wait_until(uint64_t end) const;

  static constexpr uint64_t kStep = uint64_t{8} << 20;
  // Ranges closer than this are read as one: a few pages of padding cost
  // less than a second request (the kernel's readahead reads them anyway).
  static constexpr uint64_t kMergeGap = uint64_t{256} << 10;

 private:
  struct State;
  void run();
  bool in_owner_process() const;

  const Source *mapped_;  // the file when it is read through itself (mapped, or no `own`)
  mutable std::atomic<bool> copies_follow_{false};
  const uint64_t window_begin_;
  const uint64_t window_end_;
  const unsigned long owner_pid_;
  // Everything the thread shares, on the heap: a forked child leaks it
  // rather than destroy a mutex, condition variable or thread that belong
  // to the parent's threads.
  std::unique_ptr<State> state_;
};

// Faults in the whole pages inside [dst, dst+len) for writing (Linux:
// MADV_POPULATE_WRITE; nothing elsewhere, or where the advice is unknown).
// The contents do not change. A copy that waits for the prefetch thread
// does it first, so new destination memory (a loader's fresh buffer) is
// allocated while the disk is still busy, not after.
void prefault_destination(void *dst, size_t len);

}  // namespace zt
