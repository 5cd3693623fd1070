// The in-memory manifest: file → objects → components, with attributes and
// unknown fields kept as raw CBOR. One model for every spec version; the
// decoders map 0.1 and 1.1 files onto it (docs/reading-rules.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "digest/digest.h"
#include "util/small_vector.h"
#include "ztensor.h"

namespace zt {

// A CBOR map given as (key CBOR, value CBOR) pairs, each one encoded item.
struct RawField {
  std::string key;    // encoded CBOR of the key
  std::string value;  // encoded CBOR of the value
};

struct Component {
  std::string role;
  zt_dtype dtype = ZT_DTYPE_UNKNOWN;
  std::string dtype_name;  // normalised short name, or as found if unknown
  bool has_type = false;
  std::string logical_type;
  uint32_t ratio = 1;
  zt_encoding encoding = ZT_ENCODING_RAW;
  std::string encoding_name = "raw";
  uint64_t offset = 0;
  uint64_t length = 0;
  bool has_uncompressed_length = false;
  uint64_t uncompressed_length = 0;
  // A spec 1.2 zstd component without uncompressed_length, which 1.2
  // requires: read as legacy ones are (the size the shape implies, else the
  // frame's content size or a bounded decode); a strict verify flags it.
  bool missing_uncompressed_length = false;
  // What a read yields; for legacy zstd without a declared length it is the
  // size implied by the shape (decoded_known = false for non-dense ones).
  uint64_t decoded_length = 0;
  bool decoded_known = true;
  bool big_endian = false;
  bool has_digest = false;
  std::string digest;
  ParsedDigest parsed_digest;
  zt_status status = ZT_OK;  // damage found at open
  std::string error;
  std::vector<RawField> extra;  // unknown keys
  // Format v2 only (src/v2/):
  // The shard (§7.1) that holds the blob; empty: this file. A part in
  // another file has status ZT_E_UNSUPPORTED until a resolver reaches it.
  std::string shard;
  // 1 + its index in the shard table when `shard` is set (the reader's
  // shard sources, src/set/v2_shards.h); 0: this file.
  uint32_t file = 0;
  // The content rule of its logical type, checked when the bytes are read
  // or verified (v2::ContentCheck: 0 none, 1 bool 0/1, 2 f4 padding nibble).
  uint8_t content_check = 0;
  // Its digest covers the decoded bytes (v2, §3.4), not the stored ones
  // (1.x). The same for raw parts.
  bool digest_of_decoded = false;
  // Encoded with zt.zstd-seekable/1 (encoding ZT_ENCODING_ZSTD: the stream
  // is zstd frames and a skippable seek table), decoded by frames.
  bool seekable = false;
};

// Dims held inline up to 4 (nearly every tensor): no allocation per object.
using Shape = SmallVector<uint64_t, 4>;

struct Object {
  std::string name;
  Shape shape;
  bool has_format = false;
  std::string format;
  bool has_attributes = false;
  std::string attributes;  // encoded CBOR item
  std::vector<Component> components;
  zt_status status = ZT_OK;  // first damage in the object or its components
  std::string error;
  std::vector<RawField> extra;
  uint64_t numel = 0;  // valid when the shape product did not overflow
};

enum class SpecVersion { V0_1, V1_1, V1_2, V2 };

struct Manifest {
  std::string version;  // as declared ("0.1.0" for legacy files)
  // A foreign file read through src/foreign: its format ("safetensors",
  // "npy", "npz", "gguf v3"), and `version` says the same. Empty for .zt.
  // Such a file is read-only: nothing edits or appends to it in place.
  std::string foreign;
  // Its tensors are decoded on first read (.npz members, Fortran order):
  // offsets index that copy in memory (foreign/decode_on_read.h), not the file.
  bool foreign_decoded = false;
  SpecVersion spec = SpecVersion::V1_2;
  bool has_attributes = false;
  std::string attributes;
  std::vector<RawField> extra;
  std::vector<Object> objects;
  // Object indices in bytewise name order, for lookups by name (binary
  // search). Writers emit names sorted, so building it is usually one pass.
  std::vector<uint32_t> name_order;
  // The object of that name, or nullptr.
  const Object *find(std::string_view name) const;
  uint64_t data_end = 0;  // where blobs must end: the manifest's offset (v2: the footer's)
  // A v2 data shard (§7.2): a footer with no manifest, so no objects; its
  // blobs are reached only through a root that names it.
  bool data_shard = false;
  // v2: the shard table (§7.1), by name; empty for 1.x and single files.
  struct ShardEntry {
    std::string name;
    uint64_t size = 0;
    std::string digest;
  };
  std::vector<ShardEntry> shards;
};

}  // namespace zt
