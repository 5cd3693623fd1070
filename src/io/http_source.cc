#include "io/http_source.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "io/block_cache.h"
#include "io/http_retry.h"
#include "io/http_transfer.h"
#include "io/range_fetch.h"
#include "io/range_plan.h"
#include "io/s3_location.h"
#include "platform/process.h"
#include "platform/system.h"
#include "util/error.h"
#include "util/join_on_exit.h"
#include "ztensor.h"

namespace zt {

std::string redact_url(const std::string &url) {
  return printable(redact_url_text(url));
}

#ifdef ZT_HAVE_CURL

bool http_supported() {
  return true;
}

namespace {

constexpr uint64_t kDirect = uint64_t{1} << 20;  // reads this large bypass the cache

// A remote object as a Source: the open sequence (two round trips), and
// reads planned into requests by the cost model (range_plan.h), through the
// block cache for small ones. The transfer (http_transfer.h) moves the
// bytes, the retry policy (http_retry.h) repeats what failed.
class HttpSource final : public Source {
 public:
  HttpSource(const std::string &url, const UrlSettings &s, uint64_t max_manifest_size)
      : s_(s), max_manifest_(max_manifest_size) {
    shared_ = s_.shared ? s_.shared : make_remote_shared(UINT64_MAX);
    path_ = redact_url(url);
    std::string fetched = url;
    if (is_s3_url(url)) {
      s3_ = std::make_unique<S3Location>(resolve_s3(url, s_));
      fetched = s3_->http_url;
    }
    http_ = starts_with_nocase(fetched, "http://") || starts_with_nocase(fetched, "https://");
    if (!http_ && (!s_.allow_any_scheme || s3_))
      fail(ZT_E_UNSUPPORTED, "'" + path_ + "': only http://, https:// and s3:// URLs are opened (set " +
                                 "allow_any_scheme to let libcurl try others)");
    if (s_.user_agent.empty()) s_.user_agent = std::string("libztensor/") + zt_version_string();
    if (s_.max_parallel == 0) s_.max_parallel = 1;
    if (s_.tail_bytes < 64) s_.tail_bytes = 64;
    if (s_.chunk_bytes && s_.chunk_bytes < kDirect) s_.chunk_bytes = kDirect;
    s_.max_overfetch_percent = std::min<uint32_t>(s_.max_overfetch_percent, 10000);
    net_ = std::make_unique<HttpTransport>(fetched, path_, s_, s3_.get(), shared_);
    cache_ = std::make_unique<BlockCache>(shared_->budget, s_.cache_bytes);
    std::thread warm;
    JoinOnExit joiner{warm};
    if (http_ && s_.warm_bulk && !shared_->forked()) warm = std::thread([this] { warm_bulk(); });
    open_tail();
    prefetch_head_and_manifest();
    if (warm.joinable()) warm.join();
    hold_within_budget();
    needed_ = net_->bytes();  // the open's bytes are its price, not waste
  }

  // In a forked child (issue 37) the budget's and the cache's locks may be
  // held by a parent thread that is not there: both are left alone (the
  // cache leaked, as the parent's handles are).
  ~HttpSource() override {
    if (shared_->forked()) {
      (void)cache_.release();
      return;
    }
    shared_->budget.release(held_charged_);
  }

  IoStats stats() const {
    IoStats st;
    st.requests = net_->requests();
    st.bytes = net_->bytes();
    st.cache_hits = hits_.load();
    st.bytes_needed = needed_.load();
    st.wait_ns = net_->busy_ns();
    return st;
  }

  void read(uint64_t offset, size_t len, void *dst) const override {
    if (len == 0) return;
    if (!held(offset, len)) needed_ += len;  // held bytes were the open's
    fetch(offset, len, static_cast<uint8_t *>(dst));
  }

  // The pieces lie end to end: one range covers them (coalescing the
  // neighbouring blobs of a batch into one request), then each is copied out.
  void read_pieces(uint64_t offset, const Piece *pieces, size_t n) const override {
    uint64_t span = 0, needed = 0;
    for (size_t i = 0; i < n; ++i) {
      span += pieces[i].len;
      if (pieces[i].dst) needed += pieces[i].len;
    }
    if (!held(offset, span)) needed_ += needed;
    std::vector<uint8_t> buf(span);
    fetch(offset, span, buf.data());
    scatter_pieces(buf.data(), pieces, n);
  }

  // Reads of a batch wait on round trips: enough threads to keep the
  // requests of several reads in flight.
  unsigned preferred_threads() const override { return std::min<uint32_t>(8, s_.max_parallel); }

  // Remote strided reads leave every gap to the cost model (read_groups).
  uint64_t slice_gap() const override { return 0; }

  // read_many's blobs as one plan: one wave of requests over the
  // connections, not a round trip per 4 MiB piece on each thread.
  bool plans_bulk_reads() const override { return true; }

  // Ranges of a strided slice (or of all the slices of a plan): merged into
  // requests by the cost model, each fetched as exactly its range (no cache
  // blocks around it: a rank reading its columns of a matrix must not pull
  // in its neighbours' bytes), max_parallel at a time.
  void read_groups(const Group *groups, size_t n) const override {
    if (Plan *p = my_plan()) {
      p->add(groups, n);
      return;
    }
    std::vector<NeededRange> ranges;
    std::vector<size_t> which;  // group of each range
    uint64_t needed = 0;
    for (size_t g = 0; g < n; ++g) {
      uint64_t span = 0;
      for (size_t i = 0; i < groups[g].n; ++i) span += groups[g].pieces[i].len;
      if (span == 0) continue;
      const uint64_t off = groups[g].offset;
      if (held(off, span)) {
        read_pieces(off, groups[g].pieces, groups[g].n);  // counts its own bytes
        continue;
      }
      for (size_t i = 0; i < groups[g].n; ++i)
        if (groups[g].pieces[i].dst) needed += groups[g].pieces[i].len;
      ranges.push_back({off, span});
      which.push_back(g);
    }
    needed_ += needed;
    if (ranges.empty()) return;
    // Many ranges go as multi-range requests where the server takes them
    // (not S3, which answers those with the whole object); the first
    // refusal is remembered and the ranges asked for one by one.
    const bool multi = !s3_ && ranges.size() > 1 && net_->multirange() >= 0;
    try {
      fetch_ranges(*net_, groups, ranges, which, needed, multi);
    } catch (const Error &) {
      if (!multi || net_->multirange() >= 0) throw;
      fetch_ranges(*net_, groups, ranges, which, needed, false);
    }
  }

  // The read_groups calls of this thread between the two are fetched as one
  // plan at end_plan: the model merges across tensors, not only within one.
  void begin_plan() const override {
    if (my_plan()) fail(ZT_E_MISUSE, "'" + path_ + "': a read plan is already open on this thread");
    plans_.push_back(std::make_unique<Plan>());
    plans_.back()->owner = this;
  }
  void end_plan(bool execute) const override {
    auto it = std::find_if(plans_.begin(), plans_.end(), [&](const auto &p) { return p->owner == this; });
    if (it == plans_.end()) return;
    std::unique_ptr<Plan> p = std::move(*it);
    plans_.erase(it);
    if (execute && !p->groups.empty()) read_groups(p->groups.data(), p->groups.size());
  }

 private:
  // Groups kept until end_plan: their pieces copied (the caller's arrays
  // are gone by then; the buffers they point into are not).
  struct Plan {
    const HttpSource *owner = nullptr;
    std::vector<std::unique_ptr<std::vector<Piece>>> pieces;
    std::vector<Group> groups;
    void add(const Group *g, size_t n) {
      for (size_t i = 0; i < n; ++i) {
        pieces.push_back(std::make_unique<std::vector<Piece>>(g[i].pieces, g[i].pieces + g[i].n));
        groups.push_back({g[i].offset, pieces.back()->data(), g[i].n});
      }
    }
  };
  // This thread's open plans, one per source (a set's shards each have one).
  static thread_local std::vector<std::unique_ptr<Plan>> plans_;
  Plan *my_plan() const {
    for (const auto &p : plans_)
      if (p->owner == this) return p.get();
    return nullptr;
  }

  bool held(uint64_t offset, uint64_t len) const {
    return offset >= held_offset_ && offset - held_offset_ + len <= held_.size();
  }

  // [offset, offset+len) from the held tail, the network in parallel chunks
  // (large reads), or the block cache.
  void fetch(uint64_t offset, size_t len, uint8_t *out) const {
    if (held(offset, len)) {  // the tail, or the whole object
      std::memcpy(out, held_.data() + (offset - held_offset_), len);
      return;
    }
    if (len >= kDirect || shared_->forked()) {  // a forked child bypasses the cache (its lock)
      const uint32_t parallel = net_->bulk_parallel(len);
      const uint64_t chunk = net_->link().chunk_for(len, parallel, net_->chunk_cap());
      std::vector<Transfer> ts;
      for (uint64_t off = 0; off < len; off += chunk) {
        Transfer t;
        t.offset = offset + off;
        t.len = std::min<uint64_t>(chunk, len - off);
        t.dst = out + off;
        ts.push_back(std::move(t));
      }
      const auto began = std::chrono::steady_clock::now();
      run_with_retries(*net_, ts, std::max(parallel, s_.max_parallel));
      net_->link().observe_bulk(static_cast<uint32_t>(std::min<uint64_t>(parallel, ts.size())), len,
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
      return;
    }
    read_cached(offset, len, out);
  }

  void read_cached(uint64_t offset, size_t len, uint8_t *out) const {
    constexpr uint64_t kBlock = BlockCache::kBlock;
    const uint64_t first = offset / kBlock, last = (offset + len - 1) / kBlock;
    std::vector<BlockCache::Block> blocks(last - first + 1);
    hits_ += cache_->lookup(first, blocks);
    // Missing blocks, each run of them fetched as one range.
    struct Run {
      uint64_t b, e;
      std::vector<uint8_t> buf;
    };
    std::vector<Run> runs;
    for (uint64_t b = first; b <= last;) {
      if (blocks[b - first]) {
        ++b;
        continue;
      }
      uint64_t e = b;
      while (e + 1 <= last && !blocks[e + 1 - first]) ++e;
      runs.push_back({b, e, std::vector<uint8_t>(std::min(size_, (e + 1) * kBlock) - b * kBlock)});
      b = e + 1;
    }
    if (!runs.empty()) {
      std::vector<Transfer> ts(runs.size());
      for (size_t r = 0; r < runs.size(); ++r) {
        ts[r].offset = runs[r].b * kBlock;
        ts[r].len = runs[r].buf.size();
        ts[r].dst = runs[r].buf.data();
      }
      run_with_retries(*net_, ts);
      for (const Run &r : runs)
        for (uint64_t k = r.b; k <= r.e; ++k) {
          const uint64_t lo = (k - r.b) * kBlock, hi = std::min<uint64_t>(lo + kBlock, r.buf.size());
          blocks[k - first] = std::make_shared<const std::vector<uint8_t>>(r.buf.begin() + static_cast<ptrdiff_t>(lo),
                                                                           r.buf.begin() + static_cast<ptrdiff_t>(hi));
        }
      cache_->insert(first, blocks);
    }
    for (uint64_t b = first; b <= last; ++b) {
      const auto &blk = *blocks[b - first];
      const uint64_t bstart = b * kBlock;
      const uint64_t lo = std::max(offset, bstart), hi = std::min<uint64_t>(offset + len, bstart + blk.size());
      if (hi <= lo)
        fail(ZT_E_INTERNAL, "'" + path_ + "': cache block " + std::to_string(b) + " does not cover the read");
      std::memcpy(out + (lo - offset), blk.data() + (lo - bstart), hi - lo);
    }
  }

  // A whole-file load follows (the prefetch option): its connections are
  // opened now, while the open's requests are in flight, by a one-byte
  // request each on one multi handle, which the pool then hands to the
  // load (the one holding the most connections goes first). One attempt,
  // failures ignored: a connection not warmed connects when the load
  // needs it. max_parallel of them, the connections a load uses at least.
  static constexpr uint64_t kWarmTimeoutMs = 3000;
  void warm_bulk() const {
    const uint32_t n = std::min(s_.max_parallel, HttpTransport::kMaxAdaptiveParallel);
    std::vector<Transfer> ts(n);
    std::vector<uint8_t> bytes(n);
    std::vector<size_t> which(n), again;
    for (uint32_t i = 0; i < n; ++i) {
      ts[i].offset = 0;
      ts[i].len = 1;
      ts[i].clip = true;  // an empty object answers 416: ignored
      ts[i].own_connection = true;
      ts[i].timeout_ms = kWarmTimeoutMs;
      ts[i].dst = &bytes[i];
      which[i] = i;
    }
    Outcome fatal, last;
    try {
      net_->run_once(ts, which, again, fatal, last, n + 2);  // besides the open's own two
    } catch (const Error &) {
    }
  }

  // Round trip 1: the last tail_bytes (the footer, often the manifest, and
  // the object's size, validators and range support).
  void open_tail() {
    Transfer t;
    std::vector<uint8_t> buf;
    if (http_) {
      t.suffix = true;
      t.len = s_.tail_bytes;
      t.allow_whole = s_.max_unranged_bytes > 0;
      t.sink = &buf;  // grows with the bytes that come, up to tail_bytes
    } else {
      size_ = net_->probe_size();
      net_->learn("", "", size_);
      t.offset = size_ > s_.tail_bytes ? size_ - s_.tail_bytes : 0;
      t.len = size_ - t.offset;
      buf.resize(t.len);
      t.dst = buf.data();
      if (t.len == 0) return;
    }
    std::vector<Transfer> ts;
    ts.push_back(std::move(t));
    // The header block, asked in parallel with the tail (it needs no size:
    // "bytes=0-65535" is clipped by a smaller object), so an open whose
    // manifest fits the tail takes one round trip, not two. Its own thread
    // and retries: a failure only means prefetch_head_and_manifest asks again.
    SpeculativeHead head;
    std::thread head_thread;
    if (http_ && s_.speculative_head) head_thread = std::thread([this, &head] { fetch_head(head); });
    struct Joiner {
      std::thread &t;
      ~Joiner() {
        if (t.joinable()) t.join();
      }
    } joiner{head_thread};
    try {
      run_with_retries(*net_, ts);
    } catch (const Error &) {
      if (head_thread.joinable()) head_thread.join();
      const uint64_t total = net_->no_suffix_total();
      if (!http_ || !total) throw;
      // A server without suffix ranges that told the size: the tail by an
      // explicit range (one more round trip, for such servers only).
      buf.clear();
      Transfer e;
      e.offset = total > s_.tail_bytes ? total - s_.tail_bytes : 0;
      e.len = total - e.offset;
      e.sink = &buf;
      ts.clear();
      ts.push_back(std::move(e));
      run_with_retries(*net_, ts);
    }
    Transfer &r = ts[0];
    if (!http_) {
      held_offset_ = r.offset;
      held_ = std::move(buf);
      return;
    }
    if (r.code == 200) {  // the whole object, accepted under max_unranged_bytes
      size_ = r.whole.size();
      held_offset_ = 0;
      held_ = std::move(r.whole);
    } else if (r.code == 416) {
      size_ = 0;
      held_offset_ = 0;
    } else {
      if (r.total_unknown) fail(ZT_E_IO, "'" + path_ + "': the server does not tell the object's size");
      size_ = r.range_total;
      held_offset_ = r.range_start;
      held_ = std::move(buf);  // judge checked: exactly range_end - range_start + 1 bytes
    }
    if (head_thread.joinable()) head_thread.join();  // before learn: judge reads the validators
    keep_head(head, r.etag, r.last_modified);
    net_->learn(r.etag, r.last_modified, size_);
  }

  // The speculative header block of open_tail and what became of it.
  struct SpeculativeHead {
    std::vector<Transfer> ts;
    std::shared_ptr<std::vector<uint8_t>> buf;
    bool ok = false;
  };

  void fetch_head(SpeculativeHead &h) const {
    Transfer t;
    t.offset = 0;
    t.len = BlockCache::kBlock;
    t.clip = true;
    h.buf = std::make_shared<std::vector<uint8_t>>(t.len);
    t.dst = h.buf->data();
    h.ts.push_back(std::move(t));
    try {
      run_with_retries(*net_, h.ts);
      h.ok = true;
    } catch (const Error &) {
      h.ok = false;  // asked again, with If-Match, after the tail
    }
  }

  // The header block is kept only when it is the object the tail came
  // from (same size and validators: the two requests raced, neither had
  // If-Match) and there is more to the object than the tail.
  void keep_head(SpeculativeHead &h, const std::string &etag, const std::string &last_modified) {
    if (!h.ok || held_offset_ == 0 || h.ts.empty()) return;
    const Transfer &t = h.ts[0];
    const uint64_t want = std::min<uint64_t>(BlockCache::kBlock, size_);
    if (t.code != 206 || !t.have_range || t.total_unknown || t.range_total != size_ || t.range_start != 0 ||
        t.range_end + 1 != want || t.received != want || t.etag != etag || t.last_modified != last_modified)
      return;
    h.buf->resize(want);
    cache_->insert(0, {std::const_pointer_cast<const std::vector<uint8_t>>(h.buf)});
    head_cached_ = true;
  }

  // Round trip 2, when the object is larger than the tail: the header block
  // (magic) and, if the footer names a manifest the tail does not hold, the
  // rest of the manifest, fetched in parallel. The container checks happen
  // later, in locate_manifest; a footer that makes no sense is left to it.
  void prefetch_head_and_manifest() {
    if (held_offset_ == 0) return;
    std::vector<Transfer> ts;
    Transfer head;
    head.offset = 0;
    head.len = std::min<uint64_t>(BlockCache::kBlock, size_);
    auto head_buf = std::make_shared<std::vector<uint8_t>>(head.len);
    head.dst = head_buf->data();
    if (!head_cached_) ts.push_back(std::move(head));
    const uint64_t mstart = manifest_start();
    // The footer's claim alone sizes this range: the buffer grows as its
    // bytes arrive (bounded by max_manifest_size), never zero-filled ahead.
    std::vector<uint8_t> extra;
    if (mstart < held_offset_) {
      Transfer m;
      m.offset = mstart;
      m.len = held_offset_ - mstart;
      m.sink = &extra;
      ts.push_back(std::move(m));
    }
    if (ts.empty()) return;
    run_with_retries(*net_, ts);
    if (!head_cached_) cache_->insert(0, {std::const_pointer_cast<const std::vector<uint8_t>>(head_buf)});
    if (!extra.empty()) {
      extra.insert(extra.end(), held_.begin(), held_.end());
      held_ = std::move(extra);
      held_offset_ = mstart;
    }
  }

  // Where the manifest starts, by the footer in the held bytes (v2: offset,
  // length, ...; v1: ...size, "ZTEN1000"; v0: ...size), or held_offset_ when it says nothing
  // usable.
  uint64_t manifest_start() const {
    if (held_.size() < 16) return held_offset_;
    const uint8_t *end = held_.data() + held_.size();
    auto le64 = [](const uint8_t *p) {
      uint64_t v = 0;
      for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
      return v;
    };
    // v2 (src/v2/footer.h): the 40-byte footer names the manifest's offset
    // and length outright.
    static const uint8_t kV2[8] = {0x89, 'Z', 'T', '2', 0x0d, 0x0a, 0x1a, 0x0a};
    if (held_.size() >= 40 && std::memcmp(end - 8, kV2, 8) == 0) {
      const uint64_t off = le64(end - 40), len = le64(end - 32);
      if (len != 0 && len <= max_manifest_ && off < size_ && len <= size_ - off) return off;
      return held_offset_;
    }
    const bool v1 = std::memcmp(end - 8, "ZTEN1000", 8) == 0;
    const uint64_t msize = v1 ? le64(end - 16) : le64(end - 8);
    const uint64_t fixed = v1 ? 16 : 8;
    if (msize <= max_manifest_ && size_ >= fixed + 8 && msize <= size_ - fixed - 8) return size_ - fixed - msize;
    return held_offset_;
  }

  // The held bytes count against the shared budget. When they do not fit,
  // only the manifest and footer stay (the reader needs them; its other
  // bytes are fetched again when read).
  void hold_within_budget() {
    if (shared_->budget.charge(held_.size())) {
      held_charged_ = held_.size();
      return;
    }
    const uint64_t m = std::max(manifest_start(), held_offset_);
    if (m > held_offset_ && m - held_offset_ <= held_.size()) {
      held_.erase(held_.begin(), held_.begin() + static_cast<ptrdiff_t>(m - held_offset_));
      held_.shrink_to_fit();
      held_offset_ = m;
    }
    shared_->budget.force_charge(held_.size());
    held_charged_ = held_.size();
  }

  UrlSettings s_;
  std::unique_ptr<S3Location> s3_;  // set for s3:// URLs
  const uint64_t max_manifest_;
  bool http_ = true;
  // The budget and connection pool: the set's, or this source's own
  // (unbounded budget: cache_bytes alone bounds a lone file).
  std::shared_ptr<RemoteShared> shared_;
  std::unique_ptr<HttpTransport> net_;
  // Bytes held since open: the tail read (footer and manifest), or the
  // whole object when a server without ranges was accepted.
  std::vector<uint8_t> held_;
  uint64_t held_offset_ = 0;
  uint64_t held_charged_ = 0;
  bool head_cached_ = false;  // the speculative header block came with the tail
  std::unique_ptr<BlockCache> cache_;
  mutable std::atomic<uint64_t> hits_{0}, needed_{0};
};

thread_local std::vector<std::unique_ptr<HttpSource::Plan>> HttpSource::plans_;

}  // namespace

std::unique_ptr<Source> open_http_source(const std::string &url, const UrlSettings &settings,
                                         uint64_t max_manifest_size) {
  return std::make_unique<HttpSource>(url, settings, max_manifest_size);
}

IoStats http_stats(const Source &src) {
  if (auto *h = dynamic_cast<const HttpSource *>(&src)) return h->stats();
  return {};
}

void trim_idle_connections(RemoteShared &shared, size_t keep) {
  if (shared.forked()) return;  // the parent's handles: never touched (issue 37)
  std::lock_guard<std::mutex> lock(shared.pool_mu);
  while (shared.idle_multi.size() > keep) {
    curl_multi_cleanup(shared.idle_multi.front().multi);  // closes its connections: the fewest first
    shared.idle_multi.erase(shared.idle_multi.begin());
  }
}

void warm_connections(const std::string &url, const UrlSettings &settings, unsigned n) {
  if (!settings.shared || n == 0) return;
  UrlSettings s = settings;
  if (s.user_agent.empty()) s.user_agent = std::string("libztensor/") + zt_version_string();
  if (s.max_parallel == 0) s.max_parallel = 1;
  s.retries = 0;  // a failure costs nothing: the shards connect as they would have
  std::unique_ptr<S3Location> s3;
  std::string fetched = url;
  try {
    if (is_s3_url(url)) {
      s3 = std::make_unique<S3Location>(resolve_s3(url, s));
      fetched = s3->http_url;
    }
    if (!starts_with_nocase(fetched, "http://") && !starts_with_nocase(fetched, "https://")) return;
  } catch (const Error &) {
    return;
  }
  const std::string path = redact_url(url);
  // One request per thread: each runs on its own multi handle, which goes
  // back to the pool holding its connection for a shard's request.
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < n; ++i)
    threads.emplace_back([&] {
      try {
        UrlSettings mine = s;  // the transport keeps a reference it may adjust
        HttpTransport net(fetched, path, mine, s3.get(), settings.shared);
        std::vector<Transfer> ts(1);
        ts[0].offset = 0;
        ts[0].len = 1;
        ts[0].clip = true;  // an empty object answers 416: ignored
        uint8_t byte = 0;
        ts[0].dst = &byte;
        run_with_retries(net, ts);
      } catch (const Error &) {
      }
    });
  for (std::thread &t : threads) t.join();
}

#else  // no libcurl

// Nothing remote can be opened, so a set has nothing to share; an empty
// budget object keeps zt_open_set_url's path the same in both builds.
struct RemoteShared {};

std::shared_ptr<RemoteShared> make_remote_shared(uint64_t) {
  return std::make_shared<RemoteShared>();
}

bool http_supported() {
  return false;
}

std::unique_ptr<Source> open_http_source(const std::string &url, const UrlSettings &, uint64_t) {
  if (platform::is_windows())
    fail(ZT_E_UNSUPPORTED,
         "'" + redact_url(url) +
             "': HTTP(S) reads are Linux-only for now: this Windows libztensor was built without libcurl "
             "(docs/cross.md, \"Windows\")");
  fail(ZT_E_UNSUPPORTED, "'" + redact_url(url) + "': this libztensor was built without libcurl (meson -Dcurl=enabled)");
}

IoStats http_stats(const Source &) {
  return {};
}

void warm_connections(const std::string &, const UrlSettings &, unsigned) {}

void trim_idle_connections(RemoteShared &, size_t) {}

#endif

}  // namespace zt
