// Sharded checkpoints (ztensor_set.h): an index plus the shards it names,
// opened together and checked against each other, presented as one list of
// ordinary zt_object handles. The index and every shard are reached through
// read_index() and open_member(), the two places that know what a location
// is: a local path, or an http(s) URL (zt_open_url, docs/remote.md).
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <string_view>
#include <thread>

#include "handles.h"
#include "io/http_source.h"
#include "io/s3_location.h"
#include "platform/file.h"
#include "platform/open_beneath.h"
#include "set/shard_index.h"
#include "url_settings.h"
#include "ztensor_io.h"
#include "ztensor_set.h"

using namespace zt;
using namespace zt::capi;

namespace zt::capi {
constexpr uint32_t kSetTag = 0x5a545331;  // "ZTS1"
}

struct zt_set {
  uint32_t tag = zt::capi::kSetTag;
  std::vector<zt_file *> shards;  // owned: closed by zt_set_close
  std::vector<std::string> locations;
  std::string metadata_json;
  std::vector<const zt_object *> objects;  // shard order, then manifest order
  struct Entry {
    const zt_object *obj;
    size_t shard;  // index into shards / locations
  };
  std::map<std::string, Entry, std::less<>> by_name;

  ~zt_set() {
    for (zt_file *f : shards) zt_close(f);
  }
};

namespace {

uint64_t index_limit(const zt_open_options *o) {
  uint64_t limit = kMaxManifestSize;
  if (o && o->struct_size >= offsetof(zt_open_options, max_manifest_size) + sizeof o->max_manifest_size &&
      o->max_manifest_size && o->max_manifest_size < limit)
    limit = o->max_manifest_size;
  return limit;
}

bool is_url(const std::string &s) {
  return is_remote_url(s);
}

// An index URL without its query string and fragment: shard locations are
// resolved against its path (a signed query string belongs to the index
// object alone). An s3:// key is literal: '?' and '#' are part of it.
std::string url_base(const std::string &url) {
  if (is_s3_url(url)) return url;
  return url.substr(0, url.find_first_of("?#"));
}

// The index text, refused before it is read if larger than the limit.
std::string read_index(const std::string &location, uint64_t limit, const zt_url_options *uopts) {
  if (is_url(location)) {
    auto src = open_http_source(location, to_url_settings(uopts, "zt_open_set_url"), limit);
    if (src->size() > limit)
      fail(ZT_E_MANIFEST_LIMIT, "index '" + redact_url(location) + "': " + std::to_string(src->size()) +
                                    " bytes exceed the limit of " + std::to_string(limit) +
                                    " (zt_open_options.max_manifest_size)");
    std::string text(static_cast<size_t>(src->size()), '\0');
    if (!text.empty()) src->read(0, text.size(), text.data());
    return text;
  }
  // A FIFO, a device or a folder is refused at once (platform/file.h).
  const platform::InputFile file(location, "index '" + printable(location) + "'");
  const uint64_t size = file.size();
  if (size > limit)
    fail(ZT_E_MANIFEST_LIMIT, "index '" + printable(location) + "': " + std::to_string(size) +
                                  " bytes exceed the limit of " + std::to_string(limit) +
                                  " (zt_open_options.max_manifest_size)");
  std::string text(static_cast<size_t>(size), '\0');
  if (size) platform::read_at(file.get(), "index '" + printable(location) + "'", 0, &text[0], text.size());
  return text;
}

// Opens one shard: beneath the index's folder, or a URL when the index was
// one. Remote shards share `remote` (one memory budget, one connection
// pool). `label` is the location as the index writes it, for messages.
zt_file *open_member(const std::string &location, const std::string &label, const zt_open_options *opts,
                     const UrlSettings *remote, const std::string &index, const IndexFolder *folder) {
  const std::string ctx = "index '" + index + "': shard '" + printable(label) + "'";
  zt_file *f = nullptr;
  if (folder) {
    try {
      ReaderOptions ropts = to_reader_options(opts);
      // Shards are opened together: one prefetch thread per shard would read
      // every shard at once (a disk seeking between them, up to half the
      // memory each). A set ignores the option; zt_open of one shard takes it.
      ropts.prefetch = false;
      const int fd = open_beneath(*folder, label, ctx);
      auto src = ropts.access == ZT_ACCESS_PREAD ? open_pread_source(fd, location) : open_mmap_source(fd, location);
      finish_open(Reader::open_source(std::move(src), ropts), &f);
    } catch (const Error &e) {
      const std::string msg = e.what();
      fail(e.status(), msg.rfind(ctx, 0) == 0 ? msg : ctx + ": " + msg);
    }
    return f;
  }
  const zt_status st = guard([&] {
    const ReaderOptions ropts = to_reader_options(opts);
    return finish_open(Reader::open_source(open_http_source(location, *remote, ropts.max_manifest_size), ropts), &f);
  });
  if (st != ZT_OK) fail(st, ctx + ": " + zt_last_error());
  return f;
}

std::string object_name(const zt_object *o) {
  zt_object_info info{};
  info.struct_size = sizeof info;
  ok_or_throw(zt_object_get_info(o, &info));
  return std::string(info.name, info.name_len);
}

const zt_set &set_ref(const zt_set *s, const char *fn) {
  if (!s) fail(ZT_E_INVALID_ARG, std::string(fn) + ": set is NULL");
  if (!is_live(s) || s->tag != kSetTag) fail(ZT_E_MISUSE, std::string(fn) + ": set handle is closed or not a zt_set");
  return *s;
}

std::unique_ptr<zt_set> open_set(const std::string &index_path, const zt_open_options *opts,
                                 const zt_url_options *uopts) {
  const bool remote_index = is_url(index_path);
  const std::string shown = remote_index ? redact_url(index_path) : printable(index_path);
  const std::string what = "index '" + shown + "'";
  const std::string base = remote_index ? url_base(index_path) : index_path;
  const ShardIndex idx = parse_shard_index(read_index(index_path, index_limit(opts), uopts), what, ZT_SET_MAX_SHARDS);
  // A remote set's shards hold their tails and cache blocks within one
  // cache_bytes budget, not one each, and share their connections.
  UrlSettings remote;
  if (remote_index) {
    remote = to_url_settings(uopts, "zt_open_set_url");
    remote.shared = make_remote_shared(remote.cache_bytes);
  }
  std::unique_ptr<IndexFolder> folder;
  if (!remote_index) folder = std::make_unique<IndexFolder>(index_path);
  auto set = std::make_unique<zt_set>();
  set->metadata_json = idx.metadata_json;
  set->locations = idx.shards;
  // A remote set's shards open concurrently (up to 16 at once): each open
  // is two round trips, so 8 shards cost about 2-3 round trips, not 16.
  // The first failure in shard order is reported; the set closes the rest.
  const size_t count = idx.shards.size();
  set->shards.assign(count, nullptr);
  if (remote_index && count > 1) {
    std::vector<std::exception_ptr> errors(count);
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t s; (s = next++) < count;) {
        try {
          set->shards[s] =
              open_member(resolve_shard_location(base, idx.shards[s]), idx.shards[s], opts, &remote, shown, nullptr);
        } catch (...) {
          errors[s] = std::current_exception();
        }
      }
    };
    std::vector<std::thread> workers;
    for (size_t w = 0; w < std::min<size_t>(count, 16); ++w) workers.emplace_back(work);
    for (std::thread &t : workers) t.join();
    for (const std::exception_ptr &e : errors)
      if (e) std::rethrow_exception(e);
  }
  for (size_t s = 0; s < count; ++s) {
    if (!set->shards[s])
      set->shards[s] =
          open_member(resolve_shard_location(base, idx.shards[s]), idx.shards[s], opts, &remote, shown, folder.get());
    size_t n = 0;
    ok_or_throw(zt_file_object_count(set->shards[s], &n));
    for (size_t i = 0; i < n; ++i) {
      const zt_object *o = nullptr;
      ok_or_throw(zt_file_object_at(set->shards[s], i, &o));
      auto [it, fresh] = set->by_name.emplace(object_name(o), zt_set::Entry{o, s});
      if (!fresh)
        fail(ZT_E_DUPLICATE_KEY, what + ": object '" + printable(it->first) + "' is in two shards, '" +
                                     printable(idx.shards[it->second.shard]) + "' and '" + printable(idx.shards[s]) +
                                     "' (rule: each tensor is in exactly one shard)");
      set->objects.push_back(o);
    }
  }
  // Index and shards must agree both ways: first every listed tensor is
  // in its shard (the likelier mistake, reported first), then no shard
  // holds an unlisted object (both lists are sorted by name: one walk).
  for (const auto &[name, shard] : idx.tensors) {
    auto it = set->by_name.find(name);
    if (it == set->by_name.end())
      fail(ZT_E_NOT_FOUND, what + ": tensor '" + printable(name) + "' is mapped to shard '" +
                               printable(idx.shards[shard]) + "', which has no object of that name");
    if (it->second.shard != shard)
      fail(ZT_E_NOT_FOUND, what + ": tensor '" + printable(name) + "' is mapped to shard '" +
                               printable(idx.shards[shard]) + "' but is in shard '" +
                               printable(idx.shards[it->second.shard]) + "'");
  }
  auto listed = idx.tensors.begin();
  for (const auto &[name, entry] : set->by_name) {
    if (listed != idx.tensors.end() && listed->first == name) {
      ++listed;
      continue;
    }
    fail(ZT_E_MANIFEST, what + ": shard '" + printable(idx.shards[entry.shard]) + "' holds object '" + printable(name) +
                            "', which the index's weight_map does not list");
  }
  return set;
}

}  // namespace

extern "C" {

ZT_API zt_status zt_open_set(const char *index_path, const zt_open_options *opts, zt_set **out) {
  return guard([&] {
    if (!out) invalid("zt_open_set: out is NULL");
    *out = nullptr;
    if (!index_path) invalid("zt_open_set: index_path is NULL");
    auto set = open_set(index_path, opts, nullptr);
    register_handle(set.get());
    *out = set.release();
    return ZT_OK;
  });
}

ZT_API zt_status zt_open_set_url(const char *index_url, const zt_url_options *uopts, const zt_open_options *opts,
                                 zt_set **out) {
  return guard([&] {
    if (!out) invalid("zt_open_set_url: out is NULL");
    *out = nullptr;
    if (!index_url) invalid("zt_open_set_url: index_url is NULL");
    if (!is_url(index_url)) invalid("zt_open_set_url: index_url is not an http://, https:// or s3:// URL");
    auto set = open_set(index_url, opts, uopts);
    register_handle(set.get());
    *out = set.release();
    return ZT_OK;
  });
}

ZT_API zt_status zt_set_close(zt_set *set) {
  return guard([&] {
    if (!set) return ZT_OK;
    if (!unregister_handle(set)) fail(ZT_E_MISUSE, "zt_set_close: handle already closed or not a zt_set");
    set->tag = 0;
    delete set;
    return ZT_OK;
  });
}

ZT_API zt_status zt_set_object_count(const zt_set *set, size_t *out) {
  return guard([&] {
    const zt_set &s = set_ref(set, "zt_set_object_count");
    if (!out) invalid("zt_set_object_count: out is NULL");
    *out = s.objects.size();
    return ZT_OK;
  });
}

ZT_API zt_status zt_set_object_at(const zt_set *set, size_t index, const zt_object **out) {
  return guard([&] {
    const zt_set &s = set_ref(set, "zt_set_object_at");
    if (!out) invalid("zt_set_object_at: out is NULL");
    *out = nullptr;
    if (index >= s.objects.size())
      fail(ZT_E_NOT_FOUND,
           "zt_set_object_at: index " + std::to_string(index) + " >= object count " + std::to_string(s.objects.size()));
    *out = s.objects[index];
    return ZT_OK;
  });
}

ZT_API zt_status zt_set_object_by_name(const zt_set *set, const char *name, size_t name_len, const zt_object **out) {
  return guard([&] {
    const zt_set &s = set_ref(set, "zt_set_object_by_name");
    if (!out) invalid("zt_set_object_by_name: out is NULL");
    *out = nullptr;
    if (!name && name_len) invalid("zt_set_object_by_name: name is NULL");
    const std::string_view key(name ? name : "", name_len);
    auto it = s.by_name.find(key);
    if (it == s.by_name.end())
      fail(ZT_E_NOT_FOUND, "zt_set_object_by_name: no shard holds an object '" + printable(std::string(key)) + "'");
    *out = it->second.obj;
    return ZT_OK;
  });
}

ZT_API zt_status zt_set_metadata_json(const zt_set *set, char **out) {
  return guard([&] {
    const zt_set &s = set_ref(set, "zt_set_metadata_json");
    if (!out) invalid("zt_set_metadata_json: out is NULL");
    *out = dup_string(s.metadata_json);
    return ZT_OK;
  });
}

ZT_API zt_status zt_set_shard_count(const zt_set *set, size_t *out) {
  return guard([&] {
    const zt_set &s = set_ref(set, "zt_set_shard_count");
    if (!out) invalid("zt_set_shard_count: out is NULL");
    *out = s.shards.size();
    return ZT_OK;
  });
}

ZT_API zt_status zt_set_shard_at(const zt_set *set, size_t index, const zt_file **out_file, const char **out_location) {
  return guard([&] {
    const zt_set &s = set_ref(set, "zt_set_shard_at");
    if (out_file) *out_file = nullptr;
    if (out_location) *out_location = nullptr;
    if (index >= s.shards.size())
      fail(ZT_E_NOT_FOUND,
           "zt_set_shard_at: index " + std::to_string(index) + " >= shard count " + std::to_string(s.shards.size()));
    if (out_file) *out_file = s.shards[index];
    if (out_location) *out_location = s.locations[index].c_str();
    return ZT_OK;
  });
}

}  // extern "C"
