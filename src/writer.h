// Writer: builds a spec-1.2.0 file. Blobs are appended at 64-byte offsets as
// they are given (whole or streamed in pieces), encoded and digested on the
// way; finish() appends the manifest, size and footer and renames the
// temporary file into place (docs/writing-rules.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codec/codec.h"
#include "container/sink.h"
#include "digest/digest.h"
#include "manifest/model.h"
#include "types/dtype.h"
#include "types/host_order.h"
#include "util/name_index.h"
#include "v2/v2_writer.h"

namespace zt {

struct WriterOptions {
  zt_digest_alg digest = ZT_DIGEST_NONE;
  zt_encoding encoding = ZT_ENCODING_RAW;
  int zstd_level = 3;
  unsigned threads = 0;  // 0 = cores; zstd workers for blobs ≥ 4 MiB
  bool sync = true;
  bool validate = true;
  // finish() opens what it wrote with an independent reader (strict, every
  // digest checked) before it replaces the destination; a file that fails
  // is abandoned and the destination left untouched.
  bool verify_before_replace = false;
  // The format generation: 1 = spec 1.2 (the default), 2 = zTensor v2,
  // written by v2::Writer with the options in `v2` (docs/v2.md, Writing).
  int format = 1;
  v2::WriterOptions v2;
};

struct BlobOptions {
  zt_encoding encoding = ZT_ENCODING_UNKNOWN;  // UNKNOWN = writer default
  int zstd_level = 0;
  bool has_level = false;
  zt_digest_alg digest = ZT_DIGEST_UNKNOWN;  // UNKNOWN = writer default
  bool has_type = false;
  std::string logical_type;
  std::vector<RawField> extra;  // unknown fields to keep
};

class Writer {
 public:
  Writer(const std::string &path, const WriterOptions &opts);
  // Any sink: memory, a callback (same bytes as to a file).
  Writer(std::unique_ptr<Sink> sink, const WriterOptions &opts);
  Sink &sink() { return *sink_; }
  ~Writer();  // abandons unless finished

  void set_attributes(std::string cbor);  // one encoded CBOR map
  void set_root_extra(std::vector<RawField> extra);
  void begin_object(const std::string &name, const std::string &format, ShapeRef shape);
  void set_object_attributes(const std::string &name, std::string cbor);
  void set_object_extra(const std::string &name, std::vector<RawField> extra);
  bool has_object(const std::string &name) const { return v2_ ? v2_->has_object(name) : find_object(name) != nullptr; }
  // Forgets `name` if it is the object declared last and has no component
  // yet: a composite write that fails before its first blob leaves no empty
  // object behind (no-op otherwise).
  void drop_object_if_empty(const std::string &name);

  void write_blob(const std::string &name, const std::string &role, zt_dtype dtype, const void *data, size_t len,
                  const BlobOptions &opts);
  void blob_begin(const std::string &name, const std::string &role, zt_dtype dtype, const BlobOptions &opts);
  void blob_append(const void *data, size_t len);
  void blob_end();

  void finish();
  void discard() noexcept;
  bool finished() const { return state_ != State::Open; }

  const Object *find_object(const std::string &name) const;
  bool writes_v2() const { return v2_ != nullptr; }
  // What a copy from another file asks of a v2 writer per part: the
  // writer's digest (crc32c is no v2 algorithm; canonical form wants xxh3)
  // and, when canonical, raw (zstd becomes zt.zstd-seekable/1 otherwise).
  void adapt_copy_options(BlobOptions &bo) const;

 private:
  enum class State { Open, Finished, Failed };
  size_t object_index(const std::string &name) const;
  size_t lookup(const std::string &name) const;  // NameIndex::npos if absent
  auto name_of() const {
    return [this](size_t i) -> std::string_view { return manifest_.objects[i].name; };
  }
  Object &object_for(const std::string &name);
  // Places a new component and opens it for bytes (blob_begin, write_blob).
  void open_blob(const std::string &name, const std::string &role, zt_dtype dtype, const BlobOptions &opts,
                 bool streaming);
  Component &new_component(Object &o, const std::string &role, zt_dtype dtype, const BlobOptions &opts);
  // Withdraws the blob just opened, writer still usable, if len bytes could
  // not be valid for it.
  void refuse_before_writing(size_t len);
  void check_open() const;
  unsigned zstd_threads(size_t len) const;
  // Digests and writes compressed bytes of the blob being written.
  void emit(Component &c, const uint8_t *p, size_t n);
  // verify_before_replace: opens the bytes `sink` holds with a strict reader
  // (1.2 or v2) and throws, naming the damage, if any check fails.
  static void check_written(Sink &sink);
  struct Stream;
  // Encodes, digests and writes bytes of the streamed blob (in stored order).
  void store_streamed(Stream &s, Component &c, const void *data, size_t len);
  // Writes len bytes at data, their digest (if any) taken on the way.
  void write_digested(Digester *digest, const void *data, size_t len);

  WriterOptions opts_;
  std::unique_ptr<Sink> sink_;
  Manifest manifest_;
  // While every object was declared in increasing name order (what most
  // writers do), uniqueness is one comparison with the last name and a
  // lookup is a binary search; the first name out of order builds index_.
  bool in_name_order_ = true;
  NameIndex index_;
  State state_ = State::Open;

  // The blob being streamed, if any.
  struct Stream {
    size_t object = 0;
    size_t component = 0;
    uint64_t raw_bytes = 0;
    std::unique_ptr<ZstdStream> zstd;
    std::unique_ptr<Digester> digest;
    std::unique_ptr<ByteSwapFeed> to_le;  // big-endian hosts, multi-byte dtypes
  };
  std::unique_ptr<Stream> stream_;
  // Set when writing v2: every call goes there instead.
  std::unique_ptr<v2::Writer> v2_;
};

}  // namespace zt
