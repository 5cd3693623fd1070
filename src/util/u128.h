// An unsigned 128-bit integer for the JSON form of CBOR bignums ($bigint):
// unsigned __int128 exists on 64-bit GCC/Clang targets only, not on i686,
// armhf or MSVC. Only what that code needs: build from bytes or decimal
// digits, +1/-1, and back to decimal or bytes.
#pragma once

#include <cstdint>
#include <string>

namespace zt {

struct U128 {
  uint64_t hi = 0, lo = 0;

  U128() = default;
  explicit U128(uint64_t v) : lo(v) {}

  bool is_zero() const { return hi == 0 && lo == 0; }
  bool fits_u64() const { return hi == 0; }

  U128 plus_one() const {
    U128 r = *this;
    if (++r.lo == 0) ++r.hi;
    return r;
  }
  U128 minus_one() const {  // *this > 0
    U128 r = *this;
    if (r.lo-- == 0) --r.hi;
    return r;
  }
  // (*this << 8) | byte; the caller keeps to 16 bytes.
  U128 shifted_in(uint8_t byte) const {
    U128 r;
    r.hi = (hi << 8) | (lo >> 56);
    r.lo = (lo << 8) | byte;
    return r;
  }
  uint8_t low_byte() const { return static_cast<uint8_t>(lo); }
  U128 shifted_out() const {  // *this >> 8
    U128 r;
    r.lo = (lo >> 8) | (hi << 56);
    r.hi = hi >> 8;
    return r;
  }
  // *this * 10 + digit; false (and *this unchanged) past 128 bits.
  bool times10_plus(unsigned digit) {
    if (hi >> 61) return false;  // 8x overflows already, and 10x > 8x
    const U128 x8((hi << 3) | (lo >> 61), lo << 3), x2((hi << 1) | (lo >> 63), lo << 1);
    U128 r;
    r.lo = x8.lo + x2.lo;
    const uint64_t carry = r.lo < x8.lo ? 1 : 0;
    r.hi = x8.hi + x2.hi;
    if (r.hi < x8.hi) return false;
    if ((r.hi += carry) < carry) return false;
    const uint64_t lo_before = r.lo;
    r.lo += digit;
    if (r.lo < lo_before && ++r.hi == 0) return false;
    *this = r;
    return true;
  }
  // Divides by 10 in place and returns the remainder.
  unsigned divmod10() {
    // Long division in 32-bit limbs: each partial dividend fits in 64 bits.
    const uint64_t limbs[4] = {hi >> 32, hi & 0xffffffffu, lo >> 32, lo & 0xffffffffu};
    uint64_t q[4], rem = 0;
    for (int i = 0; i < 4; ++i) {
      const uint64_t cur = (rem << 32) | limbs[i];
      q[i] = cur / 10;
      rem = cur % 10;
    }
    hi = (q[0] << 32) | q[1];
    lo = (q[2] << 32) | q[3];
    return static_cast<unsigned>(rem);
  }
  std::string to_decimal() const {
    if (is_zero()) return "0";
    U128 v = *this;
    std::string s;
    while (!v.is_zero()) s += static_cast<char>('0' + v.divmod10());
    return std::string(s.rbegin(), s.rend());
  }

 private:
  U128(uint64_t h, uint64_t l) : hi(h), lo(l) {}
};

}  // namespace zt
