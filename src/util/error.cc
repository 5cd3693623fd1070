#include "util/error.h"

#include <cstdio>

namespace zt {

std::string printable(const std::string &s) {
  std::string out;
  out.reserve(s.size());
  const bool utf8 = valid_utf8(s.data(), s.size());
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f || (!utf8 && c >= 0x80)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string where(const std::string &object, const std::string &role) {
  std::string s = "object '" + printable(object) + "'";
  if (!role.empty()) s += ", component '" + printable(role) + "'";
  return s;
}

bool valid_utf8(const char *p, size_t n) {
  const auto *s = reinterpret_cast<const unsigned char *>(p);
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
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
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    // Reject overlong forms, surrogates and code points past U+10FFFF.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += len;
  }
  return true;
}

}  // namespace zt
