// A Source over HTTP(S) ranged GETs (zt_open_url), built on libcurl when the
// `curl` feature is on. What it promises (docs/remote.md): open costs at most
// two round trips; reads go through a size-limited block cache or, when
// large, straight into the caller's buffer in parallel ranges; transient
// failures are retried with backoff; a changed object is ZT_E_CHANGED; a
// server that ignores Range is refused unless the object is small enough;
// no credential ever reaches an error message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "container/source.h"
#include "util/redact_url.h"

namespace zt {

// What the remote sources of one sharded set share: one memory budget for
// their held tails and cached blocks, and one pool of idle connections
// (so n shards cost neither n caches nor n sockets). Opaque here.
struct RemoteShared;
std::shared_ptr<RemoteShared> make_remote_shared(uint64_t budget_bytes);

struct UrlSettings {
  uint32_t connect_timeout_ms = 10000;
  uint32_t timeout_ms = 60000;
  uint32_t retries = 3;
  // 1.3: 16 requests in flight (aria2c -x 16; hf_transfer and aws-c-s3
  // run more), large reads cut into pieces of up to chunk_bytes (when 0,
  // 32 round trips' worth of the measured link within 8..64 MiB).
  uint32_t max_parallel = 16;
  // max_parallel came from the caller: a hard cap, also for bulk reads.
  // Otherwise a bulk read may use more connections when the measured
  // link makes them worthwhile (HttpTransport::bulk_parallel).
  bool max_parallel_set = false;
  uint32_t max_redirects = 5;
  bool allow_any_scheme = false;
  uint64_t cache_bytes = uint64_t{64} << 20;
  uint64_t tail_bytes = uint64_t{64} << 10;
  uint64_t max_unranged_bytes = 0;
  uint64_t max_header_bytes = uint64_t{64} << 10;
  std::string bearer_token;
  std::string user_agent;
  // 1.2: stalls and an overall end (0 = off). A request whose rate stays
  // below low_speed_bytes per second for low_speed_time_ms is a timeout
  // (retried like one); no request of the file runs past open + deadline_ms.
  uint32_t low_speed_bytes = 0;
  uint32_t low_speed_time_ms = 10000;
  uint64_t deadline_ms = 0;
  // 1.2: s3:// (s3_location.h). Empty = found in the environment or the
  // AWS files; s3_addressing 0 = auto, 1 = path-style, 2 = virtual-hosted.
  std::string s3_region, s3_endpoint, s3_profile;
  std::string aws_access_key_id, aws_secret_access_key, aws_session_token;
  uint32_t s3_addressing = 0;
  bool s3_unsigned = false;
  // 1.3: the range cost model (range_plan.h). 0 = measured from the
  // responses. Gaps fetched to save requests stay within
  // max_overfetch_percent of the bytes needed.
  uint32_t rtt_ms = 0;
  uint64_t link_bytes_per_s = 0;
  uint32_t max_overfetch_percent = 50;
  uint64_t chunk_bytes = 0;  // 0 = from the link (LinkModel::chunk_cap)
  // Internal (sets): shared budget and connections; null = the source's own.
  std::shared_ptr<RemoteShared> shared;
  // Internal: the open asks for the header block (magic) with the tail, in
  // parallel. Off for a JSON index, read whole and never a container.
  bool speculative_head = true;
  // Internal: the caller will read most of the file (the `prefetch` open
  // option, a whole-file load): the open also connects the connections
  // the load will use, while its own requests are in flight (warm_bulk in
  // http_source.cc). Off for a set's shards.
  bool warm_bulk = false;
};

struct IoStats {
  uint64_t requests = 0;
  uint64_t bytes = 0;
  uint64_t cache_hits = 0;
  uint64_t bytes_needed = 0;  // what readers asked for (the open's bytes included)
  uint64_t wait_ns = 0;       // time readers waited on requests, summed over threads
};

// url: http://, https:// or s3://bucket/key (signed with AWS SigV4 when
// credentials are found). Throws ZT_E_UNSUPPORTED when built without libcurl.
// max_manifest_size: a footer naming a larger manifest is not prefetched.
std::unique_ptr<Source> open_http_source(const std::string &url, const UrlSettings &settings,
                                         uint64_t max_manifest_size);

// Counters of an HTTP source; zeros for any other.
IoStats http_stats(const Source &src);

// Opens n connections to url's server into settings.shared's pool (one
// one-byte request each, in parallel, failures ignored), so that a set's
// shards, opened next, need no connect of their own. Run while the set's
// index is in flight: the connects overlap its round trip.
void warm_connections(const std::string &url, const UrlSettings &settings, unsigned n);
// Closes the pool's idle connections beyond `keep` multi handles: a set
// keeps, once open, what its reads use, not what its open warmed.
void trim_idle_connections(RemoteShared &shared, size_t keep);

// The URL with user:pass@ and the query string replaced by placeholders
// (util/redact_url.h, the one rule), escaped by printable(): what messages
// may show. A local path is only escaped. (is_remote_url: that header.)
std::string redact_url(const std::string &url);

// True when the build has libcurl.
bool http_supported();

}  // namespace zt
