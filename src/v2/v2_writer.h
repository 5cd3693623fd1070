// The v2 writer (spec ztensor-v2-spec.md; docs/v2.md, Writing). Canonical
// form (§6.3) by default: blobs on 64 KiB boundaries from 65536 in
// (object name, part name) order of first reference, byte-identical parts
// sharing one blob, the manifest last, raw parts with xxh3 digests, NFC
// names. Callers add objects and parts in any order:
//
// - Blobs go to a layout file (the destination's temporary, or an anonymous
//   one in $TMPDIR for memory and callback writers) at the next boundary as
//   they come, hashed once on the way. While every (object, part) arrives
//   in increasing order, the layout file IS the canonical file.
// - The first one out of order turns the layout file into a spool: finish()
//   places the blobs in canonical order in a new file (copy_file_range, a
//   reflink where the filesystem can) and drops the spool.
// - A part whose bytes equal an earlier one's (same length and digest, then
//   compared byte for byte) shares its blob; a streamed duplicate already
//   written is taken back (the layout file is cut where it started).
//
// Padding is never written: a blob is written at its offset, and the gap
// before it is a hole where the filesystem has them (reads as zeros).
// Memory holds the manifest model and one frame or piece, never the data.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "container/sink.h"
#include "digest/digest.h"
#include "types/dtype.h"
#include "util/endian.h"
#include "v2/blob_file.h"
#include "ztensor.h"

namespace zt::v2 {

constexpr uint64_t kCanonicalAlignment = 65536;
constexpr uint64_t kAlignmentFloor = 4096;

struct WriterOptions {
  bool canonical = true;
  uint64_t alignment = kCanonicalAlignment;  // non-canonical: a multiple of 4096 (≥ 4096)
  zt_digest_alg digest = ZT_DIGEST_XXH3;     // default per part: NONE, XXH3, SHA256
  zt_encoding encoding = ZT_ENCODING_RAW;    // default per part: ZSTD = zt.zstd-seekable/1
  int zstd_level = 3;
  bool sync = true;
  // The byte order of the elements callers hand over: the host's (the C
  // ABI's rule). The file stores them little-endian, so big-endian elements
  // are swapped before they are hashed, compared, compressed or written.
  // Tests set it on a little-endian host to run a big-endian host's path.
  bool caller_big_endian = kHostBigEndian;
  // Called with the finished file's sink (its bytes all written) just
  // before it is committed over the destination; a throw abandons it
  // instead. zt::Writer's verify_before_replace.
  std::function<void(Sink &)> before_commit;
};

struct PartOptions {
  zt_encoding encoding = ZT_ENCODING_UNKNOWN;  // UNKNOWN = the writer's default
  int zstd_level = 0;
  bool has_level = false;
  zt_digest_alg digest = ZT_DIGEST_UNKNOWN;  // UNKNOWN = the writer's default
  bool has_type = false;
  std::string logical_type;
};

class Writer {
 public:
  Writer(std::unique_ptr<Sink> sink, const WriterOptions &opts);
  ~Writer();

  // CBOR map items, any well-formed encoding: checked (§3.1) and re-encoded
  // deterministically here, before anything else is written.
  void set_attributes(const std::string &cbor);
  void begin_object(const std::string &name, const std::string &layout, ShapeRef shape);
  void set_object_attributes(const std::string &name, const std::string &cbor);
  bool has_object(const std::string &name) const;
  void drop_object_if_empty(const std::string &name);

  void write_blob(const std::string &name, const std::string &role, zt_dtype dtype, const void *data, size_t len,
                  const PartOptions &opts);
  void blob_begin(const std::string &name, const std::string &role, zt_dtype dtype, const PartOptions &opts);
  void blob_append(const void *data, size_t len);
  void blob_end();

  void finish();
  void discard() noexcept;

  // The manifest as it would be written now (tests, tools).
  std::string encode_manifest() const;

 private:
  struct Part {
    std::string name;
    std::string dtype;  // v2 name
    std::string type;   // logical type, "" = none
    size_t blob = 0;    // index into blobs_
    bool encoded = false;
    uint64_t decoded_length = 0;
    std::string digest;  // "" = none
  };
  struct Object {
    std::string name;
    std::string layout;
    std::vector<uint64_t> shape;
    uint64_t numel = 0;
    std::string attributes;  // deterministic CBOR, "" = none
    std::vector<Part> parts;
  };
  struct Blob {
    uint64_t at = 0;  // in the layout file
    uint64_t length = 0;
    uint64_t offset = 0;  // in the final file
    bool placed = false;
    size_t same_key = SIZE_MAX;  // the next blob with the same content key
  };
  struct Stream;

  Object &object_for(const std::string &name);
  void check_open() const;
  void check_name(const std::string &name, const char *what) const;
  Part &new_part(Object &o, const std::string &role, zt_dtype dtype, const PartOptions &opts, bool &encode, int &level,
                 zt_digest_alg &alg);
  void open_stream(const std::string &name, const std::string &role, zt_dtype dtype, const PartOptions &opts,
                   bool streaming);
  size_t lookup(const std::string &name) const;  // SIZE_MAX if absent
  bool swaps(zt_dtype dtype) const;              // elements of `dtype` from callers are swapped
  void store(const uint8_t *p, size_t n);
  void close_stream(const uint8_t *whole);
  uint64_t next_offset(uint64_t at, uint64_t len) const;
  bool same_bytes(uint64_t a, uint64_t b, uint64_t len, const uint8_t *mem);
  void place_blobs(uint64_t &manifest_at);
  void restate_quantized(Object &o);
  void copy_out(int out_fd, uint64_t manifest_at, const std::string &manifest);
  void stream_out(Sink &sink, uint64_t manifest_at, const std::string &manifest, uint64_t file_size);
  void fail_writer();

  WriterOptions opts_;
  std::unique_ptr<Sink> sink_;
  int fd_ = -1;                             // the layout file
  BlobFile file_;                           // its writes, gathered
  bool own_fd_ = false;                     // an anonymous spool of ours (memory and callback writers)
  uint64_t next_at_ = kCanonicalAlignment;  // where the next blob goes in the layout file
  uint64_t data_end_ = 8;                   // end of the last blob written
  bool in_order_ = true;
  std::string last_key_object_, last_key_part_;
  bool have_last_key_ = false;
  bool weak_content_key_ = false;

  std::string attributes_;
  std::vector<Object> objects_;
  bool names_sorted_ = true;  // objects_ in increasing name order: no index_ needed
  std::unordered_map<std::string, size_t> index_;
  std::vector<Blob> blobs_;
  // A hash of (length, digest) → the blobs with that content key (chained
  // through Blob::same_key); equality is confirmed on the bytes before two
  // parts share one.
  // Content key → the first blob with it, open addressing: every part is
  // looked up, and a node-based map costs a cache miss more per lookup.
  class ContentIndex {
   public:
    size_t find(uint64_t key) const;  // SIZE_MAX if absent
    // The first blob already under `key`, or SIZE_MAX once `blob` is put there.
    size_t insert(uint64_t key, size_t blob);

   private:
    size_t slot(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }
    std::vector<std::pair<uint64_t, size_t>> slots_;  // blob SIZE_MAX: empty
    size_t used_ = 0;
    unsigned shift_ = 64;
  };
  ContentIndex by_content_;
  std::unique_ptr<Stream> stream_;
  enum class State { Open, Finished, Failed } state_ = State::Open;
};

}  // namespace zt::v2
