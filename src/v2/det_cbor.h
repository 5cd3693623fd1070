// Deterministic CBOR as format v2 requires of its manifest (spec §3.1, RFC
// 8949 §4.2.1 core deterministic encoding), strictly: one pass over the
// bytes that rejects non-shortest heads, indefinite lengths, unsorted or
// duplicate map keys, non-canonical floats (a NaN other than f9 7e00, a
// float wider than its value needs), tags, simple values other than
// false/true/null, invalid UTF-8 in text, nesting deeper than 32 levels
// below the root, and bytes after the item. It allocates nothing and takes
// time linear in the input (each key is compared once with the previous
// one; a declared length is checked against the bytes left before it is
// believed).
//
// Once checked, the bytes are walked with Cursor, which decodes heads
// without re-checking them (src/v2/manifest.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace zt::v2::cbor {

constexpr unsigned kMaxDepth = 32;

// Throws a rejection (CborSyntax, CborDeterminism, CborDuplicateKey,
// CborDepth) whose message starts with `prefix`.
void check_deterministic(const uint8_t *data, size_t size, const std::string &prefix);

enum Major : uint8_t { kUint = 0, kNint = 1, kBytes = 2, kText = 3, kArray = 4, kMap = 5, kTag = 6, kSimple = 7 };

struct Head {
  uint8_t major = 0;
  uint64_t arg = 0;    // value, length or count; the simple value's code for major 7
  size_t payload = 0;  // where the item's content starts (after its head)
};

// Reading of bytes check_deterministic accepted.
class Cursor {
 public:
  Cursor(const uint8_t *data, size_t size) : d_(data), n_(size) {}
  Head head(size_t pos) const;
  // The position just after the item starting at pos.
  size_t skip(size_t pos) const;
  std::string_view text(const Head &h) const {
    return {reinterpret_cast<const char *>(d_ + h.payload), static_cast<size_t>(h.arg)};
  }
  std::string_view span(size_t begin, size_t end) const {
    return {reinterpret_cast<const char *>(d_ + begin), end - begin};
  }
  const char *kind(size_t pos) const;  // "a map", "text", ... for messages

 private:
  const uint8_t *d_;
  size_t n_;
};

}  // namespace zt::v2::cbor
