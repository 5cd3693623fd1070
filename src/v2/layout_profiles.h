// Metadata validators of the registry layout profiles beyond dense and CSR
// (spec/profiles/): zt.sparse_coo/1, zt.quant_group/1, zt.mx/1 and the
// gguf.<type>/1 family. Each runs at open on the mapped object and throws
// LayoutRule (Shape on overflow) with `pre` (the file) in front; vocab.cc
// registers them. Where a profile's text leaves a case open this library
// refuses it with a message saying so (docs/v2.md, "Layout profiles").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "manifest/model.h"

namespace zt::v2 {

void validate_sparse_coo(const Object &o, const std::string &pre);
void validate_quant_group(const Object &o, const std::string &pre);
void validate_mx(const Object &o, const std::string &pre);
void validate_gguf(const Object &o, const std::string &pre);

// The zt.quant_group/1 attributes of an object (throws as the validator
// does when one is missing; read after the validator accepted it).
struct QuantGroupParams {
  uint64_t bits = 0, group_size = 0, axis = 0, per_word = 0;
  std::string word, order, scale_form, zero_form, zero_packing;
  int64_t zero_value = 0;  // form "implied"
};
QuantGroupParams quant_group_params(const Object &o, const std::string &pre);

// The zt.mx/1 attributes of an object (axis defaults to the last
// dimension; read after the validator accepted it).
struct MxParams {
  uint64_t block_size = 0, axis = 0;
};
MxParams mx_params(const Object &o, const std::string &pre);

// "gguf.q4_0/1", ... for the ggml types the profile lists.
bool is_gguf_layout(std::string_view id);

}  // namespace zt::v2
