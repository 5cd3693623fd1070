// The set-opening engine shared by v1 sets (an index.json naming shard files,
// ztensor_set.h) and v2 shards (parts in other files, spec §7): reading a
// small index at a location, opening one member file beneath the root's
// folder or next to the root's URL, and opening many members at once.
// capi/set_c.cc (zt_open_set) and the v2 shard resolvers (set/v2_shards.h)
// both stand on it; nothing here knows the C ABI's handles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/http_source.h"
#include "platform/open_beneath.h"
#include "reader.h"

namespace zt {

// A location without its query string and fragment: member locations are
// resolved against its path (a signed query string belongs to the root
// object alone). An s3:// key is literal: '?' and '#' are part of it.
std::string url_base(const std::string &url);

// The whole text at `location` (a local path, or an http(s)/s3 URL read
// with `remote`), refused with ZT_E_MANIFEST_LIMIT before it is read if
// larger than `limit`. `what` names it in messages ("index 'x'").
std::string read_index_text(const std::string &location, uint64_t limit, const UrlSettings *remote,
                            const std::string &what);

// Opens a member's bytes as a Source: `label` (a checked relative location)
// beneath `folder`, or, when folder is null, the URL `location` with
// `remote` (whose `shared` member gives all members one budget and one
// connection pool). Errors are prefixed with `ctx` unless they start with it.
std::unique_ptr<Source> open_member_source(const std::string &location, const std::string &label,
                                           const ReaderOptions &ropts, const UrlSettings *remote,
                                           const IndexFolder *folder, const std::string &ctx);

// Runs open(i) for i in [0, count): one after another for local members,
// on up to 16 threads when `concurrent` (remote members: each open is one
// or two round trips, so 8 members cost about 2-3 round trips, not 16).
// The first failure in index order is rethrown once all have finished.
void open_members(size_t count, bool concurrent, const std::function<void(size_t)> &open);

// A v1 set (docs/sharding.md): the index at `index_location` read and
// checked, every shard it names opened (beneath the index's folder, or next
// to its URL), and index and shards checked against each other both ways.
struct OpenedSet {
  std::string metadata_json;
  std::vector<std::string> locations;           // as the index writes them, sorted
  std::vector<std::shared_ptr<Reader>> shards;  // one per location
  struct Entry {
    size_t shard;   // into shards / locations
    size_t object;  // into that shard's manifest().objects
  };
  std::vector<Entry> objects;  // shard order, then manifest order
  std::map<std::string, Entry, std::less<>> by_name;
};

// remote: the URL settings when index_location is an http(s)/s3 URL (its
// `shared` member is filled here), else null. index_limit bounds the
// index's size; max_shards its shard count.
OpenedSet open_index_set(const std::string &index_location, const ReaderOptions &ropts, uint64_t index_limit,
                         UrlSettings *remote, size_t max_shards);

}  // namespace zt
