// Format v2 shards: the conventions of Appendix B and the verification
// ladder of §7.3 (set/v2_shards.h).
#include "set/v2_shards.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "digest/digest.h"
#include "platform/system.h"
#include "set/member_open.h"
#include "set/shard_index.h"
#include "util/error.h"
#include "util/redact_url.h"
#include "v2/footer.h"
#include "v2/rule.h"

namespace zt {
namespace {

constexpr size_t kPiece = size_t{4} << 20;

// The root's last path component (a URL's without its query string).
std::string last_component(const std::string &root_location) {
  const std::string path = is_remote_url(root_location) ? url_base(root_location) : root_location;
  size_t cut = path.find_last_of('/');
  if (platform::is_windows()) {  // '\\' separates too
    const size_t back = path.find_last_of('\\');
    if (back != std::string::npos && (cut == std::string::npos || back > cut)) cut = back;
  }
  return cut == std::string::npos ? path : path.substr(cut + 1);
}

std::string shard_ctx(const Manifest::ShardEntry &e) {
  return "shard '" + e.name + "'";
}

class PositionalLocal : public ShardOpener {
 public:
  explicit PositionalLocal(const std::string &root) : root_(root) {}
  std::unique_ptr<Source> open(const Manifest::ShardEntry &e, const ReaderOptions &ropts) const override {
    const std::string file = positional_shard_file(root_, e.name);
    const std::string ctx = shard_ctx(e) + " ('" + printable(file) + "' beside the root)";
    check_shard_location(file, ctx);
    // The folder is opened on the first shard asked for (a root without
    // shards, nearly every file, costs no descriptor), and closed with
    // this opener, once the root's shards are open.
    if (!folder_) folder_ = std::make_unique<IndexFolder>(root_);
    return open_member_source(resolve_shard_location(root_, file), file, ropts, nullptr, folder_.get(), ctx);
  }

 private:
  std::string root_;
  mutable std::unique_ptr<IndexFolder> folder_;  // open() is not concurrent()
};

class PositionalRemote : public ShardOpener {
 public:
  PositionalRemote(const std::string &root, UrlSettings s) : base_(url_base(root)), settings_(std::move(s)) {
    if (!settings_.shared) settings_.shared = make_remote_shared(settings_.cache_bytes);
  }
  std::unique_ptr<Source> open(const Manifest::ShardEntry &e, const ReaderOptions &ropts) const override {
    const std::string file = positional_shard_file(base_, e.name);
    const std::string ctx = shard_ctx(e) + " ('" + printable(file) + "' next to the root)";
    check_shard_location(file, ctx);
    return open_member_source(resolve_shard_location(base_, file), file, ropts, &settings_, nullptr, ctx);
  }
  bool concurrent() const override { return true; }

 private:
  std::string base_;
  UrlSettings settings_;
};

class Located : public ShardOpener {
 public:
  Located(ShardLocator locate, UrlSettings s) : locate_(std::move(locate)), settings_(std::move(s)) {
    if (!settings_.shared) settings_.shared = make_remote_shared(settings_.cache_bytes);
  }
  void prepare(const std::vector<const Manifest::ShardEntry *> &entries) const override {
    for (const Manifest::ShardEntry *e : entries) {
      Located::Answer &a = answers_[e];
      try {
        a.where = locate_(*e);
      } catch (const Error &err) {
        a.failure = std::make_unique<Error>(err);
      }
    }
  }
  std::unique_ptr<Source> open(const Manifest::ShardEntry &e, const ReaderOptions &ropts) const override {
    // answers_ is complete before the concurrent opens start: read only here.
    auto found = answers_.find(&e);
    if (found == answers_.end()) fail(ZT_E_INTERNAL, shard_ctx(e) + ": opened without prepare()");
    if (found->second.failure) throw *found->second.failure;
    const std::string &where = found->second.where;
    if (where.empty())
      fail(ZT_E_NOT_FOUND, shard_ctx(e) + ": the shard resolver found no file of size " + std::to_string(e.size) +
                               " and digest " + e.digest);
    const bool remote = is_remote_url(where);
    const std::string ctx = shard_ctx(e) + " (resolved to '" + (remote ? redact_url(where) : printable(where)) + "')";
    try {
      if (remote) return open_http_source(where, settings_, ropts.max_manifest_size);
      return ropts.access == ZT_ACCESS_PREAD ? open_pread_source(where) : open_mmap_source(where);
    } catch (const Error &e2) {
      fail(e2.status(), ctx + ": " + e2.what());
    }
  }
  bool concurrent() const override { return true; }

 private:
  struct Answer {
    std::string where;
    std::unique_ptr<Error> failure;  // the resolver's own status, kept for the shard's parts
  };
  ShardLocator locate_;
  UrlSettings settings_;
  mutable std::map<const Manifest::ShardEntry *, Answer> answers_;
};

}  // namespace

std::string positional_shard_file(const std::string &root_location, const std::string &name) {
  std::string stem = last_component(root_location);
  if (stem.size() > 3 && stem.compare(stem.size() - 3, 3, ".zt") == 0) stem.resize(stem.size() - 3);
  return stem + "-" + name + ".zt";
}

std::shared_ptr<const ShardOpener> positional_local_shards(const std::string &root_path) {
  return std::make_shared<PositionalLocal>(root_path);
}

std::shared_ptr<const ShardOpener> positional_remote_shards(const std::string &root_url, UrlSettings settings) {
  return std::make_shared<PositionalRemote>(root_url, std::move(settings));
}

std::shared_ptr<const ShardOpener> located_shards(ShardLocator locate, UrlSettings settings) {
  return std::make_shared<Located>(std::move(locate), std::move(settings));
}

void check_shard_file(const Source &src, const Manifest::ShardEntry &e, const std::string &ctx) {
  try {
    v2::read_footer(src, v2::kMaxManifestSize);
  } catch (const Error &err) {
    fail(err.status(), ctx + ": not a zTensor v2 file: " + err.what());
  }
  if (src.size() != e.size)
    v2::reject(v2::Rule::ShardIdentity, ctx + ": the file is " + std::to_string(src.size()) +
                                            " bytes, the root's shard table says " + std::to_string(e.size));
}

void check_shard_digest(const Source &src, const Manifest::ShardEntry &e, const std::string &ctx) {
  const ParsedDigest want = parse_digest(e.digest);
  if (want.alg != ZT_DIGEST_SHA256 && want.alg != ZT_DIGEST_XXH3)
    fail(ZT_E_UNSUPPORTED, ctx + ": whole-file digest '" + e.digest + "' is of an algorithm this library lacks");
  Digester d(want.alg);
  if (src.data()) {
    d.update(src.data(), static_cast<size_t>(src.size()));
  } else {
    std::vector<uint8_t> buf(kPiece);
    for (uint64_t done = 0; done < src.size();) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, src.size() - done));
      src.read(done, n, buf.data());
      d.update(buf.data(), n);
      done += n;
    }
  }
  const std::string got = d.finish_string();
  const ParsedDigest g = parse_digest(got);
  const bool same =
      want.alg == ZT_DIGEST_SHA256 ? std::memcmp(g.bytes, want.bytes, sizeof g.bytes) == 0 : g.xxh3 == want.xxh3;
  if (!same)
    v2::reject(v2::Rule::ShardIdentity,
               ctx + ": whole-file digest is " + got + ", the root's shard table says " + e.digest);
}

IdentityScan::IdentityScan(const std::string &folder) : folder_(folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(fs::u8path(folder), ec);
  if (ec) fail(ZT_E_IO, "shard scan: cannot list '" + printable(folder) + "': " + ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) fail(ZT_E_IO, "shard scan: listing '" + printable(folder) + "': " + ec.message());
    const fs::directory_entry &ent = *it;
    std::error_code e2;
    if (!ent.is_regular_file(e2) || e2) continue;
    const std::string name = ent.path().filename().u8string();
    if (name.size() < 3 || name.compare(name.size() - 3, 3, ".zt") != 0) continue;
    const uint64_t size = ent.file_size(e2);
    if (e2) continue;
    // '/' between the folder and the name on every platform (the library's
    // paths are UTF-8 with '/'; Windows' native form would join with '\\').
    by_size_[size].push_back(ent.path().generic_u8string());
  }
  for (auto &[size, paths] : by_size_) std::sort(paths.begin(), paths.end());  // whatever the listing order
}

std::string IdentityScan::find(uint64_t size, const std::string &digest) const {
  const ParsedDigest want = parse_digest(digest);
  if (want.alg != ZT_DIGEST_SHA256 && want.alg != ZT_DIGEST_XXH3) return {};
  std::string key = digest;
  for (char &c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::lock_guard<std::mutex> lock(mu_);
  auto [bucket, fresh] = digests_.try_emplace({size, static_cast<int>(want.alg)});
  if (fresh) {
    auto files = by_size_.find(size);
    if (files != by_size_.end())
      for (const std::string &path : files->second) {
        try {
          auto src = open_pread_source(path);
          if (src->size() != size) continue;  // changed since the listing
          Digester d(want.alg);
          ++hashed_;
          std::vector<uint8_t> buf(static_cast<size_t>(std::min<uint64_t>(kPiece, size)));
          for (uint64_t done = 0; done < size;) {
            const size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, size - done));
            src->read(done, n, buf.data());
            d.update(buf.data(), n);
            done += n;
          }
          bucket->second.emplace(d.finish_string(), path);  // the first path of a digest stays
        } catch (const Error &) {
          // unreadable: not a shard; a miss is reported by the caller
        }
      }
  }
  auto hit = bucket->second.find(key);
  return hit == bucket->second.end() ? std::string() : hit->second;
}

uint64_t IdentityScan::files_hashed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hashed_;
}

}  // namespace zt
