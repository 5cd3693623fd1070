#include "v2/nfc.h"

#include <utf8proc.h>

#include <cstdlib>

namespace zt::v2 {

std::string to_nfc(std::string_view s) {
  utf8proc_uint8_t *out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t *>(s.data()), static_cast<utf8proc_ssize_t>(s.size()), &out,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) return std::string(s);
  std::string r(reinterpret_cast<const char *>(out), static_cast<size_t>(n));
  std::free(out);
  return r;
}

bool is_nfc(std::string_view s) {
  bool ascii = true;
  for (char c : s) ascii &= static_cast<unsigned char>(c) < 0x80;
  if (ascii) return true;
  return to_nfc(s) == s;
}

}  // namespace zt::v2
