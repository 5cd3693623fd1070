// Format v2 shards in the C ABI (ztensor_set.h): zt_open_sharded with a
// caller's resolver, and the identity scan shipped as one. The conventions
// and the ladder are src/set/v2_shards.h; this file only adapts.
#include <cstring>
#include <memory>

#include "handles.h"
#include "io/http_source.h"
#include "set/v2_shards.h"
#include "set/v2_split.h"
#include "url_settings.h"
#include "ztensor_set.h"

using namespace zt;
using namespace zt::capi;

namespace {
constexpr uint32_t kScanTag = 0x5a545343;  // "ZTSC"
}

struct zt_shard_scan {
  uint32_t tag = kScanTag;
  IdentityScan scan;
  explicit zt_shard_scan(const std::string &folder) : scan(folder) {}
};

namespace {

// The caller's resolver as a ShardLocator: asked on the opening thread.
ShardLocator locator_of(const zt_shard_options &so, const std::string &root) {
  return [resolve = so.resolve, user = so.user, root](const Manifest::ShardEntry &e) -> std::string {
    zt_shard_request req{};
    req.struct_size = sizeof req;
    req.root = root.c_str();
    req.name = e.name.c_str();
    req.size = e.size;
    req.digest = e.digest.c_str();
    std::string buf(ZT_SHARD_LOCATION_MAX, '\0');
    const zt_status st = resolve(user, &req, &buf[0], buf.size());
    if (st == ZT_E_NOT_FOUND) return {};
    if (st != ZT_OK) fail(st, "shard '" + e.name + "': the resolver failed (" + zt_status_str(st) + ")");
    const size_t len = ::strnlen(buf.data(), buf.size());
    if (len == buf.size())
      fail(ZT_E_INVALID_ARG, "shard '" + e.name + "': the resolver wrote no NUL within ZT_SHARD_LOCATION_MAX bytes");
    if (len == 0) fail(ZT_E_INVALID_ARG, "shard '" + e.name + "': the resolver returned ZT_OK and an empty location");
    buf.resize(len);
    return buf;
  };
}

}  // namespace

extern "C" {

ZT_API void zt_shard_options_init(zt_shard_options *o) {
  init_struct(o);
}

ZT_API zt_status zt_open_sharded(const char *root, const zt_open_options *opts, const zt_url_options *uopts,
                                 const zt_shard_options *sopts, zt_file **out) {
  return guard([&] {
    if (!out) invalid("zt_open_sharded: out is NULL");
    *out = nullptr;
    if (!root) invalid("zt_open_sharded: root is NULL");
    zt_shard_options so;
    zt_shard_options_init(&so);
    if (sopts) {
      if (!ZT_HAS_FIELD(sopts, user))
        invalid("zt_open_sharded: zt_shard_options.struct_size is not set (call zt_shard_options_init)");
      so.resolve = sopts->resolve;
      so.user = sopts->user;
    }
    ReaderOptions ropts = to_reader_options(opts);
    const std::string where = root;
    if (is_remote_url(where)) {
      const UrlSettings s = to_url_settings(uopts, "zt_open_sharded");
      ropts.shards = so.resolve ? located_shards(locator_of(so, where), s) : positional_remote_shards(where, s);
      return finish_open(Reader::open_source(open_http_source(where, s, ropts.max_manifest_size), ropts), out);
    }
    if (so.resolve) ropts.shards = located_shards(locator_of(so, where), to_url_settings(uopts, "zt_open_sharded"));
    return finish_open(Reader::open(where, ropts), out);
  });
}

ZT_API zt_status zt_shard_scan_open(const char *folder, zt_shard_scan **out) {
  return guard([&] {
    if (!out) invalid("zt_shard_scan_open: out is NULL");
    *out = nullptr;
    if (!folder) invalid("zt_shard_scan_open: folder is NULL");
    auto scan = std::make_unique<zt_shard_scan>(folder);
    register_handle(scan.get());
    *out = scan.release();
    return ZT_OK;
  });
}

ZT_API zt_status zt_shard_scan_close(zt_shard_scan *scan) {
  return guard([&] {
    if (!scan) return ZT_OK;
    if (!unregister_handle(scan) || scan->tag != kScanTag)
      fail(ZT_E_MISUSE, "zt_shard_scan_close: handle already closed or not a zt_shard_scan");
    scan->tag = 0;
    delete scan;
    return ZT_OK;
  });
}

ZT_API zt_status zt_shard_resolve_by_identity(void *user, const zt_shard_request *req, char *location,
                                              size_t capacity) {
  return guard([&] {
    auto *scan = static_cast<zt_shard_scan *>(user);
    if (!scan) invalid("zt_shard_resolve_by_identity: user (a zt_shard_scan) is NULL");
    if (!is_live(scan) || scan->tag != kScanTag)
      fail(ZT_E_MISUSE, "zt_shard_resolve_by_identity: user is not an open zt_shard_scan");
    if (!req || !req->digest) invalid("zt_shard_resolve_by_identity: req is NULL");
    if (!location && capacity) invalid("zt_shard_resolve_by_identity: location is NULL");
    const std::string found = scan->scan.find(req->size, req->digest);
    if (found.empty())
      fail(ZT_E_NOT_FOUND, "zt_shard_resolve_by_identity: no .zt file in '" + printable(scan->scan.folder()) +
                               "' has size " + std::to_string(req->size) + " and digest " + req->digest);
    if (found.size() + 1 > capacity)
      fail(ZT_E_BUFFER_TOO_SMALL,
           "zt_shard_resolve_by_identity: the path needs " + std::to_string(found.size() + 1) + " bytes");
    std::memcpy(location, found.c_str(), found.size() + 1);
    return ZT_OK;
  });
}

ZT_API zt_status zt_v2_make_sharded(const char *root_path, const char *const *shard_paths,
                                    const char *const *shard_names, size_t count, zt_digest_alg alg, uint32_t sync) {
  return guard([&] {
    if (!root_path) invalid("zt_v2_make_sharded: root_path is NULL");
    if (count && (!shard_paths || !shard_names)) invalid("zt_v2_make_sharded: shard_paths or shard_names is NULL");
    if (count == 0) invalid("zt_v2_make_sharded: no shards");
    std::vector<ShardPiece> pieces;
    for (size_t i = 0; i < count; ++i) {
      if (!shard_paths[i] || !shard_names[i])
        invalid(("zt_v2_make_sharded: shard " + std::to_string(i) + " has a NULL path or name").c_str());
      pieces.push_back({shard_paths[i], shard_names[i]});
    }
    make_v2_sharded(pieces, alg, root_path, sync != 0);
    return ZT_OK;
  });
}

}  // extern "C"
