// Reader: an open .zt file of any supported version — the manifest model
// plus byte access (views, decoded reads, ranged reads, verification). It is
// immutable after open and safe to use from several threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "composite/component_bytes.h"
#include "container/layout.h"
#include "container/source.h"
#include "manifest/model.h"
#include "v2/zstd_seekable_decode.h"

namespace zt {

class Prefetcher;
class ShardOpener;

// Whether a component's multi-byte elements are stored in another byte order
// than the host's, so reads swap them and views are refused (util/endian.h).
bool needs_swap(const Component &c);

// max_decoded_size's default. Left at it, a foreign file's decode-on-read
// tensors together are bounded by a multiple of the file's size instead
// (foreign/open_foreign.h); set to anything else, it raises that bound.
constexpr uint64_t kDefaultMaxDecodedSize = uint64_t{64} << 30;

struct ReaderOptions {
  zt_access access = ZT_ACCESS_MMAP;
  bool strict = false;
  unsigned threads = 0;  // 0 = hardware concurrency
  uint64_t max_manifest_size = kMaxManifestSize;
  uint64_t max_decoded_size = kDefaultMaxDecodedSize;
  // Check each component's digest the first time its bytes are read.
  bool verify_on_read = false;
  // Read the data into the page cache in the background from the open on
  // (src/prefetcher.h); files opened by path only.
  bool prefetch = false;
  // Format v2 roots (spec §7): how the files a root's parts live in are
  // found (set/v2_shards.h). Null: positional beside a root opened by path
  // (Reader::open), none for other opens (those parts then report why).
  std::shared_ptr<const ShardOpener> shards;
};

// One request of a batched read (zt_file_read_many). A job whose status is
// already an error on entry is skipped.
struct ReadJob {
  const Object *object = nullptr;
  const Component *component = nullptr;
  void *dst = nullptr;
  size_t capacity = 0;
  size_t out_size = 0;  // bytes written, or needed on ZT_E_BUFFER_TOO_SMALL
  zt_status status = ZT_OK;
  std::string error;
};

struct VerifyFailure {
  size_t object;
  std::string role;
  zt_status status;
  std::string message;
};

class Reader final : public ComponentBytes {
 public:
  static std::shared_ptr<Reader> open(const std::string &path, const ReaderOptions &opts);
  static std::shared_ptr<Reader> open_memory(const void *data, size_t size, const ReaderOptions &opts);
  // Any other source (caller callbacks, HTTP); opts.access is not used.
  static std::shared_ptr<Reader> open_source(std::unique_ptr<Source> src, const ReaderOptions &opts);

  ~Reader();
  Reader(const Reader &) = delete;
  Reader &operator=(const Reader &) = delete;

  const Manifest &manifest() const { return manifest_; }
  // The background reader of the `prefetch` option, or nullptr (option off,
  // not a local file, nothing to read).
  const Prefetcher *prefetcher() const { return prefetcher_.get(); }
  const Source &source() const { return *source_; }
  // The file a component's bytes are in: this one, or (v2) the shard it
  // names, opened with the root (a part whose shard could not be opened has
  // a status that every read checks first).
  const Source &source_of(const Component &c) const { return c.file ? *shard_src_[c.file - 1] : *source_; }
  // The shards a v2 root's parts name, in shard-table order (null: not
  // opened: unnamed by any part, or not found; see shard_error()).
  const std::vector<std::unique_ptr<Source>> &shard_sources() const { return shard_src_; }
  const ReaderOptions &options() const { return opts_; }
  unsigned threads() const;

  // Throws the component's (or object's) recorded damage, if any, and (v2)
  // a breach of its logical type's content rule: what every typed read and
  // verify checks first.
  // A pointer into source().data() needs Source::materialize first (a
  // foreign file's decode-on-read tensors); Source::read does that itself.
  void check_readable(const Object &o, const Component &c) const;
  // Only the recorded damage.
  void check_status(const Object &o, const Component &c) const;
  // The stored bytes, as they are in the file, whatever the encoding or
  // logical type (v2 structural access; zt_component_read_stored).
  size_t read_stored(const Object &o, const Component &c, void *dst, size_t capacity) const;

  // Decoded size; for legacy zstd of unknown size this decodes (bounded).
  uint64_t decoded_size(const Object &o, const Component &c) const override;
  // Decodes into dst (capacity ≥ decoded size, else ZT_E_BUFFER_TOO_SMALL).
  // Returns the number of bytes written.
  size_t read(const Object &o, const Component &c, void *dst, size_t capacity) const;
  std::vector<uint8_t> read_vector(const Object &o, const Component &c) const override;
  // Storage elements [first, first+count).
  void read_range(const Object &o, const Component &c, uint64_t first, uint64_t count, void *dst,
                  size_t capacity) const;
  // An N-d box [start, stop) of the component, row-major into dst (see
  // slice_read.cc); returns the bytes written.
  size_t read_slice(const Object &o, const Component &c, size_t ndim, const uint64_t *start, const uint64_t *stop,
                    void *dst, size_t capacity) const;
  // Reads every job, on up to threads() threads; large raw components are
  // split into chunks so both cores copy, small neighbouring raw ones are
  // read together. Each job records its own outcome.
  void read_many(std::vector<ReadJob> &jobs) const;
  // Borrowed pointer to a raw component stored in the host's byte order
  // (little-endian on x86/ARM), or ZT_E_NOT_ZERO_COPY. The pointer is
  // aligned to the element size unless `unaligned_ok` (zt_component_view_
  // unaligned: foreign files place elements anywhere; the caller reads bytes).
  const uint8_t *view(const Object &o, const Component &c, size_t *len, bool unaligned_ok = false) const;
  // Calls fn on consecutive pieces of the stored (encoded) bytes.
  // The stored bytes of a component: a pointer into the map, or a copy in
  // `scratch` (pread access).
  const uint8_t *stored_bytes(const Component &c, std::vector<uint8_t> &scratch) const;
  void for_each_stored_piece(const Component &c, const std::function<void(const uint8_t *, size_t)> &fn) const;
  // Calls fn on consecutive pieces of the decoded bytes of a component
  // whose digest covers them: the stored bytes of a raw one, the frames of
  // a zt.zstd-seekable/1 one (src/reader_seekable.cc).
  void for_each_digested_piece(const Object &o, const Component &c,
                               const std::function<void(const uint8_t *, size_t)> &fn) const;
  // A decoder of a zt.zstd-seekable/1 component, its seek table checked:
  // a range of it decodes only the frames the range touches.
  std::unique_ptr<v2::ZstdSeekableDecoder> seekable_decoder(const Object &o, const Component &c) const;

  // Verify-on-read (docs/c-abi.md): with the option on, checks the
  // component's digest over all its stored bytes unless that was already
  // done, remembering success per component (thread-safe: concurrent first
  // readers may both check, never hand out unchecked bytes). A no-op when
  // the option is off or the component has no digest of a known algorithm.
  void verify_before_read(const Object &o, const Component &c) const;
  // True when verify_before_read would still have to check c.
  bool digest_pending(const Object &o, const Component &c) const;
  // Records that c's stored bytes matched its digest (a stream that digested
  // them as they passed).
  void mark_verified(const Object &o, const Component &c) const;
  // The message of a digest mismatch: file, object, component, algorithm.
  std::string digest_mismatch_message(const Object &o, const Component &c, const std::string &got) const;

  // Structure + digest (+ zstd size, + strict bool bytes).
  zt_verify_result verify_component(const Object &o, const Component &c, bool strict) const;
  // The same checks of c's stored bytes, but a zstd frame may decode to up
  // to `limit` bytes (more is ZT_E_DECODED_SIZE) and its decoded size is
  // returned in *decoded, not compared with c's: objects that share one
  // blob but declare different sizes are then checked with one decode.
  zt_verify_result verify_stored(const Object &o, const Component &c, bool strict, uint64_t limit,
                                 uint64_t *decoded) const;
  // All components, then (strict) the object's format structure.
  void verify_object(const Object &o, bool strict) const;
  // Every object, in parallel; failures in manifest order.
  std::vector<VerifyFailure> verify_all(bool strict) const;

 private:
  Reader(std::unique_ptr<Source> src, const ReaderOptions &opts, bool foreign_ok = false);
  void init_verify_slots();
  // Opens the shards the v2 manifest's parts name (set/v2_shards.h) and
  // checks the ladder's cheap rungs; a shard that fails leaves its parts
  // with the failure as their status.
  void attach_shards();
  void check_content(const Object &o, const Component &c) const;
  void read_batch(std::vector<ReadJob> &jobs, const size_t *idx, size_t n, const Source &src) const;
  void read_planned(std::vector<ReadJob> &jobs, std::vector<size_t> &planned) const;
  size_t component_slot(const Object &o, const Component &c) const;
  // Digest over the stored bytes; throws ZT_E_DIGEST_MISMATCH.
  void check_digest(const Object &o, const Component &c) const;
  // Starts prefetcher_ over [begin, end) when the option asks for it.
  void start_prefetch(uint64_t begin, uint64_t end);
  std::unique_ptr<Source> source_;
  std::vector<std::unique_ptr<Source>> shard_src_;  // by shard-table index
  ReaderOptions opts_;
  Manifest manifest_;
  std::unique_ptr<Prefetcher> prefetcher_;
  // verify_on_read only: first component slot of each object, and per slot
  // whether the digest was checked and matched.
  std::vector<size_t> slot_base_;
  std::unique_ptr<std::atomic<bool>[]> verified_;
};

// File bytes read_many has read as cold ranges, in file order in contiguous
// streams (Source::likely_cached said no), over the process's life. For tests.
uint64_t cold_streamed_bytes();
// Streams that read through their own opening of the file (Source::reopen),
// over the process's life. For tests.
uint64_t cold_reopened_streams();

// Runs fn(i) for i in [0, n) on up to `threads` threads; the first exception
// (lowest i) is rethrown after all finish.
void parallel_for(size_t n, unsigned threads, const std::function<void(size_t)> &fn);

}  // namespace zt
