// Sharded checkpoints (ztensor_set.h): an index plus the shards it names,
// opened together and checked against each other, presented as one list of
// ordinary zt_object handles. The engine (index reading, opening beneath a
// folder or next to a URL, the cross-checks) is src/set/member_open.h,
// shared with v2 shards; this file is the ABI over it.
#include <map>
#include <string_view>

#include "handles.h"
#include "io/http_source.h"
#include "set/member_open.h"
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
  if (o && ZT_HAS_FIELD(o, max_manifest_size) && o->max_manifest_size && o->max_manifest_size < limit)
    limit = o->max_manifest_size;
  return limit;
}

const zt_set &set_ref(const zt_set *s, const char *fn) {
  if (!s) fail(ZT_E_INVALID_ARG, std::string(fn) + ": set is NULL");
  if (!is_live(s) || s->tag != kSetTag) fail(ZT_E_MISUSE, std::string(fn) + ": set handle is closed or not a zt_set");
  return *s;
}

// The engine (set/member_open.h) opens and checks; here its readers become
// zt_file handles the set owns.
std::unique_ptr<zt_set> open_set(const std::string &index_path, const zt_open_options *opts,
                                 const zt_url_options *uopts) {
  UrlSettings remote;
  const bool remote_index = is_remote_url(index_path);
  if (remote_index) remote = to_url_settings(uopts, "zt_open_set_url");
  OpenedSet opened = open_index_set(index_path, to_reader_options(opts), index_limit(opts),
                                    remote_index ? &remote : nullptr, ZT_SET_MAX_SHARDS);
  auto set = std::make_unique<zt_set>();
  set->metadata_json = std::move(opened.metadata_json);
  set->locations = std::move(opened.locations);
  set->shards.reserve(opened.shards.size());
  for (auto &reader : opened.shards) {
    zt_file *f = nullptr;
    finish_open(std::move(reader), &f);
    set->shards.push_back(f);
  }
  set->objects.reserve(opened.objects.size());
  for (const OpenedSet::Entry &e : opened.objects) set->objects.push_back(&set->shards[e.shard]->objects[e.object]);
  for (const auto &[name, e] : opened.by_name)
    set->by_name.emplace_hint(set->by_name.end(), name,
                              zt_set::Entry{&set->shards[e.shard]->objects[e.object], e.shard});
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
    if (!is_remote_url(index_url)) invalid("zt_open_set_url: index_url is not an http://, https:// or s3:// URL");
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
