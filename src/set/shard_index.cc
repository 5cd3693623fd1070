// Parsing of a sharded checkpoint's JSON index. nlohmann::json keeps objects
// in sorted maps (O(log n) per key) and would silently keep the last of two
// equal keys, so a parser callback tracks the keys of every open object and
// refuses a repeat: a tensor listed twice must not quietly lose one shard.
#include "set/shard_index.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "util/error.h"

namespace zt {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxDepth = 64;

// nlohmann's parser keeps a stack per nesting level: bound the depth before
// handing it hostile text. One linear pass.
void check_depth(std::string_view text, const std::string &what) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth)
        fail(ZT_E_CBOR_DEPTH, what + ": JSON nests deeper than " + std::to_string(kMaxDepth) + " levels (offset " +
                                  std::to_string(i) + ")");
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
}

json parse_unique_keys(std::string_view text, const std::string &what) {
  std::vector<std::set<std::string>> open;  // keys seen in each open object
  std::string duplicate;
  json::parser_callback_t cb = [&](int, json::parse_event_t ev, json &parsed) {
    if (ev == json::parse_event_t::object_start) {
      open.emplace_back();
    } else if (ev == json::parse_event_t::object_end) {
      if (!open.empty()) open.pop_back();
    } else if (ev == json::parse_event_t::key && !open.empty()) {
      if (!open.back().insert(parsed.get<std::string>()).second && duplicate.empty())
        duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json root = json::parse(text.begin(), text.end(), cb, /*allow_exceptions=*/false);
  if (root.is_discarded()) fail(ZT_E_MANIFEST, what + ": the index is not valid JSON (or not UTF-8)");
  if (!duplicate.empty())
    fail(ZT_E_DUPLICATE_KEY, what + ": key '" + printable(duplicate) + "' appears twice in one JSON object");
  return root;
}

// A path component as a web server would see it after decoding %XX
// escapes, up to three times (double-encoded "%252e%252e" too).
std::string percent_decoded(const std::string &part) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string cur = part;
  for (int round = 0; round < 3 && cur.find('%') != std::string::npos; ++round) {
    std::string next;
    for (size_t i = 0; i < cur.size(); ++i) {
      if (cur[i] == '%' && i + 2 < cur.size() && hex(cur[i + 1]) >= 0 && hex(cur[i + 2]) >= 0) {
        next += static_cast<char>(hex(cur[i + 1]) * 16 + hex(cur[i + 2]));
        i += 2;
      } else {
        next += cur[i];
      }
    }
    if (next == cur) break;
    cur = std::move(next);
  }
  return cur;
}

}  // namespace

void check_shard_location(const std::string &loc, const std::string &ctx) {
  auto bad = [&](const std::string &why) {
    fail(ZT_E_MANIFEST, ctx + ": shard location '" + printable(loc) + "' " + why +
                            " (rule: shard locations are relative paths inside the index's folder)");
  };
  if (loc.empty()) bad("is empty");
  if (loc.find('\0') != std::string::npos) bad("contains a NUL byte");
  if (loc.find('\\') != std::string::npos) bad("contains a backslash");
  if (loc.front() == '/') bad("is absolute");
  if (loc.find("://") != std::string::npos || loc.find(':') != std::string::npos) bad("has a URL scheme or drive");
  size_t start = 0;
  while (true) {
    const size_t slash = loc.find('/', start);
    const std::string part = loc.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty()) bad("has an empty path component");
    if (part == "." || part == "..") bad("has a '" + part + "' path component");
    // A remote index's shard is fetched by URL and servers decode %XX
    // before resolving dot segments: "%2e%2e" is ".." to them.
    if (part.find('%') != std::string::npos) {
      const std::string dec = percent_decoded(part);
      if (dec == "." || dec == "..") bad("has a percent-encoded '" + dec + "' path component");
      if (dec.find_first_of(std::string("/\\\0", 3)) != std::string::npos)
        bad("has a percent-encoded '/', '\\' or NUL");
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
}

std::string resolve_shard_location(const std::string &index_location, const std::string &shard) {
  const size_t slash = index_location.rfind('/');
  if (slash == std::string::npos) return shard;
  return index_location.substr(0, slash + 1) + shard;
}

ShardIndex parse_shard_index(std::string_view text, const std::string &what, size_t max_shards) {
  check_depth(text, what);
  json root = parse_unique_keys(text, what);
  if (!root.is_object()) fail(ZT_E_MANIFEST, what + ": the index is not a JSON object");
  ShardIndex idx;
  auto meta = root.find("metadata");
  if (meta != root.end() && !meta->is_null()) {
    if (!meta->is_object()) fail(ZT_E_MANIFEST, what + ": \"metadata\" is not a JSON object");
    idx.metadata_json = meta->dump();
  }
  auto wm = root.find("weight_map");
  if (wm == root.end()) fail(ZT_E_MANIFEST, what + ": \"weight_map\" is missing");
  if (!wm->is_object()) fail(ZT_E_MANIFEST, what + ": \"weight_map\" is not a JSON object");

  std::map<std::string, size_t> shard_ids;  // location → provisional id (first appearance)
  std::vector<std::pair<std::string, size_t>> tensors;
  tensors.reserve(wm->size());
  for (auto it = wm->begin(); it != wm->end(); ++it) {
    const std::string ctx = what + ": tensor '" + printable(it.key()) + "'";
    if (!it.value().is_string()) fail(ZT_E_MANIFEST, ctx + ": its shard is not a JSON string");
    const std::string &loc = it.value().get_ref<const std::string &>();
    auto found = shard_ids.find(loc);
    if (found == shard_ids.end()) {
      check_shard_location(loc, ctx);
      if (shard_ids.size() >= max_shards)
        fail(ZT_E_LIMIT, what + ": more than " + std::to_string(max_shards) + " shards");
      found = shard_ids.emplace(loc, shard_ids.size()).first;
    }
    tensors.emplace_back(it.key(), found->second);  // json objects iterate sorted: stays sorted
  }
  // Number the shards in sorted order of their locations.
  std::vector<size_t> renumber(shard_ids.size());
  for (const auto &[loc, id] : shard_ids) {
    renumber[id] = idx.shards.size();
    idx.shards.push_back(loc);
  }
  for (auto &t : tensors) t.second = renumber[t.second];
  idx.tensors = std::move(tensors);
  return idx;
}

}  // namespace zt
