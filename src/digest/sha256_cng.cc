// SHA-256 through Windows CNG (bcrypt.dll, in every Windows since Vista):
// see digest/sha256.h for why not OpenSSL there.
#include <windows.h>
// windows.h first: bcrypt.h needs its types.
#include <bcrypt.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "digest/sha256.h"
#include "util/error.h"
#include "ztensor.h"

namespace zt {
namespace {

[[noreturn]] void cng_fail(const char *what, NTSTATUS st) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08lX", static_cast<unsigned long>(st));
  fail(ZT_E_INTERNAL, std::string("Windows CNG SHA-256: ") + what + " failed (NTSTATUS " + buf + ")");
}

bool ok(NTSTATUS st) {
  return st >= 0;  // BCRYPT_SUCCESS
}

}  // namespace

struct Sha256::Impl {
  BCRYPT_ALG_HANDLE alg = nullptr;
  BCRYPT_HASH_HANDLE hash = nullptr;
  ~Impl() {
    if (hash) BCryptDestroyHash(hash);
    if (alg) BCryptCloseAlgorithmProvider(alg, 0);
  }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  NTSTATUS st = BCryptOpenAlgorithmProvider(&impl_->alg, BCRYPT_SHA256_ALGORITHM, nullptr, 0);
  if (!ok(st)) cng_fail("BCryptOpenAlgorithmProvider", st);
  // No object buffer: CNG allocates the hash object itself (Windows 7+).
  st = BCryptCreateHash(impl_->alg, &impl_->hash, nullptr, 0, nullptr, 0, 0);
  if (!ok(st)) cng_fail("BCryptCreateHash", st);
}

Sha256::~Sha256() = default;

void Sha256::update(const void *data, size_t len) {
  // BCryptHashData takes a ULONG length: larger buffers go in pieces.
  const auto *p = static_cast<const uint8_t *>(data);
  while (len > 0) {
    const ULONG n = static_cast<ULONG>(std::min<size_t>(len, ULONG{1} << 30));
    const NTSTATUS st = BCryptHashData(impl_->hash, const_cast<PUCHAR>(p), n, 0);
    if (!ok(st)) cng_fail("BCryptHashData", st);
    p += n;
    len -= n;
  }
}

void Sha256::finish(uint8_t out[32]) {
  const NTSTATUS st = BCryptFinishHash(impl_->hash, out, 32, 0);
  if (!ok(st)) cng_fail("BCryptFinishHash", st);
}

}  // namespace zt
