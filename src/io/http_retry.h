// The retry policy of remote reads: which failures are worth another
// attempt, how long to wait before it, and when to give up (retries, the
// file's deadline). The transfer reports; this decides.
#pragma once

#ifdef ZT_HAVE_CURL

#include <curl/curl.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "io/http_transfer.h"

namespace zt {

// Failures of the network or the server that another attempt may cure:
// timeouts, refused or reset connections, truncated bodies, HTTP/2 stream
// errors. (5xx, 408 and 429 are judged by their status: http_response.cc.)
bool retryable_curl(CURLcode c);

// The wait before attempt number `attempt` + 1: 100 ms doubling, at most
// 6.4 s.
std::chrono::milliseconds retry_backoff(uint32_t attempt);

// Runs the transfers until each has succeeded, retrying the retryable
// failures after retry_backoff while settings().retries and the deadline
// allow. Throws the first failure that is not retried, or the last one
// with the number of attempts. parallel: the requests of the file in
// flight at once (0 = max_parallel; a bulk read's bulk_parallel).
void run_with_retries(const HttpTransport &transport, std::vector<Transfer> &ts, uint32_t parallel = 0);

}  // namespace zt

#endif  // ZT_HAVE_CURL
