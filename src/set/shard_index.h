// The JSON index of a sharded checkpoint (docs/sharding.md): parsing it with
// the limits an untrusted index needs, and the rules a shard location must
// follow so that an index can never point outside its own folder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace zt {

struct ShardIndex {
  std::string metadata_json = "null";  // the "metadata" member, re-serialised
  std::vector<std::string> shards;     // distinct locations, sorted bytewise
  // Every tensor of weight_map and the index into `shards` of its shard,
  // sorted by name (names are unique: a duplicate key is refused).
  std::vector<std::pair<std::string, size_t>> tensors;
};

// Parses index text. `what` names the index in messages. Throws zt::Error:
// ZT_E_MANIFEST (not JSON, wrong shape, bad location), ZT_E_DUPLICATE_KEY,
// ZT_E_CBOR_DEPTH (nesting beyond 64), ZT_E_LIMIT (more than max_shards).
// O(n log n) in the text's size.
ShardIndex parse_shard_index(std::string_view text, const std::string &what, size_t max_shards);

// Throws ZT_E_MANIFEST unless `location` is a relative path inside the
// index's folder: not empty, not absolute, no URL scheme, no backslash or
// NUL, no empty, "." or ".." component, and no component that any common
// server reads as one once it decodes %XX / %uXXXX (three rounds), cuts a
// ';' parameter, query or fragment, folds overlong or look-alike dots and
// drops white space ("%2e%2e", "..;", ". .", "%c0%ae%c0%ae", "..."): the
// same rule for local and remote sets (docs/sharding.md).
void check_shard_location(const std::string &location, const std::string &ctx);

// Where a checked shard location lives, given the index's own location.
std::string resolve_shard_location(const std::string &index_location, const std::string &shard);

}  // namespace zt
