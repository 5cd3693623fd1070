// SHA-256, streaming. One implementation per platform, chosen by meson:
// OpenSSL's EVP (sha256_openssl.cc) on POSIX hosts, Windows' own CNG
// (sha256_cng.cc, bcrypt.dll) on Windows, where an OpenSSL cross build
// would add minutes of build and a large static library for one hash every
// Windows already has (docs/cross.md, "Windows").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace zt {

class Sha256 {
 public:
  Sha256();  // throws zt::Error (ZT_E_INTERNAL) if the provider fails
  ~Sha256();
  Sha256(const Sha256 &) = delete;
  Sha256 &operator=(const Sha256 &) = delete;
  void update(const void *data, size_t len);
  // The 32-byte digest; the object is used up.
  void finish(uint8_t out[32]);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zt
