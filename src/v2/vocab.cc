#include "v2/vocab.h"

#include <cstdio>

#include "types/dtype.h"
#include "util/error.h"
#include "v2/layout_profiles.h"
#include "v2/rule.h"

namespace zt::v2 {
namespace {

std::optional<uint64_t> bytes1(uint64_t n) {
  return n;
}
std::optional<uint64_t> nibbles(uint64_t n) {
  return n / 2 + n % 2;
}
std::optional<uint64_t> bytes8(uint64_t n) {
  return checked_mul(n, 8);
}
std::optional<uint64_t> bytes16(uint64_t n) {
  return checked_mul(n, 16);
}

const LogicalTypeDef kLogical[] = {
    {"bool", ZT_U8, ZT_BOOL, 1, bytes1, kBool01},         {"f8_e4m3fn", ZT_U8, ZT_U8, 1, bytes1, kNoCheck},
    {"f8_e5m2", ZT_U8, ZT_U8, 1, bytes1, kNoCheck},       {"f8_e4m3fnuz", ZT_U8, ZT_U8, 1, bytes1, kNoCheck},
    {"f8_e5m2fnuz", ZT_U8, ZT_U8, 1, bytes1, kNoCheck},   {"f8_e8m0", ZT_U8, ZT_U8, 1, bytes1, kNoCheck},
    {"f4_e2m1", ZT_U8, ZT_U8, 1, nibbles, kF4Padding},    {"complex64", ZT_F32, ZT_F32, 2, bytes8, kNoCheck},
    {"complex128", ZT_F64, ZT_F64, 2, bytes16, kNoCheck},
};

std::string hex2(uint8_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%02x", v);
  return b;
}

// §5.1: exactly one part, "data", whose decoded size is the size function
// of the element count.
void validate_dense(const Object &o, const std::string &pre) {
  if (o.components.size() != 1 || o.components[0].role != "data")
    reject(Rule::LayoutRule, pre + where(o.name) + ": a dense object has exactly one part, named 'data' (it has " +
                                 std::to_string(o.components.size()) + ")");
  const Component &c = o.components[0];
  bool overflow = false;
  auto want = size_of(c, o.numel, &overflow);
  if (overflow) reject(Rule::Shape, pre + where(o.name, c.role) + ": the size of the shape overflows 64 bits");
  if (want && *want != c.decoded_length)
    reject(Rule::DenseSize, pre + where(o.name, c.role) + ": decoded size " + std::to_string(c.decoded_length) +
                                " is not the " + std::to_string(*want) + " its shape and type give");
}

// spec/profiles/zt.sparse_csr-1.md, metadata rules.
void validate_csr(const Object &o, const std::string &pre) {
  auto bad = [&](const std::string &m, zt_status s = ZT_OK) {
    reject(Rule::LayoutRule, pre + where(o.name) + ": zt.sparse_csr/1 " + m, s);
  };
  if (o.shape.size() != 2) bad("needs a rank-2 shape, not rank " + std::to_string(o.shape.size()), ZT_E_SHAPE);
  const Component *values = nullptr, *indices = nullptr, *indptr = nullptr;
  for (const auto &c : o.components) {
    if (c.role == "values")
      values = &c;
    else if (c.role == "indices")
      indices = &c;
    else if (c.role == "indptr")
      indptr = &c;
  }
  if (o.components.size() != 3 || !values || !indices || !indptr)
    bad("has exactly the parts 'values', 'indices' and 'indptr'");
  if ((indices->dtype != ZT_U32 && indices->dtype != ZT_U64) || indices->has_type)
    bad("'indices' must be plain u32 or u64", ZT_E_INDEX_DTYPE);
  if (indptr->dtype != indices->dtype || indptr->has_type)
    bad("'indptr' must be of the dtype of 'indices', without a logical type", ZT_E_INDEX_DTYPE);
  const uint64_t w = dtype_size(indices->dtype);
  auto rows1 = checked_add(o.shape[0], 1);
  auto want_ptr = rows1 ? checked_mul(*rows1, w) : std::nullopt;
  if (!want_ptr) reject(Rule::Shape, pre + where(o.name) + ": rows + 1 index entries overflow 64 bits");
  if (indptr->decoded_length != *want_ptr)
    bad("'indptr' holds rows + 1 entries: " + std::to_string(*want_ptr) + " bytes, not " +
            std::to_string(indptr->decoded_length),
        ZT_E_SPARSE_INDPTR);
  if (indices->decoded_length % w != 0)
    bad("'indices' size " + std::to_string(indices->decoded_length) + " is not a multiple of " + std::to_string(w),
        ZT_E_LENGTH);
  const uint64_t nnz = indices->decoded_length / w;
  bool overflow = false;
  auto want = size_of(*values, nnz, &overflow);
  if (overflow || (want && *want != values->decoded_length))
    bad("'values' decoded size " + std::to_string(values->decoded_length) +
            " is not the size of nnz = " + std::to_string(nnz) + " elements",
        ZT_E_SPARSE_NNZ);
}

const LayoutDef kLayouts[] = {
    {"dense", validate_dense},
    {"zt.sparse_csr/1", validate_csr},
    {"zt.sparse_coo/1", validate_sparse_coo, true},
    {"zt.quant_group/1", validate_quant_group, true},
    {"zt.mx/1", validate_mx, true},
};

}  // namespace

zt_dtype storage_dtype(std::string_view name) {
  static const std::pair<const char *, zt_dtype> kNames[] = {
      {"f64", ZT_F64}, {"f32", ZT_F32}, {"f16", ZT_F16}, {"bf16", ZT_BF16}, {"i64", ZT_I64}, {"i32", ZT_I32},
      {"i16", ZT_I16}, {"i8", ZT_I8},   {"u64", ZT_U64}, {"u32", ZT_U32},   {"u16", ZT_U16}, {"u8", ZT_U8}};
  for (const auto &e : kNames)
    if (name == e.first) return e.second;
  return ZT_DTYPE_UNKNOWN;
}

const LogicalTypeDef *find_logical_type(std::string_view id) {
  for (const auto &t : kLogical)
    if (id == t.id) return &t;
  return nullptr;
}

std::optional<uint64_t> size_of(const Component &c, uint64_t n, bool *overflow) {
  *overflow = false;
  std::optional<uint64_t> r;
  if (!c.has_type) {
    r = checked_mul(n, dtype_size(storage_dtype(c.dtype_name)));
  } else {
    const LogicalTypeDef *t = find_logical_type(c.logical_type);
    if (!t) return std::nullopt;
    r = t->size(n);
  }
  *overflow = !r;
  return r;
}

void check_content(const Component &c, const uint8_t *p, size_t n, uint64_t base, uint64_t total,
                   const std::string &ctx) {
  if (c.content_check == kBool01) {
    for (size_t i = 0; i < n; ++i)
      if (p[i] > 1)
        reject(Rule::LayoutData,
               ctx + ": bool element " + std::to_string(base + i) + " is " + hex2(p[i]) + ", not 0x00 or 0x01",
               ZT_E_BOOL_VALUE);
  } else if (c.content_check == kF4Padding && n > 0 && base + n == total) {
    // Two elements a byte, low nibble first: an odd count leaves the last
    // byte's high nibble unused, and it must be zero. content_check says
    // kF4Padding only where the count is known to be odd (a dense object's;
    // v2/manifest.cc), so only the last byte is looked at.
    if (p[n - 1] & 0xf0)
      reject(Rule::LayoutData,
             ctx + ": the last byte " + hex2(p[n - 1]) +
                 " of an odd number of f4_e2m1 elements has a non-zero padding (high) nibble",
             ZT_E_VALUE);
  }
}

const LayoutDef *find_layout(std::string_view id) {
  for (const auto &l : kLayouts)
    if (id == l.id) return &l;
  static const LayoutDef kGguf = {"gguf.<type>/1", validate_gguf, true};
  if (is_gguf_layout(id)) return &kGguf;
  return nullptr;
}

const EncodingDef *find_encoding(std::string_view id) {
  static const EncodingDef kEncodings[] = {{"zt.zstd-seekable/1", ZT_ENCODING_ZSTD, true}};
  for (const auto &e : kEncodings)
    if (id == e.id) return &e;
  return nullptr;
}

}  // namespace zt::v2
