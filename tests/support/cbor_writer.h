// A tiny CBOR encoder for tests, written from RFC 8949 independently of the
// library, so fixtures (valid, legacy and malformed) do not depend on the
// code under test.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace zttest {

class Cbor {
 public:
  std::string bytes;

  Cbor &head(int major, uint64_t v) {
    uint8_t m = static_cast<uint8_t>(major << 5);
    if (v < 24) {
      bytes += static_cast<char>(m | v);
    } else if (v <= 0xff) {
      bytes += static_cast<char>(m | 24);
      bytes += static_cast<char>(v);
    } else if (v <= 0xffff) {
      bytes += static_cast<char>(m | 25);
      for (int i = 1; i >= 0; --i) bytes += static_cast<char>(v >> (8 * i));
    } else if (v <= 0xffffffffull) {
      bytes += static_cast<char>(m | 26);
      for (int i = 3; i >= 0; --i) bytes += static_cast<char>(v >> (8 * i));
    } else {
      bytes += static_cast<char>(m | 27);
      for (int i = 7; i >= 0; --i) bytes += static_cast<char>(v >> (8 * i));
    }
    return *this;
  }
  Cbor &uint(uint64_t v) { return head(0, v); }
  Cbor &negint(int64_t v) { return head(1, static_cast<uint64_t>(-1 - v)); }
  Cbor &text(const std::string &s) {
    head(3, s.size());
    bytes += s;
    return *this;
  }
  Cbor &bin(const std::string &s) {
    head(2, s.size());
    bytes += s;
    return *this;
  }
  Cbor &array(uint64_t n) { return head(4, n); }
  Cbor &map(uint64_t n) { return head(5, n); }
  Cbor &tag(uint64_t t) { return head(6, t); }
  Cbor &indef_map() { return raw("\xbf"); }
  Cbor &indef_array() { return raw("\x9f"); }
  Cbor &brk() { return raw("\xff"); }
  Cbor &boolean(bool b) { return raw(b ? "\xf5" : "\xf4"); }
  Cbor &null() { return raw("\xf6"); }
  Cbor &f64(double d) {
    uint64_t u;
    std::memcpy(&u, &d, 8);
    bytes += static_cast<char>(0xfb);
    for (int i = 7; i >= 0; --i) bytes += static_cast<char>(u >> (8 * i));
    return *this;
  }
  Cbor &raw(const std::string &s) {
    bytes += s;
    return *this;
  }
  Cbor &raw(const char *s) {
    bytes += std::string(s);
    return *this;
  }
  Cbor &shape(const std::vector<uint64_t> &dims) {
    array(dims.size());
    for (uint64_t d : dims) uint(d);
    return *this;
  }
};

inline void put_le64(std::string &s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s += static_cast<char>(v >> (8 * i));
}

// Lays out a file: magic, blobs at 64-byte offsets (zero padding), the given
// manifest bytes, size, footer. Offsets of the blobs are returned so the
// manifest can be built first with placeholders or after with real values.
struct Blob {
  std::string bytes;
  uint64_t offset = 0;
};

// Offsets blobs would get, in order, starting at 64.
inline std::vector<uint64_t> layout_offsets(const std::vector<std::string> &blobs) {
  std::vector<uint64_t> offs;
  uint64_t pos = 8;
  for (const auto &b : blobs) {
    pos = (pos + 63) / 64 * 64;
    offs.push_back(pos);
    pos += b.size();
  }
  return offs;
}

inline std::string build_v1_file(const std::vector<std::string> &blobs, const std::string &manifest,
                                 const char *magic = "ZTEN1000") {
  std::string f(magic, 8);
  for (const auto &b : blobs) {
    while (f.size() % 64) f += '\0';
    f += b;
  }
  f += manifest;
  put_le64(f, manifest.size());
  f += std::string(magic, 8);
  return f;
}

inline std::string build_v0_file(const std::vector<std::string> &blobs, const std::string &manifest) {
  std::string f("ZTEN0001", 8);
  for (const auto &b : blobs) {
    while (f.size() % 64) f += '\0';
    f += b;
  }
  f += manifest;
  put_le64(f, manifest.size());
  return f;
}

}  // namespace zttest
