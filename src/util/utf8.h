// The one UTF-8 decoder of the tree: strict RFC 3629 (no overlong forms, no
// surrogates, nothing past U+10FFFF), which is what names, roles, CBOR text
// strings (RFC 8949 §3.1) and the v2 spec's §3.5 require. Header-only so that
// the zt tool, which compiles some core sources in again, shares it too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace zt {

// Length (1..4) of the valid UTF-8 sequence that starts at s[i], and its code
// point in cp; 0 when the bytes there are not valid UTF-8 (cp then unset).
inline size_t utf8_sequence(std::string_view s, size_t i, uint32_t &cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  size_t len;
  if ((c & 0xe0) == 0xc0) {
    len = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (len > s.size() - i) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  static constexpr uint32_t kMinForLength[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

inline bool valid_utf8(std::string_view s) {
  uint32_t cp;
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {  // ASCII, the common case
      ++i;
      continue;
    }
    const size_t len = utf8_sequence(s, i, cp);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

inline bool valid_utf8(const char *s, size_t n) {
  return valid_utf8(std::string_view(s, n));
}

}  // namespace zt
