#include "digest/digest.h"

#include <xxhash.h>

#include <cstring>

#include "digest/sha256.h"
#include "util/endian.h"
#include "util/error.h"

#ifdef ZT_HAVE_ISAL
#include <isa-l/crc.h>
#endif

namespace zt {
namespace {

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of up to 16 hex digits (callers check the count first).
uint64_t hex_number(std::string_view hex, const char *alg) {
  uint64_t v = 0;
  for (char c : hex) {
    const int x = hexval(c);
    if (x < 0) fail(ZT_E_DIGEST_FORMAT, std::string(alg) + " digest has a non-hex digit");
    v = v * 16 + static_cast<uint64_t>(x);
  }
  return v;
}

#ifndef ZT_HAVE_ISAL
// Portable slicing-by-8 CRC-32C (Castagnoli, reflected 0x82F63B78).
struct CrcTables {
  uint32_t t[8][256];
  CrcTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
};
#endif

}  // namespace

struct Digester::Xxh3State {
  XXH3_state_t *state = XXH3_createState();
  Xxh3State() {
    if (!state) fail(ZT_E_NOMEM, "cannot allocate an XXH3 state");
    XXH3_64bits_reset(state);
  }
  ~Xxh3State() { XXH3_freeState(state); }
  Xxh3State(const Xxh3State &) = delete;
  Xxh3State &operator=(const Xxh3State &) = delete;
};

uint64_t xxh3_64(const void *data, size_t len) {
  return XXH3_64bits(data, len);
}

uint32_t crc32c(const void *data, size_t len, uint32_t crc) {
#ifdef ZT_HAVE_ISAL
  // ISA-L works on the un-inverted register and takes an int length.
  uint32_t c = ~crc;
  const auto *p = static_cast<const unsigned char *>(data);
  while (len > 0) {
    size_t n = len > (size_t{1} << 30) ? (size_t{1} << 30) : len;
    c = crc32_iscsi(const_cast<unsigned char *>(p), static_cast<int>(n), c);
    p += n;
    len -= n;
  }
  return ~c;
#else
  static const CrcTables tables;
  const auto *p = static_cast<const uint8_t *>(data);
  uint32_t c = ~crc;
  while (len >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    if constexpr (kHostBigEndian) v = __builtin_bswap64(v);  // the tables take the bytes in stored order
    v ^= c;
    c = tables.t[7][v & 0xff] ^ tables.t[6][(v >> 8) & 0xff] ^ tables.t[5][(v >> 16) & 0xff] ^
        tables.t[4][(v >> 24) & 0xff] ^ tables.t[3][(v >> 32) & 0xff] ^ tables.t[2][(v >> 40) & 0xff] ^
        tables.t[1][(v >> 48) & 0xff] ^ tables.t[0][v >> 56];
    p += 8;
    len -= 8;
  }
  while (len--) c = (c >> 8) ^ tables.t[0][(c ^ *p++) & 0xff];
  return ~c;
#endif
}

ParsedDigest parse_digest(std::string_view text) {
  ParsedDigest d;
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0)
    fail(ZT_E_DIGEST_FORMAT, "digest '" + std::string(text) + "' is not of the form algorithm:hex");
  std::string_view alg = text.substr(0, colon), hex = text.substr(colon + 1);
  if (alg == "sha256") {
    if (hex.size() != 64)
      fail(ZT_E_DIGEST_FORMAT, "sha256 digest must have 64 hex digits, has " + std::to_string(hex.size()));
    for (size_t i = 0; i < 32; ++i) {
      int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
      if (hi < 0 || lo < 0) fail(ZT_E_DIGEST_FORMAT, "sha256 digest has a non-hex digit");
      d.bytes[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    d.alg = ZT_DIGEST_SHA256;
  } else if (alg == "crc32c") {
    if (hex.size() >= 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex.remove_prefix(2);
    if (hex.empty() || hex.size() > 8) fail(ZT_E_DIGEST_FORMAT, "crc32c digest must have 1 to 8 hex digits");
    d.crc = static_cast<uint32_t>(hex_number(hex, "crc32c"));
    d.alg = ZT_DIGEST_CRC32C;
  } else if (alg == "xxh3") {
    if (hex.size() != 16)
      fail(ZT_E_DIGEST_FORMAT, "xxh3 digest must have 16 hex digits, has " + std::to_string(hex.size()));
    d.xxh3 = hex_number(hex, "xxh3");
    d.alg = ZT_DIGEST_XXH3;
  } else {
    d.alg = ZT_DIGEST_UNKNOWN;
  }
  return d;
}

Digester::Digester(zt_digest_alg alg) : alg_(alg) {
  if (alg == ZT_DIGEST_SHA256) {
    sha_ = std::make_unique<Sha256>();
  } else if (alg == ZT_DIGEST_XXH3) {
    xxh_ = std::make_unique<Xxh3State>();
  } else if (alg != ZT_DIGEST_CRC32C && alg != ZT_DIGEST_NONE) {
    fail(ZT_E_INVALID_ARG, "digest algorithm " + std::to_string(alg) + " cannot be computed");
  }
}

Digester::~Digester() = default;

void Digester::update(const void *data, size_t len) {
  if (alg_ == ZT_DIGEST_SHA256) {
    if (len) sha_->update(data, len);
  } else if (alg_ == ZT_DIGEST_CRC32C) {
    crc_ = crc32c(data, len, crc_);
  } else if (alg_ == ZT_DIGEST_XXH3) {
    if (len) XXH3_64bits_update(xxh_->state, data, len);
  }
}

bool Digester::finish_matches(const ParsedDigest &expected) {
  if (alg_ == ZT_DIGEST_SHA256) {
    uint8_t md[32];
    sha_->finish(md);
    return std::memcmp(md, expected.bytes, 32) == 0;
  }
  if (alg_ == ZT_DIGEST_XXH3) return XXH3_64bits_digest(xxh_->state) == expected.xxh3;
  return crc_ == expected.crc;
}

std::string Digester::finish_string() {
  static const char *lower = "0123456789abcdef";
  if (alg_ == ZT_DIGEST_SHA256) {
    uint8_t md[32];
    sha_->finish(md);
    std::string s = "sha256:";
    for (uint8_t b : md) {
      s += lower[b >> 4];
      s += lower[b & 15];
    }
    return s;
  }
  if (alg_ == ZT_DIGEST_CRC32C) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "crc32c:0x%08X", crc_);
    return buf;
  }
  if (alg_ == ZT_DIGEST_XXH3) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "xxh3:%016llx", static_cast<unsigned long long>(XXH3_64bits_digest(xxh_->state)));
    return buf;
  }
  return {};
}

std::string digest_string(zt_digest_alg alg, const void *data, size_t len) {
  Digester d(alg);
  d.update(data, len);
  return d.finish_string();
}

}  // namespace zt
