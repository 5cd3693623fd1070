// Storage elements of any numeric dtype, with or without a known logical
// type, converted to f32: the common step of dequantization (scales, zeros)
// and of the public zt_convert_to_f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ztensor.h"

namespace zt {

// Converts `count` little-endian storage elements of `dtype` at src to f32,
// one output per storage element. `logical_type` (empty for none) selects
// the fp8 decoders for u8 storage; complex64/complex128 components come out
// as their interleaved [re, im] storage elements (f64 rounded to nearest).
// Throws ZT_E_UNSUPPORTED for an unknown logical type or dtype, ZT_E_DTYPE
// when a known logical type is paired with the wrong storage dtype.
void elements_to_f32(zt_dtype dtype, std::string_view logical_type, const uint8_t *src, size_t count, float *dst);

}  // namespace zt
