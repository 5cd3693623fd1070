// The transfer of a remote source: ranged GETs of one object on libcurl
// multi handles, with a pool of connections that the shards of a set share.
// What a response means (http_response.cc) and when to try again
// (http_retry.h) are decided elsewhere; this file moves bytes.
#pragma once

#ifdef ZT_HAVE_CURL

#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "io/block_cache.h"
#include "io/http_source.h"
#include "io/multipart.h"
#include "io/range_plan.h"
#include "io/s3_location.h"
#include "platform/process.h"
#include "ztensor.h"

namespace zt {

// One ranged GET (or, for the first request, a suffix range whose start is
// learned from Content-Range). Filled by libcurl's callbacks.
struct Transfer {
  // Request
  uint64_t offset = 0;       // absolute start; unused for a suffix request
  uint64_t len = 0;          // bytes wanted (suffix length for a suffix request)
  bool suffix = false;       // "bytes=-len"
  bool allow_whole = false;  // a 200 with the whole object is accepted (first request)
  bool clip = false;         // the open's header block: a smaller object may answer with less (to its end)
  uint8_t *dst = nullptr;    // len bytes (suffix: len bytes of room)
  // Instead of dst: bytes are appended as they arrive, so a range whose
  // length only a footer claims is never zero-filled ahead of its bytes.
  std::vector<uint8_t> *sink = nullptr;
  // A connection of its own, opened at once: no waiting (PIPEWAIT) for
  // one being opened to say whether it multiplexes (warm_bulk).
  bool own_connection = false;
  // A shorter limit than the settings' (ms; 0 = theirs): a warm-up must
  // not hold an open longer than a few seconds.
  uint64_t timeout_ms = 0;
  // Instead of offset/len/dst: several ranges in one request ("Range:
  // bytes=a-b,c-d,..."), answered as multipart/byteranges (in file order).
  std::vector<RangePart> parts;
  // Instead of dst: the body laid over these pieces in order (a null dst
  // skips its bytes), so a request that covers several readers' ranges
  // fills their buffers without a staging copy. The lengths sum to len.
  std::vector<Source::Piece> scatter;
  size_t scatter_at = 0;      // the piece the next body byte goes to
  uint64_t scatter_used = 0;  // of which this many are filled
  // Response
  long code = 0;
  bool have_range = false;
  uint64_t range_start = 0, range_end = 0, range_total = 0;
  bool total_unknown = false;
  std::string etag, last_modified;
  std::string bucket_region;  // S3's x-amz-bucket-region
  std::string content_type;
  std::unique_ptr<MultipartRanges> multipart;  // the parser of a multi-range answer
  bool multirange_refused = false;             // a 200 or a plain 206 to a multi-range request
  uint64_t multipart_bytes = 0;                // its body so far, bounded like a Content-Length
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

  // The same request, its response forgotten (for another attempt).
  Transfer fresh() const;
};

// What became of one transfer (http_response.cc): ok, a failure worth
// another attempt, or a final one.
struct Outcome {
  zt_status status = ZT_OK;
  bool retry = false;
  std::string message;
};

// What the remote sources of one set share (http_source.h): the memory
// budget of their tails and cached blocks, and idle curl handles. An idle
// multi handle keeps its connections open (libcurl keeps a multi's
// connections in the multi), so the next read of any shard reuses them,
// HTTP/2 streams included, instead of connecting again.
//
// Fork (issue 37): a child inherits the idle handles, whose connections are
// the parent's sockets (used from two processes, or closed with a TLS
// close_notify, they break the parent's stream), and the locks, which a
// thread that is not in the child may hold. A source in a forked child
// touches neither: each transfer gets handles of its own, cleaned up after
// it; reads bypass the block cache (its lock) and the budget; the parent's
// handles are leaked, never closed.
struct RemoteShared {
  explicit RemoteShared(uint64_t b) : budget(b) {}
  ~RemoteShared();
  bool forked() const { return current_process_id() != pid; }
  const unsigned long pid = current_process_id();
  MemoryBudget budget;
  std::mutex pool_mu;
  std::vector<CURL *> idle;
  // Idle multi handles, fewest connections first: a read takes the last,
  // so a bulk load finds the connections warmed for it (warm_bulk).
  struct IdleMulti {
    CURLM *multi;
    uint32_t connections;  // the most requests it last had in flight
  };
  std::vector<IdleMulti> idle_multi;
};

// The ranged GETs of one object and the checks of every response against
// the first one (size, validators).
class HttpTransport {
 public:
  // url: what is fetched (for s3://, the endpoint's URL); path: the
  // redacted location for messages; s3: null for http(s).
  HttpTransport(std::string url, std::string path, UrlSettings &settings, const S3Location *s3,
                std::shared_ptr<RemoteShared> shared);

  const std::string &path() const { return path_; }
  const UrlSettings &settings() const { return s_; }
  bool is_http() const { return http_; }
  RemoteShared &shared() const { return *shared_; }
  LinkModel &link() const { return link_; }
  // The largest request a read is cut into (chunk_bytes, or the link's).
  uint64_t chunk_cap() const { return link_.chunk_cap(s_.chunk_bytes); }

  // The connections a bulk read of len bytes uses: max_parallel when the
  // caller set it (a hard cap), else as many as the measured link makes
  // worthwhile (LinkModel::connections_for), from max_parallel's default
  // up to kMaxAdaptiveParallel.
  uint32_t bulk_parallel(uint64_t len) const;
  static constexpr uint32_t kMaxAdaptiveParallel = 64;

  // One attempt at each of ts[which], up to `parallel` of the object's
  // requests in flight (across threads) on one multi handle. A failure
  // worth retrying goes to `again` (its outcome to last_retry), the first
  // other one to `fatal`, which stops new requests.
  void run_once(std::vector<Transfer> &ts, const std::vector<size_t> &which, std::vector<size_t> &again, Outcome &fatal,
                Outcome &last_retry, uint32_t parallel) const;
  // The object's size by a HEAD request (non-HTTP schemes only).
  uint64_t probe_size() const;

  // What the first response said; later ones must agree (judge).
  void learn(const std::string &etag, const std::string &last_modified, uint64_t size);
  // Set by judge (open only) when the server answered "bytes=-N" from the
  // start of the object: the object's size.
  uint64_t no_suffix_total() const { return no_suffix_total_; }

  // The deadline of the whole file (deadline_ms), and the per-request
  // timeout cut to what is left of it.
  bool past_deadline() const;
  uint64_t request_timeout_ms() const;

  // No credential may leave through a message: libcurl's text can quote
  // the URL it was given.
  std::string scrub(const std::string &msg) const;

  // Whether the server answers multi-range requests: 0 not known yet,
  // 1 yes, -1 no (it sent the whole object or one range: never asked again).
  int multirange() const { return multirange_.load(); }

  uint64_t requests() const { return requests_.load(); }
  uint64_t bytes() const { return bytes_.load(); }
  uint64_t busy_ns() const { return busy_ns_.load(); }

 private:
  Outcome judge(const Transfer &t, CURLcode rc) const;                       // http_response.cc
  std::string s3_failure(const Transfer &t, const std::string &what) const;  // http_response.cc
  std::string changed_text(const std::string &detail) const;
  void configure(CURL *h, Transfer &t, curl_slist **headers) const;
  CURL *acquire() const;
  void release(CURL *h) const;
  // A multi handle and the connections it holds (at most its MAXCONNECTS).
  RemoteShared::IdleMulti acquire_multi() const;
  void release_multi(CURLM *m, uint32_t connections) const;
  void observe(CURL *h, const Transfer &t) const;

  std::string url_, path_;
  std::string ca_file_;  // CURL_CA_BUNDLE (s3: AWS_CA_BUNDLE first); empty = libcurl's store
  UrlSettings &s_;
  const S3Location *s3_;
  std::shared_ptr<RemoteShared> shared_;
  bool http_ = true;
  std::chrono::steady_clock::time_point deadline_;
  bool size_known_ = false;
  uint64_t size_ = 0;
  std::string etag_, last_modified_;
  mutable uint64_t no_suffix_total_ = 0;
  mutable LinkModel link_;
  mutable std::atomic<uint64_t> requests_{0}, bytes_{0}, busy_ns_{0};
  mutable std::atomic<uint32_t> in_flight_{0};
  mutable std::atomic<int> multirange_{0};
};

bool starts_with_nocase(const std::string &s, const char *prefix);

}  // namespace zt

#endif  // ZT_HAVE_CURL
