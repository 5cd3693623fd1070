// Component digests: "sha256:<hex>" (digest/sha256.h: OpenSSL, or CNG on Windows), "crc32c:0x<hex>"
// (ISA-L's CRC instruction path when available) and "xxh3:<16 hex>" (XXH3-64,
// Debian's libxxhash; format v2 parts and its footer's manifest hash). Parsing, formatting and a
// streaming state, so a blob can be digested piece by piece as it is written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ztensor.h"

namespace zt {

class Sha256;

struct ParsedDigest {
  zt_digest_alg alg = ZT_DIGEST_NONE;
  uint8_t bytes[32] = {};  // sha256: 32 bytes; crc32c: value in bytes[0..3] LE
  uint32_t crc = 0;
  uint64_t xxh3 = 0;  // xxh3: the 64-bit value (its hex is big-endian)
};

// Parses a digest string. Unknown algorithm → alg = ZT_DIGEST_UNKNOWN (OK).
// Malformed (no colon, bad hex, wrong length) → throws ZT_E_DIGEST_FORMAT.
ParsedDigest parse_digest(std::string_view text);

uint32_t crc32c(const void *data, size_t len, uint32_t crc = 0);
// XXH3-64 with seed 0, as the v2 footer's manifest_hash and "xxh3:" use it.
uint64_t xxh3_64(const void *data, size_t len);

class Digester {
 public:
  explicit Digester(zt_digest_alg alg);
  ~Digester();
  Digester(const Digester &) = delete;
  Digester &operator=(const Digester &) = delete;

  void update(const void *data, size_t len);
  // The canonical string: "sha256:<lowercase>", "crc32c:0x<UPPERCASE>" or
  // "xxh3:<16 lowercase>".
  std::string finish_string();
  // Compares against a parsed digest of the same algorithm.
  bool finish_matches(const ParsedDigest &expected);

 private:
  zt_digest_alg alg_;
  uint32_t crc_ = 0;
  std::unique_ptr<Sha256> sha_;
  struct Xxh3State;
  std::unique_ptr<Xxh3State> xxh_;
};

// The algorithm a 1.x copy of a component digested with `alg` gets: the
// same, except that an unknown one cannot be recomputed (none), and xxh3,
// which 1.x does not define, becomes crc32c (the same role: a fast check).
inline zt_digest_alg digest_for_1x(zt_digest_alg alg) {
  if (alg == ZT_DIGEST_UNKNOWN) return ZT_DIGEST_NONE;
  if (alg == ZT_DIGEST_XXH3) return ZT_DIGEST_CRC32C;
  return alg;
}

// One-shot helper.
std::string digest_string(zt_digest_alg alg, const void *data, size_t len);

}  // namespace zt
