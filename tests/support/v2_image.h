// A tiny builder of format v2 file images for tests and benchmarks (not a
// writer): deterministic CBOR by hand (map keys sorted by their encodings),
// and the container of spec §2 around it: magic, a data region filled with
// one byte, the manifest at the next 4096 boundary, the 40-byte footer with
// its XXH3-64. Mirrors the original's conformance builders
// (conformance/src/lib.rs), so hostile manifests are as easy to write as
// good ones: every helper returns encoded bytes, and raw bytes go anywhere.
#pragma once

#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace v2img {

inline std::string head(uint8_t major, uint64_t v) {
  std::string s;
  const auto m = static_cast<char>(major << 5);
  if (v < 24) return std::string(1, static_cast<char>(m | static_cast<char>(v)));
  int k = v <= 0xff ? 1 : v <= 0xffff ? 2 : v <= 0xffffffffull ? 4 : 8;
  s += static_cast<char>(m | static_cast<char>(k == 1 ? 24 : k == 2 ? 25 : k == 4 ? 26 : 27));
  for (int i = k - 1; i >= 0; --i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
inline std::string u(uint64_t v) {
  return head(0, v);
}
inline std::string t(const std::string &s) {
  return head(3, s.size()) + s;
}
inline std::string bytes(const std::string &s) {
  return head(2, s.size()) + s;
}
inline std::string arr(const std::vector<std::string> &items) {
  std::string s = head(4, items.size());
  for (const auto &i : items) s += i;
  return s;
}
inline std::string uints(const std::vector<uint64_t> &v) {
  std::string s = head(4, v.size());
  for (uint64_t x : v) s += u(x);
  return s;
}
// A map of encoded keys and values, written in deterministic order.
inline std::string map_raw(std::vector<std::pair<std::string, std::string>> kv) {
  std::sort(kv.begin(), kv.end());  // bytewise order of the encoded keys
  std::string s = head(5, kv.size());
  for (const auto &e : kv) s += e.first + e.second;
  return s;
}
// A map with text keys.
inline std::string map(const std::vector<std::pair<std::string, std::string>> &kv) {
  std::vector<std::pair<std::string, std::string>> enc;
  for (const auto &e : kv) enc.push_back({t(e.first), e.second});
  return map_raw(enc);
}

using Fields = std::vector<std::pair<std::string, std::string>>;

inline std::string part(const std::string &dtype, uint64_t off, uint64_t len, Fields extra = {}) {
  Fields f = {{"dtype", t(dtype)}, {"blob", uints({off, len})}};
  f.insert(f.end(), extra.begin(), extra.end());
  return map(f);
}
inline std::string object(const std::vector<uint64_t> &shape, const std::string &layout, const Fields &parts,
                          Fields extra = {}) {
  Fields f = {{"shape", uints(shape)}, {"layout", t(layout)}, {"parts", map(parts)}};
  f.insert(f.end(), extra.begin(), extra.end());
  return map(f);
}
inline std::string dense(const std::string &dtype, const std::vector<uint64_t> &shape, uint64_t off, uint64_t len,
                         Fields part_extra = {}) {
  return object(shape, "dense", {{"data", part(dtype, off, len, part_extra)}});
}
inline std::string manifest(const Fields &objects, Fields extra = {}) {
  Fields f = {{"objects", map(objects)}};
  f.insert(f.end(), extra.begin(), extra.end());
  return map(f);
}

constexpr uint8_t kMagic[8] = {0x89, 'Z', 'T', '2', 0x0d, 0x0a, 0x1a, 0x0a};

inline void put_le(std::vector<uint8_t> &b, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

// Magic, [8, data_end) filled with `fill`, zeros to the next 4096 boundary,
// the manifest there, the footer.
inline std::vector<uint8_t> assemble(uint64_t data_end, const std::string &m, uint8_t fill = 0xab) {
  const uint64_t m_off = (std::max<uint64_t>(data_end, 8) + 4095) / 4096 * 4096;
  std::vector<uint8_t> b(m_off, 0);
  std::fill(b.begin() + 8, b.begin() + static_cast<long>(std::max<uint64_t>(data_end, 8)), fill);
  std::memcpy(b.data(), kMagic, 8);
  b.insert(b.end(), m.begin(), m.end());
  const size_t f = b.size();
  b.resize(f + 40, 0);
  put_le(b, f, m_off, 8);
  put_le(b, f + 8, m.size(), 8);
  put_le(b, f + 16, XXH3_64bits(m.data(), m.size()), 8);
  put_le(b, f + 24, 2, 4);
  std::memcpy(b.data() + f + 32, kMagic, 8);
  return b;
}

// Writes bytes at an offset of an image (a blob's content).
inline void plant(std::vector<uint8_t> &img, uint64_t at, const std::vector<uint8_t> &data) {
  std::copy(data.begin(), data.end(), img.begin() + static_cast<long>(at));
}

}  // namespace v2img
