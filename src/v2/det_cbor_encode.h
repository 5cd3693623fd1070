// Deterministic CBOR (RFC 8949 §4.2.1 core deterministic encoding) for the
// v2 writer: shortest heads, definite lengths, map keys sorted bytewise on
// their encoded form, the shortest float that keeps the value, NaN as
// f9 7e00 (v2 spec §3.1). The strict parser is det_cbor.* (reading side).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/cbor_out.h"

namespace zt::v2 {

// Nesting limit of §3.1, counted from the manifest root (the root map is 0).
constexpr unsigned kMaxCborDepth = 32;

class DetCbor {
 public:
  std::string out;

  // Heads are the shortest form: util/cbor_out.h, the tree's one builder.
  void uint(uint64_t v) { ::zt::cbor::put_uint(out, v); }
  void nint(uint64_t n) { ::zt::cbor::put_negint(out, n); }  // the value -1 - n
  void integer(int64_t v) { ::zt::cbor::put_int(out, v); }
  void text(std::string_view s) { ::zt::cbor::put_text(out, s); }
  void bytes(std::string_view s) { ::zt::cbor::put_bytes(out, s); }
  void array(uint64_t n) { ::zt::cbor::put_array(out, n); }
  void map(uint64_t n) { ::zt::cbor::put_map(out, n); }
  void boolean(bool b) { ::zt::cbor::put_bool(out, b); }
  void null() { ::zt::cbor::put_null(out); }
  // The shortest of half, single, double that holds exactly this value.
  void float64(double v);
  // An already deterministic item, appended as it is.
  void raw(std::string_view item) { out.append(item.data(), item.size()); }

  void head(unsigned major, uint64_t arg) { ::zt::cbor::put_head(out, major, arg); }
};

// A map from (encoded key, encoded value) pairs: sorted bytewise on the
// encoded keys, as §4.2.1 wants. A key given twice throws ZT_E_INVALID_ARG
// naming `what`.
void emit_sorted_map(DetCbor &o, std::vector<std::pair<std::string, std::string>> &entries, const std::string &what);

// Re-encodes one CBOR data item (any well-formed encoding: long heads,
// indefinite lengths, wide floats, unsorted keys) in deterministic form.
// `depth` is the depth of the item below the manifest root. Refused, with
// ZT_E_INVALID_ARG and `what` in the message: tags, simple values other than
// false/true/null, nesting past kMaxCborDepth, keys that collide once
// re-encoded, invalid UTF-8 in text, malformed or trailing bytes. With
// `attribute_map`, the item must be a map whose keys are text strings that
// obey the name rules (§3.5: non-empty, ≤ 1024 bytes, no U+0000).
std::string canonical_cbor(const uint8_t *data, size_t len, unsigned depth, bool attribute_map,
                           const std::string &what);

}  // namespace zt::v2
