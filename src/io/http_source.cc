#include "io/http_source.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <list>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "io/s3_location.h"
#include "platform/process.h"
#include "util/error.h"
#include "ztensor.h"

#ifdef ZT_HAVE_CURL
#include <curl/curl.h>
#endif

namespace zt {

std::string redact_url(const std::string &url) {
  return printable(redact_url_text(url));
}

#ifdef ZT_HAVE_CURL

bool http_supported() {
  return true;
}

// Idle easy handles, kept for their live connections; freed with the last
// source sharing them, so a constructor that throws (a failed open) frees
// them too.
//
// Fork (issue 37): a child inherits the idle handles, whose connections are
// the parent's sockets (used from two processes, or closed with a TLS
// close_notify, they break the parent's stream), and the locks, which a
// thread that is not in the child may hold. A source in a forked child
// touches neither: each transfer gets a handle of its own, cleaned up after
// it; reads bypass the block cache (its lock) and the budget; the parent's
// handles are leaked, never closed.
struct RemoteShared {
  explicit RemoteShared(uint64_t b) : budget(b) {}
  ~RemoteShared() {
    if (forked()) return;
    for (CURL *h : idle) curl_easy_cleanup(h);
  }
  bool forked() const { return current_process_id() != pid; }
  const unsigned long pid = current_process_id();
  // Takes n bytes of the budget; false (nothing taken) when they do not fit.
  bool charge(uint64_t n) {
    std::lock_guard<std::mutex> lock(mu);
    if (used + n > budget) return false;
    used += n;
    return true;
  }
  void force_charge(uint64_t n) {
    std::lock_guard<std::mutex> lock(mu);
    used += n;
  }
  void release(uint64_t n) {
    std::lock_guard<std::mutex> lock(mu);
    used -= std::min(used, n);
  }
  const uint64_t budget;
  std::mutex mu;
  uint64_t used = 0;
  std::mutex pool_mu;
  std::vector<CURL *> idle;
};

std::shared_ptr<RemoteShared> make_remote_shared(uint64_t budget_bytes) {
  return std::make_shared<RemoteShared>(budget_bytes);
}

namespace {

constexpr uint64_t kBlock = uint64_t{64} << 10;     // cache granularity
constexpr uint64_t kDirect = uint64_t{1} << 20;     // reads this large bypass the cache
constexpr uint64_t kChunk = uint64_t{8} << 20;      // one request of a large read
constexpr size_t kMaxErrorBody = size_t{64} << 10;  // an error page we skip
constexpr size_t kKeptErrorBody = size_t{8} << 10;  // of which we keep (S3's error XML)

bool starts_with_nocase(const std::string &s, const char *prefix) {
  size_t n = std::strlen(prefix);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// One ranged GET (or, for the first request, a suffix range whose start is
// learned from Content-Range). Filled by libcurl's callbacks.
struct Transfer {
  // Request
  uint64_t offset = 0;       // absolute start; unused for a suffix request
  uint64_t len = 0;          // bytes wanted (suffix length for a suffix request)
  bool suffix = false;       // "bytes=-len"
  bool allow_whole = false;  // a 200 with the whole object is accepted (first request)
  uint8_t *dst = nullptr;    // len bytes (suffix: len bytes of room)
  // Instead of dst: bytes are appended as they arrive, so a range whose
  // length only a footer claims is never zero-filled ahead of its bytes.
  std::vector<uint8_t> *sink = nullptr;
  // Response
  long code = 0;
  bool have_range = false;
  uint64_t range_start = 0, range_end = 0, range_total = 0;
  bool total_unknown = false;
  std::string etag, last_modified;
  std::string bucket_region;  // S3's x-amz-bucket-region
  uint64_t header_bytes = 0;
  uint64_t received = 0;
  std::vector<uint8_t> whole;  // a 200 body when allowed
  uint64_t discarded = 0;      // body bytes of an error response
  std::string error_body;      // its first kKeptErrorBody bytes (S3's error XML)
  // Why a callback stopped the transfer (not retried).
  zt_status abort_status = ZT_OK;
  std::string abort_message;
  // Limits
  const UrlSettings *settings = nullptr;
  char errbuf[CURL_ERROR_SIZE] = {0};
};

size_t on_header(char *data, size_t size, size_t n, void *p) {
  auto *t = static_cast<Transfer *>(p);
  const size_t bytes = size * n;
  t->header_bytes += bytes;
  if (t->header_bytes > t->settings->max_header_bytes) {
    t->abort_status = ZT_E_LIMIT;
    t->abort_message =
        "response headers exceed max_header_bytes (" + std::to_string(t->settings->max_header_bytes) + " bytes)";
    return 0;
  }
  std::string line(data, bytes);
  if (starts_with_nocase(line, "http/")) {
    // A new response (after a redirect or a 100): forget the previous one.
    size_t sp = line.find(' ');
    t->code = sp == std::string::npos ? 0 : std::strtol(line.c_str() + sp + 1, nullptr, 10);
    t->have_range = false;
    t->etag.clear();
    t->last_modified.clear();
    return bytes;
  }
  size_t colon = line.find(':');
  if (colon == std::string::npos) return bytes;
  std::string name = line.substr(0, colon);
  std::string value = trim(line.substr(colon + 1));
  for (char &c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name == "etag") {
    t->etag = value;
  } else if (name == "last-modified") {
    t->last_modified = value;
  } else if (name == "x-amz-bucket-region") {
    t->bucket_region = printable(value.substr(0, 64));
  } else if (name == "content-range") {
    // "bytes a-b/total", or "bytes */total" with a 416.
    unsigned long long a = 0, b = 0, total = 0;
    if (std::sscanf(value.c_str(), "bytes %llu-%llu/%llu", &a, &b, &total) == 3 && a <= b) {
      t->have_range = true;
      t->range_start = a;
      t->range_end = b;
      t->range_total = total;
    } else if (std::sscanf(value.c_str(), "bytes %llu-%llu/*", &a, &b) == 2 && a <= b) {
      t->have_range = true;
      t->total_unknown = true;
      t->range_start = a;
      t->range_end = b;
    } else if (std::sscanf(value.c_str(), "bytes */%llu", &total) == 1) {
      t->range_total = total;
    }
  }
  return bytes;
}

size_t on_body(char *data, size_t size, size_t n, void *p) {
  auto *t = static_cast<Transfer *>(p);
  const size_t bytes = size * n;
  if (t->code == 206 || (t->code == 0 && !t->suffix)) {
    if (t->received + bytes > t->len) {
      t->abort_status = ZT_E_IO;
      t->abort_message = "the server sent more than the " + std::to_string(t->len) + " bytes requested";
      return 0;
    }
    if (t->sink)
      t->sink->insert(t->sink->end(), data, data + bytes);
    else
      std::memcpy(t->dst + t->received, data, bytes);
    t->received += bytes;
    return bytes;
  }
  if (t->code == 200) {
    if (!t->allow_whole || t->whole.size() + bytes > t->settings->max_unranged_bytes) {
      t->abort_status = ZT_E_UNSUPPORTED;
      t->abort_message = "the server ignores Range requests and sends the whole object; refused";
      if (t->allow_whole && t->settings->max_unranged_bytes)
        t->abort_message +=
            " because it is larger than max_unranged_bytes (" + std::to_string(t->settings->max_unranged_bytes) + ")";
      else if (t->allow_whole)
        t->abort_message += " (max_unranged_bytes is 0: set it to accept small objects whole)";
      return 0;
    }
    t->whole.insert(t->whole.end(), data, data + bytes);
    t->received += bytes;
    return bytes;
  }
  // An error page: skipped, within a bound; its start kept for messages.
  if (t->error_body.size() < kKeptErrorBody)
    t->error_body.append(data, std::min(bytes, kKeptErrorBody - t->error_body.size()));
  t->discarded += bytes;
  if (t->discarded > kMaxErrorBody) return 0;
  return bytes;
}

// The text of <name>...</name> in an S3 error document (no nesting, no
// entities beyond the five XML ones), at most 200 characters, printable.
std::string xml_field(const std::string &xml, const char *name) {
  const std::string open = std::string("<") + name + ">", close = std::string("</") + name + ">";
  const size_t a = xml.find(open);
  if (a == std::string::npos) return "";
  const size_t b = xml.find(close, a + open.size());
  if (b == std::string::npos) return "";
  std::string v = xml.substr(a + open.size(), std::min<size_t>(b - a - open.size(), 200));
  static const std::pair<const char *, char> kEntities[] = {
      {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}, {"&amp;", '&'}};
  for (const auto &[ent, ch] : kEntities)
    for (size_t p; (p = v.find(ent)) != std::string::npos;) v.replace(p, std::strlen(ent), 1, ch);
  return printable(v);
}

bool retryable_curl(CURLcode c) {
  switch (c) {
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

class HttpSource final : public Source {
 public:
  HttpSource(const std::string &url, const UrlSettings &s, uint64_t max_manifest_size)
      : url_(url), s_(s), max_manifest_(max_manifest_size) {
    shared_ = s_.shared ? s_.shared : make_remote_shared(UINT64_MAX);
    path_ = redact_url(url);
    global_init();
    if (is_s3_url(url)) {
      s3_ = std::make_unique<S3Location>(resolve_s3(url, s_));
      url_ = s3_->http_url;
    }
    if (s_.deadline_ms) deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(s_.deadline_ms);
    http_ = starts_with_nocase(url_, "http://") || starts_with_nocase(url_, "https://");
    if (!http_ && (!s_.allow_any_scheme || s3_))
      fail(ZT_E_UNSUPPORTED, "'" + path_ + "': only http://, https:// and s3:// URLs are opened (set " +
                                 "allow_any_scheme to let libcurl try others)");
    if (s_.user_agent.empty()) s_.user_agent = std::string("libztensor/") + zt_version_string();
    if (s_.max_parallel == 0) s_.max_parallel = 1;
    if (s_.tail_bytes < 64) s_.tail_bytes = 64;
    open_tail();
    prefetch_head_and_manifest();
    hold_within_budget();
  }

  ~HttpSource() override {
    if (!shared_->forked()) shared_->release(held_charged_ + cache_used_);
  }

  IoStats stats() const {
    IoStats st;
    st.requests = requests_.load();
    st.bytes = bytes_.load();
    st.cache_hits = hits_.load();
    return st;
  }

  void read(uint64_t offset, size_t len, void *dst) const override {
    if (len == 0) return;
    auto *out = static_cast<uint8_t *>(dst);
    if (offset >= held_offset_ && offset - held_offset_ + len <= held_.size()) {  // the tail, or the whole object
      std::memcpy(out, held_.data() + (offset - held_offset_), len);
      return;
    }
    if (len >= kDirect || shared_->forked()) {
      std::vector<Transfer> ts;
      for (uint64_t off = 0; off < len; off += kChunk) {
        Transfer t;
        t.offset = offset + off;
        t.len = std::min<uint64_t>(kChunk, len - off);
        t.dst = out + off;
        ts.push_back(std::move(t));
      }
      run(ts);
      return;
    }
    read_cached(offset, len, out);
  }

  // The pieces lie end to end: one range covers them (coalescing the
  // neighbouring blobs of a batch into one request), then each is copied out.
  void read_pieces(uint64_t offset, const Piece *pieces, size_t n) const override {
    uint64_t span = 0;
    for (size_t i = 0; i < n; ++i) span += pieces[i].len;
    std::vector<uint8_t> buf(span);
    read(offset, span, buf.data());
    uint64_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      if (pieces[i].dst && pieces[i].len) std::memcpy(pieces[i].dst, buf.data() + at, pieces[i].len);
      at += pieces[i].len;
    }
  }

  // A strided slice's groups: each fetched as exactly its range (no cache
  // blocks around it: a rank reading its columns of a matrix must not pull
  // in its neighbours' bytes), max_parallel at a time. Groups inside the
  // held tail, and large ones (parallel chunks already), go through
  // read_pieces.
  void read_groups(const Group *groups, size_t n) const override {
    std::vector<Transfer> ts;
    std::vector<std::vector<uint8_t>> bufs;
    std::vector<size_t> owner;  // group of each transfer
    for (size_t g = 0; g < n; ++g) {
      uint64_t span = 0;
      for (size_t i = 0; i < groups[g].n; ++i) span += groups[g].pieces[i].len;
      if (span == 0) continue;
      const uint64_t off = groups[g].offset;
      const bool held = off >= held_offset_ && off - held_offset_ + span <= held_.size();
      if (held || span >= kDirect) {
        read_pieces(off, groups[g].pieces, groups[g].n);
        continue;
      }
      Transfer t;
      t.offset = off;
      t.len = span;
      if (groups[g].n == 1) {
        t.dst = static_cast<uint8_t *>(groups[g].pieces[0].dst);
      } else {
        bufs.emplace_back(span);
        t.dst = bufs.back().data();
      }
      ts.push_back(std::move(t));
      owner.push_back(g);
    }
    if (ts.empty()) return;
    run(ts);
    size_t b = 0;
    for (size_t k = 0; k < ts.size(); ++k) {
      const Group &grp = groups[owner[k]];
      if (grp.n == 1) continue;
      const uint8_t *src = bufs[b++].data();
      for (size_t i = 0; i < grp.n; ++i) {
        if (grp.pieces[i].dst && grp.pieces[i].len) std::memcpy(grp.pieces[i].dst, src, grp.pieces[i].len);
        src += grp.pieces[i].len;
      }
    }
  }

 private:
  using Block = std::shared_ptr<const std::vector<uint8_t>>;

  void read_cached(uint64_t offset, size_t len, uint8_t *out) const {
    const uint64_t first = offset / kBlock, last = (offset + len - 1) / kBlock;
    std::vector<Block> blocks(last - first + 1);
    {
      std::lock_guard<std::mutex> lock(cache_mu_);
      for (uint64_t b = first; b <= last; ++b) {
        auto it = cache_.find(b);
        if (it == cache_.end()) continue;
        lru_.splice(lru_.begin(), lru_, it->second.second);
        blocks[b - first] = it->second.first;
        ++hits_;
      }
    }
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
      run(ts);
      for (const Run &r : runs)
        for (uint64_t k = r.b; k <= r.e; ++k) {
          const uint64_t lo = (k - r.b) * kBlock, hi = std::min<uint64_t>(lo + kBlock, r.buf.size());
          blocks[k - first] = std::make_shared<const std::vector<uint8_t>>(r.buf.begin() + static_cast<ptrdiff_t>(lo),
                                                                           r.buf.begin() + static_cast<ptrdiff_t>(hi));
        }
      insert(first, blocks);
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

  void insert(uint64_t first, const std::vector<Block> &blocks) const {
    std::lock_guard<std::mutex> lock(cache_mu_);
    for (size_t i = 0; i < blocks.size(); ++i) {
      const uint64_t b = first + i;
      if (cache_.count(b) || blocks[i]->size() > s_.cache_bytes) continue;
      // The shared budget first: make room by dropping this source's own
      // least recent blocks; when there are none, the block is not kept.
      bool room = shared_->charge(blocks[i]->size());
      while (!room && !lru_.empty()) {
        evict_one();
        room = shared_->charge(blocks[i]->size());
      }
      if (!room) continue;
      lru_.push_front(b);
      cache_.emplace(b, std::make_pair(blocks[i], lru_.begin()));
      cache_used_ += blocks[i]->size();
    }
    while (cache_used_ > s_.cache_bytes && !lru_.empty()) evict_one();
  }

  void evict_one() const {
    uint64_t victim = lru_.back();
    lru_.pop_back();
    auto it = cache_.find(victim);
    cache_used_ -= it->second.first->size();
    shared_->release(it->second.first->size());
    cache_.erase(it);
  }

  // Where the manifest starts, by the footer in the held bytes (v1:
  // ...size, "ZTEN1000"; v0: ...size), or held_offset_ when it says nothing
  // usable.
  uint64_t manifest_start() const {
    if (held_.size() < 16) return held_offset_;
    const uint8_t *end = held_.data() + held_.size();
    auto le64 = [](const uint8_t *p) {
      uint64_t v = 0;
      for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
      return v;
    };
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
    if (shared_->charge(held_.size())) {
      held_charged_ = held_.size();
      return;
    }
    const uint64_t m = std::max(manifest_start(), held_offset_);
    if (m > held_offset_ && m - held_offset_ <= held_.size()) {
      held_.erase(held_.begin(), held_.begin() + static_cast<ptrdiff_t>(m - held_offset_));
      held_.shrink_to_fit();
      held_offset_ = m;
    }
    shared_->force_charge(held_.size());
    held_charged_ = held_.size();
  }

  CURL *acquire() const {
    if (!shared_->forked()) {
      std::lock_guard<std::mutex> lock(shared_->pool_mu);
      if (!shared_->idle.empty()) {
        CURL *h = shared_->idle.back();
        shared_->idle.pop_back();
        curl_easy_reset(h);  // keeps its live connection
        return h;
      }
    }
    CURL *h = curl_easy_init();
    if (!h) fail(ZT_E_NOMEM, "'" + path_ + "': curl_easy_init failed");
    return h;
  }
  void release(CURL *h) const {
    if (shared_->forked()) {  // made in this process by acquire()
      curl_easy_cleanup(h);
      return;
    }
    std::lock_guard<std::mutex> lock(shared_->pool_mu);
    // A shared pool keeps as many idle connections as one source may use.
    if (shared_->idle.size() >= std::max<size_t>(s_.max_parallel, 4) * 2 && s_.shared) {
      curl_easy_cleanup(h);
      return;
    }
    shared_->idle.push_back(h);
  }

  void configure(CURL *h, Transfer &t, curl_slist **headers) const {
    t.settings = &s_;
    curl_easy_setopt(h, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    // S3 is never followed: its redirects name another region (reported
    // as such), and a session token travels in a header libcurl would
    // replay to whatever host the redirect names.
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, s3_ ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, static_cast<long>(s_.max_redirects));
    if (!s_.allow_any_scheme) {
      curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
      curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    }
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(s_.connect_timeout_ms));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request_timeout_ms()));
    if (s_.low_speed_bytes) {
      curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(s_.low_speed_bytes));
      curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME,
                       static_cast<long>(std::max<uint32_t>(1, s_.low_speed_time_ms / 1000)));
    }
    curl_easy_setopt(h, CURLOPT_USERAGENT, s_.user_agent.c_str());
    if (!s_.bearer_token.empty() && !s3_) {
      // The bearer token is an http(s) credential: never sent to an S3
      // endpoint (AWS itself, unless overridden), signed or not. libcurl's
      // own bearer support: not replayed to another host on a redirect,
      // unlike a hand-made Authorization header.
      curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
      curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, s_.bearer_token.c_str());
    }
    std::string range =
        t.suffix ? "-" + std::to_string(t.len) : std::to_string(t.offset) + "-" + std::to_string(t.offset + t.len - 1);
    if (s3_ && s3_->sign) {
      // libcurl's SigV4 signer (7.75+) signs host, x-amz-date and every
      // header of CURLOPT_HTTPHEADER: so Range, the payload hash and the
      // session token go there, where they are signed. (A CURLOPT_RANGE
      // Range would be sent unsigned.) The key is already in S3's
      // canonical encoding and PATH_AS_IS keeps "a/../b" and "//" as they
      // are, so the path signed is the path S3 canonicalises.
      curl_easy_setopt(h, CURLOPT_AWS_SIGV4, ("aws:amz:" + s3_->region + ":s3").c_str());
      curl_easy_setopt(h, CURLOPT_USERNAME, s3_->access_key.c_str());
      curl_easy_setopt(h, CURLOPT_PASSWORD, s3_->secret_key.c_str());
      *headers = curl_slist_append(*headers, ("Range: bytes=" + range).c_str());
      *headers = curl_slist_append(*headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
      if (!s3_->session_token.empty())
        *headers = curl_slist_append(*headers, ("x-amz-security-token: " + s3_->session_token).c_str());
    } else {
      curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());  // copied by libcurl
    }
    if (s3_) curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
    // A strong ETag makes the server itself refuse a changed object (412).
    if (!etag_.empty() && etag_.compare(0, 2, "W/") != 0)
      *headers = curl_slist_append(*headers, ("If-Match: " + etag_).c_str());
    if (*headers) curl_easy_setopt(h, CURLOPT_HTTPHEADER, *headers);
    const uint64_t cap = std::max<uint64_t>({t.len, s_.max_unranged_bytes, kMaxErrorBody});
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(cap));
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, t.errbuf);
  }

  // No credential may leave through a message: libcurl's text can quote the
  // URL it was given. One pass over the original text, longest secret first
  // at each place: a placeholder is never searched again, so a secret that
  // occurs in one ("s" in "<secret>") neither loops nor garbles it.
  std::string scrub(const std::string &msg) const {
    std::vector<std::pair<const std::string *, const char *>> secrets = {{&url_, nullptr},
                                                                         {&s_.bearer_token, "<token>"}};
    if (s3_) {
      secrets.emplace_back(&s3_->secret_key, "<secret>");
      secrets.emplace_back(&s3_->session_token, "<session token>");
    }
    std::sort(secrets.begin(), secrets.end(),
              [](const auto &a, const auto &b) { return a.first->size() > b.first->size(); });
    std::string out;
    for (size_t i = 0; i < msg.size();) {
      bool hit = false;
      for (const auto &[what, with] : secrets) {
        if (what->empty() || msg.compare(i, what->size(), *what) != 0) continue;
        out += with ? std::string(with) : path_;
        i += what->size();
        hit = true;
        break;
      }
      if (!hit) out += msg[i++];
    }
    return out;
  }

  struct Outcome {
    zt_status status = ZT_OK;
    bool retry = false;
    std::string message;
  };

  std::string range_text(const Transfer &t) const {
    return t.suffix ? "the last " + std::to_string(t.len) + " bytes"
                    : "bytes [" + std::to_string(t.offset) + ", +" + std::to_string(t.len) + ")";
  }

  Outcome judge(const Transfer &t, CURLcode rc) const {
    Outcome o;
    const std::string what = "'" + path_ + "': GET " + range_text(t) + ": ";
    // "bytes=-N" answered from the start (s3rver does this): the server
    // has no suffix ranges, but told the size; open_tail asks again with
    // an explicit range. Judged before the body's length, which is wrong.
    if (t.suffix && t.code == 206 && t.have_range && !t.total_unknown && t.range_start == 0 &&
        t.range_end + 1 < t.range_total) {
      no_suffix_total_ = t.range_total;
      return {ZT_E_IO, false,
              what + "the server answered a suffix range with bytes 0-" + std::to_string(t.range_end) + "/" +
                  std::to_string(t.range_total)};
    }
    if (t.abort_status != ZT_OK) return {t.abort_status, false, what + t.abort_message};
    if (rc == CURLE_FILESIZE_EXCEEDED && t.code == 200)
      return {ZT_E_UNSUPPORTED, false,
              what + "the server ignores Range requests and announces the whole object, larger than " +
                  "max_unranged_bytes (" + std::to_string(s_.max_unranged_bytes) + "); refused"};
    if (rc == CURLE_FILESIZE_EXCEEDED)
      return {ZT_E_IO, false,
              what + "the response's Content-Length is larger than the " + std::to_string(t.len) +
                  " bytes requested (HTTP " + std::to_string(t.code) + "); refused"};
    if (rc == CURLE_TOO_MANY_REDIRECTS)
      return {ZT_E_LIMIT, false, what + "more than max_redirects (" + std::to_string(s_.max_redirects) + ") redirects"};
    if (rc != CURLE_OK) {
      std::string detail = t.errbuf[0] ? std::string(t.errbuf) : std::string(curl_easy_strerror(rc));
      if (rc == CURLE_OPERATION_TIMEDOUT) {
        if (past_deadline())
          return {ZT_E_IO, false,
                  what + scrub(detail) + " (the overall deadline of " + std::to_string(s_.deadline_ms) + " ms passed)"};
        detail += " (timeout " + std::to_string(s_.timeout_ms) + " ms";
        if (s_.low_speed_bytes)
          detail += ", or below " + std::to_string(s_.low_speed_bytes) + " bytes/s for " +
                    std::to_string(std::max<uint32_t>(1, s_.low_speed_time_ms / 1000)) + " s";
        detail += ")";
      }
      return {ZT_E_IO, retryable_curl(rc), what + scrub(detail)};
    }
    if (t.code == 412) return {ZT_E_CHANGED, false, what + changed_text("the server refused If-Match " + etag_)};
    if (t.code >= 500 || t.code == 429 || t.code == 408)
      return {ZT_E_IO, true, what + "HTTP " + std::to_string(t.code)};
    if (s3_ && t.code >= 300 && t.code != 416) return {ZT_E_IO, false, scrub(s3_failure(t, what))};
    if (t.code == 416 && t.range_total == 0 && t.suffix) return o;  // an empty object
    if (t.code == 200 && t.allow_whole) return o;
    if (t.code != 206 && !(t.code == 0 && !http_))
      return {ZT_E_IO, false, what + "HTTP " + std::to_string(t.code) + (t.code == 200 ? " (Range ignored)" : "")};
    if (http_) {
      if (!t.have_range) return {ZT_E_IO, false, what + "206 response without a Content-Range"};
      // Once the size is known, a server that no longer knows it is
      // serving something else.
      if (size_known_ && t.total_unknown)
        return {ZT_E_CHANGED, false,
                what + changed_text("Content-Range now gives no total size ('/*'), was " + std::to_string(size_))};
      if (!t.total_unknown && t.range_end >= t.range_total)
        return {ZT_E_IO, false,
                what + "inconsistent Content-Range: bytes " + std::to_string(t.range_start) + "-" +
                    std::to_string(t.range_end) + "/" + std::to_string(t.range_total)};
      if (t.suffix && (t.range_end - t.range_start >= t.len || t.range_end + 1 != t.range_total))
        return {ZT_E_IO, false,
                what + "the server answered with bytes " + std::to_string(t.range_start) + "-" +
                    std::to_string(t.range_end) + ", not the end of the object"};
      if ((!etag_.empty() && t.etag != etag_) || (!last_modified_.empty() && t.last_modified != last_modified_))
        return {ZT_E_CHANGED, false,
                what + changed_text("ETag " + t.etag + " / Last-Modified " + t.last_modified + " now, was " + etag_ +
                                    " / " + last_modified_)};
      if (size_known_ && !t.total_unknown && t.range_total != size_)
        return {
            ZT_E_CHANGED, false,
            what + changed_text("its size is now " + std::to_string(t.range_total) + ", was " + std::to_string(size_))};
      if (!t.suffix && (t.range_start != t.offset || t.range_end != t.offset + t.len - 1))
        return {ZT_E_IO, false,
                what + "the server answered with bytes " + std::to_string(t.range_start) + "-" +
                    std::to_string(t.range_end)};
      const uint64_t want = t.suffix ? t.range_end - t.range_start + 1 : t.len;
      if (t.received != want)
        return {ZT_E_IO, true,
                what + "truncated body: " + std::to_string(t.received) + " of " + std::to_string(want) + " bytes"};
    } else if (t.received != t.len) {
      return {ZT_E_IO, true,
              what + "short read: " + std::to_string(t.received) + " of " + std::to_string(t.len) + " bytes"};
    }
    return o;
  }

  // An S3 refusal in words: the error XML's Code, and for a 403 where the
  // credentials came from and which region was signed for, with the
  // likely cause when S3 names it (clock skew, region, key, secret, token).
  std::string s3_failure(const Transfer &t, const std::string &what) const {
    const std::string code = xml_field(t.error_body, "Code");
    const std::string creds = "credentials: " + s3_->credential_source;
    const std::string region = "signed for region '" + s3_->region + "' from " + s3_->region_source;
    std::string m = what + "HTTP " + std::to_string(t.code) + (code.empty() ? "" : " " + code);
    const std::string wanted =
        !xml_field(t.error_body, "Region").empty() ? xml_field(t.error_body, "Region") : t.bucket_region;
    if (code == "RequestTimeTooSkewed") {
      m += ": this machine's clock looks wrong (request time " + xml_field(t.error_body, "RequestTime") +
           ", server time " + xml_field(t.error_body, "ServerTime") + ")";
    } else if (code == "AuthorizationHeaderMalformed" || code == "PermanentRedirect" ||
               code == "IllegalLocationConstraintException" || (t.code >= 300 && t.code < 400) ||
               (!wanted.empty() && wanted != s3_->region)) {
      m += ": the region looks wrong: " + region;
      if (!wanted.empty()) m += ", the bucket is in '" + wanted + "'";
      m += " (set AWS_REGION, the profile's region or zt_url_options.s3_region)";
    } else if (code == "SignatureDoesNotMatch") {
      m += ": the secret key does not match the access key id";
    } else if (code == "InvalidAccessKeyId") {
      m += ": the server does not know the access key id";
    } else if (code == "InvalidToken" || code == "ExpiredToken" || code == "TokenRefreshRequired") {
      m += ": the session token is invalid or expired";
    } else if (code == "NoSuchKey" || (code.empty() && t.code == 404)) {
      m += ": bucket '" + printable(s3_->bucket) + "' has no key '" + printable(s3_->key) + "'";
    } else if (code == "NoSuchBucket") {
      m += ": there is no bucket '" + printable(s3_->bucket) + "'";
    } else if (t.code == 403 || t.code == 401) {
      m += ": access denied";
    }
    if (t.code == 403 || t.code == 401 || t.code == 400) m += " [" + creds + "; " + region + "]";
    const std::string said = xml_field(t.error_body, "Message");
    if (!said.empty()) m += "; the server says: " + said;
    return m;
  }

  bool past_deadline() const { return s_.deadline_ms && std::chrono::steady_clock::now() >= deadline_; }

  // The per-request timeout, cut to what is left of the overall deadline.
  uint64_t request_timeout_ms() const {
    uint64_t t = s_.timeout_ms;
    if (s_.deadline_ms) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now()).count();
      t = std::min<uint64_t>(t, left > 1 ? static_cast<uint64_t>(left) : 1);
    }
    return t;
  }

  std::string changed_text(const std::string &detail) const {
    return "the object changed while being read (" + detail + "); reopen it";
  }

  // Runs the transfers, up to max_parallel at a time on one curl multi
  // handle; failed ones are retried (with backoff) while retries last. The
  // first failure that is not retried, or the last one, is thrown.
  void run(std::vector<Transfer> &ts) const {
    std::vector<size_t> pending(ts.size());
    for (size_t i = 0; i < ts.size(); ++i) pending[i] = i;
    for (uint32_t attempt = 0;; ++attempt) {
      std::vector<size_t> again;
      Outcome fatal;
      run_once(ts, pending, again, fatal);
      if (fatal.status != ZT_OK) fail(fatal.status, fatal.message);
      if (again.empty()) return;
      if (attempt >= s_.retries || past_deadline()) {
        Outcome last = last_retry_;
        fail(last.status,
             last.message + " (after " + std::to_string(attempt + 1) + " attempts" +
                 (past_deadline() ? "; the overall deadline of " + std::to_string(s_.deadline_ms) + " ms passed"
                                  : std::string()) +
                 ")");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100u << std::min(attempt, 6u)));
      for (size_t i : again) {
        Transfer fresh;
        fresh.offset = ts[i].offset;
        fresh.len = ts[i].len;
        fresh.suffix = ts[i].suffix;
        fresh.allow_whole = ts[i].allow_whole;
        fresh.dst = ts[i].dst;
        fresh.sink = ts[i].sink;
        if (fresh.sink) fresh.sink->clear();
        ts[i] = std::move(fresh);
      }
      pending.swap(again);
    }
  }

  void run_once(std::vector<Transfer> &ts, const std::vector<size_t> &which, std::vector<size_t> &again,
                Outcome &fatal) const {
    CURLM *multi = curl_multi_init();
    if (!multi) fail(ZT_E_NOMEM, "'" + path_ + "': curl_multi_init failed");
    struct Active {
      CURL *h;
      curl_slist *headers;
      size_t index;
    };
    std::vector<Active> active;
    size_t next = 0;
    auto start = [&] {
      // max_parallel bounds the file's requests in flight across all
      // threads; a thread with none in flight may always start one, so
      // every reader makes progress.
      while (next < which.size() && (active.empty() || in_flight_.load() < s_.max_parallel)) {
        size_t i = which[next++];
        CURL *h = acquire();
        curl_slist *headers = nullptr;
        configure(h, ts[i], &headers);
        curl_easy_setopt(h, CURLOPT_PRIVATE, reinterpret_cast<char *>(i));
        curl_multi_add_handle(multi, h);
        active.push_back({h, headers, i});
        ++in_flight_;
        ++requests_;
      }
    };
    // Whatever is in flight when something throws goes back to the pool.
    struct Cleanup {
      CURLM *multi;
      std::vector<Active> &active;
      const HttpSource &self;
      ~Cleanup() {
        for (const Active &a : active) {
          curl_multi_remove_handle(multi, a.h);
          curl_slist_free_all(a.headers);
          self.release(a.h);
          --self.in_flight_;
        }
        curl_multi_cleanup(multi);
      }
    } cleanup{multi, active, *this};
    start();
    while (!active.empty()) {
      int running = 0;
      curl_multi_perform(multi, &running);
      int left = 0;
      while (CURLMsg *m = curl_multi_info_read(multi, &left)) {
        if (m->msg != CURLMSG_DONE) continue;
        CURL *h = m->easy_handle;
        CURLcode rc = m->data.result;
        auto it = std::find_if(active.begin(), active.end(), [&](const Active &a) { return a.h == h; });
        Transfer &t = ts[it->index];
        if (t.code == 0 && http_) {
          long code = 0;
          curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
          t.code = code;
        }
        bytes_ += t.received;
        Outcome o = judge(t, rc);
        if (o.status != ZT_OK) {
          if (o.retry) {
            again.push_back(it->index);
            last_retry_ = o;
          } else if (fatal.status == ZT_OK) {
            fatal = o;
          }
        }
        curl_multi_remove_handle(multi, h);
        --in_flight_;
        curl_slist_free_all(it->headers);
        release(h);
        active.erase(it);
      }
      if (fatal.status == ZT_OK) start();
      if (!active.empty()) curl_multi_poll(multi, nullptr, 0, 100, nullptr);
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
      size_ = probe_size();
      size_known_ = true;
      t.offset = size_ > s_.tail_bytes ? size_ - s_.tail_bytes : 0;
      t.len = size_ - t.offset;
      buf.resize(t.len);
      t.dst = buf.data();
      if (t.len == 0) return;
    }
    std::vector<Transfer> ts;
    ts.push_back(std::move(t));
    try {
      run(ts);
    } catch (const Error &) {
      if (!http_ || !no_suffix_total_) throw;
      // A server without suffix ranges that told the size: the tail by an
      // explicit range (one more round trip, for such servers only).
      buf.clear();
      Transfer e;
      e.offset = no_suffix_total_ > s_.tail_bytes ? no_suffix_total_ - s_.tail_bytes : 0;
      e.len = no_suffix_total_ - e.offset;
      e.sink = &buf;
      ts.clear();
      ts.push_back(std::move(e));
      run(ts);
    }
    Transfer &r = ts[0];
    if (!http_) {
      held_offset_ = r.offset;
      held_ = std::move(buf);
      return;
    }
    etag_ = r.etag;
    last_modified_ = r.last_modified;
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
    size_known_ = true;
  }

  uint64_t probe_size() {
    CURL *h = acquire();
    curl_easy_setopt(h, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(s_.connect_timeout_ms));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(s_.timeout_ms));
    ++requests_;
    CURLcode rc = curl_easy_perform(h);
    curl_off_t len = -1;
    curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
    release(h);
    if (rc != CURLE_OK) fail(ZT_E_IO, "'" + path_ + "': " + scrub(curl_easy_strerror(rc)));
    if (len < 0) fail(ZT_E_IO, "'" + path_ + "': the size of the object is unknown");
    return static_cast<uint64_t>(len);
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
    head.len = std::min<uint64_t>(kBlock, size_);
    auto head_buf = std::make_shared<std::vector<uint8_t>>(head.len);
    head.dst = head_buf->data();
    ts.push_back(std::move(head));
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
    run(ts);
    insert(0, {std::const_pointer_cast<const std::vector<uint8_t>>(head_buf)});
    if (!extra.empty()) {
      extra.insert(extra.end(), held_.begin(), held_.end());
      held_ = std::move(extra);
      held_offset_ = mstart;
    }
  }

  // Set by judge (open only) when the server answered "bytes=-N" from the
  // start of the object: the object's size.
  mutable uint64_t no_suffix_total_ = 0;
  std::string url_;  // what is fetched: for s3://, the endpoint's URL
  UrlSettings s_;
  std::unique_ptr<S3Location> s3_;  // set for s3:// URLs
  std::chrono::steady_clock::time_point deadline_;
  const uint64_t max_manifest_;
  bool http_ = true;
  bool size_known_ = false;
  std::string etag_, last_modified_;
  // Bytes held since open: the tail read (footer and manifest), or the
  // whole object when a server without ranges was accepted.
  std::vector<uint8_t> held_;
  uint64_t held_offset_ = 0;

  // The budget and connection pool: the set's, or this source's own
  // (unbounded budget: cache_bytes alone bounds a lone file).
  std::shared_ptr<RemoteShared> shared_;
  uint64_t held_charged_ = 0;
  mutable std::mutex cache_mu_;
  mutable std::unordered_map<uint64_t, std::pair<Block, std::list<uint64_t>::iterator>> cache_;
  mutable std::list<uint64_t> lru_;
  mutable uint64_t cache_used_ = 0;
  mutable std::atomic<uint64_t> requests_{0}, bytes_{0}, hits_{0};
  mutable std::atomic<uint32_t> in_flight_{0};
  // The last retryable failure of run(), touched only by the thread in it.
  static thread_local Outcome last_retry_;
};

thread_local HttpSource::Outcome HttpSource::last_retry_;

}  // namespace

std::unique_ptr<Source> open_http_source(const std::string &url, const UrlSettings &settings,
                                         uint64_t max_manifest_size) {
  return std::make_unique<HttpSource>(url, settings, max_manifest_size);
}

IoStats http_stats(const Source &src) {
  if (auto *h = dynamic_cast<const HttpSource *>(&src)) return h->stats();
  return {};
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
#ifdef _WIN32
  fail(ZT_E_UNSUPPORTED,
       "'" + redact_url(url) +
           "': HTTP(S) reads are Linux-only for now: this Windows libztensor was built without libcurl "
           "(docs/cross.md, \"Windows\")");
#else
  fail(ZT_E_UNSUPPORTED, "'" + redact_url(url) + "': this libztensor was built without libcurl (meson -Dcurl=enabled)");
#endif
}

IoStats http_stats(const Source &) {
  return {};
}

#endif

}  // namespace zt
