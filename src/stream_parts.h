// The cold ranges of one zt_file_read_many, cut into contiguous parts, one
// per reading thread (Reader::read_many, docs/cold-reads.md). A thread reads
// its part front to back; when it is done it takes the second half of what
// is left of the longest other part and reads that front to back too, so a
// thread the scheduler set aside does not leave its part unread while the
// other one idles. Every index is handed out exactly once. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace zt {

class StreamParts {
 public:
  // Half-open ranges [first, second) of task indices, one per part.
  explicit StreamParts(std::vector<std::pair<size_t, size_t>> parts) : parts_(std::move(parts)) {}
  // The next index for part k, in order within what part k holds;
  // SIZE_MAX when nothing is left to take (the last task of another part
  // is left to its owner, who is on it).
  size_t claim(size_t k) {
    std::lock_guard<std::mutex> lock(mu_);
    auto left = [&](size_t v) { return parts_[v].second - parts_[v].first; };
    if (left(k) == 0) {
      size_t victim = k;
      for (size_t v = 0; v < parts_.size(); ++v)
        if (left(v) > left(victim)) victim = v;
      if (left(victim) < 2) return SIZE_MAX;
      const size_t mid = parts_[victim].first + left(victim) / 2;
      parts_[k] = {mid, parts_[victim].second};
      parts_[victim].second = mid;
    }
    return parts_[k].first++;
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<size_t, size_t>> parts_;
};

}  // namespace zt
