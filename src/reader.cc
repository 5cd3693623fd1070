#include "reader.h"

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
namespace {

constexpr size_t kPieceSize = size_t{8} << 20;

std::string ctx_of(const Object &o, const Component &c) {
  return where(o.name, c.role);
}

// What a strict verify says of a 1.2 zstd component read without its
// required uncompressed_length.
std::string missing_length_message(const Object &o, const Component &c) {
  return ctx_of(o, c) + ": zstd component has no uncompressed_length, which spec 1.2 requires (read with the size " +
         (c.decoded_known ? "its shape implies" : "its frame records, or by a bounded decode") + ")";
}

// The same prefix, built only when a message (or a codec call) needs it: a
// copy-read of a 10 KiB tensor should not pay for formatting it.
struct LazyCtx {
  const Object &o;
  const Component &c;
  std::string str() const { return ctx_of(o, c); }
};
std::string operator+(const LazyCtx &l, const char *s) {
  return l.str() + s;
}

}  // namespace

bool needs_swap(const Component &c) {
  return c.big_endian != kHostBigEndian && dtype_size(c.dtype) > 1;
}

namespace {
std::atomic<uint64_t> g_cold_streamed_bytes{0};
std::atomic<uint64_t> g_cold_reopened_streams{0};

}  // namespace

uint64_t cold_streamed_bytes() {
  return g_cold_streamed_bytes.load(std::memory_order_relaxed);
}
uint64_t cold_reopened_streams() {
  return g_cold_reopened_streams.load(std::memory_order_relaxed);
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

void Reader::read_many(std::vector<ReadJob> &jobs) const {
  // A unit of work: a whole job, or a chunk [begin, begin+len) of a large
  // raw one (copied straight from the source into the caller's buffer).
  struct Task {
    size_t job;
    uint64_t begin, len;
    // Batch: batched[begin, begin+len). Stream: part `job` of `stream`
    // (StreamParts), in order, on the thread that takes it.
    enum Kind { Whole, Chunk, Batch, Stream } kind;
    // Not 0: a cold range the prefetch thread will read; the task waits
    // until it has read this far, then copies from the page cache.
    uint64_t ready_at = 0;
  };
  constexpr uint64_t kChunk = uint64_t{4} << 20;
  constexpr uint64_t kParallelMinBytes = uint64_t{1} << 20;
  constexpr unsigned kColdStreams = 2;
  auto record = [](ReadJob &j, const Error &e) {
    j.status = e.status();
    j.error = e.what();
  };
  constexpr size_t kMaxBatch = 1024;
  // Verify-on-read first, in parallel: a job whose digest fails is recorded
  // as failed and skipped below, so no unchecked byte reaches its buffer.
  std::vector<size_t> pending;
  for (size_t i = 0; i < jobs.size(); ++i)
    if (jobs[i].status == ZT_OK && digest_pending(*jobs[i].object, *jobs[i].component)) pending.push_back(i);
  parallel_for(pending.size(), threads(), [&](size_t k) {
    ReadJob &j = jobs[pending[k]];
    try {
      check_readable(*j.object, *j.component);
      verify_before_read(*j.object, *j.component);
    } catch (const Error &e) {
      record(j, e);
    }
  });
  std::vector<Task> tasks;
  tasks.reserve(jobs.size());
  // Raw ranges that are not in the page cache (Source::likely_cached, asked
  // before anything is read: a read makes its neighbours look warm). They
  // are read in file order, in at most kColdStreams contiguous parts each
  // read front to back by one thread, as `cat` reads: the kernel's
  // sequential readahead then keeps the disk streaming. Chunks handed out
  // in turn to two threads (the cached path) ran at 0.5-0.85x of a
  // sequential read on a cold file (docs/cold-reads.md has the figures).
  // Cached ranges keep the parallel copy: there the copy is the work.
  std::vector<Task> stream;
  std::vector<std::pair<size_t, size_t>> parts;  // of `stream`, one per reading thread
  // With the `prefetch` option, cold ranges its thread will reach are not
  // streamed: that thread already reads the file in order, and a copy
  // follows it (`follow`, after every other task). Two streams of read_many
  // beside it took turns with it on the disk (docs/cold-reads.md).
  std::vector<Task> follow;
  auto place = [&](Task t, bool cold, uint64_t end) {
    if (!cold) {
      tasks.push_back(t);
    } else if (prefetcher_ && prefetcher_->will_reach(end)) {
      t.ready_at = end;
      follow.push_back(t);
    } else {
      stream.push_back(t);
    }
  };
  std::vector<size_t> small_raw;
  uint64_t total = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    ReadJob &j = jobs[i];
    if (j.status != ZT_OK) continue;
    try {
      const Object &o = *j.object;
      const Component &c = *j.component;
      check_readable(o, c);
      if (!c.decoded_known) {  // legacy zstd: the size is learned by decoding
        tasks.push_back({i, 0, 0, Task::Whole});
        total += c.length;
        continue;
      }
      if (!fits_size_t(c.decoded_length))
        fail(ZT_E_LIMIT, ctx_of(o, c) + ": decoded size is " + std::to_string(c.decoded_length) +
                             " bytes, more than this process can address; read it by range");
      j.out_size = static_cast<size_t>(c.decoded_length);
      if (j.capacity < c.decoded_length)
        fail(ZT_E_BUFFER_TOO_SMALL, ctx_of(o, c) + ": decoded size is " + std::to_string(c.decoded_length) +
                                        " bytes, buffer has " + std::to_string(j.capacity));
      if (!j.dst && c.decoded_length) fail(ZT_E_INVALID_ARG, ctx_of(o, c) + ": dst is NULL");
      total += c.decoded_length;
      // Decode-on-read tensors (a foreign file's) are read whole: a whole
      // read decodes straight into the buffer, a chunk would keep a copy.
      // A part in a shard (v2) is read whole from its own file: chunks,
      // batches and streams below are of this file's bytes.
      if (c.file) {
        tasks.push_back({i, 0, 0, Task::Whole});
      } else if (c.encoding == ZT_ENCODING_RAW && !needs_swap(c) && c.length > 2 * kChunk &&
                 !manifest_.foreign_decoded) {
        const bool cold = !source_->likely_cached(c.offset, c.length);
        // Not on cold blobs: hinting every blob here, before any copy
        // starts, queues reads of all of them at once, and cold loads took
        // 1.3-1.9x as long as without the hint (docs/cold-reads.md).
        if (!cold) source_->will_need(c.offset, c.length);
        for (uint64_t off = 0; off < c.length; off += kChunk) {
          const uint64_t len = std::min(kChunk, c.length - off);
          place({i, off, len, Task::Chunk}, cold, c.offset + off + len);
        }
      } else if (c.encoding == ZT_ENCODING_RAW && !needs_swap(c)) {
        small_raw.push_back(i);
      } else {
        // zstd or byte-swapped: decoded as before, also beside the
        // prefetch thread. Waiting for it to read a whole blob first and
        // decoding then took 1.4x as long cold (docs/cold-reads.md): the
        // decode reading as the bytes arrive overlaps the two.
        tasks.push_back({i, 0, 0, Task::Whole});
      }
    } catch (const Error &e) {
      record(j, e);
    }
  }
  // Small raw blobs that follow each other in the file (a gap of padding at
  // most) become one task read with one scattered read: a file of many
  // small tensors then costs a few system calls, not one copy per tensor.
  std::vector<size_t> batched;
  if (!small_raw.empty()) {
    auto offset_of = [&](size_t i) { return jobs[i].component->offset; };
    auto by_offset = [&](size_t a, size_t b) { return offset_of(a) < offset_of(b); };
    if (!std::is_sorted(small_raw.begin(), small_raw.end(), by_offset))
      std::stable_sort(small_raw.begin(), small_raw.end(), by_offset);
    batched.reserve(small_raw.size());
    size_t first = 0;
    uint64_t batch_end = 0, batch_bytes = 0;
    auto close_batch = [&] {
      if (batched.size() > first) {
        const uint64_t begin = jobs[batched[first]].component->offset;
        const bool cold = !source_->likely_cached(begin, batch_end - begin);
        place({0, first, batched.size() - first, Task::Batch}, cold, batch_end);
      }
      first = batched.size();
      batch_bytes = 0;
    };
    for (size_t i : small_raw) {
      const Component &c = *jobs[i].component;
      const bool joins = batched.size() > first && c.offset >= batch_end && c.offset - batch_end <= Source::kMaxGap &&
                         batch_bytes + c.length <= kChunk && batched.size() - first < kMaxBatch;
      if (!joins) close_batch();
      batched.push_back(i);
      batch_end = c.offset + c.length;
      batch_bytes += c.length;
    }
    close_batch();
  }
  if (!stream.empty()) {
    auto offset_of = [&](const Task &t) {
      return t.kind == Task::Batch ? jobs[batched[t.begin]].component->offset : jobs[t.job].component->offset + t.begin;
    };
    auto bytes_of = [&](const Task &t) {
      if (t.kind == Task::Chunk) return t.len;
      const Component &last = *jobs[batched[t.begin + t.len - 1]].component;
      return last.offset + last.length - offset_of(t);
    };
    std::stable_sort(stream.begin(), stream.end(),
                     [&](const Task &a, const Task &b) { return offset_of(a) < offset_of(b); });
    uint64_t cold_bytes = 0;
    for (const Task &t : stream) cold_bytes += bytes_of(t);
    g_cold_streamed_bytes.fetch_add(cold_bytes, std::memory_order_relaxed);
    // Contiguous parts of equal size, one per stream, each read in file
    // order by one thread: two such streams kept the disk as busy as `cat`
    // and split the page faults of new destination memory (one stream alone
    // waited on them; measured in docs/cold-reads.md). A stream that runs
    // out takes the second half of what is left of the longest other one
    // (and reads it in order too): a thread that the scheduler set aside
    // (a busy machine, a framework's spinning threads) does not leave its
    // part unread while the other thread idles. The streams go first so
    // that threads start them at once; other threads then take the cached
    // and the zstd tasks.
    const unsigned streams = std::max(1u, std::min(total >= kParallelMinBytes ? threads() : 1u, kColdStreams));
    std::vector<Task> heads;
    size_t from = 0;
    uint64_t done = 0;
    for (unsigned k = 1; k <= streams && from < stream.size(); ++k) {
      const uint64_t goal = cold_bytes / streams * k;
      size_t to = from;
      while (to < stream.size() && (done < goal || k == streams)) done += bytes_of(stream[to++]);
      if (to > from) {
        heads.push_back({heads.size(), from, to - from, Task::Stream});
        parts.push_back({from, to});
      }
      from = to;
    }
    tasks.insert(tasks.begin(), heads.begin(), heads.end());
  }
  // Every stream but the first reads through its own opening of the file
  // (Source::reopen): the kernel keeps readahead state per open file, and
  // two streams sharing one looked like seeks to it, so it often stopped
  // reading ahead for both (cold loads 1.1-1.3x slower in those rounds).
  // A part stolen by a thread keeps that thread's opening.
  std::vector<std::unique_ptr<Source>> own(parts.size());
  for (size_t k = 1; k < own.size(); ++k) {
    own[k] = source_->reopen();
    if (own[k]) g_cold_reopened_streams.fetch_add(1, std::memory_order_relaxed);
  }
  if (!follow.empty()) prefetcher_->copies_follow();
  std::stable_sort(follow.begin(), follow.end(), [](const Task &a, const Task &b) { return a.ready_at < b.ready_at; });
  tasks.insert(tasks.end(), follow.begin(), follow.end());
  StreamParts cold_parts(std::move(parts));
  std::mutex mu;  // guards the status of jobs split into chunks
  std::function<void(const Task &, const Source &)> run_task = [&](const Task &task, const Source &src) {
    if (task.ready_at) {
      if (task.kind == Task::Chunk)
        prefault_destination(static_cast<uint8_t *>(jobs[task.job].dst) + task.begin, static_cast<size_t>(task.len));
      prefetcher_->wait_until(task.ready_at);
    }
    if (task.kind == Task::Stream) {
      const Source &mine = own[task.job] ? *own[task.job] : src;
      for (size_t k; (k = cold_parts.claim(task.job)) != SIZE_MAX;) run_task(stream[k], mine);
      return;
    }
    if (task.kind == Task::Batch) {
      read_batch(jobs, batched.data() + task.begin, static_cast<size_t>(task.len), src);
      return;
    }
    ReadJob &j = jobs[task.job];
    try {
      if (task.kind == Task::Whole)
        j.out_size = read(*j.object, *j.component, j.dst, j.capacity);
      else
        src.read(j.component->offset + task.begin, static_cast<size_t>(task.len),
                 static_cast<uint8_t *>(j.dst) + task.begin);
    } catch (const Error &e) {
      std::lock_guard<std::mutex> lock(mu);
      if (j.status == ZT_OK) record(j, e);
    }
  };
  // Small batches are not worth starting threads for.
  parallel_for(tasks.size(), total >= kParallelMinBytes ? threads() : 1,
               [&](size_t t) { run_task(tasks[t], *source_); });
}

// Jobs idx[0..n): raw, unswapped, checked, in file order, each starting at
// most Source::kMaxGap bytes after the previous one ends.
void Reader::read_batch(std::vector<ReadJob> &jobs, const size_t *idx, size_t n, const Source &src) const {
  std::vector<Source::Piece> pieces;
  pieces.reserve(2 * n);
  uint64_t end = 0;
  for (size_t k = 0; k < n; ++k) {
    const Component &c = *jobs[idx[k]].component;
    if (k > 0 && c.offset > end) pieces.push_back({nullptr, static_cast<size_t>(c.offset - end)});
    pieces.push_back({jobs[idx[k]].dst, static_cast<size_t>(c.length)});
    end = c.offset + c.length;
  }
  try {
    src.read_pieces(jobs[idx[0]].component->offset, pieces.data(), pieces.size());
  } catch (const Error &e) {
    // An I/O error is not one blob's: every job of the batch reports it.
    for (size_t k = 0; k < n; ++k) {
      ReadJob &j = jobs[idx[k]];
      j.status = e.status();
      j.error = ctx_of(*j.object, *j.component) + ": " + e.what();
    }
  }
}

void Reader::read_range(const Object &o, const Component &c, uint64_t first, uint64_t count, void *dst,
                        size_t capacity) const {
  const Source &file = source_of(c);
  check_readable(o, c);
  const LazyCtx ctx{o, c};
  const size_t es = dtype_size(c.dtype);
  auto begin = checked_mul(first, es), bytes = checked_mul(count, es);
  std::optional<uint64_t> end = begin && bytes ? checked_add(*begin, *bytes) : std::nullopt;
  uint64_t total = decoded_size(o, c);
  if (!end || *end > total)
    fail(ZT_E_INVALID_ARG, ctx + ": elements [" + std::to_string(first) + ", +" + std::to_string(count) +
                               ") are outside the component (" + std::to_string(es ? total / es : 0) + " elements)");
  if (capacity < *bytes)
    fail(ZT_E_BUFFER_TOO_SMALL,
         ctx + ": range needs " + std::to_string(*bytes) + " bytes, buffer has " + std::to_string(capacity));
  verify_before_read(o, c);
  if (c.encoding == ZT_ENCODING_RAW) {
    file.read(c.offset + *begin, static_cast<size_t>(*bytes), dst);
  } else if (c.seekable) {
    seekable_decoder(o, c)->read(*begin, static_cast<size_t>(*bytes), static_cast<uint8_t *>(dst));
  } else {
    std::vector<uint8_t> stored;
    const uint8_t *src = stored_bytes(c, stored);
    zstd_decode_range(src, c.length, dst, *begin, static_cast<size_t>(*bytes), ctx.str());
  }
  if (needs_swap(c)) byteswap_inplace(dst, static_cast<size_t>(*bytes), es);
}

const uint8_t *Reader::view(const Object &o, const Component &c, size_t *len) const {
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
  if (const size_t align = dtype_size(c.dtype); align > 1 && reinterpret_cast<uintptr_t>(p) % align != 0)
    fail(ZT_E_NOT_ZERO_COPY, ctx + ": data at file offset " + std::to_string(c.offset) + " is not aligned to its " +
                                 std::to_string(align) + "-byte elements; a read copies it");
  verify_before_read(o, c);
  *len = static_cast<size_t>(c.length);
  return p;
}

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
