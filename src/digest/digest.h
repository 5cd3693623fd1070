// Component digests: "sha256:<hex>" (digest/sha256.h: OpenSSL, or CNG on Windows) and "crc32c:0x<hex>"
// (ISA-L's CRC instruction path when available). Parsing, formatting and a
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
};

// Parses a digest string. Unknown algorithm → alg = ZT_DIGEST_UNKNOWN (OK).
// Malformed (no colon, bad hex, wrong length) → throws ZT_E_DIGEST_FORMAT.
ParsedDigest parse_digest(std::string_view text);

uint32_t crc32c(const void *data, size_t len, uint32_t crc = 0);

class Digester {
 public:
  explicit Digester(zt_digest_alg alg);
  ~Digester();
  Digester(const Digester &) = delete;
  Digester &operator=(const Digester &) = delete;

  void update(const void *data, size_t len);
  // The canonical string: "sha256:<lowercase>" or "crc32c:0x<UPPERCASE>".
  std::string finish_string();
  // Compares against a parsed digest of the same algorithm.
  bool finish_matches(const ParsedDigest &expected);

 private:
  zt_digest_alg alg_;
  uint32_t crc_ = 0;
  std::unique_ptr<Sha256> sha_;
};

// One-shot helper.
std::string digest_string(zt_digest_alg alg, const void *data, size_t len);

}  // namespace zt
