// Reader verification: one component, one object (strict: composite
// structure too, composite/validate.h), and the whole file with each
// shared blob checked once.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>
#include <tuple>

#include "codec/codec.h"
#include "composite/validate.h"
#include "digest/digest.h"
#include "foreign/open_foreign.h"
#include "manifest/decode.h"
#include "prefetcher.h"
#include "reader.h"
#include "reader_internal.h"
#include "set/member_open.h"
#include "set/v2_shards.h"
#include "stream_parts.h"
#include "types/dtype.h"
#include "util/endian.h"
#include "util/error.h"
#include "util/size_cast.h"
#include "v2/manifest.h"
#include "v2/rule.h"
#include "v2/vocab.h"

namespace zt {

using reader_detail::ctx_of;
using reader_detail::LazyCtx;
using reader_detail::missing_length_message;

zt_verify_result Reader::verify_component(const Object &o, const Component &c, bool strict) const {
  uint64_t decoded = 0;
  const zt_verify_result r =
      verify_stored(o, c, strict, c.decoded_known ? c.decoded_length : opts_.max_decoded_size, &decoded);
  if (c.encoding == ZT_ENCODING_ZSTD && c.decoded_known && decoded != c.decoded_length)
    fail(ZT_E_DECODED_SIZE, ctx_of(o, c) + ": zstd data decodes to " + std::to_string(decoded) + " bytes, but " +
                                std::to_string(c.decoded_length) + " are declared");
  return r;
}

zt_verify_result Reader::verify_stored(const Object &o, const Component &c, bool strict, uint64_t limit,
                                       uint64_t *decoded) const {
  check_readable(o, c);
  const LazyCtx ctx{o, c};
  *decoded = c.encoding == ZT_ENCODING_RAW ? c.length : 0;
  zt_verify_result result = ZT_VERIFY_NO_DIGEST;
  if (c.has_digest) {
    if (c.parsed_digest.alg == ZT_DIGEST_UNKNOWN) {
      result = ZT_VERIFY_UNVERIFIABLE;
    } else {
      Digester d(c.parsed_digest.alg);
      for_each_digested_piece(o, c, [&](const uint8_t *p, size_t n) { d.update(p, n); });
      if (!d.finish_matches(c.parsed_digest)) {
        Digester again(c.parsed_digest.alg);
        for_each_digested_piece(o, c, [&](const uint8_t *p, size_t n) { again.update(p, n); });
        const std::string what = "digest mismatch: manifest says " + c.digest + ", " +
                                 (c.digest_of_decoded ? "decoded" : "stored") + " bytes [" + std::to_string(c.offset) +
                                 ", +" + std::to_string(c.length) + ") give " + again.finish_string();
        fail(ZT_E_DIGEST_MISMATCH, ctx + ": " + (c.digest_of_decoded ? v2::rejected(v2::Rule::Digest, what) : what));
      }
      result = ZT_VERIFY_OK;
      mark_verified(o, c);  // a later read (verify-on-read) need not check again
    }
  }
  // Spec 0.1 §5.1: any non-zero byte is true there; 1.x allows only 0 and 1.
  const bool check_bool = strict && c.dtype == ZT_BOOL && manifest_.spec != SpecVersion::V0_1;
  auto scan_bool = [&](const uint8_t *p, size_t n, uint64_t base) {
    for (size_t i = 0; i < n; ++i)
      if (p[i] > 1)
        fail(
            ZT_E_BOOL_VALUE, ctx + ": bool element " + std::to_string(base + i) + " is 0x" + [](uint8_t v) {
              char b[4];
              std::snprintf(b, sizeof b, "%02x", v);
              return std::string(b);
            }(p[i]) + ", not 0 or 1");
  };
  if (c.seekable) {
    // Every frame decoded and checked (a digest above has decoded them
    // too; without one this is the only decode).
    uint64_t seen = 0;
    for_each_digested_piece(o, c, [&](const uint8_t *p, size_t n) {
      if (check_bool) scan_bool(p, n, seen);
      seen += n;
    });
    *decoded = seen;
  } else if (c.encoding == ZT_ENCODING_ZSTD) {
    std::vector<uint8_t> stored;
    const uint8_t *src = stored_bytes(c, stored);
    uint64_t seen = 0;
    *decoded = zstd_decode_each(src, c.length, limit, ctx.str(), [&](const uint8_t *p, size_t n) {
      if (check_bool) scan_bool(p, n, seen);
      seen += n;
    });
  } else if (check_bool) {
    uint64_t base = 0;
    for_each_stored_piece(c, [&](const uint8_t *p, size_t n) {
      scan_bool(p, n, base);
      base += n;
    });
  }
  return result;
}

void Reader::verify_object(const Object &o, bool strict) const {
  if (o.status != ZT_OK && o.components.empty()) fail(o.status, o.error);
  for (const auto &c : o.components) {
    verify_component(o, c, strict);
    if (strict && c.missing_uncompressed_length) fail(ZT_E_NO_UNCOMPRESSED_LENGTH, missing_length_message(o, c));
  }
  if (o.status != ZT_OK) fail(o.status, o.error);
  if (strict) validate_object_structure(*this, o);
}

namespace {

// What verifying a component reads and checks. Components with equal keys
// (objects sharing one blob, as the spec allows) give the same result, so
// each distinct key is verified once: otherwise a few KB of file naming one
// zstd frame from thousands of objects would be decoded thousands of times.
// The declared decoded size is not part of the key: objects that share a
// frame but declare different sizes are checked with one decode (bounded by
// the largest size declared) whose result each one's size is compared with.
struct BlobKey {
  uint32_t file;  // Component::file: equal offsets in two files are two blobs
  uint64_t offset, length;
  int encoding;
  bool decoded_known, check_bool;
  const std::string *digest;  // empty when none
  bool operator<(const BlobKey &b) const {
    return std::tie(file, offset, length, encoding, decoded_known, check_bool, *digest) <
           std::tie(b.file, b.offset, b.length, b.encoding, b.decoded_known, b.check_bool, *b.digest);
  }
};

}  // namespace

std::vector<VerifyFailure> Reader::verify_all(bool strict) const {
  const auto &objs = manifest_.objects;
  static const std::string kNoDigest;
  // Every component to verify, and for each the first one with its key.
  struct Work {
    size_t object, component;
    BlobKey key;
  };
  std::vector<Work> work;
  for (size_t i = 0; i < objs.size(); ++i) {
    const Object &o = objs[i];
    if (o.status != ZT_OK) continue;  // object-level damage is reported once below
    for (size_t j = 0; j < o.components.size(); ++j) {
      const Component &c = o.components[j];
      if (c.status != ZT_OK) continue;
      const bool check_bool = strict && c.dtype == ZT_BOOL && manifest_.spec != SpecVersion::V0_1;
      work.push_back({i, j,
                      BlobKey{c.file, c.offset, c.length, static_cast<int>(c.encoding), c.decoded_known, check_bool,
                              c.has_digest ? &c.digest : &kNoDigest}});
    }
  }
  std::vector<size_t> order(work.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return work[a].key < work[b].key; });
  std::vector<size_t> first(work.size());  // work index -> its group's first
  std::vector<size_t> unique;
  for (size_t k = 0; k < order.size(); ++k) {
    const bool same = k > 0 && !(work[order[k - 1]].key < work[order[k]].key);
    if (!same) unique.push_back(order[k]);
    first[order[k]] = same ? first[order[k - 1]] : order[k];
  }
  // Each group decodes up to the largest size one of its components declares.
  std::vector<uint64_t> limit(work.size(), 0);
  for (size_t k = 0; k < work.size(); ++k) {
    const Component &c = objs[work[k].object].components[work[k].component];
    const uint64_t declared = c.decoded_known ? c.decoded_length : opts_.max_decoded_size;
    limit[first[k]] = std::max(limit[first[k]], declared);
  }
  struct Outcome {
    zt_status status = ZT_OK;
    std::string message;
    uint64_t decoded = 0;  // when OK: what the blob decodes to
  };
  std::vector<Outcome> outcome(work.size());
  parallel_for(unique.size(), threads(), [&](size_t u) {
    const Work &w = work[unique[u]];
    const Object &o = objs[w.object];
    try {
      verify_stored(o, o.components[w.component], strict, limit[unique[u]], &outcome[unique[u]].decoded);
    } catch (const Error &e) {
      outcome[unique[u]].status = e.status();
      outcome[unique[u]].message = e.what();
    }
  });
  // A blob that decoded fine may still not be the size a component declares.
  auto size_mismatch = [&](size_t k) {
    const Component &c = objs[work[k].object].components[work[k].component];
    return c.encoding == ZT_ENCODING_ZSTD && c.decoded_known && outcome[first[k]].decoded != c.decoded_length;
  };

  // Failures of each object in component order; one that shares a failed
  // blob says so and repeats the first one's reason.
  auto failure_of = [&](size_t k) {
    const Outcome &r = outcome[first[k]];
    const Work &w = work[k];
    const Object &o = objs[w.object];
    if (r.status == ZT_OK) {  // size_mismatch(k)
      const Component &c = o.components[w.component];
      return VerifyFailure{w.object, c.role, ZT_E_DECODED_SIZE,
                           where(o.name, c.role) + ": zstd data decodes to " + std::to_string(r.decoded) +
                               " bytes, but " + std::to_string(c.decoded_length) + " are declared"};
    }
    std::string message = r.message;
    const Component &own = o.components[w.component];
    if (r.status == ZT_E_DECODED_SIZE && own.decoded_known) {
      // The shared decode stopped past the largest size declared for the
      // blob: each component states it against its own declaration.
      const uint64_t l = limit[first[k]];
      return VerifyFailure{w.object, own.role, r.status,
                           where(o.name, own.role) + ": zstd data decodes to more than " +
                               (own.decoded_length < l ? std::to_string(l) + " bytes, but " +
                                                             std::to_string(own.decoded_length) + " are declared"
                                                       : "the " + std::to_string(l) + " bytes declared")};
    }
    if (first[k] != k) {
      const Work &f = work[first[k]];
      message = where(o.name, o.components[w.component].role) + ": stored bytes shared with " +
                where(objs[f.object].name, objs[f.object].components[f.component].role) +
                ", which failed: " + r.message;
    }
    return VerifyFailure{w.object, o.components[w.component].role, r.status, std::move(message)};
  };
  std::vector<size_t> work_begin(objs.size() + 1, work.size());
  for (size_t k = work.size(); k-- > 0;) work_begin[work[k].object] = k;
  for (size_t i = objs.size(); i-- > 0;) work_begin[i] = std::min(work_begin[i], work_begin[i + 1]);
  std::vector<std::vector<VerifyFailure>> per(objs.size());
  parallel_for(objs.size(), threads(), [&](size_t i) {
    const Object &o = objs[i];
    size_t k = work_begin[i];
    bool component_failed = false;
    for (size_t j = 0; j < o.components.size(); ++j) {
      const Component &c = o.components[j];
      if (c.status != ZT_OK) {
        component_failed = true;
        per[i].push_back({i, c.role, c.status, c.error});
      } else if (k < work.size() && work[k].object == i && work[k].component == j) {
        if (outcome[first[k]].status != ZT_OK || size_mismatch(k)) {
          component_failed = true;
          per[i].push_back(failure_of(k));
        } else if (strict && c.missing_uncompressed_length) {
          component_failed = true;
          per[i].push_back({i, c.role, ZT_E_NO_UNCOMPRESSED_LENGTH, missing_length_message(o, c)});
        }
        ++k;
      }
    }
    if (o.status != ZT_OK && !component_failed) {
      per[i].push_back({i, "", o.status, o.error});
    } else if (o.status == ZT_OK && !component_failed && strict) {
      try {
        validate_object_structure(*this, o);
      } catch (const Error &e) {
        per[i].push_back({i, "", e.status(), e.what()});
      }
    }
  });
  // v2 shards (§7.3, rung 3): each opened shard's whole-file digest. A
  // mismatch is reported on the first part that lives in it.
  std::vector<std::pair<size_t, std::string>> first_user(shard_src_.size(), {SIZE_MAX, ""});
  for (size_t i = 0; i < objs.size(); ++i)
    for (const Component &c : objs[i].components)
      if (c.file && first_user[c.file - 1].first == SIZE_MAX) first_user[c.file - 1] = {i, c.role};
  std::vector<std::unique_ptr<VerifyFailure>> shard_failed(shard_src_.size());
  parallel_for(shard_src_.size(), threads(), [&](size_t k) {
    if (!shard_src_[k] || first_user[k].first == SIZE_MAX) return;
    const Manifest::ShardEntry &e = manifest_.shards[k];
    try {
      check_shard_digest(*shard_src_[k], e,
                         "'" + source_->path() + "': shard '" + e.name + "' ('" + shard_src_[k]->path() + "')");
    } catch (const Error &err) {
      shard_failed[k] = std::make_unique<VerifyFailure>(
          VerifyFailure{first_user[k].first, first_user[k].second, err.status(), err.what()});
    }
  });
  for (auto &f : shard_failed)
    if (f) per[f->object].insert(per[f->object].begin(), std::move(*f));
  std::vector<VerifyFailure> all;
  for (auto &v : per)
    for (auto &f : v) all.push_back(std::move(f));
  return all;
}

}  // namespace zt
