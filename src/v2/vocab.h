// The v2 vocabulary this library knows (spec §4, §5, Appendix A; L2, the
// "deliberately mortal" layer): storage types, logical types with their
// size functions and content rules, layout profiles with their validators,
// encoding profiles. A registry: each id maps to what reading it needs, and
// an id that is not here is read structurally only (metadata and stored
// bytes; a typed decode is ZT_E_UNSUPPORTED naming the id, never a
// reinterpretation).
//
// Adding a profile: a LayoutDef (validator over the mapped object, run at
// open) in layouts(); an encoding: an EncodingDef in encodings() and its
// decoder where the reader decodes (src/reader.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "manifest/model.h"
#include "ztensor.h"

namespace zt::v2 {

// §4.1: the 12 storage types, by their v2 names; ZT_DTYPE_UNKNOWN for any
// other name ("bool" is a logical type in v2, not a dtype).
zt_dtype storage_dtype(std::string_view name);

enum ContentCheck : uint8_t { kNoCheck = 0, kBool01 = 1, kF4Padding = 2 };

struct LogicalTypeDef {
  const char *id;
  zt_dtype storage;      // the dtype it requires
  zt_dtype model_dtype;  // what the C ABI calls its elements (ZT_BOOL for bool)
  uint32_t ratio;        // storage elements per logical element (2: complex)
  // Decoded bytes of n logical elements; nullopt on overflow.
  std::optional<uint64_t> (*size)(uint64_t n);
  ContentCheck check;
};

// Appendix A; nullptr for an id this library does not know.
const LogicalTypeDef *find_logical_type(std::string_view id);

// The size function of a part's logical type applied to n elements: n ×
// width without a type. nullopt when the type is unknown (the size is then
// not checkable) or the product overflows (*overflow set).
std::optional<uint64_t> size_of(const Component &c, uint64_t n, bool *overflow);

// The content rule of c's logical type over its decoded bytes [0, total):
// `p` holds bytes [base, base + n). Throws LayoutData.
void check_content(const Component &c, const uint8_t *p, size_t n, uint64_t base, uint64_t total,
                   const std::string &ctx);

struct LayoutDef {
  const char *id;
  // Metadata rules, run at open on the mapped object (its components carry
  // dtype, logical type and decoded size). Throws LayoutRule, DenseSize or
  // Shape with `pre` (the file) in front.
  void (*validate)(const Object &o, const std::string &pre);
  // A breach refuses the object (its status), not the file: the profiles
  // the original implementation reads unchecked (docs/v2.md).
  bool object_only = false;
};

// "dense", "zt.sparse_csr/1", "zt.sparse_coo/1", "zt.quant_group/1",
// "zt.mx/1" and gguf.<type>/1 for the listed ggml types (layout_profiles.h);
// nullptr for others.
const LayoutDef *find_layout(std::string_view id);

struct EncodingDef {
  const char *id;
  zt_encoding model_encoding;  // what the C ABI reports
  bool seekable;               // decoded by frames (v2/zstd_seekable_decode.h)
};

// Encoding profiles this library decodes: zt.zstd-seekable/1 (reported as
// ZT_ENCODING_ZSTD; its stream is zstd frames and a skippable seek table).
const EncodingDef *find_encoding(std::string_view id);

}  // namespace zt::v2
