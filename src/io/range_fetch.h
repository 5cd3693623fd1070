// Fetching a plan of ranges for a remote source: the cost model's merges,
// multi-range packing where the server takes it, large ranges cut into
// pieces for the connections, one wave of requests; then each group's
// pieces filled. http_source.cc decides what to fetch; this, how.
#pragma once

#ifdef ZT_HAVE_CURL

#include <cstdint>
#include <vector>

#include "container/source.h"
#include "io/http_transfer.h"
#include "io/range_plan.h"

namespace zt {

// ranges[i] is the span of groups[which[i]]; needed: the bytes of their
// pieces with a destination (what the overfetch bound is a share of).
// multi: ask several ranges per request (the caller knows the server has
// not refused it). Throws as run_with_retries does.
void fetch_ranges(const HttpTransport &net, const Source::Group *groups, const std::vector<NeededRange> &ranges,
                  const std::vector<size_t> &which, uint64_t needed, bool multi);

// Copies consecutive bytes at src into the pieces (a null dst skips its len).
void scatter_pieces(const uint8_t *src, const Source::Piece *pieces, size_t n);

}  // namespace zt

#endif  // ZT_HAVE_CURL
