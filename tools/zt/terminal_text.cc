#include "terminal_text.h"

#include <cstdint>
#include <cstdio>

namespace ztcli {
namespace {

// Length of the valid UTF-8 sequence at s[i] (overlong forms, surrogates and
// code points past U+10FFFF are invalid), or 0; its code point in cp.
size_t utf8_sequence(std::string_view s, size_t i, uint32_t &cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t len;
  if (c < 0x80) {
    cp = c;
    return 1;
  }
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
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return len;
}

}  // namespace

std::string shown(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  // Room for any unsigned in "\\u%04x": GCC for s390x cannot see that cp <= 0x9f there
  // and fails -Wformat-truncation with 8.
  char buf[16];
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t len = utf8_sequence(s, i, cp);
    if (len == 0) {  // not UTF-8: the byte itself, escaped
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(s[i]));
      out += buf;
      ++i;
      continue;
    }
    if (cp < 0x20 || cp == 0x7f) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
      out += buf;
    } else if (cp >= 0x80 && cp <= 0x9f) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(s.data() + i, len);
    }
    i += len;
  }
  return out;
}

}  // namespace ztcli
