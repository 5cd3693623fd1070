#include <openssl/evp.h>

#include "digest/sha256.h"
#include "util/error.h"
#include "ztensor.h"

namespace zt {

struct Sha256::Impl {
  EVP_MD_CTX *ctx = nullptr;
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  if (!impl_->ctx || EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1)
    fail(ZT_E_INTERNAL, "OpenSSL could not initialise SHA-256");
}

Sha256::~Sha256() = default;

void Sha256::update(const void *data, size_t len) {
  if (EVP_DigestUpdate(impl_->ctx, data, len) != 1) fail(ZT_E_INTERNAL, "OpenSSL SHA-256 update failed");
}

void Sha256::finish(uint8_t out[32]) {
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(impl_->ctx, out, &n) != 1 || n != 32) fail(ZT_E_INTERNAL, "OpenSSL SHA-256 final failed");
}

}  // namespace zt
