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
#include <memory>
#include <string>

#include "io/http_source.h"
#include "manifest/model.h"
#include "reader.h"

namespace zt {

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
};

// Appendix B: the file name a shard `name` has beside the root at
// `root_location` (a path or URL): `<stem>-<name>.zt`, where the stem is the
// root's last path component without a trailing ".zt".
std::string positional_shard_file(const std::string &root_location, const std::string &name);

// Positional, local: beneath the root's folder, one component at a time,
// never outside it (set/open_beneath.h).
std::shared_ptr<const ShardOpener> positional_local_shards(const std::string &root_path);
// Positional, remote: next to the root's URL (its query string stays with
// the root), through `settings` (whose `shared` member is filled: one
// budget and one connection pool for the root's shards).
std::shared_ptr<const ShardOpener> positional_remote_shards(const std::string &root_url, UrlSettings settings);

// A caller's convention: `locate` maps an entry to a location, a path or an
// http(s)/s3 URL, opened as given (the caller chose it), or returns an empty
// string when it knows no such shard. Called on one thread at a time.
using ShardLocator = std::function<std::string(const Manifest::ShardEntry &)>;
std::shared_ptr<const ShardOpener> located_shards(ShardLocator locate, UrlSettings settings);

// Appendix B, by identity: the path of a regular file in `folder` whose name
// ends in ".zt", whose size is `size` and whose whole-file digest is
// `digest`; empty when none is. Only files of the right size are read.
std::string find_shard_by_identity(const std::string &folder, uint64_t size, const std::string &digest);

// §7.3 rungs 1 and 2: a v2 footer (magic, version, the footer's own rules)
// and the exact size the table states. Throws a rejection naming the rule
// (ShardIdentity for a wrong size); `ctx` starts the message.
void check_shard_file(const Source &src, const Manifest::ShardEntry &e, const std::string &ctx);
// §7.3 rung 3: the whole-file digest. Throws ZT_E_DIGEST_MISMATCH
// (ShardIdentity) on a mismatch.
void check_shard_digest(const Source &src, const Manifest::ShardEntry &e, const std::string &ctx);

}  // namespace zt
