// zt.mx/1 (spec/profiles/zt.mx-1.md): OCP Microscaling blocks dequantized
// through the composite API (zt_object_dequantize). value(i) =
// 2^(scales[b] - 127) × element(i), b = i / block_size, with the elements
// decoded as the OCP MX specification (v1.0) defines them:
//
//   f4_e2m1 (MXFP4)    two per byte, low nibble first (v2 spec Appendix A):
//                      sign, 2 exponent bits (bias 1), 1 mantissa bit:
//                      ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}
//   f8_e4m3fn, f8_e5m2 (MXFP8) the fp8 decoders of types/fp8.h
//   i8 (MXINT8)        two's complement with an implicit scale of 2^-6
//
// A scale byte 0xFF is NaN (the profile allows it): its whole block is NaN.
// Blocks along the last axis only: for another axis the profile's b = i /
// block_size does not say how scales are laid out, so such an object is
// ZT_E_UNSUPPORTED (its parts still read as stored).
#pragma once

#include <cstdint>

#include "manifest/model.h"

namespace zt {

class ComponentBytes;

bool is_mx(const Object &obj);

// f32 of one OCP MX scale byte / FP4 code (low 4 bits).
float e8m0_to_float(uint8_t e);
float fp4_e2m1_to_float(uint8_t code);

// Checks that this library dequantizes the object (see above); its numel.
uint64_t describe_mx(const Object &obj);

// Writes numel f32 values, in the object's logical (row-major) order.
void dequantize_mx(const ComponentBytes &reader, const Object &obj, float *dst);

}  // namespace zt
