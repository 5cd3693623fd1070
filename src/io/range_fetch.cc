// The execution of a read plan: needed ranges merged by the cost model
// (range_plan.h) into requests, single or multi-range, and their bytes
// scattered into the readers' buffers.
#include "io/range_fetch.h"

#ifdef ZT_HAVE_CURL

#include <algorithm>
#include <chrono>
#include <cstring>

#include "io/http_retry.h"

namespace zt {

namespace {
constexpr uint64_t kDirect = uint64_t{1} << 20;  // ranges this large are cut into pieces, not packed
}  // namespace

void scatter_pieces(const uint8_t *src, const Source::Piece *pieces, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (pieces[i].dst && pieces[i].len) std::memcpy(pieces[i].dst, src, pieces[i].len);
    src += pieces[i].len;
  }
}

// The cost model at work (docs/remote.md, "Ranges under latency"): a gap
// g is worth fetching when g / rate < rtt / in flight; never more than
// max_overfetch_percent of the needed bytes in gaps, never a request
// longer than chunk_bytes. With multi-range requests, another range
// costs a part header (~100 bytes), not a round trip: only gaps smaller
// than kPartCost are fetched, and the ranges are packed into about
// max_parallel requests of up to kMaxParts ranges.
void fetch_ranges(const HttpTransport &net, const Source::Group *groups, const std::vector<NeededRange> &ranges,
                  const std::vector<size_t> &which, uint64_t needed, bool multi) {
  const UrlSettings &s = net.settings();
  constexpr uint64_t kPartCost = 256;
  // Apache answers more than 200 ranges (its default MaxRanges) with the
  // whole object, which would cost the multi-range requests for good; 200
  // ranges are ~4.5 KB of Range header, within nginx's 8 KiB line.
  constexpr size_t kMaxParts = 200;
  MergeLimits lim;
  lim.max_gap = net.link().worthwhile_gap(std::min<uint64_t>(s.max_parallel, ranges.size()));
  if (multi) lim.max_gap = std::min(lim.max_gap, kPartCost);
  lim.max_waste = needed / 100 * s.max_overfetch_percent + needed % 100 * s.max_overfetch_percent / 100;
  lim.max_len = 0;  // no cap: a large merged range is cut into pieces below, within chunk_cap
  std::vector<size_t> order;
  const std::vector<MergedRange> merged = merge_ranges(ranges, lim, order);
  // Small merged ranges are received into a buffer of their own and
  // scattered after; large ones (a row split's block, a whole tensor, a
  // run of tensors) go straight into the readers' buffers, their gaps
  // skipped as they arrive, so a plan of any size holds no copy of it.
  std::vector<std::vector<uint8_t>> bufs(merged.size());
  std::vector<uint8_t *> dsts(merged.size());
  uint64_t large = 0;
  for (size_t k = 0; k < merged.size(); ++k) {
    const MergedRange &m = merged[k];
    if (m.len >= kDirect) {
      large += m.len;
      continue;
    }
    const Source::Group &only = groups[which[order[m.first]]];
    if (m.first == m.last && only.n == 1) {
      dsts[k] = static_cast<uint8_t *>(only.pieces[0].dst);
    } else {
      bufs[k].resize(m.len);
      dsts[k] = bufs[k].data();
    }
  }
  // Large ranges are cut into pieces spread over the connections, all in
  // the same wave as the small ones: as many pieces as connections (or
  // waves of them), shared out among the ranges by their sizes.
  std::vector<Transfer> ts;
  std::vector<MergedRange> small;
  std::vector<uint8_t *> small_dsts;
  const uint32_t parallel = net.bulk_parallel(large);
  std::vector<uint64_t> large_lens;
  for (const MergedRange &m : merged)
    if (m.len >= kDirect) large_lens.push_back(m.len);
  const std::vector<uint64_t> counts = apportion_pieces(large_lens, parallel, net.chunk_cap());
  size_t nth_large = 0;
  std::vector<Source::Piece> flat;
  for (size_t k = 0; k < merged.size(); ++k) {
    const MergedRange &m = merged[k];
    if (m.len < kDirect) {
      small.push_back(m);
      small_dsts.push_back(dsts[k]);
      continue;
    }
    const uint64_t pieces = counts[nth_large++];
    const uint64_t piece = (m.len + pieces - 1) / pieces;
    flat.clear();
    uint64_t pos = m.offset;
    for (size_t j = m.first; j <= m.last; ++j) {
      const Source::Group &grp = groups[which[order[j]]];
      if (grp.offset > pos) flat.push_back({nullptr, static_cast<size_t>(grp.offset - pos)});
      flat.insert(flat.end(), grp.pieces, grp.pieces + grp.n);
      pos = grp.offset + ranges[order[j]].len;
    }
    size_t at = 0;
    uint64_t used = 0;  // of flat[at]
    for (uint64_t off = 0; off < m.len; off += piece) {
      Transfer t;
      t.offset = m.offset + off;
      t.len = std::min<uint64_t>(piece, m.len - off);
      for (uint64_t want = t.len; want;) {
        const Source::Piece &p = flat[at];
        const uint64_t k = std::min<uint64_t>(p.len - used, want);
        if (k) t.scatter.push_back({p.dst ? static_cast<uint8_t *>(p.dst) + used : nullptr, static_cast<size_t>(k)});
        want -= k;
        used += k;
        if (used == p.len) {
          ++at;
          used = 0;
        }
      }
      if (t.scatter.size() == 1 && t.scatter[0].dst) {  // one buffer: written directly
        t.dst = static_cast<uint8_t *>(t.scatter[0].dst);
        t.scatter.clear();
      }
      ts.push_back(std::move(t));
    }
  }
  if (multi && small.size() > 1) {
    for (const auto &[a, b] : pack_ranges(small, s.max_parallel, kMaxParts)) {
      Transfer t;
      if (a == b) {
        t.offset = small[a].offset;
        t.len = small[a].len;
        t.dst = small_dsts[a];
      } else {
        for (size_t k = a; k <= b; ++k) {
          t.parts.push_back({small[k].offset, small[k].len, small_dsts[k]});
          t.len += small[k].len;
        }
        t.offset = small[a].offset;
      }
      ts.push_back(std::move(t));
    }
  } else {
    for (size_t k = 0; k < small.size(); ++k) {
      Transfer t;
      t.offset = small[k].offset;
      t.len = small[k].len;
      t.dst = small_dsts[k];
      ts.push_back(std::move(t));
    }
  }
  const auto began = std::chrono::steady_clock::now();
  run_with_retries(net, ts, std::max<uint32_t>(parallel, s.max_parallel));
  uint64_t pieces = 0;
  for (uint64_t c : counts) pieces += c;
  if (large)
    net.link().observe_bulk(static_cast<uint32_t>(std::min<uint64_t>(parallel, pieces)), large,
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
  for (size_t k = 0; k < merged.size(); ++k) {
    if (bufs[k].empty()) continue;
    for (size_t j = merged[k].first; j <= merged[k].last; ++j) {
      const Source::Group &grp = groups[which[order[j]]];
      scatter_pieces(bufs[k].data() + (grp.offset - merged[k].offset), grp.pieces, grp.n);
    }
  }
}

}  // namespace zt

#endif  // ZT_HAVE_CURL
