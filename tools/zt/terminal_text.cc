#include "terminal_text.h"

#include <cstdint>
#include <cstdio>

#include "util/utf8.h"

namespace ztcli {

std::string shown(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  // Room for any unsigned in "\\u%04x": GCC for s390x cannot see that cp <= 0x9f there
  // and fails -Wformat-truncation with 8.
  char buf[16];
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t len = zt::utf8_sequence(s, i, cp);
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
