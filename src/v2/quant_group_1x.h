// A 1.x quantized_group object (src/composite/quantized.h: groups and
// packing along the last dimension, lsb-first codes, zero point from a
// "zeros" part or 2^(bits-1)) restated as zt.quant_group/1
// (spec/profiles/zt.quant_group-1.md) with every parameter the profile
// requires. Used when a v2 writer is given a quantized_group object
// (zt_writer_add_quantized_group, zt migrate --to 2, copies).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zt::v2 {

struct QuantGroup1x {
  std::string attributes;  // the object's 1.x attributes (deterministic CBOR)
  std::vector<uint64_t> shape;
  std::string data_dtype;    // v2 dtype name of the packed part
  std::string scales_dtype;  // and of the scales
  std::string scales_type;   // its logical type, "" = none
  bool has_zeros = false;
};

// The zt.quant_group/1 attributes (deterministic CBOR map; 1.x keys other
// than bits, group_size, packing and scale_form are kept; a scale_form of
// "f16_factors" from a v2 file migrated to 1.x is restated). Throws ZT_E_UNSUPPORTED,
// naming `where` and the reason, for what the profile cannot state: a
// group or a word that would span two rows (cols not a multiple of
// group_size or of the codes per word), an unknown packing.
std::string quant_group_attributes(const QuantGroup1x &q, const std::string &where);

}  // namespace zt::v2
