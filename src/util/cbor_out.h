// The one CBOR builder of the tree: data items appended to a byte buffer
// (std::string or std::vector<uint8_t>). Heads are always the shortest
// form (RFC 8949 §4.2.1), which is unique for each value: the same bytes
// libcbor's cbor_encode_* wrote for the v1 manifest, foreign attributes and
// attribute JSON, and what the v2 writer's deterministic encoding needs.
// Written out here rather than through libcbor: the manifest writer emits
// one head per field (a call into the shared library each was measurable),
// and libcbor's signatures for array and map sizes differ between 0.8
// (size_t) and 0.10 (uint64_t). Floats, whose width rules differ per use,
// are left to the callers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace zt::cbor {

// RFC 8949 §3.1 major types.
constexpr unsigned kMajorUint = 0, kMajorNegint = 1, kMajorBytes = 2, kMajorText = 3, kMajorArray = 4, kMajorMap = 5,
                   kMajorTag = 6;

template <typename Buffer>
void put_raw(Buffer &out, std::string_view bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

template <typename Buffer>
void put_head(Buffer &out, unsigned major, uint64_t arg) {
  using Byte = typename Buffer::value_type;
  const unsigned mt = major << 5;
  if (arg < 24) {
    out.push_back(static_cast<Byte>(mt | arg));
    return;
  }
  int len;
  unsigned ai;
  if (arg <= 0xFF) {
    len = 1;
    ai = 24;
  } else if (arg <= 0xFFFF) {
    len = 2;
    ai = 25;
  } else if (arg <= 0xFFFFFFFFu) {
    len = 4;
    ai = 26;
  } else {
    len = 8;
    ai = 27;
  }
  out.push_back(static_cast<Byte>(mt | ai));
  for (int i = len - 1; i >= 0; --i) out.push_back(static_cast<Byte>(arg >> (8 * i)));
}

template <typename Buffer>
void put_uint(Buffer &out, uint64_t v) {
  put_head(out, kMajorUint, v);
}
// The value -1 - n.
template <typename Buffer>
void put_negint(Buffer &out, uint64_t n) {
  put_head(out, kMajorNegint, n);
}
template <typename Buffer>
void put_int(Buffer &out, int64_t v) {
  // CBOR stores -1 - n; for INT64_MIN that is 2^63 - 1, no overflow.
  if (v >= 0)
    put_uint(out, static_cast<uint64_t>(v));
  else
    put_negint(out, static_cast<uint64_t>(-(v + 1)));
}
// `s` must be valid UTF-8 (util/utf8.h).
template <typename Buffer>
void put_text(Buffer &out, std::string_view s) {
  put_head(out, kMajorText, s.size());
  put_raw(out, s);
}
template <typename Buffer>
void put_bytes(Buffer &out, std::string_view b) {
  put_head(out, kMajorBytes, b.size());
  put_raw(out, b);
}
template <typename Buffer>
void put_array(Buffer &out, uint64_t count) {
  put_head(out, kMajorArray, count);
}
// The head of a map of `count` pairs; the keys and values follow.
template <typename Buffer>
void put_map(Buffer &out, uint64_t count) {
  put_head(out, kMajorMap, count);
}
template <typename Buffer>
void put_tag(Buffer &out, uint64_t tag) {
  put_head(out, kMajorTag, tag);
}
template <typename Buffer>
void put_bool(Buffer &out, bool v) {
  out.push_back(static_cast<typename Buffer::value_type>(v ? 0xF5 : 0xF4));
}
template <typename Buffer>
void put_null(Buffer &out) {
  out.push_back(static_cast<typename Buffer::value_type>(0xF6));
}

}  // namespace zt::cbor
