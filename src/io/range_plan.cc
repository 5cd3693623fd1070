#include "io/range_plan.h"

#include <algorithm>
#include <numeric>

namespace zt {

LinkModel::LinkModel(uint32_t rtt_ms, uint64_t bytes_per_s)
    : fixed_rtt_(rtt_ms != 0),
      fixed_rate_(bytes_per_s != 0),
      rtt_(rtt_ms ? rtt_ms / 1000.0 : kDefaultRtt),
      rate_(bytes_per_s ? static_cast<double>(bytes_per_s) : kDefaultRate) {}

void LinkModel::observe(double first_byte_s, uint64_t body_bytes, double body_s) {
  // Moving averages: the first measurement replaces the assumption, later
  // ones move it by a quarter (a slow response does not redefine the link).
  if (!fixed_rtt_ && first_byte_s > 0) {
    rtt_ = rtt_seen_ ? 0.75 * rtt_.load() + 0.25 * first_byte_s : first_byte_s;
    rtt_seen_ = true;
  }
  // Below 256 KiB a body's time is mostly the server's and the scheduler's.
  if (!fixed_rate_ && body_bytes >= (uint64_t{256} << 10) && body_s > 0) {
    const double r = static_cast<double>(body_bytes) / body_s;
    rate_ = rate_seen_ ? 0.75 * rate_.load() + 0.25 * r : r;
    rate_seen_ = true;
  }
}

double LinkModel::rtt_s() const {
  return rtt_.load();
}

double LinkModel::bytes_per_s() const {
  return rate_.load();
}

uint64_t LinkModel::worthwhile_gap(uint32_t in_flight) const {
  // g / rate < rtt / in_flight  <=>  g < rtt * rate / in_flight
  const double g = rtt_s() * bytes_per_s() / std::max<uint32_t>(1, in_flight);
  return g >= 1e15 ? uint64_t{1} << 50 : static_cast<uint64_t>(g);
}

uint64_t LinkModel::chunk_for(uint64_t len, uint32_t parallel, uint64_t max_chunk) const {
  // As few waves of requests over all connections as max_chunk allows, in
  // pieces of equal size: each wave waits one round trip, then all stream
  // at once. Larger pieces would leave connections idle (a 16 MiB read
  // behind 80 ms: 16 x 1 MiB in 0.12 s, 4 x 4 MiB in 0.25 s), and a last
  // short wave would cost a round trip for little.
  constexpr uint64_t kMin = uint64_t{1} << 20;
  const uint64_t p = std::max<uint32_t>(1, parallel);
  const uint64_t cap = std::max(kMin, max_chunk);
  const uint64_t waves = (len + cap * p - 1) / (cap * p);
  const uint64_t pieces = std::max<uint64_t>(1, waves * p);
  return std::min(cap, std::max(kMin, (len + pieces - 1) / pieces));
}

uint64_t LinkModel::chunk_cap(uint64_t fixed) const {
  if (fixed) return fixed;
  // A request is one round trip of waiting and then its body: a body of 32
  // round trips' worth of bytes keeps a connection ~97% busy, so a large
  // load costs a round trip per wave of pieces, not per few MiB. (Pieces
  // are written straight into the readers' buffers: their size costs no
  // memory, only the bytes a failed piece fetches again.)
  constexpr uint64_t kLow = uint64_t{8} << 20, kHigh = uint64_t{64} << 20;
  const double bdp = 32 * rtt_s() * bytes_per_s();
  if (!(bdp < static_cast<double>(kHigh))) return kHigh;
  return std::max(kLow, static_cast<uint64_t>(bdp));
}

uint32_t LinkModel::connections_for(uint64_t len, uint32_t base, uint32_t cap) const {
  base = std::max<uint32_t>(1, std::min(base, cap));
  // An assumed rate says nothing of the link: more connections than the
  // default only on a measured (or given) one.
  if (!fixed_rate_ && !rate_seen_.load()) return base;
  const double piece = bytes_per_s() * std::max(kPieceRtts * rtt_s(), kPieceSeconds);
  const double want = static_cast<double>(len) / std::max(piece, 1.0);
  uint32_t n = want >= cap ? cap : static_cast<uint32_t>(want);
  // Grow while the bulk reads' throughput rises: at most twice the last
  // read's connections, never past a count that gained nothing.
  if (const uint32_t last = bulk_n_.load()) n = std::min<uint32_t>(n, 2 * last);
  if (const uint32_t top = bulk_cap_.load()) n = std::min(n, top);
  return std::max(n, base);
}

void LinkModel::observe_bulk(uint32_t connections, uint64_t bytes, double seconds) {
  if (!(seconds > 0) || bytes < kBulkEvidence || connections == 0) return;
  const double rate = static_cast<double>(bytes) / seconds;
  const uint32_t last = bulk_n_.load();
  if (last && connections > last && rate < kBulkGain * bulk_rate_.load()) bulk_cap_ = last;
  bulk_n_ = connections;
  bulk_rate_ = rate;
}

std::vector<uint64_t> apportion_pieces(const std::vector<uint64_t> &lens, uint32_t parallel, uint64_t max_chunk) {
  constexpr uint64_t kMin = uint64_t{1} << 20;
  const uint64_t cap = std::max(kMin, max_chunk);
  const uint64_t p = std::max<uint32_t>(1, parallel);
  uint64_t total = 0, pieces = 0;
  std::vector<uint64_t> count(lens.size());
  for (size_t i = 0; i < lens.size(); ++i) {
    count[i] = std::max<uint64_t>(1, (lens[i] + cap - 1) / cap);  // no piece over the cap
    total += lens[i];
    pieces += count[i];
  }
  // Waves of p requests, as few as the cap allows; each piece at least
  // 1 MiB (smaller ones cost a round trip for little).
  const uint64_t waves = std::max<uint64_t>(1, (total + cap * p - 1) / (cap * p));
  const uint64_t want = std::min(waves * p, std::max<uint64_t>(1, total / kMin));
  // The largest piece gets cut once more until the pieces are spent.
  auto larger = [&](size_t a, size_t b) {
    return static_cast<double>(lens[a]) / static_cast<double>(count[a]) <
           static_cast<double>(lens[b]) / static_cast<double>(count[b]);
  };
  std::vector<size_t> heap;
  auto can_cut = [&](size_t i) { return lens[i] / (count[i] + 1) >= kMin; };
  for (size_t i = 0; i < lens.size(); ++i)
    if (can_cut(i)) heap.push_back(i);
  std::make_heap(heap.begin(), heap.end(), larger);
  while (pieces < want && !heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), larger);
    const size_t i = heap.back();
    ++count[i];
    ++pieces;
    if (can_cut(i)) {
      std::push_heap(heap.begin(), heap.end(), larger);
    } else {
      heap.pop_back();
    }
  }
  return count;
}

std::vector<MergedRange> merge_ranges(const std::vector<NeededRange> &ranges, const MergeLimits &limits,
                                      std::vector<size_t> &order) {
  const size_t n = ranges.size();
  order.resize(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ranges[a].offset < ranges[b].offset; });
  // Candidate joins of neighbours k, k+1 (in file order), narrowest gap
  // first: the bytes allowed beyond those needed go where they save most
  // requests per byte.
  std::vector<std::pair<uint64_t, size_t>> gaps;
  for (size_t k = 0; k + 1 < n; ++k) {
    const NeededRange &a = ranges[order[k]], &b = ranges[order[k + 1]];
    const uint64_t end = a.offset + a.len;
    if (b.offset < end) continue;  // overlapping: two requests
    const uint64_t gap = b.offset - end;
    if (gap <= limits.max_gap) gaps.emplace_back(gap, k);
  }
  std::sort(gaps.begin(), gaps.end());
  // Runs of joined neighbours: left[k] / right[k] are valid at a run's ends.
  std::vector<size_t> left(n), right(n);
  std::iota(left.begin(), left.end(), size_t{0});
  std::iota(right.begin(), right.end(), size_t{0});
  uint64_t waste = 0;
  for (const auto &[gap, k] : gaps) {
    if (waste + gap > limits.max_waste) break;  // sorted: no later gap fits either
    const size_t lo = left[k], hi = right[k + 1];
    const uint64_t start = ranges[order[lo]].offset;
    const uint64_t end = ranges[order[hi]].offset + ranges[order[hi]].len;
    if (limits.max_len && end - start > limits.max_len) continue;
    waste += gap;
    right[lo] = hi;
    left[hi] = lo;
  }
  std::vector<MergedRange> out;
  for (size_t k = 0; k < n;) {
    const size_t hi = right[k];
    const uint64_t start = ranges[order[k]].offset;
    const uint64_t end = ranges[order[hi]].offset + ranges[order[hi]].len;
    out.push_back({start, end - start, k, hi});
    k = hi + 1;
  }
  return out;
}

std::vector<std::pair<size_t, size_t>> pack_ranges(const std::vector<MergedRange> &ranges, size_t requests,
                                                   size_t max_parts) {
  std::vector<std::pair<size_t, size_t>> out;
  if (ranges.empty()) return out;
  uint64_t total = 0;
  for (const MergedRange &r : ranges) total += r.len;
  // At least 256 KiB a request: below that, more requests only add
  // overhead (they wait the same round trip in parallel).
  const uint64_t target = std::max<uint64_t>(uint64_t{256} << 10, total / std::max<size_t>(1, requests));
  size_t first = 0;
  uint64_t bytes = 0;
  for (size_t k = 0; k < ranges.size(); ++k) {
    bytes += ranges[k].len;
    if (bytes >= target || k - first + 1 >= std::max<size_t>(1, max_parts) || k + 1 == ranges.size()) {
      out.emplace_back(first, k);
      first = k + 1;
      bytes = 0;
    }
  }
  return out;
}

}  // namespace zt
