#include "cbor_item.h"

#include <cbor.h>

#include <cstring>

#include "util/cbor_out.h"
#include "util/utf8.h"

namespace zt::foreign {

void cbor_append_uint(CborItem &out, uint64_t v) {
  cbor::put_uint(out, v);
}

void cbor_append_int(CborItem &out, int64_t v) {
  cbor::put_int(out, v);
}

void cbor_append_bool(CborItem &out, bool v) {
  cbor::put_bool(out, v);
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
  cbor::put_text(out, s);
}

void cbor_append_string(CborItem &out, std::string_view s) {
  if (valid_utf8(s))
    cbor::put_text(out, s);
  else
    cbor::put_bytes(out, s);
}

void cbor_append_array_head(CborItem &out, uint64_t count) {
  cbor::put_array(out, count);
}

CborItem cbor_map(const CborAttributes &attributes) {
  CborItem out;
  size_t total = 9;
  for (const auto &[k, v] : attributes) total += 9 + k.size() + v.size();
  out.reserve(total);
  cbor::put_map(out, attributes.size());
  for (const auto &[k, v] : attributes) {
    cbor::put_text(out, k);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

}  // namespace zt::foreign
