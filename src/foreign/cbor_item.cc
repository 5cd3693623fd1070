#include "cbor_item.h"

#include <cbor.h>

#include <cstring>

#include "util/utf8.h"

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
