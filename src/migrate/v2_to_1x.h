// The map from a zTensor v2 file's objects back to spec 1.2 (zt migrate
// --to 1.2, and any copy of a v2 file into a 1.2 writer). docs/v2.md,
// "Migration" lists every mapping:
//
//   dense                → dense ("data")
//   zt.sparse_csr/1      → sparse_csr (values, indices, indptr; u32 indices
//                          widened to the u64 that 1.2 requires)
//   zt.sparse_coo/1      → sparse_coo (values, coords; likewise)
//   zt.quant_group/1     → quantized_group ("data" → "packed_weight"; bits,
//                          group_size and the 1.x packing name), where it is
//                          the 1.x model (src/composite/quantized.h)
//   logical types        → bool: the 1.2 dtype bool; f8_e4m3fn, f8_e5m2,
//                          f8_e4m3fnuz, f8_e5m2fnuz, complex64, complex128:
//                          the same 1.2 logical types
//
// Everything else has no 1.2 form and is refused (ZT_E_UNSUPPORTED) with a
// message naming the object, the part and what 1.2 cannot hold: zt.mx/1,
// gguf.<type>/1, any other layout, f8_e8m0, f4_e2m1, unknown logical types,
// dtypes and encodings, quant groups off the 1.x model. Planned for every
// object before anything is written.
#pragma once

#include <string>
#include <vector>

#include "manifest/model.h"

namespace zt::migrate {

struct Part1x {
  std::string role;  // the 1.x component name
  zt_dtype dtype = ZT_DTYPE_UNKNOWN;
  bool has_type = false;
  std::string logical_type;
};

struct Object1x {
  std::string format;
  bool has_attributes = false;
  std::string attributes;     // CBOR map
  std::vector<Part1x> parts;  // one per component, in the object's order
};

// One v2 object's 1.2 form; throws ZT_E_UNSUPPORTED when it has none.
Object1x object_to_1x(const Object &o);

// Every object's, in the manifest's order, checked before a byte is written.
std::vector<Object1x> plan_v2_to_1x(const Manifest &m);

}  // namespace zt::migrate
