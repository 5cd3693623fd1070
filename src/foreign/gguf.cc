// GGUF v2/v3 (the llama.cpp / ggml file): "GGUF", u32 version, u64 tensor
// count, u64 key/value count, the key/values, the tensor infos (name, n_dims,
// dims innermost first, ggml type, offset), padding to general.alignment
// (default 32), then the tensor data. All integers little-endian.
//
// Shapes are reversed into row-major order (numpy/torch order): a GGUF
// tensor with ne = [4096, 32000] becomes shape [32000, 4096].
#include <cmath>
#include <cstring>
#include <set>

#include "foreign.h"
#include "util/utf8.h"

namespace zt::foreign {
namespace {

using GgmlType = GgmlTypeInfo;

// ggml_type values as numbered in ggml.h (gaps are types removed upstream).
constexpr GgmlType kGgmlTypes[] = {
    {0, "f32", 1, 4, ZT_F32},
    {1, "f16", 1, 2, ZT_F16},
    {2, "q4_0", 32, 18, ZT_DTYPE_UNKNOWN},
    {3, "q4_1", 32, 20, ZT_DTYPE_UNKNOWN},
    {6, "q5_0", 32, 22, ZT_DTYPE_UNKNOWN},
    {7, "q5_1", 32, 24, ZT_DTYPE_UNKNOWN},
    {8, "q8_0", 32, 34, ZT_DTYPE_UNKNOWN},
    {9, "q8_1", 32, 36, ZT_DTYPE_UNKNOWN},
    {10, "q2_k", 256, 84, ZT_DTYPE_UNKNOWN},
    {11, "q3_k", 256, 110, ZT_DTYPE_UNKNOWN},
    {12, "q4_k", 256, 144, ZT_DTYPE_UNKNOWN},
    {13, "q5_k", 256, 176, ZT_DTYPE_UNKNOWN},
    {14, "q6_k", 256, 210, ZT_DTYPE_UNKNOWN},
    {15, "q8_k", 256, 292, ZT_DTYPE_UNKNOWN},
    {16, "iq2_xxs", 256, 66, ZT_DTYPE_UNKNOWN},
    {17, "iq2_xs", 256, 74, ZT_DTYPE_UNKNOWN},
    {18, "iq3_xxs", 256, 98, ZT_DTYPE_UNKNOWN},
    {19, "iq1_s", 256, 50, ZT_DTYPE_UNKNOWN},
    {20, "iq4_nl", 32, 18, ZT_DTYPE_UNKNOWN},
    {21, "iq3_s", 256, 110, ZT_DTYPE_UNKNOWN},
    {22, "iq2_s", 256, 82, ZT_DTYPE_UNKNOWN},
    {23, "iq4_xs", 256, 136, ZT_DTYPE_UNKNOWN},
    {24, "i8", 1, 1, ZT_I8},
    {25, "i16", 1, 2, ZT_I16},
    {26, "i32", 1, 4, ZT_I32},
    {27, "i64", 1, 8, ZT_I64},
    {28, "f64", 1, 8, ZT_F64},
    {29, "iq1_m", 256, 56, ZT_DTYPE_UNKNOWN},
    {30, "bf16", 1, 2, ZT_BF16},
    {31, "q4_0_4_4", 32, 18, ZT_DTYPE_UNKNOWN},
    {32, "q4_0_4_8", 32, 18, ZT_DTYPE_UNKNOWN},
    {33, "q4_0_8_8", 32, 18, ZT_DTYPE_UNKNOWN},
    {34, "tq1_0", 256, 54, ZT_DTYPE_UNKNOWN},
    {35, "tq2_0", 256, 66, ZT_DTYPE_UNKNOWN},
    {36, "iq4_nl_4_4", 32, 18, ZT_DTYPE_UNKNOWN},
    {37, "iq4_nl_4_8", 32, 18, ZT_DTYPE_UNKNOWN},
    {38, "iq4_nl_8_8", 32, 18, ZT_DTYPE_UNKNOWN},
    {39, "mxfp4", 32, 17, ZT_DTYPE_UNKNOWN},
};

class Cursor {
 public:
  Cursor(const uint8_t *p, size_t n, const std::string &what) : p_(p), n_(n), what_(what) {}
  size_t pos() const { return pos_; }
  size_t left() const { return n_ - pos_; }
  const uint8_t *take(uint64_t k, const char *field) {
    if (k > left())
      throw format_error(what_ + ": truncated at offset " + std::to_string(pos_) + " reading " + field + " (" +
                         std::to_string(k) + " bytes, " + std::to_string(left()) + " left)");
    const uint8_t *r = p_ + pos_;
    pos_ += static_cast<size_t>(k);
    return r;
  }
  uint64_t uint(int bytes, const char *field) {
    const uint8_t *b = take(bytes, field);
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | b[i];
    return v;
  }
  std::string str(const char *field) {
    uint64_t len = uint(8, field);
    const uint8_t *b = take(len, field);
    return std::string(reinterpret_cast<const char *>(b), static_cast<size_t>(len));
  }
  const std::string &what() const { return what_; }

 private:
  const uint8_t *p_;
  size_t n_;
  size_t pos_ = 0;
  const std::string &what_;
};

struct MetaBudget {
  uint64_t values_left;
};

size_t min_size(uint32_t type) {
  switch (type) {
    case kU8:
    case kI8:
    case kBool:
      return 1;
    case kU16:
    case kI16:
      return 2;
    case kU32:
    case kI32:
    case kF32:
      return 4;
    case kU64:
    case kI64:
    case kF64:
    case kString:
      return 8;
    case kArray:
      return 12;
    default:
      return 0;
  }
}

// Appends one metadata value to `out` as a CBOR item: integers as integers,
// floats at their own width, strings as text (bytes when not UTF-8), arrays
// as arrays.
void read_value(Cursor &c, uint32_t type, const std::string &key, MetaBudget &budget, int depth, CborItem &out) {
  if (budget.values_left-- == 0) throw format_error(c.what() + ": metadata has too many values");
  const char *f = "a metadata value";
  switch (type) {
    case kU8:
      return cbor_append_uint(out, c.uint(1, f));
    case kI8:
      return cbor_append_int(out, static_cast<int8_t>(c.uint(1, f)));
    case kU16:
      return cbor_append_uint(out, c.uint(2, f));
    case kI16:
      return cbor_append_int(out, static_cast<int16_t>(c.uint(2, f)));
    case kU32:
      return cbor_append_uint(out, c.uint(4, f));
    case kI32:
      return cbor_append_int(out, static_cast<int32_t>(c.uint(4, f)));
    case kU64:
      return cbor_append_uint(out, c.uint(8, f));
    case kI64:
      return cbor_append_int(out, static_cast<int64_t>(c.uint(8, f)));
    case kF32: {
      uint32_t bits = static_cast<uint32_t>(c.uint(4, f));
      float v;
      std::memcpy(&v, &bits, 4);
      return cbor_append_f32(out, v);
    }
    case kF64: {
      uint64_t bits = c.uint(8, f);
      double v;
      std::memcpy(&v, &bits, 8);
      return cbor_append_f64(out, v);
    }
    case kBool: {
      uint64_t b = c.uint(1, f);
      if (b > 1)
        throw format_error(c.what() + ": key '" + key + "': bool value " + std::to_string(b) + " is not 0 or 1");
      return cbor_append_bool(out, b == 1);
    }
    case kString:
      return cbor_append_string(out, c.str(f));
    case kArray: {
      if (depth >= 8) throw format_error(c.what() + ": key '" + key + "': arrays nested deeper than 8 levels");
      uint32_t elem = static_cast<uint32_t>(c.uint(4, "an array type"));
      uint64_t count = c.uint(8, "an array length");
      size_t ms = min_size(elem);
      if (!ms) throw format_error(c.what() + ": key '" + key + "': unknown array element type " + std::to_string(elem));
      if (count > c.left() / ms || count > budget.values_left)
        throw format_error(c.what() + ": key '" + key + "': array length " + std::to_string(count) +
                           " is larger than the file or the metadata limit allows");
      cbor_append_array_head(out, count);
      for (uint64_t i = 0; i < count; ++i) read_value(c, elem, key, budget, depth + 1, out);
      return;
    }
    default:
      throw format_error(c.what() + ": key '" + key + "': unknown value type " + std::to_string(type));
  }
}

}  // namespace

const GgmlTypeInfo *ggml_type_info(uint32_t id) {
  for (const auto &k : kGgmlTypes)
    if (k.id == id) return &k;
  return nullptr;
}

Imported read_gguf(const uint8_t *data, size_t size, const std::string &what, const Limits &limits) {
  Cursor c(data, size, what);
  if (std::memcmp(c.take(4, "the magic"), "GGUF", 4) != 0) throw format_error(what + ": not a GGUF file (magic)");
  const uint32_t version = static_cast<uint32_t>(c.uint(4, "the version"));
  if (version != 2 && version != 3)
    throw format_error(what + ": GGUF version " + std::to_string(version) + " is not supported (2 and 3 are)");
  const uint64_t n_tensors = c.uint(8, "the tensor count");
  const uint64_t n_kv = c.uint(8, "the key/value count");
  if (n_kv > c.left() / 12)
    throw format_error(what + ": key/value count " + std::to_string(n_kv) + " is larger than the file allows");
  if (n_tensors > c.left() / 24)
    throw format_error(what + ": tensor count " + std::to_string(n_tensors) + " is larger than the file allows");

  Imported r;
  r.format_name = "gguf v" + std::to_string(version);
  MetaBudget budget{limits.max_elements_in_array};
  uint64_t alignment = 32;
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = c.str("a metadata key");
    uint32_t type = static_cast<uint32_t>(c.uint(4, "a value type"));
    if (!valid_utf8(key)) throw format_error(what + ": metadata key " + std::to_string(i) + " is not valid UTF-8");
    if (r.attributes.count(key)) throw format_error(what + ": metadata key '" + key + "' appears twice");
    CborItem v;
    if (key == "general.alignment") {
      const uint64_t a = type == kU32 ? c.uint(4, "general.alignment") : 0;
      if (a == 0 || (a & (a - 1)) != 0) throw format_error(what + ": general.alignment must be a u32 power of two");
      alignment = a;
      cbor_append_uint(v, a);
    } else {
      read_value(c, type, key, budget, 0, v);
    }
    r.attributes.emplace(std::move(key), std::move(v));
    if (c.pos() > limits.max_header)
      throw format_error(what + ": metadata exceeds the limit of " + std::to_string(limits.max_header) + " bytes");
  }

  struct Info {
    Tensor t;
    uint64_t offset;
  };
  std::vector<Info> infos;
  std::set<std::string> names;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    Info info;
    Tensor &t = info.t;
    t.name = c.str("a tensor name");
    const std::string ctx = what + ": tensor '" + t.name + "'";
    if (!names.insert(t.name).second) throw format_error(ctx + ": appears twice");
    uint32_t n_dims = static_cast<uint32_t>(c.uint(4, "n_dims"));
    if (n_dims > 4) throw format_error(ctx + ": " + std::to_string(n_dims) + " dimensions (GGML allows at most 4)");
    std::vector<uint64_t> ne(n_dims);
    for (auto &d : ne) d = c.uint(8, "a dimension");
    uint32_t type = static_cast<uint32_t>(c.uint(4, "a tensor type"));
    info.offset = c.uint(8, "a tensor offset");
    const GgmlType *g = nullptr;
    for (const auto &k : kGgmlTypes)
      if (k.id == type) g = &k;
    if (!g) throw format_error(ctx + ": unknown ggml type " + std::to_string(type));
    if (info.offset % alignment != 0)
      throw format_error(ctx + ": offset " + std::to_string(info.offset) + " is not a multiple of the alignment " +
                         std::to_string(alignment));
    if (n_dims && ne[0] % g->block_size != 0)
      throw format_error(ctx + ": innermost dimension " + std::to_string(ne[0]) + " is not a multiple of the " +
                         g->name + " block size " + std::to_string(g->block_size));
    uint64_t rows = 1;
    for (uint32_t k = 1; k < n_dims; ++k) rows = checked_mul(rows, ne[k], ctx + ": shape");
    const uint64_t inner = n_dims ? ne[0] : 1;
    t.nbytes = checked_mul(checked_mul(inner / g->block_size, g->type_size, ctx), rows, ctx + ": shape × type size");
    t.shape.assign(ne.rbegin(), ne.rend());
    if (g->dtype != ZT_DTYPE_UNKNOWN) {
      t.dtype = g->dtype;
    } else {
      // Block-quantized: the blocks are opaque bytes; the object keeps the
      // logical shape, so it is not "dense" (whose length rule is shape ×
      // element size) but a format of its own.
      t.format = "ggml_quantized";
      t.dtype = ZT_U8;
      t.logical_type = std::string("ggml.") + g->name;
      cbor_append_text(t.attributes["ggml_type"], g->name);
      cbor_append_uint(t.attributes["ggml_type_id"], g->id);
      cbor_append_uint(t.attributes["block_size"], g->block_size);
      cbor_append_uint(t.attributes["type_size"], g->type_size);
    }
    infos.push_back(std::move(info));
  }
  const uint64_t data_start = (c.pos() + alignment - 1) / alignment * alignment;
  std::vector<DataRange> ranges;
  for (auto &info : infos) {
    const std::string ctx = what + ": tensor '" + info.t.name + "'";
    uint64_t begin = checked_add(data_start, info.offset, ctx);
    uint64_t end = checked_add(begin, info.t.nbytes, ctx);
    if (end > size)
      throw format_error(ctx + ": data [" + std::to_string(begin) + ", " + std::to_string(end) +
                         ") runs past the end of the file (" + std::to_string(size) + " bytes)");
    const uint8_t *p = data + begin;
    info.t.offset = begin;
    info.t.in_place = true;
    const uint64_t len = info.t.nbytes;
    info.t.emit = [p, len](const PieceFn &fn) { emit_bytes(p, len, 1, fn); };
    ranges.push_back({begin, end, info.t.name});
    r.tensors.push_back(std::move(info.t));
  }
  refuse_overlapping(std::move(ranges), what);
  return r;
}

}  // namespace zt::foreign
