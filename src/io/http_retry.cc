#include "io/http_retry.h"

#ifdef ZT_HAVE_CURL

#include <algorithm>
#include <string>
#include <thread>

#include "util/error.h"

namespace zt {

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

std::chrono::milliseconds retry_backoff(uint32_t attempt) {
  return std::chrono::milliseconds(100u << std::min(attempt, 6u));
}

void run_with_retries(const HttpTransport &transport, std::vector<Transfer> &ts, uint32_t parallel) {
  const UrlSettings &s = transport.settings();
  std::vector<size_t> pending(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) pending[i] = i;
  for (uint32_t attempt = 0;; ++attempt) {
    std::vector<size_t> again;
    Outcome fatal, last;
    transport.run_once(ts, pending, again, fatal, last, parallel ? parallel : s.max_parallel);
    if (fatal.status != ZT_OK) fail(fatal.status, fatal.message);
    if (again.empty()) return;
    if (attempt >= s.retries || transport.past_deadline()) {
      fail(last.status,
           last.message + " (after " + std::to_string(attempt + 1) + " attempts" +
               (transport.past_deadline() ? "; the overall deadline of " + std::to_string(s.deadline_ms) + " ms passed"
                                          : std::string()) +
               ")");
    }
    std::this_thread::sleep_for(retry_backoff(attempt));
    for (size_t i : again) ts[i] = ts[i].fresh();
    pending.swap(again);
  }
}

}  // namespace zt

#endif  // ZT_HAVE_CURL
