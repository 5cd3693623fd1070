// Format v2 shards (spec §7): a root's parts may live in other files, named
// in its shard table by a label plus the file's exact size and whole-file
// digest. A ShardOpener turns a table entry into the file's bytes; the
// conventions of Appendix B are shipped here: positional (`<stem>-<name>.zt`
// beside the root: beneath its folder, as a v1 set's shards, or next to its
// URL) and by identity (a folder scanned for a file of that size and
// digest). The reader (src/reader.cc) opens every shard its parts name when
// the root is opened and checks the ladder's cheap rungs (§7.3: magic and
// version, exact size); verify checks the third (the whole-file digest).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "io/http_source.h"
#include "manifest/model.h"
#include "reader.h"

namespace zt {

// The most shards one root's parts may name that are opened (the bound of
// a v1 set, ZT_SET_MAX_SHARDS): each holds a mapping or a descriptor, and a
// remote one costs requests. Past it, no shard is opened and every part in
// one reports ZT_E_LIMIT.
constexpr size_t kMaxOpenedShards = 65536;

class ShardOpener {
 public:
  virtual ~ShardOpener() = default;
  // The bytes of the shard `e` names. Throws zt::Error: ZT_E_NOT_FOUND when
  // no file answers to it (its parts then report that when read), anything
  // else when one does but cannot be opened.
  virtual std::unique_ptr<Source> open(const Manifest::ShardEntry &e, const ReaderOptions &ropts) const = 0;
  // True when open() may run on several threads at once (remote shards:
  // all their tails are then fetched in parallel).
  virtual bool concurrent() const { return false; }
  // Called once, on the opening thread, with every entry open() will then be
  // asked for: an opener whose lookup must stay on that thread (a caller's
  // resolver) does it here, so that the opens themselves may run at once.
  virtual void prepare(const std::vector<const Manifest::ShardEntry *> &entries) const { (void)entries; }
};

// Appendix B: the file name a shard `name` has beside the root at
// `root_location` (a path or URL): `<stem>-<name>.zt`, where the stem is the
// root's last path component without a trailing ".zt".
std::string positional_shard_file(const std::string &root_location, const std::string &name);

// Positional, local: beneath the root's folder, one component at a time,
// never outside it (platform/open_beneath.h).
std::shared_ptr<const ShardOpener> positional_local_shards(const std::string &root_path);
// Positional, remote: next to the root's URL (its query string stays with
// the root), through `settings` (whose `shared` member is filled: one
// budget and one connection pool for the root's shards).
std::shared_ptr<const ShardOpener> positional_remote_shards(const std::string &root_url, UrlSettings settings);

// A caller's convention: `locate` maps an entry to a location, a path or an
// http(s)/s3 URL, opened as given (the caller chose it), or returns an empty
// string when it knows no such shard. Called on the opening thread, one call
// at a time (in prepare(), the C ABI's promise); the files it names are then
// opened at once, as positional remote shards are.
using ShardLocator = std::function<std::string(const Manifest::ShardEntry &)>;
std::shared_ptr<const ShardOpener> located_shards(ShardLocator locate, UrlSettings settings);

// Appendix B, by identity: the regular files directly in a folder whose
// names end in ".zt", listed by size once; find() returns the one whose size
// and whole-file digest are the shard's (the first in bytewise path order),
// or an empty string. Each group of same-size files is hashed once per
// algorithm, the first time a shard of that size is looked for, so a model
// of n equal-size shards costs n digests, not n². Thread-safe.
class IdentityScan {
 public:
  explicit IdentityScan(const std::string &folder);
  std::string find(uint64_t size, const std::string &digest) const;
  const std::string &folder() const { return folder_; }
  // How many whole-file digests find() has computed so far: the promise
  // above, counted (tests/core/v2_identity_scan_test.cc).
  uint64_t files_hashed() const;

 private:
  std::string folder_;
  std::map<uint64_t, std::vector<std::string>> by_size_;
  mutable std::mutex mu_;
  // (size, algorithm) -> digest string -> path
  mutable std::map<std::pair<uint64_t, int>, std::map<std::string, std::string>> digests_;
  mutable uint64_t hashed_ = 0;
};

// §7.3 rungs 1 and 2: a v2 footer (magic, version, the footer's own rules)
// and the exact size the table states. Throws a rejection naming the rule
// (ShardIdentity for a wrong size); `ctx` starts the message.
void check_shard_file(const Source &src, const Manifest::ShardEntry &e, const std::string &ctx);
// §7.3 rung 3: the whole-file digest. Throws ZT_E_DIGEST_MISMATCH
// (ShardIdentity) on a mismatch.
void check_shard_digest(const Source &src, const Manifest::ShardEntry &e, const std::string &ctx);

}  // namespace zt
