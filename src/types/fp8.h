// The four 8-bit float formats of spec 1.2 (stored as u8) decoded to f32.
// Every fp8 value is exactly representable in f32, so decoding is exact; the
// formats differ in exponent bias, in whether they have infinities, and in
// which codes are NaN:
//
//   format       bias  inf            NaN                 -0    max finite
//   f8_e4m3fn      7   none           S.1111.111          yes   448
//   f8_e5m2       15   S.11111.00     S.11111.{01,10,11}  yes   57344
//   f8_e4m3fnuz    8   none           0x80 only           no    240
//   f8_e5m2fnuz   16   none           0x80 only           no    57344
//
// ("fn" = finite, no infinities; "uz" = unsigned zero, the negative-zero code
// is the single NaN.) Saturation applies when *encoding* to these formats
// (values beyond the max finite clamp to it); decoding meets no such case.
#pragma once

#include <cstdint>
#include <string_view>

namespace zt {

enum class Fp8Format { E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ };

// The format named by a spec logical type ("f8_e4m3fn", ...); false if the
// name is not one of the four.
bool fp8_format_from_name(std::string_view name, Fp8Format *out);

float fp8_to_float(Fp8Format format, uint8_t code);

// Decodes n codes (a lookup table per format, built once).
void fp8_to_float_n(Fp8Format format, const uint8_t *src, float *dst, size_t n);

}  // namespace zt
