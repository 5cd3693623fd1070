// quantized_group (spec 1.2 §3): group-wise quantized weights in the GPTQ
// style. The conventions this library implements (and documents in
// ztensor_composite.h):
//
//  - Shape [..., cols]: rows = product of all dimensions but the last. Both
//    packing and groups run along the last dimension (input features), each
//    row on its own: a row of cols values fills ceil(cols / per_word) words,
//    the unused slots of its last word are ignored.
//  - Packings: "N_per_i32" — N = 32/bits values per little-endian 32-bit word
//    (dtype i32 or u32), value k of the word in bits [k·bits, (k+1)·bits);
//    "N_per_u8" — N = 8/bits values per byte (dtype u8 or i8), value k in
//    bits [k·bits, (k+1)·bits), so "2_per_u8" is low nibble first. bits is
//    2, 4 or 8. Values are unsigned: q ∈ [0, 2^bits).
//  - Groups: group g of a row covers columns [g·group_size, (g+1)·group_size);
//    scales (and zeros) hold rows × ceil(cols / group_size) entries in
//    row-major order ([rows, groups per row]).
//  - Dequantization: w = (q − zero) × scale, zero and scale of q's group.
//    zeros hold the zero point as a number (any numeric dtype, typically
//    f16 like the spec's example); without a zeros component the zero point
//    is 2^(bits−1) (GPTQ's symmetric quantization).
//  - The packed component is "packed_weight"; when it is absent a "data"
//    component is used instead (the variant the original implementation's
//    documentation describes and writes, e.g. u8 "data" + "scales" with
//    bits/group_size and no packing). A missing packing attribute is
//    inferred from bits and the packed dtype (i32/u32 → N_per_i32,
//    u8/i8 → N_per_u8). An unknown packing name is kept: everything else is
//    still checked, the packed size is not, and dequantization reports
//    ZT_E_UNSUPPORTED.
#pragma once

#include <cstdint>
#include <string>

#include "composite/component_bytes.h"
#include "manifest/model.h"

namespace zt {

struct Packing {
  const char *name;
  unsigned bits;
  unsigned per_word;
  zt_dtype word_dtypes[2];  // dtypes the packed component may have
};

// Known packings: exact name; nullptr if unknown.
const Packing *packing_find(const std::string &name);
// The packing implied by bits and a packed dtype; nullptr if none.
const Packing *packing_infer(uint64_t bits, zt_dtype packed_dtype);

struct QuantLayout {
  uint64_t bits = 0;
  uint64_t group_size = 0;
  bool has_packing_attr = false;
  std::string packing_name;          // as stored ("" when absent)
  const Packing *packing = nullptr;  // nullptr: unknown, sizes unchecked
  const Component *packed = nullptr;
  const Component *scales = nullptr;
  const Component *zeros = nullptr;  // optional
  uint64_t rows = 0, cols = 0;
  uint64_t groups_per_row = 0;
  uint64_t groups = 0;         // rows × groups_per_row
  uint64_t words_per_row = 0;  // when packing is known
  // zt.quant_group/1 with zero_point "none" (0) or "implied" (its value):
  // the zero point of every code, in place of 2^(bits-1).
  bool has_zero_const = false;
  float zero_const = 0;
};

// Parses the attributes and checks every size rule without reading data:
// ZT_E_WRONG_FORMAT, ZT_E_COMPONENT_MISSING (packed_weight/data, scales),
// ZT_E_QUANT_PARAMS (attributes missing or not a map, bits / group_size not
// positive integers, packing not text or disagreeing with bits or the packed
// dtype, scales not float, zeros not numeric), ZT_E_SHAPE (no dimension or
// overflow), ZT_E_QUANT_SIZE (packed, scales or zeros count wrong). A
// component whose decoded size is not declared (zstd in a spec 1.1 file) is
// decoded to count its elements when `reader` is given, else not counted.
QuantLayout describe_quantized(const Object &obj, const ComponentBytes *reader = nullptr);

// Validates (as above), reads the components and writes rows × cols f32
// values, row-major, into dst.
void dequantize(const ComponentBytes &reader, const Object &obj, float *dst);

// The object attributes the writer stores: {bits, group_size, packing} as
// one CBOR map, keys in the reference writer's (bytewise) order.
std::string encode_quant_attributes(uint64_t bits, uint64_t group_size, const std::string &packing);

// Checks caller arrays before writing, with the same rules and statuses.
void check_quant_arrays(const std::string &object, const std::vector<uint64_t> &shape, uint64_t bits,
                        uint64_t group_size, const std::string &packing, zt_dtype packed_dtype, uint64_t packed_bytes,
                        zt_dtype scales_dtype, uint64_t scales_bytes, bool has_zeros, zt_dtype zeros_dtype,
                        uint64_t zeros_bytes);

}  // namespace zt
