// Canonical rule 3 (spec §6.3): parts whose bytes are identical share one
// blob. Candidates come from an index of (length, digest) keys; sharing is
// decided on the bytes themselves (same_bytes), never on the digest alone.
#include <algorithm>
#include <cstring>
#include <vector>

#include "v2/v2_writer.h"

namespace zt::v2 {
namespace {

// The bytes of two candidate blobs are compared a buffer at a time.
constexpr size_t kCompareChunk = size_t{1} << 20;

}  // namespace

size_t Writer::ContentIndex::find(uint64_t key) const {
  if (slots_.empty()) return SIZE_MAX;
  const size_t mask = slots_.size() - 1;
  for (size_t i = slot(key);; i = (i + 1) & mask) {
    if (slots_[i].second == SIZE_MAX) return SIZE_MAX;
    if (slots_[i].first == key) return slots_[i].second;
  }
}

size_t Writer::ContentIndex::insert(uint64_t key, size_t blob) {
  if ((used_ + 1) * 2 > slots_.size()) {  // at most half full
    std::vector<std::pair<uint64_t, size_t>> old(std::max<size_t>(64, slots_.size() * 2), {0, SIZE_MAX});
    old.swap(slots_);
    --shift_;
    if (old.empty()) shift_ = 64 - 6;
    used_ = 0;
    for (const auto &e : old)
      if (e.second != SIZE_MAX) insert(e.first, e.second);
  }
  const size_t mask = slots_.size() - 1;
  for (size_t i = slot(key);; i = (i + 1) & mask) {
    if (slots_[i].second == SIZE_MAX) {
      slots_[i] = {key, blob};
      ++used_;
      return SIZE_MAX;
    }
    if (slots_[i].first == key) return slots_[i].second;
  }
}

bool Writer::same_bytes(uint64_t a, uint64_t b, uint64_t len, const uint8_t *mem) {
  std::vector<uint8_t> x(static_cast<size_t>(std::min<uint64_t>(len, kCompareChunk)));
  std::vector<uint8_t> y(mem ? 0 : x.size());
  for (uint64_t done = 0; done < len;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(len - done, kCompareChunk));
    file_.read(a + done, x.data(), n);
    if (mem) {
      if (std::memcmp(x.data(), mem + done, n) != 0) return false;
    } else {
      file_.read(b + done, y.data(), n);
      if (std::memcmp(x.data(), y.data(), n) != 0) return false;
    }
    done += n;
  }
  return true;
}

}  // namespace zt::v2
