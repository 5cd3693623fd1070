#include "reader.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>
#include <tuple>

#include "codec/codec.h"
#include "digest/digest.h"
#include "foreign/open_foreign.h"
#include "manifest/decode.h"
#include "prefetcher.h"
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
using reader_detail::kPieceSize;
using reader_detail::LazyCtx;

bool needs_swap(const Component &c) {
  return c.big_endian != kHostBigEndian && dtype_size(c.dtype) > 1;
}

void parallel_for(size_t n, unsigned threads, const std::function<void(size_t)> &fn) {
  if (n == 0) return;
  unsigned t = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(std::min<size_t>(n, 256))));
  if (t == 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t err_index = SIZE_MAX;
  std::exception_ptr err;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (i < err_index) {
          err_index = i;
          err = std::current_exception();
        }
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(t - 1);
  for (unsigned k = 1; k < t; ++k) pool.emplace_back(work);
  work();
  for (auto &th : pool) th.join();
  if (err) std::rethrow_exception(err);
}

Reader::Reader(std::unique_ptr<Source> src, const ReaderOptions &opts, bool foreign_ok)
    : source_(std::move(src)), opts_(opts) {
  if (opts_.max_manifest_size == 0 || opts_.max_manifest_size > kMaxManifestSize)
    opts_.max_manifest_size = kMaxManifestSize;
  if (foreign_ok && foreign_format(*source_)) {
    ForeignLimits fl;
    fl.max_header = opts_.max_manifest_size;
    fl.max_decoded_size = opts_.max_decoded_size;
    fl.max_decoded_size_set = opts_.max_decoded_size != kDefaultMaxDecodedSize;
    ForeignFile ff = open_foreign(std::move(source_), fl);
    source_ = std::move(ff.source);
    manifest_ = std::move(ff.manifest);
    init_verify_slots();
    // The header is parsed by now; the tensors follow it (or, decoded on
    // first read, are read through the parser: nothing to prefetch).
    if (!manifest_.foreign_decoded) {
      start_prefetch(0, source_->size());
      if (prefetcher_) prefetcher_->settle(manifest_);
    }
    return;
  }
  ManifestLocation loc = locate_manifest(*source_, opts_.max_manifest_size);
  if (loc.container == Container::V2) {
    // Format v2 (src/v2/): its own manifest rules, the same model after.
    // The thread reads only what the parsed manifest's parts cover (a data
    // shard has none: nothing is read ahead).
    start_prefetch(sizeof kMagicV1, loc.data_shard ? source_->size() - 40 : loc.offset);
    manifest_ = v2::read_manifest(*source_, loc);
    attach_shards();
    if (prefetcher_) prefetcher_->settle(manifest_);
    init_verify_slots();
    return;
  }
  // Before the manifest is parsed: the thread reads the components of the
  // objects decoded so far meanwhile (on_early_object), then, once it is
  // parsed, those of every object, in file order. Blobs lie between the
  // header magic and the manifest in every version: nothing outside is
  // read. A file whose manifest then fails to decode stops the thread as
  // the constructor unwinds.
  start_prefetch(sizeof kMagicV1, loc.offset);
  std::vector<uint8_t> copy;
  const uint8_t *bytes = source_->read_meta(loc.offset, loc.size, copy);
  DecodeLimits limits;
  limits.max_decoded_size = opts_.max_decoded_size;
  limits.strict = opts_.strict;
  limits.file_size = source_->size();
  if (prefetcher_) {
    Prefetcher *p = prefetcher_.get();
    limits.on_early_object = [p](const Object &o) {
      for (const Component &c : o.components)
        if (c.length) p->offer(c.offset, c.offset + std::min(c.length, UINT64_MAX - c.offset));
    };
  }
  if (loc.size == 0) fail(ZT_E_CBOR, "'" + source_->path() + "': the manifest is empty (0 bytes)");
  manifest_ = decode_manifest(bytes, loc.size, loc.container, loc.offset, limits, source_->path());
  if (prefetcher_) prefetcher_->settle(manifest_);
  init_verify_slots();
  // Views into a pread copy must not outlive it: the model owns its strings
  // (indefinite-length strings were joined into std::strings), so nothing
  // points into `copy` once decode_manifest returns.
}

Reader::~Reader() = default;

void Reader::start_prefetch(uint64_t begin, uint64_t end) {
  if (!opts_.prefetch || end <= begin) return;
  // Only files: a source that cannot be reopened is memory, callbacks or
  // HTTP (or a mapped file past the descriptor budget, which keeps no
  // descriptor to read with).
  auto own = source_->reopen();
  if (!own) return;
  // The second opening counts against the descriptor budget (a program
  // that opens many files with prefetch must not run out of descriptors);
  // past it, the thread reads through the file's own map or descriptor.
  if (!take_descriptor_slot()) own.reset();
  prefetcher_ = std::make_unique<Prefetcher>(*source_, std::move(own), begin, end);
}

void Reader::attach_shards() {
  if (manifest_.shards.empty()) {
    opts_.shards.reset();
    return;
  }
  const auto &table = manifest_.shards;  // sorted by name
  auto index_of = [&](const std::string &name) {
    auto it = std::lower_bound(table.begin(), table.end(), name,
                               [](const Manifest::ShardEntry &e, const std::string &n) { return e.name < n; });
    return static_cast<size_t>(it - table.begin());  // declared: v2/validate.cc checked it
  };
  std::vector<size_t> named;
  std::vector<char> is_named(table.size(), 0);
  for (const Object &o : manifest_.objects)
    for (const Component &c : o.components)
      if (!c.shard.empty()) {
        const size_t k = index_of(c.shard);
        if (k < table.size() && !is_named[k]) {
          is_named[k] = 1;
          named.push_back(k);
        }
      }
  std::sort(named.begin(), named.end());
  shard_src_.resize(table.size());
  std::vector<Error> failed(table.size(), Error(ZT_OK, ""));
  const std::string root = "'" + source_->path() + "': ";
  if (named.size() > kMaxOpenedShards) {
    for (size_t k : named)
      failed[k] = Error(ZT_E_LIMIT, root + "the parts name " + std::to_string(named.size()) +
                                        " shards, more than the " + std::to_string(kMaxOpenedShards) +
                                        " this library opens for one root (ZT_SET_MAX_SHARDS); none was opened");
  } else if (!opts_.shards) {
    for (size_t k : named)
      failed[k] = Error(ZT_E_UNSUPPORTED, root + "shard '" + table[k].name +
                                              "': this opening (memory, callbacks) has no way to reach other files; "
                                              "open the root by path or URL, or with zt_open_sharded and a resolver");
  } else {
    // Every shard now, each one's failure kept for its parts: a missing
    // shard costs the parts in it, not the rest of the model. Remote ones
    // at once, so n shards cost the round trips of one.
    ReaderOptions sopts = opts_;
    sopts.prefetch = false;
    sopts.shards = nullptr;
    std::vector<const Manifest::ShardEntry *> entries;
    entries.reserve(named.size());
    for (size_t k : named) entries.push_back(&table[k]);
    opts_.shards->prepare(entries);  // a caller's resolver runs here, on this thread
    open_members(named.size(), opts_.shards->concurrent(), [&](size_t i) {
      const size_t k = named[i];
      try {
        auto src = opts_.shards->open(table[k], sopts);
        check_shard_file(*src, table[k], root + "shard '" + table[k].name + "' ('" + src->path() + "')");
        shard_src_[k] = std::move(src);
      } catch (const Error &e) {
        const std::string msg = e.what();
        failed[k] = Error(e.status(), msg.rfind(root, 0) == 0 ? msg : root + msg);
      }
    });
  }
  // The opener's work is done: what it holds (a folder's descriptor, a
  // caller's resolver) is not kept for the reader's life.
  opts_.shards.reset();
  // Strict: the file is refused at its first shard that failed, as the
  // original's reader refuses a root whose shards are not all there.
  if (opts_.strict)
    for (size_t k : named)
      if (!shard_src_[k]) throw failed[k];
  for (Object &o : manifest_.objects)
    for (Component &c : o.components) {
      if (c.shard.empty()) continue;
      const size_t k = index_of(c.shard);
      if (shard_src_[k]) {
        c.file = static_cast<uint32_t>(k + 1);
        continue;
      }
      if (c.status != ZT_OK) continue;
      c.status = failed[k].status();
      c.error = failed[k].what();
      if (o.status == ZT_OK) {
        o.status = c.status;
        o.error = c.error;
      }
    }
}

void Reader::init_verify_slots() {
  if (opts_.verify_on_read) {
    slot_base_.resize(manifest_.objects.size());
    size_t slots = 0;
    for (size_t i = 0; i < manifest_.objects.size(); ++i) {
      slot_base_[i] = slots;
      slots += manifest_.objects[i].components.size();
    }
    verified_.reset(new std::atomic<bool>[slots]);
    for (size_t k = 0; k < slots; ++k) verified_[k].store(false, std::memory_order_relaxed);
  }
}

// A foreign file (safetensors, .npy/.npz, GGUF; src/foreign) is recognised
// by its first bytes in the constructor, for files opened by path (a lone
// .npy's object takes the file's name) or in memory; not through callbacks
// or HTTP, whose bytes the parsers cannot hold whole.
std::shared_ptr<Reader> Reader::open(const std::string &path, const ReaderOptions &opts) {
  auto src = opts.access == ZT_ACCESS_PREAD ? open_pread_source(path) : open_mmap_source(path);
  if (opts.shards) return std::shared_ptr<Reader>(new Reader(std::move(src), opts, true));
  // A v2 root's shards: positional, beside it (Appendix B).
  ReaderOptions with_shards = opts;
  with_shards.shards = positional_local_shards(path);
  return std::shared_ptr<Reader>(new Reader(std::move(src), with_shards, true));
}

std::shared_ptr<Reader> Reader::open_memory(const void *data, size_t size, const ReaderOptions &opts) {
  return std::shared_ptr<Reader>(new Reader(open_memory_source(data, size), opts, true));
}

std::shared_ptr<Reader> Reader::open_source(std::unique_ptr<Source> src, const ReaderOptions &opts) {
  return std::shared_ptr<Reader>(new Reader(std::move(src), opts));
}

unsigned Reader::threads() const {
  if (opts_.threads) return opts_.threads;
  unsigned hc = std::thread::hardware_concurrency();
  return std::max(hc ? hc : 1u, source_->preferred_threads());
}

void Reader::check_status(const Object &o, const Component &c) const {
  if (c.status != ZT_OK) fail(c.status, c.error);
  if (o.status != ZT_OK) fail(o.status, o.error);
}

void Reader::check_readable(const Object &o, const Component &c) const {
  check_status(o, c);
  if (c.content_check) check_content(o, c);
}

// A v2 logical type's content rule (bool bytes 0/1, the f4_e2m1 padding
// nibble), checked before any typed read or verify hands its bytes out.
void Reader::check_content(const Object &o, const Component &c) const {
  const std::string ctx = "'" + source_->path() + "': " + ctx_of(o, c);
  // Decoded bytes: the stored ones of a raw part, the frames of a seekable one.
  const uint64_t total = c.decoded_length;
  if (c.content_check == v2::kF4Padding) {
    if (total == 0) return;
    uint8_t last;
    if (c.seekable)
      seekable_decoder(o, c)->read(total - 1, 1, &last);
    else
      source_of(c).read(c.offset + c.length - 1, 1, &last);
    v2::check_content(c, &last, 1, total - 1, total, ctx);
    return;
  }
  uint64_t base = 0;
  for_each_digested_piece(o, c, [&](const uint8_t *p, size_t n) {
    v2::check_content(c, p, n, base, total, ctx);
    base += n;
  });
}

size_t Reader::read_stored(const Object &o, const Component &c, void *dst, size_t capacity) const {
  // A part in a shard that was not opened: its status says why.
  if (!c.shard.empty() && !c.file) fail(c.status == ZT_OK ? ZT_E_UNSUPPORTED : c.status, c.error);
  const Source &src = source_of(c);
  // Structural access passes over what this library cannot interpret
  // (ZT_E_UNSUPPORTED), never over damage: a blob out of bounds, say.
  if (c.status != ZT_OK && c.status != ZT_E_UNSUPPORTED) fail(c.status, c.error);
  if (c.offset > src.size() || c.length > src.size() - c.offset)
    fail(ZT_E_BOUNDS, ctx_of(o, c) + ": blob [" + std::to_string(c.offset) + ", +" + std::to_string(c.length) +
                          ") is not inside the file");
  if (capacity < c.length)
    fail(ZT_E_BUFFER_TOO_SMALL,
         ctx_of(o, c) + ": needs " + std::to_string(c.length) + " bytes, buffer has " + std::to_string(capacity));
  src.read(c.offset, static_cast<size_t>(c.length), dst);
  return static_cast<size_t>(c.length);
}

size_t Reader::component_slot(const Object &o, const Component &c) const {
  const size_t oi = static_cast<size_t>(&o - manifest_.objects.data());
  const size_t ci = static_cast<size_t>(&c - o.components.data());
  if (oi >= manifest_.objects.size() || ci >= o.components.size())
    fail(ZT_E_INTERNAL, "verify-on-read: component not of this file");
  return slot_base_[oi] + ci;
}

bool Reader::digest_pending(const Object &o, const Component &c) const {
  if (!opts_.verify_on_read || !c.has_digest || c.parsed_digest.alg == ZT_DIGEST_UNKNOWN) return false;
  return !verified_[component_slot(o, c)].load(std::memory_order_acquire);
}

void Reader::mark_verified(const Object &o, const Component &c) const {
  if (opts_.verify_on_read) verified_[component_slot(o, c)].store(true, std::memory_order_release);
}

std::string Reader::digest_mismatch_message(const Object &o, const Component &c, const std::string &got) const {
  const char *alg = c.parsed_digest.alg == ZT_DIGEST_SHA256 ? "sha256"
                    : c.parsed_digest.alg == ZT_DIGEST_XXH3 ? "xxh3"
                                                            : "crc32c";
  // v2 names the rule; its digests cover decoded bytes, which for the raw
  // parts this library decodes are the stored ones.
  const std::string what = std::string(alg) + " digest mismatch: manifest says " + c.digest + ", " +
                           (c.digest_of_decoded ? "decoded" : "stored") + " bytes [" + std::to_string(c.offset) +
                           ", +" + std::to_string(c.length) + ") give " + got;
  return "'" + source_->path() + "': " + ctx_of(o, c) +
         ": verify-on-read: " + (c.digest_of_decoded ? v2::rejected(v2::Rule::Digest, what) : what);
}

void Reader::check_digest(const Object &o, const Component &c) const {
  Digester d(c.parsed_digest.alg);
  for_each_digested_piece(o, c, [&](const uint8_t *p, size_t n) { d.update(p, n); });
  if (!d.finish_matches(c.parsed_digest)) {
    Digester again(c.parsed_digest.alg);
    for_each_digested_piece(o, c, [&](const uint8_t *p, size_t n) { again.update(p, n); });
    fail(ZT_E_DIGEST_MISMATCH, digest_mismatch_message(o, c, again.finish_string()));
  }
}

void Reader::verify_before_read(const Object &o, const Component &c) const {
  if (!digest_pending(o, c)) return;
  check_digest(o, c);
  mark_verified(o, c);
}

void Reader::for_each_stored_piece(const Component &c, const std::function<void(const uint8_t *, size_t)> &fn) const {
  const Source &file = source_of(c);
  if (file.data()) {
    file.materialize(c.offset, c.length);  // a decode-on-read tensor: decoded now
    fn(file.data() + c.offset, c.length);
    return;
  }
  std::vector<uint8_t> buf(std::min<uint64_t>(c.length, kPieceSize));
  for (uint64_t done = 0; done < c.length;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(c.length - done, kPieceSize));
    file.read(c.offset + done, n, buf.data());
    fn(buf.data(), n);
    done += n;
  }
  if (c.length == 0) fn(buf.data(), 0);
}

const uint8_t *Reader::stored_bytes(const Component &c, std::vector<uint8_t> &scratch) const {
  const Source &file = source_of(c);
  if (file.data()) {
    file.materialize(c.offset, c.length);
    return file.data() + c.offset;
  }
  scratch.resize(to_size(c.length, "'" + file.path() + "': stored component at offset " + std::to_string(c.offset)));
  file.read(c.offset, scratch.size(), scratch.data());
  return scratch.data();
}

uint64_t Reader::decoded_size(const Object &o, const Component &c) const {
  const Source &file = source_of(c);
  check_status(o, c);
  if (c.decoded_known) return c.decoded_length;
  file.materialize(c.offset, c.length);
  std::vector<uint8_t> stored;
  const uint8_t *p = stored_bytes(c, stored);
  // One frame that records its size: believed here (bounded by the limit),
  // checked by the decode that reads the data.
  if (auto size = zstd_single_frame_content_size(p, static_cast<size_t>(c.length))) {
    if (*size > opts_.max_decoded_size)
      fail(ZT_E_LIMIT, ctx_of(o, c) + ": the zstd frame declares " + std::to_string(*size) +
                           " decoded bytes, more than the limit of " + std::to_string(opts_.max_decoded_size));
    return *size;
  }
  return zstd_decode_each(p, c.length, opts_.max_decoded_size, ctx_of(o, c), [](const uint8_t *, size_t) {});
}

size_t Reader::read(const Object &o, const Component &c, void *dst, size_t capacity) const {
  const Source &file = source_of(c);
  check_readable(o, c);
  verify_before_read(o, c);
  const LazyCtx ctx{o, c};
  if (c.encoding == ZT_ENCODING_RAW) {
    if (capacity < c.length)
      fail(ZT_E_BUFFER_TOO_SMALL,
           ctx + ": needs " + std::to_string(c.length) + " bytes, buffer has " + std::to_string(capacity));
    file.will_need(c.offset, c.length);
    file.read(c.offset, c.length, dst);
    if (needs_swap(c)) byteswap_inplace(dst, c.length, dtype_size(c.dtype));
    return c.length;
  }
  // zstd
  size_t n;
  if (c.seekable) {
    if (capacity < c.decoded_length)
      fail(ZT_E_BUFFER_TOO_SMALL,
           ctx + ": needs " + std::to_string(c.decoded_length) + " bytes, buffer has " + std::to_string(capacity));
    n = to_size(c.decoded_length, ctx.str());
    seekable_decoder(o, c)->read(0, n, static_cast<uint8_t *>(dst));
    if (needs_swap(c)) byteswap_inplace(dst, n, dtype_size(c.dtype));
    return n;
  }
  std::vector<uint8_t> stored;
  const uint8_t *src = stored_bytes(c, stored);
  if (c.decoded_known) {
    if (capacity < c.decoded_length)
      fail(ZT_E_BUFFER_TOO_SMALL,
           ctx + ": needs " + std::to_string(c.decoded_length) + " bytes, buffer has " + std::to_string(capacity));
    zstd_decode_exact(src, c.length, dst, c.decoded_length, ctx.str());
    n = c.decoded_length;
  } else {
    auto v = zstd_decode_bounded(src, c.length, opts_.max_decoded_size, ctx.str());
    if (capacity < v.size())
      fail(ZT_E_BUFFER_TOO_SMALL,
           ctx + ": needs " + std::to_string(v.size()) + " bytes, buffer has " + std::to_string(capacity));
    if (!v.empty()) std::memcpy(dst, v.data(), v.size());
    n = v.size();
  }
  if (needs_swap(c)) byteswap_inplace(dst, n, dtype_size(c.dtype));
  return n;
}

std::vector<uint8_t> Reader::read_vector(const Object &o, const Component &c) const {
  uint64_t n = decoded_size(o, c);
  std::vector<uint8_t> v(to_size(n, ctx_of(o, c)));
  size_t got = read(o, c, v.data(), v.size());
  v.resize(got);
  return v;
}

const uint8_t *Reader::view(const Object &o, const Component &c, size_t *len, bool unaligned_ok) const {
  const Source &file = source_of(c);
  check_readable(o, c);
  const LazyCtx ctx{o, c};
  if (!file.data())
    fail(ZT_E_NOT_ZERO_COPY, ctx + ": " +
                                 (file.unmapped_reason().empty()
                                      ? std::string("the file was opened with pread access; views need a memory map")
                                      : file.unmapped_reason()));
  if (c.encoding != ZT_ENCODING_RAW)
    fail(ZT_E_NOT_ZERO_COPY, ctx + ": " + c.encoding_name + "-encoded data must be decoded (use a read)");
  if (needs_swap(c))
    fail(ZT_E_NOT_ZERO_COPY,
         ctx +
             (c.big_endian ? ": data is stored big-endian (legacy 0.1)" : ": little-endian data on a big-endian host") +
             "; a read byte-swaps it");
  file.materialize(c.offset, c.length);  // a decode-on-read tensor: decoded now, kept for the view
  const uint8_t *p = file.data() + c.offset;
  // Foreign files put elements at any offset; .zt blobs are 64-aligned.
  if (const size_t align = dtype_size(c.dtype);
      !unaligned_ok && align > 1 && reinterpret_cast<uintptr_t>(p) % align != 0)
    fail(ZT_E_NOT_ZERO_COPY, ctx + ": data at file offset " + std::to_string(c.offset) + " is not aligned to its " +
                                 std::to_string(align) +
                                 "-byte elements; a read copies it (zt_component_view_unaligned lends it)");
  verify_before_read(o, c);
  *len = static_cast<size_t>(c.length);
  return p;
}

}  // namespace zt
