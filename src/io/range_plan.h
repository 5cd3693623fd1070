// How a remote source turns the ranges a reader needs into requests: a cost
// model instead of a fixed gap rule (docs/remote.md, "Ranges under
// latency"). Fetching g bytes that nobody asked for costs g / bandwidth; one
// more request costs about one round trip shared by the requests in flight.
// Two neighbouring ranges are fetched as one when their gap is the cheaper,
// within a bound on the bytes fetched beyond those needed. No network here:
// the transfer feeds the model what it measures.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace zt {

// Round-trip time and one connection's rate, measured from the responses
// as they come (or fixed by the caller's options). Thread-safe without a
// lock (a forked child may find a lock held by a thread it does not
// have): concurrent updates may lose one another, which an average can
// afford.
class LinkModel {
 public:
  // rtt_ms, bytes_per_s: 0 = measured. Until measured, a datacenter link is
  // assumed (kDefaultRtt, kDefaultRate).
  LinkModel(uint32_t rtt_ms, uint64_t bytes_per_s);
  static constexpr double kDefaultRtt = 0.002;   // seconds
  static constexpr double kDefaultRate = 100e6;  // bytes per second, one connection
  // One finished request: seconds from sending it to its first byte, and
  // its body's bytes and seconds. Small bodies say nothing of the rate.
  void observe(double first_byte_s, uint64_t body_bytes, double body_s);
  double rtt_s() const;
  double bytes_per_s() const;
  // The widest gap worth fetching rather than a separate request when
  // `in_flight` requests share the round trip's wait.
  uint64_t worthwhile_gap(uint32_t in_flight) const;
  // The size to cut a large read into for `parallel` connections: the read
  // spread evenly over all of them in as few waves as max_chunk allows, at
  // least 1 MiB, at most max_chunk.
  uint64_t chunk_for(uint64_t len, uint32_t parallel, uint64_t max_chunk) const;
  // The largest request: `fixed` when the caller set one (chunk_bytes, a
  // hard cap), else 32 round trips' worth of one connection's bytes
  // within 8..64 MiB (a request waits a round trip before its body).
  uint64_t chunk_cap(uint64_t fixed) const;
  // The connections for a bulk read of len bytes when the caller left
  // max_parallel to the link: `base` (the default), more when each would
  // still stream for at least kPieceRtts round trips and kPieceSeconds at
  // the measured rate (never on the assumed one), at most `cap`. A
  // request's round trip of waiting is paid once per connection, in
  // parallel, so more connections shorten a load whose pieces are long
  // against it; on a fast near link (loopback, a LAN) the pieces are
  // short and the CPU, not the connections, is the limit. Growth follows
  // the bulk reads seen (observe_bulk): at most twice the last one's
  // connections, and no more than a count past which the throughput did
  // not rise (a link whose total, not each connection, is the limit).
  uint32_t connections_for(uint64_t len, uint32_t base, uint32_t cap) const;
  static constexpr double kPieceRtts = 4;
  static constexpr double kPieceSeconds = 0.25;
  // A bulk read done: its connections, bytes and wall time. A read with
  // more connections than the last that moved less than kBulkGain times
  // its bytes per second caps the connections at the last one's count.
  // Reads under kBulkEvidence bytes say too little (their round trips).
  void observe_bulk(uint32_t connections, uint64_t bytes, double seconds);
  static constexpr double kBulkGain = 1.1;
  static constexpr uint64_t kBulkEvidence = uint64_t{32} << 20;

 private:
  const bool fixed_rtt_, fixed_rate_;
  std::atomic<double> rtt_, rate_;
  std::atomic<bool> rtt_seen_{false}, rate_seen_{false};
  std::atomic<uint32_t> bulk_n_{0}, bulk_cap_{0};
  std::atomic<double> bulk_rate_{0};
};

struct NeededRange {
  uint64_t offset, len;
};

// Ranges fetched as one request: the needed ranges order[first..last]
// (indexes into the caller's list, in file order) and the bytes between.
struct MergedRange {
  uint64_t offset, len;
  size_t first, last;
};

struct MergeLimits {
  uint64_t max_gap = 0;    // no gap wider than this is fetched
  uint64_t max_waste = 0;  // total gap bytes fetched, over all merges
  uint64_t max_len = 0;    // no merged request longer than this (0 = none)
};

// Merges ranges (any order; overlapping ones are never merged) cheapest gap
// first, within the limits. `order` receives the ranges' indexes sorted by
// offset; each result covers a run of it. O(n log n).
std::vector<MergedRange> merge_ranges(const std::vector<NeededRange> &ranges, const MergeLimits &limits,
                                      std::vector<size_t> &order);

// Cuts merged ranges (in file order) into `requests` runs of about equal
// bytes (at least 256 KiB each), each of at most max_parts ranges (more
// runs when that needs it):
// the multi-range requests that carry them. Returns [first, last] of each.
// How many equal pieces each of the large ranges `lens` of one read is cut
// into, for `parallel` connections and pieces of at most max_chunk (at
// least 1 MiB): as many pieces in all as waves of `parallel` requests need
// (one piece per connection when max_chunk allows), shared out so that the
// largest piece is as small as it can be. Cutting each range by a common
// piece size instead leaves a short remainder of every range: more
// requests than connections, and a second wave on a few connections that
// the others wait for. O(pieces log n).
std::vector<uint64_t> apportion_pieces(const std::vector<uint64_t> &lens, uint32_t parallel, uint64_t max_chunk);

std::vector<std::pair<size_t, size_t>> pack_ranges(const std::vector<MergedRange> &ranges, size_t requests,
                                                   size_t max_parts);

}  // namespace zt
