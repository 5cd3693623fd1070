#include "prefetcher.h"

#include <algorithm>
#include <system_error>

#include "manifest/model.h"
#include "platform/memory.h"
#include "platform/process.h"

namespace zt {
namespace {

// Half the physical memory, or no cap where the system does not say. Asked
// once: offer() runs for every component of a file, and sysinfo(2) walks
// kernel state each time (26,000 calls were a third of a large open).
uint64_t memory_cap() {
  static const uint64_t cap = platform::half_physical_memory();
  return cap;
}

}  // namespace

struct Prefetcher::State {
  std::mutex mu;
  std::condition_variable cv;
  std::thread thread;
  // The second opening (one slot of the descriptor budget), or nullptr.
  // Only the thread reads it; it drops it, under mu, when it ends.
  std::unique_ptr<Source> own;
  bool stop = false;
  bool settled = false;  // plan is the manifest's, sorted
  bool done = false;     // the thread has ended (or never started)
  std::vector<ByteRange> plan;
  uint64_t generation = 0;  // bumped when settle() replaces the plan
  size_t next = 0;          // the range under way
  uint64_t pos = 0;         // its next byte
  uint64_t planned = 0;     // bytes offered so far, against the memory cap
  uint64_t plan_end = 0;    // settled: the end of the last range
  uint64_t at = 0;          // settled: every planned byte below it is in

  // Whether the thread has a step to take. Before the manifest is parsed,
  // only a whole step (or a range it will not grow into): offers arrive
  // one component at a time, and waking the thread for each one had it
  // and the parser take turns on the mutex (a 26,000-tensor open took
  // 49 ms instead of 13).
  bool has_step() const {
    if (stop || settled) return true;
    if (next >= plan.size()) return false;
    if (next + 1 < plan.size()) return true;
    const ByteRange &r = plan[next];
    return r.end - std::max(pos, r.begin) >= kStep;
  }
};

Prefetcher::Prefetcher(const Source &file, std::unique_ptr<Source> own, uint64_t window_begin, uint64_t window_end)
    : mapped_(file.data() || !own ? &file : nullptr),
      window_begin_(window_begin),
      window_end_(std::max(window_begin, std::min(window_end, file.size()))),
      owner_pid_(current_process_id()),
      state_(std::make_unique<State>()) {
  state_->own = std::move(own);
  try {
    state_->thread = std::thread([this] { run(); });
  } catch (const std::system_error &) {
    state_->done = true;  // a hint: no thread, no prefetch
  }
}

Prefetcher::~Prefetcher() {
  if (!in_owner_process()) {
    // A forked child: the thread is not here, its mutex may be held by a
    // thread that is not here either, and the std::thread's id may name a
    // thread the child made since. Touch none of it (a few hundred bytes,
    // and the second descriptor if the thread still had it: close-on-exec).
    (void)state_.release();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
  }
  state_->cv.notify_all();
  if (state_->thread.joinable()) state_->thread.join();
  if (state_->own) {  // the thread never ran
    state_->own.reset();
    give_descriptor_slot();
  }
}

bool Prefetcher::in_owner_process() const {
  return current_process_id() == owner_pid_;
}

void Prefetcher::offer(uint64_t begin, uint64_t end) {
  begin = std::max(begin, window_begin_);
  end = std::min(end, window_end_);
  if (begin >= end) return;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    State &s = *state_;
    if (s.settled || s.done) return;
    if (!s.plan.empty() && begin >= s.plan.back().begin && begin <= s.plan.back().end + kMergeGap) {
      if (end <= s.plan.back().end) return;
      const uint64_t grow = end - s.plan.back().end;
      if (s.planned + grow > memory_cap()) return;
      s.planned += grow;
      s.plan.back().end = end;
    } else {
      if (s.planned + (end - begin) > memory_cap()) return;
      s.planned += end - begin;
      s.plan.push_back({begin, end});
    }
    if (!s.has_step()) return;
  }
  state_->cv.notify_all();
}

void Prefetcher::settle(const Manifest &m) {
  std::vector<ByteRange> ranges;
  for (const Object &o : m.objects)
    for (const Component &c : o.components) {
      if (!c.shard.empty()) continue;  // v2: in another file
      const uint64_t begin = std::max(c.offset, window_begin_);
      // An offset + length past 2^64 is damage the decoder recorded; it is
      // cut at the window like any range past the data.
      const uint64_t room = window_end_ - std::min(c.offset, window_end_);
      const uint64_t end = c.length > room ? window_end_ : c.offset + c.length;
      if (begin < end) ranges.push_back({begin, end});
    }
  std::sort(ranges.begin(), ranges.end(), [](const ByteRange &a, const ByteRange &b) { return a.begin < b.begin; });
  std::vector<ByteRange> plan;
  uint64_t planned = 0;
  const uint64_t cap = memory_cap();
  for (const ByteRange &r : ranges) {
    if (!plan.empty() && r.begin <= plan.back().end + kMergeGap) {
      if (r.end <= plan.back().end) continue;
      const uint64_t grow = r.end - plan.back().end;
      if (planned + grow > cap) break;
      planned += grow;
      plan.back().end = r.end;
    } else {
      if (planned + (r.end - r.begin) > cap) break;
      planned += r.end - r.begin;
      plan.push_back(r);
    }
  }
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    State &s = *state_;
    s.plan = std::move(plan);
    s.settled = true;
    ++s.generation;
    s.next = 0;
    s.pos = s.plan.empty() ? window_end_ : s.plan.front().begin;
    s.at = s.plan.empty() ? UINT64_MAX : s.pos;
    s.plan_end = s.plan.empty() ? window_begin_ : s.plan.back().end;
  }
  state_->cv.notify_all();
}

void Prefetcher::run() {
  State &s = *state_;
  std::vector<uint8_t> scratch;
  std::unique_lock<std::mutex> lock(s.mu);
  for (;;) {
    s.cv.wait(lock, [&] { return s.has_step(); });
    if (s.stop || s.next >= s.plan.size()) break;  // stopped, or settled and every range read
    const ByteRange r = s.plan[s.next];
    const uint64_t at = std::max(s.pos, r.begin);
    const uint64_t len = std::min(kStep, r.end - at);
    const uint64_t generation = s.generation;
    lock.unlock();
    const Source &src = mapped_ && (!s.own || !copies_follow_.load(std::memory_order_relaxed)) ? *mapped_ : *s.own;
    // Whatever an earlier load (or a reader ahead of this thread) already
    // brought in costs a mincore call, not a pass over its pages.
    const bool ok = src.likely_cached(at, len) || src.populate(at, len, scratch);
    lock.lock();
    if (!ok) break;
    if (s.generation != generation) continue;  // settle() replaced the plan: it starts over
    // The range may have grown meanwhile (offer() merged the next one in).
    s.pos = at + len;
    if (s.pos >= s.plan[s.next].end && ++s.next < s.plan.size()) s.pos = s.plan[s.next].begin;
    if (s.settled) s.at = s.next < s.plan.size() ? s.pos : UINT64_MAX;
    s.cv.notify_all();
  }
  // The second descriptor goes with the thread, not with the reader.
  std::unique_ptr<Source> own = std::move(s.own);
  lock.unlock();
  if (own) {
    own.reset();
    give_descriptor_slot();
  }
  lock.lock();
  s.done = true;
  s.cv.notify_all();
}

bool Prefetcher::will_reach(uint64_t end) const {
  if (!in_owner_process()) return false;
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->settled && !state_->done && end <= state_->plan_end;
}

void Prefetcher::wait_until(uint64_t end) const {
  if (!in_owner_process()) return;
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [&] { return state_->done || (state_->settled && state_->at >= end); });
}

void prefault_destination(void *dst, size_t len) {
  platform::prefault_for_write(dst, len);
}

}  // namespace zt
