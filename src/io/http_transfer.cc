#include "io/http_transfer.h"

#ifdef ZT_HAVE_CURL

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "util/error.h"

namespace zt {

namespace {

constexpr size_t kMaxErrorBody = size_t{64} << 10;  // an error page we skip
constexpr size_t kKeptErrorBody = size_t{8} << 10;  // of which we keep (S3's error XML)
constexpr long kBulkBuffer = 256L << 10;            // libcurl's receive buffer for those
constexpr uint64_t kBulkPiece = uint64_t{1} << 20;  // requests this large on average get a connection each (HTTP/2)

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
    t->content_type.clear();
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
  } else if (name == "content-type") {
    t->content_type = value.substr(0, 256);
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

// Body bytes over a transfer's scatter pieces (within len: checked before).
void scatter_body(Transfer &t, const char *data, size_t bytes) {
  while (bytes && t.scatter_at < t.scatter.size()) {
    const Source::Piece &p = t.scatter[t.scatter_at];
    const size_t k = static_cast<size_t>(std::min<uint64_t>(p.len - t.scatter_used, bytes));
    if (p.dst && k) std::memcpy(static_cast<uint8_t *>(p.dst) + t.scatter_used, data, k);
    data += k;
    bytes -= k;
    t.scatter_used += k;
    if (t.scatter_used == p.len) {
      ++t.scatter_at;
      t.scatter_used = 0;
    }
  }
}

size_t on_body(char *data, size_t size, size_t n, void *p) {
  auto *t = static_cast<Transfer *>(p);
  const size_t bytes = size * n;
  if (!t->parts.empty() && (t->code == 206 || t->code == 200)) {
    if (!t->multipart) {
      const std::string boundary = multipart_boundary(t->content_type);
      if (t->code == 200 || boundary.empty()) {
        // The whole object, or one range for many: this server does not
        // do multi-range; stop before its bytes (the caller asks again).
        t->multirange_refused = true;
        t->abort_status = ZT_E_UNSUPPORTED;
        t->abort_message = "the server does not answer multi-range requests";
        return 0;
      }
      t->multipart = std::make_unique<MultipartRanges>(t->parts, boundary);
    }
    // A body without a Content-Length (chunked) is bounded here: the
    // parts, their headers and boundaries, and a short epilogue.
    t->multipart_bytes += bytes;
    if (t->multipart_bytes > t->len + t->parts.size() * 512 + kMaxErrorBody) {
      t->abort_status = ZT_E_IO;
      t->abort_message = "the multipart body is longer than the " + std::to_string(t->parts.size()) +
                         " ranges asked and their headers";
      return 0;
    }
    if (!t->multipart->feed(data, bytes)) {
      // Parts out of order, merged or malformed: not the answer this
      // library can use; the ranges are asked one by one instead.
      t->multirange_refused = true;
      t->abort_status = ZT_E_IO;
      t->abort_message = t->multipart->error();
      return 0;
    }
    t->received = t->multipart->data_bytes();
    return bytes;
  }
  if (t->code == 206 || (t->code == 0 && !t->suffix)) {
    if (t->received + bytes > t->len) {
      t->abort_status = ZT_E_IO;
      t->abort_message = "the server sent more than the " + std::to_string(t->len) + " bytes requested";
      return 0;
    }
    if (t->sink)
      t->sink->insert(t->sink->end(), data, data + bytes);
    else if (!t->scatter.empty())
      scatter_body(*t, data, bytes);
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

}  // namespace

bool starts_with_nocase(const std::string &s, const char *prefix) {
  size_t n = std::strlen(prefix);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

Transfer Transfer::fresh() const {
  Transfer t;
  t.offset = offset;
  t.len = len;
  t.suffix = suffix;
  t.allow_whole = allow_whole;
  t.clip = clip;
  t.own_connection = own_connection;
  t.timeout_ms = timeout_ms;
  t.dst = dst;
  t.sink = sink;
  t.parts = parts;
  t.scatter = scatter;
  if (t.sink) t.sink->clear();
  return t;
}

RemoteShared::~RemoteShared() {
  if (forked()) return;  // the parent's handles: left alone
  for (CURL *h : idle) curl_easy_cleanup(h);
  for (const IdleMulti &m : idle_multi) curl_multi_cleanup(m.multi);
}

std::shared_ptr<RemoteShared> make_remote_shared(uint64_t budget_bytes) {
  return std::make_shared<RemoteShared>(budget_bytes);
}

HttpTransport::HttpTransport(std::string url, std::string path, UrlSettings &settings, const S3Location *s3,
                             std::shared_ptr<RemoteShared> shared)
    : url_(std::move(url)),
      path_(std::move(path)),
      s_(settings),
      s3_(s3),
      shared_(std::move(shared)),
      link_(settings.rtt_ms, settings.link_bytes_per_s) {
  global_init();
  if (s_.deadline_ms) deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(s_.deadline_ms);
  http_ = starts_with_nocase(url_, "http://") || starts_with_nocase(url_, "https://");
  // Another CA file (a private CA, a test's self-signed server), named in
  // the environment as curl and the AWS CLI read it; verification stays on.
  for (const char *name : {s3_ ? "AWS_CA_BUNDLE" : nullptr, "CURL_CA_BUNDLE"}) {
    const char *v = name ? std::getenv(name) : nullptr;
    if (v && *v) {
      ca_file_ = v;
      break;
    }
  }
}

void HttpTransport::learn(const std::string &etag, const std::string &last_modified, uint64_t size) {
  etag_ = etag;
  last_modified_ = last_modified;
  size_ = size;
  size_known_ = true;
}

bool HttpTransport::past_deadline() const {
  return s_.deadline_ms && std::chrono::steady_clock::now() >= deadline_;
}

uint64_t HttpTransport::request_timeout_ms() const {
  uint64_t t = s_.timeout_ms;
  if (s_.deadline_ms) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now()).count();
    t = std::min<uint64_t>(t, left > 1 ? static_cast<uint64_t>(left) : 1);
  }
  return t;
}

// One pass over the original text, longest secret first at each place: a
// placeholder is never searched again, so a secret that occurs in one ("s"
// in "<secret>") neither loops nor garbles it.
std::string HttpTransport::scrub(const std::string &msg) const {
  std::vector<std::pair<const std::string *, const char *>> secrets = {{&url_, nullptr}, {&s_.bearer_token, "<token>"}};
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

CURL *HttpTransport::acquire() const {
  if (!shared_->forked()) {
    std::lock_guard<std::mutex> lock(shared_->pool_mu);
    if (!shared_->idle.empty()) {
      CURL *h = shared_->idle.back();
      shared_->idle.pop_back();
      curl_easy_reset(h);
      return h;
    }
  }
  CURL *h = curl_easy_init();
  if (!h) fail(ZT_E_NOMEM, "'" + path_ + "': curl_easy_init failed");
  return h;
}

void HttpTransport::release(CURL *h) const {
  if (shared_->forked()) {  // made in this process by acquire()
    curl_easy_cleanup(h);
    return;
  }
  std::lock_guard<std::mutex> lock(shared_->pool_mu);
  // A shared pool keeps as many idle handles as one source may use.
  if (shared_->idle.size() >= std::max<size_t>(s_.max_parallel, 4) * 2 && s_.shared) {
    curl_easy_cleanup(h);
    return;
  }
  shared_->idle.push_back(h);
}

RemoteShared::IdleMulti HttpTransport::acquire_multi() const {
  if (!shared_->forked()) {
    std::lock_guard<std::mutex> lock(shared_->pool_mu);
    if (!shared_->idle_multi.empty()) {
      const RemoteShared::IdleMulti m = shared_->idle_multi.back();
      shared_->idle_multi.pop_back();
      return m;
    }
  }
  CURLM *m = curl_multi_init();
  if (!m) fail(ZT_E_NOMEM, "'" + path_ + "': curl_multi_init failed");
  // HTTP/2 where the server offers it: the requests of a read become
  // streams of one connection (PIPEWAIT on each transfer waits for it).
  curl_multi_setopt(m, CURLMOPT_PIPELINING, static_cast<long>(CURLPIPE_MULTIPLEX));
  // Connections kept open between reads: as many as may be in flight.
  curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, static_cast<long>(std::max<uint32_t>(s_.max_parallel, 4) + 4));
  return {m, 0};
}

void HttpTransport::release_multi(CURLM *m, uint32_t connections) const {
  if (shared_->forked()) {  // made in this process by acquire_multi()
    curl_multi_cleanup(m);
    return;
  }
  std::lock_guard<std::mutex> lock(shared_->pool_mu);
  // One idle multi per thread that read at once is plenty: each holds
  // connections (and their sockets) open.
  if (shared_->idle_multi.size() >= 16) {  // a set's warmed connections (warm_connections)
    curl_multi_cleanup(m);
    return;
  }
  auto &idle = shared_->idle_multi;
  auto at = std::find_if(idle.begin(), idle.end(),
                         [&](const RemoteShared::IdleMulti &i) { return i.connections > connections; });
  idle.insert(at, {m, connections});
}

void HttpTransport::configure(CURL *h, Transfer &t, curl_slist **headers) const {
  t.settings = &s_;
  curl_easy_setopt(h, CURLOPT_URL, url_.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  // HTTP/2 where TLS negotiates it (libcurl's default since 7.62, set for
  // older ones): the requests of a read become streams of one connection.
  // PIPEWAIT: a request waits for a connection being opened to say whether
  // it multiplexes rather than opening another.
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(h, CURLOPT_PIPEWAIT, t.own_connection ? 0L : 1L);
  if (!ca_file_.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, ca_file_.c_str());
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
  const uint64_t limit = t.timeout_ms ? std::min(t.timeout_ms, request_timeout_ms()) : request_timeout_ms();
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(limit));
  if (s_.low_speed_bytes) {
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(s_.low_speed_bytes));
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(std::max<uint32_t>(1, s_.low_speed_time_ms / 1000)));
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
  std::string range;
  if (!t.parts.empty()) {
    for (const RangePart &p : t.parts)
      range += (range.empty() ? "" : ",") + std::to_string(p.offset) + "-" + std::to_string(p.offset + p.len - 1);
  } else {
    range =
        t.suffix ? "-" + std::to_string(t.len) : std::to_string(t.offset) + "-" + std::to_string(t.offset + t.len - 1);
  }
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
  // A multipart body: the parts, and each part's boundary and headers.
  const uint64_t body = t.parts.empty() ? t.len : t.len + t.parts.size() * 512;
  const uint64_t cap = std::max<uint64_t>({body, s_.max_unranged_bytes, kMaxErrorBody});
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(cap));
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, t.errbuf);
  // Large bodies in large reads: a 16 KiB buffer (libcurl's default) costs
  // a recv and a callback per 16 KiB, which a busy machine's few cores feel
  // at GB/s. 256 KiB per request in flight: 4 MiB for 16.
  if (t.len >= kBulkPiece) curl_easy_setopt(h, CURLOPT_BUFFERSIZE, static_cast<long>(kBulkBuffer));
}

// The link model learns from every good response: the wait for its first
// byte (a round trip, plus the server's time) and its body's rate.
void HttpTransport::observe(CURL *h, const Transfer &t) const {
  curl_off_t pre = 0, first = 0, total = 0;
  if (curl_easy_getinfo(h, CURLINFO_PRETRANSFER_TIME_T, &pre) != CURLE_OK ||
      curl_easy_getinfo(h, CURLINFO_STARTTRANSFER_TIME_T, &first) != CURLE_OK ||
      curl_easy_getinfo(h, CURLINFO_TOTAL_TIME_T, &total) != CURLE_OK)
    return;
  link_.observe((first - pre) / 1e6, t.received, (total - first) / 1e6);
}

uint32_t HttpTransport::bulk_parallel(uint64_t len) const {
  if (s_.max_parallel_set) return s_.max_parallel;
  return link_.connections_for(len, s_.max_parallel, std::max(s_.max_parallel, kMaxAdaptiveParallel));
}

void HttpTransport::run_once(std::vector<Transfer> &ts, const std::vector<size_t> &which, std::vector<size_t> &again,
                             Outcome &fatal, Outcome &last_retry, uint32_t parallel) const {
  const RemoteShared::IdleMulti acquired = acquire_multi();
  CURLM *multi = acquired.multi;
  // The connections kept open: as many as a read of the file may have in
  // flight (a bulk read may have more than max_parallel: bulk_parallel).
  const uint32_t keep = std::max({parallel, s_.max_parallel, uint32_t{4}}) + 4;
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(keep));
  struct Active {
    CURL *h;
    curl_slist *headers;
    size_t index;
  };
  std::vector<Active> active;
  size_t next = 0;
  uint32_t peak = acquired.connections;  // the connections this multi holds, about
  const auto began = std::chrono::steady_clock::now();
  // HTTP/2: small requests (a slice's ranges, a multi-range batch) share
  // one connection as streams; pieces of a large read (1 MiB or more on
  // average) get a connection each, as over HTTP/1.1: one connection carries what one TCP flow does
  // (its window, its share of the path), which a bulk load needs several of.
  uint64_t bytes = 0;
  for (size_t i : which) bytes += ts[i].len;
  const bool bulk = !which.empty() && bytes / which.size() >= kBulkPiece;
  curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, bulk ? 1L : 100L);
  auto start = [&] {
    // `parallel` (max_parallel, or a bulk read's) bounds the file's
    // requests in flight across all threads; a thread with none in flight
    // may always start one, so every reader makes progress.
    while (next < which.size() && (active.empty() || in_flight_.load() < parallel)) {
      size_t i = which[next++];
      CURL *h = acquire();
      curl_slist *headers = nullptr;
      configure(h, ts[i], &headers);
      // A bulk read's pieces get a connection each anyway: none waits a
      // round trip for the first to connect (PIPEWAIT) before its own.
      if (bulk) curl_easy_setopt(h, CURLOPT_PIPEWAIT, 0L);
      curl_easy_setopt(h, CURLOPT_PRIVATE, reinterpret_cast<char *>(i));
      curl_multi_add_handle(multi, h);
      active.push_back({h, headers, i});
      peak = std::max<uint32_t>(peak, static_cast<uint32_t>(active.size()));
      ++in_flight_;
      ++requests_;
    }
  };
  // Whatever is in flight when something throws goes back to the pool.
  struct Cleanup {
    CURLM *multi;
    std::vector<Active> &active;
    const HttpTransport &self;
    std::chrono::steady_clock::time_point began;
    const uint32_t &peak, keep;
    ~Cleanup() {
      for (const Active &a : active) {
        curl_multi_remove_handle(multi, a.h);
        curl_slist_free_all(a.headers);
        self.release(a.h);
        --self.in_flight_;
      }
      self.release_multi(multi, std::min(peak, keep));
      self.busy_ns_ += static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - began).count());
    }
  } cleanup{multi, active, *this, began, peak, keep};
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
          last_retry = o;
        } else if (fatal.status == ZT_OK) {
          fatal = o;
        }
      } else {
        observe(h, t);
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

uint64_t HttpTransport::probe_size() const {
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

}  // namespace zt

#endif  // ZT_HAVE_CURL
