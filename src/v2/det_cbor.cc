#include "v2/det_cbor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "util/error.h"
#include "v2/rule.h"

namespace zt::v2::cbor {
namespace {

// Whether the float32 with these bits has a float16 with the same value.
bool f32_fits_f16(uint32_t bits) {
  const uint32_t exp = (bits >> 23) & 0xff, mant = bits & 0x7fffff;
  if (exp == 0xff) return mant == 0;  // ±inf (NaN never reaches here)
  if (exp == 0) return mant == 0;     // ±0; f32 subnormals are far below f16's range
  const int e = static_cast<int>(exp) - 127;
  if (e > 15) return false;
  if (e >= -14) return (mant & 0x1fff) == 0;  // a normal f16 keeps 10 mantissa bits
  if (e < -24) return false;
  // A subnormal f16 is m * 2^-24: the 24-bit significand must be a multiple
  // of 2^(-e-1).
  const uint32_t sig = mant | 0x800000;
  return (sig & ((uint32_t{1} << (-e - 1)) - 1)) == 0;
}

// Whether the double has a float32 with the same value.
bool f64_fits_f32(double x) {
  if (std::isinf(x) || x == 0) return true;
  if (std::fabs(x) > static_cast<double>(std::numeric_limits<float>::max())) return false;
  return static_cast<double>(static_cast<float>(x)) == x;
}

class Checker {
 public:
  Checker(const uint8_t *d, size_t n, const std::string &prefix) : d_(d), n_(n), pre_(prefix) {}

  size_t item(size_t pos, unsigned depth) {
    if (depth > kMaxDepth)
      bad(Rule::CborDepth, pos, "nesting deeper than " + std::to_string(kMaxDepth) + " levels below the root");
    if (pos >= n_) bad(Rule::CborSyntax, pos, "unexpected end of the manifest");
    const uint8_t b = d_[pos++];
    const uint8_t major = b >> 5, ai = b & 0x1f;
    if (major == kSimple) return simple(pos, ai);
    if (major == kTag) bad(Rule::CborSyntax, pos - 1, "tags are not permitted");
    const uint64_t arg = head_arg(pos, ai);
    switch (major) {
      case kUint:
      case kNint:
        return pos;
      case kBytes:
      case kText: {
        if (arg > n_ - pos) bad(Rule::CborSyntax, pos, "declared length " + std::to_string(arg) + " exceeds the input");
        if (major == kText && !valid_utf8(reinterpret_cast<const char *>(d_ + pos), static_cast<size_t>(arg)))
          bad(Rule::CborSyntax, pos, "text is not valid UTF-8");
        return pos + static_cast<size_t>(arg);
      }
      case kArray: {
        if (arg > n_ - pos) bad(Rule::CborSyntax, pos, "declared length " + std::to_string(arg) + " exceeds the input");
        for (uint64_t i = 0; i < arg; ++i) pos = item(pos, depth + 1);
        return pos;
      }
      default: {  // map
        if (arg > (n_ - pos) / 2)
          bad(Rule::CborSyntax, pos, "declared length " + std::to_string(arg) + " exceeds the input");
        size_t prev_begin = 0, prev_end = 0;
        for (uint64_t i = 0; i < arg; ++i) {
          const size_t kb = pos;
          pos = item(pos, depth + 1);
          if (i > 0) {
            const std::string_view prev(reinterpret_cast<const char *>(d_ + prev_begin), prev_end - prev_begin);
            const std::string_view cur(reinterpret_cast<const char *>(d_ + kb), pos - kb);
            const int c = prev.compare(cur);
            if (c == 0) bad(Rule::CborDuplicateKey, kb, "a map repeats a key");
            if (c > 0) bad(Rule::CborDeterminism, kb, "map keys are not in bytewise order of their encodings");
          }
          prev_begin = kb;
          prev_end = pos;
          pos = item(pos, depth + 1);
        }
        return pos;
      }
    }
  }

 private:
  [[noreturn]] void bad(Rule r, size_t at, const std::string &m) {
    reject(r, pre_ + m + " (manifest byte " + std::to_string(at) + ")");
  }

  const uint8_t *need(size_t pos, size_t k) {
    if (k > n_ - pos) bad(Rule::CborSyntax, pos, "unexpected end of the manifest");
    return d_ + pos;
  }

  uint64_t be(size_t pos, size_t k) {
    const uint8_t *p = need(pos, k);
    uint64_t v = 0;
    for (size_t i = 0; i < k; ++i) v = (v << 8) | p[i];
    return v;
  }

  uint64_t head_arg(size_t &pos, uint8_t ai) {
    if (ai < 24) return ai;
    if (ai == 31) bad(Rule::CborSyntax, pos - 1, "indefinite lengths are not permitted");
    if (ai > 27) bad(Rule::CborSyntax, pos - 1, "reserved additional information " + std::to_string(ai));
    const size_t k = size_t{1} << (ai - 24);
    const uint64_t v = be(pos, k);
    static const uint64_t kMin[4] = {24, 0x100, 0x10000, 0x100000000ull};
    if (v < kMin[ai - 24]) bad(Rule::CborDeterminism, pos - 1, "non-shortest head");
    pos += k;
    return v;
  }

  size_t simple(size_t pos, uint8_t ai) {
    switch (ai) {
      case 20:
      case 21:
      case 22:
        return pos;
      case 25: {
        const uint16_t h = static_cast<uint16_t>(be(pos, 2));
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0 && h != 0x7e00)
          bad(Rule::CborDeterminism, pos - 1, "non-canonical NaN (only f9 7e00 is)");
        return pos + 2;
      }
      case 26: {
        const uint32_t bits = static_cast<uint32_t>(be(pos, 4));
        if ((bits & 0x7f800000) == 0x7f800000 && (bits & 0x7fffff) != 0)
          bad(Rule::CborDeterminism, pos - 1, "non-canonical NaN (only f9 7e00 is)");
        if (f32_fits_f16(bits)) bad(Rule::CborDeterminism, pos - 1, "float32 whose value fits a float16");
        return pos + 4;
      }
      case 27: {
        const uint64_t bits = be(pos, 8);
        double x;
        std::memcpy(&x, &bits, 8);
        if (std::isnan(x)) bad(Rule::CborDeterminism, pos - 1, "non-canonical NaN (only f9 7e00 is)");
        if (f64_fits_f32(x)) bad(Rule::CborDeterminism, pos - 1, "float64 whose value fits a float32");
        return pos + 8;
      }
      default:
        bad(Rule::CborSyntax, pos - 1, "simple value " + std::to_string(ai) + " is not permitted");
    }
  }

  const uint8_t *d_;
  size_t n_;
  const std::string &pre_;
};

}  // namespace

void check_deterministic(const uint8_t *data, size_t size, const std::string &prefix) {
  Checker c(data, size, prefix);
  const size_t end = c.item(0, 0);
  if (end != size)
    reject(Rule::CborSyntax, prefix + std::to_string(size - end) + " bytes after the manifest's CBOR item");
}

Head Cursor::head(size_t pos) const {
  Head h;
  const uint8_t b = d_[pos];
  h.major = b >> 5;
  const uint8_t ai = b & 0x1f;
  size_t k = 0;
  if (ai < 24) {
    h.arg = ai;
  } else {
    k = ai <= 27 ? size_t{1} << (ai - 24) : 0;
    for (size_t i = 0; i < k; ++i) h.arg = (h.arg << 8) | d_[pos + 1 + i];
    if (h.major == kSimple && ai >= 25) h.arg = ai;  // the float's width code
  }
  h.payload = pos + 1 + k;
  return h;
}

size_t Cursor::skip(size_t pos) const {
  const Head h = head(pos);
  switch (h.major) {
    case kBytes:
    case kText:
      return h.payload + static_cast<size_t>(h.arg);
    case kArray: {
      size_t p = h.payload;
      for (uint64_t i = 0; i < h.arg; ++i) p = skip(p);
      return p;
    }
    case kMap: {
      size_t p = h.payload;
      for (uint64_t i = 0; i < 2 * h.arg; ++i) p = skip(p);
      return p;
    }
    default:
      return h.payload;
  }
}

const char *Cursor::kind(size_t pos) const {
  static const char *kNames[8] = {
      "an unsigned integer",    "a negative integer", "a byte string", "text", "an array", "a map", "a tag",
      "a simple value or float"};
  (void)n_;
  return kNames[d_[pos] >> 5];
}

}  // namespace zt::v2::cbor
