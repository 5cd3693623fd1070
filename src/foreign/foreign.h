// Readers of foreign tensor files (safetensors, NumPy .npy/.npz, GGUF) for
// `zt convert`. Each reader parses an untrusted byte buffer into a list of
// tensors, checking every size and offset against the buffer and the limits
// before anything is allocated, so they can be fuzzed on their own. Failures
// throw zt::Error (ZT_E_FORMAT, format_error) with a message naming the file,
// the tensor and the rule; other statuses (ZT_E_IO, ZT_E_LIMIT) pass through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "cbor_item.h"
#include "internal/internal_api.h"
#include "util/error.h"
#include "ztensor.h"

namespace zt::foreign {

// The library's one error type (util/error.h): a malformed input is
// ZT_E_FORMAT; the readers throw format_error(message).
inline Error format_error(const std::string &message) {
  return Error(ZT_E_FORMAT, message);
}

struct Limits {
  uint64_t max_header = uint64_t{100} << 20;           // safetensors JSON / GGUF metadata / npy header
  uint64_t max_member = uint64_t{16} << 30;            // one decompressed npz member
  uint64_t max_elements_in_array = uint64_t{1} << 26;  // one GGUF metadata array
  uint64_t max_pickle = uint64_t{64} << 20;            // a PyTorch checkpoint's data.pkl
};

// Receives consecutive pieces of a tensor's little-endian bytes.
using PieceFn = std::function<void(const void *data, size_t len)>;

struct Tensor {
  std::string name;
  std::string format = "dense";  // "ggml_quantized" for GGUF block types
  zt_dtype dtype = ZT_DTYPE_UNKNOWN;
  std::string logical_type;      // "" = none
  std::vector<uint64_t> shape;   // row-major (C order)
  uint64_t nbytes = 0;           // exactly what emit() delivers
  uint64_t offset = UINT64_MAX;  // where the stored bytes start in the input; MAX when not contiguous there
  // True when the bytes [offset, offset + nbytes) of the input are the
  // tensor's elements in C order, little-endian unless big_endian: zt_open
  // then reads them in place (views where the host's order matches).
  bool in_place = false;
  bool big_endian = false;
  CborAttributes attributes;  // object attributes; empty = none
  // Delivers the bytes in pieces (converted to little-endian C order);
  // throws format_error if the source turns out shorter or longer.
  std::function<void(const PieceFn &)> emit;
};

struct Imported {
  std::vector<Tensor> tensors;
  // File attributes, each value an encoded CBOR item (see cbor_item.h). A
  // sorted map, not an insertion-ordered one whose insertions scan every key:
  // inputs with many metadata keys would cost quadratic time.
  CborAttributes attributes;
  std::shared_ptr<void> keepalive;  // what emit() reads from (mapping, zip archive)
  std::string format_name;          // "safetensors", "npy", "npz", "pickle", "gguf v3" (set by import_file)
};

// The buffer must outlive the result (the caller keeps it in keepalive).
// `what` names the input in messages; `stem` is the name of a lone .npy's object.
Imported read_safetensors(const uint8_t *data, size_t size, const std::string &what, const Limits &limits);
Imported read_npy(const uint8_t *data, size_t size, const std::string &what, const std::string &stem,
                  const Limits &limits);
// A zip archive: a PyTorch checkpoint (a member */data.pkl; pytorch.cc) or
// else an .npz (npy.cc).
Imported read_zip(const uint8_t *data, size_t size, const std::string &what, const Limits &limits);
// A file that is a bare pickle: the legacy (before torch 1.6) PyTorch
// format, refused with a message saying how to re-save it.
Imported read_pickle_file(const uint8_t *data, size_t size, const std::string &what, const Limits &limits);
Imported read_gguf(const uint8_t *data, size_t size, const std::string &what, const Limits &limits);

// An ONNX model: every initializer of its graph (onnx.cc). `model_path`
// locates external data ("" or "<memory>": none allowed).
Imported read_onnx(const uint8_t *data, size_t size, const std::string &what, const std::string &model_path,
                   const Limits &limits);

// An HDF5 file through libhdf5 (hdf5.cc): opened by `path`, or as a file
// image of the bytes when "" or "<memory>".
Imported read_hdf5(const uint8_t *data, size_t size, const std::string &what, const std::string &path,
                   const Limits &limits);

// GGUF metadata value types (the GGUF format description), read by the
// importer and written by zt export --to gguf.
enum GgufValueType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

// A ggml tensor type as GGUF numbers it (ggml.h), also used by zt export.
struct GgmlTypeInfo {
  uint32_t id;
  const char *name;     // lowercase ggml name
  uint32_t block_size;  // elements per block
  uint32_t type_size;   // bytes per block
  zt_dtype dtype;       // direct zTensor dtype, or UNKNOWN for block types
};
// nullptr for an id the importer does not know.
ZT_INTERNAL const GgmlTypeInfo *ggml_type_info(uint32_t id);

// Maps `path` and dispatches on its extension (.safetensors, .npy, .npz,
// .gguf); unknown extensions are recognised by their magic bytes.
// The zt tool only, through the internal interface (ZT_INTERNAL; Windows:
// read whole, platform/file.h FileView).
ZT_INTERNAL Imported import_file(const std::string &path, const Limits &limits);

// The foreign format of a file by its first bytes (at least 16, fewer only
// for a shorter file) and its size: by magic for .npy ("\x93NUMPY"), .npz
// (a zip: "PK\3\4" or "PK\5\6") and GGUF ("GGUF"); a safetensors file has
// none, so it is an 8-byte header length that fits the file followed by
// '{'. Kind::None for anything else (a .zt file among them).
// A zip is Kind::Npz here; read_zip tells a PyTorch checkpoint by its
// members. Kind::Pickle: a file starting with a pickle's PROTO opcode.
enum class Kind { None, Safetensors, Npy, Npz, Gguf, Pickle, Onnx, Hdf5 };
Kind detect(const uint8_t *head, size_t n, uint64_t file_size);
const char *kind_name(Kind kind);
// The file name without folder and last extension: a lone .npy's object name.
std::string stem_of(const std::string &path);  // "safetensors", "npy", "npz", "gguf"
// Parses `data` as `kind` (format_name set); `what` names it in messages and
// `stem` names a lone .npy's object.
// `path` is the file's own (for an ONNX model's external data; "" in memory).
Imported import_buffer(Kind kind, const uint8_t *data, size_t size, const std::string &what, const std::string &stem,
                       const Limits &limits, const std::string &path = "");

// The index of a sharded checkpoint (model.safetensors.index.json). Shard
// locations are checked against the rules of docs/sharding.md (relative,
// inside the index's folder); the file is bounded by limits.max_header.
struct ShardIndexFile {
  std::string metadata_json = "null";                           // compact JSON text, document order
  std::vector<std::pair<std::string, std::string>> weight_map;  // tensor → shard, sorted by tensor
};
ZT_INTERNAL ShardIndexFile read_shard_index(const std::string &path, const Limits &limits);

// Helpers shared by the readers.
uint64_t checked_mul(uint64_t a, uint64_t b, const std::string &ctx);
uint64_t checked_add(uint64_t a, uint64_t b, const std::string &ctx);
// The bytes [begin, end) of the input that one tensor's data occupies.
struct DataRange {
  uint64_t begin, end;
  std::string name;
};
// Throws format_error naming two tensors whose data overlap. Each tensor of
// the output gets bytes of its own, so a few KB of input whose tensors all
// name the same bytes would otherwise become gigabytes of output.
void refuse_overlapping(std::vector<DataRange> ranges, const std::string &what);
// Throws format_error when JSON text nests deeper than 64 levels (bounds the
// parser's stack before hostile text reaches it).
void check_json_depth(const char *p, size_t n, const std::string &what);
// Bytes as lowercase hex.
std::string hex(const uint8_t *p, size_t n);
// Swaps each element of `esize` bytes in place.
void byteswap(uint8_t *p, size_t n, size_t esize);
// Delivers [p, p+n) in pieces, optionally byte-swapped per element.
void emit_bytes(const uint8_t *p, uint64_t n, size_t swap_esize, const PieceFn &fn);

}  // namespace zt::foreign
