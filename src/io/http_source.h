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

namespace zt {

struct UrlSettings {
  uint32_t connect_timeout_ms = 10000;
  uint32_t timeout_ms = 60000;
  uint32_t retries = 3;
  uint32_t max_parallel = 4;
  uint32_t max_redirects = 5;
  bool allow_any_scheme = false;
  uint64_t cache_bytes = uint64_t{64} << 20;
  uint64_t tail_bytes = uint64_t{64} << 10;
  uint64_t max_unranged_bytes = 0;
  uint64_t max_header_bytes = uint64_t{64} << 10;
  std::string bearer_token;
  std::string user_agent;
};

struct IoStats {
  uint64_t requests = 0;
  uint64_t bytes = 0;
  uint64_t cache_hits = 0;
};

// Throws ZT_E_UNSUPPORTED when built without libcurl.
// max_manifest_size: a footer naming a larger manifest is not prefetched.
std::unique_ptr<Source> open_http_source(const std::string &url, const UrlSettings &settings,
                                         uint64_t max_manifest_size);

// Counters of an HTTP source; zeros for any other.
IoStats http_stats(const Source &src);

// The URL with user:pass@ and the query string replaced by placeholders:
// what messages may show.
std::string redact_url(const std::string &url);

// True when the build has libcurl.
bool http_supported();

}  // namespace zt
