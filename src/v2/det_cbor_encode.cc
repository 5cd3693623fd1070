#include "v2/det_cbor_encode.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "util/error.h"

namespace zt::v2 {
namespace {

uint64_t bits_of(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}

double half_to_double(uint16_t h) {
  const int exp = (h >> 10) & 0x1F;
  const int man = h & 0x3FF;
  double v;
  if (exp == 0)
    v = std::ldexp(man, -24);
  else if (exp == 31)
    v = man ? NAN : INFINITY;
  else
    v = std::ldexp(man + 1024, exp - 25);
  return (h & 0x8000) ? -v : v;
}

// The half whose value is exactly v, if there is one.
bool exact_half(double v, uint16_t &out) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  uint16_t h;
  if (a == 0) {
    h = sign;
  } else if (std::isinf(a)) {
    h = sign | 0x7C00;
  } else if (a < std::ldexp(1.0, -14)) {  // subnormal: m × 2^-24
    const double m = std::ldexp(a, 24);
    if (m != std::floor(m) || m >= 1024) return false;
    h = sign | static_cast<uint16_t>(m);
  } else {
    int e;
    const double f = std::frexp(a, &e);  // a = f × 2^e, f in [0.5, 1)
    const int exp = e - 1 + 15;
    if (exp >= 31) return false;
    const double m = std::ldexp(f, 11) - 1024;  // 10 mantissa bits
    if (m != std::floor(m)) return false;
    h = sign | static_cast<uint16_t>(exp << 10) | static_cast<uint16_t>(m);
  }
  if (bits_of(half_to_double(h)) != bits_of(v)) return false;
  out = h;
  return true;
}

[[noreturn]] void bad(const std::string &what, const std::string &why) {
  fail(ZT_E_INVALID_ARG, what + ": " + why + " (v2 spec §3.1)");
}

// Reads any well-formed CBOR and writes its deterministic form.
class Recoder {
 public:
  Recoder(const uint8_t *p, size_t n, const std::string &what) : p_(p), n_(n), what_(what) {}

  void item(DetCbor &o, unsigned depth, bool attribute_map) {
    if (depth > kMaxCborDepth)
      bad(what_, "nesting deeper than " + std::to_string(kMaxCborDepth) + " levels from the manifest root");
    const uint8_t ib = byte();
    const unsigned major = ib >> 5;
    const unsigned ai = ib & 0x1F;
    if (attribute_map && major != 5) bad(what_, "attributes must be a CBOR map");
    switch (major) {
      case 0:
      case 1:
        o.head(major, arg(ai));
        return;
      case 2:
      case 3: {
        std::string s = string_body(major, ai);
        if (major == 3 && !valid_utf8(s.data(), s.size())) bad(what_, "a text string is not valid UTF-8");
        if (major == 3)
          o.text(s);
        else
          o.bytes(s);
        return;
      }
      case 4: {
        std::vector<std::string> items;
        auto one = [&] {
          DetCbor sub;
          item(sub, depth + 1, false);
          items.push_back(std::move(sub.out));
        };
        if (ai == 31) {
          while (peek() != 0xFF) one();
          ++pos_;
        } else {
          const uint64_t n = arg(ai);
          if (n > n_ - pos_) bad(what_, "an array is longer than its bytes");
          for (uint64_t i = 0; i < n; ++i) one();
        }
        o.array(items.size());
        for (const auto &s : items) o.raw(s);
        return;
      }
      case 5: {
        std::vector<std::pair<std::string, std::string>> entries;
        auto one = [&] {
          DetCbor k, v;
          item(k, depth + 1, false);
          if (attribute_map) check_attribute_key(k.out);
          item(v, depth + 1, false);
          entries.emplace_back(std::move(k.out), std::move(v.out));
        };
        if (ai == 31) {
          while (peek() != 0xFF) one();
          ++pos_;
        } else {
          const uint64_t n = arg(ai);
          if (n > (n_ - pos_) / 2) bad(what_, "a map is longer than its bytes");
          for (uint64_t i = 0; i < n; ++i) one();
        }
        emit_sorted_map(o, entries, what_);
        return;
      }
      case 6:
        bad(what_, "CBOR tags are not allowed in attributes");
      default:
        simple(o, ai);
        return;
    }
  }

  bool at_end() const { return pos_ == n_; }

 private:
  uint8_t byte() {
    if (pos_ >= n_) bad(what_, "truncated CBOR");
    return p_[pos_++];
  }
  uint8_t peek() {
    if (pos_ >= n_) bad(what_, "truncated CBOR");
    return p_[pos_];
  }
  uint64_t arg(unsigned ai) {
    if (ai < 24) return ai;
    int len = ai == 24 ? 1 : ai == 25 ? 2 : ai == 26 ? 4 : ai == 27 ? 8 : 0;
    if (!len) bad(what_, "malformed CBOR head");
    uint64_t v = 0;
    for (int i = 0; i < len; ++i) v = (v << 8) | byte();
    return v;
  }
  std::string string_body(unsigned major, unsigned ai) {
    std::string s;
    if (ai == 31) {  // chunks of the same major type, each definite
      while (peek() != 0xFF) {
        const uint8_t cb = byte();
        if ((cb >> 5) != major || (cb & 0x1F) == 31) bad(what_, "malformed indefinite-length string");
        append_chunk(s, arg(cb & 0x1F));
      }
      ++pos_;
    } else {
      append_chunk(s, arg(ai));
    }
    return s;
  }
  void append_chunk(std::string &s, uint64_t len) {
    if (len > n_ - pos_) bad(what_, "a string is longer than its bytes");
    s.append(reinterpret_cast<const char *>(p_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
  }
  void simple(DetCbor &o, unsigned ai) {
    switch (ai) {
      case 20:
        o.boolean(false);
        return;
      case 21:
        o.boolean(true);
        return;
      case 22:
        o.null();
        return;
      case 25:
        o.float64(half_to_double(static_cast<uint16_t>(arg(25))));
        return;
      case 26: {
        const uint32_t b = static_cast<uint32_t>(arg(26));
        float f;
        std::memcpy(&f, &b, 4);
        o.float64(f);
        return;
      }
      case 27: {
        const uint64_t b = arg(27);
        double d;
        std::memcpy(&d, &b, 8);
        o.float64(d);
        return;
      }
      default:
        bad(what_, "simple value " + std::to_string(ai) + " is not allowed (only false, true, null and floats)");
    }
  }
  // Top-level attribute keys are names (§3.5). `key` is the deterministic
  // encoding of a text string: its head, then its bytes.
  void check_attribute_key(std::string_view key) {
    if ((static_cast<uint8_t>(key[0]) >> 5) != 3) bad(what_, "attribute keys must be text strings");
    const unsigned ai = static_cast<uint8_t>(key[0]) & 0x1F;
    key.remove_prefix(ai < 24 ? 1 : ai == 24 ? 2 : ai == 25 ? 3 : ai == 26 ? 5 : 9);
    if (key.empty() || key.size() > 1024 || key.find('\0') != std::string_view::npos)
      bad(what_, "attribute key '" + printable(std::string(key)) +
                     "' breaks the name rules (non-empty, at most 1024 bytes, no U+0000; §3.5)");
  }

  const uint8_t *p_;
  size_t n_;
  size_t pos_ = 0;
  const std::string &what_;
};

}  // namespace

void DetCbor::float64(double v) {
  if (std::isnan(v)) {
    out.append("\xF9\x7E\x00", 3);
    return;
  }
  uint16_t h;
  if (exact_half(v, h)) {
    out.push_back(static_cast<char>(0xF9));
    out.push_back(static_cast<char>(h >> 8));
    out.push_back(static_cast<char>(h));
    return;
  }
  const float f = static_cast<float>(v);
  if (static_cast<double>(f) == v) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    out.push_back(static_cast<char>(0xFA));
    for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>(b >> (8 * i)));
    return;
  }
  const uint64_t b = bits_of(v);
  out.push_back(static_cast<char>(0xFB));
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>(b >> (8 * i)));
}

void emit_sorted_map(DetCbor &o, std::vector<std::pair<std::string, std::string>> &entries, const std::string &what) {
  std::sort(entries.begin(), entries.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
  for (size_t i = 1; i < entries.size(); ++i)
    if (entries[i - 1].first == entries[i].first)
      fail(ZT_E_INVALID_ARG, what + ": a map has the same key twice once deterministically encoded (v2 spec §3.1)");
  o.map(entries.size());
  for (const auto &[k, v] : entries) {
    o.raw(k);
    o.raw(v);
  }
}

std::string canonical_cbor(const uint8_t *data, size_t len, unsigned depth, bool attribute_map,
                           const std::string &what) {
  if (!data || len == 0) bad(what, "empty CBOR item");
  Recoder r(data, len, what);
  DetCbor o;
  r.item(o, depth, attribute_map);
  if (!r.at_end()) bad(what, "bytes after the CBOR item");
  return std::move(o.out);
}

}  // namespace zt::v2
