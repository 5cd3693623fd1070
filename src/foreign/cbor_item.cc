#include "cbor_item.h"

#include <cbor.h>

#include <cstring>

namespace zt::foreign {
namespace {

// A CBOR head (major type and argument) through libcbor's encoders.
void head(CborItem &out, size_t (*encode)(uint64_t, unsigned char *, size_t), uint64_t v) {
  unsigned char b[9];
  const size_t n = encode(v, b, sizeof b);
  out.insert(out.end(), b, b + n);
}

size_t text_head(uint64_t v, unsigned char *b, size_t l) {
  return cbor_encode_string_start(v, b, l);
}
size_t bytes_head(uint64_t v, unsigned char *b, size_t l) {
  return cbor_encode_bytestring_start(v, b, l);
}
size_t array_head(uint64_t v, unsigned char *b, size_t l) {
  return cbor_encode_array_start(v, b, l);
}
size_t map_head(uint64_t v, unsigned char *b, size_t l) {
  return cbor_encode_map_start(v, b, l);
}

void append_bytes(CborItem &out, std::string_view s) {
  out.insert(out.end(), reinterpret_cast<const uint8_t *>(s.data()),
             reinterpret_cast<const uint8_t *>(s.data()) + s.size());
}

}  // namespace

// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above
// U+10FFFF — what a CBOR text string must hold.
bool valid_utf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c >> 5) == 6) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c >> 4) == 14) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c >> 3) == 30) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 2) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static const uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

void cbor_append_uint(CborItem &out, uint64_t v) {
  head(out, cbor_encode_uint, v);
}

void cbor_append_int(CborItem &out, int64_t v) {
  if (v >= 0) {
    head(out, cbor_encode_uint, static_cast<uint64_t>(v));
  } else {
    // CBOR stores -1 - n; for INT64_MIN that is 2^63 - 1, no overflow.
    head(out, cbor_encode_negint, static_cast<uint64_t>(-(v + 1)));
  }
}

void cbor_append_bool(CborItem &out, bool v) {
  out.push_back(v ? 0xF5 : 0xF4);
}

void cbor_append_f32(CborItem &out, float v) {
  unsigned char b[5];
  out.insert(out.end(), b, b + cbor_encode_single(v, b, sizeof b));
}

void cbor_append_f64(CborItem &out, double v) {
  unsigned char b[9];
  out.insert(out.end(), b, b + cbor_encode_double(v, b, sizeof b));
}

void cbor_append_text(CborItem &out, std::string_view s) {
  head(out, text_head, s.size());
  append_bytes(out, s);
}

void cbor_append_string(CborItem &out, std::string_view s) {
  head(out, valid_utf8(s) ? text_head : bytes_head, s.size());
  append_bytes(out, s);
}

void cbor_append_array_head(CborItem &out, uint64_t count) {
  head(out, array_head, count);
}

CborItem cbor_map(const CborAttributes &attributes) {
  CborItem out;
  size_t total = 9;
  for (const auto &[k, v] : attributes) total += 9 + k.size() + v.size();
  out.reserve(total);
  head(out, map_head, attributes.size());
  for (const auto &[k, v] : attributes) {
    cbor_append_text(out, k);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

}  // namespace zt::foreign
