// What the prefetch thread costs the open that starts it: while the
// manifest is parsed, offer() hands it one component at a time, and each
// offer used to wake it for a step of a few kilobytes. On a file of 26,000
// small tensors the thread and the parser then took turns on the mutex,
// and the open took 49 ms instead of 13 (bench/python_load_bench.py,
// `small`). The thread now takes whole steps (Prefetcher::kStep) until the
// plan is settled; these tests count its steps.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "container/source.h"
#include "manifest/model.h"
#include "prefetcher.h"

namespace {

// A file of `size` bytes that is always "in the page cache": every step the
// thread takes is one likely_cached() call, counted, and nothing is read.
class CountingSource final : public zt::Source {
 public:
  explicit CountingSource(uint64_t size) { size_ = size; }
  void read(uint64_t, size_t len, void *dst) const override { std::memset(dst, 0, len); }
  bool likely_cached(uint64_t, uint64_t) const override {
    steps.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  mutable std::atomic<uint64_t> steps{0};
};

constexpr uint64_t kTensor = 10240;
constexpr uint64_t kTensors = 26000;
constexpr uint64_t kBegin = 8;  // after the header magic

zt::Manifest manifest_of_contiguous_tensors(uint64_t tensors = kTensors) {
  zt::Manifest m;
  for (uint64_t i = 0; i < tensors; ++i) {
    zt::Object o;
    zt::Component c;
    c.offset = kBegin + i * kTensor;
    c.length = kTensor;
    o.components.push_back(c);
    m.objects.push_back(std::move(o));
  }
  return m;
}

// Steps of kStep over `bytes`, once while offered and once more after the
// plan is settled (a settled plan starts over; the steps it repeats find
// their pages cached), plus the partial step at each end.
uint64_t step_bound(uint64_t bytes) {
  return 2 * (bytes / zt::Prefetcher::kStep + 2);
}

// A parser's pace: decoding an object takes about a microsecond, time
// enough for a woken thread to take its step.
void parse_one_object() {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(2);
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

TEST(PrefetchSteps, OffersOfSmallComponentsDoNotWakeTheThreadForEachOne) {
  const uint64_t end = kBegin + kTensors * kTensor;
  CountingSource file(end + 4096);
  const zt::Manifest m = manifest_of_contiguous_tensors();
  {
    zt::Prefetcher p(file, nullptr, kBegin, end);
    for (const zt::Object &o : m.objects) {
      parse_one_object();
      p.offer(o.components[0].offset, o.components[0].offset + kTensor);
    }
    p.settle(m);
    p.wait_until(end);
  }
  // 266 MB: 32 steps of 8 MiB (about 64 counting the settled pass), where
  // a wake per offer made thousands.
  EXPECT_LE(file.steps.load(), step_bound(kTensors * kTensor));
  EXPECT_GE(file.steps.load(), kTensors * kTensor / zt::Prefetcher::kStep);
}

// Before the plan is settled, a range shorter than a step is left for
// later; settling reads it all the same.
TEST(PrefetchSteps, ASettledPlanReadsWhatWasTooShortForAStep) {
  const uint64_t end = kBegin + 4 * kTensor;
  CountingSource file(end);
  const zt::Manifest m = manifest_of_contiguous_tensors(4);
  zt::Prefetcher p(file, nullptr, kBegin, end);
  for (const zt::Object &o : m.objects) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a woken thread takes its step meanwhile
    p.offer(o.components[0].offset, o.components[0].offset + kTensor);
  }
  p.settle(m);
  p.wait_until(end);
  EXPECT_EQ(file.steps.load(), 1u);  // the four tensors, merged into one range
}
