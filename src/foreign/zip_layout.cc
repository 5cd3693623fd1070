#include "zip_layout.h"

#include <algorithm>
#include <cstring>

#include "platform/memory.h"

namespace zt::foreign {
namespace {

uint64_t le(const uint8_t *p, size_t k) {
  uint64_t v = 0;
  for (size_t i = k; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// The central directory: (offset, size, entries), or false.
bool central_directory(const uint8_t *p, size_t n, uint64_t *cd_off, uint64_t *cd_size, uint64_t *entries) {
  if (n < 22) return false;
  const size_t lowest = n > 22 + 65535 ? n - 22 - 65535 : 0;
  size_t e = n - 22;
  for (;; --e) {
    if (le(p + e, 4) == 0x06054b50 && e + 22 + le(p + e + 20, 2) == n) break;
    if (e == lowest) return false;
  }
  *entries = le(p + e + 10, 2);
  *cd_size = le(p + e + 12, 4);
  *cd_off = le(p + e + 16, 4);
  if (*entries == 0xffff || *cd_size == 0xffffffff || *cd_off == 0xffffffff) {
    if (e < 20 || le(p + e - 20, 4) != 0x07064b50) return false;
    const uint64_t z = le(p + e - 20 + 8, 8);
    if (z > n || n - z < 56 || le(p + z, 4) != 0x06064b50) return false;
    *entries = le(p + z + 32, 8);
    *cd_size = le(p + z + 40, 8);
    *cd_off = le(p + z + 48, 8);
  }
  return *cd_off <= n && *cd_size <= n - *cd_off;
}

// zip64 extended information (in a central directory entry's extra field
// [x, x+extra_len)): the 64-bit values of the fields set to all ones, in order.
void zip64_fields(const uint8_t *x, uint64_t extra_len, uint64_t uncomp, uint64_t *comp, uint64_t *local) {
  for (const uint8_t *xend = x + extra_len; xend - x >= 4;) {
    const uint64_t id = le(x, 2), len = le(x + 2, 2);
    if (static_cast<uint64_t>(xend - x - 4) < len) break;
    if (id == 0x0001) {
      const uint8_t *v = x + 4, *vend = v + len;
      if (uncomp == 0xffffffff && vend - v >= 8) v += 8;
      if (*comp == 0xffffffff && vend - v >= 8) {
        *comp = le(v, 8);
        v += 8;
      }
      if (*local == 0xffffffff && vend - v >= 8) *local = le(v, 8);
    }
    x += 4 + len;
  }
}

}  // namespace

std::unordered_map<std::string, ZipDataRange> zip_data_ranges(const uint8_t *p, size_t n) {
  std::unordered_map<std::string, ZipDataRange> out;
  std::unordered_map<std::string, bool> twice;  // names listed twice: none of them is placed
  uint64_t cd_off = 0, cd_size = 0, entries = 0;
  if (!central_directory(p, n, &cd_off, &cd_size, &entries)) return out;
  const uint64_t end = cd_off + cd_size;
  uint64_t at = cd_off;
  for (uint64_t i = 0; i < entries; ++i) {
    if (end - at < 46 || le(p + at, 4) != 0x02014b50) return {};
    const uint8_t *c = p + at;
    const uint64_t method = le(c + 10, 2), name_len = le(c + 28, 2), extra_len = le(c + 30, 2),
                   comment_len = le(c + 32, 2);
    uint64_t comp = le(c + 20, 4), local = le(c + 42, 4);
    const uint64_t uncomp = le(c + 24, 4);
    if (end - at - 46 < name_len + extra_len + comment_len) return {};
    const std::string name(reinterpret_cast<const char *>(c + 46), static_cast<size_t>(name_len));
    zip64_fields(c + 46 + name_len, extra_len, uncomp, &comp, &local);
    at += 46 + name_len + extra_len + comment_len;
    if (local > n || n - local < 30 || le(p + local, 4) != 0x04034b50) continue;
    const uint64_t lname = le(p + local + 26, 2), lextra = le(p + local + 28, 2);
    if (lname != name_len || n - local - 30 < lname + lextra ||
        std::memcmp(p + local + 30, name.data(), name.size()) != 0)
      continue;
    const uint64_t data = local + 30 + lname + lextra;
    if (comp > n - data) continue;
    if (!out.emplace(name, ZipDataRange{data, comp, method == 0}).second) twice[name] = true;
  }
  for (const auto &t : twice) out.erase(t.first);
  return out;
}

void prefetch_local_headers(const uint8_t *p, size_t n, size_t max_hints) {
  uint64_t cd_off = 0, cd_size = 0, entries = 0;
  if (!central_directory(p, n, &cd_off, &cd_size, &entries)) return;
  const uint64_t end = cd_off + cd_size, page = platform::page_size();
  uint64_t at = cd_off, last_page = UINT64_MAX;
  for (uint64_t i = 0; i < entries && i < max_hints; ++i) {
    if (end - at < 46 || le(p + at, 4) != 0x02014b50) return;
    const uint8_t *c = p + at;
    const uint64_t name_len = le(c + 28, 2), extra_len = le(c + 30, 2), comment_len = le(c + 32, 2);
    if (end - at - 46 < name_len + extra_len + comment_len) return;
    uint64_t comp = le(c + 20, 4), local = le(c + 42, 4);
    zip64_fields(c + 46 + name_len, extra_len, le(c + 24, 4), &comp, &local);
    at += 46 + name_len + extra_len + comment_len;
    if (local >= n || local / page == last_page) continue;
    last_page = local / page;
    platform::advise_will_need(p + local, static_cast<size_t>(std::min<uint64_t>(page, n - local)));
  }
}

}  // namespace zt::foreign
