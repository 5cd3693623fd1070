// The set-opening engine (set/member_open.h), moved out of capi/set_c.cc so
// that v1 sets and v2 shards share it.
#include "set/member_open.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

#include "io/s3_location.h"
#include "platform/file.h"
#include "set/shard_index.h"
#include "util/error.h"
#include "util/join_on_exit.h"

namespace zt {

std::string url_base(const std::string &url) {
  if (is_s3_url(url)) return url;
  return url.substr(0, url.find_first_of("?#"));
}

namespace {

constexpr unsigned kWarmConnections = 16;

[[noreturn]] void too_large(const std::string &what, uint64_t size, uint64_t limit) {
  fail(ZT_E_MANIFEST_LIMIT, what + ": " + std::to_string(size) + " bytes exceed the limit of " + std::to_string(limit) +
                                " (zt_open_options.max_manifest_size)");
}

}  // namespace

std::string read_index_text(const std::string &location, uint64_t limit, const UrlSettings *remote,
                            const std::string &what) {
  if (remote) {
    UrlSettings plain = *remote;
    plain.speculative_head = false;  // JSON, read whole: no header block to ask for
    auto src = open_http_source(location, plain, limit);
    if (src->size() > limit) too_large(what, src->size(), limit);
    std::string text(static_cast<size_t>(src->size()), '\0');
    if (!text.empty()) src->read(0, text.size(), text.data());
    return text;
  }
  // A FIFO, a device or a folder is refused at once (platform/file.h).
  const platform::InputFile file(location, what);
  const uint64_t size = file.size();
  if (size > limit) too_large(what, size, limit);
  std::string text(static_cast<size_t>(size), '\0');
  if (size) platform::read_at(file.get(), what, 0, &text[0], text.size());
  return text;
}

std::unique_ptr<Source> open_member_source(const std::string &location, const std::string &label,
                                           const ReaderOptions &ropts, const UrlSettings *remote,
                                           const IndexFolder *folder, const std::string &ctx) {
  try {
    if (folder) {
      const int fd = open_beneath(*folder, label, ctx);
      return ropts.access == ZT_ACCESS_PREAD ? open_pread_source(fd, location) : open_mmap_source(fd, location);
    }
    return open_http_source(location, *remote, ropts.max_manifest_size);
  } catch (const Error &e) {
    const std::string msg = e.what();
    fail(e.status(), msg.rfind(ctx, 0) == 0 ? msg : ctx + ": " + msg);
  }
}

void open_members(size_t count, bool concurrent, const std::function<void(size_t)> &open) {
  if (!concurrent || count < 2) {
    for (size_t i = 0; i < count; ++i) open(i);
    return;
  }
  std::vector<std::exception_ptr> errors(count);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t s; (s = next++) < count;) {
      try {
        open(s);
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

OpenedSet open_index_set(const std::string &index_location, const ReaderOptions &ropts_in, uint64_t index_limit,
                         UrlSettings *remote, size_t max_shards) {
  const std::string shown = remote ? redact_url(index_location) : printable(index_location);
  const std::string what = "index '" + shown + "'";
  const std::string base = remote ? url_base(index_location) : index_location;
  // A remote set's shards hold their tails and cache blocks within one
  // cache_bytes budget, not one each, and share their connections, opened
  // while the index is in flight (each shard's open asks for two ranges at
  // once: 16 connections serve 8 shards without a connect).
  std::thread warm;
  JoinOnExit joiner{warm};
  if (remote) {
    remote->shared = make_remote_shared(remote->cache_bytes);
    // Never more than the caller's max_parallel: an explicit limit is a
    // hard cap on the connections a set opens at once (docs/remote.md).
    const unsigned n = std::min<unsigned>(kWarmConnections, std::max<uint32_t>(1, remote->max_parallel));
    warm = std::thread([&, n] { warm_connections(index_location, *remote, n); });
  }
  const ShardIndex idx =
      parse_shard_index(read_index_text(index_location, index_limit, remote, what), what, max_shards);
  if (warm.joinable()) warm.join();
  std::unique_ptr<IndexFolder> folder;
  if (!remote) folder = std::make_unique<IndexFolder>(index_location);
  ReaderOptions ropts = ropts_in;
  // Shards are opened together: one prefetch thread per shard would read
  // every shard at once (a disk seeking between them, up to half the
  // memory each). A set ignores the option; zt_open of one shard takes it.
  ropts.prefetch = false;
  OpenedSet set;
  set.metadata_json = idx.metadata_json;
  set.locations = idx.shards;
  const size_t count = idx.shards.size();
  set.shards.assign(count, nullptr);
  auto add_objects = [&](size_t s) {
    const auto &objs = set.shards[s]->manifest().objects;
    for (size_t i = 0; i < objs.size(); ++i) {
      auto [it, fresh] = set.by_name.emplace(objs[i].name, OpenedSet::Entry{s, i});
      if (!fresh)
        fail(ZT_E_DUPLICATE_KEY, what + ": object '" + printable(it->first) + "' is in two shards, '" +
                                     printable(idx.shards[it->second.shard]) + "' and '" + printable(idx.shards[s]) +
                                     "' (rule: each tensor is in exactly one shard)");
      set.objects.push_back({s, i});
    }
  };
  // Local shards are opened and checked one after another (a clash is
  // reported before a later shard is opened); remote ones all at once
  // first, the first failure in shard order reported.
  open_members(count, remote != nullptr, [&](size_t s) {
    const std::string ctx = what + ": shard '" + printable(idx.shards[s]) + "'";
    auto src = open_member_source(resolve_shard_location(base, idx.shards[s]), idx.shards[s], ropts, remote,
                                  folder.get(), ctx);
    try {
      set.shards[s] = Reader::open_source(std::move(src), ropts);
    } catch (const Error &e) {
      fail(e.status(), ctx + ": " + e.what());
    }
    if (!remote) add_objects(s);
  });
  if (remote) trim_idle_connections(*remote->shared, 8);
  if (remote)
    for (size_t s = 0; s < count; ++s) add_objects(s);
  // Index and shards must agree both ways: first every listed tensor is
  // in its shard (the likelier mistake, reported first), then no shard
  // holds an unlisted object (both lists are sorted by name: one walk).
  for (const auto &[name, shard] : idx.tensors) {
    auto it = set.by_name.find(name);
    if (it == set.by_name.end())
      fail(ZT_E_NOT_FOUND, what + ": tensor '" + printable(name) + "' is mapped to shard '" +
                               printable(idx.shards[shard]) + "', which has no object of that name");
    if (it->second.shard != shard)
      fail(ZT_E_NOT_FOUND, what + ": tensor '" + printable(name) + "' is mapped to shard '" +
                               printable(idx.shards[shard]) + "' but is in shard '" +
                               printable(idx.shards[it->second.shard]) + "'");
  }
  auto listed = idx.tensors.begin();
  for (const auto &[name, entry] : set.by_name) {
    if (listed != idx.tensors.end() && listed->first == name) {
      ++listed;
      continue;
    }
    fail(ZT_E_MANIFEST, what + ": shard '" + printable(idx.shards[entry.shard]) + "' holds object '" + printable(name) +
                            "', which the index's weight_map does not list");
  }
  return set;
}

}  // namespace zt
