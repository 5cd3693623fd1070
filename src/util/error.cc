#include "util/error.h"

#include <cstdio>

#include "util/utf8.h"

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

}  // namespace zt
